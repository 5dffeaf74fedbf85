// The /dev/nvidia-uvm interface: ioctl numbers (plain numbers, passed as the
// ioctl request as is) and their parameter blocks. Facts from
// open-gpu-kernel-modules 580.142, kernel-open/nvidia-uvm/{uvm_ioctl.h,
// uvm_linux_ioctl.h,uvm_types.h} and kernel-open/common/inc/{nv_uvm_user_types.h,
// nvCpuUuid.h}.
#pragma once

#include <cstddef>
#include <cstdint>

#include "defs/bits.h"

namespace nvl::nv {

// A GPU (or MIG instance) UUID as UVM takes it (NvUuid).
inline constexpr uint32_t NV_UUID_LEN = 16;
struct NvProcessorUuid {
    uint8_t uuid[NV_UUID_LEN];
};
static_assert(sizeof(NvProcessorUuid) == 16);
static_assert(offsetof(NvProcessorUuid, uuid) == 0);

// Processor counts that size UVM arrays (NV_MAX_DEVICES GPUs, 8 MIG sub-processors each).
inline constexpr uint32_t NV_MAX_DEVICES = 32;
inline constexpr uint32_t UVM_MAX_GPUS = 0x100;

// Must be the first ioctl on a new UVM fd.
inline constexpr uint32_t UVM_INITIALIZE = 0x30000001;
struct UVM_INITIALIZE_PARAMS {
    alignas(8) uint64_t flags;
    uint32_t rmStatus;
};
static_assert(sizeof(UVM_INITIALIZE_PARAMS) == 16);
static_assert(offsetof(UVM_INITIALIZE_PARAMS, rmStatus) == 8);

// UVM_INITIALIZE_PARAMS::flags.
inline constexpr uint64_t UVM_INIT_FLAGS_MASK = 0x3ull;

// Second fd that keeps the mm alive until UVM has torn down (see uvm_ioctl.h).
inline constexpr uint32_t UVM_MM_INITIALIZE = 75;
struct UVM_MM_INITIALIZE_PARAMS {
    int32_t uvmFd;
    uint32_t rmStatus;
};
static_assert(sizeof(UVM_MM_INITIALIZE_PARAMS) == 8);
static_assert(offsetof(UVM_MM_INITIALIZE_PARAMS, rmStatus) == 4);

// Register a GPU with UVM (the RM client and control fd it belongs to).
inline constexpr uint32_t UVM_REGISTER_GPU = 37;
inline constexpr uint32_t UVM_UNREGISTER_GPU = 38;
struct UVM_REGISTER_GPU_PARAMS {
    NvProcessorUuid gpu_uuid;
    uint8_t numaEnabled;
    int32_t numaNodeId;
    int32_t rmCtrlFd;
    uint32_t hClient;
    uint32_t hSmcPartRef;
    uint32_t rmStatus;
};
static_assert(sizeof(UVM_REGISTER_GPU_PARAMS) == 40);
static_assert(offsetof(UVM_REGISTER_GPU_PARAMS, numaNodeId) == 20);
static_assert(offsetof(UVM_REGISTER_GPU_PARAMS, rmStatus) == 36);

struct UVM_UNREGISTER_GPU_PARAMS {
    NvProcessorUuid gpu_uuid;
    uint32_t rmStatus;
};
static_assert(sizeof(UVM_UNREGISTER_GPU_PARAMS) == 20);
static_assert(offsetof(UVM_UNREGISTER_GPU_PARAMS, rmStatus) == 16);

// Share an RM VA space (FERMI_VASPACE_A) with UVM.
inline constexpr uint32_t UVM_REGISTER_GPU_VASPACE = 25;
inline constexpr uint32_t UVM_UNREGISTER_GPU_VASPACE = 26;
struct UVM_REGISTER_GPU_VASPACE_PARAMS {
    NvProcessorUuid gpuUuid;
    int32_t rmCtrlFd;
    uint32_t hClient;
    uint32_t hVaSpace;
    uint32_t rmStatus;
};
static_assert(sizeof(UVM_REGISTER_GPU_VASPACE_PARAMS) == 32);
static_assert(offsetof(UVM_REGISTER_GPU_VASPACE_PARAMS, rmStatus) == 28);

struct UVM_UNREGISTER_GPU_VASPACE_PARAMS {
    NvProcessorUuid gpuUuid;
    uint32_t rmStatus;
};
static_assert(sizeof(UVM_UNREGISTER_GPU_VASPACE_PARAMS) == 20);
static_assert(offsetof(UVM_UNREGISTER_GPU_VASPACE_PARAMS, rmStatus) == 16);

// Tell UVM about a channel, so faults on it are handled.
inline constexpr uint32_t UVM_REGISTER_CHANNEL = 27;
inline constexpr uint32_t UVM_UNREGISTER_CHANNEL = 28;
struct UVM_REGISTER_CHANNEL_PARAMS {
    NvProcessorUuid gpuUuid;
    int32_t rmCtrlFd;
    uint32_t hClient;
    uint32_t hChannel;
    alignas(8) uint64_t base;
    alignas(8) uint64_t length;
    uint32_t rmStatus;
};
static_assert(sizeof(UVM_REGISTER_CHANNEL_PARAMS) == 56);
static_assert(offsetof(UVM_REGISTER_CHANNEL_PARAMS, base) == 32);
static_assert(offsetof(UVM_REGISTER_CHANNEL_PARAMS, length) == 40);
static_assert(offsetof(UVM_REGISTER_CHANNEL_PARAMS, rmStatus) == 48);

struct UVM_UNREGISTER_CHANNEL_PARAMS {
    NvProcessorUuid gpuUuid;
    uint32_t hClient;
    uint32_t hChannel;
    uint32_t rmStatus;
};
static_assert(sizeof(UVM_UNREGISTER_CHANNEL_PARAMS) == 28);
static_assert(offsetof(UVM_UNREGISTER_CHANNEL_PARAMS, rmStatus) == 24);

// Peer access between two registered GPUs.
inline constexpr uint32_t UVM_ENABLE_PEER_ACCESS = 29;
struct UVM_ENABLE_PEER_ACCESS_PARAMS {
    NvProcessorUuid gpuUuidA;
    NvProcessorUuid gpuUuidB;
    uint32_t rmStatus;
};
static_assert(sizeof(UVM_ENABLE_PEER_ACCESS_PARAMS) == 36);
static_assert(offsetof(UVM_ENABLE_PEER_ACCESS_PARAMS, gpuUuidB) == 16);
static_assert(offsetof(UVM_ENABLE_PEER_ACCESS_PARAMS, rmStatus) == 32);

// Reserve a VA range for external (RM) allocations, then map RM memory into it.
inline constexpr uint32_t UVM_CREATE_EXTERNAL_RANGE = 73;
struct UVM_CREATE_EXTERNAL_RANGE_PARAMS {
    alignas(8) uint64_t base;
    alignas(8) uint64_t length;
    uint32_t rmStatus;
};
static_assert(sizeof(UVM_CREATE_EXTERNAL_RANGE_PARAMS) == 24);
static_assert(offsetof(UVM_CREATE_EXTERNAL_RANGE_PARAMS, length) == 8);
static_assert(offsetof(UVM_CREATE_EXTERNAL_RANGE_PARAMS, rmStatus) == 16);

// UvmGpuMappingAttributes enumerations (nv_uvm_user_types.h enums, as constants).
inline constexpr uint32_t UvmGpuMappingTypeReadWriteAtomic = 1;
inline constexpr uint32_t UvmGpuMappingTypeCount = 4;
inline constexpr uint32_t UvmGpuCachingTypeCount = 3;
inline constexpr uint32_t UvmGpuFormatTypeCount = 2;
inline constexpr uint32_t UvmGpuFormatElementBitsCount = 7;
inline constexpr uint32_t UvmGpuCompressionTypeCount = 2;

struct UvmGpuMappingAttributes {
    NvProcessorUuid gpuUuid;
    uint32_t gpuMappingType;      // UvmGpuMappingType*
    uint32_t gpuCachingType;      // UvmGpuCachingType*
    uint32_t gpuFormatType;       // UvmGpuFormatType*
    uint32_t gpuElementBits;      // UvmGpuFormatElementBits*
    uint32_t gpuCompressionType;  // UvmGpuCompressionType*
};
static_assert(sizeof(UvmGpuMappingAttributes) == 36);
static_assert(offsetof(UvmGpuMappingAttributes, gpuCompressionType) == 32);

inline constexpr uint32_t UVM_MAP_EXTERNAL_ALLOCATION = 33;
struct UVM_MAP_EXTERNAL_ALLOCATION_PARAMS {
    alignas(8) uint64_t base;
    alignas(8) uint64_t length;
    alignas(8) uint64_t offset;
    UvmGpuMappingAttributes perGpuAttributes[UVM_MAX_GPUS];
    alignas(8) uint64_t gpuAttributesCount;
    int32_t rmCtrlFd;
    uint32_t hClient;
    uint32_t hMemory;
    uint32_t rmStatus;
};
static_assert(sizeof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS) == 9264);
static_assert(offsetof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, length) == 8);
static_assert(offsetof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, offset) == 16);
static_assert(offsetof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, perGpuAttributes) == 24);
static_assert(offsetof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, gpuAttributesCount) == 9240);
static_assert(offsetof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, rmStatus) == 9260);

// Free a range created by UVM_CREATE_EXTERNAL_RANGE (and its mappings).
inline constexpr uint32_t UVM_FREE = 34;
struct UVM_FREE_PARAMS {
    alignas(8) uint64_t base;
    alignas(8) uint64_t length;
    uint32_t rmStatus;
};
static_assert(sizeof(UVM_FREE_PARAMS) == 24);
static_assert(offsetof(UVM_FREE_PARAMS, length) == 8);
static_assert(offsetof(UVM_FREE_PARAMS, rmStatus) == 16);

// UVM (kernel-open/nvidia-uvm/uvm_linux_ioctl.h)
inline constexpr uint32_t UVM_DEINITIALIZE = 0x30000002;

}  // namespace nvl::nv
