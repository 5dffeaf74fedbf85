#!/usr/bin/env python3
"""Drop-in check (issue 8): NVIDIA's Python driver bindings (cuda.bindings.driver,
cuda-bindings 13.x) on whichever library answers to libcuda.so.1.

cuInit, device attributes, the primary context, allocations, copies, an NVRTC
compile (cuda.bindings.nvrtc), module load, a launch on random data of odd
size at an odd offset, an exact check of every element, and which driver
library the process has mapped. Last line: "bindings_check: PASS" (exit 0)
or "bindings_check: FAIL" (exit 1).

    python3 tests/dropin/bindings_check.py           # NVIDIA's driver
    build/bin/nvlite-run python3 tests/dropin/bindings_check.py
"""
import ctypes
import sys

import numpy as np
from cuda.bindings import driver as cu
from cuda.bindings import nvrtc

from dropin_report import maps_fact

SOURCE = rb"""
extern "C" __global__ void mix(const unsigned* a, const unsigned* b, unsigned* out,
                               unsigned k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] * k + (b[i] ^ (unsigned)i);
}
"""


class Failed(Exception):
    pass


def ok(result, what):
    """cuda.bindings returns (status, values...): raise unless the status is success."""
    status, *values = result if isinstance(result, tuple) else (result,)
    good = status in (cu.CUresult.CUDA_SUCCESS, nvrtc.nvrtcResult.NVRTC_SUCCESS)
    if not good:
        raise Failed(f"{what} -> {status!r}")
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def run():
    ok(cu.cuInit(0), "cuInit")
    version = ok(cu.cuDriverGetVersion(), "cuDriverGetVersion")
    count = ok(cu.cuDeviceGetCount(), "cuDeviceGetCount")
    dev = ok(cu.cuDeviceGet(0), "cuDeviceGet")
    name = ok(cu.cuDeviceGetName(128, dev), "cuDeviceGetName").split(b"\0")[0].decode()
    attr = cu.CUdevice_attribute
    major = ok(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cc major")
    minor = ok(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cc minor")
    sms = ok(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "SM count")
    warp = ok(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev), "warp size")
    total = ok(cu.cuDeviceTotalMem(dev), "cuDeviceTotalMem")
    print(f"driver {version}, {count} device(s); device 0: {name}, sm_{major}{minor}, {sms} SMs, "
          f"warp {warp}, {total >> 20} MiB")

    prog = ok(nvrtc.nvrtcCreateProgram(SOURCE, b"bindings.cu", 0, [], []), "nvrtcCreateProgram")
    opts = [f"--gpu-architecture=sm_{major}{minor}".encode()]
    status = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if status[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        size = ok(nvrtc.nvrtcGetProgramLogSize(prog), "log size")
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise Failed(f"nvrtcCompileProgram -> {status[0]!r}\n{log.decode(errors='replace')}")
    size = ok(nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
    cubin = b" " * size
    ok(nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
    ok(nvrtc.nvrtcDestroyProgram(prog), "nvrtcDestroyProgram")
    print(f"nvrtc: cubin {size} bytes")

    ctx = ok(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    ok(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    image = ctypes.create_string_buffer(cubin, size)
    module = ok(cu.cuModuleLoadData(ctypes.addressof(image)), "cuModuleLoadData")
    kernel = ok(cu.cuModuleGetFunction(module, b"mix"), "cuModuleGetFunction")

    n, off = 65537, 20  # odd count, arrays 20 bytes into their allocations
    rng = np.random.default_rng(20261201)
    a = rng.integers(0, 2**32, n, dtype=np.uint32)
    b = rng.integers(0, 2**32, n, dtype=np.uint32)
    k = np.uint32(rng.integers(1, 2**32) | 1)
    nbytes = a.nbytes
    base = [ok(cu.cuMemAlloc(nbytes + off), "cuMemAlloc") for _ in range(3)]
    da, db, dout = (int(p) + off for p in base)
    stream = ok(cu.cuStreamCreate(0), "cuStreamCreate")
    ok(cu.cuMemcpyHtoD(da, a.ctypes.data, nbytes), "cuMemcpyHtoD")
    ok(cu.cuMemcpyHtoDAsync(db, b.ctypes.data, nbytes, stream), "cuMemcpyHtoDAsync")
    ok(cu.cuMemsetD32Async(dout, 0x5A5A5A5A, n, stream), "cuMemsetD32Async")

    values = [ctypes.c_uint64(da), ctypes.c_uint64(db), ctypes.c_uint64(dout), ctypes.c_uint32(int(k)),
              ctypes.c_int32(n)]
    params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    ok(cu.cuLaunchKernel(kernel, (n + 127) // 128, 1, 1, 128, 1, 1, 0, stream, ctypes.addressof(params), 0),
       "cuLaunchKernel")
    out = np.zeros(n, dtype=np.uint32)
    ok(cu.cuMemcpyDtoHAsync(out.ctypes.data, dout, nbytes, stream), "cuMemcpyDtoHAsync")
    ok(cu.cuStreamSynchronize(stream), "cuStreamSynchronize")
    with np.errstate(over="ignore"):
        expect = a * k + (b ^ np.arange(n, dtype=np.uint32))
    wrong = int(np.count_nonzero(out != expect))
    print(f"mix: {wrong} of {n} elements wrong")

    ok(cu.cuStreamDestroy(stream), "cuStreamDestroy")
    for p in base:
        ok(cu.cuMemFree(p), "cuMemFree")
    ok(cu.cuModuleUnload(module), "cuModuleUnload")
    ok(cu.cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease")
    return wrong == 0


def main():
    try:
        good = run()
    except Failed as e:
        print(e)
        good = False
    print(maps_fact())
    print(f"bindings_check: {'PASS' if good else 'FAIL'}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
