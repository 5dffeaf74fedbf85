// A GPFIFO channel of the simulated GPU and the per-engine state it carries.
// All fields are guarded by the Sim lock; the GPFIFO processor thread and the
// RM code touch channels only while holding it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kdrv/sim/sim_memory.h"

namespace nvl::kdrv::sim {

// A host semaphore acquire the channel is parked on.
struct PendingAcquire {
    uint64_t va = 0;
    uint64_t payload = 0;
    uint32_t operation = 0;  // NVC86F_SEM_EXECUTE_OPERATION_*
    bool payload64 = false;
};

// Method shadow of an engine object bound to a subchannel: every method
// written lands here (indexed by method offset / 4); trigger methods act on it.
struct EngineMethods {
    std::array<uint32_t, 4096> m{};
    uint32_t get(uint32_t method) const { return m[(method >> 2) & 0xfff]; }
    void set(uint32_t method, uint32_t v) { m[(method >> 2) & 0xfff] = v; }
};

struct ComputeState {
    EngineMethods methods;
    // Inline QMD (SET_INLINE_QMD_ADDRESS_A/B + LOAD_INLINE_QMD_DATA).
    std::array<uint32_t, 96> inlineQmd{};
    // Inline-to-memory transfer (LAUNCH_DMA + LOAD_INLINE_DATA).
    bool i2mActive = false;
    uint64_t i2mDst = 0;
    uint32_t i2mLineLength = 0;
    uint32_t i2mLineCount = 0;
    uint32_t i2mPitch = 0;
    uint64_t i2mDone = 0;  // bytes written so far
    uint32_t i2mLaunch = 0;
};

// A grid the compute engine was given (SEND_PCAS with a schedule action, an
// inline QMD) and has not completed yet: it runs beside the channel's later
// methods. 'epoch': the engine's WAIT_FOR_IDLE count when it was scheduled
// (a grid never completes before one of an earlier epoch); 'order': when.
struct InFlightGrid {
    uint64_t qmdVa = 0;
    uint64_t epoch = 0;
    uint64_t order = 0;
};

struct Channel {
    // Identity.
    uint32_t hClient = 0;
    uint32_t hChannel = 0;
    uint32_t hGroup = 0;            // parent KEPLER_CHANNEL_GROUP_A, 0 if none
    uint32_t workSubmitToken = 0;
    uint32_t engineType = 0;        // NV_CHANNEL_ALLOC_PARAMS::engineType
    // The address space of the channel's GPU (every access goes through it).
    GpuVaSpace* va = nullptr;

    // Where the host reads from.
    std::shared_ptr<Backing> userd;
    uint64_t userdOffset = 0;
    std::shared_ptr<Backing> errorNotifier;  // NvNotification[] (may be null)
    uint64_t gpfifoVa = 0;
    uint32_t gpfifoEntries = 0;

    // Engine objects allocated on the channel (class ids).
    std::vector<uint32_t> engineClasses;
    bool scheduled = false;         // enabled through GPFIFO_SCHEDULE (of the TSG or the channel)

    // GPFIFO / push-buffer state.
    uint32_t gpGet = 0;
    // Host fetches entries up to the GP_PUT it read when a doorbell told it
    // the channel has work (notifiedPut), never by polling USERD; lastPut is
    // USERD's GP_PUT as the previous round saw it (what a BAR0 doorbell may
    // find: it can overtake the BAR1 write of a newer one, sim_gpu.h).
    uint32_t notifiedPut = 0;
    uint32_t lastPut = 0;
    std::vector<uint32_t> segment;  // the push-buffer segment being executed
    size_t segPos = 0;
    enum class Mode : uint8_t { None, Inc, NonInc, OneInc };
    Mode mode = Mode::None;
    uint32_t mthdAddr = 0;          // byte offset of the next method
    uint32_t mthdSubch = 0;
    uint32_t mthdCount = 0;
    std::array<uint32_t, 8> subchClass{};

    // Host semaphore registers.
    uint32_t semAddrLo = 0;
    uint32_t semAddrHi = 0;
    uint32_t semPayloadLo = 0;
    uint32_t semPayloadHi = 0;
    bool waiting = false;
    PendingAcquire acquire;

    // Engines.
    EngineMethods copy;
    ComputeState compute;
    std::vector<InFlightGrid> grids;  // scheduled, not yet complete (GpuEngine::completeGrids)

    // Errors.
    bool faulted = false;
    uint32_t errorCode = 0;
    uint64_t faultAddress = 0;
    // Injected faults (sim_control.h): the RC error the channel's next copy /
    // next launch stops it with, 0 for none.
    uint32_t injectCopyError = 0;
    uint32_t injectLaunchError = 0;

    bool hasEngineClass(uint32_t cls) const {
        for (uint32_t c : engineClasses)
            if (c == cls) return true;
        return false;
    }
};

}  // namespace nvl::kdrv::sim
