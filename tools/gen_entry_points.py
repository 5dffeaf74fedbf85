#!/usr/bin/env python3
"""nvlite's driver API entry points, made from one table.

lib/api/entry_points.txt names every driver API function, the CUDA version in
which each of its ABI variants appeared, its per-thread-default-stream forms
and the C++ function implementing each variant. This script reads that table
and the function declarations of our headers, and writes what the library is
built from:

  generate --table T --out DIR [--cc CC] [--cflags FLAGS] HEADER...
      DIR/entry_thunks.cpp   every exported symbol: an extern "C" function
                             that runs its implementation (arguments traced,
                             no exception escapes) or, for a variant nvlite
                             does not provide, the stub rule (not_provided.cpp)
                             and the lookup table cuGetProcAddress searches
      DIR/entry_impls.h      the implementations' declarations (nvl::api)
      DIR/exports.txt        the exported symbols, one a line
      DIR/not_supported.txt  the functions and symbols that are stubs
  check --table T --include DIR [--exports FILE] [--readme FILE] [--list FILE] HEADER...
      the table against NVIDIA's *Typedefs.h (every variant and version),
      the headers' declarations against the table, the library's exports
      (nm -D output) against both, and the committed list of stubs
  stubs-md --table T HEADER...
      the Markdown list of the functions nvlite does not provide

Every function a header declares must have a line in the table (the build
stops otherwise); a table line whose symbols no header declares is not
exported (the check reports it).

Naming rule (checked against NVIDIA's cudaTypedefs.h and libcuda 580's
exports): the oldest variant of cuX is exported as cuX, the next ones as
cuX_v2, cuX_v3, ...; a per-thread form of version V is the newest variant
not newer than V with _ptds or _ptsz appended.
"""
import argparse
import os
import re
import subprocess
import sys

# --------------------------------------------------------------------- table


class Variant:
    def __init__(self, version, impl):
        self.version = version
        self.impl = impl  # None: not provided (stub)


class Function:
    def __init__(self, name, line):
        self.name = name
        self.line = line
        self.variants = []  # oldest first
        self.per_thread = None  # 'ptds' / 'ptsz'
        self.per_thread_versions = []


class Symbol:
    def __init__(self, name, function, version, per_thread, impl):
        self.name = name
        self.function = function
        self.version = version
        self.per_thread = per_thread  # '', 'ptds', 'ptsz'
        self.impl = impl


FIRST_ABI = '@firstAbi'


def fail(msg):
    sys.stderr.write('gen_entry_points: ' + msg + '\n')
    sys.exit(1)


def parse_table(path):
    functions = []
    seen = set()
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            text = raw.split('#', 1)[0].strip()
            if not text:
                continue
            where = '%s:%d' % (path, lineno)
            fields = text.split()
            fn = Function(fields[0], where)
            if not re.fullmatch(r'cu[A-Za-z0-9]+', fn.name):
                fail('%s: bad function name %r' % (where, fn.name))
            if fn.name in seen:
                fail('%s: %s appears twice' % (where, fn.name))
            seen.add(fn.name)
            for field in fields[1:]:
                m = re.fullmatch(r'(ptds|ptsz):(\d+(?:,\d+)*)', field)
                if m:
                    if fn.per_thread:
                        fail('%s: two per-thread fields' % where)
                    fn.per_thread = m.group(1)
                    fn.per_thread_versions = [int(v) for v in m.group(2).split(',')]
                    continue
                m = re.fullmatch(r'(\d+)(?:=(@?[A-Za-z_][A-Za-z0-9_]*))?', field)
                if not m:
                    fail('%s: cannot read %r' % (where, field))
                impl = m.group(2)
                if impl and impl.startswith('@') and impl != FIRST_ABI:
                    fail('%s: unknown built-in %s' % (where, impl))
                fn.variants.append(Variant(int(m.group(1)), impl))
            if not fn.variants:
                fail('%s: %s has no variant' % (where, fn.name))
            versions = [v.version for v in fn.variants]
            if versions != sorted(set(versions)):
                fail('%s: versions must grow' % where)
            if fn.per_thread_versions != sorted(set(fn.per_thread_versions)):
                fail('%s: per-thread versions must grow' % where)
            functions.append(fn)
    return functions


def symbols_of(fn):
    out = []
    names = {}
    for i, v in enumerate(fn.variants):
        name = fn.name if i == 0 else '%s_v%d' % (fn.name, i + 1)
        names[v.version] = (name, v)
        out.append(Symbol(name, fn.name, v.version, '', v.impl))
    for pv in fn.per_thread_versions:
        older = [v for v in fn.variants if v.version <= pv]
        base = older[-1] if older else fn.variants[0]
        name, variant = names[base.version]
        out.append(Symbol(name + '_' + fn.per_thread, fn.name, pv, fn.per_thread, variant.impl))
    return out


def table_symbols(functions):
    table = {}
    for fn in functions:
        for s in symbols_of(fn):
            if s.name in table:
                fail('%s: symbol %s comes from two lines' % (fn.line, s.name))
            table[s.name] = s
    return table


# ---------------------------------------------------------------- headers

MODES = [('internal', ['-D__CUDA_API_VERSION_INTERNAL']), ('default', []),
         ('per-thread', ['-DCUDA_API_PER_THREAD_DEFAULT_STREAM'])]


class Param:
    def __init__(self, text, type_text, name):
        self.text = text  # as declared: "const char *name"
        self.type = type_text  # without the name: "const char *"
        self.name = name


def split_top(text, sep=','):
    parts, depth, cur = [], 0, ''
    for ch in text:
        if ch in '([':
            depth += 1
        elif ch in ')]':
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts]


TYPE_WORDS = {'int', 'char', 'short', 'long', 'float', 'double', 'void', 'unsigned', 'signed', 'const', 'size_t'}


def parse_params(name, text):
    text = text.strip()
    if text in ('', 'void'):
        return []
    params = []
    for p in split_top(text):
        p = re.sub(r'\s+', ' ', p)
        m = re.search(r'\(\s*\*\s*([A-Za-z_]\w*)\s*\)', p)  # function pointer
        if m:
            params.append(Param(p, (p[:m.start(1)] + p[m.end(1):]).strip(), m.group(1)))
            continue
        m = re.fullmatch(r'(.*?)([A-Za-z_]\w*)\s*(\[[^\]]*\])?', p)
        type_text = (m.group(1) + (m.group(3) or '')).strip() if m else ''
        if not m or not type_text or type_text in ('const', 'struct', 'enum') or m.group(2) in TYPE_WORDS:
            fail('%s: parameter %r has no name (the headers must name every parameter)' % (name, p))
        params.append(Param(p, type_text, m.group(2)))
    return params


def norm_type(t):
    t = re.sub(r'\s*\*\s*', '*', t)
    return re.sub(r'\s+', ' ', t).strip()


def declarations(headers, cc, cflags):
    """name -> list of Param, from every header in every mode."""
    found = {}
    for header in headers:
        for mode, defs in MODES:
            cmd = [cc, '-E', '-P', '-x', 'c'] + cflags + defs + ['-']
            src = '#include "%s"\n' % os.path.abspath(header)
            r = subprocess.run(cmd, input=src, capture_output=True, text=True)
            if r.returncode != 0:
                fail('preprocessing %s (%s) failed:\n%s' % (header, mode, r.stderr))
            flat = re.sub(r'\s+', ' ', r.stdout)
            for m in re.finditer(r'\bCUresult (cu\w+) ?\(((?:[^;{}()]|\([^;{}()]*\))*)\) ?;', flat):
                name, params = m.group(1), parse_params(m.group(1), m.group(2))
                if name in found:
                    old = [norm_type(p.type) for p in found[name]]
                    new = [norm_type(p.type) for p in params]
                    if old != new:
                        fail('%s is declared twice with different parameters:\n  %s\n  %s' %
                             (name, ', '.join(old), ', '.join(new)))
                    continue  # the first mode (internal) wins: the thunks are built in it
                found[name] = params
    return found


# ------------------------------------------------------------ stub rule


def is_output(index, p):
    """The stub rule's output pointers: a non-const pointer to a non-void type
    that is the first parameter, or named as a result (…_out, …Out, pX, phX)."""
    t = norm_type(p.type)
    if '(' in t or not t.endswith('*'):
        return False
    pointee = t[:-1].strip()
    if pointee in ('void', 'const void') or pointee.startswith('const ') and '*' not in pointee \
            or pointee.endswith('const'):
        return False
    return index == 0 or p.name.endswith('_out') or p.name.endswith('Out') or \
        re.match(r'ph?[A-Z]', p.name) is not None


# ------------------------------------------------------------ generation

HEADER_NOTE = ('// Generated by tools/gen_entry_points.py from lib/api/entry_points.txt\n'
               '// and the declarations of %s. Do not edit.\n')


def exported(table, decls):
    return sorted((s for s in table.values() if s.name in decls), key=lambda s: s.name)


def check_declared(table, decls):
    missing = sorted(n for n in decls if n not in table)
    if missing:
        fail('declared but not in lib/api/entry_points.txt (add a line per function): ' + ', '.join(missing))


def impl_signatures(syms, decls):
    impls = {}
    for s in syms:
        if not s.impl or s.impl.startswith('@'):
            continue
        types = [norm_type(p.type) for p in decls[s.name]]
        if s.impl in impls and [norm_type(p.type) for p in impls[s.impl][1]] != types:
            fail('%s implements %s and %s, whose parameters differ' % (s.impl, impls[s.impl][0], s.name))
        impls.setdefault(s.impl, (s.name, decls[s.name]))
    return impls


def write(path, text):
    old = None
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if old != text:
        with open(path, 'w') as f:
            f.write(text)


def generate(args):
    functions = parse_table(args.table)
    table = table_symbols(functions)
    decls = declarations(args.headers, args.cc, args.cflags.split())
    check_declared(table, decls)
    syms = exported(table, decls)
    impls = impl_signatures(syms, decls)
    note = HEADER_NOTE % ', '.join(args.headers)
    os.makedirs(args.out, exist_ok=True)

    h = [note, '// The functions that implement the entry points, in lib/api/*.cpp.\n',
         '#pragma once\n\n#include "common/status.h"\n#include "nvlite/cuda.h"\n\n',
         'namespace nvl::api {\n\n']
    for impl in sorted(impls):
        sym, params = impls[impl]
        h.append('Status %s(%s);  // %s\n' % (impl, ', '.join(p.text for p in params), sym))
    h.append('\n}  // namespace nvl::api\n')
    write(os.path.join(args.out, 'entry_impls.h'), ''.join(h))

    c = [note, '// Every exported symbol of the driver API, and the table cuGetProcAddress\n',
         '// searches. Built as the library sees the header (the first-ABI names\n',
         '// declared too).\n',
         '#define __CUDA_API_VERSION_INTERNAL 1\n',
         '#define __CUDA_API_VERSION_INTERNAL_ODR 1  // the enums as the other files see them\n',
         '#include "api/entry.h"\n#include "api/entry_points.h"\n#include "api/interop.h"\n',
         '#include "api/entry_impls.h"\n\n',
         '// The headers\' mapping macros would rename what is defined below.\n']
    for name in sorted(set(s.name for s in syms) | set(s.function for s in syms)):
        c.append('#undef %s\n' % name)
    c.append('\nusing ::nvl::api::call;\nusing ::nvl::api::DefaultStream;\n\nextern "C" {\n\n')
    for s in syms:
        params = decls[s.name]
        names = [p.name for p in params]
        args_text = ''.join(', ' + n for n in names)
        if s.impl == FIRST_ABI:
            body = '::nvl::api::firstAbi()'
        elif s.impl:
            body = '::nvl::api::%s(%s)' % (s.impl, ', '.join(names))
        else:
            outs = [p.name for i, p in enumerate(params) if is_output(i, p)]
            body = '::nvl::api::notProvided("%s", {%s})' % (s.name, ', '.join(outs))
        mode = '<DefaultStream::PerThread>' if s.per_thread else ''
        c.append('NVL_EXPORT CUresult CUDAAPI %s(%s) {\n' % (s.name, ', '.join(p.text for p in params) or 'void'))
        c.append('    return call%s("%s", [&] { return %s; }%s);\n}\n\n' % (mode, s.name, body, args_text))
    c.append('}  // extern "C"\n\nnamespace nvl::api {\n\n')
    c.append('// By function name (strcmp order), then default forms before per-thread\n'
             '// ones, oldest first.\n')
    c.append('const EntryPoint kEntryPoints[] = {\n')
    order = sorted(syms, key=lambda s: (s.function, s.per_thread != '', s.version))
    for s in order:
        if not s.name.startswith(s.function) or len(s.function) > 255:
            raise SystemExit('gen_entry_points: %s: the function name %s is not the start of the symbol' % (s.name, s.function))
        c.append('    {"%s", reinterpret_cast<EntryPoint::Fn>(&::%s), %d, %d, %s},\n' %
                 (s.name, s.name, s.version, len(s.function), 'true' if s.per_thread else 'false'))
    c.append('};\nconst size_t kEntryPointCount = sizeof kEntryPoints / sizeof kEntryPoints[0];\n\n'
             '}  // namespace nvl::api\n')
    write(os.path.join(args.out, 'entry_thunks.cpp'), ''.join(c))

    write(os.path.join(args.out, 'exports.txt'), ''.join(s.name + '\n' for s in syms))
    write(os.path.join(args.out, 'not_supported.txt'), not_supported_text(functions, decls))


# ----------------------------------------------------------------- stubs


def stub_summary(functions, decls):
    """Of the exported functions: the names of those with no variant provided,
    the stub symbols of those that are, the number of stub symbols, of
    exported symbols and of exported functions."""
    none, partial, nstubs, nsyms, nfuncs = [], [], 0, 0, 0
    for fn in functions:
        syms = [s for s in symbols_of(fn) if s.name in decls]
        if not syms:
            continue
        nfuncs += 1
        nsyms += len(syms)
        stubs = [s.name for s in syms if not s.impl]
        nstubs += len(stubs)
        if len(stubs) == len(syms):
            none.append(fn.name)
        else:
            partial.extend(stubs)
    return none, partial, nstubs, nsyms, nfuncs


def not_supported_text(functions, decls):
    none, partial, nstubs, nsyms, nfuncs = stub_summary(functions, decls)
    out = ['# %d of %d functions (%d of %d exported symbols) return CUDA_ERROR_NOT_SUPPORTED\n' %
           (len(none), nfuncs, nstubs, nsyms)]
    out += [n + '\n' for n in none]
    if partial:
        out.append('# variants not provided of functions that are\n')
        out += [n + '\n' for n in partial]
    return ''.join(out)


def stubs_markdown(functions, decls):
    none, partial, nstubs, nsyms, nfuncs = stub_summary(functions, decls)
    lines = ['# Driver API functions nvlite does not provide yet\n\n',
             'Generated by `make stubs-md` (tools/gen_entry_points.py) from lib/api/entry_points.txt;\n',
             '`make entry-check` fails when it is out of date.\n\n',
             'Each of these is exported, checks its arguments by the stub rule (see README) and returns\n',
             '`CUDA_ERROR_NOT_SUPPORTED`.\n\n',
             '**%d of the %d functions** nvlite exports (%d of %d symbols, counting ABI variants\n'
             'and per-thread forms) are not provided.\n\n' % (len(none), nfuncs, nstubs, nsyms)]
    groups = {}
    for n in none:
        m = re.match(r'cu(GL|EGL|VDPAU|[A-Z][a-z]+)', n)
        groups.setdefault(m.group(1) if m else n, []).append(n)
    for g in sorted(groups):
        lines.append('- **%s** (%d): %s\n' % (g, len(groups[g]), ', '.join('`%s`' % n for n in groups[g])))
    if partial:
        lines.append('\nVariants not provided of functions that are: %s\n' %
                     ', '.join('`%s`' % n for n in partial))
    return ''.join(lines)


def stubs_md(args):
    functions = parse_table(args.table)
    table = table_symbols(functions)
    decls = declarations(args.headers, args.cc, args.cflags.split())
    sys.stdout.write(stubs_markdown(functions, decls))


# ----------------------------------------------------------------- checks


# Typedefs of functions libcuda 580 does not export on Linux.
NOT_ON_LINUX = {'cuWGLGetDevice', 'cuEventCreateFromEGLSync'}


def typedef_facts(include_dir):
    """(function -> sorted versions, function -> (flavour, sorted versions)) from
    NVIDIA's *Typedefs.h (Linux: no WGL)."""
    default, per_thread = {}, {}
    for name in ('cudaTypedefs.h', 'cudaGLTypedefs.h', 'cudaEGLTypedefs.h', 'cudaVDPAUTypedefs.h',
                 'cudaProfilerTypedefs.h'):
        path = os.path.join(include_dir, name)
        if not os.path.exists(path):
            fail('%s is missing' % path)
        with open(path) as f:
            text = f.read()
        for fn, ver, pt in re.findall(r'\*\s*PFN_(cu\w+?)_v(\d+)(?:_(ptds|ptsz))?\)', text):
            if fn in NOT_ON_LINUX:
                continue
            if pt:
                per_thread.setdefault(fn, (pt, set()))[1].add(int(ver))
            else:
                default.setdefault(fn, set()).add(int(ver))
    return ({k: sorted(v) for k, v in default.items()}, {k: (v[0], sorted(v[1])) for k, v in per_thread.items()})


def check(args):
    functions = parse_table(args.table)
    table = table_symbols(functions)
    problems = []
    if args.include:
        default, per_thread = typedef_facts(args.include)
        by_name = {fn.name: fn for fn in functions}
        for name in sorted(set(default) | set(by_name)):
            fn = by_name.get(name)
            if not fn:
                problems.append('%s: in NVIDIA\'s typedef headers, not in the table' % name)
                continue
            if name not in default:
                problems.append('%s: in the table, not in NVIDIA\'s typedef headers' % name)
                continue
            if [v.version for v in fn.variants] != default[name]:
                problems.append('%s: table versions %s, NVIDIA\'s %s' %
                                (name, [v.version for v in fn.variants], default[name]))
            want = per_thread.get(name, (None, []))
            if (fn.per_thread, fn.per_thread_versions) != (want[0], want[1]):
                problems.append('%s: table per-thread %s:%s, NVIDIA\'s %s:%s' %
                                (name, fn.per_thread, fn.per_thread_versions, want[0], want[1]))
    decls = declarations(args.headers, args.cc, args.cflags.split())
    for n in sorted(n for n in decls if n not in table):
        problems.append('%s: declared, not in the table' % n)
    undeclared = sorted(n for n in table if n not in decls)
    if undeclared:
        problems.append('%d symbols of the table are declared by no header (so not exported): %s' %
                        (len(undeclared), ', '.join(undeclared)))
    if args.exports:
        with open(args.exports) as f:
            exports = set(line.split()[-1] for line in f if re.search(r' T cu\w+$', line.rstrip()))
        want = set(n for n in decls if n in table)
        for n in sorted(want - exports):
            problems.append('%s: declared and in the table, not exported by the library' % n)
        for n in sorted(exports - want):
            problems.append('%s: exported by the library, not declared or not in the table' % n)
    if args.list:
        with open(args.list) as f:
            if f.read() != stubs_markdown(functions, decls):
                problems.append('%s is out of date: run make stubs-md' % args.list)
    if args.readme:
        none, partial, nstubs, nsyms, nfuncs = stub_summary(functions, decls)
        with open(args.readme) as f:
            readme = f.read()
        want = '%d of the %d functions' % (len(none), nfuncs)
        if want not in readme:
            problems.append('%s does not say "%s" (the functions not provided)' % (args.readme, want))
    if args.libcuda_exports:
        with open(args.libcuda_exports) as f:
            theirs = set(line.split()[1] for line in f if line.startswith('T '))
        ours = set(n for n in decls if n in table)
        print('entry points: %d symbols exported (%d functions); libcuda 580 exports %d, of which nvlite '
              'lacks %d: %s' % (len(ours), len(set(table[n].function for n in ours)), len(theirs),
                                len(theirs - ours), ' '.join(sorted(theirs - ours))))
    for p in problems:
        print('entry-check: ' + p)
    if problems:
        sys.exit(1)
    print('entry-check: the table, the declarations%s agree' % (' and the exports' if args.exports else ''))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    for name in ('generate', 'check', 'stubs-md'):
        p = sub.add_parser(name)
        p.add_argument('--table', required=True)
        p.add_argument('--cc', default=os.environ.get('CC', 'cc'))
        p.add_argument('--cflags', default='-Iinclude -Ilib')
        p.add_argument('headers', nargs='+')
        if name == 'generate':
            p.add_argument('--out', required=True)
        if name == 'check':
            p.add_argument('--include', help="NVIDIA's include folder (the *Typedefs.h)")
            p.add_argument('--exports', help='nm -D --defined-only output of the library')
            p.add_argument('--list', help='the committed Markdown list of stubs')
            p.add_argument('--readme', help='README that states the count')
            p.add_argument('--libcuda-exports', help="libcuda's export list, for the figures")
    args = ap.parse_args()
    {'generate': generate, 'check': check, 'stubs-md': stubs_md}[args.cmd](args)


if __name__ == '__main__':
    main()
