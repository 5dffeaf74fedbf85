// RM object classes nvlite allocates, their allocation parameter blocks, engine
// types and the channel error-notifier format. Facts from open-gpu-kernel-modules
// 580.142, src/common/sdk/nvidia/inc: class/cl*.h, nvos.h, alloc/alloc_channel.h,
// nvgputypes.h, nverror.h, class/cl2080_notification.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "defs/bits.h"

namespace nvl::nv {

// Object classes (the hClass of NV_ESC_RM_ALLOC).
inline constexpr uint32_t NV01_NULL_OBJECT = 0x0;
inline constexpr uint32_t NV01_ROOT = 0x0;  // a client; same number as NV01_NULL_OBJECT
inline constexpr uint32_t NV01_ROOT_NON_PRIV = 0x1;
inline constexpr uint32_t NV01_ROOT_CLIENT = 0x41;  // the client class user space allocates
inline constexpr uint32_t NV01_DEVICE_0 = 0x80;
inline constexpr uint32_t NV20_SUBDEVICE_0 = 0x2080;
inline constexpr uint32_t NV01_EVENT = 0x5;
inline constexpr uint32_t NV01_EVENT_OS_EVENT = 0x79;  // event signalled through an fd
inline constexpr uint32_t NV01_MEMORY_SYSTEM = 0x3E;  // cl003e
inline constexpr uint32_t NV01_MEMORY_LOCAL_USER = 0x40;  // cl0040: video memory
inline constexpr uint32_t NV01_MEMORY_USER = 0x40;  // old name of NV01_MEMORY_LOCAL_USER
inline constexpr uint32_t NV1_MEMORY_USER = 0x40;  // same; there is no NV1_MEMORY_SYSTEM
inline constexpr uint32_t NV01_MEMORY_VIRTUAL = 0x70;  // cl0070: a GPU virtual address range
inline constexpr uint32_t NV01_MEMORY_SYSTEM_OS_DESCRIPTOR = 0x71;  // cl0071: memory the caller has
inline constexpr uint32_t NV50_MEMORY_VIRTUAL = 0x50A0;
inline constexpr uint32_t FERMI_VASPACE_A = 0x90F1;
inline constexpr uint32_t FERMI_CONTEXT_SHARE_A = 0x9067;
inline constexpr uint32_t KEPLER_CHANNEL_GROUP_A = 0xA06C;
inline constexpr uint32_t GT200_DEBUGGER = 0x83DE;
inline constexpr uint32_t VOLTA_USERMODE_A = 0xC361;  // clc361: doorbell page layout of all
inline constexpr uint32_t TURING_USERMODE_A = 0xC461;
inline constexpr uint32_t AMPERE_USERMODE_A = 0xC561;
inline constexpr uint32_t HOPPER_USERMODE_A = 0xC661;
inline constexpr uint32_t AMPERE_CHANNEL_GPFIFO_A = 0xC56F;
inline constexpr uint32_t HOPPER_CHANNEL_GPFIFO_A = 0xC86F;
inline constexpr uint32_t AMPERE_COMPUTE_A = 0xC6C0;
inline constexpr uint32_t AMPERE_COMPUTE_B = 0xC7C0;
inline constexpr uint32_t ADA_COMPUTE_A = 0xC9C0;
inline constexpr uint32_t HOPPER_COMPUTE_A = 0xCBC0;
inline constexpr uint32_t AMPERE_DMA_COPY_A = 0xC6B5;
inline constexpr uint32_t AMPERE_DMA_COPY_B = 0xC7B5;
inline constexpr uint32_t HOPPER_DMA_COPY_A = 0xC8B5;

// Client (NV01_ROOT_CLIENT) allocation parameters; the escape turns NV01_ROOT and
// NV01_ROOT_NON_PRIV allocations from user space into NV01_ROOT_CLIENT (escape.c).
inline constexpr uint32_t NV_PROC_NAME_MAX_LENGTH = 100;
struct NV0000_ALLOC_PARAMETERS {
    uint32_t hClient;
    uint32_t processID;
    char processName[NV_PROC_NAME_MAX_LENGTH];
    alignas(8) uint64_t pOsPidInfo;
};
static_assert(sizeof(NV0000_ALLOC_PARAMETERS) == 120);
static_assert(offsetof(NV0000_ALLOC_PARAMETERS, processName) == 8);
static_assert(offsetof(NV0000_ALLOC_PARAMETERS, pOsPidInfo) == 112);

// NV01_DEVICE_0 allocation.
struct NV0080_ALLOC_PARAMETERS {
    uint32_t deviceId;
    uint32_t hClientShare;
    uint32_t hTargetClient;
    uint32_t hTargetDevice;
    uint32_t flags;
    alignas(8) uint64_t vaSpaceSize;
    alignas(8) uint64_t vaStartInternal;
    alignas(8) uint64_t vaLimitInternal;
    uint32_t vaMode;
};
static_assert(sizeof(NV0080_ALLOC_PARAMETERS) == 56);
static_assert(offsetof(NV0080_ALLOC_PARAMETERS, vaSpaceSize) == 24);
static_assert(offsetof(NV0080_ALLOC_PARAMETERS, vaStartInternal) == 32);
static_assert(offsetof(NV0080_ALLOC_PARAMETERS, vaLimitInternal) == 40);
static_assert(offsetof(NV0080_ALLOC_PARAMETERS, vaMode) == 48);

// NV0080_ALLOC_PARAMETERS::flags and ::vaMode.
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_NONE = 0x0;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_MAP_PTE_GLOBALLY = 0x1;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_MINIMIZE_PTETABLE_SIZE = 0x2;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_RETRY_PTE_ALLOC_IN_SYS = 0x4;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_VASPACE_SIZE = 0x8;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_MAP_PTE = 0x10;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_VASPACE_IS_TARGET = 0x20;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_VASPACE_SHARED_MANAGEMENT = 0x100;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_VASPACE_BIG_PAGE_SIZE_64k = 0x200;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_VASPACE_BIG_PAGE_SIZE_128k = 0x400;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_RESTRICT_RESERVED_VALIMITS = 0x800;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_VASPACE_IS_MIRRORED = 0x40;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_VASPACE_PTABLE_PMA_MANAGED = 0x1000;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_HOST_VGPU_DEVICE = 0x2000;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_PLUGIN_CONTEXT = 0x4000;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_FLAGS_VASPACE_REQUIRE_FIXED_OFFSET = 0x8000;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_VAMODE_OPTIONAL_MULTIPLE_VASPACES = 0x0;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_VAMODE_SINGLE_VASPACE = 0x1;
inline constexpr uint32_t NV_DEVICE_ALLOCATION_VAMODE_MULTIPLE_VASPACES = 0x2;

// NV20_SUBDEVICE_0 allocation.
struct NV2080_ALLOC_PARAMETERS {
    uint32_t subDeviceId;
};
static_assert(sizeof(NV2080_ALLOC_PARAMETERS) == 4);
static_assert(offsetof(NV2080_ALLOC_PARAMETERS, subDeviceId) == 0);

// NV01_MEMORY_LOCAL_USER / NV01_MEMORY_SYSTEM allocation (NVOS32_* values in nv_ioctl.h).
struct NV_MEMORY_ALLOCATION_PARAMS {
    uint32_t owner;
    uint32_t type;
    uint32_t flags;
    uint32_t width;
    uint32_t height;
    int32_t pitch;
    uint32_t attr;
    uint32_t attr2;
    uint32_t format;
    uint32_t comprCovg;
    uint32_t zcullCovg;
    alignas(8) uint64_t rangeLo;
    alignas(8) uint64_t rangeHi;
    alignas(8) uint64_t size;
    alignas(8) uint64_t alignment;
    alignas(8) uint64_t offset;
    alignas(8) uint64_t limit;
    alignas(8) uint64_t address;
    uint32_t ctagOffset;
    uint32_t hVASpace;
    uint32_t internalflags;
    uint32_t tag;
    int32_t numaNode;
};
static_assert(sizeof(NV_MEMORY_ALLOCATION_PARAMS) == 128);
static_assert(offsetof(NV_MEMORY_ALLOCATION_PARAMS, rangeLo) == 48);
static_assert(offsetof(NV_MEMORY_ALLOCATION_PARAMS, rangeHi) == 56);
static_assert(offsetof(NV_MEMORY_ALLOCATION_PARAMS, size) == 64);
static_assert(offsetof(NV_MEMORY_ALLOCATION_PARAMS, alignment) == 72);
static_assert(offsetof(NV_MEMORY_ALLOCATION_PARAMS, offset) == 80);
static_assert(offsetof(NV_MEMORY_ALLOCATION_PARAMS, limit) == 88);
static_assert(offsetof(NV_MEMORY_ALLOCATION_PARAMS, address) == 96);
static_assert(offsetof(NV_MEMORY_ALLOCATION_PARAMS, numaNode) == 120);

// NV_MEMORY_ALLOCATION_PARAMS::format takes an MMU PTE kind; generic
// (pitch, uncompressed) memory is kind 6 on Ampere and Hopper (dev_mmu.h).
inline constexpr uint32_t NV_MMU_PTE_KIND_GENERIC_MEMORY = 0x6;

// NV01_MEMORY_VIRTUAL allocation: reserve [offset, limit] of a VA space.
struct NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS {
    alignas(8) uint64_t offset;
    alignas(8) uint64_t limit;
    uint32_t hVASpace;
};
static_assert(sizeof(NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS) == 24);
static_assert(offsetof(NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS, limit) == 8);
static_assert(offsetof(NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS, hVASpace) == 16);

inline constexpr uint32_t NV_MEMORY_VIRTUAL_SYSMEM_DYNAMIC_HVASPACE = 0xFFFFFFFF;

// FERMI_VASPACE_A allocation.
struct NV_VASPACE_ALLOCATION_PARAMETERS {
    uint32_t index;
    uint32_t flags;
    alignas(8) uint64_t vaSize;
    alignas(8) uint64_t vaStartInternal;
    alignas(8) uint64_t vaLimitInternal;
    uint32_t bigPageSize;
    alignas(8) uint64_t vaBase;
    uint32_t pasid;
};
static_assert(sizeof(NV_VASPACE_ALLOCATION_PARAMETERS) == 56);
static_assert(offsetof(NV_VASPACE_ALLOCATION_PARAMETERS, vaSize) == 8);
static_assert(offsetof(NV_VASPACE_ALLOCATION_PARAMETERS, vaStartInternal) == 16);
static_assert(offsetof(NV_VASPACE_ALLOCATION_PARAMETERS, vaLimitInternal) == 24);
static_assert(offsetof(NV_VASPACE_ALLOCATION_PARAMETERS, vaBase) == 40);
static_assert(offsetof(NV_VASPACE_ALLOCATION_PARAMETERS, pasid) == 48);

// NV_VASPACE_ALLOCATION_PARAMETERS::flags, ::index and ::bigPageSize.
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_NONE = 0x0;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_MINIMIZE_PTETABLE_SIZE = 1;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_RETRY_PTE_ALLOC_IN_SYS = 2;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_SHARED_MANAGEMENT = 4;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED = 8;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_ENABLE_NVLINK_ATS = 16;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_IS_MIRRORED = 32;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING = 64;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_VA_INTERNAL_LIMIT = 128;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_ALLOW_ZERO_ADDRESS = 256;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_IS_FLA = 512;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_SKIP_SCRUB_MEMPOOL = 1024;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_OPTIMIZE_PTETABLE_MEMPOOL_USAGE = 2048;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_REQUIRE_FIXED_OFFSET = 4096;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_PTETABLE_HEAP_MANAGED = 8192;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_ENABLE_NVLINK_ATS_TEST = 16384;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_INDEX_GPU_NEW = 0x0;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_INDEX_GPU_HOST = 0x1;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_INDEX_GPU_GLOBAL = 0x2;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_INDEX_GPU_DEVICE = 0x3;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_INDEX_GPU_FLA = 0x4;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_INDEX_GPU_MAX = 0x5;
inline constexpr uint32_t NV_VASPACE_BIG_PAGE_SIZE_64K = 65536;
inline constexpr uint32_t NV_VASPACE_BIG_PAGE_SIZE_128K = 131072;

// KEPLER_CHANNEL_GROUP_A (TSG) allocation.
struct NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS {
    uint32_t hObjectError;
    uint32_t hObjectEccError;
    uint32_t hVASpace;
    uint32_t engineType;
    uint8_t bIsCallingContextVgpuPlugin;
};
static_assert(sizeof(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS) == 20);
static_assert(offsetof(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, bIsCallingContextVgpuPlugin) == 16);

// FERMI_CONTEXT_SHARE_A (subcontext / VEID) allocation.
struct NV_CTXSHARE_ALLOCATION_PARAMETERS {
    uint32_t hVASpace;
    uint32_t flags;
    uint32_t subctxId;
};
static_assert(sizeof(NV_CTXSHARE_ALLOCATION_PARAMETERS) == 12);
static_assert(offsetof(NV_CTXSHARE_ALLOCATION_PARAMETERS, subctxId) == 8);

// NV_CTXSHARE_ALLOCATION_PARAMETERS::flags and ::subctxId.
inline constexpr BitField NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT{1, 0};
inline constexpr uint32_t NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_SYNC = 0x0;
inline constexpr uint32_t NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC = 0x1;
inline constexpr uint32_t NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_SPECIFIED = 0x2;
inline constexpr uint32_t NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC_PREFER_LOWER = 0x3;
inline constexpr BitField NV_CTXSHARE_ALLOCATION_SUBCTXID_SUBCTXID{30, 0};
inline constexpr BitField NV_CTXSHARE_ALLOCATION_SUBCTXID_ASYNC_PREFER_LOWER_ALLOCATION{31, 31};
inline constexpr uint32_t NV_CTXSHARE_ALLOCATION_SUBCTXID_ASYNC_PREFER_LOWER_ALLOCATION_SUCCESS = 0x1;
inline constexpr uint32_t NV_CTXSHARE_ALLOCATION_SUBCTXID_ASYNC_PREFER_LOWER_ALLOCATION_FAIL = 0x0;

// HOPPER_USERMODE_A allocation (optional): which mapping of the doorbell page.
struct NV_HOPPER_USERMODE_A_PARAMS {
    uint8_t bBar1Mapping;
    uint8_t bPriv;
};
static_assert(sizeof(NV_HOPPER_USERMODE_A_PARAMS) == 2);
static_assert(offsetof(NV_HOPPER_USERMODE_A_PARAMS, bPriv) == 1);

// Channel (GPFIFO) allocation: *_CHANNEL_GPFIFO_A objects under a TSG.
inline constexpr uint32_t NV_MAX_SUBDEVICES = 8;

inline constexpr uint32_t CC_CHAN_ALLOC_IV_SIZE_DWORD = 3;
inline constexpr uint32_t CC_CHAN_ALLOC_NONCE_SIZE_DWORD = 8;

struct NV_MEMORY_DESC_PARAMS {
    alignas(8) uint64_t base;
    alignas(8) uint64_t size;
    uint32_t addressSpace;
    uint32_t cacheAttrib;
};
static_assert(sizeof(NV_MEMORY_DESC_PARAMS) == 24);
static_assert(offsetof(NV_MEMORY_DESC_PARAMS, size) == 8);
static_assert(offsetof(NV_MEMORY_DESC_PARAMS, cacheAttrib) == 20);

struct NV_CHANNEL_ALLOC_PARAMS {
    uint32_t hObjectError;
    uint32_t hObjectBuffer;
    alignas(8) uint64_t gpFifoOffset;
    uint32_t gpFifoEntries;
    uint32_t flags;
    uint32_t hContextShare;
    uint32_t hVASpace;
    uint32_t hUserdMemory[NV_MAX_SUBDEVICES];
    alignas(8) uint64_t userdOffset[NV_MAX_SUBDEVICES];
    uint32_t engineType;
    uint32_t cid;
    uint32_t subDeviceId;
    uint32_t hObjectEccError;
    alignas(8) NV_MEMORY_DESC_PARAMS instanceMem;
    alignas(8) NV_MEMORY_DESC_PARAMS userdMem;
    alignas(8) NV_MEMORY_DESC_PARAMS ramfcMem;
    alignas(8) NV_MEMORY_DESC_PARAMS mthdbufMem;
    uint32_t hPhysChannelGroup;
    uint32_t internalFlags;
    alignas(8) NV_MEMORY_DESC_PARAMS errorNotifierMem;
    alignas(8) NV_MEMORY_DESC_PARAMS eccErrorNotifierMem;
    uint32_t ProcessID;
    uint32_t SubProcessID;
    uint32_t encryptIv[CC_CHAN_ALLOC_IV_SIZE_DWORD];
    uint32_t decryptIv[CC_CHAN_ALLOC_IV_SIZE_DWORD];
    uint32_t hmacNonce[CC_CHAN_ALLOC_NONCE_SIZE_DWORD];
    uint32_t tpcConfigID;
};
static_assert(sizeof(NV_CHANNEL_ALLOC_PARAMS) == 368);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, gpFifoOffset) == 8);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, hUserdMemory) == 32);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, userdOffset) == 64);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, instanceMem) == 144);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, userdMem) == 168);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, ramfcMem) == 192);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, mthdbufMem) == 216);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, errorNotifierMem) == 248);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, eccErrorNotifierMem) == 272);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, encryptIv) == 304);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, hmacNonce) == 328);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, tpcConfigID) == 360);
using NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS = NV_CHANNEL_ALLOC_PARAMS;

// NVOS04_FLAGS_ fields of NV_CHANNEL_ALLOC_PARAMS::flags (alloc_channel.h).
inline constexpr BitField NVOS04_FLAGS_CHANNEL_TYPE{1, 0};
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_TYPE_PHYSICAL = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_TYPE_VIRTUAL = 0x1;
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_TYPE_PHYSICAL_FOR_VIRTUAL = 0x2;
inline constexpr BitField NVOS04_FLAGS_VPR{2, 2};
inline constexpr uint32_t NVOS04_FLAGS_VPR_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_VPR_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_CC_SECURE{2, 2};
inline constexpr uint32_t NVOS04_FLAGS_CC_SECURE_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_CC_SECURE_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_CHANNEL_SKIP_MAP_REFCOUNTING{3, 3};
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_SKIP_MAP_REFCOUNTING_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_SKIP_MAP_REFCOUNTING_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_GROUP_CHANNEL_RUNQUEUE{4, 4};
inline constexpr uint32_t NVOS04_FLAGS_GROUP_CHANNEL_RUNQUEUE_DEFAULT = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_GROUP_CHANNEL_RUNQUEUE_ONE = 0x1;
inline constexpr BitField NVOS04_FLAGS_PRIVILEGED_CHANNEL{5, 5};
inline constexpr uint32_t NVOS04_FLAGS_PRIVILEGED_CHANNEL_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_PRIVILEGED_CHANNEL_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_DELAY_CHANNEL_SCHEDULING{6, 6};
inline constexpr uint32_t NVOS04_FLAGS_DELAY_CHANNEL_SCHEDULING_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_DELAY_CHANNEL_SCHEDULING_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_CHANNEL_DENY_PHYSICAL_MODE_CE{7, 7};
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_DENY_PHYSICAL_MODE_CE_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_DENY_PHYSICAL_MODE_CE_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_CHANNEL_USERD_INDEX_VALUE{10, 8};
inline constexpr BitField NVOS04_FLAGS_CHANNEL_USERD_INDEX_FIXED{11, 11};
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_USERD_INDEX_FIXED_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_USERD_INDEX_FIXED_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_CHANNEL_USERD_INDEX_PAGE_VALUE{20, 12};
inline constexpr BitField NVOS04_FLAGS_CHANNEL_USERD_INDEX_PAGE_FIXED{21, 21};
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_USERD_INDEX_PAGE_FIXED_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_USERD_INDEX_PAGE_FIXED_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_CHANNEL_DENY_AUTH_LEVEL_PRIV{22, 22};
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_DENY_AUTH_LEVEL_PRIV_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_DENY_AUTH_LEVEL_PRIV_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_CHANNEL_SKIP_SCRUBBER{23, 23};
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_SKIP_SCRUBBER_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_SKIP_SCRUBBER_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_CHANNEL_CLIENT_MAP_FIFO{24, 24};
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_CLIENT_MAP_FIFO_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_CLIENT_MAP_FIFO_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_SET_EVICT_LAST_CE_PREFETCH_CHANNEL{25, 25};
inline constexpr uint32_t NVOS04_FLAGS_SET_EVICT_LAST_CE_PREFETCH_CHANNEL_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_SET_EVICT_LAST_CE_PREFETCH_CHANNEL_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_CHANNEL_VGPU_PLUGIN_CONTEXT{26, 26};
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_VGPU_PLUGIN_CONTEXT_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_VGPU_PLUGIN_CONTEXT_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_CHANNEL_PBDMA_ACQUIRE_TIMEOUT{27, 27};
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_PBDMA_ACQUIRE_TIMEOUT_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_CHANNEL_PBDMA_ACQUIRE_TIMEOUT_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_GROUP_CHANNEL_THREAD{29, 28};
inline constexpr uint32_t NVOS04_FLAGS_GROUP_CHANNEL_THREAD_DEFAULT = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_GROUP_CHANNEL_THREAD_ONE = 0x1;
inline constexpr uint32_t NVOS04_FLAGS_GROUP_CHANNEL_THREAD_TWO = 0x2;
inline constexpr BitField NVOS04_FLAGS_MAP_CHANNEL{30, 30};
inline constexpr uint32_t NVOS04_FLAGS_MAP_CHANNEL_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_MAP_CHANNEL_TRUE = 0x1;
inline constexpr BitField NVOS04_FLAGS_SKIP_CTXBUFFER_ALLOC{31, 31};
inline constexpr uint32_t NVOS04_FLAGS_SKIP_CTXBUFFER_ALLOC_FALSE = 0x0;
inline constexpr uint32_t NVOS04_FLAGS_SKIP_CTXBUFFER_ALLOC_TRUE = 0x1;

// NV01_EVENT allocation: binds an event (e.g. an OS event fd) to a notifier index.
struct NV0005_ALLOC_PARAMETERS {
    uint32_t hParentClient;
    uint32_t hSrcResource;
    uint32_t hClass;
    uint32_t notifyIndex;
    alignas(8) uint64_t data;
};
static_assert(sizeof(NV0005_ALLOC_PARAMETERS) == 24);
static_assert(offsetof(NV0005_ALLOC_PARAMETERS, data) == 16);

// NV0005_ALLOC_PARAMETERS::notifyIndex layout and the flag bits it may carry (nvos.h).
inline constexpr BitField NV0005_NOTIFY_INDEX_INDEX{15, 0};
inline constexpr BitField NV0005_NOTIFY_INDEX_SUBDEVICE{23, 16};
inline constexpr BitField NV0005_NOTIFY_INDEX_FLAGS{31, 24};

inline constexpr uint32_t NV01_EVENT_BROADCAST = 0x80000000;
inline constexpr uint32_t NV01_EVENT_SUBDEVICE_SPECIFIC = 0x20000000;
inline constexpr uint32_t NV01_EVENT_WITHOUT_EVENT_DATA = 0x10000000;
inline constexpr uint32_t NV01_EVENT_NONSTALL_INTR = 0x8000000;
inline constexpr uint32_t NV01_EVENT_CLIENT_RM = 0x4000000;

// GT200_DEBUGGER allocation.
struct NV83DE_ALLOC_PARAMETERS {
    uint32_t hDebuggerClient_Obsolete;
    uint32_t hAppClient;
    uint32_t hClass3dObject;
};
static_assert(sizeof(NV83DE_ALLOC_PARAMETERS) == 12);
static_assert(offsetof(NV83DE_ALLOC_PARAMETERS, hClass3dObject) == 8);

// NV2080_ENGINE_TYPE_ values (engineType of TSGs and channels; cl2080_notification.h).
inline constexpr uint32_t NV2080_ENGINE_TYPE_NULL = 0x0;
inline constexpr uint32_t NV2080_ENGINE_TYPE_GRAPHICS = 0x1;
inline constexpr uint32_t NV2080_ENGINE_TYPE_GR0 = 0x1;
inline constexpr uint32_t NV2080_ENGINE_TYPE_GR1 = 0x2;
inline constexpr uint32_t NV2080_ENGINE_TYPE_GR2 = 0x3;
inline constexpr uint32_t NV2080_ENGINE_TYPE_GR3 = 0x4;
inline constexpr uint32_t NV2080_ENGINE_TYPE_GR4 = 0x5;
inline constexpr uint32_t NV2080_ENGINE_TYPE_GR5 = 0x6;
inline constexpr uint32_t NV2080_ENGINE_TYPE_GR6 = 0x7;
inline constexpr uint32_t NV2080_ENGINE_TYPE_GR7 = 0x8;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY0 = 0x9;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY1 = 0xA;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY2 = 0xB;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY3 = 0xC;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY4 = 0xD;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY5 = 0xE;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY6 = 0xF;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY7 = 0x10;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY8 = 0x11;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY9 = 0x12;
inline constexpr uint32_t NV2080_ENGINE_TYPE_BSP = 0x13;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVDEC0 = 0x13;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVDEC1 = 0x14;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVDEC2 = 0x15;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVDEC3 = 0x16;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVDEC4 = 0x17;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVDEC5 = 0x18;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVDEC6 = 0x19;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVDEC7 = 0x1A;
inline constexpr uint32_t NV2080_ENGINE_TYPE_MSENC = 0x1B;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVENC0 = 0x1B;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVENC1 = 0x1C;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVENC2 = 0x1D;
inline constexpr uint32_t NV2080_ENGINE_TYPE_VP = 0x1E;
inline constexpr uint32_t NV2080_ENGINE_TYPE_ME = 0x1F;
inline constexpr uint32_t NV2080_ENGINE_TYPE_PPP = 0x20;
inline constexpr uint32_t NV2080_ENGINE_TYPE_MPEG = 0x21;
inline constexpr uint32_t NV2080_ENGINE_TYPE_SW = 0x22;
inline constexpr uint32_t NV2080_ENGINE_TYPE_CIPHER = 0x23;
inline constexpr uint32_t NV2080_ENGINE_TYPE_TSEC = 0x23;
inline constexpr uint32_t NV2080_ENGINE_TYPE_VIC = 0x24;
inline constexpr uint32_t NV2080_ENGINE_TYPE_MP = 0x25;
inline constexpr uint32_t NV2080_ENGINE_TYPE_SEC2 = 0x26;
inline constexpr uint32_t NV2080_ENGINE_TYPE_HOST = 0x27;
inline constexpr uint32_t NV2080_ENGINE_TYPE_DPU = 0x28;
inline constexpr uint32_t NV2080_ENGINE_TYPE_PMU = 0x29;
inline constexpr uint32_t NV2080_ENGINE_TYPE_FBFLCN = 0x2A;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVJPG = 0x2B;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVJPEG0 = 0x2B;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVJPEG1 = 0x2C;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVJPEG2 = 0x2D;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVJPEG3 = 0x2E;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVJPEG4 = 0x2F;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVJPEG5 = 0x30;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVJPEG6 = 0x31;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVJPEG7 = 0x32;
inline constexpr uint32_t NV2080_ENGINE_TYPE_OFA = 0x33;
inline constexpr uint32_t NV2080_ENGINE_TYPE_OFA0 = 0x33;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY10 = 0x34;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY11 = 0x35;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY12 = 0x36;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY13 = 0x37;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY14 = 0x38;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY15 = 0x39;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY16 = 0x3A;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY17 = 0x3B;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY18 = 0x3C;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY19 = 0x3D;
inline constexpr uint32_t NV2080_ENGINE_TYPE_OFA1 = 0x3E;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVENC3 = 0x3F;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY0 = 0x40;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY1 = 0x41;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY2 = 0x42;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY3 = 0x43;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY4 = 0x44;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY5 = 0x45;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY6 = 0x46;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY7 = 0x47;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY8 = 0x48;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY9 = 0x49;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY10 = 0x4A;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY11 = 0x4B;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY12 = 0x4C;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY13 = 0x4D;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY14 = 0x4E;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY15 = 0x4F;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY16 = 0x50;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY17 = 0x51;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY18 = 0x52;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COMP_DECOMP_COPY19 = 0x53;
inline constexpr uint32_t NV2080_ENGINE_TYPE_LAST = 0x54;
inline constexpr uint32_t NV2080_ENGINE_TYPE_ALLENGINES = 0xFFFFFFFF;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY_SIZE = 64;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVENC_SIZE = 4;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVJPEG_SIZE = 8;
inline constexpr uint32_t NV2080_ENGINE_TYPE_NVDEC_SIZE = 8;
inline constexpr uint32_t NV2080_ENGINE_TYPE_GR_SIZE = 8;
inline constexpr uint32_t NV2080_ENGINE_TYPE_OFA_SIZE = 2;

// Index <-> engine type helpers for copy engines and GR engines.
constexpr uint32_t NV2080_ENGINE_TYPE_COPY(uint32_t i) {
    return i < 10 ? NV2080_ENGINE_TYPE_COPY0 + i : NV2080_ENGINE_TYPE_COPY10 + i - 10;
}
constexpr bool NV2080_ENGINE_TYPE_IS_COPY(uint32_t t) {
    return (t >= NV2080_ENGINE_TYPE_COPY0 && t <= NV2080_ENGINE_TYPE_COPY9) ||
           (t >= NV2080_ENGINE_TYPE_COPY10 && t <= NV2080_ENGINE_TYPE_COPY19);
}
constexpr uint32_t NV2080_ENGINE_TYPE_COPY_IDX(uint32_t t) {
    return t <= NV2080_ENGINE_TYPE_COPY9 ? t - NV2080_ENGINE_TYPE_COPY0 : t - NV2080_ENGINE_TYPE_COPY10 + 10;
}
constexpr uint32_t NV2080_ENGINE_TYPE_GR(uint32_t i) { return NV2080_ENGINE_TYPE_GR0 + i; }
constexpr bool NV2080_ENGINE_TYPE_IS_GR(uint32_t t) {
    return t >= NV2080_ENGINE_TYPE_GR0 && t < NV2080_ENGINE_TYPE_GR(NV2080_ENGINE_TYPE_GR_SIZE);
}
constexpr uint32_t NV2080_ENGINE_TYPE_GR_IDX(uint32_t t) { return t - NV2080_ENGINE_TYPE_GR0; }
constexpr bool NV2080_ENGINE_TYPE_IS_VALID(uint32_t t) {
    return t > NV2080_ENGINE_TYPE_NULL && t < NV2080_ENGINE_TYPE_LAST;
}
static_assert(NV2080_ENGINE_TYPE_COPY(12) == 0x36 && NV2080_ENGINE_TYPE_COPY_IDX(0x36) == 12);

// A notifier record (nvgputypes.h). A channel's error notifier is an array of
// these indexed by NV_CHANNELGPFIFO_NOTIFICATION_TYPE_*: RM writes the time,
// info32 (the ROBUST_CHANNEL_* / Xid code below), info16, then status (bit 15
// set = in progress, 14:0 = value).
struct NvNotification {
    struct {
        uint32_t nanoseconds[2];
    } timeStamp;
    uint32_t info32;
    uint16_t info16;
    uint16_t status;
};
static_assert(sizeof(NvNotification) == 16);
static_assert(offsetof(NvNotification, status) == 14);

// Channel notifier indexes and the NvNotification::status layout (nvos.h).
inline constexpr uint32_t NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR = 0x0;
inline constexpr uint32_t NV_CHANNELGPFIFO_NOTIFICATION_TYPE_WORK_SUBMIT_TOKEN = 0x1;
inline constexpr uint32_t NV_CHANNELGPFIFO_NOTIFICATION_TYPE_KEY_ROTATION_STATUS = 0x2;
inline constexpr uint32_t NV_CHANNELGPFIFO_NOTIFICATION_TYPE__SIZE_1 = 3;
inline constexpr BitField NV_CHANNELGPFIFO_NOTIFICATION_STATUS_VALUE{14, 0};
inline constexpr BitField NV_CHANNELGPFIFO_NOTIFICATION_STATUS_IN_PROGRESS{15, 15};
inline constexpr uint32_t NV_CHANNELGPFIFO_NOTIFICATION_STATUS_IN_PROGRESS_TRUE = 0x1;
inline constexpr uint32_t NV_CHANNELGPFIFO_NOTIFICATION_STATUS_IN_PROGRESS_FALSE = 0x0;

// Robust-channel (Xid) error codes RM writes to NvNotification::info32 (nverror.h).
inline constexpr uint32_t ROBUST_CHANNEL_GR_EXCEPTION = 13;
inline constexpr uint32_t ROBUST_CHANNEL_FAKE_ERROR = 14;
inline constexpr uint32_t ROBUST_CHANNEL_VBLANK_CALLBACK_TIMEOUT = 16;
inline constexpr uint32_t ROBUST_CHANNEL_DISP_MISSED_NOTIFIER = 19;
inline constexpr uint32_t ROBUST_CHANNEL_MPEG_ERROR_SW_METHOD = 20;
inline constexpr uint32_t ROBUST_CHANNEL_ME_ERROR_SW_METHOD = 21;
inline constexpr uint32_t ROBUST_CHANNEL_VP_ERROR_SW_METHOD = 22;
inline constexpr uint32_t ROBUST_CHANNEL_RC_LOGGING_ENABLED = 23;
inline constexpr uint32_t ROBUST_CHANNEL_VP_ERROR = 27;
inline constexpr uint32_t ROBUST_CHANNEL_VP2_ERROR = 28;
inline constexpr uint32_t ROBUST_CHANNEL_BSP_ERROR = 29;
inline constexpr uint32_t ROBUST_CHANNEL_UNUSED_ERROR_30 = 30;
inline constexpr uint32_t ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT = 31;
inline constexpr uint32_t ROBUST_CHANNEL_PBDMA_ERROR = 32;
inline constexpr uint32_t ROBUST_CHANNEL_SEC_ERROR = 33;
inline constexpr uint32_t ROBUST_CHANNEL_MSVLD_ERROR = 34;
inline constexpr uint32_t ROBUST_CHANNEL_MSPDEC_ERROR = 35;
inline constexpr uint32_t ROBUST_CHANNEL_MSPPP_ERROR = 36;
inline constexpr uint32_t ROBUST_CHANNEL_CE0_ERROR = 39;
inline constexpr uint32_t ROBUST_CHANNEL_CE1_ERROR = 40;
inline constexpr uint32_t ROBUST_CHANNEL_CE2_ERROR = 41;
inline constexpr uint32_t ROBUST_CHANNEL_VIC_ERROR = 42;
inline constexpr uint32_t ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR = 43;
inline constexpr uint32_t ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW = 44;
inline constexpr uint32_t ROBUST_CHANNEL_PREEMPTIVE_REMOVAL = 45;
inline constexpr uint32_t ROBUST_CHANNEL_NVENC0_ERROR = 47;
inline constexpr uint32_t ROBUST_CHANNEL_GPU_ECC_DBE = 48;
inline constexpr uint32_t FB_MEMORY_ERROR = 58;
inline constexpr uint32_t PMU_ERROR = 59;
inline constexpr uint32_t ROBUST_CHANNEL_SEC2_ERROR = 60;
inline constexpr uint32_t PMU_BREAKPOINT = 61;
inline constexpr uint32_t PMU_HALT_ERROR = 62;
inline constexpr uint32_t INFOROM_PAGE_RETIREMENT_EVENT = 63;
inline constexpr uint32_t INFOROM_DRAM_RETIREMENT_EVENT = 63;
inline constexpr uint32_t INFOROM_PAGE_RETIREMENT_FAILURE = 64;
inline constexpr uint32_t INFOROM_DRAM_RETIREMENT_FAILURE = 64;
inline constexpr uint32_t ROBUST_CHANNEL_NVENC1_ERROR = 65;
inline constexpr uint32_t ROBUST_CHANNEL_NVDEC0_ERROR = 68;
inline constexpr uint32_t ROBUST_CHANNEL_GR_CLASS_ERROR = 69;
inline constexpr uint32_t ROBUST_CHANNEL_CE3_ERROR = 70;
inline constexpr uint32_t ROBUST_CHANNEL_CE4_ERROR = 71;
inline constexpr uint32_t ROBUST_CHANNEL_CE5_ERROR = 72;
inline constexpr uint32_t ROBUST_CHANNEL_NVENC2_ERROR = 73;
inline constexpr uint32_t NVLINK_ERROR = 74;
inline constexpr uint32_t ROBUST_CHANNEL_CE6_ERROR = 75;
inline constexpr uint32_t ROBUST_CHANNEL_CE7_ERROR = 76;
inline constexpr uint32_t ROBUST_CHANNEL_CE8_ERROR = 77;
inline constexpr uint32_t VGPU_START_ERROR = 78;
inline constexpr uint32_t ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS = 79;
inline constexpr uint32_t PBDMA_PUSHBUFFER_CRC_MISMATCH = 80;
inline constexpr uint32_t ROBUST_CHANNEL_VGA_SUBSYSTEM_ERROR = 81;
inline constexpr uint32_t ROBUST_CHANNEL_NVJPG0_ERROR = 82;
inline constexpr uint32_t ROBUST_CHANNEL_NVDEC1_ERROR = 83;
inline constexpr uint32_t ROBUST_CHANNEL_NVDEC2_ERROR = 84;
inline constexpr uint32_t ROBUST_CHANNEL_CE9_ERROR = 85;
inline constexpr uint32_t ROBUST_CHANNEL_OFA0_ERROR = 86;
inline constexpr uint32_t NVTELEMETRY_DRIVER_REPORT = 87;
inline constexpr uint32_t ROBUST_CHANNEL_NVDEC3_ERROR = 88;
inline constexpr uint32_t ROBUST_CHANNEL_NVDEC4_ERROR = 89;
inline constexpr uint32_t LTC_ERROR = 90;
inline constexpr uint32_t RESERVED_XID = 91;
inline constexpr uint32_t EXCESSIVE_SBE_INTERRUPTS = 92;
inline constexpr uint32_t INFOROM_ERASE_LIMIT_EXCEEDED = 93;
inline constexpr uint32_t ROBUST_CHANNEL_CONTAINED_ERROR = 94;
inline constexpr uint32_t ROBUST_CHANNEL_UNCONTAINED_ERROR = 95;
inline constexpr uint32_t ROBUST_CHANNEL_NVDEC5_ERROR = 96;
inline constexpr uint32_t ROBUST_CHANNEL_NVDEC6_ERROR = 97;
inline constexpr uint32_t ROBUST_CHANNEL_NVDEC7_ERROR = 98;
inline constexpr uint32_t ROBUST_CHANNEL_NVJPG1_ERROR = 99;
inline constexpr uint32_t ROBUST_CHANNEL_NVJPG2_ERROR = 100;
inline constexpr uint32_t ROBUST_CHANNEL_NVJPG3_ERROR = 101;
inline constexpr uint32_t ROBUST_CHANNEL_NVJPG4_ERROR = 102;
inline constexpr uint32_t ROBUST_CHANNEL_NVJPG5_ERROR = 103;
inline constexpr uint32_t ROBUST_CHANNEL_NVJPG6_ERROR = 104;
inline constexpr uint32_t ROBUST_CHANNEL_NVJPG7_ERROR = 105;
inline constexpr uint32_t NVLINK_REMOTE_TRANSLATION_ERROR = 108;
inline constexpr uint32_t SEC_FAULT_ERROR = 110;
inline constexpr uint32_t GSP_RPC_TIMEOUT = 119;
inline constexpr uint32_t GSP_ERROR = 120;
inline constexpr uint32_t C2C_ERROR = 121;
inline constexpr uint32_t SPI_PMU_RPC_READ_FAIL = 122;
inline constexpr uint32_t SPI_PMU_RPC_WRITE_FAIL = 123;
inline constexpr uint32_t SPI_PMU_RPC_ERASE_FAIL = 124;
inline constexpr uint32_t INFOROM_FS_ERROR = 125;
inline constexpr uint32_t ROBUST_CHANNEL_CE10_ERROR = 126;
inline constexpr uint32_t ROBUST_CHANNEL_CE11_ERROR = 127;
inline constexpr uint32_t ROBUST_CHANNEL_CE12_ERROR = 128;
inline constexpr uint32_t ROBUST_CHANNEL_CE13_ERROR = 129;
inline constexpr uint32_t ROBUST_CHANNEL_CE14_ERROR = 130;
inline constexpr uint32_t ROBUST_CHANNEL_CE15_ERROR = 131;
inline constexpr uint32_t ROBUST_CHANNEL_CE16_ERROR = 132;
inline constexpr uint32_t ROBUST_CHANNEL_CE17_ERROR = 133;
inline constexpr uint32_t ROBUST_CHANNEL_CE18_ERROR = 134;
inline constexpr uint32_t ROBUST_CHANNEL_CE19_ERROR = 135;
inline constexpr uint32_t ALI_TRAINING_FAIL = 136;
inline constexpr uint32_t NVLINK_PRIV_ERR = 137;
inline constexpr uint32_t ROBUST_CHANNEL_DLA_ERROR = 138;
inline constexpr uint32_t ROBUST_CHANNEL_OFA1_ERROR = 139;
inline constexpr uint32_t UNRECOVERABLE_ECC_ERROR_ESCAPE = 140;
inline constexpr uint32_t ROBUST_CHANNEL_FAST_PATH_ERROR = 141;
inline constexpr uint32_t ROBUST_CHANNEL_NVENC3_ERROR = 142;
inline constexpr uint32_t GPU_INIT_ERROR = 143;
inline constexpr uint32_t NVLINK_SAW_ERROR = 144;
inline constexpr uint32_t NVLINK_RLW_ERROR = 145;
inline constexpr uint32_t NVLINK_TLW_ERROR = 146;
inline constexpr uint32_t NVLINK_TREX_ERROR = 147;
inline constexpr uint32_t NVLINK_NVLPW_CTRL_ERROR = 148;
inline constexpr uint32_t NVLINK_NETIR_ERROR = 149;
inline constexpr uint32_t NVLINK_MSE_ERROR = 150;
inline constexpr uint32_t ROBUST_CHANNEL_KEY_ROTATION_ERROR = 151;
inline constexpr uint32_t RESERVED7_ERROR = 152;
inline constexpr uint32_t RESERVED8_ERROR = 153;
inline constexpr uint32_t GPU_RECOVERY_ACTION_CHANGED = 154;
inline constexpr uint32_t NVLINK_SW_DEFINED_ERROR = 155;
inline constexpr uint32_t RESOURCE_RETIREMENT_EVENT = 156;
inline constexpr uint32_t RESOURCE_RETIREMENT_FAILURE = 157;
inline constexpr uint32_t GPU_FATAL_TIMEOUT = 158;
inline constexpr uint32_t ROBUST_CHANNEL_CHI_NON_DATA_ERROR = 159;
inline constexpr uint32_t CHANNEL_RETIREMENT_EVENT = 160;
inline constexpr uint32_t CHANNEL_RETIREMENT_FAILURE = 161;
inline constexpr uint32_t ISINK_REENGAGED = 162;
inline constexpr uint32_t ISINK_DISENGAGED = 163;
inline constexpr uint32_t ISINK_LOW_LIFETIME = 164;
inline constexpr uint32_t ISINK_ZERO_LIFETIME = 165;
inline constexpr uint32_t NVLINK_SECURE_INTERRUPT_ERROR = 166;
inline constexpr uint32_t PCIE_FATAL_TIMEOUT = 167;
inline constexpr uint32_t REDUCED_GPU_MEMORY_CAPACITY = 168;
inline constexpr uint32_t SEC2_HALT_ERROR = 169;
inline constexpr uint32_t ROBUST_CHANNEL_UNUSED_ERROR_170 = 170;
inline constexpr uint32_t UNCORRECTABLE_DRAM_ERROR = 171;
inline constexpr uint32_t UNCORRECTABLE_SRAM_ERROR = 172;
inline constexpr uint32_t C2C_FATAL_LINK_FAILURE = 173;
inline constexpr uint32_t ROBUST_CHANNEL_LAST_ERROR = 173;
inline constexpr uint32_t ROBUST_CHANNEL_ERROR_RECOVERY_LEVEL_INFO = 0;
inline constexpr uint32_t ROBUST_CHANNEL_ERROR_RECOVERY_LEVEL_NON_FATAL = 1;
inline constexpr uint32_t ROBUST_CHANNEL_ERROR_RECOVERY_LEVEL_FATAL = 2;

// Xid code of copy engine x.
constexpr uint32_t ROBUST_CHANNEL_CE_ERROR(uint32_t x) {
    return x < 3   ? ROBUST_CHANNEL_CE0_ERROR + x
           : x < 6 ? ROBUST_CHANNEL_CE3_ERROR + (x - 3)
           : x < 9 ? ROBUST_CHANNEL_CE6_ERROR + (x - 6)
           : x == 9 ? ROBUST_CHANNEL_CE9_ERROR
                    : ROBUST_CHANNEL_CE10_ERROR + (x - 10);
}
static_assert(ROBUST_CHANNEL_CE_ERROR(4) == 71 && ROBUST_CHANNEL_CE_ERROR(12) == 128);

// Optional allocation parameters of the engine classes
// (class/clb0b5sw.h; nvos.h)
struct NVB0B5_ALLOCATION_PARAMETERS {
    uint32_t version;
    uint32_t engineType;
};
static_assert(sizeof(NVB0B5_ALLOCATION_PARAMETERS) == 8);
struct NV_GR_ALLOCATION_PARAMETERS {
    uint32_t version;
    uint32_t flags;
    uint32_t size;
    uint32_t caps;
};
static_assert(sizeof(NV_GR_ALLOCATION_PARAMETERS) == 16);

}  // namespace nvl::nv
