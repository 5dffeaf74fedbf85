#!/usr/bin/env python3
"""Drop-in check (issue 8): a numba-cuda vector add on whichever library answers
to libcuda.so.1 (numba-cuda 0.30 reaches the driver through cuda.bindings).

Random float32 data of odd size, every element compared exactly with NumPy's
sum, and which driver library the process has mapped. Last line:
"numba_vecadd: PASS" (exit 0) or "numba_vecadd: FAIL" (exit 1).

    python3 tests/dropin/numba_vecadd.py
    build/bin/nvlite-run python3 tests/dropin/numba_vecadd.py
"""
import sys

import numpy as np

# numba-cuda 0.30 registers an overload for np.row_stack, which numpy 2.5 removed
# (it was an alias of vstack).
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

from dropin_report import maps_fact  # noqa: E402


@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def main():
    good = False
    try:
        dev = cuda.get_current_device()
        print(f"device: {dev.name.decode() if isinstance(dev.name, bytes) else dev.name}, "
              f"cc {dev.compute_capability}")
        n = 1_000_003
        rng = np.random.default_rng(8)
        a = rng.standard_normal(n).astype(np.float32)
        b = (rng.random(n, dtype=np.float32) * 1000).astype(np.float32)
        d_a, d_b = cuda.to_device(a), cuda.to_device(b)
        d_out = cuda.device_array_like(a)
        add[(n + 255) // 256, 256](d_a, d_b, d_out)
        out = d_out.copy_to_host()
        wrong = int(np.count_nonzero(out != a + b))
        print(f"add: {wrong} of {n} elements wrong")
        good = wrong == 0
    except Exception as e:  # report, as a user would see it
        print(f"{type(e).__name__}: {e}")
    print(maps_fact())
    print(f"numba_vecadd: {'PASS' if good else 'FAIL'}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
