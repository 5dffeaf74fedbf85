#include "hw/compute.h"

#include <algorithm>
#include <cstring>

#include "common/align.h"
#include "defs/compute_cbc0.h"
#include "defs/host_c86f.h"
#include "defs/rm_classes.h"

namespace nvl::hw {
namespace {

// Constant bank 0 on sm_90: the driver area before the parameters.
constexpr uint32_t kCbufBlockDim = 0x00;    // blockDim.x/y/z, 32-bit each
constexpr uint32_t kCbufGridDim = 0x0c;     // gridDim.x/y/z
constexpr uint32_t kCbufSharedWindow = 0x18;
constexpr uint32_t kCbufLocalWindow = 0x20;
constexpr uint32_t kCbufStackTop = 0x28;
constexpr uint32_t kStackTop = 0xfffdc0;
// First parameter byte of constant bank 0 (what compilers emit; EIATTR_PARAM_CBANK).
constexpr uint32_t kParamBaseSm90 = 0x210;
constexpr uint32_t kParamBaseSm70 = 0x160;
constexpr uint32_t kSassVersionSm90 = 0x90;

// Shared-memory carveouts of an sm_90 SM (KiB) and their QMD encoding (KiB / 4 + 1).
constexpr uint32_t kCarveoutsKiB[] = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
constexpr uint32_t smConfig(uint32_t kib) { return kib / 4 + 1; }

}  // namespace

uint32_t Launch::driverAreaBytes(const ComputeState& s) {
    return s.smVersion >= kSassVersionSm90 ? kParamBaseSm90 : kParamBaseSm70;
}

bool Launch::acceptsKernel(const KernelDescriptor& k, const ComputeState& s) {
    return k.paramBase >= driverAreaBytes(s) && k.cbuf0Bytes >= k.paramBase && k.cbuf0Bytes <= kMaxConstantBankBytes;
}

uint32_t Launch::sharedBytes(const KernelDescriptor& k, uint32_t dynamicSharedBytes) {
    return static_cast<uint32_t>(alignUp(k.sharedWindowBytes + dynamicSharedBytes, 128));
}

size_t Launch::dataBytes(const KernelDescriptor& k, const ComputeState& s) {
    return alignUp(k.cbuf0Bytes, 256) + s.qmd->bytes;
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
    q.set(l.prefetchSize, std::min<uint32_t>(k.programBytes >> 8, 0x1ff));
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
    q.set(l.cbufSizeShifted4(0), alignUp(k.cbuf0Bytes, 16) >> 4);
    for (const ConstantBankBinding& b : k.banks) {
        q.set(l.cbufValid(b.index), 1);
        // __constant__ data can be rewritten between launches by plain copies.
        q.set(l.cbufInvalidate(b.index), 1);
        q.set(l.cbufAddrLower(b.index), (b.va >> l.cbufAddrShift) & 0xffffffffu);
        q.set(l.cbufAddrUpper(b.index), b.va >> (32 + l.cbufAddrShift));
        q.set(l.cbufSizeShifted4(b.index), alignUp(b.bytes, 16) >> 4);
    }
    return q;
}

Launch::Written Launch::write(const Channel::DataSlot& slot, const Qmd& tmpl, const KernelDescriptor& k,
                              const LaunchGeometry& g, const ComputeState& s) {
    const QmdLayout& l = *s.qmd;
    // Constant bank 0 first (64-byte aligned: V04 takes its address >> 6).
    uint32_t driver[kCbufStackTop / 4 + 2] = {};
    driver[kCbufBlockDim / 4 + 0] = g.block[0];
    driver[kCbufBlockDim / 4 + 1] = g.block[1];
    driver[kCbufBlockDim / 4 + 2] = g.block[2];
    driver[kCbufGridDim / 4 + 0] = g.grid[0];
    driver[kCbufGridDim / 4 + 1] = g.grid[1];
    driver[kCbufGridDim / 4 + 2] = g.grid[2];
    driver[kCbufSharedWindow / 4 + 0] = lo32(s.sharedWindow);
    driver[kCbufSharedWindow / 4 + 1] = hi32(s.sharedWindow);
    driver[kCbufLocalWindow / 4 + 0] = lo32(s.localWindow);
    driver[kCbufLocalWindow / 4 + 1] = hi32(s.localWindow);
    driver[kCbufStackTop / 4] = kStackTop;
    static_assert(sizeof driver <= kParamBaseSm70);
    uint8_t* cbuf = slot.cpu;
    std::memcpy(cbuf, driver, sizeof driver);
    std::memset(cbuf + sizeof driver, 0, k.paramBase - sizeof driver);  // paramBase >= the driver area (acceptsKernel)

    // Then the QMD, 256-byte aligned after it (SEND_PCAS_A takes its address >> 8).
    Qmd q = tmpl;
    q.set(l.gridWidth, g.grid[0]);
    q.set(l.gridHeight, g.grid[1]);
    q.set(l.gridDepth, g.grid[2]);
    q.set(l.ctaDim0, g.block[0]);
    q.set(l.ctaDim1, g.block[1]);
    q.set(l.ctaDim2, g.block[2]);
    const uint32_t shared = sharedBytes(k, g.dynamicSharedBytes);
    q.set(l.sharedMemorySize, shared);
    uint32_t carveout = s.maxSmSharedKiB;
    for (uint32_t kib : kCarveoutsKiB)
        if (kib * 1024 >= shared && kib <= s.maxSmSharedKiB) {
            carveout = kib;
            break;
        }
    q.set(l.minSmConfig, smConfig(carveout));
    q.set(l.targetSmConfig, smConfig(carveout));
    q.set(l.localMemoryHighSize, s.localBytesPerThread);
    q.set(l.cbufAddrLower(0), (slot.va >> l.cbufAddrShift) & 0xffffffffu);
    q.set(l.cbufAddrUpper(0), slot.va >> (32 + l.cbufAddrShift));
    if (l.hasRelease) {
        // The grid itself moves the channel's timeline when it completes.
        q.set(l.releaseEnable, 1);
        q.set(l.releaseStructureSize, l.releaseStructureTwoWords);
        q.set(l.releasePayload64, 1);
        q.set(l.releaseAddrLower, lo32(slot.timelineVa));
        q.set(l.releaseAddrUpper, hi32(slot.timelineVa));
        q.set(l.releasePayloadLower, lo32(slot.timelineValue));
        q.set(l.releasePayloadUpper, hi32(slot.timelineValue));
    }
    const size_t qmdOffset = alignUp(k.cbuf0Bytes, 256);
    q.copyTo(slot.cpu + qmdOffset, l.bytes);
    return {slot.va + qmdOffset, cbuf + k.paramBase};
}

void Launch::push(PushWriter& w, uint64_t qmdVa) {
    using namespace nv;
    w.inc(Subchannel::Compute, NVCBC0_SEND_PCAS_A,
          {NVCBC0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8.value(static_cast<uint32_t>(qmdVa >> 8))});
    w.inc(Subchannel::Compute, NVCBC0_SEND_SIGNALING_PCAS2_B,
          {NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION.value(NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE)});
}

void invalidateShaderCaches(PushWriter& w) {
    using namespace nv;
    w.inc(Subchannel::Compute, NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI,
          {NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION.value(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION_TRUE) |
           NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA.value(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA_TRUE) |
           NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT.value(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT_TRUE)});
}

void setLocalMemory(PushWriter& w, uint64_t va, uint64_t bytesPerTpc) {
    using namespace nv;
    w.inc(Subchannel::Compute, NVCBC0_SET_SHADER_LOCAL_MEMORY_A,
          {NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.value(hi32(va)),
           NVCBC0_SET_SHADER_LOCAL_MEMORY_B_ADDRESS_LOWER.value(lo32(va))});
    // Every SM may use it at once (0xff: more SMs than any GPU has).
    w.inc(Subchannel::Compute, NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A,
          {NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER.value(hi32(bytesPerTpc)),
           NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B_SIZE_LOWER.value(lo32(bytesPerTpc)),
           NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT.value(0xff)});
}

LocalMemorySize localMemorySize(uint32_t bytesPerThread, uint32_t maxWarpsPerSm, uint32_t smPerTpc,
                                uint32_t maxTpcPerGpc, uint32_t gpcCount) {
    const uint64_t perWarp = alignUp(static_cast<uint64_t>(bytesPerThread) * 32, 0x200);
    const uint64_t perTpc = alignUp(perWarp * maxWarpsPerSm * smPerTpc, 0x8000);
    return {perTpc, alignUp(perTpc * maxTpcPerGpc * gpcCount, 0x20000)};
}

}  // namespace nvl::hw
