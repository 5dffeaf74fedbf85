#!/usr/bin/env python3
"""Summarise etrace logs: per log, the private tables requested (with the
driver's answer) and how often each slot was called.

    tools/etrace/etrace_summary.py LOG...

One block per log file:
    vectorAdd.static: 7 tables requested, 41 calls
      f8cff951 F8CFF951                      rc=0  1 entries
      6bd5fb6c CUDART_INTERFACE              rc=0 13 entries  [1]x2 [2]x1 [12]x1
"""
import re
import sys
from collections import Counter, OrderedDict

REQ = re.compile(r"cuGetExportTable\(\{([0-9a-f-]+)\} (\S+)\) -> (-?\d+)")
TABLE = re.compile(r"table ([0-9a-f-]+) (\S+) at 0x[0-9a-f]+: (\d+) entries")
CALL = re.compile(r"#\d+ (\S+)\[(\d+)\](?: \S+)?\(")


def summarise(path):
    requests = OrderedDict()   # uuid -> [name, rc, entries]
    calls = Counter()          # (name, slot) -> count
    with open(path, errors="replace") as f:
        for line in f:
            m = REQ.search(line)
            if m:
                uuid, name, rc = m.groups()
                requests.setdefault(uuid, [name, rc, "-"])[1] = rc
                continue
            m = TABLE.search(line)
            if m:
                uuid, name, n = m.groups()
                entry = requests.setdefault(uuid, [name, "?", n])
                entry[0], entry[2] = name, n
                continue
            m = CALL.search(line)
            if m and " -> " not in line:
                calls[(m.group(1), int(m.group(2)))] += 1
    label = path.rsplit("/", 1)[-1].removesuffix(".log")
    out = [f"{label}: {len(requests)} tables requested, {sum(calls.values())} calls"]
    for uuid, (name, rc, n) in requests.items():
        slots = " ".join(f"[{s}]x{c}" for (t, s), c in sorted(calls.items()) if t == name)
        out.append(f"  {uuid[:8]} {name:<38} rc={rc:<3} {n:>3} entries  {slots}".rstrip())
    return "\n".join(out)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip())
        return 2
    for path in argv[1:]:
        try:
            print(summarise(path))
        except OSError as e:
            print(f"{path}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
