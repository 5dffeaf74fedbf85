// cuMemcpy* and cuMemset* on the legacy stream, and their async forms in any stream.
#include <cstdint>

#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/copy.h"
#include "core/runtime.h"
#include "core/stream.h"

namespace nvl::api {

using core::Context;
using core::Sync;

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

namespace {

Status copyHtoD(CUdeviceptr dst, const void* src, size_t n, CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    if (!src && n) return CUDA_ERROR_INVALID_VALUE;
    return st->context().noted(core::copyHostToDevice(*st, dst, src, n, sync));
}

Status copyDtoH(void* dst, CUdeviceptr src, size_t n, CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    if (!dst && n) return CUDA_ERROR_INVALID_VALUE;
    return st->context().noted(core::copyDeviceToHost(*st, dst, src, n, sync));
}

Status copyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    return st->context().noted(core::copyDeviceToDevice(*st, dst, src, n, sync));
}

Status copyAny(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    if ((!dst || !src) && n) return CUDA_ERROR_INVALID_VALUE;
    return st->context().noted(core::copyUnified(*st, dst, src, n, sync));
}

Status fill(CUdeviceptr dst, uint32_t value, uint32_t elementSize, size_t n, CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    return st->context().noted(core::fill(*st, dst, value, elementSize, n, sync));
}

}  // namespace

// The synchronous forms run on the NULL stream: the legacy stream, or in a
// _ptds symbol the thread's default stream (resolveStream serves both).

Status memcpyHtoD(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
    return copyHtoD(dstDevice, srcHost, ByteCount, nullptr, Sync::Blocking);
}

Status memcpyDtoH(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
    return copyDtoH(dstHost, srcDevice, ByteCount, nullptr, Sync::Blocking);
}

Status memcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
    return copyDtoD(dstDevice, srcDevice, ByteCount, nullptr, Sync::Blocking);
}

Status memcpyUnified(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
    return copyAny(dst, src, ByteCount, nullptr, Sync::Blocking);
}

Status memcpyHtoDAsync(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount, CUstream hStream) {
    return copyHtoD(dstDevice, srcHost, ByteCount, hStream, Sync::Async);
}

Status memcpyDtoHAsync(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
    return copyDtoH(dstHost, srcDevice, ByteCount, hStream, Sync::Async);
}

Status memcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
    return copyDtoD(dstDevice, srcDevice, ByteCount, hStream, Sync::Async);
}

Status memcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
    return copyAny(dst, src, ByteCount, hStream, Sync::Async);
}

Status memsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
    return fill(dstDevice, uc, 1, N, nullptr, Sync::Blocking);
}

Status memsetD16(CUdeviceptr dstDevice, unsigned short us, size_t N) {
    return fill(dstDevice, us, 2, N, nullptr, Sync::Blocking);
}

Status memsetD32(CUdeviceptr dstDevice, unsigned int ui, size_t N) {
    return fill(dstDevice, ui, 4, N, nullptr, Sync::Blocking);
}

Status memsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
    return fill(dstDevice, uc, 1, N, hStream, Sync::Async);
}

Status memsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream) {
    return fill(dstDevice, us, 2, N, hStream, Sync::Async);
}

Status memsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
    return fill(dstDevice, ui, 4, N, hStream, Sync::Async);
}

}  // namespace nvl::api
