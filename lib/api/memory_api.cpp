// Device memory, pinned host memory, registered host memory.
#include <cstdint>

#include "api/entry.h"
#include "core/context.h"
#include "core/device.h"
#include "core/memory.h"
#include "core/runtime.h"

using namespace nvl;
using nvl::api::entry;
using core::AddressMap;
using core::AllocationInfo;
using core::Context;
using core::MemoryKind;

namespace {

constexpr unsigned kHostAllocFlags = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
constexpr unsigned kHostRegisterFlags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                                        CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;

uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

Status hostAlloc(void** pp, size_t bytesize, unsigned flags) {
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    if (!pp || (flags & ~kHostAllocFlags)) return CUDA_ERROR_INVALID_VALUE;
    if (bytesize == 0) {  // libcuda accepts it; nothing to pin
        *pp = nullptr;
        return kOk;
    }
    NVL_ASSIGN_OR_RETURN(void* p, ctx->host().alloc(bytesize));
    AddressMap::get().insert({addr(p), bytesize, MemoryKind::HostAllocated, ctx, flags});
    *pp = p;
    return kOk;
}

}  // namespace

NVL_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
    return entry("cuMemAlloc_v2", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
        if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(core::DeviceHeap::Block b, ctx->heap().alloc(bytesize));
        AddressMap::get().insert({b.va, bytesize, MemoryKind::Device, ctx, 0, b.cpuVisible});
        *dptr = b.va;
        return kOk;
    }, "%p, %zu", static_cast<void*>(dptr), bytesize);
}

NVL_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
    return entry("cuMemFree_v2", [&]() -> Status {
        NVL_TRY(core::checkCurrentIfAny());
        if (dptr == 0) return kOk;
        // Memory of a context being destroyed goes with it.
        auto a = AddressMap::get().findInUse(dptr);
        if (!a || a->base != dptr || a->kind != MemoryKind::Device) return CUDA_ERROR_INVALID_VALUE;
        Context* owner = a->context;
        // Work still in flight may use it: the memory is reused at once.
        NVL_TRY(owner->noted(owner->synchronize()));
        if (!AddressMap::get().remove(dptr)) return CUDA_ERROR_INVALID_VALUE;
        owner->heap().free(dptr);
        return kOk;
    }, "0x%llx", static_cast<unsigned long long>(dptr));
}

NVL_EXPORT CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
    return entry("cuMemGetInfo_v2", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
        return ctx->device().memoryInfo(free, total);
    }, "%p, %p", static_cast<void*>(free), static_cast<void*>(total));
}

NVL_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
    return entry("cuMemGetAddressRange_v2", [&]() -> Status {
        NVL_TRY(core::requireCurrent().status());
        auto a = AddressMap::get().find(dptr);
        if (!a) return CUDA_ERROR_NOT_FOUND;
        if (pbase) *pbase = a->base;
        if (psize) *psize = a->size;
        return kOk;
    }, "%p, %p, 0x%llx", static_cast<void*>(pbase), static_cast<void*>(psize), static_cast<unsigned long long>(dptr));
}

NVL_EXPORT CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) {
    return entry("cuMemAllocHost_v2", [&] { return hostAlloc(pp, bytesize, 0); }, "%p, %zu",
                 static_cast<void*>(pp), bytesize);
}

NVL_EXPORT CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
    return entry("cuMemHostAlloc", [&] { return hostAlloc(pp, bytesize, Flags); }, "%p, %zu, %u",
                 static_cast<void*>(pp), bytesize, Flags);
}

NVL_EXPORT CUresult cuMemFreeHost(void* p) {
    return entry("cuMemFreeHost", [&]() -> Status {
        NVL_TRY(core::checkCurrentIfAny());
        if (!p) return kOk;
        auto a = AddressMap::get().findInUse(addr(p));
        if (!a || a->base != addr(p) || a->kind != MemoryKind::HostAllocated) return CUDA_ERROR_INVALID_VALUE;
        Context* owner = a->context;
        NVL_TRY(owner->noted(owner->synchronize()));
        if (!AddressMap::get().remove(addr(p))) return CUDA_ERROR_INVALID_VALUE;
        owner->host().free(p);
        return kOk;
    }, "%p", p);
}

NVL_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int Flags) {
    return entry("cuMemHostGetDevicePointer_v2", [&]() -> Status {
        NVL_TRY(core::requireCurrent().status());
        if (!pdptr || !p || Flags != 0) return CUDA_ERROR_INVALID_VALUE;
        auto a = AddressMap::get().find(addr(p));
        if (!a || a->kind == MemoryKind::Device) return CUDA_ERROR_INVALID_VALUE;
        // Unified addressing: the GPU sees pinned host memory at its own address.
        *pdptr = addr(p);
        return kOk;
    }, "%p, %p, %u", static_cast<void*>(pdptr), p, Flags);
}

NVL_EXPORT CUresult cuMemHostGetFlags(unsigned int* pFlags, void* p) {
    return entry("cuMemHostGetFlags", [&]() -> Status {
        NVL_TRY(core::requireCurrent().status());
        if (!pFlags || !p) return CUDA_ERROR_INVALID_VALUE;
        auto a = AddressMap::get().find(addr(p));
        if (!a || a->kind != MemoryKind::HostAllocated) return CUDA_ERROR_INVALID_VALUE;
        *pFlags = a->flags;
        return kOk;
    }, "%p, %p", static_cast<void*>(pFlags), p);
}

NVL_EXPORT CUresult cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) {
    return entry("cuMemHostRegister_v2", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
        if (!p || bytesize == 0 || (Flags & ~kHostRegisterFlags)) return CUDA_ERROR_INVALID_VALUE;
        if (addr(p) + bytesize < addr(p)) return CUDA_ERROR_INVALID_VALUE;
        if (Flags & CU_MEMHOSTREGISTER_IOMEMORY) return CUDA_ERROR_NOT_SUPPORTED;
        if (AddressMap::get().overlaps(addr(p), bytesize)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
        NVL_TRY(ctx->host().registerRange(p, bytesize));
        AddressMap::get().insert({addr(p), bytesize, MemoryKind::HostRegistered, ctx, Flags});
        return kOk;
    }, "%p, %zu, %u", p, bytesize, Flags);
}

NVL_EXPORT CUresult cuMemHostUnregister(void* p) {
    return entry("cuMemHostUnregister", [&]() -> Status {
        NVL_TRY(core::requireCurrent().status());
        if (!p) return CUDA_ERROR_INVALID_VALUE;
        auto a = AddressMap::get().findInUse(addr(p));
        if (!a || a->kind != MemoryKind::HostRegistered) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
        if (a->base != addr(p)) return CUDA_ERROR_INVALID_VALUE;  // inside a registration, not its start
        Context* owner = a->context;
        NVL_TRY(owner->noted(owner->synchronize()));
        if (!AddressMap::get().remove(addr(p))) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
        owner->host().unregisterRange(p);
        return kOk;
    }, "%p", p);
}
