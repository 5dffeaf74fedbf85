#!/usr/bin/env python3
"""Runtime-API check (issue 13, the stretch goal): PyTorch on whichever library
answers to libcuda.so.1.

Steps, each run even when an earlier one failed, each saying how it ended:
torch.cuda.is_available() and the device, torch.ones(1024, device="cuda") * 2
(compared exactly), a copy round trip of odd size, a float32 matmul (TF32 off,
compared with NumPy in float64), a reduction. A failure prints the exception as
a user would see it; then which driver library the process has mapped. Last
line: "torch_check: PASS" (exit 0) or "torch_check: FAIL (steps ...)" (exit 1).

    python3 tests/dropin/torch_check.py                          # NVIDIA's driver
    build/bin/nvlite-run python3 tests/dropin/torch_check.py     # nvlite
    NVLITE_TRACE=1 build/bin/nvlite-run python3 tests/dropin/torch_check.py 2>trace.txt
"""
import sys
import traceback

import numpy as np


def maps_fact():
    paths = sorted({l.split()[-1] for l in open("/proc/self/maps") if "/" in l})
    real = [p for p in paths if "libcuda.so.5" in p.rsplit("/", 1)[-1]]
    ours = [p for p in paths if "libnvlite" in p]
    return (f"maps: NVIDIA libcuda.so.5xx mapped: {real[0] if real else 'no'}; "
            f"libnvlite mapped: {ours[0] if ours else 'no'}")


def main():
    try:
        import torch
    except Exception as e:
        print(f"import torch: {type(e).__name__}: {e}")
        print(maps_fact())
        print("torch_check: FAIL (import)")
        return 1
    print(f"torch {torch.__version__}, built for CUDA {torch.version.cuda}")

    steps = []

    def step(name):
        def run(fn):
            try:
                fn()
                steps.append((name, None))
                print(f"{name}: ok")
            except Exception as e:
                steps.append((name, e))
                print(f"{name}: {type(e).__name__}: {e}")
                traceback.print_exc(limit=4, file=sys.stdout)
            return fn
        return run

    @step("device")
    def _():
        assert torch.cuda.is_available(), "torch.cuda.is_available() is False"
        n = torch.cuda.device_count()
        print(f"  {n} device(s); 0: {torch.cuda.get_device_name(0)}, "
              f"capability {torch.cuda.get_device_capability(0)}")

    @step("ones*2")
    def _():
        x = torch.ones(1024, device="cuda") * 2
        got = x.cpu().numpy()
        assert got.dtype == np.float32 and np.array_equal(got, np.full(1024, 2.0, np.float32)), \
            f"ones*2 gave {got[:4]}..."

    @step("copies")
    def _():
        rng = np.random.default_rng(1314)
        a = rng.standard_normal(100_003).astype(np.float32)
        back = torch.from_numpy(a).cuda()[5:].cpu().numpy()
        assert np.array_equal(back, a[5:]), "round trip differs"

    @step("matmul float32")
    def _():
        torch.backends.cuda.matmul.allow_tf32 = False
        rng = np.random.default_rng(1315)
        a = rng.standard_normal((257, 513)).astype(np.float32)
        b = rng.standard_normal((513, 129)).astype(np.float32)
        got = (torch.from_numpy(a).cuda() @ torch.from_numpy(b).cuda()).cpu().numpy()
        want = a.astype(np.float64) @ b.astype(np.float64)
        bad = int(np.count_nonzero(~np.isclose(got, want, rtol=1e-3, atol=1e-3 * np.sqrt(513))))
        assert bad == 0, f"{bad} of {got.size} values differ"

    @step("reduction")
    def _():
        rng = np.random.default_rng(1316)
        a = rng.random(999_983, dtype=np.float32)
        got = float(torch.from_numpy(a).cuda().sum())
        want = float(a.astype(np.float64).sum())
        assert abs(got - want) <= 1e-4 * abs(want), f"sum {got} vs {want}"

    @step("synchronize")
    def _():
        torch.cuda.synchronize()

    print(maps_fact())
    failed = [name for name, e in steps if e is not None]
    print(f"torch_check: {'PASS' if not failed else 'FAIL (steps ' + ', '.join(failed) + ')'}")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
