// cuDeviceGetAttribute.
//
// Three kinds of answer: what RM reports about this GPU (SM count, clocks,
// memory, PCI ids, ...); the architecture's fixed limits by compute
// capability (the values libcuda 580 reports on an H200 for 9.0); and, for
// optional features, whether nvlite provides them — 0 where it does not, so
// programs take their fallback paths instead of calling what is missing.
#include "core/device.h"

namespace nvl::core {
namespace {

// Per-architecture limits that RM does not report.
struct ArchLimits {
    int maxThreadsPerSm;
    int maxBlocksPerSm;
    int sharedPerSm;
    int sharedPerBlockOptin;
    int singleToDoubleRatio;
};

ArchLimits archLimits(uint32_t major, uint32_t minor) {
    if (major >= 9) return {2048, 32, 233472, 232448, 2};
    if (major == 8 && minor == 0) return {2048, 32, 167936, 166912, 2};
    if (major == 8 && minor == 9) return {1536, 24, 102400, 101376, 64};
    if (major == 8) return {1536, 16, 102400, 101376, 32};
    return {2048, 16, 98304, 98304, 32};
}

// Texture and surface limits (cc 7.0 to 9.0 share them).
int textureLimit(CUdevice_attribute a) {
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT: return 65536;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH: return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS: return 2048;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS: return 2048;
    case CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER: return 1;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE: return 8192;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE: return 32768;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS: return 2046;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT: return 65536;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH: return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS: return 2048;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS: return 2048;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS: return 2046;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH: return 268435456;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT: return 65000;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH: return 2097120;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH: return 32768;
    default: return -1;
    }
}

}  // namespace

Result<int> Device::attribute(int a) const {
    if (a <= 0 || a >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    const hw::GpuInfo& gi = info();
    const ArchLimits arch = archLimits(gi.smMajor, gi.smMinor);
    const auto attr = static_cast<CUdevice_attribute>(a);
    switch (attr) {
    // Launch and resource limits.
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return static_cast<int>(gi.threadsPerWarp);
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
        return gi.maxWarpsPerSm ? static_cast<int>(gi.maxWarpsPerSm * gi.threadsPerWarp) : arch.maxThreadsPerSm;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return arch.sharedPerSm;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return arch.sharedPerBlockOptin;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return arch.maxBlocksPerSm;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return arch.singleToDoubleRatio;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return static_cast<int>(gi.l2CacheBytes / 8 * 5);
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 134217728;
    case CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT: return gi.smMajor >= 9 ? 4 : 1;

    // What RM reports about this GPU.
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return static_cast<int>(gi.smClockKhz);
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return static_cast<int>(gi.memoryClockKhz);
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return static_cast<int>(gi.smCount);
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
        switch (gi.computeMode) {
        case hw::GpuInfo::ComputeMode::ExclusiveProcess: return CU_COMPUTEMODE_EXCLUSIVE_PROCESS;
        case hw::GpuInfo::ComputeMode::Prohibited: return CU_COMPUTEMODE_PROHIBITED;
        default: return CU_COMPUTEMODE_DEFAULT;
        }
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return gi.eccEnabled ? 1 : 0;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return static_cast<int>(gi.pciBus);
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return static_cast<int>(gi.pciDevice);
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: return static_cast<int>(gi.pciDomain);
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return static_cast<int>(gi.busWidthBits);
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return static_cast<int>(gi.l2CacheBytes);
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return static_cast<int>(gi.asyncEngineCount);
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return static_cast<int>(gi.smMajor);
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return static_cast<int>(gi.smMinor);
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: return ordinal_;
    case CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID: return static_cast<int>(gi.pciDeviceId);
    case CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID: return static_cast<int>(gi.pciSubsystemId);
    case CU_DEVICE_ATTRIBUTE_NUMA_ID: return -1;

    // Behaviour nvlite provides.
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM:
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS:
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:  // device pools, no IPC handle types (attribute 119: 0)
        return 1;
    // Cooperative and cluster launches: the Hopper launch path (QMD V04, sm_90's driver area).
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
        return gi.smMajor >= 9 ? 1 : 0;

    default:
        break;
    }
    if (int limit = textureLimit(attr); limit >= 0) return limit;
    // Everything else is either absent on this hardware (integrated, TCC,
    // multi-GPU board, ...) or a feature nvlite does not provide (managed
    // memory, virtual memory management, host memory pools, IPC, interop,
    // multi-device cooperative launch, stream memory operations, ...).
    return 0;
}

}  // namespace nvl::core
