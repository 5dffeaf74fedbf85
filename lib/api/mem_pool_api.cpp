// Memory pools and stream-ordered allocation: cuMemPool*, cuDeviceGet/Set(Default)MemPool,
// cuMemGet/Set(Default)MemPool, cuMemAllocAsync, cuMemAllocFromPoolAsync, cuMemFreeAsync.
#include <cstdint>

#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/device.h"
#include "core/mem_pool.h"
#include "core/memory.h"
#include "core/runtime.h"

namespace nvl::api {

using core::MemPools;

namespace {

// The device a memory location names: pools live on devices only (host
// and host-NUMA pools are not provided). 'badDevice': libcuda's answer for
// an ordinal that names no device, which differs from call to call.
Result<core::Device*> locationDevice(const CUmemLocation& loc, CUresult badDevice = CUDA_ERROR_INVALID_DEVICE) {
    switch (loc.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: {
        auto d = core::deviceFor(loc.id);
        if (!d && d.status().code() == CUDA_ERROR_INVALID_DEVICE) return badDevice;
        return d;
    }
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return CUDA_ERROR_NOT_SUPPORTED;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

// The CUDA 13 getters and setter by location and allocation type.
Result<core::Device*> poolLocation(const CUmemLocation* location, CUmemAllocationType type) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!location) return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_MEM_ALLOCATION_TYPE_MANAGED) return CUDA_ERROR_NOT_SUPPORTED;  // no managed memory
    if (type != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
    return locationDevice(*location);
}

// A device by ordinal, where libcuda answers a bad one with CUDA_ERROR_INVALID_VALUE.
Result<core::Device*> deviceOrInvalidValue(CUdevice dev) {
    auto d = core::deviceFor(dev);
    if (!d && d.status().code() == CUDA_ERROR_INVALID_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    return d;
}

Status allocAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(hStream));
    if (!dptr) return CUDA_ERROR_INVALID_VALUE;
    // Nothing to allocate: success and a NULL pointer, which cuMemFreeAsync takes.
    if (bytesize == 0) {
        *dptr = 0;
        return kOk;
    }
    NVL_ASSIGN_OR_RETURN(uint64_t va, MemPools::get().allocAsync(*st, bytesize, pool));
    *dptr = va;
    return kOk;
}

}  // namespace

// ------------------------------------------------------------------ pools of a device

Status deviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    if (!pool_out) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(*pool_out, MemPools::get().defaultPool(*d));
    return kOk;
}

Status deviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
    NVL_ASSIGN_OR_RETURN(core::Device * d, deviceOrInvalidValue(dev));
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(*pool, MemPools::get().currentPool(*d));
    return kOk;
}

Status deviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
    NVL_ASSIGN_OR_RETURN(core::Device * d, deviceOrInvalidValue(dev));
    return MemPools::get().setCurrentPool(*d, pool);
}

Status memGetDefaultMemPool(CUmemoryPool* pool_out, CUmemLocation* location, CUmemAllocationType type) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pool_out) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, poolLocation(location, type));
    NVL_ASSIGN_OR_RETURN(*pool_out, MemPools::get().defaultPool(*d));
    return kOk;
}

Status memGetMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, poolLocation(location, type));
    NVL_ASSIGN_OR_RETURN(*pool, MemPools::get().currentPool(*d));
    return kOk;
}

Status memSetMemPool(CUmemLocation* location, CUmemAllocationType type, CUmemoryPool pool) {
    NVL_ASSIGN_OR_RETURN(core::Device * d, poolLocation(location, type));
    return MemPools::get().setCurrentPool(*d, pool);
}

// ------------------------------------------------------------------ pools

Status memPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pool || !poolProps) return CUDA_ERROR_INVALID_VALUE;
    const CUmemPoolProps& p = *poolProps;
    for (unsigned char b : p.reserved)
        if (b) return CUDA_ERROR_INVALID_VALUE;
    if (p.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED) return CUDA_ERROR_NOT_SUPPORTED;  // no managed memory
    if (p.allocType != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
    // Linux's handle types. A pool may name them (as libcuda accepts);
    // exporting from it (cuMemPoolExport*, IPC) is what is not provided.
    constexpr unsigned kHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC;
    if (static_cast<unsigned>(p.handleTypes) & ~kHandleTypes) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, locationDevice(p.location, CUDA_ERROR_INVALID_VALUE));
    NVL_ASSIGN_OR_RETURN(*pool, MemPools::get().create(*d, p.maxSize));
    return kOk;
}

Status memPoolDestroy(CUmemoryPool pool) {
    NVL_TRY(core::Runtime::get().checkInit());
    return MemPools::get().destroy(pool);
}

Status memPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
    NVL_TRY(core::Runtime::get().checkInit());
    return MemPools::get().getAttribute(pool, attr, value);
}

Status memPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
    NVL_TRY(core::Runtime::get().checkInit());
    return MemPools::get().setAttribute(pool, attr, value);
}

Status memPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) {
    NVL_TRY(core::Runtime::get().checkInit());
    return MemPools::get().trimTo(pool, minBytesToKeep);
}

// A pool's memory is read and written by its own device; peer devices
// (none here) would need peer access, which nvlite does not provide.
Status memPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc* map, size_t count) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(core::Device * own, MemPools::get().deviceOf(pool));
    if (count && !map) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i) {
        NVL_ASSIGN_OR_RETURN(core::Device * d, locationDevice(map[i].location));
        // The owning device keeps read-write access (libcuda 580: read-only is
        // not supported, none is an invalid device); others need peer access.
        if (d != own) return CUDA_ERROR_INVALID_DEVICE;
        if (map[i].flags == CU_MEM_ACCESS_FLAGS_PROT_NONE) return CUDA_ERROR_INVALID_DEVICE;
        if (map[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ) return CUDA_ERROR_NOT_SUPPORTED;
        if (map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return CUDA_ERROR_INVALID_VALUE;
    }
    return kOk;
}

Status memPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool memPool, CUmemLocation* location) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!flags || !location) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * own, MemPools::get().deviceOf(memPool));
    if (location->type != CU_MEM_LOCATION_TYPE_DEVICE) {
        *flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
        return kOk;
    }
    NVL_ASSIGN_OR_RETURN(core::Device * d, deviceOrInvalidValue(location->id));
    *flags = d == own ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return kOk;
}

// ------------------------------------------------------------------ stream-ordered allocation

Status memAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
    return allocAsync(dptr, bytesize, nullptr, hStream);
}

Status memAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    return allocAsync(dptr, bytesize, pool, hStream);
}

Status memFreeAsync(CUdeviceptr dptr, CUstream hStream) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(hStream));
    if (dptr == 0) return kOk;
    auto a = core::AddressMap::get().find(dptr);
    if (!a || a->base != dptr || a->kind != core::MemoryKind::Device) return CUDA_ERROR_INVALID_VALUE;
    if (a->pool) return MemPools::get().freeAsync(*st, dptr, a->pool);
    // cuMemAlloc's memory (libcuda frees it too): once the stream's work
    // before the free is done, the context heap takes it back.
    NVL_TRY(st->context().noted(st->waitUpcoming()));
    if (!core::AddressMap::get().remove(dptr)) return CUDA_ERROR_INVALID_VALUE;
    a->context->heap().free(dptr);
    return kOk;
}

}  // namespace nvl::api
