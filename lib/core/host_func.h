// Host functions in streams (cuLaunchHostFunc, cuStreamAddCallback).
//
// A host function is stream work like any other: it runs once the work
// before it in its stream is done, and the work after it waits for it. Each
// context has one library thread that runs its host functions, in the order
// they were enqueued (so within a stream in stream order). The GPU side of
// the order is a gate: a 64-bit semaphore in pinned host memory that the
// thread releases with a function's number once the function returned. The
// enqueue submits, in the stream, an acquire of that number: the stream's
// later work, its events, its synchronisation and the context's wait for it.
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
    struct Job {
        Call call;
        Dependencies after;  // the stream's earlier work
        uint64_t number = 0;  // released on the gate once the call returned
    };
    Status start();
    void run();

    Context& ctx_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Job> jobs_;
    bool stopping_ = false;
    uint64_t enqueued_ = 0;  // number of the newest job
    std::unique_ptr<hw::GpuMemory> gate_;
    std::thread thread_;
};

}  // namespace nvl::core
