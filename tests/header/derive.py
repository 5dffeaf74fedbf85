#!/usr/bin/env python3
"""Compare include/nvlite/cuda.h with NVIDIA's cuda.h, and write the
compile-time checks that compare what names alone cannot.

For each configuration (plain, CUDA_API_PER_THREAD_DEFAULT_STREAM,
__CUDA_API_VERSION_INTERNAL) both headers are preprocessed and read
(cheader.py), and these sets must be equal in both directions:
  - macros the header leaves defined (gcc -dM; also as C++), with the same
    kind: empty, function-like (same parameters and body), a name that
    maps to a function, or a value;
  - typedef names; struct/union/enum tags; the enumerators of each enum;
  - the members of each struct/union (nested and anonymous ones included);
  - declared function symbols (after the mapping macros), which of them
    are deprecated, and inline functions.
Names are all this step compares.  What the compiler must judge is
written to OUT/<config>/ from NVIDIA's facts and then built by the
Makefile against our header:
  values.def  X(name)      every enumerator and value macro: value, type
  funcs.def   F(name)      every mapping macro: the symbol it expands to
  types.def   T(type)      every typedef and struct/union: sizeof, alignof
  layout.def  M(type, m)   every member: offsetof, sizeof
  sigcheck.c  / sigcheck.cc  every typedef, function and member has
              NVIDIA's type (C: __builtin_types_compatible_p, C++:
              std::is_same)
Usage: derive.py --nvidia NV/cuda.h --ours OURS/cuda.h --out DIR
       derive.py --self-test ...   (mutates our header; every mutation
                                    must be caught)
Exit status 1 and a list of differences when the names differ.
"""
import argparse
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cheader as ch  # noqa: E402

CONFIGS = [
    ('default', []),
    ('ptds', ['-DCUDA_API_PER_THREAD_DEFAULT_STREAM']),
    ('internal', ['-D__CUDA_API_VERSION_INTERNAL']),
]

# nvlite's documented additions to NVIDIA's declarations: none.
EXTRAS = set()


class Side:
    def __init__(self, cc, cxx, header, flags):
        self.facts = ch.facts_of(ch.preprocess(cc, header, flags))
        self.macros = ch.macros(cc, header, flags)
        self.cxx_macros = ch.macros(cxx, header, flags, lang='c++')
        self.cxx_facts = ch.facts_of(ch.preprocess(cxx, header, flags, lang='c++'))


def norm(body):
    return ' '.join(ch.render(ch.tokenize(body), expr=True).split()) if body else ''


def macro_kind(name, m, facts):
    params, body = m
    if params is not None:
        return 'function-like'
    if not body:
        return 'empty'
    if re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*', body) and (body in facts.functions
                                                           or body in facts.inline_functions):
        return 'mapping'
    if re.fullmatch(r'__CUDA_API_PT(DS|SZ)\(\s*[A-Za-z_][A-Za-z0-9_]*\s*\)', body):
        return 'mapping'
    return 'value'


def compare(cfg, nv, ours, problems):
    def both_ways(what, a, b):
        for x in sorted(a - b):
            if x not in EXTRAS:
                problems.append('[%s] %s missing in nvlite: %s' % (cfg, what, x))
        for x in sorted(b - a):
            if x not in EXTRAS:
                problems.append('[%s] %s not in NVIDIA\'s header: %s' % (cfg, what, x))

    fn, fo = nv.facts, ours.facts
    both_ways('macro', set(nv.macros), set(ours.macros))
    both_ways('macro (C++)', set(nv.cxx_macros), set(ours.cxx_macros))
    for name in sorted(set(nv.macros) & set(ours.macros)):
        kn = macro_kind(name, nv.macros[name], fn)
        ko = macro_kind(name, ours.macros[name], fo)
        if kn != ko:
            problems.append('[%s] macro %s: %s in NVIDIA\'s header, %s in nvlite' % (cfg, name, kn, ko))
        elif kn == 'function-like' and (nv.macros[name][0] != ours.macros[name][0] or
                                        norm(nv.macros[name][1]) != norm(ours.macros[name][1])):
            problems.append('[%s] macro %s%s differs: %r vs nvlite %r' % (
                cfg, name, '(' + ','.join(nv.macros[name][0]) + ')', nv.macros[name][1], ours.macros[name][1]))
    both_ways('typedef', set(fn.typedefs), set(fo.typedefs))
    both_ways('tag', fn.tags, fo.tags)
    both_ways('struct/union', set(fn.records), set(fo.records))
    for key in sorted(set(fn.records) & set(fo.records)):
        a = set(p for p, _ in ch.flatten(fn.records[key]))
        b = set(p for p, _ in ch.flatten(fo.records[key]))
        both_ways('member of %s' % key, a, b)
        if fn.records[key].kind != fo.records[key].kind:
            problems.append('[%s] %s is a %s in NVIDIA\'s header' % (cfg, key, fn.records[key].kind))
    both_ways('enum', set(fn.enums), set(fo.enums))
    for key in sorted(set(fn.enums) & set(fo.enums)):
        both_ways('enumerator of %s' % key, set(fn.enums[key]), set(fo.enums[key]))
    both_ways('function', set(fn.functions), set(fo.functions))
    both_ways('deprecated function', fn.deprecated, fo.deprecated)
    both_ways('inline function', fn.inline_functions, fo.inline_functions)
    # the C++ view declares the same (extern "C", alignas branch)
    both_ways('typedef (C++)', set(nv.cxx_facts.typedefs), set(ours.cxx_facts.typedefs))
    both_ways('function (C++)', set(nv.cxx_facts.functions), set(ours.cxx_facts.functions))


def write_checks(cfg, nv, outdir):
    f = nv.facts
    os.makedirs(outdir, exist_ok=True)
    banner = '/* Written by tests/header/derive.py from NVIDIA\'s cuda.h (%s). */\n' % cfg

    values = [banner]
    for key, names in f.enums.items():
        values += ['X(%s)\n' % n for n in names]
    funcs = [banner]
    for name in sorted(nv.macros):
        kind = macro_kind(name, nv.macros[name], f)
        if kind == 'value':
            values.append('X(%s)\n' % name)
        elif kind == 'mapping':
            funcs.append('F(%s)\n' % name)

    types = [banner]
    for name in f.typedefs:
        types.append('T(%s)\n' % name)
    layout = [banner]
    for key, rec in f.records.items():
        if ' ' in key:
            types.append('T(%s)\n' % key)
        for path, m in ch.flatten(rec):
            layout.append('M(%s, %s)\n' % (key, path))

    c = [banner, '#include "cuda.h"\n\n',
         '#define HV_SAME(a, b, what) _Static_assert(__builtin_types_compatible_p(a, b), what);\n']
    cc = [banner, '#include "cuda.h"\n#include <type_traits>\n\n',
          '#define HV_SAME(a, b, what) static_assert(std::is_same<a, b>::value, what);\n']
    for name, typeid in f.typedefs.items():
        if typeid is not None:
            line = 'HV_SAME(%s, %s, "typedef %s")\n' % (name, typeid, name)
            c.append(line)
            cc.append(line)
        elif f.typedef_kind.get(name) == 'enum':
            cc.append('static_assert(std::is_enum<%s>::value, "typedef %s is an enum");\n' % (name, name))
    for name in f.order:
        c.append('HV_SAME(__typeof__(%s), %s, "function %s")\n' % (name, f.functions[name], name))
        cc.append('HV_SAME(decltype(%s), %s, "function %s")\n' % (name, f.functions[name], name))
    for key, rec in f.records.items():
        for path, m in ch.flatten(rec):
            if m.typeid is None:
                continue
            c.append('HV_SAME(__typeof__(((%s *)0)->%s), %s, "member %s.%s")\n' % (key, path, m.typeid, key, path))
    for key in f.top_records:
        for path, m in ch.flatten(f.records[key]):
            if m.typeid is None:
                continue
            cc.append('HV_SAME(decltype(((%s *)0)->%s), %s, "member %s.%s")\n' % (key, path, m.typeid, key, path))

    for name, lines in (('values.def', values), ('funcs.def', funcs), ('types.def', types),
                        ('layout.def', layout), ('sigcheck.c', c), ('sigcheck.cc', cc)):
        path = os.path.join(outdir, name)
        text = ''.join(lines)
        old = None
        if os.path.exists(path):
            with open(path) as fh:
                old = fh.read()
        if old != text:     # keep the timestamp when nothing changed
            with open(path, 'w') as fh:
                fh.write(text)
    return {'values': len(values) - 1, 'mappings': len(funcs) - 1, 'types': len(types) - 1,
            'members': len(layout) - 1, 'functions': len(f.functions)}


_NV = {}


def check(opts, ours_header, configs=CONFIGS):
    problems = []
    counts = {}
    for cfg, flags in configs:
        if cfg not in _NV:
            _NV[cfg] = Side(opts.cc, opts.cxx, opts.nvidia, flags)
        nv = _NV[cfg]
        try:
            ours = Side(opts.cc, opts.cxx, ours_header, flags)
        except ch.HeaderError as e:
            problems.append('[%s] cannot read nvlite\'s header: %s' % (cfg, str(e).strip().split('\n')[-1]))
            continue
        compare(cfg, nv, ours, problems)
        if opts.out:
            counts[cfg] = write_checks(cfg, nv, os.path.join(opts.out, cfg))
    return problems, counts


# ---------------------------------------------------------------- self test

def _sub(text, desc, pattern, repl):
    new, n = re.subn(pattern, repl, text, count=1, flags=re.M)
    if n != 1:
        raise SystemExit('self-test: the pattern for "%s" is not in our header' % desc)
    return new


def name_mutations(text):
    """(description, configuration, header text) that derive.py must reject."""
    m = [
        ('a prototype removed', 'default', r'^CUresult CUDAAPI cuMemGetAddressRange\(.*\n', ''),
        ('a deprecated prototype removed', 'default', r'^__CUDA_DEPRECATED CUresult CUDAAPI cuCtxAttach\(.*\n', ''),
        ('a first-ABI prototype removed', 'internal', r'^CUresult CUDAAPI cuMemsetD2D16\(CUdeviceptr_v1.*\n', ''),
        ('an enumerator removed', 'default', r'^ *CU_DEVICE_ATTRIBUTE_NUMA_ID *= *131,\n', ''),
        ('a macro removed', 'default', r'^#define CU_TRSF_SRGB .*\n', ''),
        ('a per-thread mapping removed', 'ptds', r'^#define cuStreamQuery .*\n', ''),
        ('a struct member removed', 'default',
         r'^( *size_t dstPitch;\n)(?= *size_t WidthInBytes;\n *size_t Height;\n\} CUDA_MEMCPY2D_v2;)', ''),
        ('a typedef removed', 'default', r'^typedef CUmemLocation_v1 CUmemLocation;\n', ''),
        ('a prototype added', 'default', r'^(CUresult CUDAAPI cuInit\(.*\n)', r'\1CUresult CUDAAPI cuNvliteExtra(int x);\n'),
        ('a macro added', 'default', r'^(#define CUDA_VERSION .*\n)', r'\1#define CU_NVLITE_EXTRA 1\n'),
        ('a mapping changed', 'default', r'^(#define cuMemFree +)cuMemFree_v2$', r'\1cuMemFreeHost'),
        ('deprecation dropped', 'default', r'^__CUDA_DEPRECATED (CUresult CUDAAPI cuDeviceComputeCapability\()', r'\1'),
    ]
    return [(desc, cfg, _sub(text, desc, pat, repl)) for desc, cfg, pat, repl in m]


def compile_mutations(text):
    """(description, step, header text): every name stays, a type or value
    changes; the named compile-time step must reject it."""
    m = [
        ('a parameter type changed', 'sigcheck',
         r'^(CUresult CUDAAPI cuMemAlloc\(CUdeviceptr \*dptr, )size_t( bytesize\);)', r'\1unsigned int\2'),
        ('a member type changed (same size)', 'sigcheck',
         r'(typedef struct CUlaunchConfig_st \{[^}]*?)unsigned int sharedMemBytes;', r'\1int sharedMemBytes;'),
        ('an enumerator value changed', 'values', r'^( *CU_DEVICE_ATTRIBUTE_NUMA_ID *= *)131,', r'\g<1>132,'),
        ('a macro value changed', 'values', r'^(#define CU_TRSF_SRGB +)0x10$', r'\g<1>0x11'),
        ('a member moved', 'values',
         r'^( *)(size_t srcXInBytes;\n)( *size_t srcY;\n)(?=(?:.*\n){0,14}?\} CUDA_MEMCPY2D_v2;)', r'\1\3\1\2'),
    ]
    return [(desc, step, _sub(text, desc, pat, repl)) for desc, step, pat, repl in m]


def _fails(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    return p.returncode != 0


def self_test(opts):
    """Each mutation of our header must be caught by the step that owns it."""
    with open(opts.ours) as fh:
        text = fh.read()
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.join(opts.out, 'selftest')
    os.makedirs(os.path.join(top, 'nvlite'), exist_ok=True)
    mutant = os.path.join(top, 'nvlite', 'cuda.h')
    cfgs = dict(CONFIGS)
    ns = argparse.Namespace(cc=opts.cc, cxx=opts.cxx, nvidia=opts.nvidia, out=None)
    missed = 0

    def report(desc, caught, how):
        nonlocal missed
        print('self-test: %s: %s' % ('caught' if caught else 'NOT CAUGHT', desc + (' (%s)' % how if how else '')))
        missed += not caught

    for desc, cfg, new in name_mutations(text):
        with open(mutant, 'w') as fh:
            fh.write(new)
        problems, _ = check(ns, mutant, [(cfg, cfgs[cfg])])
        report(desc, bool(problems), problems[0] if problems else '')

    d = os.path.join(opts.out, 'default')
    for desc, step, new in compile_mutations(text):
        with open(mutant, 'w') as fh:
            fh.write(new)
        problems, _ = check(ns, mutant, [('default', [])])
        if problems:
            report(desc, False, 'changed a name, not only a type or value: %s' % problems[0])
            continue
        if step == 'sigcheck':
            c = _fails([opts.cc, '-std=c11', '-fsyntax-only', '-Wno-deprecated-declarations',
                        '-I' + os.path.join(top, 'nvlite'), os.path.join(d, 'sigcheck.c')])
            cxx = _fails([opts.cxx, '-std=c++11', '-fsyntax-only', '-Wno-deprecated-declarations',
                          '-I' + os.path.join(top, 'nvlite'), '-x', 'c++', os.path.join(d, 'sigcheck.cc')])
            report(desc, c and cxx, 'C %s, C++ %s' % ('rejects' if c else 'accepts', 'rejects' if cxx else 'accepts'))
        else:
            obj = os.path.join(top, 'values_mutant.o')
            exe = os.path.join(top, 'check_mutant')
            ch.run([opts.cc, '-std=c11', '-w', '-I' + top, '-I' + d, '-I' + here, '-DHV_VARIANT=ours',
                    '-c', os.path.join(here, 'values_ours.c'), '-o', obj])
            ch.run([opts.cc, obj, os.path.join(d, 'values_nvidia.o'), os.path.join(d, 'check_header.o'),
                    '-o', exe] + opts.cmocka_libs.split())
            report(desc, _fails([exe]), 'the value tables differ')
    os.remove(mutant)
    return missed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--nvidia', default='/usr/local/cuda/include/cuda.h')
    ap.add_argument('--ours', required=True)
    ap.add_argument('--out')
    ap.add_argument('--cc', default=os.environ.get('CC', 'gcc'))
    ap.add_argument('--cxx', default=os.environ.get('CXX', 'g++'))
    ap.add_argument('--self-test', action='store_true')
    ap.add_argument('--cmocka-libs', default='-lcmocka')
    opts = ap.parse_args()
    if not os.path.exists(opts.nvidia):
        print('derive.py: %s not found (NVIDIA\'s CUDA toolkit headers are needed)' % opts.nvidia)
        return 1
    if opts.self_test:
        missed = self_test(opts)
        if missed:
            print('derive.py: the self-test missed %d mutations: the check is weaker than it claims' % missed)
        return 1 if missed else 0
    problems, counts = check(opts, opts.ours)
    for p in problems:
        print('derive.py: ' + p)
    if problems:
        print('derive.py: %d differences between include/nvlite/cuda.h and %s' % (len(problems), opts.nvidia))
        print('derive.py: regenerate with tests/header/gen_cuda_h.py, or fix the generator')
        return 1
    for cfg, c in counts.items():
        print('derive.py: [%s] same names; checks written: %d values, %d mappings, %d types, '
              '%d members, %d functions' % (cfg, c['values'], c['mappings'], c['types'], c['members'],
                                            c['functions']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
