// Test control of the simulated driver (NVLITE_DEVICE=sim).
//
// Tests drive the library (or the sim directly through nvl::kdrv::simKdrv())
// and use these calls to look behind the seam: what the simulated GPU
// launched, how much it copied, which channels faulted, and to provoke
// faults. All calls are thread safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace nvl::kdrv::sim {

// One compute launch (SEND_PCAS_A + SEND_SIGNALING_PCAS2_B, or a dependent
// QMD it scheduled), as the simulated GPU saw it. Kernels are not run yet.
struct LaunchRecord {
    uint64_t sequence = 0;   // global launch order, from 1
    uint32_t hClient = 0;    // the channel that launched it
    uint32_t hChannel = 0;
    uint64_t qmdVa = 0;
    std::array<uint8_t, 384> qmd{};  // the QMD (Hopper V04) as read at launch
    uint32_t qmdMajorVersion = 0;
    uint32_t grid[3] = {0, 0, 0};
    uint32_t block[3] = {0, 0, 0};
    uint64_t programAddress = 0;
    uint32_t sharedMemoryBytes = 0;
    uint32_t registerCount = 0;
    uint64_t cb0Va = 0;           // constant buffer 0 (kernel parameters); 0 if not valid
    uint32_t cb0Size = 0;
    std::vector<uint8_t> cb0;     // its contents at launch (up to 64 KiB)
};

struct Counters {
    uint64_t gpfifoEntries = 0;      // GPFIFO entries fetched
    uint64_t methods = 0;            // methods executed
    uint64_t copies = 0;             // copy-engine LAUNCH_DMA with a transfer
    uint64_t bytesCopied = 0;        // bytes written by copies and fills
    uint64_t launches = 0;           // compute launches
    uint64_t semaphoreReleases = 0;  // host, copy-engine and QMD releases
    uint64_t semaphoreAcquires = 0;  // acquires satisfied
    uint64_t computeWaitForIdles = 0;  // the compute engine's WAIT_FOR_IDLE methods
    uint64_t nonStallInterrupts = 0;
    uint64_t faults = 0;             // channels stopped by a fault
    uint64_t doorbells = 0;          // doorbell writes noticed
    uint64_t ioctls = 0;             // ioctls on the sim's device files (RM and UVM)
};

struct ChannelInfo {
    uint32_t hClient = 0;
    uint32_t hChannel = 0;
    uint32_t workSubmitToken = 0;
    uint32_t gpGet = 0;
    uint32_t gpPut = 0;
    bool waiting = false;       // parked on an unsatisfied semaphore acquire
    bool faulted = false;
    uint32_t errorCode = 0;     // ROBUST_CHANNEL_* written to the error notifier
    uint64_t faultAddress = 0;  // GPU VA that faulted (MMU faults)
};

// A fault the simulated GPU produces on request, as the real one would for a
// bad address or a trap: the channel's TSG stops, its error notifiers get the
// RC error, and the faulting work never releases its semaphores.
enum class InjectedFault {
    NextCopy,        // the next copy-engine transfer (LAUNCH_DMA) touches an unmapped
                     // address: ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, copy engine
    NextLaunch,      // the next kernel launch writes to an unmapped (or freed) address:
                     // ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, graphics engine
    NextLaunchTrap,  // the next kernel launch executes __trap() (an SM exception):
                     // ROBUST_CHANNEL_GR_EXCEPTION, graphics engine
};

// What a test's kernel body reaches: the launching channel's GPU memory
// (false where nothing is mapped).
class KernelMemory {
public:
    virtual bool read(uint64_t va, void* dst, size_t n) = 0;
    virtual bool write(uint64_t va, const void* src, size_t n) = 0;

protected:
    ~KernelMemory() = default;
};
// A test's stand-in for the kernels the simulated GPU does not run: called
// when each launch (other than nvlite's built-in kernels) completes, before
// its releases, on the simulator's thread (no sim call from inside). False
// stops the grid with an MMU fault. An empty body: none (the default).
using KernelBody = std::function<bool(const LaunchRecord&, KernelMemory&)>;
void setKernelBody(KernelBody body);

// Snapshot of the recorded launches (oldest first) and clearing it.
std::vector<LaunchRecord> launches();
void clearLaunches();

Counters counters();
std::vector<ChannelInfo> channels();

// Arms a one-shot fault on a channel. False if the channel does not exist.
bool injectFault(uint32_t hClient, uint32_t hChannel, InjectedFault fault);
// Arms a one-shot fault for the next copy (NextCopy) or launch (NextLaunch*)
// on whichever channel comes first (for tests that see only the public API;
// libnvlite_sim.so exports it as nvliteSimInjectFault, include/nvlite/nvlite.h).
// A channel's own armed fault goes first.
void injectFaultAnyChannel(InjectedFault fault);
// Disarms every injected fault not taken yet.
void clearInjectedFaults();

// Waits until no channel has work it can make progress on (all caught up,
// faulted, or waiting on an acquire that nothing else will satisfy).
// False on timeout.
bool waitIdle(int timeoutMs);

// Video memory accounting of the simulated GPU.
uint64_t vidmemTotal();
uint64_t vidmemUsed();

// Frees everything the sim holds for the process: RM clients and objects,
// UVM state, GPU mappings, channels (the GPFIFO thread stops), counters and
// the launch log. Open sim file descriptors stay valid but lose their
// registrations and mmap contexts.
void reset();

// Whether libnvlite picked the simulated driver as its seam
// (NVLITE_DEVICE=sim and nvliteSimKdrv was called).
bool inUse();

}  // namespace nvl::kdrv::sim

namespace nvl::kdrv {

class Kdrv;
// The simulated driver itself, for tests that drive it directly with raw
// ioctls (they link the simulator's objects).
Kdrv& simKdrv();

}  // namespace nvl::kdrv
