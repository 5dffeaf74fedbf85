#!/usr/bin/env python3
"""Lists the definitions in lib/defs that nothing references (run by `make test`).

lib/defs holds what the code uses plus what a test needs. A definition is a
name defined at namespace level of a lib/defs header: a constant, a field, a
function, a struct, a using-alias, a macro. It counts as referenced when its
name appears, outside comments, anywhere in lib/ or tests/ other than on its
own definition and in static_asserts (which check a layout, not use it).
Exit status 1 when something is unreferenced, with its file and line.

Usage: check_defs_used.py [repository root]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
DEFS = os.path.join(ROOT, "lib", "defs")
SOURCE_DIRS = [os.path.join(ROOT, "lib"), os.path.join(ROOT, "tests")]
SOURCE_EXT = (".h", ".hpp", ".c", ".cc", ".cpp", ".inc", ".def")

IDENT = re.compile(r"[A-Za-z_]\w*")
DEFINITION = [
    # inline constexpr T NAME{...} / = ... ; constexpr T NAME(args) { ... }; inline T* NAME(...)
    re.compile(r"^(?:inline\s+)?(?:constexpr\s+)?(?:const\s+)?(?:unsigned\s+)?[A-Za-z_][\w:]*(?:<[^>]*>)?[\s*&]+(\w+)\s*[{=(\[]"),
    re.compile(r"^(?:struct|union|class)\s+(\w+)"),
    re.compile(r"^enum(?:\s+class)?\s+(\w+)"),
    re.compile(r"^using\s+(\w+)\s*="),
    re.compile(r"^#\s*define\s+(\w+)"),
]


RAW_STRING = re.compile(r'R"([^()\\\s]{0,16})\(')


def strip_comments(text):
    """Blanks out comments and the contents of string and character literals
    (raw strings too), keeping line breaks."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        raw = RAW_STRING.match(text, i) if c == "R" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) else None
        if raw:
            end = text.find(")" + raw.group(1) + '"', raw.end())
            j = n if end < 0 else end + len(raw.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"))):
            # A string, or a character literal (not a digit separator: 1'000).
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def statements_to_skip(lines):
    """Indices of lines belonging to static_assert statements."""
    skip, inside, depth = set(), False, 0
    for k, line in enumerate(lines):
        if not inside and line.lstrip().startswith("static_assert"):
            inside, depth = True, 0
        if inside:
            skip.add(k)
            depth += line.count("(") - line.count(")")
            if depth <= 0 and ";" in line:
                inside = False
    return skip


def main():
    definitions = []  # (name, file, line)
    uses = {}
    def count(text, exclude=None):
        for tok in IDENT.findall(text):
            if tok != exclude:
                uses[tok] = uses.get(tok, 0) + 1

    for dirpath in SOURCE_DIRS:
        for base, _, files in os.walk(dirpath):
            for f in sorted(files):
                if not f.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(base, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    lines = strip_comments(fh.read()).split("\n")
                in_defs = os.path.dirname(path) == DEFS
                skip = statements_to_skip(lines) if in_defs else set()
                for k, line in enumerate(lines):
                    if k in skip:
                        continue
                    name = None
                    if in_defs and line[:1] not in (" ", "\t", "}", ""):
                        for pattern in DEFINITION:
                            m = pattern.match(line)
                            if m:
                                name = m.group(1)
                                definitions.append((name, os.path.relpath(path, ROOT), k + 1))
                                break
                    count(line, exclude=name)

    unused = [d for d in definitions if uses.get(d[0], 0) == 0]
    for name, path, line in unused:
        print(f"{path}:{line}: {name} is defined but nothing references it")
    print(f"check_defs_used: {len(definitions)} definitions in lib/defs, {len(unused)} unreferenced")
    return 1 if unused else 0


if __name__ == "__main__":
    sys.exit(main())
