#include "hw/compute.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/align.h"
#include "common/envregs.h"
#include "defs/compute_cbc0.h"
#include "defs/host_c86f.h"
#include "defs/rm_classes.h"
#include "hw/wc_copy.h"

namespace nvl::hw {
namespace {

// Constant bank 0 on sm_90: the driver area before the parameters (what
// sm_90 code reads for each special register, seen in nvcc 13 SASS).
constexpr uint32_t kCbufBlockDim = 0x00;    // blockDim.x/y/z, 32-bit each
constexpr uint32_t kCbufGridDim = 0x0c;     // gridDim.x/y/z
constexpr uint32_t kCbufSharedWindow = 0x18;
constexpr uint32_t kCbufLocalWindow = 0x20;
constexpr uint32_t kCbufStackTop = 0x28;
// Where a thread's stack starts: the top of the 16 MiB a thread's local
// memory can span (the QMD's 24-bit SHADER_LOCAL_MEMORY_*_SIZE fields) less
// the 0x240 bytes the hardware keeps per thread (Context::ensureLocalMemory).
// The value libcuda writes there on sm_90 (REFERENCES.md).
constexpr uint32_t kStackTop = (16u << 20) - 0x240;
static_assert(kStackTop == 0xfffdc0);

// Shared memory is given to a block in 128-byte steps (SHARED_MEMORY_SIZE).
constexpr uint32_t kSharedGranularity = 128;
// SEND_PCAS_A takes the QMD's address >> 8; constant bank 0 starts the slot.
constexpr uint32_t kQmdAlign = 256;
// Constant buffer sizes are given in 16-byte units (CONSTANT_BUFFER_SIZE_SHIFTED4).
constexpr uint32_t kCbufSizeUnit = 16;
// Local memory: per warp, per TPC and in all, in the steps the hardware takes
// it (the sizing Mesa NVK and tinygrad use for SET_SHADER_LOCAL_MEMORY*).
constexpr uint64_t kLocalPerWarpAlign = 0x200, kLocalPerTpcAlign = 0x8000, kLocalTotalAlign = 0x20000;
constexpr uint32_t kCbufDynamicShared = 0x2c;  // %dynamic_smem_size
constexpr uint32_t kCbufGridId = 0x30;         // %gridid, 64-bit
// %envreg0..31 at 0x40 + 4 i; what nvlite keeps there: common/envregs.h.
constexpr uint32_t kCbufEnvReg = 0x40;
constexpr uint32_t kCbufGridWorkspaceHigh = kCbufEnvReg + 4 * envreg::kGridWorkspaceHigh;
constexpr uint32_t kCbufGridWorkspaceLow = kCbufEnvReg + 4 * envreg::kGridWorkspaceLow;
constexpr uint32_t kCbufLaunchQueueHigh = kCbufEnvReg + 4 * envreg::kLaunchQueueHigh;
constexpr uint32_t kCbufLaunchQueueLow = kCbufEnvReg + 4 * envreg::kLaunchQueueLow;
constexpr uint32_t kCbufLaunchDepth = kCbufEnvReg + 4 * envreg::kLaunchDepth;
// The generic address of the program's constant bank (3): sm_90 code
// converting a __constant__ variable's address to a generic pointer
// (cvta.const: format strings and constant arrays of numba, &c_array in
// CUDA C) reads it from here and adds the variable's offset in the bank
// (ULDC.64 c[0x0][0xd0], seen in nvcc 13 -rdc SASS).
constexpr uint32_t kCbufUserConstants = 0xd0;
constexpr uint32_t kCbufSmCount = 0x10c;               // %nsmid
constexpr uint32_t kCbufCooperative = 0x110;           // 1 in cooperative launches (libcuda 580)
constexpr uint32_t kCbufReservedShared = 0x114;        // %total_smem_size = the SM's size for the block - this
constexpr uint32_t kCbufBlockShared = 0x13c;           // the block's shared memory: reserved + static + dynamic
constexpr uint32_t kCbufExplicitCluster = 0x140;       // %is_explicit_cluster
constexpr uint32_t kCbufClusterDim = 0x144;            // %cluster_nctaid.x/y/z
constexpr uint32_t kCbufClusterDimReciprocal = 0x150;  // float 1 / cluster_nctaid: %clusterid = ctaid * it
constexpr uint32_t kCbufClusterCount = 0x15c;          // %nclusterid.x/y/z
constexpr uint32_t kCbufSharedWindowBytes = 0x16c;    // the shared-memory window, as libcuda 580 fills it:
constexpr uint32_t kCbufSharedWindowBase = 0x170;      //   16 MiB at the shared window
constexpr uint32_t kCbufClusterSize = 0x188;           // %cluster_nctarank
// The parameters' own address and their end (what taking the address of a
// __grid_constant__ parameter reads).
constexpr uint32_t kCbufParamsAddress = 0x198;
constexpr uint32_t kCbufParamsEnd = 0x1a0;
constexpr uint32_t kCbufDriverAreaEnd = 0x1a8;
constexpr uint32_t kSharedWindowBytes = 16u << 20;
constexpr uint32_t kReservedSharedBytes = 1024;  // CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK

// Cooperative groups' grid workspace (driver_abi.h: wsSize, then the
// barrier counter), placed after the QMD; 16 bytes, the size libcuda 580
// reports in wsSize.
struct GridWorkspace {
    uint32_t wsSize;
    uint32_t barrier;
};
constexpr size_t kGridWorkspaceBytes = 16;

// The nearest float at or above 1/n: a CTA index times it, truncated, is the
// index of its cluster (n <= 32, indices below 2^24).
uint32_t reciprocalBits(uint32_t n) {
    float r = 1.0f / static_cast<float>(n);
    if (static_cast<double>(r) * n < 1.0) r = std::nextafter(r, 2.0f);
    uint32_t bits;
    std::memcpy(&bits, &r, sizeof bits);
    return bits;
}

// Write-combined memory takes whole 64-byte lines best: a line written in
// full goes out as one write, a partial one as several (hw/wc_copy.h).
constexpr size_t kLineBytes = 64;

// First parameter byte of constant bank 0 (what compilers emit; EIATTR_PARAM_CBANK).
constexpr uint32_t kParamBaseSm90 = 0x210;
constexpr uint32_t kParamBaseSm70 = 0x160;
constexpr uint32_t kSassVersionSm90 = 0x90;

// Shared-memory carveouts of an sm_90 SM (KiB) and their QMD encoding (KiB / 4 + 1).
constexpr uint32_t kCarveoutsKiB[] = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
constexpr uint32_t smConfig(uint32_t kib) { return kib / 4 + 1; }

// The smallest carveout holding 'bytes', else the largest the SM has.
uint32_t carveoutFor(uint64_t bytes, uint32_t maxKiB) {
    for (uint32_t kib : kCarveoutsKiB)
        if (uint64_t{kib} * 1024 >= bytes && kib <= maxKiB) return kib;
    return maxKiB;
}

}  // namespace

uint32_t Launch::driverAreaBytes(const ComputeState& s) {
    return s.smVersion >= kSassVersionSm90 ? kParamBaseSm90 : kParamBaseSm70;
}

bool Launch::acceptsKernel(const KernelDescriptor& k, const ComputeState& s) {
    return k.paramBase >= driverAreaBytes(s) && k.cbuf0Bytes >= k.paramBase && k.cbuf0Bytes <= kMaxConstantBankBytes;
}

uint32_t Launch::sharedBytes(const KernelDescriptor& k, uint32_t dynamicSharedBytes) {
    return static_cast<uint32_t>(alignUp(k.sharedWindowBytes + dynamicSharedBytes, kSharedGranularity));
}

size_t Launch::dataBytes(const KernelDescriptor& k, const ComputeState& s) {
    return alignUp(k.cbuf0Bytes, kQmdAlign) + s.qmd->bytes;
}

size_t Launch::dataBytes(const KernelDescriptor& k, const ComputeState& s, const LaunchGeometry& g) {
    return dataBytes(k, s) + (g.cooperative ? kGridWorkspaceBytes : 0);
}

const QmdLayout& qmdLayoutFor(uint32_t computeClass) {
    return computeClass == nv::HOPPER_COMPUTE_A ? kQmdV04 : kQmdV03;
}

Qmd Launch::makeTemplate(const KernelDescriptor& k, const ComputeState& s) {
    const QmdLayout& l = *s.qmd;
    Qmd q;
    q.set(l.majorVersion, l.majorVersionValue);
    if (l.hasQmdType) q.set(l.qmdType, l.qmdTypeGridCta);
    if (l.hasGlobalCaching) q.set(l.smGlobalCaching, 1);
    q.set(l.groupId, 0x3f);  // the group every launch of ours shares (tinygrad's value)
    q.set(l.sassVersion, s.smVersion);
    q.set(l.programLower, k.programVa & 0xffffffffu);
    q.set(l.programUpper, k.programVa >> 32);
    q.set(l.prefetchLowerShifted, (k.programVa >> 8) & 0xffffffffu);
    q.set(l.prefetchUpperShifted, k.programVa >> 40);
    // In 256-byte units, at most what the field holds (the start of a long kernel).
    q.set(l.prefetchSize, std::min<uint64_t>(k.programBytes >> 8, l.prefetchSize.max()));
    q.set(l.registerCount, k.registers);
    q.set(l.barrierCount, std::max<uint32_t>(k.barriers, 1));
    q.set(l.apiVisibleCallLimit, l.apiVisibleCallLimitNoCheck);
    q.set(l.samplerIndex, l.samplerIndexViaHeaderIndex);
    // Copies and earlier kernels wrote memory this one may read: start clean.
    q.set(l.invalidateTextureHeader, 1);
    q.set(l.invalidateTextureSampler, 1);
    q.set(l.invalidateTextureData, 1);
    q.set(l.invalidateShaderData, 1);
    // Its writes reach system memory before the grid counts as done.
    q.set(l.cwdMembarType, l.cwdMembarSysmembar);
    q.set(l.maxSmConfig, smConfig(s.maxSmSharedKiB));
    // Constant bank 0 moves every launch: never serve it from the cache.
    q.set(l.cbufValid(0), 1);
    q.set(l.cbufInvalidate(0), 1);
    q.set(l.cbufSizeShifted4(0), alignUp(k.cbuf0Bytes, kCbufSizeUnit) / kCbufSizeUnit);
    for (const ConstantBankBinding& b : k.banks) {
        q.set(l.cbufValid(b.index), 1);
        // __constant__ data can be rewritten between launches by plain copies.
        q.set(l.cbufInvalidate(b.index), 1);
        q.set(l.cbufAddrLower(b.index), (b.va >> l.cbufAddrShift) & 0xffffffffu);
        q.set(l.cbufAddrUpper(b.index), b.va >> (32 + l.cbufAddrShift));
        q.set(l.cbufSizeShifted4(b.index), alignUp(b.bytes, kCbufSizeUnit) / kCbufSizeUnit);
    }
    return q;
}

void Launch::build(Image& img, const Qmd& tmpl, const KernelDescriptor& k, const LaunchGeometry& g,
                   const ComputeState& s) {
    const QmdLayout& l = *s.qmd;
    const bool cluster = g.cluster[0] != 0;
    const uint32_t clusterDim[3] = {cluster ? g.cluster[0] : 1, cluster ? g.cluster[1] : 1, cluster ? g.cluster[2] : 1};

    // Constant bank 0 first (64-byte aligned: V04 takes its address >> 6):
    // the driver area, zeros up to the parameters (and after them, to the
    // end of the bank's last line).
    uint8_t* bank = img.bank;
    std::memset(bank, 0, k.cbuf0Bytes <= kStagedBankBytes ? alignUp(k.cbuf0Bytes, kLineBytes) : kCbufDriverAreaEnd);
    auto put = [bank](uint32_t offset, uint32_t v) { std::memcpy(bank + offset, &v, sizeof v); };
    for (uint32_t i = 0; i < 3; ++i) {
        put(kCbufBlockDim + 4 * i, g.block[i]);
        put(kCbufGridDim + 4 * i, g.grid[i]);
        put(kCbufClusterDim + 4 * i, clusterDim[i]);
        put(kCbufClusterDimReciprocal + 4 * i, reciprocalBits(clusterDim[i]));
        put(kCbufClusterCount + 4 * i, g.grid[i] / clusterDim[i]);
    }
    put(kCbufSharedWindow, lo32(s.sharedWindow));
    put(kCbufSharedWindow + 4, hi32(s.sharedWindow));
    put(kCbufLocalWindow, lo32(s.localWindow));
    put(kCbufLocalWindow + 4, hi32(s.localWindow));
    put(kCbufStackTop, kStackTop);
    put(kCbufDynamicShared, g.dynamicSharedBytes);
    put(kCbufUserConstants, lo32(k.userConstantsVa));
    put(kCbufUserConstants + 4, hi32(k.userConstantsVa));
    put(kCbufSmCount, s.smCount);
    put(kCbufReservedShared, kReservedSharedBytes);
    put(kCbufBlockShared, k.sharedWindowBytes + g.dynamicSharedBytes);
    put(kCbufSharedWindowBytes, kSharedWindowBytes);
    put(kCbufSharedWindowBase, lo32(s.sharedWindow));
    put(kCbufSharedWindowBase + 4, hi32(s.sharedWindow));
    put(kCbufExplicitCluster, cluster ? 1 : 0);
    put(kCbufClusterSize, clusterDim[0] * clusterDim[1] * clusterDim[2]);
    if (g.cooperative) put(kCbufCooperative, 1);
    if (g.launchQueue) {
        put(kCbufLaunchQueueHigh, hi32(g.launchQueue));
        put(kCbufLaunchQueueLow, lo32(g.launchQueue));
        put(kCbufLaunchDepth, g.launchDepth);
    }
    // Where the parameters start before the driver area's end (sm_7x/sm_8x),
    // they own those bytes.
    if (k.paramBase < kCbufDriverAreaEnd) std::memset(bank + k.paramBase, 0, kCbufDriverAreaEnd - k.paramBase);

    // Then the QMD, 256-byte aligned after it (SEND_PCAS_A takes its address >> 8).
    Qmd& q = img.qmd;
    q = tmpl;
    // A cluster launch (GRID_GPC_CGA) counts its grid in clusters: the GPU
    // runs GRID_WIDTH x GPC_CGA_WIDTH blocks across (the H200 ran twice the
    // blocks of an 8x3 grid of 2x1x1 clusters given the grid in blocks).
    // The launch path has checked that the cluster divides the grid.
    q.set(l.gridWidth, g.grid[0] / clusterDim[0]);
    q.set(l.gridHeight, g.grid[1] / clusterDim[1]);
    q.set(l.gridDepth, g.grid[2] / clusterDim[2]);
    q.set(l.ctaDim0, g.block[0]);
    q.set(l.ctaDim1, g.block[1]);
    q.set(l.ctaDim2, g.block[2]);
    if (cluster && l.hasCluster) {
        q.set(l.qmdType, l.qmdTypeGridGpcCga);
        q.set(l.gpcCgaWidth, g.cluster[0]);
        q.set(l.gpcCgaHeight, g.cluster[1]);
        q.set(l.gpcCgaDepth, g.cluster[2]);
    }
    const uint32_t shared = sharedBytes(k, g.dynamicSharedBytes);
    q.set(l.sharedMemorySize, shared);
    // The SM's shared-memory configuration: at least one block's worth, aiming
    // at what the occupancy calculator promised (a cooperative grid needs
    // that much on every SM, so there it is the minimum too).
    const uint32_t least = carveoutFor(shared, s.maxSmSharedKiB);
    const uint32_t target = carveoutFor(static_cast<uint64_t>(shared) * std::max<uint32_t>(g.blocksPerSm, 1), s.maxSmSharedKiB);
    q.set(l.minSmConfig, smConfig(g.cooperative ? target : least));
    q.set(l.targetSmConfig, smConfig(target));
    q.set(l.localMemoryHighSize, s.localBytesPerThread);
    if (l.hasRelease) {
        // The grid itself moves the channel's timeline when it completes.
        q.set(l.releaseEnable, 1);
        q.set(l.releaseStructureSize, l.releaseStructureTwoWords);
        q.set(l.releasePayload64, 1);
    }
}

uint8_t* Launch::stage(Image& img, const Channel::DataSlot& slot, const Qmd& tmpl, const KernelDescriptor& k,
                       const LaunchGeometry& g, const ComputeState& s) {
    const QmdLayout& l = *s.qmd;
    const bool staged = k.cbuf0Bytes <= kStagedBankBytes;
    Image::Key key;
    key.serial = staged ? k.serial : 0;
    for (int i = 0; i < 3; ++i) {
        key.grid[i] = g.grid[i];
        key.block[i] = g.block[i];
        key.cluster[i] = g.cluster[i];
    }
    key.dynamicSharedBytes = g.dynamicSharedBytes;
    key.blocksPerSm = g.blocksPerSm;
    key.localBytesPerThread = s.localBytesPerThread;
    key.launchQueue = g.launchQueue;
    key.launchDepth = g.launchDepth;
    key.cooperative = g.cooperative;
    if (key.serial == 0 || !(key == img.key)) {
        img.key = Image::Key{};  // not reusable while half built
        build(img, tmpl, k, g, s);
        img.key = key;
    }

    // What every launch changes: driver-area fields (those before the
    // parameters) ...
    uint8_t* bank = img.bank;
    auto put = [bank, &k](uint32_t offset, uint32_t v) {
        if (offset < k.paramBase) std::memcpy(bank + offset, &v, sizeof v);
    };
    put(kCbufGridId, lo32(g.gridId));
    put(kCbufGridId + 4, hi32(g.gridId));
    const uint64_t params = slot.va + k.paramBase, paramsEnd = slot.va + k.cbuf0Bytes;
    put(kCbufParamsAddress, lo32(params));
    put(kCbufParamsAddress + 4, hi32(params));
    put(kCbufParamsEnd, lo32(paramsEnd));
    put(kCbufParamsEnd + 4, hi32(paramsEnd));
    if (g.cooperative) {
        const uint64_t workspaceVa = slot.va + alignUp(k.cbuf0Bytes, kQmdAlign) + l.bytes;
        put(kCbufGridWorkspaceHigh, hi32(workspaceVa));
        put(kCbufGridWorkspaceLow, lo32(workspaceVa));
    }
    // ... and QMD fields: where constant bank 0 is, what the grid releases.
    Qmd& q = img.qmd;
    q.set(l.cbufAddrLower(0), (slot.va >> l.cbufAddrShift) & 0xffffffffu);
    q.set(l.cbufAddrUpper(0), slot.va >> (32 + l.cbufAddrShift));
    if (l.hasRelease) {
        q.set(l.releaseAddrLower, lo32(slot.timelineVa));
        q.set(l.releaseAddrUpper, hi32(slot.timelineVa));
        q.set(l.releasePayloadLower, lo32(slot.timelineValue));
        q.set(l.releasePayloadUpper, hi32(slot.timelineValue));
    }
    if (staged) return bank + k.paramBase;
    // A bank too large to stage: the driver area goes now, the parameters
    // straight after it.
    const uint32_t driverBytes = std::min(kCbufDriverAreaEnd, k.paramBase);
    std::memcpy(slot.cpu, bank, driverBytes);
    std::memset(slot.cpu + driverBytes, 0, k.paramBase - driverBytes);
    return slot.cpu + k.paramBase;
}

uint64_t Launch::commit(const Image& img, const Channel::DataSlot& slot, const KernelDescriptor& k,
                        const LaunchGeometry& g, const ComputeState& s) {
    const QmdLayout& l = *s.qmd;
    const size_t qmdOffset = alignUp(k.cbuf0Bytes, kQmdAlign);
    if (k.cbuf0Bytes <= kStagedBankBytes)
        copyToWriteCombined(slot.cpu, img.bank, alignUp(k.cbuf0Bytes, kLineBytes));
    copyToWriteCombined(slot.cpu + qmdOffset, img.qmd.bytes(), alignUp(l.bytes, kLineBytes));
    if (g.cooperative) {
        // A fresh barrier for every grid (its counter need not return to 0
        // when a grid stops early).
        const GridWorkspace ws{static_cast<uint32_t>(kGridWorkspaceBytes), 0};
        std::memcpy(slot.cpu + qmdOffset + l.bytes, &ws, sizeof ws);
    }
    return slot.va + qmdOffset;
}

void Launch::push(PushWriter& w, uint64_t qmdVa) {
    using namespace nv;
    w.inc(NVCBC0_SEND_PCAS_A(NVCBC0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8.value(qmdVa >> 8)));
    w.inc(NVCBC0_SEND_SIGNALING_PCAS2_B(
        NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION.value(NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE)));
}

void invalidateShaderCaches(PushWriter& w) {
    using namespace nv;
    w.inc(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI(
        NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION.value(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION_TRUE) |
        NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA.value(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA_TRUE) |
        NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT.value(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT_TRUE)));
}

void setLocalMemory(PushWriter& w, uint64_t va, uint64_t bytesPerTpc) {
    using namespace nv;
    w.inc(NVCBC0_SET_SHADER_LOCAL_MEMORY_A(NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.value(hi32(va))),
          NVCBC0_SET_SHADER_LOCAL_MEMORY_B(lo32(va)));
    // Every SM may use it at once (0xff: more SMs than any GPU has).
    w.inc(NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A(
              NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER.value(hi32(bytesPerTpc))),
          NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B(lo32(bytesPerTpc)),
          NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C(NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT.value(0xff)));
}

LocalMemorySize localMemorySize(uint32_t bytesPerThread, uint32_t maxWarpsPerSm, uint32_t smPerTpc,
                                uint32_t maxTpcPerGpc, uint32_t gpcCount) {
    constexpr uint64_t kThreadsPerWarp = 32;
    const uint64_t perWarp = alignUp(static_cast<uint64_t>(bytesPerThread) * kThreadsPerWarp, kLocalPerWarpAlign);
    const uint64_t perTpc = alignUp(perWarp * maxWarpsPerSm * smPerTpc, kLocalPerTpcAlign);
    return {perTpc, alignUp(perTpc * maxTpcPerGpc * gpcCount, kLocalTotalAlign)};
}

}  // namespace nvl::hw
