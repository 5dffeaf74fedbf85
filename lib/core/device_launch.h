// Device-side launches (dynamic parallelism: `kernel<<<...>>>` in device
// code, libcudadevrt's cudaGetParameterBufferV2 / cudaLaunchDeviceV2) for one
// context. The device half is devrt/devrt.cu; the layouts are in
// core/devrt_abi.h.
//
// A grid of a kernel that launches kernels runs with a launch queue (its
// stream's, made on first use; its address and the grid's depth go to
// constant bank 0's environment registers). Its launches are written to the
// queue's slots while it runs; they start once it is done: right after the
// grid, in its stream, a host function (core/host_func.h) runs them on
// nvlite's thread, one grid at a time in launch order, each after the one
// before it and everything that one launched is done (depth first). The
// stream's later work waits for that host function, so for the launched
// grids, as CUDA's stream order has it: a grid is complete once the grids it
// launched are. The launched grids run on a lane of their own (no stream's
// host function ever blocks it).
//
// What CUDA allows and this gives: a launched grid starts after its parent
// grid ends (CUDA makes no promise that they run at the same time), the
// launches of one grid run one after another whatever stream they name
// (the block's own, cudaStreamFireAndForget, cudaStreamTailLaunch: ordered
// in each), up to CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT launches (rounded
// up to a multiple of 32, as libcuda) of one grid and its descendants
// waiting at once, at any depth (a chain holds a slot per level). A
// launch the host cannot make (a function that is not a kernel of the
// module, parameters beyond 4 KiB, a block larger than the kernel allows:
// the device runtime checked only the device's limits) makes the context
// fail with CUDA_ERROR_LAUNCH_FAILED.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "core/devrt_abi.h"
#include "core/stream.h"
#include "hw/gpu_memory.h"

namespace nvl::core {

class Context;
class Function;
class LaunchQueuePool;

// One stream's launch queue: the LaunchQueue (video memory the CPU sees at
// the same address) and its slots (host memory). Its memory goes back to the
// context's pool when the last user lets go.
class DeviceLaunchQueue {
public:
    struct Memory {
        uint64_t headerVa = 0;
        std::unique_ptr<hw::GpuMemory> slots;
        uint64_t count = 0;
    };
    DeviceLaunchQueue(std::shared_ptr<LaunchQueuePool> pool, Memory mem) : pool_(std::move(pool)), mem_(std::move(mem)) {}
    ~DeviceLaunchQueue();
    DeviceLaunchQueue(const DeviceLaunchQueue&) = delete;
    DeviceLaunchQueue& operator=(const DeviceLaunchQueue&) = delete;

    uint64_t va() const { return mem_.headerVa; }
    devrt::LaunchQueue* header() const { return reinterpret_cast<devrt::LaunchQueue*>(mem_.headerVa); }
    uint64_t count() const { return mem_.count; }
    devrt::LaunchSlot* slot(uint64_t index) const {
        return reinterpret_cast<devrt::LaunchSlot*>(static_cast<uint8_t*>(mem_.slots->cpu()) +
                                                    index * devrt::kLaunchSlotBytes);
    }
    const uint8_t* params(uint64_t index) const {
        return reinterpret_cast<const uint8_t*>(slot(index)) + devrt::kLaunchHeaderBytes;
    }

private:
    std::shared_ptr<LaunchQueuePool> pool_;
    Memory mem_;
};

// Which launches a grid made, in the order they run: the numbered slots of
// [from, end) by their numbers (a slot taken but never launched has none).
// 'number' reads a slot's number.
template <class NumberOf>
std::vector<uint64_t> launchOrder(uint64_t from, uint64_t end, NumberOf&& number);

class DeviceLaunches {
public:
    // libcuda's default CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT.
    static constexpr size_t kDefaultPendingLaunches = 2048;
    // The most slots a queue may have (the limit beyond: CUDA_ERROR_INVALID_VALUE):
    // their bytes stay below 4 GiB (the device runtime's offsets are 32-bit).
    static constexpr size_t kMaxPendingLaunches = size_t{1} << 19;
    static_assert((kMaxPendingLaunches + 1) * devrt::kLaunchSlotBytes < (uint64_t{1} << 32), "32-bit slot offsets");
    // The slots a queue has for a limit: a multiple of this, at least one.
    static constexpr uint64_t kSlotGranule = 32;
    static uint64_t slotsFor(size_t limit);

    explicit DeviceLaunches(Context& ctx);
    ~DeviceLaunches();
    DeviceLaunches(const DeviceLaunches&) = delete;
    DeviceLaunches& operator=(const DeviceLaunches&) = delete;

    // CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: the slots of queues made
    // from now on.
    size_t pendingLimit() const;
    Status setPendingLimit(size_t count);

    // A host launch of a kernel that launches kernels, in 'st': the queue it
    // runs with (the stream's).
    Result<std::shared_ptr<DeviceLaunchQueue>> queueFor(Stream& st);
    // After that launch was submitted in 'st': runs what it launches once it
    // is done, before the stream's later work.
    Status runAfter(Stream& st, std::shared_ptr<DeviceLaunchQueue> queue, Function& parent);

    // Context teardown (the GPU idle): frees the queues' memory and the
    // launch lane's stream.
    void release();

    // What a drain does (the host function's body; tests call it directly).
    struct Drain {
        std::shared_ptr<DeviceLaunchQueue> queue;
        std::vector<std::shared_ptr<Function>> functions;  // the parent's module's kernels
    };
    Status drain(const Drain& d);

private:
    Status runLaunches(const Drain& d);
    Status launchOne(const Drain& d, const devrt::LaunchSlot& slot, const uint8_t* params, uint32_t depth);
    Result<Stream*> launchStream();

    Context& ctx_;
    mutable std::mutex mutex_;
    size_t pendingLimit_ = kDefaultPendingLaunches;
    std::shared_ptr<LaunchQueuePool> pool_;
    std::shared_ptr<Stream> stream_;  // on kDeviceLaunchLane, made on first use
};

template <class NumberOf>
std::vector<uint64_t> launchOrder(uint64_t from, uint64_t end, NumberOf&& number) {
    std::vector<std::pair<uint32_t, uint64_t>> numbered;
    for (uint64_t i = from; i < end; ++i)
        if (const uint32_t n = number(i)) numbered.emplace_back(n, i);
    std::sort(numbered.begin(), numbered.end());
    std::vector<uint64_t> out;
    out.reserve(numbered.size());
    for (const auto& [n, i] : numbered) out.push_back(i);
    return out;
}

}  // namespace nvl::core
