// Host functions in streams (cuLaunchHostFunc, cuStreamAddCallback).
//
// A host function is stream work like any other: it runs once the work
// before it in its stream is done, and the work after it waits for it. Each
// context has one library thread that runs its host functions as they
// become ready: within a stream in stream order, across streams in no fixed
// order (as libcuda: a function behind a long kernel does not hold back one
// of another stream). The GPU side of the order is a gate per function: a
// 64-bit semaphore slot in pinned host memory and a value the thread writes
// there once the function returned. The enqueue submits, in the stream, an
// acquire of that value: the stream's later work, its events, its
// synchronisation and the context's wait for it. Slots are reused at once
// (each use waits for a larger value than the last).
//
// Inside a host function the driver may not be called (it could wait for the
// gate it holds): such calls answer CUDA_ERROR_NOT_PERMITTED, as libcuda's.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/status.h"
#include "core/stream.h"
#include "hw/gpu_memory.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class Context;

class HostFunctions {
public:
    // What to call: a CUDA 10 host function (not called once the stream's
    // earlier work failed) or a stream callback (called with the failure).
    struct Call {
        CUhostFn function = nullptr;
        CUstreamCallback callback = nullptr;
        CUstream stream = nullptr;  // the callback's stream argument
        void* userData = nullptr;
    };

    explicit HostFunctions(Context& ctx) : ctx_(ctx) {}
    // Runs what is left (the context waited for its streams first), then ends the thread.
    ~HostFunctions();
    HostFunctions(const HostFunctions&) = delete;
    HostFunctions& operator=(const HostFunctions&) = delete;

    // Enqueues 'call' in 'stream' (a stream of this context).
    Status enqueue(Stream& stream, const Call& call);

    // True on a library thread while it runs a host function.
    static bool inside();

private:
    struct Slot {
        uint64_t* cpu;
        uint64_t va;
        uint64_t last;  // the value its newest use waits for
    };
    struct Job {
        Call call;
        Dependencies after;  // the stream's earlier work
        size_t slot = 0;
        uint64_t value = 0;  // written to the slot once the call returned
    };
    Status start();
    Result<size_t> takeSlot();
    // The first job (in enqueue order) whose earlier work is done or failed.
    bool takeReady(Job& job, Status& status);
    void run();

    Context& ctx_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Job> jobs_;
    bool stopping_ = false;
    std::vector<std::unique_ptr<hw::GpuMemory>> gatePages_;
    std::vector<Slot> slots_;
    std::vector<size_t> freeSlots_;
    std::thread thread_;
};

}  // namespace nvl::core
