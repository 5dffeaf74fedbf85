// HOPPER_COMPUTE_A: kernel launches are recorded, not run (nvlite's built-in
// copy and fill kernels excepted: sim_builtin.cpp does their work). A launch
// (SEND_PCAS_A + SEND_SIGNALING_PCAS2_B, an inline QMD) is scheduled and
// completes later, beside the channel's next methods (GpuEngine::scheduleGrid:
// in flight until the next pass, a host wait for idle, newest first unless a
// WAIT_FOR_IDLE separates them). On completion it reads the QMD (V04, 384
// bytes) from its GPU VA, records it with its grid, block, program address
// and constant buffer 0, then does the QMD's semaphore releases and runs its
// dependent QMDs. Also: report semaphores and inline-to-memory
// uploads (LAUNCH_DMA + LOAD_INLINE_DATA).
#include <algorithm>
#include <cstring>

#include "defs/compute_cbc0.h"
#include "defs/host_c86f.h"
#include "defs/rm_classes.h"
#include "defs/qmd_v04.h"
#include "kdrv/sim/sim_builtin.h"
#include "kdrv/sim/sim_gpu.h"
#include "kdrv/sim/sim_gpu_config.h"

namespace nvl::kdrv::sim {
namespace {

constexpr uint32_t kGr = nv::NV2080_ENGINE_TYPE_GRAPHICS;
constexpr int kMaxDependentDepth = 64;

// QMD reduction op -> host (NVC86F_SEM_EXECUTE_REDUCTION_*) op.
uint32_t hostReductionOp(uint32_t qmdOp) {
    switch (qmdOp) {
    case nv::NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_ADD: return nv::NVC86F_SEM_EXECUTE_REDUCTION_IADD;
    case nv::NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_MIN: return nv::NVC86F_SEM_EXECUTE_REDUCTION_IMIN;
    case nv::NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_MAX: return nv::NVC86F_SEM_EXECUTE_REDUCTION_IMAX;
    case nv::NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_INC: return nv::NVC86F_SEM_EXECUTE_REDUCTION_INC;
    case nv::NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_DEC: return nv::NVC86F_SEM_EXECUTE_REDUCTION_DEC;
    case nv::NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_AND: return nv::NVC86F_SEM_EXECUTE_REDUCTION_IAND;
    case nv::NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_OR: return nv::NVC86F_SEM_EXECUTE_REDUCTION_IOR;
    default: return nv::NVC86F_SEM_EXECUTE_REDUCTION_IXOR;
    }
}

void launch(GpuEngine& gpu, Channel& ch, uint64_t qmdVa, int depth) {
    if (ch.faulted) return;
    if (const uint32_t injected = gpu.takeInjectedLaunchError(ch)) {
        // The grid stops before it completes: no releases, no dependent QMDs.
        gpu.fault(ch, injected, injected == nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT ? qmdVa : 0, kGr);
        return;
    }
    LaunchRecord rec;
    uint64_t faultVa = 0;
    if (!ch.va->read(qmdVa, rec.qmd.data(), rec.qmd.size(), &faultVa)) {
        gpu.fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, kGr);
        return;
    }
    const uint8_t* q = rec.qmd.data();
    auto get = [q](nv::MultiWordField f) { return nv::qmdGet(q, f); };
    rec.hClient = ch.hClient;
    rec.hChannel = ch.hChannel;
    rec.qmdVa = qmdVa;
    rec.qmdMajorVersion = static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_QMD_MAJOR_VERSION));
    rec.grid[0] = static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_GRID_WIDTH));
    rec.grid[1] = static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_GRID_HEIGHT));
    rec.grid[2] = static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_GRID_DEPTH));
    if (get(nv::NVCBC0_QMDV04_00_QMD_TYPE) == nv::NVCBC0_QMDV04_00_QMD_TYPE_GRID_GPC_CGA) {
        // A grid of clusters: GRID_* count clusters, GPC_CGA_* blocks per
        // cluster (what the H200 runs); the record holds the blocks.
        rec.grid[0] *= static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_GPC_CGA_WIDTH));
        rec.grid[1] *= static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_GPC_CGA_HEIGHT));
        rec.grid[2] *= static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_GPC_CGA_DEPTH));
    }
    rec.block[0] = static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0));
    rec.block[1] = static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION1));
    rec.block[2] = static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION2));
    rec.programAddress = (get(nv::NVCBC0_QMDV04_00_PROGRAM_ADDRESS_UPPER) << 32) |
                         get(nv::NVCBC0_QMDV04_00_PROGRAM_ADDRESS_LOWER);
    rec.sharedMemoryBytes = static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE));
    rec.registerCount = static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_REGISTER_COUNT));
    if (get(nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID(0))) {
        rec.cb0Va = ((get(nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(0)) << 32) |
                     get(nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0)))
                    << 6;
        rec.cb0Size = static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_SIZE_SHIFTED4(0)) << 4);
        rec.cb0.resize(std::min<uint32_t>(rec.cb0Size, config::kMaxRecordedCb0));
        if (!ch.va->read(rec.cb0Va, rec.cb0.data(), rec.cb0.size(), &faultVa)) {
            gpu.fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, kGr);
            return;
        }
    }
    rec.sequence = gpu.nextLaunchSequence();
    ++gpu.counters().launches;
    BuiltinRun builtin = runBuiltinKernel(*ch.va, rec, &faultVa);
    if (builtin == BuiltinRun::NotBuiltin && gpu.kernelBody) {
        // A test's stand-in for the kernel.
        struct Memory final : KernelMemory {
            GpuVaSpace& va;
            uint64_t* faultVa;
            Memory(GpuVaSpace& v, uint64_t* f) : va(v), faultVa(f) {}
            bool read(uint64_t at, void* dst, size_t n) override { return va.read(at, dst, n, faultVa); }
            bool write(uint64_t at, const void* src, size_t n) override { return va.write(at, src, n, faultVa); }
        } memory(*ch.va, &faultVa);
        if (!gpu.kernelBody(rec, memory)) builtin = BuiltinRun::Faulted;
    }
    auto& log = gpu.launches();
    if (log.size() >= config::kMaxRecordedLaunches) log.pop_front();
    log.push_back(std::move(rec));
    if (builtin == BuiltinRun::Faulted) {
        // A bad address in the kernel: the grid never completes.
        gpu.fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, kGr);
        return;
    }

    // The grid "completes" at once: its releases follow.
    for (uint32_t i = 0; i < 2; ++i) {
        if (!get(nv::NVCBC0_QMDV04_00_RELEASE_ENABLE(i))) continue;
        const uint64_t va = (get(nv::NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_ADDR_UPPER(i)) << 32) |
                            get(nv::NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_ADDR_LOWER(i));
        const uint64_t payload = (get(nv::NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_PAYLOAD_UPPER(i)) << 32) |
                                 get(nv::NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_PAYLOAD_LOWER(i));
        const uint32_t structure = static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE(i)));
        const bool p64 = structure == nv::NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE_SEMAPHORE_TWO_WORDS ||
                         (structure == nv::NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE_SEMAPHORE_FOUR_WORDS &&
                          get(nv::NVCBC0_QMDV04_00_RELEASE_PAYLOAD64B(i)));
        bool ok;
        if (get(nv::NVCBC0_QMDV04_00_RELEASE_REDUCTION_ENABLE(i))) {
            ok = gpu.reduce(ch, va, payload, p64,
                            hostReductionOp(static_cast<uint32_t>(get(nv::NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP(i)))),
                            get(nv::NVCBC0_QMDV04_00_RELEASE_REDUCTION_FORMAT(i)) ==
                                nv::NVCBC0_QMDV04_00_RELEASE_REDUCTION_FORMAT_SIGNED,
                            kGr);
        } else {
            ok = gpu.release(ch, va, p64 ? payload : payload & 0xffffffffull, p64,
                             structure == nv::NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE_SEMAPHORE_FOUR_WORDS, kGr);
        }
        if (!ok) return;
    }

    // Dependent QMDs the grid schedules when it completes.
    for (uint32_t i = 0; i < 2; ++i) {
        if (!get(nv::NVCBC0_QMDV04_00_DEPENDENT_QMD_ENABLE(i)) ||
            get(nv::NVCBC0_QMDV04_00_DEPENDENT_QMD_ACTION(i)) != nv::NVCBC0_QMDV04_00_DEPENDENT_QMD_ACTION_QMD_SCHEDULE)
            continue;
        const uint64_t next = get(i == 0 ? nv::NVCBC0_QMDV04_00_DEPENDENT_QMD0_POINTER
                                         : nv::NVCBC0_QMDV04_00_DEPENDENT_QMD1_POINTER)
                              << 8;
        if (depth >= kMaxDependentDepth) {
            gpu.fault(ch, nv::ROBUST_CHANNEL_GR_EXCEPTION, next, kGr);
            return;
        }
        launch(gpu, ch, next, depth + 1);
        if (ch.faulted) return;
    }
}

bool schedules(uint32_t action) {
    switch (action) {
    case nv::NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_SCHEDULE:
    case nv::NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE:
    case nv::NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE:
    case nv::NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE:
    case nv::NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_PREFETCH_COPY_FORCE_REQUIRE_SCHEDULING:
        return true;
    default:
        return false;
    }
}

void reportSemaphore(GpuEngine& gpu, Channel& ch, uint32_t d) {
    const EngineMethods& m = ch.compute.methods;
    const uint64_t va = (nv::NVCBC0_SET_REPORT_SEMAPHORE_A_OFFSET_UPPER.get(m.get(nv::NVCBC0_SET_REPORT_SEMAPHORE_A))
                         << 32) |
                        m.get(nv::NVCBC0_SET_REPORT_SEMAPHORE_B);
    const uint32_t payload = m.get(nv::NVCBC0_SET_REPORT_SEMAPHORE_C);
    if (nv::NVCBC0_SET_REPORT_SEMAPHORE_D_OPERATION.get(d) != nv::NVCBC0_SET_REPORT_SEMAPHORE_D_OPERATION_RELEASE)
        return;  // TRAP and the rest: nothing to model
    bool ok;
    if (nv::NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_ENABLE.get(d)) {
        ok = gpu.reduce(ch, va, payload, false,
                        hostReductionOp(static_cast<uint32_t>(nv::NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_OP.get(d))),
                        nv::NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_FORMAT.get(d) ==
                            nv::NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_FORMAT_SIGNED_32,
                        kGr);
    } else {
        ok = gpu.release(ch, va, payload, false,
                         nv::NVCBC0_SET_REPORT_SEMAPHORE_D_STRUCTURE_SIZE.get(d) ==
                             nv::NVCBC0_SET_REPORT_SEMAPHORE_D_STRUCTURE_SIZE_FOUR_WORDS,
                         kGr);
    }
    if (ok && nv::NVCBC0_SET_REPORT_SEMAPHORE_D_AWAKEN_ENABLE.get(d)) gpu.nonStallInterrupt(ch);
}

// Inline-to-memory: LAUNCH_DMA starts, each LOAD_INLINE_DATA word fills the
// next 4 bytes of the current line; each line starts on a new word.
void i2mLaunch(GpuEngine& gpu, Channel& ch, uint32_t launchWord) {
    ComputeState& cs = ch.compute;
    const EngineMethods& m = cs.methods;
    if (nv::NVCBC0_LAUNCH_DMA_DST_MEMORY_LAYOUT.get(launchWord) != nv::NVCBC0_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH) {
        gpu.fault(ch, nv::ROBUST_CHANNEL_GR_EXCEPTION, 0, kGr);
        return;
    }
    cs.i2mDst = (nv::NVCBC0_OFFSET_OUT_UPPER_VALUE.get(m.get(nv::NVCBC0_OFFSET_OUT_UPPER)) << 32) |
                m.get(nv::NVCBC0_OFFSET_OUT);
    cs.i2mLineLength = m.get(nv::NVCBC0_LINE_LENGTH_IN);
    cs.i2mLineCount = m.get(nv::NVCBC0_LINE_COUNT);
    cs.i2mPitch = m.get(nv::NVCBC0_PITCH_OUT);
    cs.i2mDone = 0;
    cs.i2mLaunch = launchWord;
    cs.i2mActive = cs.i2mLineLength != 0 && cs.i2mLineCount != 0;
}

void i2mComplete(GpuEngine& gpu, Channel& ch) {
    ComputeState& cs = ch.compute;
    cs.i2mActive = false;
    const uint32_t l = cs.i2mLaunch;
    if (nv::NVCBC0_LAUNCH_DMA_COMPLETION_TYPE.get(l) == nv::NVCBC0_LAUNCH_DMA_COMPLETION_TYPE_RELEASE_SEMAPHORE) {
        const EngineMethods& m = cs.methods;
        const uint64_t va =
            (nv::NVCBC0_SET_I2M_SEMAPHORE_A_OFFSET_UPPER.get(m.get(nv::NVCBC0_SET_I2M_SEMAPHORE_A)) << 32) |
            m.get(nv::NVCBC0_SET_I2M_SEMAPHORE_B);
        if (!gpu.release(ch, va, m.get(nv::NVCBC0_SET_I2M_SEMAPHORE_C), false,
                         nv::NVCBC0_LAUNCH_DMA_SEMAPHORE_STRUCT_SIZE.get(l) ==
                             nv::NVCBC0_LAUNCH_DMA_SEMAPHORE_STRUCT_SIZE_FOUR_WORDS,
                         kGr))
            return;
    }
    if (nv::NVCBC0_LAUNCH_DMA_INTERRUPT_TYPE.get(l) == nv::NVCBC0_LAUNCH_DMA_INTERRUPT_TYPE_INTERRUPT)
        gpu.nonStallInterrupt(ch);
}

void i2mData(GpuEngine& gpu, Channel& ch, uint32_t word) {
    ComputeState& cs = ch.compute;
    if (!cs.i2mActive) return;  // data without a launch: dropped, as the hardware does
    const uint64_t wordsPerLine = (uint64_t{cs.i2mLineLength} + 3) / 4;
    const uint64_t line = cs.i2mDone / wordsPerLine;
    const uint64_t col = (cs.i2mDone % wordsPerLine) * 4;
    const uint64_t n = std::min<uint64_t>(4, cs.i2mLineLength - col);
    uint64_t faultVa = 0;
    if (!ch.va->write(cs.i2mDst + line * cs.i2mPitch + col, &word, n, &faultVa)) {
        gpu.fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, kGr);
        return;
    }
    gpu.counters().bytesCopied += n;
    if (++cs.i2mDone == wordsPerLine * cs.i2mLineCount) i2mComplete(gpu, ch);
}

}  // namespace

void completeGrid(GpuEngine& gpu, Channel& ch, uint64_t qmdVa) { launch(gpu, ch, qmdVa, 0); }

void computeMethod(GpuEngine& gpu, Channel& ch, uint32_t method, uint32_t data) {
    ComputeState& cs = ch.compute;
    cs.methods.set(method, data);
    if (method >= nv::NVCBC0_LOAD_INLINE_QMD_DATA(0) && method <= nv::NVCBC0_LOAD_INLINE_QMD_DATA(95)) {
        const uint32_t i = (method - nv::NVCBC0_LOAD_INLINE_QMD_DATA(0)) / 4;
        cs.inlineQmd[i] = data;
        const uint32_t a = cs.methods.get(nv::NVCBC0_SET_INLINE_QMD_ADDRESS_A);
        const bool is384 = nv::NVCBC0_SET_INLINE_QMD_ADDRESS_A_INLINE_SIZE.get(a) ==
                           nv::NVCBC0_SET_INLINE_QMD_ADDRESS_A_INLINE_SIZE_INLINE_384;
        const uint32_t words = is384 ? 96 : 64;
        if (i + 1 == words) {
            // The last word: the QMD goes to memory at the inline address and is scheduled.
            const uint64_t qmdVa =
                ((nv::NVCBC0_SET_INLINE_QMD_ADDRESS_A_QMD_ADDRESS_SHIFTED8_UPPER.get(a) << 32) |
                 cs.methods.get(nv::NVCBC0_SET_INLINE_QMD_ADDRESS_B))
                << 8;
            uint64_t faultVa = 0;
            if (!ch.va->write(qmdVa, cs.inlineQmd.data(), words * 4, &faultVa)) {
                gpu.fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, kGr);
                return;
            }
            gpu.scheduleGrid(ch, qmdVa);
        }
        return;
    }
    switch (method) {
    case nv::NVCBC0_SEND_SIGNALING_PCAS2_B:
        if (schedules(static_cast<uint32_t>(nv::NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION.get(data))))
            gpu.scheduleGrid(ch, uint64_t{cs.methods.get(nv::NVCBC0_SEND_PCAS_A)} << 8);
        break;
    case nv::NVCBC0_SEND_SIGNALING_PCAS_B:
        if (nv::NVCBC0_SEND_SIGNALING_PCAS_B_SCHEDULE.get(data))
            gpu.scheduleGrid(ch, uint64_t{cs.methods.get(nv::NVCBC0_SEND_PCAS_A)} << 8);
        break;
    case nv::NVCBC0_WAIT_FOR_IDLE:
        // The engine's own barrier: grids after it start once those before it
        // are done. The host does not wait for it (its later methods, host
        // semaphore releases included, go on at once).
        gpu.computeBarrier();
        break;
    case nv::NVCBC0_SET_REPORT_SEMAPHORE_D:
        reportSemaphore(gpu, ch, data);
        break;
    case nv::NVCBC0_LAUNCH_DMA:
        i2mLaunch(gpu, ch, data);
        break;
    case nv::NVCBC0_LOAD_INLINE_DATA:
        i2mData(gpu, ch, data);
        break;
    default:
        // SET_OBJECT, window/local-memory setup, cache invalidates, ...: state
        // the shadow keeps; nothing to execute.
        break;
    }
}

}  // namespace nvl::kdrv::sim
