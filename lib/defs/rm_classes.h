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
inline constexpr uint32_t NV01_ROOT = 0x0;  // a client; same number as NV01_NULL_OBJECT
inline constexpr uint32_t NV01_ROOT_NON_PRIV = 0x1;
inline constexpr uint32_t NV01_ROOT_CLIENT = 0x41;  // the client class user space allocates
inline constexpr uint32_t NV01_DEVICE_0 = 0x80;
inline constexpr uint32_t NV20_SUBDEVICE_0 = 0x2080;
inline constexpr uint32_t NV01_EVENT = 0x5;
inline constexpr uint32_t NV01_EVENT_OS_EVENT = 0x79;  // event signalled through an fd
inline constexpr uint32_t NV01_MEMORY_SYSTEM = 0x3E;  // cl003e
inline constexpr uint32_t NV01_MEMORY_LOCAL_USER = 0x40;  // cl0040: video memory
inline constexpr uint32_t NV01_MEMORY_VIRTUAL = 0x70;  // cl0070: a GPU virtual address range
inline constexpr uint32_t NV01_MEMORY_SYSTEM_OS_DESCRIPTOR = 0x71;  // cl0071: memory the caller has
inline constexpr uint32_t FERMI_VASPACE_A = 0x90F1;
inline constexpr uint32_t FERMI_CONTEXT_SHARE_A = 0x9067;
inline constexpr uint32_t KEPLER_CHANNEL_GROUP_A = 0xA06C;
inline constexpr uint32_t GT200_DEBUGGER = 0x83DE;
inline constexpr uint32_t TURING_USERMODE_A = 0xC461;
inline constexpr uint32_t AMPERE_USERMODE_A = 0xC561;
inline constexpr uint32_t HOPPER_USERMODE_A = 0xC661;
inline constexpr uint32_t AMPERE_CHANNEL_GPFIFO_A = 0xC56F;
inline constexpr uint32_t HOPPER_CHANNEL_GPFIFO_A = 0xC86F;
inline constexpr uint32_t AMPERE_COMPUTE_B = 0xC7C0;
inline constexpr uint32_t ADA_COMPUTE_A = 0xC9C0;
inline constexpr uint32_t HOPPER_COMPUTE_A = 0xCBC0;
inline constexpr uint32_t AMPERE_DMA_COPY_B = 0xC7B5;
inline constexpr uint32_t HOPPER_DMA_COPY_A = 0xC8B5;

// NV50_P2P (cl503b): a peer link between two subdevices, allocated under the
// client; mappings of one GPU's memory into the other's address space need it.
inline constexpr uint32_t NV50_P2P = 0x503B;
struct NV503B_BAR1_P2P_DMA_INFO {
    alignas(8) uint64_t dma_address;
    alignas(8) uint64_t dma_size;
};
struct NV503B_ALLOC_PARAMETERS {
    uint32_t hSubDevice;
    uint32_t hPeerSubDevice;
    uint32_t subDevicePeerIdMask;      // 0: RM chooses
    uint32_t peerSubDevicePeerIdMask;  // 0: RM chooses
    alignas(8) uint64_t mailboxBar1Addr;
    uint32_t mailboxTotalSize;
    uint32_t flags;
    uint32_t subDeviceEgmPeerIdMask;
    uint32_t peerSubDeviceEgmPeerIdMask;
    NV503B_BAR1_P2P_DMA_INFO l2pBar1P2PDmaInfo;
    NV503B_BAR1_P2P_DMA_INFO p2lBar1P2PDmaInfo;
};
static_assert(sizeof(NV503B_ALLOC_PARAMETERS) == 72);
static_assert(offsetof(NV503B_ALLOC_PARAMETERS, mailboxBar1Addr) == 16);
static_assert(offsetof(NV503B_ALLOC_PARAMETERS, flags) == 28);
static_assert(offsetof(NV503B_ALLOC_PARAMETERS, l2pBar1P2PDmaInfo) == 40);

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
inline constexpr uint32_t NV_DEVICE_ALLOCATION_VAMODE_OPTIONAL_MULTIPLE_VASPACES = 0x0;

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
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED = 8;
inline constexpr uint32_t NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING = 64;

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
inline constexpr uint32_t NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC = 0x1;

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

inline constexpr uint32_t NV01_EVENT_NONSTALL_INTR = 0x8000000;

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
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY0 = 0x9;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY2 = 0xB;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY9 = 0x12;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY10 = 0x34;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY19 = 0x3D;
inline constexpr uint32_t NV2080_ENGINE_TYPE_LAST = 0x54;
inline constexpr uint32_t NV2080_ENGINE_TYPE_GR_SIZE = 8;

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

// Robust-channel (Xid) error codes RM writes to NvNotification::info32 (nverror.h).
inline constexpr uint32_t ROBUST_CHANNEL_GR_EXCEPTION = 13;
inline constexpr uint32_t ROBUST_CHANNEL_FAKE_ERROR = 14;
inline constexpr uint32_t ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT = 31;
inline constexpr uint32_t ROBUST_CHANNEL_PBDMA_ERROR = 32;
inline constexpr uint32_t ROBUST_CHANNEL_CE0_ERROR = 39;
inline constexpr uint32_t ROBUST_CHANNEL_CE1_ERROR = 40;
inline constexpr uint32_t ROBUST_CHANNEL_CE2_ERROR = 41;
inline constexpr uint32_t ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR = 43;
inline constexpr uint32_t ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW = 44;
inline constexpr uint32_t ROBUST_CHANNEL_PREEMPTIVE_REMOVAL = 45;
inline constexpr uint32_t ROBUST_CHANNEL_GPU_ECC_DBE = 48;
inline constexpr uint32_t ROBUST_CHANNEL_GR_CLASS_ERROR = 69;
inline constexpr uint32_t ROBUST_CHANNEL_CE3_ERROR = 70;
inline constexpr uint32_t ROBUST_CHANNEL_CE4_ERROR = 71;
inline constexpr uint32_t ROBUST_CHANNEL_CE5_ERROR = 72;
inline constexpr uint32_t ROBUST_CHANNEL_CE6_ERROR = 75;
inline constexpr uint32_t ROBUST_CHANNEL_CE7_ERROR = 76;
inline constexpr uint32_t ROBUST_CHANNEL_CE8_ERROR = 77;
inline constexpr uint32_t ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS = 79;
inline constexpr uint32_t ROBUST_CHANNEL_CE9_ERROR = 85;
inline constexpr uint32_t ROBUST_CHANNEL_CONTAINED_ERROR = 94;
inline constexpr uint32_t ROBUST_CHANNEL_UNCONTAINED_ERROR = 95;
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
inline constexpr uint32_t ROBUST_CHANNEL_LAST_ERROR = 173;

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
