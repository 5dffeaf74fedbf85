// A GPFIFO channel with one engine object bound (copy engine or compute).
//
// Work is submitted by writing methods into the channel's push-buffer ring,
// one GPFIFO entry, GP_PUT and the doorbell: no system call. Every
// submission ends by releasing the channel's timeline semaphore (64-bit, in
// host memory) with the submission's number, so completion is a load.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "hw/gpu.h"
#include "hw/push_buffer.h"
#include "hw/ring_space.h"

namespace nvl::hw {

enum class EngineKind { Copy, Compute };

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
    Subchannel subchannel() const { return kind_ == EngineKind::Copy ? Subchannel::Copy : Subchannel::Compute; }
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
    };
    // Writes up to 'maxDwords' of methods through 'fill(PushWriter&, const
    // DataSlot&)', then the timeline release, and submits; 'fill' also gets
    // 'dataBytes' (256-byte aligned, may be 0) of data-ring space to write.
    // Returns the submission's timeline value. 'fill' runs under the
    // channel's submit lock. submit() is the same without data.
    template <class Fill>
    Result<uint64_t> submitWithData(size_t maxDwords, size_t dataBytes, Fill&& fill) {
        std::lock_guard lock(submitMutex_);
        NVL_ASSIGN_OR_RETURN(Reserved r, beginLocked(maxDwords + kReleaseDwords, dataBytes));
        fill(r.writer, r.data);
        return endLocked(r);
    }

    // The timeline value the GPU has reached.
    uint64_t completed() const { return __atomic_load_n(semaphore_, __ATOMIC_ACQUIRE); }
    uint64_t lastSubmitted() const { return lastSubmitted_.load(std::memory_order_acquire); }
    bool isDone(uint64_t value) const { return completed() >= value; }
    // Waits until the timeline reaches 'value' (or the channel faults).
    Status wait(uint64_t value);
    // A fault the driver reported on this channel (error notifier), else OK.
    Status error() const;

    // Where the timeline semaphore lives, for other channels to acquire.
    uint64_t semaphoreVa() const { return semaphoreMemory_->va(); }
    // Methods making the channel they are written to wait until this
    // channel's timeline reaches 'value'.
    static constexpr size_t kWaitDwords = 6;
    void writeWait(PushWriter& w, uint64_t value) const;

private:
    static constexpr size_t kReleaseDwords = 8;
    static constexpr size_t kDataAlign = 256;

    struct Reserved {
        PushWriter writer;
        DataSlot data;
        size_t dataOffset = 0, dataBytes = 0;
    };

    Channel(Gpu& gpu, EngineKind kind) : gpu_(gpu), kind_(kind) {}
    Status init(uint32_t hChannelGroup, uint32_t hContextShare, uint32_t engineType);
    Result<Reserved> beginLocked(size_t dwords, size_t dataBytes);
    Result<uint64_t> endLocked(Reserved& r);
    void writeRelease(PushWriter& w, uint64_t value);

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
    volatile uint32_t* gpPut_ = nullptr;
    uint32_t entries_ = 0;
    uint32_t token_ = 0;
    uint32_t* push_ = nullptr;  // push-buffer ring (CPU view)
    uint64_t pushVa_ = 0;
    uint8_t* data_ = nullptr;   // data ring (CPU view), compute channels only
    uint64_t dataVa_ = 0;
    uint64_t* semaphore_ = nullptr;

    std::mutex submitMutex_;
    uint64_t put_ = 0;                        // GPFIFO entries written
    std::atomic<uint64_t> lastSubmitted_{0};  // timeline value of the newest submission
    RingSpace pushSpace_;                     // in dwords
    RingSpace dataSpace_;                     // in bytes
};

}  // namespace nvl::hw
