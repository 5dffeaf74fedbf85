#!/usr/bin/env python3
"""make bench-compare: every benchmark against libcuda and nvlite, interleaved,
several rounds; one table of medians: figure, libcuda, nvlite, ratio, goal, ✓/✗.

    bench/compare.py [--build build] [--rounds 5] [--variant NAME=VAR=VALUE[,VAR=VALUE]]... [--out FILE]

Each benchmark is built twice (build/bench/<name>_libcuda, <name>_nvlite). The
libcuda runs get NVIDIA's driver (the library path without nvlite's driver
folder); the nvlite runs go through build/bin/nvlite-run, so that whatever
opens libcuda.so.1 by name (NVRTC in bench_launch) gets nvlite too. In each
round the order of the two alternates. A --variant adds a column: the nvlite
runs again with more environment (NVLITE_* switches), e.g.
    --variant wfi=NVLITE_LAUNCH_ORDER=wfi --variant ce=NVLITE_KERNEL_COPY_MIN=off

Lines the benchmarks print look like "TAG figure: 12.3 unit"; bench_pinned's
"H2D median X best Y GB/s, D2H ..." parts are read too. Times (us, ms) and
memory (MiB) are better lower, bandwidths (GB/s) higher.
"""
import argparse
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys

# (program, arguments): one process each, every round.
RUNS = [
    ("bench_basic", []),
    ("bench_pinned", []),
    ("bench_launch", []),
    ("bench_events", []),
    ("bench_perf", ["copy"]),
    ("bench_perf", ["launch"]),
    ("bench_perf", ["load"]),
    ("bench_perf", ["mem"]),
    ("bench_perf", ["small"]),
]

# Goals: figure (a prefix of its name) -> (kind, value). 'ratio<=' / 'ratio>=':
# nvlite / libcuda; 'max': nvlite's value at most this (MiB); 'sum<=': checked on
# the total line. Figures without a goal of their own must not fall behind
# libcuda (times and memory: ratio <= 1.0; bandwidths: ratio >= 0.95).
GOALS = [
    ("D2D copy 64 MiB", ("ratio>=", 0.95)),
    ("D2D copy 1 GiB", ("ratio>=", 0.95)),
    ("memset D32 1 GiB", ("ratio>=", 0.95)),
    ("memset D8 1 GiB", ("ratio>=", 0.95)),
    ("20000 launches, host time", ("ratio<=", 0.35)),
    ("20000 launches, until done", ("ratio<=", 0.40)),
    ("first cuModuleLoadData", ("ratio<=", 1.0)),
    ("memory in use after context, load and launch", ("ratio<=", 1.0)),
    ("memory in use with a fresh context", ("info", None)),
    ("memory taken by the first module load", ("info", None)),
    ("memory taken by the first launch", ("info", None)),
    ("memory still held after freeing", ("max", 4.0)),  # the cached 2 MiB chunk (the built-in kernels' code in it)
    ("memory step", ("info", None)),  # bench_perf mem: the reading after each step of the figure above
    ("4-byte H2D+D2H, after other work", ("ratio<=", 0.40)),
    ("4-byte H2D+D2H, fresh process", ("ratio<=", 0.40)),
    ("init", ("ratio<=", 1.0)),
    ("kernel/kernel overlap", ("info", None)),
    # Fixed work (a 30 ms kernel, a copy sized to take as long) timed alone and
    # side by side: the figure is whether they overlap ("both" near the longer
    # one), so equal within 1 % of timing noise counts (29.92 vs 29.90 ms).
    ("copy/kernel overlap", ("ratio<=", 1.01)),
    ("crossover", ("info", None)),  # small D2D copies and memsets, us per operation (kernel vs copy engine)
]

LINE = re.compile(r"^(\S+) (.+?):\s*(.*)$")
VALUE = re.compile(r"^(?:(?P<pre>[A-Za-z][\w+/ ]*?)\s+)?(?P<v>-?[0-9]+(?:\.[0-9]+)?)\s*(?:best [0-9.]+ )?(?P<u>us|ms|GB/s|MiB)\b")


def parse(text, tag):
    """{figure: (value, unit)} from a benchmark's output."""
    out = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if not m or m.group(1) != tag:
            continue
        name, rest = m.group(2), m.group(3)
        for part in rest.split(","):
            v = VALUE.match(part.strip())
            if not v:
                continue
            figure = name + (" " + v.group("pre") if v.group("pre") else "")
            figure = re.sub(r" median$", "", figure)
            out.setdefault(figure, (float(v.group("v")), v.group("u")))
    return out


def driver_free_path(build):
    """LD_LIBRARY_PATH without nvlite's driver folders, with NVIDIA's if it exists."""
    mine = {os.path.realpath(os.path.join(build, "driver")), os.path.realpath(os.path.join(build, "checked", "driver"))}
    parts = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p and os.path.realpath(p) not in mine]
    for nv in ("/usr/local/nvidia/lib64", "/usr/lib/x86_64-linux-gnu"):
        if os.path.exists(os.path.join(nv, "libcuda.so.1")) and nv not in parts:
            parts.append(nv)
            break
    return ":".join(parts)


def run(cmd, env, timeout):
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, text=True)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")


def goal_for(figure, unit):
    for prefix, goal in GOALS:
        if figure.startswith(prefix):
            return goal
    return ("ratio>=", 0.95) if unit == "GB/s" else ("ratio<=", 1.0)


def verdict(goal, lib, nvl):
    kind, value = goal
    if nvl is None:
        return "✗ (no value)"
    if kind == "info":
        return ""
    if kind == "max":
        return "✓" if nvl <= value else "✗"
    if lib is None or lib == 0:
        return "?" if kind.startswith("ratio") else ""
    r = nvl / lib
    return "✓" if (r <= value if kind == "ratio<=" else r >= value) else "✗"


def goal_text(goal):
    kind, value = goal
    if kind == "info":
        return "—"
    return {"ratio<=": f"≤ {value:.2f}×", "ratio>=": f"≥ {value:.2f}×", "max": f"≤ {value} MiB"}[kind]


def fmt(v):
    if v is None:
        return "—"
    return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"


def machine():
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=20)
        gpu = q.stdout.strip().splitlines()[0] if q.returncode == 0 and q.stdout.strip() else "unknown GPU"
    except (OSError, subprocess.TimeoutExpired):
        gpu = "unknown GPU (no nvidia-smi)"
    return f"{gpu}, {os.uname().nodename}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per benchmark process")
    ap.add_argument("--variant", action="append", default=[], help="NAME=VAR=VALUE[,VAR=VALUE]: another nvlite column")
    ap.add_argument("--only", default="", help="comma-separated benchmark sections to run (e.g. bench_perf:copy)")
    ap.add_argument("--out", default="", help="also write the table (markdown) here")
    ap.add_argument("--raw", default="", help="also write every benchmark's whole output here")
    a = ap.parse_args()

    bench = os.path.join(a.build, "bench")
    launcher = os.path.join(a.build, "bin", "nvlite-run")
    if not os.path.exists(launcher):
        sys.exit(f"bench-compare: {launcher} is missing (make lib bench)")
    libcuda_env = dict(os.environ)
    libcuda_env["LD_LIBRARY_PATH"] = driver_free_path(a.build)
    libcuda_env.pop("NVLITE_DEVICE", None)
    nvlite_env = dict(os.environ)
    nvlite_env.pop("NVLITE_DEVICE", None)
    columns = [("libcuda", "libcuda", libcuda_env, None), ("nvlite", "nvlite", nvlite_env, None)]
    for spec in a.variant:
        name, _, assigns = spec.partition("=")
        env = dict(nvlite_env)
        for kv in assigns.split(","):
            k, _, v = kv.partition("=")
            if k:
                env[k] = v
        columns.append((name, "nvlite", env, assigns))

    runs = RUNS
    if a.only:
        keep = set(a.only.split(","))
        runs = [r for r in RUNS if r[0] in keep or f"{r[0]}:{' '.join(r[1])}" in keep]

    raw = open(a.raw, "w") if a.raw else None
    values = {c[0]: {} for c in columns}  # column -> figure -> [values]
    units, order, failures = {}, [], []
    for rnd in range(a.rounds):
        for prog, args in runs:
            cols = columns if rnd % 2 == 0 else list(reversed(columns))
            for col, lib, env, _ in cols:
                exe = os.path.join(bench, f"{prog}_{lib}")
                if not os.path.exists(exe):
                    failures.append(f"{exe} missing")
                    continue
                cmd = ([launcher] if lib == "nvlite" else []) + [exe, col] + args
                rc, text = run(cmd, env, a.timeout)
                if raw:
                    raw.write(f"===== round {rnd + 1} {col}: {' '.join(cmd)} (exit {rc})\n{text}\n")
                    raw.flush()
                if rc != 0:
                    failures.append(f"round {rnd + 1}: {col} {prog} {' '.join(args)}: exit {rc}: {text.strip().splitlines()[-1:] }")
                for fig, (v, u) in parse(text, col).items():
                    values[col].setdefault(fig, []).append(v)
                    units[fig] = u
                    if fig not in order:
                        order.append(fig)
            print(f"round {rnd + 1}/{a.rounds}: {prog} {' '.join(args)} done", file=sys.stderr, flush=True)

    med = {c: {f: statistics.median(v) for f, v in figs.items()} for c, figs in values.items()}
    extra = [c[0] for c in columns[2:]]
    head = ["figure", "unit", "libcuda", "nvlite", "ratio", "goal", "✓/✗"] + [f"{e} (ratio)" for e in extra]
    rows = []
    met = missed = 0
    for fig in order:
        u = units[fig]
        lib, nvl = med["libcuda"].get(fig), med["nvlite"].get(fig)
        goal = goal_for(fig, u)
        ratio = f"{nvl / lib:.2f}×" if lib and nvl is not None else "—"
        ok = verdict(goal, lib, nvl)
        met += ok == "✓"
        missed += ok.startswith("✗")
        row = [fig, u, fmt(lib), fmt(nvl), ratio, goal_text(goal), ok]
        for e in extra:
            ev = med[e].get(fig)
            row.append(f"{fmt(ev)} ({ev / lib:.2f}×)" if ev is not None and lib else fmt(ev))
        rows.append(row)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"bench-compare {stamp}, {machine()}, medians of {a.rounds} interleaved rounds"]
    for c in columns[2:]:
        lines.append(f"  column {c[0]}: nvlite with {c[3]}")
    lines.append("")
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join("---" for _ in head) + "|")
    for r in rows:
        lines.append("| " + " | ".join(r) + " |")
    lines.append("")
    lines.append(f"goals met: {met}, missed: {missed}")
    for f in failures:
        lines.append(f"FAILED RUN: {f}")
    table = "\n".join(lines)
    print(table)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(table + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
