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

import numpy as np

from dropin_report import Steps, maps_fact


def main():
    try:
        import torch
    except Exception as e:
        print(f"import torch: {type(e).__name__}: {e}")
        print(maps_fact())
        print("torch_check: FAIL (import)")
        return 1
    print(f"torch {torch.__version__}, built for CUDA {torch.version.cuda}")

    step = Steps(trace_limit=4)

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

    return step.finish("torch_check")


if __name__ == "__main__":
    sys.exit(main())
