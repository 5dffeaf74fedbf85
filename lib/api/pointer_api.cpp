// cuPointerGetAttribute(s): what an address is, from the address map.
//
// nvlite's addresses are unified: device memory, pinned host memory and
// registered host memory are each reached at one address by the GPU and
// (where the CPU can reach them at all) by the CPU. Booleans, ordinals and
// access flags are written as int, memory types and handle types as
// unsigned int, ids as unsigned long long, sizes as size_t, as libcuda does.
#include <cstring>

#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/device.h"
#include "core/mem_pool.h"
#include "core/memory.h"
#include "core/runtime.h"

namespace nvl::api {

using core::AllocationInfo;
using core::MemoryKind;

namespace {

template <class T>
void put(void* data, T value) {
    std::memcpy(data, &value, sizeof value);
}

bool knownAttribute(CUpointer_attribute a) {
    return a >= CU_POINTER_ATTRIBUTE_CONTEXT && a <= CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE;
}

// One attribute of an allocation nvlite made or registered.
Status attributeOf(const AllocationInfo& a, CUpointer_attribute attribute, uint64_t ptr, void* data) {
    const bool device = a.kind == MemoryKind::Device;
    switch (attribute) {
    // Pool memory is the pool's, not a context's (libcuda: NULL).
    case CU_POINTER_ATTRIBUTE_CONTEXT: put(data, a.context ? a.context->handle() : nullptr); return kOk;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        put(data, static_cast<unsigned>(device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST));
        return kOk;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        // Kernels of the current context reach it at the same address.
        NVL_TRY(core::requireCurrent().status());
        put(data, static_cast<CUdeviceptr>(ptr));
        return kOk;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (device) return CUDA_ERROR_INVALID_VALUE;
        put(data, reinterpret_cast<void*>(ptr));
        return kOk;
    // nv-p2p tokens are the kernel's RDMA interface, which nvlite does not serve.
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return CUDA_ERROR_NOT_SUPPORTED;
    // nvlite's synchronous copies and memsets always finish before they return.
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: put(data, 1); return kOk;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: put(data, static_cast<unsigned long long>(a.id)); return kOk;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: put(data, 0); return kOk;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        put(data, static_cast<int>(a.context ? a.context->device().ordinal() : a.pool->device().ordinal()));
        return kOk;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: put(data, 0); return kOk;  // no IPC
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: put(data, static_cast<CUdeviceptr>(a.base)); return kOk;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: put(data, static_cast<size_t>(a.size)); return kOk;
    case CU_POINTER_ATTRIBUTE_MAPPED: put(data, 1); return kOk;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        put(data, static_cast<unsigned>(CU_MEM_HANDLE_TYPE_NONE));
        return kOk;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: put(data, 0); return kOk;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        put(data, static_cast<int>(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE));
        return kOk;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        put(data, a.pool ? a.pool->handle() : static_cast<CUmemoryPool>(nullptr));
        return kOk;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: put(data, 0); return kOk;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

// What cuPointerGetAttributes writes for an address nvlite does not know.
void unknownPointer(CUpointer_attribute attribute, void* data) {
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: put(data, static_cast<CUcontext>(nullptr)); break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: put(data, static_cast<CUdeviceptr>(0)); break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: put(data, static_cast<void*>(nullptr)); break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: put(data, 0ull); break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: put(data, static_cast<size_t>(0)); break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: put(data, static_cast<CUmemoryPool>(nullptr)); break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: put(data, -1); break;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: break;
    default: put(data, 0); break;  // memory type 0, and the flags
    }
}

}  // namespace

Status pointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!data || !knownAttribute(attribute)) return CUDA_ERROR_INVALID_VALUE;
    auto a = core::AddressMap::get().find(ptr);
    if (!a) return CUDA_ERROR_INVALID_VALUE;
    return attributeOf(*a, attribute, ptr, data);
}

// Unlike cuPointerGetAttribute, an address nvlite does not know is not an
// error: every attribute gets its empty value.
Status pointerGetAttributes(unsigned int numAttributes, CUpointer_attribute* attributes, void** data,
                            CUdeviceptr ptr) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (numAttributes && (!attributes || !data)) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numAttributes; ++i)
        if (!data[i] || !knownAttribute(attributes[i])) return CUDA_ERROR_INVALID_VALUE;
    auto a = core::AddressMap::get().find(ptr);
    for (unsigned i = 0; i < numAttributes; ++i) {
        if (!a) {
            unknownPointer(attributes[i], data[i]);
            continue;
        }
        Status s = attributeOf(*a, attributes[i], ptr, data[i]);
        // An attribute the address does not have is its empty value here.
        if (s.code() == CUDA_ERROR_INVALID_VALUE || s.code() == CUDA_ERROR_NOT_SUPPORTED)
            unknownPointer(attributes[i], data[i]);
        else if (!s.ok())
            return s;
    }
    return kOk;
}

}  // namespace nvl::api
