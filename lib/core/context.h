// A CUDA context: the channels its work runs on, its memory, and the
// thread-local stack of current contexts.
//
// Context objects are never freed: cuCtxDestroy releases everything a
// context holds and leaves a shell behind, so a stale CUcontext handle is
// recognised (and answered with an error) instead of being dereferenced.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "core/stream.h"
#include "hw/channel_group.h"
#include "hw/compute.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class Device;
class DeviceHeap;
class HostMemory;
class Staging;

class Context {
public:
    // A new context (not made current). 'primary' contexts are created and
    // reactivated through the cuDevicePrimaryCtx* calls.
    static Result<Context*> create(Device& device, unsigned flags, bool primary);
    ~Context();
    // The live Context behind a handle, or nullptr when it was never one.
    static Context* fromHandle(CUcontext handle);
    CUcontext handle() { return reinterpret_cast<CUcontext>(this); }

    Device& device() const { return device_; }
    unsigned flags() const { return flags_; }
    bool isPrimary() const { return primary_; }
    // False once destroyed (or, for a primary context, released or reset).
    bool active() const { return active_.load(std::memory_order_acquire); }
    // Counts activations: what was made in an earlier one (a module placed
    // before a primary context's release and retain) is gone.
    uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

    // Brings the resources up (creation and primary reactivation).
    Status activate(unsigned flags);
    // Waits for the work, then frees channels and memory.
    void deactivate();

    hw::ContextChannels& channels() { return *channels_; }
    DeviceHeap& heap() { return *heap_; }
    HostMemory& host() { return *host_; }
    Staging& staging() { return *staging_; }
    // The legacy (NULL) stream.
    Stream& nullStream() { return nullStream_; }

    // Waits for everything submitted in this context.
    Status synchronize();

    // Launch support: what constant bank 0 and the QMD need from the context,
    // a note that new code was placed (caches must be invalidated before the
    // next launch), and local memory grown on demand.
    hw::ComputeState computeState() const;
    void noteNewCode() { codeChanged_.store(true, std::memory_order_release); }
    bool takeCodeChanged() { return codeChanged_.exchange(false, std::memory_order_acq_rel); }
    // Makes every thread of a launch able to use 'bytesPerThread' of local
    // memory (the request is ordered in the null stream before later launches).
    Status ensureLocalMemory(uint32_t bytesPerThread);

private:
    Context(Device& device, bool primary);

    Device& device_;
    const bool primary_;
    unsigned flags_ = 0;
    std::atomic<bool> active_{false};
    std::atomic<uint64_t> generation_{0};
    std::mutex lifecycleMutex_;
    std::unique_ptr<hw::ContextChannels> channels_;
    std::unique_ptr<DeviceHeap> heap_;
    std::unique_ptr<HostMemory> host_;
    std::unique_ptr<Staging> staging_;
    Stream nullStream_;
    hw::ComputeState computeState_;  // all but localBytesPerThread, set at activation
    std::atomic<bool> codeChanged_{false};
    std::mutex localMutex_;
    std::atomic<uint32_t> localBytesPerThread_{0};
    std::vector<std::unique_ptr<hw::GpuMemory>> localMemory_;  // newest last; older ones kept for running work
};

// The calling thread's context stack.
namespace current {
Context* top();
void push(Context* ctx);
Context* pop();  // nullptr when empty
// cuCtxSetCurrent: replace the top (push when empty; pop when ctx is null).
void set(Context* ctx);
// Drops every entry of 'ctx' from the calling thread's stack.
void remove(Context* ctx);
}  // namespace current

// The current context for an API call that needs one: checks cuInit, a
// current context (CUDA_ERROR_INVALID_CONTEXT) and that it is alive
// (CUDA_ERROR_CONTEXT_IS_DESTROYED).
Result<Context*> requireCurrent();
// For calls that work without a current context but not with a dead one
// (cuMemFree, cuMemFreeHost): checks cuInit and, if a context is current,
// that it is alive.
Status checkCurrentIfAny();

}  // namespace nvl::core
