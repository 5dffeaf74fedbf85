// The simulated GPUs' front end: the GPFIFO processor (one for every GPU;
// each channel reaches memory through its own GPU's address space).
//
// One thread (started with the first channel, stopped with the last) polls
// the doorbell pages, fetches GPFIFO entries, decodes the push buffers and
// executes host methods itself; methods for the copy and compute engines go
// to sim_copy_engine.cpp and sim_compute.cpp. When nothing has work it spins
// briefly, then sleeps with growing intervals (up to ~200 us); a doorbell
// write or a new channel resets the backoff.
//
// Doorbells, as on Hopper: Host fetches a channel's entries only up to the
// GP_PUT it read from USERD after a doorbell (NOTIFY_CHANNEL_PENDING); a
// GP_PUT store without a doorbell after it is not seen. The doorbell page
// of a HOPPER_USERMODE_A allocated with bBar1Mapping is reached through
// BAR1, behind the CPU's earlier BAR1 writes (GP_PUT in video memory): Host
// reads the GP_PUT stored before it. The default page is BAR0, which may
// overtake BAR1 writes still in flight (RM flushes before its own BAR0
// doorbells on GH100 and later): the sim takes the worst case, Host reads
// GP_PUT as the previous round saw it, so an entry whose GP_PUT store and
// BAR0 doorbell fall in the same round waits for a later doorbell. (The sim
// cannot see a CPU read-back flush; a library ringing through BAR0 on the
// sim loses its doorbells.) One register serves every channel and the sim
// only sees its last value per round, so any doorbell makes Host read every
// channel's GP_PUT.
//
// Locking: everything here runs under the Sim lock (passed in), which the
// thread drops between rounds and while it sleeps.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <deque>
#include <vector>

#include "kdrv/sim/sim_channel.h"
#include "kdrv/sim/sim_control.h"
#include "kdrv/sim/sim_memory.h"

namespace nvl::kdrv::sim {

class GpuEngine {
public:
    explicit GpuEngine(std::mutex& lock);
    ~GpuEngine();
    GpuEngine(const GpuEngine&) = delete;
    GpuEngine& operator=(const GpuEngine&) = delete;

    // ---- Called with the Sim lock held.
    void addChannel(std::shared_ptr<Channel> ch);
    void removeChannel(const Channel* ch);
    Channel* findChannel(uint32_t hClient, uint32_t hChannel);
    const std::vector<std::shared_ptr<Channel>>& channels() const { return channels_; }
    // 'viaBar1': the page is mapped through BAR1 (HOPPER_USERMODE_A, bBar1Mapping).
    void addDoorbell(std::shared_ptr<Backing> page, bool viaBar1);
    void removeDoorbell(const Backing* page);
    // Reads the doorbells, then one pass over all channels; true if a
    // doorbell rang or any channel made progress.
    bool pumpOnce();
    // Does any channel have work it can do right now?
    bool hasRunnableWork();
    // The thread to join once the lock is dropped (a stopped worker), if any.
    std::thread takeRetired();
    // Nudges the worker out of its backoff.
    void kick();
    // Synchronous mode after process exit began: no worker; ioctls pump instead.
    bool exiting() const { return exiting_; }
    void clearAll();  // reset(): drops channels and doorbells, stops the worker

    // ---- Process exit (called without the lock): stop and join the worker.
    void shutdownForExit();

    // ---- Used by the engines (lock held).
    Counters& counters() { return counters_; }
    std::deque<LaunchRecord>& launches() { return launches_; }
    uint64_t nextLaunchSequence() { return ++launchSequence_; }
    // GPU time in ns (PTIMER): wall-clock based, strictly increasing.
    uint64_t now();
    // Stops the channel with an RC error, as RM's recovery does: the whole
    // TSG (every channel of the channel's group) stops, and each channel's
    // error notifier gets the error code and the faulting engine.
    void fault(Channel& ch, uint32_t errorCode, uint64_t faultVa, uint32_t engineType);
    // Injected faults (sim_control.h): the RC error the channel's next copy /
    // next launch must stop with (its own, else a process-wide one), or 0.
    // Taking it disarms it.
    uint32_t takeInjectedCopyError(Channel& ch);
    uint32_t takeInjectedLaunchError(Channel& ch);
    void injectAnyCopyError(uint32_t errorCode) { anyCopyError_ = errorCode; }
    void injectAnyLaunchError(uint32_t errorCode) { anyLaunchError_ = errorCode; }
    void nonStallInterrupt(Channel& ch);
    // Grids run beside the methods that follow them, as on the GPU: a
    // scheduled grid completes (its work, its QMD releases, its dependent
    // QMDs) at the start of the next pass over the channels, or earlier when
    // a host method waits for the engine to be idle (WFI, a release with
    // RELEASE_WFI_EN). Several in flight complete newest first (a later
    // short grid may finish before an earlier long one), except that the
    // compute engine's WAIT_FOR_IDLE orders those scheduled after it behind
    // those scheduled before it (computeBarrier()).
    void scheduleGrid(Channel& ch, uint64_t qmdVa) { ch.grids.push_back({qmdVa, gridEpoch_, ++gridOrder_}); }
    void computeBarrier() {
        ++gridEpoch_;
        ++counters_.computeWaitForIdles;
    }
    // Completes the grids in flight on the channels of 'scope's TSG (every
    // channel when null); true if there were any.
    bool completeGrids(const Channel* scope = nullptr);
    // Semaphore helpers shared by host, copy engine and compute (false: faulted).
    bool release(Channel& ch, uint64_t va, uint64_t payload, bool payload64, bool timestamp, uint32_t engineType);
    bool reduce(Channel& ch, uint64_t va, uint64_t payload, bool payload64, uint32_t op, bool isSigned,
                uint32_t engineType);
    // Called on NON_STALL_INTERRUPT (the Sim signals OS events).
    std::function<void(Channel&)> nonStallHook;
    // A test's kernel body (sim_control.h setKernelBody).
    KernelBody kernelBody;
    // NVC86F_SEM_EXECUTE_REDUCTION_* ops on a 32/64-bit value.
    static uint64_t applyReduction(uint64_t old, uint64_t payload, uint32_t op, bool payload64, bool isSigned);

private:
    void startWorkerLocked();
    void stopWorkerLocked();
    void run(uint64_t id);
    bool pollDoorbells();
    bool pumpChannels();  // one pass over all channels; true if any made progress
    void updateTimers();

    // Channel processing.
    bool step(Channel& ch);
    bool fetchEntry(Channel& ch);
    bool acquireSatisfied(Channel& ch, bool* faulted);
    void method(Channel& ch, uint32_t subch, uint32_t addr, uint32_t data);
    void hostMethod(Channel& ch, uint32_t addr, uint32_t data);
    void semExecute(Channel& ch, uint32_t data);
    void stop(Channel& ch, uint32_t errorCode, uint64_t faultVa, uint32_t engineType);

    std::mutex& lock_;
    std::vector<std::shared_ptr<Channel>> channels_;
    struct Doorbell {
        std::shared_ptr<Backing> page;
        bool viaBar1 = false;
    };
    std::vector<Doorbell> doorbells_;
    size_t rr_ = 0;  // round-robin start

    std::condition_variable cv_;
    std::thread worker_;
    std::vector<std::thread> retired_;
    uint64_t workerId_ = 0;   // id of the worker that should run; 0 = none
    uint64_t nextWorkerId_ = 0;
    bool kicked_ = false;
    bool exiting_ = false;

    uint32_t anyCopyError_ = 0;    // armed for the next copy on any channel
    uint32_t anyLaunchError_ = 0;  // armed for the next launch on any channel
    Counters counters_;
    std::deque<LaunchRecord> launches_;  // the oldest dropped in O(1) once full
    uint64_t launchSequence_ = 0;
    uint64_t gridEpoch_ = 0;  // compute WAIT_FOR_IDLEs so far
    uint64_t gridOrder_ = 0;  // grids scheduled so far
    uint64_t lastTime_ = 0;
    uint64_t timeBaseReal_ = 0;
    uint64_t timeBaseMono_ = 0;
};

// Engines (sim_copy_engine.cpp, sim_compute.cpp); lock held.
void copyEngineMethod(GpuEngine& gpu, Channel& ch, uint32_t method, uint32_t data);
void computeMethod(GpuEngine& gpu, Channel& ch, uint32_t method, uint32_t data);
// A scheduled grid completes (sim_compute.cpp).
void completeGrid(GpuEngine& gpu, Channel& ch, uint64_t qmdVa);

}  // namespace nvl::kdrv::sim
