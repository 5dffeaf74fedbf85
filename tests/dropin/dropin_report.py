"""What the Python drop-in checks (bindings_check, numba_vecadd, cupy_check,
torch_check) share: the line naming the driver library the process mapped,
and the steps that each run even when an earlier one failed.

The checks run as scripts from this folder (python3 tests/dropin/NAME.py),
so Python finds this module next to them.
"""
import sys
import traceback


def maps_fact():
    """Which driver library /proc/self/maps shows: NVIDIA's libcuda.so.5xx, libnvlite."""
    paths = sorted({l.split()[-1] for l in open("/proc/self/maps") if "/" in l})
    real = [p for p in paths if "libcuda.so.5" in p.rsplit("/", 1)[-1]]
    ours = [p for p in paths if "libnvlite" in p]
    return (f"maps: NVIDIA libcuda.so.5xx mapped: {real[0] if real else 'no'}; "
            f"libnvlite mapped: {ours[0] if ours else 'no'}")


class Steps:
    """@steps("name") on a function runs it at once and records how it ended:
    "name: ok", or the exception as a user would see it (with 'trace_limit'
    frames of its traceback). finish() prints maps_fact() and the last line,
    "PROGRAM: PASS" or "PROGRAM: FAIL (steps ...)", and gives the exit status."""

    def __init__(self, trace_limit):
        self.trace_limit = trace_limit
        self.ended = []  # (name, exception or None)

    def __call__(self, name):
        def run(fn):
            try:
                fn()
                self.ended.append((name, None))
                print(f"{name}: ok")
            except Exception as e:
                self.ended.append((name, e))
                print(f"{name}: {type(e).__name__}: {e}")
                traceback.print_exc(limit=self.trace_limit, file=sys.stdout)
            return fn
        return run

    def finish(self, program):
        print(maps_fact())
        failed = [name for name, e in self.ended if e is not None]
        print(f"{program}: {'PASS' if not failed else 'FAIL (steps ' + ', '.join(failed) + ')'}")
        return 0 if not failed else 1
