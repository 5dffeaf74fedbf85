#!/usr/bin/env python3
"""Runtime-API check (issue 13): CuPy (14.x, cudart 13, cuBLAS, NVRTC inside it)
on whichever library answers to libcuda.so.1.

Each step on random float32 data of odd sizes (fixed seeds), compared with
NumPy: an elementwise expression (a CuPy ElementwiseKernel, compiled by NVRTC),
a raw kernel, reductions (sum, max, a custom ReductionKernel), and float32
matmuls through cuBLAS (square, odd non-square, transposed, a batch). Every
step runs even when an earlier one failed, and says how it ended; a failure
prints the exception as a user would see it. Then which driver library the
process has mapped. Last line: "cupy_check: PASS" (exit 0) or
"cupy_check: FAIL (steps ...)" (exit 1).

    python3 tests/dropin/cupy_check.py                          # NVIDIA's driver
    build/bin/nvlite-run python3 tests/dropin/cupy_check.py     # nvlite
    NVLITE_TRACE=1 build/bin/nvlite-run python3 tests/dropin/cupy_check.py 2>trace.txt
      (trace.txt then names every driver function nvlite did not provide)
"""
import sys

import numpy as np

from dropin_report import Steps, maps_fact


def close(name, got, want, rtol, atol=0.0):
    got = np.asarray(got)
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    n = int(np.count_nonzero(bad))
    if n:
        i = np.flatnonzero(bad)[0]
        raise AssertionError(f"{name}: {n} of {got.size} values differ; first at {i}: "
                             f"{got.reshape(-1)[i]!r} vs {np.asarray(want).reshape(-1)[i]!r}")


def main():
    try:
        import cupy as cp
    except Exception as e:
        print(f"import cupy: {type(e).__name__}: {e}")
        print(maps_fact())
        print("cupy_check: FAIL (import)")
        return 1

    rng = np.random.default_rng(1313)
    step = Steps(trace_limit=3)

    @step("device")
    def _():
        n = cp.cuda.runtime.getDeviceCount()
        p = cp.cuda.runtime.getDeviceProperties(0)
        name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
        print(f"  {n} device(s); 0: {name}, sm_{p['major']}{p['minor']}; "
              f"driver {cp.cuda.runtime.driverGetVersion()}, runtime {cp.cuda.runtime.runtimeGetVersion()}")
        assert n >= 1

    @step("copies")
    def _():
        a = rng.standard_normal(100_003).astype(np.float32)
        d = cp.asarray(a)
        back = cp.asnumpy(d[7:])
        assert np.array_equal(back, a[7:]), "round trip differs"

    @step("elementwise")
    def _():
        n = 1_000_003
        a = rng.standard_normal(n).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        got = cp.asnumpy(cp.asarray(a) * 2.5 + cp.sin(cp.asarray(b)))
        close("a*2.5+sin(b)", got, a * np.float32(2.5) + np.sin(b), rtol=1e-5, atol=1e-6)
        k = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x > y ? x - y : y * 0.5f", "nvl_mix")
        got = cp.asnumpy(k(cp.asarray(a), cp.asarray(b)))
        close("ElementwiseKernel", got, np.where(a > b, a - b, b * np.float32(0.5)), rtol=0)

    @step("raw kernel")
    def _():
        src = r'''extern "C" __global__ void axpy(float k, const float* x, float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = k * x[i] + y[i];
        }'''
        axpy = cp.RawKernel(src, "axpy")
        n = 77_777
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        dy = cp.asarray(y)
        axpy(((n + 255) // 256,), (256,), (np.float32(-1.5), cp.asarray(x), dy, np.int32(n)))
        close("RawKernel axpy", cp.asnumpy(dy), np.float32(-1.5) * x + y, rtol=1e-6, atol=1e-6)

    @step("reductions")
    def _():
        n = 999_983
        a = rng.random(n, dtype=np.float32)
        d = cp.asarray(a)
        close("sum", float(d.sum()), float(a.astype(np.float64).sum()), rtol=1e-4)
        assert float(d.max()) == float(a.max()), "max differs"
        assert int(d.argmin()) == int(a.argmin()), "argmin differs"
        m = rng.random((333, 517), dtype=np.float32)
        close("sum(axis=0)", cp.asnumpy(cp.asarray(m).sum(axis=0)), m.sum(axis=0, dtype=np.float64), rtol=1e-4)
        sq = cp.ReductionKernel("float32 x", "float32 y", "x * x", "a + b", "y = sqrt(a)", "0", "nvl_l2")
        close("ReductionKernel l2", float(sq(d)), float(np.sqrt((a.astype(np.float64) ** 2).sum())), rtol=1e-4)

    def matmul_case(name, m, k, n, transpose=False):
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        da, db = cp.asarray(a), cp.asarray(b)
        if transpose:
            da = cp.asarray(np.ascontiguousarray(a.T)).T
        got = cp.asnumpy(cp.matmul(da, db))
        want = a.astype(np.float64) @ b.astype(np.float64)
        # float32 products summed over k: TF32 is off by default in CuPy.
        close(name, got, want, rtol=1e-3, atol=1e-3 * np.sqrt(k))

    @step("matmul 512x512")
    def _():
        matmul_case("matmul 512", 512, 512, 512)

    @step("matmul odd 123x457x301")
    def _():
        matmul_case("matmul odd", 123, 457, 301)

    @step("matmul transposed")
    def _():
        matmul_case("matmul transposed", 256, 129, 200, transpose=True)

    @step("matmul batched")
    def _():
        a = rng.standard_normal((5, 64, 96)).astype(np.float32)
        b = rng.standard_normal((5, 96, 33)).astype(np.float32)
        got = cp.asnumpy(cp.matmul(cp.asarray(a), cp.asarray(b)))
        close("matmul batched", got, np.matmul(a.astype(np.float64), b.astype(np.float64)), rtol=1e-3, atol=1e-2)

    @step("synchronize")
    def _():
        cp.cuda.Device(0).synchronize()

    return step.finish("cupy_check")


if __name__ == "__main__":
    sys.exit(main())
