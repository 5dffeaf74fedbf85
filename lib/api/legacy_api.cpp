// Names libcuda still exports besides the ones the header maps to:
//  - the legacy unsuffixed entry points (the first ABI: 32-bit device
//    pointers and sizes where the _v2 forms have 64-bit ones);
//  - the per-thread default stream variants (_ptds / _ptsz) that a program
//    built with CUDA_API_PER_THREAD_DEFAULT_STREAM calls.
// The header's mapping macros are undone here so the old names can be defined.
//
// cuda.h's library view (__CUDA_API_VERSION_INTERNAL) declares every one of
// these names with its true signature, so a definition here that differs is
// a compile error; _ODR keeps its enums the same as in the other files.
#define __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL_ODR
#include <cstdint>

#include "api/api_internal.h"
#include "api/entry.h"
#include "core/runtime.h"

#undef cuCtxCreate
#undef cuCtxDestroy
#undef cuCtxPopCurrent
#undef cuCtxPushCurrent
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuDevicePrimaryCtxSetFlags
#undef cuDeviceTotalMem
#undef cuDeviceGetUuid
#undef cuMemAlloc
#undef cuMemFree
#undef cuMemGetInfo
#undef cuMemGetAddressRange
#undef cuMemAllocHost
#undef cuMemHostGetDevicePointer
#undef cuMemHostRegister
#undef cuMemcpyHtoD
#undef cuMemcpyDtoH
#undef cuMemcpyDtoD
#undef cuMemcpyHtoDAsync
#undef cuMemcpyDtoHAsync
#undef cuMemcpyDtoDAsync
#undef cuMemsetD8
#undef cuMemsetD16
#undef cuMemsetD32
#undef cuModuleGetGlobal
#undef cuLinkCreate
#undef cuLinkAddData
#undef cuLinkAddFile

using namespace nvl;
using nvl::api::entry;
using core::Sync;

namespace {
using DevPtr32 = unsigned int;  // CUdeviceptr of the first ABI
}  // namespace

// --------------------------------------------------------------- legacy names

NVL_EXPORT CUresult cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev) {
    return cuCtxCreate_v2(pctx, flags, dev);
}

NVL_EXPORT CUresult cuCtxDestroy(CUcontext ctx) { return cuCtxDestroy_v2(ctx); }
NVL_EXPORT CUresult cuCtxPopCurrent(CUcontext* pctx) { return cuCtxPopCurrent_v2(pctx); }
NVL_EXPORT CUresult cuCtxPushCurrent(CUcontext ctx) { return cuCtxPushCurrent_v2(ctx); }
NVL_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }
NVL_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return cuDevicePrimaryCtxReset_v2(dev); }
NVL_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
    return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

NVL_EXPORT CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
    return entry("cuDeviceGetUuid", [&] { return api::deviceUuid(uuid, dev); }, "%p, %d",
                 static_cast<void*>(uuid), dev);
}

NVL_EXPORT CUresult cuDeviceTotalMem(unsigned int* bytes, CUdevice dev) {
    return entry("cuDeviceTotalMem", [&]() -> Status {
        size_t total = 0;
        CUresult r = cuDeviceTotalMem_v2(bytes ? &total : nullptr, dev);
        if (r != CUDA_SUCCESS) return r;
        *bytes = total > 0xffffffffull ? 0xffffffffu : static_cast<unsigned int>(total);
        return kOk;
    }, "%p, %d", static_cast<void*>(bytes), dev);
}

// The 32-bit device-pointer forms: libcuda answers them with
// CUDA_ERROR_INVALID_CONTEXT for contexts made through the current API (seen
// on the H200 for cuMemAlloc), and our device addresses never fit 32 bits.
namespace {
Status firstAbi() {
    NVL_TRY(core::Runtime::get().checkInit());
    return CUDA_ERROR_INVALID_CONTEXT;
}
}  // namespace

NVL_EXPORT CUresult cuMemAlloc(DevPtr32* dptr, unsigned int bytesize) {
    return entry("cuMemAlloc", firstAbi, "%p, %u", static_cast<void*>(dptr), bytesize);
}
NVL_EXPORT CUresult cuMemFree(DevPtr32 dptr) { return entry("cuMemFree", firstAbi, "0x%x", dptr); }
NVL_EXPORT CUresult cuMemGetInfo(unsigned int* free, unsigned int* total) {
    return entry("cuMemGetInfo", firstAbi, "%p, %p", static_cast<void*>(free), static_cast<void*>(total));
}
NVL_EXPORT CUresult cuMemGetAddressRange(DevPtr32* pbase, unsigned int* psize, DevPtr32 dptr) {
    return entry("cuMemGetAddressRange", firstAbi, "%p, %p, 0x%x", static_cast<void*>(pbase),
                 static_cast<void*>(psize), dptr);
}
NVL_EXPORT CUresult cuMemHostGetDevicePointer(DevPtr32* pdptr, void* p, unsigned int Flags) {
    return entry("cuMemHostGetDevicePointer", firstAbi, "%p, %p, %u", static_cast<void*>(pdptr), p, Flags);
}
NVL_EXPORT CUresult cuMemcpyHtoD(DevPtr32 dst, const void* src, unsigned int n) {
    return entry("cuMemcpyHtoD", firstAbi, "0x%x, %p, %u", dst, src, n);
}
NVL_EXPORT CUresult cuMemcpyDtoH(void* dst, DevPtr32 src, unsigned int n) {
    return entry("cuMemcpyDtoH", firstAbi, "%p, 0x%x, %u", dst, src, n);
}
NVL_EXPORT CUresult cuMemcpyDtoD(DevPtr32 dst, DevPtr32 src, unsigned int n) {
    return entry("cuMemcpyDtoD", firstAbi, "0x%x, 0x%x, %u", dst, src, n);
}
NVL_EXPORT CUresult cuMemcpyHtoDAsync(DevPtr32 dst, const void* src, unsigned int n, CUstream s) {
    return entry("cuMemcpyHtoDAsync", firstAbi, "0x%x, %p, %u, %p", dst, src, n, static_cast<void*>(s));
}
NVL_EXPORT CUresult cuMemcpyDtoHAsync(void* dst, DevPtr32 src, unsigned int n, CUstream s) {
    return entry("cuMemcpyDtoHAsync", firstAbi, "%p, 0x%x, %u, %p", dst, src, n, static_cast<void*>(s));
}
NVL_EXPORT CUresult cuMemcpyDtoDAsync(DevPtr32 dst, DevPtr32 src, unsigned int n, CUstream s) {
    return entry("cuMemcpyDtoDAsync", firstAbi, "0x%x, 0x%x, %u, %p", dst, src, n, static_cast<void*>(s));
}
NVL_EXPORT CUresult cuMemsetD8(DevPtr32 dst, unsigned char uc, unsigned int n) {
    return entry("cuMemsetD8", firstAbi, "0x%x, %u, %u", dst, uc, n);
}
NVL_EXPORT CUresult cuMemsetD16(DevPtr32 dst, unsigned short us, unsigned int n) {
    return entry("cuMemsetD16", firstAbi, "0x%x, %u, %u", dst, us, n);
}
NVL_EXPORT CUresult cuMemsetD32(DevPtr32 dst, unsigned int ui, unsigned int n) {
    return entry("cuMemsetD32", firstAbi, "0x%x, %u, %u", dst, ui, n);
}

NVL_EXPORT CUresult cuModuleGetGlobal(DevPtr32* dptr, unsigned int* bytes, CUmodule hmod, const char* name) {
    return entry("cuModuleGetGlobal", firstAbi, "%p, %p, %p, %s", static_cast<void*>(dptr), static_cast<void*>(bytes),
                 static_cast<void*>(hmod), name ? name : "(null)");
}

NVL_EXPORT CUresult cuLinkCreate(unsigned int numOptions, CUjit_option* options, void** optionValues,
                                CUlinkState* stateOut) {
    return cuLinkCreate_v2(numOptions, options, optionValues, stateOut);
}
NVL_EXPORT CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                                 unsigned int numOptions, CUjit_option* options, void** optionValues) {
    return cuLinkAddData_v2(state, type, data, size, name, numOptions, options, optionValues);
}
NVL_EXPORT CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path, unsigned int numOptions,
                                 CUjit_option* options, void** optionValues) {
    return cuLinkAddFile_v2(state, type, path, numOptions, options, optionValues);
}

NVL_EXPORT CUresult cuMemAllocHost(void** pp, unsigned int bytesize) { return cuMemAllocHost_v2(pp, bytesize); }

NVL_EXPORT CUresult cuMemHostRegister(void* p, size_t bytesize, unsigned int Flags) {
    return cuMemHostRegister_v2(p, bytesize, Flags);
}

// ------------------------------------------- per-thread default stream forms

#define PT CU_STREAM_PER_THREAD
#define D(x) static_cast<unsigned long long>(x)

NVL_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    return entry("cuMemcpy_ptds", [&] { return api::memcpyAny(dst, src, n, PT, Sync::Blocking); }, "0x%llx, 0x%llx, %zu",
                 D(dst), D(src), n);
}
NVL_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    return entry("cuMemcpyAsync_ptsz", [&] { return api::memcpyAny(dst, src, n, s ? s : PT, Sync::Async); },
                 "0x%llx, 0x%llx, %zu", D(dst), D(src), n);
}
NVL_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void* src, size_t n) {
    return entry("cuMemcpyHtoD_v2_ptds", [&] { return api::memcpyHtoD(dst, src, n, PT, Sync::Blocking); }, "0x%llx, %p, %zu",
                 D(dst), src, n);
}
NVL_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void* dst, CUdeviceptr src, size_t n) {
    return entry("cuMemcpyDtoH_v2_ptds", [&] { return api::memcpyDtoH(dst, src, n, PT, Sync::Blocking); }, "%p, 0x%llx, %zu",
                 dst, D(src), n);
}
NVL_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    return entry("cuMemcpyDtoD_v2_ptds", [&] { return api::memcpyDtoD(dst, src, n, PT, Sync::Blocking); },
                 "0x%llx, 0x%llx, %zu", D(dst), D(src), n);
}
NVL_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
    return entry("cuMemcpyHtoDAsync_v2_ptsz", [&] { return api::memcpyHtoD(dst, src, n, s ? s : PT, Sync::Async); },
                 "0x%llx, %p, %zu", D(dst), src, n);
}
NVL_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void* dst, CUdeviceptr src, size_t n, CUstream s) {
    return entry("cuMemcpyDtoHAsync_v2_ptsz", [&] { return api::memcpyDtoH(dst, src, n, s ? s : PT, Sync::Async); },
                 "%p, 0x%llx, %zu", dst, D(src), n);
}
NVL_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    return entry("cuMemcpyDtoDAsync_v2_ptsz", [&] { return api::memcpyDtoD(dst, src, n, s ? s : PT, Sync::Async); },
                 "0x%llx, 0x%llx, %zu", D(dst), D(src), n);
}
NVL_EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char uc, size_t n) {
    return entry("cuMemsetD8_v2_ptds", [&] { return api::memset(dst, uc, 1, n, PT, Sync::Blocking); }, "0x%llx, %u, %zu",
                 D(dst), uc, n);
}
NVL_EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr dst, unsigned short us, size_t n) {
    return entry("cuMemsetD16_v2_ptds", [&] { return api::memset(dst, us, 2, n, PT, Sync::Blocking); }, "0x%llx, %u, %zu",
                 D(dst), us, n);
}
NVL_EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr dst, unsigned int ui, size_t n) {
    return entry("cuMemsetD32_v2_ptds", [&] { return api::memset(dst, ui, 4, n, PT, Sync::Blocking); }, "0x%llx, %u, %zu",
                 D(dst), ui, n);
}
NVL_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s) {
    return entry("cuMemsetD8Async_ptsz", [&] { return api::memset(dst, uc, 1, n, s ? s : PT, Sync::Async); },
                 "0x%llx, %u, %zu", D(dst), uc, n);
}
NVL_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr dst, unsigned short us, size_t n, CUstream s) {
    return entry("cuMemsetD16Async_ptsz", [&] { return api::memset(dst, us, 2, n, s ? s : PT, Sync::Async); },
                 "0x%llx, %u, %zu", D(dst), us, n);
}
NVL_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s) {
    return entry("cuMemsetD32Async_ptsz", [&] { return api::memset(dst, ui, 4, n, s ? s : PT, Sync::Async); },
                 "0x%llx, %u, %zu", D(dst), ui, n);
}
