// A GPFIFO channel with one engine object bound (copy engine or compute).
//
// Work is submitted by writing methods into the channel's push-buffer ring,
// one GPFIFO entry, GP_PUT and the doorbell: no system call. Every
// submission ends by releasing the channel's timeline semaphore (64-bit, in
// host memory) with the submission's number, so completion is a load.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "hw/cpu.h"
#include "hw/gpu.h"
#include "hw/push_buffer.h"
#include "hw/ring_space.h"

namespace nvl::hw {

enum class EngineKind { Copy, Compute };

class Channel;

// Channels whose work waits on each other's through semaphore acquires (the
// channels of one context). RM stops only the faulting channel's TSG; a
// channel of another TSG parked on an acquire of its timeline would then wait
// forever. So a wait on a member gives up with the error of any faulted
// member. Polling it takes no lock. The scope must outlive its members; a
// channel leaves it when destroyed (not while another thread waits on the
// same scope).
class FaultScope {
public:
    static constexpr size_t kMaxChannels = 64;
    FaultScope() = default;
    FaultScope(const FaultScope&) = delete;
    FaultScope& operator=(const FaultScope&) = delete;
    // The first fault any member (present or gone) reported, else OK. A
    // fault is remembered: the channels that wait for a faulted one must keep
    // giving up after it is destroyed.
    Status error() const;
    // The member whose timeline semaphore is at 'va', or nullptr (a report's
    // lookup: members stay until their context's channels go).
    const Channel* withSemaphore(uint64_t va) const;
    // Whether a compute member other than 'self' has work the GPU has not
    // finished (the launch order 'auto': the context's compute channels
    // share one TSG, so one engine).
    bool otherComputeBusy(const Channel& self) const;

private:
    friend class Channel;
    bool add(const Channel* ch);
    void remove(const Channel* ch);

    void remember(const Status& s) const;

    std::mutex joinMutex_;  // serialises add and remove; error() takes no lock while all is well
    mutable std::mutex firstMutex_;
    mutable Status first_;                      // written once, before hasFirst_
    mutable std::atomic<bool> hasFirst_{false};
    std::array<std::atomic<const Channel*>, kMaxChannels> members_{};
    std::atomic<size_t> used_{0};  // slots in use or freed
};

// Methods making the channel they are written to wait until the 64-bit
// semaphore at 'va' reaches 'value' (Channel::kWaitDwords of them).
// 'switchTsg': a failed acquire lets the runlist switch to another TSG
// (always so for waits on other channels, which may be in other TSGs).
void writeAcquire(PushWriter& w, uint64_t va, uint64_t value, bool switchTsg = true);

class Channel {
public:
    // Allocates the channel in a channel group (TSG) with a context share,
    // binds its engine object and registers it with UVM.
    static Result<std::unique_ptr<Channel>> create(Gpu& gpu, uint32_t hChannelGroup, uint32_t hContextShare,
                                                   uint32_t engineType, EngineKind kind);
    ~Channel();
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    EngineKind kind() const { return kind_; }
    uint32_t handle() const { return object_.handle(); }
    Gpu& gpu() const { return gpu_; }

    template <class Fill>
    Result<uint64_t> submit(size_t maxDwords, Fill&& fill) {
        return submitWithData(maxDwords, 0, [&](PushWriter& w, const DataSlot&) { fill(w); });
    }

    // Room the GPU reads during a submission besides its methods (launch
    // descriptors and constant buffers), in the channel's data ring.
    struct DataSlot {
        uint8_t* cpu = nullptr;  // write-combined: write it, never read it back
        uint64_t va = 0;
        // Where and what this submission must release when the fill does the
        // release itself (Completion::ByFill): the channel's timeline.
        uint64_t timelineVa = 0;
        uint64_t timelineValue = 0;
    };
    // Who moves the timeline when the submission's work is done: the channel
    // (a host semaphore release at the end) or the fill's own methods (the
    // launch descriptor's release semaphore).
    enum class Completion { Channel, ByFill };
    // Writes up to 'maxDwords' of methods through 'fill(PushWriter&, const
    // DataSlot&)', then the timeline release, and submits; 'fill' also gets
    // 'dataBytes' (256-byte aligned, may be 0) of data-ring space to write.
    // Returns the submission's timeline value. 'fill' runs under the
    // channel's submit lock. submit() is the same without data.
    // 'waitsOnOthers': 'fill' writes waits for other channels (the launch
    // order 'auto' keeps such a submission's order by acquire).
    template <class Fill>
    Result<uint64_t> submitWithData(size_t maxDwords, size_t dataBytes, Fill&& fill,
                                    Completion completion = Completion::Channel, bool waitsOnOthers = false) {
        std::lock_guard lock(submitMutex_);
        NVL_ASSIGN_OR_RETURN(Reserved r,
                             beginLocked(maxDwords + kReleaseDwords + kWaitDwords, dataBytes, waitsOnOthers));
        fill(r.writer, r.data);
        return endLocked(r, completion);
    }
    // Compute channels of GPUs whose launches release semaphores themselves:
    // a submission first waits (host acquire) for the channel's previous one
    // instead of ending with a wait-for-idle, which would stall the other
    // channels of the TSG while a kernel runs.
    void setOrderedByAcquire(bool on) { orderedByAcquire_ = on; }
    // How an ordered compute channel keeps its submissions in order, from
    // NVLITE_LAUNCH_ORDER (measured on the H200 by make bench-compare; the
    // options and their facts: lib/hw/LAUNCH_ORDER.md). Each applies only
    // when the channel's previous submission has not completed yet:
    //   auto          wfi when nothing else is in flight on the engine: no
    //                 other compute channel of its fault scope has
    //                 unfinished work and the submission waits for no other
    //                 channel; acquire otherwise (default)
    //   acquire       host semaphore acquire of the previous value; when it
    //                 fails the runlist may switch to another TSG
    //   acquire-spin  the same acquire, polling without switching TSG (the
    //                 awaited grid runs in this TSG: nothing to wait for elsewhere)
    //   wfi           the compute engine's WAIT_FOR_IDLE before the submission
    //   host-wfi      the host's WFI (scope: the channel's VEID) before it
    //   unordered     nothing: kernels of one stream may overlap and finish
    //                 out of order (breaks stream order; for checking that
    //                 the ordering tests can fail)
    // Without an acquire the host does not wait for the grids in front: the
    // channel's host semaphore releases (timeline, event times) then wait for
    // idle themselves (RELEASE_WFI_EN), else they would pass running grids.
    enum class LaunchOrder { Auto, Acquire, AcquireSpin, WaitForIdle, HostWaitForIdle, Unordered };
    static LaunchOrder launchOrder();
    // Parses an NVLITE_LAUNCH_ORDER value (null or unknown: the default).
    static LaunchOrder parseLaunchOrder(const char* v);

    // The timeline value the GPU has reached.
    uint64_t completed() const { return __atomic_load_n(semaphore_, __ATOMIC_ACQUIRE); }
    uint64_t lastSubmitted() const { return lastSubmitted_.load(std::memory_order_acquire); }
    bool isDone(uint64_t value) const { return completed() >= value; }
    // Waits until the timeline reaches 'value' (or the channel faults), the
    // way the channel's wait mode says, or 'mode'.
    Status wait(uint64_t value) { return wait(value, waitMode_.load(std::memory_order_relaxed)); }
    Status wait(uint64_t value, WaitMode mode);
    void setWaitMode(WaitMode mode) { waitMode_.store(mode, std::memory_order_relaxed); }
    // A fault the driver reported on this channel (error notifier), else OK:
    // channelErrorStatus() of the RC error RM wrote. Cheap (one load).
    Status error() const;
    // What a wait on this channel gives up with: the error of any faulted
    // channel of its fault scope, or its own error when it has none.
    Status scopeError() const;
    // Makes waits on this channel watch 'scope' too (once per channel; the
    // scope must outlive the channel). False if the scope is full.
    bool joinFaultScope(FaultScope& scope);

    // Where the timeline semaphore lives, for other channels to acquire.
    uint64_t semaphoreVa() const { return semaphoreMemory_->va(); }
    // Methods making the channel they are written to wait until this
    // channel's timeline reaches 'value'.
    static constexpr size_t kWaitDwords = PushWriter::dwordsFor(5);
    void writeWait(PushWriter& w, uint64_t value) const;
    // Methods writing 'payload' and the GPU time (ns) into the 16 bytes at
    // 'va' once the channel's earlier work is done.
    // (The copy engine's four-word semaphore and LAUNCH_DMA, or a host semaphore.)
    static constexpr size_t kTimestampDwords =
        std::max(PushWriter::dwordsFor(4) + PushWriter::dwordsFor(1), PushWriter::dwordsFor(5));
    void writeTimestamp(PushWriter& w, uint64_t va, uint64_t payload) const;

private:
    // A release: the copy engine's semaphore and LAUNCH_DMA, or a host semaphore.
    static constexpr size_t kReleaseDwords =
        std::max(PushWriter::dwordsFor(4) + PushWriter::dwordsFor(1), PushWriter::dwordsFor(5));
    static constexpr size_t kDataAlign = 256;

    struct Reserved {
        PushWriter writer;
        DataSlot data;
        size_t dataOffset = 0, dataBytes = 0;
    };

    Channel(Gpu& gpu, EngineKind kind) : gpu_(gpu), kind_(kind) {}
    Status init(uint32_t hChannelGroup, uint32_t hContextShare, uint32_t engineType);
    Result<Reserved> beginLocked(size_t dwords, size_t dataBytes, bool waitsOnOthers);
    // Writes what keeps the submission behind the channel's unfinished
    // 'previous' one (LaunchOrder); sets releaseAfterIdle_.
    void writeOrder(PushWriter& w, uint64_t previous, bool waitsOnOthers);
    Result<uint64_t> endLocked(Reserved& r, Completion completion);
    void writeRelease(PushWriter& w, uint64_t value);
    // Tells Host that GP_PUT moved (the doorbell), the way Gpu::doorbellPath() needs.
    void ringDoorbell() const;
    // A host semaphore release of 'payload' at 'va' after the channel's
    // earlier work, with 'executeFlags' added to SEM_EXECUTE.
    void writeHostRelease(PushWriter& w, uint64_t va, uint64_t payload, uint32_t executeFlags) const;
    // Whether a host release on a compute channel must wait for idle first.
    uint32_t releaseWfi() const;
    // NVLITE_HANG_REPORT: a wait that has lasted 'waitedNs' for 'value' says
    // on stderr where the channel stands and what its first unfinished
    // submission acquires (each awaited channel's progress, when it is one
    // of the fault scope's).
    void reportStuck(uint64_t value, uint64_t waitedNs) const;

    Gpu& gpu_;
    EngineKind kind_;

    // Ring, USERD and push buffer share one video-memory allocation mapped
    // write-combined at the GPU's address.
    std::unique_ptr<GpuMemory> area_;
    std::unique_ptr<GpuMemory> semaphoreMemory_;  // host memory: the timeline
    RmObject notifier_;                           // error notifier (system memory)
    RmClient::CpuMapping notifierMapping_;
    RmObject object_;                             // the channel
    RmObject engine_;                             // copy or compute object
    uint64_t uvmChannelVa_ = 0;
    bool uvmRegistered_ = false;

    volatile uint64_t* ring_ = nullptr;
    volatile uint32_t* userd_ = nullptr;  // the USERD control area (GP_GET is read for reports only)
    volatile uint32_t* gpPut_ = nullptr;
    uint32_t entries_ = 0;
    uint32_t token_ = 0;
    uint32_t* push_ = nullptr;  // push-buffer ring (CPU view)
    uint64_t pushVa_ = 0;
    uint8_t* data_ = nullptr;   // data ring (CPU view), compute channels only
    uint64_t dataVa_ = 0;
    uint64_t* semaphore_ = nullptr;

    std::atomic<WaitMode> waitMode_{WaitMode::Auto};  // cuCtxSetFlags changes it while others wait
    bool orderedByAcquire_ = false;
    // The submission being written left its predecessor's grids running on
    // the host's side (no acquire): its host releases wait for idle. Under
    // submitMutex_.
    bool releaseAfterIdle_ = false;
    std::atomic<FaultScope*> scope_{nullptr};  // set once
    mutable std::atomic<bool> errorTraced_{false};
    std::mutex submitMutex_;
    uint64_t put_ = 0;                        // GPFIFO entries written
    std::atomic<uint64_t> lastSubmitted_{0};  // timeline value of the newest submission
    RingSpace pushSpace_;                     // in dwords
    RingSpace dataSpace_;                     // in bytes
};

}  // namespace nvl::hw
