// Device memory, pinned host memory, registered host memory.
#include <cstdint>

#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/device.h"
#include "core/mem_pool.h"
#include "core/memory.h"
#include "core/runtime.h"

namespace nvl::api {

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
    *pp = nullptr;  // what a failed allocation leaves, as in libcuda
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

Status memAlloc(CUdeviceptr* dptr, size_t bytesize) {
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    *dptr = 0;  // what a failed allocation leaves, as in libcuda
    NVL_ASSIGN_OR_RETURN(core::DeviceHeap::Block b, ctx->heap().alloc(bytesize));
    AddressMap::get().insert({b.va, bytesize, MemoryKind::Device, ctx, 0, b.cpuVisible});
    *dptr = b.va;
    return kOk;
}

Status memFree(CUdeviceptr dptr) {
    NVL_TRY(core::checkCurrentIfAny());
    if (dptr == 0) return kOk;
    // Memory of a context being destroyed goes with it.
    auto a = AddressMap::get().findInUse(dptr);
    if (!a || a->base != dptr || a->kind != MemoryKind::Device) return CUDA_ERROR_INVALID_VALUE;
    if (a->pool) return core::MemPools::get().free(dptr, a->pool);  // a stream-ordered allocation
    Context* owner = a->context;
    // Work still in flight may use it: the memory is reused at once.
    NVL_TRY(owner->noted(owner->synchronize()));
    if (!AddressMap::get().remove(dptr)) return CUDA_ERROR_INVALID_VALUE;
    owner->heap().free(dptr);
    return kOk;
}

Status memGetInfo(size_t* free, size_t* total) {
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    return ctx->device().memoryInfo(free, total);
}

Status memGetAddressRange(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
    NVL_TRY(core::requireCurrent().status());
    auto a = AddressMap::get().find(dptr);
    if (!a) return CUDA_ERROR_NOT_FOUND;
    if (pbase) *pbase = a->base;
    if (psize) *psize = a->size;
    return kOk;
}

Status memAllocHost(void** pp, size_t bytesize) { return hostAlloc(pp, bytesize, 0); }

Status memHostAlloc(void** pp, size_t bytesize, unsigned int Flags) { return hostAlloc(pp, bytesize, Flags); }

Status memFreeHost(void* p) {
    NVL_TRY(core::checkCurrentIfAny());
    if (!p) return kOk;
    auto a = AddressMap::get().findInUse(addr(p));
    if (!a || a->base != addr(p) || a->kind != MemoryKind::HostAllocated) return CUDA_ERROR_INVALID_VALUE;
    Context* owner = a->context;
    NVL_TRY(owner->noted(owner->synchronize()));
    if (!AddressMap::get().remove(addr(p))) return CUDA_ERROR_INVALID_VALUE;
    owner->host().free(p);
    return kOk;
}

Status memHostGetDevicePointer(CUdeviceptr* pdptr, void* p, unsigned int Flags) {
    NVL_TRY(core::requireCurrent().status());
    if (!pdptr || !p || Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    auto a = AddressMap::get().find(addr(p));
    if (!a || a->kind == MemoryKind::Device) return CUDA_ERROR_INVALID_VALUE;
    // Unified addressing: the GPU sees pinned host memory at its own address.
    *pdptr = addr(p);
    return kOk;
}

Status memHostGetFlags(unsigned int* pFlags, void* p) {
    NVL_TRY(core::requireCurrent().status());
    if (!pFlags || !p) return CUDA_ERROR_INVALID_VALUE;
    auto a = AddressMap::get().find(addr(p));
    if (!a || a->kind != MemoryKind::HostAllocated) return CUDA_ERROR_INVALID_VALUE;
    *pFlags = a->flags;
    return kOk;
}

Status memHostRegister(void* p, size_t bytesize, unsigned int Flags) {
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    if (!p || bytesize == 0 || (Flags & ~kHostRegisterFlags)) return CUDA_ERROR_INVALID_VALUE;
    if (addr(p) + bytesize < addr(p)) return CUDA_ERROR_INVALID_VALUE;
    if (Flags & CU_MEMHOSTREGISTER_IOMEMORY) return CUDA_ERROR_NOT_SUPPORTED;
    if (AddressMap::get().overlaps(addr(p), bytesize)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    NVL_TRY(ctx->host().registerPortable(p, bytesize));
    AddressMap::get().insert({addr(p), bytesize, MemoryKind::HostRegistered, ctx, Flags});
    return kOk;
}

Status memHostUnregister(void* p) {
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
}

// The first ABI's 32-bit size.
Status memAllocHostV1(void** pp, unsigned int bytesize) { return hostAlloc(pp, bytesize, 0); }

}  // namespace nvl::api
