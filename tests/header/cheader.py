"""Reading a CUDA driver API header (cuda.h) as tokens and declarations.

Used by gen_cuda_h.py (which writes include/nvlite/cuda.h from the facts of
NVIDIA's header) and by derive.py (which, at check time, lists what each
header declares and writes the compile-time checks).

This is not a C parser: it understands the declarations such a header is
made of (typedefs, struct/union/enum definitions, function prototypes, a
static inline function, preprocessor lines) and fails loudly on anything
else, so a later cuda.h with a new construct is noticed, not misread.
"""
import os
import re
import subprocess


class HeaderError(Exception):
    pass


class Tok:
    __slots__ = ('kind', 'text')

    def __init__(self, kind, text):
        self.kind = kind    # 'pp' (a whole preprocessor line), 'id', 'num', 'str', 'punct'
        self.text = text

    def __repr__(self):
        return 'Tok(%s,%r)' % (self.kind, self.text)


_TOKEN_RE = re.compile(r'''
    (?P<ws>\s+)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<num>0[xX][0-9A-Fa-f]+[uUlL]*|[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?[uUlLfF]*)
  | (?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
  | (?P<punct>\.\.\.|<<|>>|->|<=|>=|==|!=|&&|\|\||\#\#|::|[-+*/%&|^!~<>=?:;,.()\[\]{}\#])
''', re.X)


def tokenize(text):
    """Tokens of comment-free C text; each preprocessor line is one 'pp' token."""
    toks = []
    lines = text.split('\n')
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.lstrip().startswith('#'):
            while line.endswith('\\') and i < len(lines):
                line = line[:-1] + ' ' + lines[i]
                i += 1
            toks.append(Tok('pp', ' '.join(line.split())))
            continue
        pos = 0
        while pos < len(line):
            m = _TOKEN_RE.match(line, pos)
            if not m:
                raise HeaderError('cannot tokenize: %r' % line[pos:pos + 40])
            pos = m.end()
            kind = m.lastgroup
            if kind != 'ws':
                toks.append(Tok(kind, m.group(kind)))
    return toks


def pp_split(text):
    """A preprocessor line '#  define X y' -> ('define', 'X y')."""
    m = re.match(r'#\s*([a-z_]+)\s*(.*)$', text)
    if not m:
        return ('', text)
    return (m.group(1), m.group(2).strip())


OPEN = {'(': ')', '[': ']', '{': '}'}


def match_close(toks, i):
    """Index of the bracket closing toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind != 'punct':
            continue
        if t.text in OPEN:
            depth += 1
        elif t.text in (')', ']', '}'):
            depth -= 1
            if depth == 0:
                return j
    raise HeaderError('unbalanced brackets near %s' % render(toks[i:i + 12]))


def split_items(toks):
    """Top level of a header: ('pp', text), ('extern_c_open',),
    ('extern_c_close',), ('decl', tokens) ending in ';', ('funcdef', tokens)
    for a function with a body.  Declarations keep the preprocessor lines
    found inside them."""
    items = []
    i, n = 0, len(toks)
    while i < n:
        t = toks[i]
        if t.kind == 'pp':
            items.append(('pp', t.text))
            i += 1
            continue
        if (t.text == 'extern' and i + 2 < n and toks[i + 1].text == '"C"'
                and toks[i + 2].text == '{'):
            items.append(('extern_c_open',))
            i += 3
            continue
        if t.text == '}':
            items.append(('extern_c_close',))
            i += 1
            continue
        depth = 0
        j = i
        funcdef = False
        last = None
        while True:
            if j >= n:
                raise HeaderError('declaration runs off the end: %s' % render(toks[i:i + 20]))
            u = toks[j]
            if u.kind == 'pp':
                j += 1
                continue
            if u.kind == 'punct':
                if u.text == '{' and depth == 0 and last is not None and last.text == ')':
                    funcdef = True
                if u.text in OPEN:
                    depth += 1
                elif u.text in (')', ']', '}'):
                    depth -= 1
                    if depth == 0 and funcdef and u.text == '}':
                        j += 1
                        break
                elif u.text == ';' and depth == 0:
                    j += 1
                    break
            last = u
            j += 1
        items.append(('funcdef' if funcdef else 'decl', toks[i:j]))
        i = j
    return items


# ---------------------------------------------------------------- rendering

_OPERAND_END = ('id', 'num', 'str')


def _closes_cast(toks, k):
    """toks[k] is the ')' of a cast written '((type)' or '((type *)'."""
    m = k - 1
    while m >= 0 and (toks[m].kind == 'id' or toks[m].text == '*'):
        m -= 1
    return (m >= 1 and m < k - 1 and toks[m].text == '(' and toks[m - 1].text == '('
            and toks[m + 1].kind == 'id')


def render(toks, expr=False):
    """Tokens -> text in our spelling: 'type *name', 'f(a, b)', 'x = 1 << 2',
    '((void *)0)'.  expr=True reads a ')' before an operand as a cast
    (macro and enumerator values)."""
    out = []
    prev = None
    prev_cast = False       # the previous ')' closes a cast such as '((CUdevice)'
    prev_tight = False      # no space after the previous token (unary op, pointer '*')
    force = False           # a space after a closing __attribute__((...))
    depth = 0
    attr_depth = None
    for k, t in enumerate(toks):
        s = t.text
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        tight = False
        if prev is None:
            space = False
            tight = s in ('-', '+', '~', '!')
        elif s in (',', ';', ')', ']'):
            space = False
        elif force:
            space = True
        elif s == '*' and prev_tight and prev.text == '*':
            space = False                           # **name
            tight = True
        elif prev_tight or prev.text in ('(', '[', '.', '->', '~', '!'):
            space = False
        elif s in ('.', '->', '['):
            space = False
        elif s == '(':
            if prev.kind == 'id' and nxt is not None and not expr and \
                    nxt.text in ('*', '^', 'CUDA_CB', 'CUDAAPI'):
                space = True                        # void (*fn)(...)
            elif prev.kind == 'id' or prev.text in (')', ']'):
                space = False                       # f(...), (*fn)(...)
            else:
                space = True
        elif s in ('-', '+', '~', '!') and prev.kind == 'punct' and (prev.text not in (')', ']') or prev_cast):
            space = not prev_cast                   # '= -1', ', -1', '(CUdevice)-1'
            tight = True
        elif s == '*':
            binary = (expr and (prev.kind in _OPERAND_END or prev.text == ')') and nxt is not None
                      and (nxt.kind in _OPERAND_END or nxt.text == '(') and prev.text not in BUILTIN_TYPES)
            space = binary or prev.text not in ('*', '(')
            tight = not binary
        elif expr and prev_cast and t.kind in _OPERAND_END:
            space = False                           # ((CUstream)0x1)
        else:
            space = True
        out.append((' ' if space else '') + s)
        force = False
        if s in ('(', '[', '{'):
            depth += 1
        elif s in (')', ']', '}'):
            depth -= 1
            if attr_depth is not None and depth == attr_depth:
                attr_depth = None
                force = True
        if s in ATTRIBUTE_WORDS and attr_depth is None:
            attr_depth = depth
        prev_cast = expr and s == ')' and _closes_cast(toks, k)
        prev = t
        prev_tight = tight
    return ''.join(out)


# ---------------------------------------------------------------- declarations

QUALIFIERS = {'typedef', 'extern', 'static', 'inline', '__inline', '__inline__',
              'const', 'volatile', 'restrict', '__restrict', '__restrict__', 'register'}
BUILTIN_TYPES = {'void', 'char', 'short', 'int', 'long', 'float', 'double', 'signed',
                 'unsigned', '_Bool', 'bool', '__int32', '__int64', 'wchar_t'}
ATTRIBUTE_WORDS = {'__attribute__', '__declspec', 'alignas', '_Alignas'}


class Enum:
    def __init__(self, tag, items):
        self.tag = tag
        self.items = items          # [(name, value tokens or None)]


class Record:
    def __init__(self, kind, tag, members):
        self.kind = kind            # 'struct' or 'union'
        self.tag = tag
        self.members = members      # [Member]


class Member:
    def __init__(self, name, typeid, record, array):
        self.name = name            # None for an anonymous struct/union member
        self.typeid = typeid        # spelled type, None where it cannot be spelled
        self.record = record        # Record defined in place, if any
        self.array = array          # the member is an array


class Spec:
    def __init__(self):
        self.words = []             # the type as written, for type names
        self.spellable = True       # False for an anonymous or in-place defined record/enum
        self.record = None
        self.enum = None
        self.tags = []              # (kind, tag) named here
        self.attrs = []             # token lists of __attribute__((...)) etc.
        self.typedef = False
        self.static = False


class Declarator:
    def __init__(self, name, toks, name_at):
        self.name = name
        self.toks = toks            # declarator tokens, name included
        self.name_at = name_at

    def abstract(self):
        return self.toks[:self.name_at] + self.toks[self.name_at + 1:]

    def is_function(self):
        return (self.name_at + 1 < len(self.toks) and self.toks[self.name_at + 1].text == '('
                and all(t.text not in ('(', '*') for t in self.toks[:self.name_at]))

    def params(self):
        """Parameter declarations (token lists) of a function declarator."""
        i = self.name_at + 1
        j = match_close(self.toks, i)
        return split_top(self.toks[i + 1:j], ',')


def split_top(toks, sep):
    parts, cur, depth = [], [], 0
    for t in toks:
        if t.kind == 'punct' and t.text in OPEN:
            depth += 1
        elif t.kind == 'punct' and t.text in (')', ']', '}'):
            depth -= 1
        if depth == 0 and t.text == sep and t.kind == 'punct':
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        parts.append(cur)
    return parts


def parse_specifiers(toks, i=0):
    sp = Spec()
    has_type = False
    n = len(toks)
    while i < n:
        t = toks[i]
        if t.kind == 'pp':
            i += 1
            continue
        if t.text in ATTRIBUTE_WORDS:
            j = match_close(toks, i + 1)
            sp.attrs.append(toks[i:j + 1])
            i = j + 1
            continue
        if t.text in ('struct', 'union', 'enum'):
            kw = t.text
            i += 1
            tag = None
            if i < n and toks[i].kind == 'id':
                tag = toks[i].text
                i += 1
            if i < n and toks[i].text == '{':
                j = match_close(toks, i)
                body = toks[i + 1:j]
                if kw == 'enum':
                    sp.enum = parse_enum(tag, body)
                else:
                    sp.record = parse_record(kw, tag, body)
                if tag is None:
                    sp.spellable = False
                i = j + 1
            elif tag is None:
                raise HeaderError('%s without tag or body' % kw)
            if tag is not None:
                sp.tags.append((kw, tag))
                sp.words += [kw, tag]
            else:
                sp.words += [kw, '<anonymous>']
            has_type = True
            continue
        if t.kind == 'id':
            if t.text in QUALIFIERS:
                if t.text == 'typedef':
                    sp.typedef = True
                elif t.text == 'static':
                    sp.static = True
                elif t.text in ('const', 'volatile'):
                    sp.words.append(t.text)
                i += 1
                continue
            if t.text in BUILTIN_TYPES:
                sp.words.append(t.text)
                has_type = True
                i += 1
                continue
            if not has_type:
                sp.words.append(t.text)
                has_type = True
                i += 1
                continue
        break
    return sp, i


def parse_declarator(toks):
    """The declared name of one declarator and where it is."""
    k = 0
    n = len(toks)
    while k < n:
        t = toks[k]
        if t.text == '(' and t.kind == 'punct':
            if k + 1 < n and toks[k + 1].text in ('*', '^', '('):
                k += 1
                continue
            k = match_close(toks, k) + 1
            continue
        if t.text == '[':
            k = match_close(toks, k) + 1
            continue
        if t.text in ATTRIBUTE_WORDS:
            k = match_close(toks, k + 1) + 1
            continue
        if t.kind == 'id' and t.text not in QUALIFIERS:
            return Declarator(t.text, toks, k)
        k += 1
    return None


def parse_decl(toks):
    """(Spec, [Declarator]) of one declaration without its ';'."""
    toks = [t for t in toks if t.kind != 'pp']
    if toks and toks[-1].text == ';':
        toks = toks[:-1]
    sp, i = parse_specifiers(toks)
    decls = []
    for part in split_top(toks[i:], ','):
        if any(t.text == ':' for t in part):
            raise HeaderError('bit-fields are not supported: %s' % render(part))
        d = parse_declarator(part)
        if d is None:
            raise HeaderError('no declarator in: %s' % render(toks))
        decls.append(d)
    return sp, decls


def parse_enum(tag, body):
    items = []
    for part in split_top([t for t in body if t.kind != 'pp'], ','):
        if not part:
            continue
        if part[0].kind != 'id':
            raise HeaderError('bad enumerator: %s' % render(part))
        value = None
        if len(part) > 1:
            if part[1].text != '=':
                raise HeaderError('bad enumerator: %s' % render(part))
            value = part[2:]
        items.append((part[0].text, value))
    return Enum(tag, items)


def parse_record(kind, tag, body):
    members = []
    for part in split_top([t for t in body if t.kind != 'pp'], ';'):
        if not part:
            continue
        sp, i = parse_specifiers(part)
        rest = part[i:]
        if not rest:
            if sp.record is None:
                raise HeaderError('member without a name: %s' % render(part))
            members.append(Member(None, None, sp.record, False))
            continue
        for dpart in split_top(rest, ','):
            d = parse_declarator(dpart)
            if d is None:
                raise HeaderError('bad member: %s' % render(part))
            typeid = None
            if sp.record is None and sp.enum is None:
                typeid = render(type_tokens(sp, d))
            array = any(t.text == '[' for t in d.abstract())
            members.append(Member(d.name, typeid, sp.record, array))
    return Record(kind, tag, members)


def type_tokens(sp, d):
    """Tokens of the type-id of declarator d (its name removed)."""
    return [Tok('id', w) for w in sp.words] + d.abstract()


# ---------------------------------------------------------------- header facts

class Facts:
    """What one preprocessed header declares (one configuration)."""

    def __init__(self):
        self.typedefs = {}      # name -> typeid text, or None (anonymous struct/union/enum)
        self.typedef_kind = {}  # name -> 'record' | 'enum' | 'other'
        self.records = {}       # 'struct TAG' / 'union TAG' / typedef name -> Record
        self.top_records = []   # keys of the records defined at file scope
        self.enums = {}         # 'enum TAG' / typedef name -> [enumerator]
        self.enum_values = {}   # enumerator -> value text ('' when implicit)
        self.tags = set()       # 'struct TAG', 'union TAG', 'enum TAG' named anywhere
        self.functions = {}     # symbol -> function type-id text
        self.param_names = {}   # symbol -> [parameter names]
        self.deprecated = set()
        self.inline_functions = set()
        self.order = []         # function symbols in declaration order

    def add_record(self, key, rec):
        self.records[key] = rec
        for m in rec.members:
            if m.record is not None:
                if m.record.tag:
                    self.add_record('%s %s' % (m.record.kind, m.record.tag), m.record)
                self.note_nested(m.record)

    def note_nested(self, rec):
        if rec.tag:
            self.tags.add('%s %s' % (rec.kind, rec.tag))
        for m in rec.members:
            if m.record is not None:
                self.note_nested(m.record)


def collect_tags(toks, facts):
    for k in range(len(toks) - 1):
        if toks[k].text in ('struct', 'union', 'enum') and toks[k + 1].kind == 'id':
            facts.tags.add('%s %s' % (toks[k].text, toks[k + 1].text))


def facts_of(pre_text):
    """Facts of a header from its preprocessed text (gcc -E -P)."""
    f = Facts()
    for item in split_items(tokenize(pre_text)):
        if item[0] != 'decl' and item[0] != 'funcdef':
            continue
        toks = item[1]
        collect_tags(toks, f)
        if item[0] == 'funcdef':
            k = next(k for k, t in enumerate(toks) if t.text == '{')
            sp, decls = parse_decl(toks[:k])
            f.inline_functions.add(decls[0].name)
            continue
        sp, decls = parse_decl(toks)
        if sp.record is not None:
            rec = sp.record
            if rec.tag:
                key = '%s %s' % (rec.kind, rec.tag)
            elif sp.typedef and decls:
                key = decls[0].name
            else:
                raise HeaderError('anonymous record outside a typedef')
            f.add_record(key, rec)
            f.top_records.append(key)
        if sp.enum is not None:
            en = sp.enum
            key = 'enum %s' % en.tag if en.tag else (decls[0].name if sp.typedef and decls else None)
            if key is None:
                raise HeaderError('anonymous enum outside a typedef')
            f.enums[key] = [name for name, _ in en.items]
            for name, value in en.items:
                f.enum_values[name] = render(value, expr=True) if value else ''
        deprecated = any(any(t.text in ('deprecated', '__deprecated__') for t in a) for a in sp.attrs)
        for d in decls:
            if sp.typedef:
                if sp.spellable:
                    f.typedefs[d.name] = render(type_tokens(sp, d))
                else:
                    f.typedefs[d.name] = None
                f.typedef_kind[d.name] = ('record' if sp.record is not None or
                                          (sp.words and sp.words[0] in ('struct', 'union') and
                                           not d.abstract()) else
                                          'enum' if sp.enum is not None or
                                          (sp.words and sp.words[0] == 'enum' and not d.abstract())
                                          else 'other')
            elif d.is_function():
                if d.name in f.functions:
                    prev = f.functions[d.name]
                    if prev != render(type_tokens(sp, d)):
                        raise HeaderError('%s declared twice with different types' % d.name)
                f.functions[d.name] = render(type_tokens(sp, d))
                f.param_names[d.name] = [param_name(p) for p in d.params()]
                f.order.append(d.name)
                if deprecated:
                    f.deprecated.add(d.name)
            else:
                raise HeaderError('unexpected declaration of %s' % d.name)
    return f


def param_name(ptoks):
    if len(ptoks) == 1 and ptoks[0].text == 'void':
        return None
    sp, i = parse_specifiers(ptoks)
    d = parse_declarator(ptoks[i:])
    return d.name if d else None


def flatten(rec, prefix=''):
    """(path, Member) of every member, also inside in-place records;
    anonymous members are looked through, arrays of them stop the walk."""
    out = []
    for m in rec.members:
        if m.name is None:
            out += flatten(m.record, prefix)
            continue
        path = prefix + m.name
        out.append((path, m))
        if m.record is not None and not m.array:
            out += flatten(m.record, path + '.')
    return out


# ---------------------------------------------------------------- running the compiler

def run(args, **kw):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, **kw)
    if p.returncode != 0:
        raise HeaderError('%s failed:\n%s' % (' '.join(args), p.stderr))
    return p.stdout


def preprocess(cc, header, flags, lang='c'):
    """Preprocessed text of a file that includes only `header`."""
    src = '#include "%s"\n' % header
    text = run([cc, '-E', '-x', lang] + flags + ['-'], input=src)
    keep = []
    mine = False
    for line in text.split('\n'):
        m = re.match(r'# [0-9]+ "([^"]*)"', line)
        if m:
            mine = os.path.realpath(m.group(1)) == os.path.realpath(header)
            continue
        if mine and line.strip():
            keep.append(line)
    return '\n'.join(keep) + '\n'


_BASE_MACROS = {}


def macros(cc, header, flags, lang='c'):
    """{name: (params or None, body)} of the macros the header leaves
    defined, without those of the compiler and the C library."""
    def dump(src):
        out = {}
        for line in run([cc, '-dM', '-E', '-x', lang] + flags + ['-'], input=src).splitlines():
            m = re.match(r'#define ([A-Za-z_][A-Za-z0-9_]*)(\([^)]*\))?(?: (.*))?$', line)
            if m:
                params = m.group(2)
                if params is not None:
                    params = tuple(p.strip() for p in params[1:-1].split(',') if p.strip())
                out[m.group(1)] = (params, (m.group(3) or '').strip())
        return out
    key = (cc, tuple(flags), lang)
    if key not in _BASE_MACROS:
        _BASE_MACROS[key] = dump('#include <stdlib.h>\n#include <stdint.h>\n')
    base = _BASE_MACROS[key]
    mine = dump('#include <stdlib.h>\n#include <stdint.h>\n#include "%s"\n' % header)
    return {k: v for k, v in mine.items() if k not in base or base[k] != v}
