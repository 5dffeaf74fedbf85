// Copies and fills of every shape: cuMemAllocPitch, cuMemcpy2D(Unaligned),
// cuMemcpy3D, cuMemcpyPeer, cuMemcpy3DPeer and their Async forms,
// cuMemsetD2D8/16/32(Async). Argument checks here; the copies themselves
// are planned in core (core/copy.h).
#include <cstdint>

#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "common/align.h"
#include "core/context.h"
#include "core/copy.h"
#include "core/device.h"
#include "core/memory.h"
#include "core/runtime.h"

namespace nvl::api {

using core::Context;
using core::CopySide;
using core::Extent;
using core::Sync;

namespace {

// cuMemAllocPitch rounds each line up to this many bytes (libcuda 580 on an H200).
constexpr uint64_t kPitchAlignment = 512;

// One side of a copy as CUDA_MEMCPY2D/3D describe it. A pitch of 0 is the
// width, a slice height of 0 the copy's height (libcuda 580 takes both).
struct SideArgs {
    CUmemorytype type;
    const void* host;
    CUdeviceptr device;
    CUarray array;
    uint64_t x, y, z;
    uint64_t pitch, height;  // height: lines per slice (3-D only)
};

Result<CopySide> sideOf(const SideArgs& a) {
    CopySide s;
    switch (a.type) {
    case CU_MEMORYTYPE_HOST:
        if (!a.host) return CUDA_ERROR_INVALID_VALUE;
        s.naming = core::Naming::Host;
        s.address = reinterpret_cast<uint64_t>(a.host);
        break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
        if (!a.device) return CUDA_ERROR_INVALID_VALUE;
        s.naming = a.type == CU_MEMORYTYPE_DEVICE ? core::Naming::Device : core::Naming::Unified;
        s.address = a.device;
        break;
    // CUDA arrays (cuArrayCreate) are not provided: no handle can name one.
    case CU_MEMORYTYPE_ARRAY: return a.array ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    s.pitch = a.pitch;
    uint64_t slice, offset;
    if (__builtin_mul_overflow(a.pitch, a.height, &slice)) return CUDA_ERROR_INVALID_VALUE;
    s.slicePitch = slice;
    if (__builtin_mul_overflow(a.z, slice, &offset) || __builtin_add_overflow(offset, a.x, &offset))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t rows;
    if (__builtin_mul_overflow(a.y, a.pitch, &rows) || __builtin_add_overflow(offset, rows, &offset) ||
        __builtin_add_overflow(s.address, offset, &s.address))
        return CUDA_ERROR_INVALID_VALUE;
    return s;
}

// A side's pitch and slice height with their defaults applied; each line
// within its pitch, each slice at least as high as the copy (also for one
// slice, as libcuda checks).
Status applyDefaults(SideArgs& a, const Extent& e, bool threeD) {
    if (a.type == CU_MEMORYTYPE_ARRAY) return kOk;
    if (a.pitch == 0) a.pitch = e.width;
    if (e.width > a.pitch) return CUDA_ERROR_INVALID_VALUE;
    if (threeD) {
        if (a.height == 0) a.height = e.height;
        if (e.height > a.height) return CUDA_ERROR_INVALID_VALUE;
    }
    return kOk;
}

Status copyShape(core::Stream& st, SideArgs dstArgs, SideArgs srcArgs, Extent e, bool threeD, Sync sync) {
    NVL_TRY(applyDefaults(dstArgs, e, threeD));
    NVL_TRY(applyDefaults(srcArgs, e, threeD));
    NVL_ASSIGN_OR_RETURN(CopySide dst, sideOf(dstArgs));
    NVL_ASSIGN_OR_RETURN(CopySide src, sideOf(srcArgs));
    return st.context().noted(core::copy3D(st, dst, src, e, sync));
}

SideArgs srcOf(const CUDA_MEMCPY2D& c) {
    return {c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray, c.srcXInBytes, c.srcY, 0, c.srcPitch, 0};
}
SideArgs dstOf(const CUDA_MEMCPY2D& c) {
    return {c.dstMemoryType, c.dstHost, c.dstDevice, c.dstArray, c.dstXInBytes, c.dstY, 0, c.dstPitch, 0};
}

template <class Copy3D>
SideArgs src3D(const Copy3D& c) {
    return {c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray, c.srcXInBytes, c.srcY, c.srcZ, c.srcPitch, c.srcHeight};
}
template <class Copy3D>
SideArgs dst3D(const Copy3D& c) {
    return {c.dstMemoryType, c.dstHost, c.dstDevice, c.dstArray, c.dstXInBytes, c.dstY, c.dstZ, c.dstPitch, c.dstHeight};
}

// cuMemcpy2D and cuMemcpy2DUnaligned take the same pitches (libcuda 580
// does not refuse pitches above CU_DEVICE_ATTRIBUTE_MAX_PITCH either); the
// copy engine walks pitches up to 4 GiB, wider ones line by line.
Status copy2D(const CUDA_MEMCPY2D* p, CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    return copyShape(*st, dstOf(*p), srcOf(*p), Extent{p->WidthInBytes, p->Height, 1}, false, sync);
}

// The levels of detail and the reserved fields are not looked at (libcuda
// 580 ignores them).
Status copy3D(const CUDA_MEMCPY3D* p, CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    return copyShape(*st, dst3D(*p), src3D(*p), Extent{p->WidthInBytes, p->Height, p->Depth}, true, sync);
}

// A live context of a peer copy; NULL is the current one (libcuda takes it).
Result<Context*> peerContext(CUcontext h) {
    if (!h) return core::requireCurrent();
    Context* ctx = Context::fromHandle(h);
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
    // A pass for the rest of the call: a destroy racing the copy waits for it.
    if (!core::CallScope::use(*ctx)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (CUresult sticky = ctx->stickyError(); sticky != CUDA_SUCCESS) return sticky;
    return ctx;
}

// The synchronous peer copies run on the current context's legacy stream
// (the destination context's when none is current) after the work of the
// other contexts involved, and return once done when another context is
// involved, so that its later work comes after them (as libcuda orders them).
template <class Run>
Status serializedPeer(Context* dst, Context* src, Run&& run) {
    NVL_TRY(core::Runtime::get().checkInit());
    Context* cur = core::current::top();
    if (cur && !core::CallScope::use(*cur)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    Context* home = cur ? cur : dst;
    core::Stream& st = home->nullStream();
    const bool others = dst != home || src != home;
    for (Context* c : {dst, src})
        if (c != home) NVL_TRY(c->noted(c->synchronize()));
    NVL_TRY(home->noted(run(st)));
    return others ? home->noted(st.synchronize()) : kOk;
}

Status fill2D(CUdeviceptr dst, size_t pitch, uint32_t value, uint32_t elementSize, size_t width, size_t height,
              CUstream s, Sync sync) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(s));
    // The pitch matters (and must be a multiple of the element) from the second line on.
    if (dst % elementSize != 0 || (height > 1 && pitch % elementSize != 0)) return CUDA_ERROR_INVALID_VALUE;
    uint64_t lineBytes;
    if (__builtin_mul_overflow(static_cast<uint64_t>(width), elementSize, &lineBytes)) return CUDA_ERROR_INVALID_VALUE;
    if (height > 1 && lineBytes > pitch) return CUDA_ERROR_INVALID_VALUE;
    return st->context().noted(core::fill2D(*st, dst, pitch, value, elementSize, width, height, sync));
}

}  // namespace

// ------------------------------------------------------------------ allocation

Status memAllocPitch(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                     unsigned int ElementSizeBytes) {
    NVL_TRY(core::requireCurrent().status());
    if (!dptr || !pPitch) return CUDA_ERROR_INVALID_VALUE;
    *pPitch = 0;  // what a refused request leaves (libcuda)
    if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16) return CUDA_ERROR_INVALID_VALUE;
    if (WidthInBytes == 0 || Height == 0) return CUDA_ERROR_INVALID_VALUE;
    const uint64_t pitch = alignUp(WidthInBytes, kPitchAlignment);
    if (pitch < WidthInBytes) return CUDA_ERROR_OUT_OF_MEMORY;
    uint64_t bytes;
    if (__builtin_mul_overflow(pitch, static_cast<uint64_t>(Height), &bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
    NVL_TRY(memAlloc(dptr, bytes));
    *pPitch = pitch;
    return kOk;
}

// ------------------------------------------------------------------ 2-D and 3-D copies

Status memcpy2D(const CUDA_MEMCPY2D* pCopy) { return copy2D(pCopy, nullptr, Sync::Blocking); }

Status memcpy2DUnaligned(const CUDA_MEMCPY2D* pCopy) { return copy2D(pCopy, nullptr, Sync::Blocking); }

Status memcpy2DAsync(const CUDA_MEMCPY2D* pCopy, CUstream hStream) { return copy2D(pCopy, hStream, Sync::Async); }

Status memcpy3D(const CUDA_MEMCPY3D* pCopy) { return copy3D(pCopy, nullptr, Sync::Blocking); }

Status memcpy3DAsync(const CUDA_MEMCPY3D* pCopy, CUstream hStream) { return copy3D(pCopy, hStream, Sync::Async); }

// ------------------------------------------------------------------ peer copies

Status memcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                  size_t ByteCount) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Context * dst, peerContext(dstContext));
    NVL_ASSIGN_OR_RETURN(Context * src, peerContext(srcContext));
    return serializedPeer(dst, src, [&](core::Stream& st) {
        return core::copyDeviceToDevice(st, dstDevice, srcDevice, ByteCount, Sync::Blocking);
    });
}

Status memcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                       size_t ByteCount, CUstream hStream) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(hStream));
    // The contexts are checked; the copy runs on the stream's device (core/peer.h).
    NVL_TRY(peerContext(dstContext).status());
    NVL_TRY(peerContext(srcContext).status());
    return st->context().noted(core::copyDeviceToDevice(*st, dstDevice, srcDevice, ByteCount, Sync::Async));
}

Status memcpy3DPeer(const CUDA_MEMCPY3D_PEER* pCopy) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pCopy) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Context * dst, peerContext(pCopy->dstContext));
    NVL_ASSIGN_OR_RETURN(Context * src, peerContext(pCopy->srcContext));
    const Extent e{pCopy->WidthInBytes, pCopy->Height, pCopy->Depth};
    return serializedPeer(dst, src, [&](core::Stream& st) {
        return copyShape(st, dst3D(*pCopy), src3D(*pCopy), e, true, Sync::Blocking);
    });
}

Status memcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER* pCopy, CUstream hStream) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(hStream));
    if (!pCopy) return CUDA_ERROR_INVALID_VALUE;
    NVL_TRY(peerContext(pCopy->dstContext).status());
    NVL_TRY(peerContext(pCopy->srcContext).status());
    return copyShape(*st, dst3D(*pCopy), src3D(*pCopy), Extent{pCopy->WidthInBytes, pCopy->Height, pCopy->Depth},
                     true, Sync::Async);
}

// ------------------------------------------------------------------ 2-D fills

Status memsetD2D8(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height) {
    return fill2D(dstDevice, dstPitch, uc, 1, Width, Height, nullptr, Sync::Blocking);
}

Status memsetD2D16(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height) {
    return fill2D(dstDevice, dstPitch, us, 2, Width, Height, nullptr, Sync::Blocking);
}

Status memsetD2D32(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height) {
    return fill2D(dstDevice, dstPitch, ui, 4, Width, Height, nullptr, Sync::Blocking);
}

Status memsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height,
                       CUstream hStream) {
    return fill2D(dstDevice, dstPitch, uc, 1, Width, Height, hStream, Sync::Async);
}

Status memsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height,
                        CUstream hStream) {
    return fill2D(dstDevice, dstPitch, us, 2, Width, Height, hStream, Sync::Async);
}

Status memsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height,
                        CUstream hStream) {
    return fill2D(dstDevice, dstPitch, ui, 4, Width, Height, hStream, Sync::Async);
}

}  // namespace nvl::api
