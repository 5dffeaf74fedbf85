// RM control commands (the cmd of NV_ESC_RM_CONTROL / NVOS54_PARAMETERS) and their
// parameter blocks. Facts from open-gpu-kernel-modules 580.142,
// src/common/sdk/nvidia/inc/ctrl/ (ctrl0000, ctrl0080, ctrl2080, ctrla06c, ctrla06f,
// ctrlc36f). Each block: command id, its params, the constants it uses.
#pragma once

#include <cstddef>
#include <cstdint>

#include "defs/bits.h"

namespace nvl::nv {

// Driver build version strings (on the client, NV01_ROOT).
inline constexpr uint32_t NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 = 0x13E;
inline constexpr uint32_t NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_MAX_STRING_SIZE = 256;
struct NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS {
    char driverVersionBuffer[NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_MAX_STRING_SIZE];
    char versionBuffer[NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_MAX_STRING_SIZE];
    char driverBranch[NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_MAX_STRING_SIZE];
    char titleBuffer[NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_MAX_STRING_SIZE];
    uint32_t changelistNumber;
    uint32_t officialChangelistNumber;
};
static_assert(sizeof(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS) == 1032);
static_assert(offsetof(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS, versionBuffer) == 256);
static_assert(offsetof(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS, driverBranch) == 512);
static_assert(offsetof(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS, titleBuffer) == 768);
static_assert(offsetof(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS, officialChangelistNumber) == 1028);

// GPU ids attached to / probed by the driver (on the client).
inline constexpr uint32_t NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS = 0x201;
inline constexpr uint32_t NV0000_CTRL_CMD_GPU_GET_PROBED_IDS = 0x214;
inline constexpr uint32_t NV0000_CTRL_GPU_MAX_ATTACHED_GPUS = 32;
inline constexpr uint32_t NV0000_CTRL_GPU_MAX_PROBED_GPUS = 32;
inline constexpr uint32_t NV0000_CTRL_GPU_INVALID_ID = 0xFFFFFFFF;  // ends the gpuIds lists
struct NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS {
    uint32_t gpuIds[NV0000_CTRL_GPU_MAX_ATTACHED_GPUS];
};
static_assert(sizeof(NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS) == 128);
static_assert(offsetof(NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS, gpuIds) == 0);

struct NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS {
    uint32_t gpuIds[NV0000_CTRL_GPU_MAX_PROBED_GPUS];
    uint32_t excludedGpuIds[NV0000_CTRL_GPU_MAX_PROBED_GPUS];
    uint32_t gpuFlags[NV0000_CTRL_GPU_MAX_PROBED_GPUS];
};
static_assert(sizeof(NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS) == 384);
static_assert(offsetof(NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS, excludedGpuIds) == 128);
static_assert(offsetof(NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS, gpuFlags) == 256);

// Peer-to-peer capabilities between GPUs (on the client): the caps common to
// every pair of the listed GPU ids, and each capability's status.
inline constexpr uint32_t NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2 = 0x12B;
inline constexpr uint32_t NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS = 32;
inline constexpr uint32_t NV0000_CTRL_P2P_CAPS_INDEX_TABLE_SIZE = 9;
struct NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS {
    uint32_t gpuIds[NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS];
    uint32_t gpuCount;
    uint32_t p2pCaps;
    uint32_t p2pOptimalReadCEs;
    uint32_t p2pOptimalWriteCEs;
    uint8_t p2pCapsStatus[NV0000_CTRL_P2P_CAPS_INDEX_TABLE_SIZE];
    uint32_t busPeerIds[NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS * NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS];
    uint32_t busEgmPeerIds[NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS * NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS];
};
static_assert(sizeof(NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS) == 8348);
static_assert(offsetof(NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS, p2pCapsStatus) == 144);
static_assert(offsetof(NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS, busPeerIds) == 156);
// NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS::p2pCaps.
inline constexpr BitField NV0000_CTRL_SYSTEM_GET_P2P_CAPS_WRITES_SUPPORTED{0, 0};
inline constexpr BitField NV0000_CTRL_SYSTEM_GET_P2P_CAPS_READS_SUPPORTED{1, 1};
inline constexpr BitField NV0000_CTRL_SYSTEM_GET_P2P_CAPS_NVLINK_SUPPORTED{3, 3};
inline constexpr BitField NV0000_CTRL_SYSTEM_GET_P2P_CAPS_ATOMICS_SUPPORTED{4, 4};
inline constexpr uint8_t NV0000_P2P_CAPS_STATUS_OK = 0x00;
inline constexpr uint8_t NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED = 0x05;
inline constexpr uint32_t NV0000_CTRL_SYSTEM_GET_P2P_CAPS_INVALID_PEER = 0xffffffff;

// Device/subdevice instance and flags of a GPU id (on the client).
inline constexpr uint32_t NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 = 0x205;
struct NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS {
    uint32_t gpuId;
    uint32_t gpuFlags;
    uint32_t deviceInstance;
    uint32_t subDeviceInstance;
    uint32_t sliStatus;
    uint32_t boardId;
    uint32_t gpuInstance;
    int32_t numaId;
};
static_assert(sizeof(NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS) == 32);
static_assert(offsetof(NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, numaId) == 28);

// NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS::gpuFlags.
inline constexpr BitField NV0000_CTRL_GPU_ID_INFO_IN_USE{0, 0};
inline constexpr BitField NV0000_CTRL_GPU_ID_INFO_BOOT_MASTER{3, 3};
inline constexpr uint32_t NV0000_CTRL_GPU_ID_INFO_BOOT_MASTER_TRUE = 0x1;

// Classes the device supports (on NV01_DEVICE_0). V1 takes a user pointer.
inline constexpr uint32_t NV0080_CTRL_CMD_GPU_GET_CLASSLIST = 0x800201;
inline constexpr uint32_t NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2 = 0x800292;
inline constexpr uint32_t NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE = 200;
struct NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS {
    uint32_t numClasses;
    alignas(8) uint64_t classList;
};
static_assert(sizeof(NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS) == 16);
static_assert(offsetof(NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS, classList) == 8);

struct NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS {
    uint32_t numClasses;
    uint32_t classList[NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE];
};
static_assert(sizeof(NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS) == 804);
static_assert(offsetof(NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS, classList) == 4);

// The {index, data} pair that GR, FB and BUS info lists are made of (ctrlxxxx.h).
struct NVXXXX_CTRL_XXX_INFO {
    uint32_t index;
    uint32_t data;
};
static_assert(sizeof(NVXXXX_CTRL_XXX_INFO) == 8);
static_assert(offsetof(NVXXXX_CTRL_XXX_INFO, data) == 4);
using NV2080_CTRL_GR_INFO = NVXXXX_CTRL_XXX_INFO;
using NV2080_CTRL_FB_INFO = NVXXXX_CTRL_XXX_INFO;
using NV2080_CTRL_BUS_INFO = NVXXXX_CTRL_XXX_INFO;

// Which GR engine a GR control addresses (needed under MIG; zero otherwise).
struct NV0080_CTRL_GR_ROUTE_INFO {
    uint32_t flags;
    alignas(8) uint64_t route;
};
static_assert(sizeof(NV0080_CTRL_GR_ROUTE_INFO) == 16);
static_assert(offsetof(NV0080_CTRL_GR_ROUTE_INFO, route) == 8);
using NV2080_CTRL_GR_ROUTE_INFO = NV0080_CTRL_GR_ROUTE_INFO;

// GR engine facts (SM version, counts, ...) by index (on NV20_SUBDEVICE_0).
inline constexpr uint32_t NV2080_CTRL_CMD_GR_GET_INFO = 0x20801201;
struct NV2080_CTRL_GR_GET_INFO_PARAMS {
    uint32_t grInfoListSize;
    alignas(8) uint64_t grInfoList;  // NV2080_CTRL_GR_INFO[grInfoListSize]
    alignas(8) NV2080_CTRL_GR_ROUTE_INFO grRouteInfo;
};
static_assert(sizeof(NV2080_CTRL_GR_GET_INFO_PARAMS) == 32);
static_assert(offsetof(NV2080_CTRL_GR_GET_INFO_PARAMS, grInfoList) == 8);
static_assert(offsetof(NV2080_CTRL_GR_GET_INFO_PARAMS, grRouteInfo) == 16);

// NV2080_CTRL_GR_INFO::index values (they alias the NV0080 ones), and what INDEX_SM_VERSION and
// INDEX_GFX_CAPABILITIES return.
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_COUNT = 0x7;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_THREAD_STACK_SCALING_FACTOR = 0x8;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_SUB_COUNT = 0x9;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_SM_REG_BANK_COUNT = 0xA;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_SM_REG_BANK_REG_COUNT = 0xB;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_SM_VERSION = 0xC;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM = 0xD;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_MAX_THREADS_PER_WARP = 0xE;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_FB_MEMORY_REQUEST_GRANULARITY = 0x11;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_HOST_MEMORY_REQUEST_GRANULARITY = 0x12;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_MAX_SP_PER_SM = 0x13;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS = 0x14;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_FBPS = 0x15;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC = 0x17;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_TIMESLICE_ENABLED = 0x1A;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_FBPAS = 0x1B;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_PES_PER_GPC = 0x1C;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_GPU_CORE_COUNT = 0x1D;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPCS_PER_PES = 0x1E;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC = 0x20;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_RT_CORE_COUNT = 0x22;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_TENSOR_CORE_COUNT = 0x23;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GRS = 0x24;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_LTCS = 0x25;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_LTC_SLICES = 0x26;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCMMU_PER_GPC = 0x27;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_LTC_PER_FBP = 0x28;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_FAMILY_MAX_TPC_PER_GPC = 0x2A;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_FBPA_PER_FBP = 0x2B;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_MAX_SUBCONTEXT_COUNT = 0x2C;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_MAX_LEGACY_SUBCONTEXT_COUNT = 0x2D;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_MAX_PER_ENGINE_SUBCONTEXT_COUNT = 0x2E;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SLICES_PER_LTC = 0x32;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_MAX_MIG_ENGINES = 0x35;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_MAX_PARTITIONABLE_GPCS = 0x36;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_MIN_SUBCTX_PER_SMC_ENG = 0x37;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS_PER_DIELET = 0x38;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_INDEX_LITTER_MAX_NUM_SMC_ENGINES_PER_DIELET = 0x39;
inline constexpr uint32_t NV2080_CTRL_GR_INFO_MAX_SIZE = 0x3A;

// The GPU UUID (GID), as ASCII or 16 binary bytes.
inline constexpr uint32_t NV2080_CTRL_CMD_GPU_GET_GID_INFO = 0x2080014A;
inline constexpr uint64_t NV2080_GPU_MAX_GID_LENGTH = 0x100ull;
struct NV2080_CTRL_GPU_GET_GID_INFO_PARAMS {
    uint32_t index;
    uint32_t flags;
    uint32_t length;
    uint8_t data[NV2080_GPU_MAX_GID_LENGTH];
};
static_assert(sizeof(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS) == 268);
static_assert(offsetof(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS, data) == 12);

inline constexpr BitField NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT{1, 0};
inline constexpr uint32_t NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_ASCII = 0x0;
inline constexpr uint32_t NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY = 0x2;
inline constexpr BitField NV2080_GPU_CMD_GPU_GET_GID_FLAGS_TYPE{2, 2};
inline constexpr uint32_t NV2080_GPU_CMD_GPU_GET_GID_FLAGS_TYPE_SHA1 = 0x0;

// The marketing name ("NVIDIA H200").
inline constexpr uint32_t NV2080_CTRL_CMD_GPU_GET_NAME_STRING = 0x20800110;
inline constexpr uint32_t NV2080_GPU_MAX_NAME_STRING_LENGTH = 0x40;
inline constexpr uint32_t NV2080_CTRL_GPU_GET_NAME_STRING_FLAGS_TYPE_ASCII = 0x0;
inline constexpr uint32_t NV2080_CTRL_GPU_GET_NAME_STRING_FLAGS_TYPE_UNICODE = 0x1;

struct NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS {
    uint32_t gpuNameStringFlags;
    union {
        uint8_t ascii[NV2080_GPU_MAX_NAME_STRING_LENGTH];
        uint16_t unicode[NV2080_GPU_MAX_NAME_STRING_LENGTH];
    } gpuNameString;
};
static_assert(sizeof(NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS) == 132);
static_assert(offsetof(NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS, gpuNameString) == 4);

// Engines of the GPU, as NV2080_ENGINE_TYPE_* values.
inline constexpr uint32_t NV2080_CTRL_CMD_GPU_GET_ENGINES_V2 = 0x20800170;
inline constexpr uint32_t NV2080_GPU_MAX_ENGINES_LIST_SIZE = 0x54;
struct NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS {
    uint32_t engineCount;
    uint32_t engineList[NV2080_GPU_MAX_ENGINES_LIST_SIZE];
};
static_assert(sizeof(NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS) == 340);
static_assert(offsetof(NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS, engineList) == 4);

// Copy-engine capabilities, per engine (NV2080_ENGINE_TYPE_COPYn).
inline constexpr uint32_t NV2080_CTRL_CMD_CE_GET_CAPS_V2 = 0x20802a03;
inline constexpr uint32_t NV2080_CTRL_CE_CAPS_TBL_SIZE = 2;
struct NV2080_CTRL_CE_GET_CAPS_V2_PARAMS {
    uint32_t ceEngineType;
    uint8_t capsTbl[NV2080_CTRL_CE_CAPS_TBL_SIZE];
};
static_assert(sizeof(NV2080_CTRL_CE_GET_CAPS_V2_PARAMS) == 8);
static_assert(offsetof(NV2080_CTRL_CE_GET_CAPS_V2_PARAMS, capsTbl) == 4);
// Caps are "byte index : bit mask" in capsTbl.
// NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK: the physical engines (PCEs) behind a
// logical copy engine; more PCEs, more bandwidth.
inline constexpr uint32_t NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK = 0x20802a02;
struct NV2080_CTRL_CE_GET_CE_PCE_MASK_PARAMS {
    uint32_t ceEngineType;
    uint32_t pceMask;
};
static_assert(sizeof(NV2080_CTRL_CE_GET_CE_PCE_MASK_PARAMS) == 8);
inline constexpr uint32_t NV2080_CTRL_CE_CAPS_CE_GRCE_BYTE = 0;
inline constexpr uint8_t NV2080_CTRL_CE_CAPS_CE_GRCE_MASK = 0x01;  // the engine serves the graphics runlist

// Compute mode (NVML's compute mode). 580 names the query QUERY_COMPUTE_MODE_RULES.
inline constexpr uint32_t NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES = 0x20800131;
struct NV2080_CTRL_GPU_QUERY_COMPUTE_MODE_RULES_PARAMS {
    uint32_t rules;
};
static_assert(sizeof(NV2080_CTRL_GPU_QUERY_COMPUTE_MODE_RULES_PARAMS) == 4);
static_assert(offsetof(NV2080_CTRL_GPU_QUERY_COMPUTE_MODE_RULES_PARAMS, rules) == 0);
// nvlite aliases under the GET_ name some callers use (not NVIDIA names).
inline constexpr uint32_t NV2080_CTRL_CMD_GPU_GET_COMPUTE_MODE_RULES = NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES;
using NV2080_CTRL_GPU_GET_COMPUTE_MODE_RULES_PARAMS = NV2080_CTRL_GPU_QUERY_COMPUTE_MODE_RULES_PARAMS;

inline constexpr uint32_t NV2080_CTRL_GPU_COMPUTE_MODE_RULES_NONE = 0x0;
inline constexpr uint32_t NV2080_CTRL_GPU_COMPUTE_MODE_RULES_EXCLUSIVE_COMPUTE = 0x1;
inline constexpr uint32_t NV2080_CTRL_GPU_COMPUTE_MODE_RULES_COMPUTE_PROHIBITED = 0x2;

// Whether this is silicon or a simulator.
inline constexpr uint32_t NV2080_CTRL_CMD_GPU_GET_SIMULATION_INFO = 0x20800119;
struct NV2080_CTRL_GPU_GET_SIMULATION_INFO_PARAMS {
    uint32_t type;
};
static_assert(sizeof(NV2080_CTRL_GPU_GET_SIMULATION_INFO_PARAMS) == 4);
static_assert(offsetof(NV2080_CTRL_GPU_GET_SIMULATION_INFO_PARAMS, type) == 0);

inline constexpr uint32_t NV2080_CTRL_GPU_GET_SIMULATION_INFO_TYPE_NONE = 0x0;

// Clock boost requests (what CUDA uses to raise clocks while work runs).
inline constexpr uint32_t NV2080_CTRL_CMD_PERF_BOOST = 0x2080200A;
struct NV2080_CTRL_PERF_BOOST_PARAMS {
    uint32_t flags;
    uint32_t duration;  // seconds
};
static_assert(sizeof(NV2080_CTRL_PERF_BOOST_PARAMS) == 8);
static_assert(offsetof(NV2080_CTRL_PERF_BOOST_PARAMS, duration) == 4);

inline constexpr BitField NV2080_CTRL_PERF_BOOST_FLAGS_CMD{1, 0};
inline constexpr uint32_t NV2080_CTRL_PERF_BOOST_FLAGS_CMD_BOOST_TO_MAX = 0x2;
inline constexpr BitField NV2080_CTRL_PERF_BOOST_FLAGS_CUDA{4, 4};
inline constexpr uint32_t NV2080_CTRL_PERF_BOOST_FLAGS_CUDA_YES = 0x1;
inline constexpr BitField NV2080_CTRL_PERF_BOOST_FLAGS_CUDA_PRIORITY{6, 6};
inline constexpr uint32_t NV2080_CTRL_PERF_BOOST_FLAGS_CUDA_PRIORITY_HIGH = 0x1;
inline constexpr uint32_t NV2080_CTRL_PERF_BOOST_DURATION_MAX = 3600;
inline constexpr uint32_t NV2080_CTRL_PERF_BOOST_DURATION_INFINITE = 0xFFFFFFFF;

// Framebuffer facts by index (sizes in KB unless the name says otherwise).
inline constexpr uint32_t NV2080_CTRL_CMD_FB_GET_INFO_V2 = 0x20801303;
// NV2080_CTRL_FB_INFO::index values and the enumerations some of them return.
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_PARTITION_COUNT = 0x4;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_BAR1_SIZE = 0x5;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_RAM_SIZE = 0x7;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE = 0x8;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_HEAP_SIZE = 0x9;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_MAPPABLE_HEAP_SIZE = 0xA;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_BUS_WIDTH = 0xB;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_RAM_TYPE = 0xD;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_LARGEST_FREE_REGION_SIZE_KB = 0x12;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_PARTITION_MASK = 0x14;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE = 0x16;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_RAM_LOCATION = 0x17;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_FBP_COUNT = 0x19;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_FBP_MASK = 0x1A;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_L2CACHE_SIZE = 0x1B;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_BAR1_AVAIL_SIZE = 0x1D;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_BAR1_MAX_CONTIGUOUS_AVAIL_SIZE = 0x1F;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_USABLE_RAM_SIZE = 0x20;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_LTC_COUNT = 0x22;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_LTS_COUNT = 0x23;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_FBPA_ECC_ENABLED = 0x2D;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_NUMA_NODE_ID = 0x3B;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_INDEX_MAX = 0x3B;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_MAX_LIST_SIZE = 0x80;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_RAM_TYPE_HBM3 = 0x14;
inline constexpr uint32_t NV2080_CTRL_FB_INFO_RAM_LOCATION_GPU_DEDICATED = 0x0;

struct NV2080_CTRL_FB_GET_INFO_V2_PARAMS {
    uint32_t fbInfoListSize;
    NV2080_CTRL_FB_INFO fbInfoList[NV2080_CTRL_FB_INFO_MAX_LIST_SIZE];
};
static_assert(sizeof(NV2080_CTRL_FB_GET_INFO_V2_PARAMS) == 1028);
static_assert(offsetof(NV2080_CTRL_FB_GET_INFO_V2_PARAMS, fbInfoList) == 4);

// PCI ids of the GPU.
inline constexpr uint32_t NV2080_CTRL_CMD_BUS_GET_PCI_INFO = 0x20801801;
struct NV2080_CTRL_BUS_GET_PCI_INFO_PARAMS {
    uint32_t pciDeviceId;
    uint32_t pciSubSystemId;
    uint32_t pciRevisionId;
    uint32_t pciExtDeviceId;
};
static_assert(sizeof(NV2080_CTRL_BUS_GET_PCI_INFO_PARAMS) == 16);
static_assert(offsetof(NV2080_CTRL_BUS_GET_PCI_INFO_PARAMS, pciExtDeviceId) == 12);

// Bus facts by index (PCIe link capabilities and state).
inline constexpr uint32_t NV2080_CTRL_CMD_BUS_GET_INFO_V2 = 0x20801823;
// NV2080_CTRL_BUS_INFO::index values.
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_INDEX_PCIE_GPU_LINK_CAPS = 0x3;
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_INDEX_PCIE_ROOT_LINK_CAPS = 0x4;
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_INDEX_PCIE_GPU_LINK_CTRL_STATUS = 0x7;
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_INDEX_PCIE_ROOT_LINK_CTRL_STATUS = 0x8;
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_INDEX_BUS_NUMBER = 0xF;
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_INDEX_DEVICE_NUMBER = 0x10;
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_INDEX_DOMAIN_NUMBER = 0x2C;
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_INDEX_MAX = 0x33;
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_MAX_LIST_SIZE = 0x34;

struct NV2080_CTRL_BUS_GET_INFO_V2_PARAMS {
    uint32_t busInfoListSize;
    NV2080_CTRL_BUS_INFO busInfoList[NV2080_CTRL_BUS_INFO_MAX_LIST_SIZE];
};
static_assert(sizeof(NV2080_CTRL_BUS_GET_INFO_V2_PARAMS) == 420);
static_assert(offsetof(NV2080_CTRL_BUS_GET_INFO_V2_PARAMS, busInfoList) == 4);

// Layout of the *_LINK_CAPS and *_LINK_CTRL_STATUS values.
inline constexpr BitField NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_MAX_SPEED{3, 0};
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_MAX_SPEED_32000MBPS = 0x5;
inline constexpr BitField NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_MAX_WIDTH{9, 4};
inline constexpr BitField NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_GEN{15, 12};
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_GEN_GEN5 = 0x4;
inline constexpr BitField NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_CURR_LEVEL{19, 16};
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_CURR_LEVEL_GEN5 = 0x4;
inline constexpr BitField NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_GPU_GEN{23, 20};
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_GPU_GEN_GEN5 = 0x4;
inline constexpr BitField NV2080_CTRL_BUS_INFO_PCIE_LINK_CTRL_STATUS_LINK_SPEED{19, 16};
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_PCIE_LINK_CTRL_STATUS_LINK_SPEED_32000MBPS = 0x5;
inline constexpr BitField NV2080_CTRL_BUS_INFO_PCIE_LINK_CTRL_STATUS_LINK_WIDTH{25, 20};
inline constexpr uint32_t NV2080_CTRL_BUS_INFO_PCIE_LINK_CTRL_STATUS_LINK_WIDTH_X16 = 0x10;

// The GPU's nanosecond timer (PTIMER), as read by RM.
inline constexpr uint32_t NV2080_CTRL_CMD_TIMER_GET_TIME = 0x20800403;
struct NV2080_CTRL_TIMER_GET_TIME_PARAMS {
    alignas(8) uint64_t time_nsec;
};
static_assert(sizeof(NV2080_CTRL_TIMER_GET_TIME_PARAMS) == 8);
static_assert(offsetof(NV2080_CTRL_TIMER_GET_TIME_PARAMS, time_nsec) == 0);

// ECC error counters as NVML exposes them.
inline constexpr uint32_t NV2080_CTRL_CMD_ECC_GET_CLIENT_EXPOSED_COUNTERS = 0x20803400;
struct NV2080_CTRL_ECC_GET_CLIENT_EXPOSED_COUNTERS_PARAMS {
    alignas(8) uint64_t sramParityUncorrectedUnique;
    alignas(8) uint64_t sramSecDedUncorrectedUnique;
    alignas(8) uint64_t sramCorrectedUnique;
    alignas(8) uint64_t dramUncorrectedTotal;
    alignas(8) uint64_t dramCorrectedTotal;
    uint32_t lastClearedTimestamp;
    alignas(8) uint64_t sramBucketL2;
    alignas(8) uint64_t sramBucketSM;
    alignas(8) uint64_t sramBucketPcie;
    alignas(8) uint64_t sramBucketFirmware;
    alignas(8) uint64_t sramBucketOther;
    uint8_t sramErrorThresholdExceeded;
};
static_assert(sizeof(NV2080_CTRL_ECC_GET_CLIENT_EXPOSED_COUNTERS_PARAMS) == 96);
static_assert(offsetof(NV2080_CTRL_ECC_GET_CLIENT_EXPOSED_COUNTERS_PARAMS, dramUncorrectedTotal) == 24);
static_assert(offsetof(NV2080_CTRL_ECC_GET_CLIENT_EXPOSED_COUNTERS_PARAMS, lastClearedTimestamp) == 40);
static_assert(offsetof(NV2080_CTRL_ECC_GET_CLIENT_EXPOSED_COUNTERS_PARAMS, sramBucketL2) == 48);
static_assert(offsetof(NV2080_CTRL_ECC_GET_CLIENT_EXPOSED_COUNTERS_PARAMS, sramBucketOther) == 80);
static_assert(offsetof(NV2080_CTRL_ECC_GET_CLIENT_EXPOSED_COUNTERS_PARAMS, sramErrorThresholdExceeded) == 88);

// Clocks. The open 580 headers carry none of the NV2080_CTRL_CMD_CLK_* controls
// (ctrl2080clk.h only has Tegra domains). Two queries answer on H200 + 580:
//  - NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2 (public, non-privileged, routed to
//    GSP): clock ranges of one perf level; H200 answered levels 0-1 only
//    (level 1: GPC 690 MHz current, 1380 MHz max; MCLK 3201 MHz current).
//  - the legacy PERF query libcuda uses for cudaDevAttrClockRate and
//    MemoryClockRate (NVL_ name below: NVIDIA's name is not public); it
//    answered GPC 1980000 kHz and MCLK 3201000 kHz, what nvidia-smi shows as
//    max clocks.
// Clock domain bits (RM's NV2080_CTRL_CLK_DOMAIN_* values; not in the open
// headers: taken from NVIDIA's nvgpu driver, include/nvgpu/pmu/clk/clk.h
// CTRL_CLK_DOMAIN_*, and matching what both queries returned on H200).
inline constexpr uint32_t NV2080_CTRL_CLK_DOMAIN_GPCCLK = 0x1;  // SM / graphics clock
inline constexpr uint32_t NV2080_CTRL_CLK_DOMAIN_MCLK = 0x10;  // memory clock

// Clock ranges of one perf level (frequencies in kHz).
inline constexpr uint32_t NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2 = 0x2080200B;
inline constexpr uint32_t NV2080_CTRL_PERF_CLK_MAX_DOMAINS = 32;
struct NV2080_CTRL_PERF_GET_CLK_INFO {
    uint32_t flags;
    uint32_t domain;  // NV2080_CTRL_CLK_DOMAIN_*
    uint32_t currentFreq;
    uint32_t defaultFreq;
    uint32_t minFreq;
    uint32_t maxFreq;
};
static_assert(sizeof(NV2080_CTRL_PERF_GET_CLK_INFO) == 24);
static_assert(offsetof(NV2080_CTRL_PERF_GET_CLK_INFO, maxFreq) == 20);

struct NV2080_CTRL_PERF_GET_LEVEL_INFO_V2_PARAMS {
    uint32_t level;
    uint32_t flags;
    NV2080_CTRL_PERF_GET_CLK_INFO perfGetClkInfoList[NV2080_CTRL_PERF_CLK_MAX_DOMAINS];
    uint32_t perfGetClkInfoListSize;
};
static_assert(sizeof(NV2080_CTRL_PERF_GET_LEVEL_INFO_V2_PARAMS) == 780);
static_assert(offsetof(NV2080_CTRL_PERF_GET_LEVEL_INFO_V2_PARAMS, perfGetClkInfoList) == 8);
static_assert(offsetof(NV2080_CTRL_PERF_GET_LEVEL_INFO_V2_PARAMS, perfGetClkInfoListSize) == 776);

// The clock query libcuda makes (observed, not from NVIDIA's headers: PERF
// interface, legacy non-privileged, message 0x26). Fill numDomains and
// domains[i].clkDomain, flags = NVL_PERF_GET_CLOCKS_FLAGS_LIBCUDA; RM returns
// domains[i].freqKHz. Seen on H200, driver 580.159.04: GPC 1980000, MCLK 3201000.
inline constexpr uint32_t NVL_CTRL_CMD_PERF_GET_CLOCKS = 0x2080A026;
inline constexpr uint32_t NVL_PERF_GET_CLOCKS_FLAGS_LIBCUDA = 0x400;
inline constexpr uint32_t NVL_PERF_GET_CLOCKS_MAX_DOMAINS = 32;
struct NVL_PERF_CLOCK_ENTRY {
    uint32_t clkDomain;  // NV2080_CTRL_CLK_DOMAIN_*
    uint32_t unknown0;
    uint32_t freqKHz;
    uint32_t unknown1;
};
struct NVL_PERF_GET_CLOCKS_PARAMS {
    uint32_t flags;
    uint32_t unknown[3];  // returned 3, 4, 1 on H200
    uint32_t numDomains;
    NVL_PERF_CLOCK_ENTRY domains[NVL_PERF_GET_CLOCKS_MAX_DOMAINS];
};
static_assert(sizeof(NVL_PERF_GET_CLOCKS_PARAMS) == 532);  // libcuda's paramsSize
static_assert(offsetof(NVL_PERF_GET_CLOCKS_PARAMS, numDomains) == 16);
static_assert(offsetof(NVL_PERF_GET_CLOCKS_PARAMS, domains) == 20);

// Mask of the clock domains the GPU has (observed: CLK interface, legacy
// non-privileged, message 0x01; libcuda calls it; H200 returned 0x003C0017).
inline constexpr uint32_t NVL_CTRL_CMD_CLK_GET_DOMAINS = 0x20809001;
struct NVL_CLK_GET_DOMAINS_PARAMS {
    uint32_t clkDomains;  // NV2080_CTRL_CLK_DOMAIN_* bits
    uint32_t unknown;
};
static_assert(sizeof(NVL_CLK_GET_DOMAINS_PARAMS) == 8);

// TSG scheduling and timeslice (on KEPLER_CHANNEL_GROUP_A).
inline constexpr uint32_t NVA06C_CTRL_CMD_GPFIFO_SCHEDULE = 0xA06C0101;
inline constexpr uint32_t NVA06C_CTRL_CMD_SET_TIMESLICE = 0xA06C0103;
struct NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS {
    uint8_t bEnable;
    uint8_t bSkipSubmit;
    uint8_t bSkipEnable;
};
static_assert(sizeof(NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS) == 3);
static_assert(offsetof(NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS, bSkipEnable) == 2);
using NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS = NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS;

struct NVA06C_CTRL_TIMESLICE_PARAMS {
    alignas(8) uint64_t timesliceUs;
};
static_assert(sizeof(NVA06C_CTRL_TIMESLICE_PARAMS) == 8);
static_assert(offsetof(NVA06C_CTRL_TIMESLICE_PARAMS, timesliceUs) == 0);
using NVA06C_CTRL_SET_TIMESLICE_PARAMS = NVA06C_CTRL_TIMESLICE_PARAMS;

// Channel scheduling (on a *_CHANNEL_GPFIFO_A channel outside a TSG).
inline constexpr uint32_t NVA06F_CTRL_CMD_GPFIFO_SCHEDULE = 0xA06F0103;

// The token to write to the usermode doorbell (NVC361_NOTIFY_CHANNEL_PENDING).
inline constexpr uint32_t NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN = 0xC36F0108;
struct NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS {
    uint32_t workSubmitToken;
};
static_assert(sizeof(NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS) == 4);
static_assert(offsetof(NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS, workSubmitToken) == 0);

}  // namespace nvl::nv
