#include "hw/compute.h"

#include <algorithm>
#include <cstring>

#include "defs/compute_cbc0.h"
#include "defs/host_c86f.h"

namespace nvl::hw {
namespace {

constexpr uint64_t align(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Constant bank 0 on sm_90: the driver area before the parameters.
constexpr uint32_t kCbufBlockDim = 0x00;    // blockDim.x/y/z, 32-bit each
constexpr uint32_t kCbufGridDim = 0x0c;     // gridDim.x/y/z
constexpr uint32_t kCbufSharedWindow = 0x18;
constexpr uint32_t kCbufLocalWindow = 0x20;
constexpr uint32_t kCbufStackTop = 0x28;
constexpr uint32_t kStackTop = 0xfffdc0;

// Shared-memory carveouts of an sm_90 SM (KiB) and their QMD encoding (KiB / 4 + 1).
constexpr uint32_t kCarveoutsKiB[] = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
constexpr uint32_t smConfig(uint32_t kib) { return kib / 4 + 1; }

}  // namespace

uint32_t Launch::sharedBytes(const KernelDescriptor& k, uint32_t dynamicSharedBytes) {
    return static_cast<uint32_t>(align(k.sharedWindowBytes + dynamicSharedBytes, 128));
}

size_t Launch::dataBytes(const KernelDescriptor& k) { return align(k.cbuf0Bytes, 256) + QmdV04::kBytes; }

QmdV04 Launch::makeTemplate(const KernelDescriptor& k, const ComputeState& s) {
    using namespace nv;
    QmdV04 q;
    q.set(NVCBC0_QMDV04_00_QMD_MAJOR_VERSION, NVCBC0_QMDV04_00_QMD_MAJOR_VERSION_4);
    q.set(NVCBC0_QMDV04_00_QMD_TYPE, NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA);
    q.set(NVCBC0_QMDV04_00_QMD_GROUP_ID, 0x3f);
    q.set(NVCBC0_QMDV04_00_SASS_VERSION, s.smVersion);
    q.set(NVCBC0_QMDV04_00_PROGRAM_ADDRESS_LOWER, k.programVa & 0xffffffffu);
    q.set(NVCBC0_QMDV04_00_PROGRAM_ADDRESS_UPPER, k.programVa >> 32);
    q.set(NVCBC0_QMDV04_00_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED, (k.programVa >> 8) & 0xffffffffu);
    q.set(NVCBC0_QMDV04_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED, k.programVa >> 40);
    q.set(NVCBC0_QMDV04_00_PROGRAM_PREFETCH_SIZE, std::min<uint32_t>(k.programBytes >> 8, 0x1ff));
    q.set(NVCBC0_QMDV04_00_REGISTER_COUNT, k.registers);
    q.set(NVCBC0_QMDV04_00_BARRIER_COUNT, std::max<uint32_t>(k.barriers, 1));
    q.set(NVCBC0_QMDV04_00_API_VISIBLE_CALL_LIMIT, NVCBC0_QMDV04_00_API_VISIBLE_CALL_LIMIT_NO_CHECK);
    q.set(NVCBC0_QMDV04_00_SAMPLER_INDEX, NVCBC0_QMDV04_00_SAMPLER_INDEX_VIA_HEADER_INDEX);
    // Copies and earlier kernels wrote memory this one may read: start clean.
    q.set(NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_HEADER_CACHE, 1);
    q.set(NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_SAMPLER_CACHE, 1);
    q.set(NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_DATA_CACHE, 1);
    q.set(NVCBC0_QMDV04_00_INVALIDATE_SHADER_DATA_CACHE, 1);
    // Its writes reach system memory before the grid counts as done.
    q.set(NVCBC0_QMDV04_00_CWD_MEMBAR_TYPE, NVCBC0_QMDV04_00_CWD_MEMBAR_TYPE_L1_SYSMEMBAR);
    q.set(NVCBC0_QMDV04_00_MAX_SM_CONFIG_SHARED_MEM_SIZE, smConfig(s.maxSmSharedKiB));
    // Constant bank 0 moves every launch: never serve it from the cache.
    q.set(NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID(0), 1);
    q.set(NVCBC0_QMDV04_00_CONSTANT_BUFFER_INVALIDATE(0), 1);
    q.set(NVCBC0_QMDV04_00_CONSTANT_BUFFER_SIZE_SHIFTED4(0), align(k.cbuf0Bytes, 16) >> 4);
    for (const ConstantBankBinding& b : k.banks) {
        q.set(NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID(b.index), 1);
        // __constant__ data can be rewritten between launches by plain copies.
        q.set(NVCBC0_QMDV04_00_CONSTANT_BUFFER_INVALIDATE(b.index), 1);
        q.set(NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(b.index), (b.va >> 6) & 0xffffffffu);
        q.set(NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(b.index), b.va >> 38);
        q.set(NVCBC0_QMDV04_00_CONSTANT_BUFFER_SIZE_SHIFTED4(b.index), align(b.bytes, 16) >> 4);
    }
    return q;
}

uint64_t Launch::write(const Channel::DataSlot& slot, const QmdV04& tmpl, const KernelDescriptor& k,
                       const LaunchGeometry& g, const void* params, size_t paramBytes, const ComputeState& s) {
    using namespace nv;
    // Constant bank 0 first (64-byte aligned: the QMD takes its address >> 6).
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
    uint8_t* cbuf = slot.cpu;
    std::memcpy(cbuf, driver, sizeof driver);
    std::memset(cbuf + sizeof driver, 0, k.paramBase - sizeof driver);
    if (paramBytes) std::memcpy(cbuf + k.paramBase, params, paramBytes);

    // Then the QMD, 256-byte aligned after it (SEND_PCAS_A takes its address >> 8).
    QmdV04 q = tmpl;
    q.set(NVCBC0_QMDV04_00_GRID_WIDTH, g.grid[0]);
    q.set(NVCBC0_QMDV04_00_GRID_HEIGHT, g.grid[1]);
    q.set(NVCBC0_QMDV04_00_GRID_DEPTH, g.grid[2]);
    q.set(NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0, g.block[0]);
    q.set(NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION1, g.block[1]);
    q.set(NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION2, g.block[2]);
    const uint32_t shared = sharedBytes(k, g.dynamicSharedBytes);
    q.set(NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE, shared);
    uint32_t carveout = s.maxSmSharedKiB;
    for (uint32_t kib : kCarveoutsKiB)
        if (kib * 1024 >= shared && kib <= s.maxSmSharedKiB) {
            carveout = kib;
            break;
        }
    q.set(NVCBC0_QMDV04_00_MIN_SM_CONFIG_SHARED_MEM_SIZE, smConfig(carveout));
    q.set(NVCBC0_QMDV04_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE, smConfig(carveout));
    q.set(NVCBC0_QMDV04_00_SHADER_LOCAL_MEMORY_HIGH_SIZE, s.localBytesPerThread);
    q.set(NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0), (slot.va >> 6) & 0xffffffffu);
    q.set(NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(0), slot.va >> 38);
    const size_t qmdOffset = align(k.cbuf0Bytes, 256);
    q.copyTo(slot.cpu + qmdOffset);
    return slot.va + qmdOffset;
}

void Launch::push(PushWriter& w, uint64_t qmdVa) {
    using namespace nv;
    w.inc(Subchannel::Compute, NVCBC0_SEND_PCAS_A, {static_cast<uint32_t>(qmdVa >> 8)});
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
    w.inc(Subchannel::Compute, NVCBC0_SET_SHADER_LOCAL_MEMORY_A, {hi32(va), lo32(va)});
    w.inc(Subchannel::Compute, NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A,
          {hi32(bytesPerTpc), lo32(bytesPerTpc), 0xff});
}

void waitForSemaphore(PushWriter& w, uint64_t semaphoreVa, uint64_t value) {
    using namespace nv;
    w.inc(Subchannel::Host, NVC86F_SEM_ADDR_LO,
          {lo32(semaphoreVa), hi32(semaphoreVa), lo32(value), hi32(value),
           NVC86F_SEM_EXECUTE_OPERATION.value(NVC86F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ) |
               NVC86F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG.value(NVC86F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG_EN) |
               NVC86F_SEM_EXECUTE_PAYLOAD_SIZE.value(NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT)});
}

LocalMemorySize localMemorySize(uint32_t bytesPerThread, uint32_t maxWarpsPerSm, uint32_t smPerTpc,
                                uint32_t maxTpcPerGpc, uint32_t gpcCount) {
    const uint64_t perWarp = align(static_cast<uint64_t>(bytesPerThread) * 32, 0x200);
    const uint64_t perTpc = align(perWarp * maxWarpsPerSm * smPerTpc, 0x8000);
    return {perTpc, align(perTpc * maxTpcPerGpc * gpcCount, 0x20000)};
}

}  // namespace nvl::hw
