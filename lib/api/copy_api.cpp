// cuMemcpy* and cuMemset* on the legacy stream, and their async forms in any stream.
#include <cstdint>

#include "api/api_internal.h"
#include "api/entry.h"
#include "core/context.h"
#include "core/copy.h"
#include "core/runtime.h"
#include "core/stream.h"

using namespace nvl;
using nvl::api::entry;
using core::Context;
using core::Sync;

namespace nvl::api {

Result<core::Stream*> resolveStream(CUstream s) {
    if (s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) {
        NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
        return &ctx->nullStream();
    }
    // A stream names its context: work goes there, whichever is current (as libcuda).
    NVL_TRY(core::Runtime::get().checkInit());
    core::Stream* st = core::Stream::fromHandle(s);
    if (!st) return CUDA_ERROR_INVALID_HANDLE;
    Context& ctx = st->context();
    if (!core::CallScope::use(ctx)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (CUresult sticky = ctx.stickyError(); sticky != CUDA_SUCCESS) return sticky;
    return st;
}

Status memcpyHtoD(CUdeviceptr dst, const void* src, size_t n, CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    if (!src && n) return CUDA_ERROR_INVALID_VALUE;
    return st->context().noted(core::copyHostToDevice(*st, dst, src, n, sync));
}

Status memcpyDtoH(void* dst, CUdeviceptr src, size_t n, CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    if (!dst && n) return CUDA_ERROR_INVALID_VALUE;
    return st->context().noted(core::copyDeviceToHost(*st, dst, src, n, sync));
}

Status memcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    return st->context().noted(core::copyDeviceToDevice(*st, dst, src, n, sync));
}

Status memcpyAny(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    if ((!dst || !src) && n) return CUDA_ERROR_INVALID_VALUE;
    return st->context().noted(core::copyUnified(*st, dst, src, n, sync));
}

Status memset(CUdeviceptr dst, uint32_t value, uint32_t elementSize, size_t n, CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    return st->context().noted(core::fill(*st, dst, value, elementSize, n, sync));
}

}  // namespace nvl::api

#define PTR(p) reinterpret_cast<const void*>(p)
#define DPTR(d) static_cast<unsigned long long>(d)

NVL_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
    return entry("cuMemcpyHtoD_v2", [&] { return api::memcpyHtoD(dstDevice, srcHost, ByteCount, nullptr, Sync::Blocking); },
                 "0x%llx, %p, %zu", DPTR(dstDevice), srcHost, ByteCount);
}

NVL_EXPORT CUresult cuMemcpyDtoH_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
    return entry("cuMemcpyDtoH_v2", [&] { return api::memcpyDtoH(dstHost, srcDevice, ByteCount, nullptr, Sync::Blocking); },
                 "%p, 0x%llx, %zu", dstHost, DPTR(srcDevice), ByteCount);
}

NVL_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
    return entry("cuMemcpyDtoD_v2", [&] { return api::memcpyDtoD(dstDevice, srcDevice, ByteCount, nullptr, Sync::Blocking); },
                 "0x%llx, 0x%llx, %zu", DPTR(dstDevice), DPTR(srcDevice), ByteCount);
}

NVL_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
    return entry("cuMemcpy", [&] { return api::memcpyAny(dst, src, ByteCount, nullptr, Sync::Blocking); },
                 "0x%llx, 0x%llx, %zu", DPTR(dst), DPTR(src), ByteCount);
}

NVL_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount, CUstream hStream) {
    return entry("cuMemcpyHtoDAsync_v2", [&] { return api::memcpyHtoD(dstDevice, srcHost, ByteCount, hStream, Sync::Async); },
                 "0x%llx, %p, %zu, %p", DPTR(dstDevice), srcHost, ByteCount, PTR(hStream));
}

NVL_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
    return entry("cuMemcpyDtoHAsync_v2", [&] { return api::memcpyDtoH(dstHost, srcDevice, ByteCount, hStream, Sync::Async); },
                 "%p, 0x%llx, %zu, %p", dstHost, DPTR(srcDevice), ByteCount, PTR(hStream));
}

NVL_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
    return entry("cuMemcpyDtoDAsync_v2", [&] { return api::memcpyDtoD(dstDevice, srcDevice, ByteCount, hStream, Sync::Async); },
                 "0x%llx, 0x%llx, %zu, %p", DPTR(dstDevice), DPTR(srcDevice), ByteCount, PTR(hStream));
}

NVL_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
    return entry("cuMemcpyAsync", [&] { return api::memcpyAny(dst, src, ByteCount, hStream, Sync::Async); },
                 "0x%llx, 0x%llx, %zu, %p", DPTR(dst), DPTR(src), ByteCount, PTR(hStream));
}

NVL_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
    return entry("cuMemsetD8_v2", [&] { return api::memset(dstDevice, uc, 1, N, nullptr, Sync::Blocking); },
                 "0x%llx, %u, %zu", DPTR(dstDevice), uc, N);
}

NVL_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N) {
    return entry("cuMemsetD16_v2", [&] { return api::memset(dstDevice, us, 2, N, nullptr, Sync::Blocking); },
                 "0x%llx, %u, %zu", DPTR(dstDevice), us, N);
}

NVL_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N) {
    return entry("cuMemsetD32_v2", [&] { return api::memset(dstDevice, ui, 4, N, nullptr, Sync::Blocking); },
                 "0x%llx, %u, %zu", DPTR(dstDevice), ui, N);
}

NVL_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
    return entry("cuMemsetD8Async", [&] { return api::memset(dstDevice, uc, 1, N, hStream, Sync::Async); },
                 "0x%llx, %u, %zu, %p", DPTR(dstDevice), uc, N, PTR(hStream));
}

NVL_EXPORT CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream) {
    return entry("cuMemsetD16Async", [&] { return api::memset(dstDevice, us, 2, N, hStream, Sync::Async); },
                 "0x%llx, %u, %zu, %p", DPTR(dstDevice), us, N, PTR(hStream));
}

NVL_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
    return entry("cuMemsetD32Async", [&] { return api::memset(dstDevice, ui, 4, N, hStream, Sync::Async); },
                 "0x%llx, %u, %zu, %p", DPTR(dstDevice), ui, N, PTR(hStream));
}
