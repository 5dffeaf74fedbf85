// A CUDA context: the channels its work runs on, its memory, and the
// thread-local stack of current contexts.
//
// Lifetime (call_scope.h): a Context is owned by std::shared_ptr (the handle
// registry, the thread stacks that hold it, its streams, events and
// modules, the calls using it). Its resources are behind its Gate: calls
// that use them hold a pass; cuCtxDestroy closes the gate (later calls get
// CUDA_ERROR_CONTEXT_IS_DESTROYED), waits for the passes in flight, then
// frees channels, memory, streams, events, modules and link states. The
// object itself goes when its last reference does; the last 64 destroyed
// contexts stay known (ContextRegistry), so that their handles are answered
// as libcuda does.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "core/call_scope.h"
#include "core/context_storage.h"
#include "core/handle_registry.h"
#include "core/stream.h"
#include "hw/channel_group.h"
#include "hw/compute.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class BuiltinKernels;
class Device;
class DeviceHeap;
class DeviceLaunches;
class DeviceRuntime;
class Event;
class HostFunctions;
class HostMemory;
class Module;
class Staging;

class Context : public Gate, public std::enable_shared_from_this<Context> {
public:
    // A new context (not made current). 'primary' contexts are created and
    // reactivated through the cuDevicePrimaryCtx* calls.
    static Result<std::shared_ptr<Context>> create(Device& device, unsigned flags, bool primary);
    ~Context();
    // The Context behind a handle, live or recently destroyed, or nullptr.
    // Kept alive for the calling API call.
    static Context* fromHandle(CUcontext handle);
    // cuCtxDestroy: deactivate() and forget the handle. False when it was
    // destroyed already (by another thread, too).
    static bool destroy(Context& ctx);
    CUcontext handle() { return reinterpret_cast<CUcontext>(this); }

    Device& device() const { return device_; }
    unsigned flags() const { return flags_.load(std::memory_order_acquire); }
    // cuCtxSetFlags: the flags, and the waiting their scheduling part asks for.
    void setFlags(unsigned flags);
    // Unique in the process (cuCtxGetId): given at each activation.
    uint64_t id() const { return id_.load(std::memory_order_acquire); }
    bool isPrimary() const { return primary_; }
    // False once destroyed (or, for a primary context, released or reset).
    bool active() const { return isOpen(); }
    // Counts activations: what was made in an earlier one (a module placed
    // before a primary context's release and retain) is gone.
    uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

    // Brings the resources up (creation and primary reactivation).
    Status activate(unsigned flags);
    // Closes the gate, waits for the calls using the context, waits for the
    // work, then frees channels, memory, streams, events, modules and link
    // states. False when it was not active.
    bool deactivate();

    hw::ContextChannels& channels() { return *channels_; }
    DeviceHeap& heap() { return *heap_; }
    HostMemory& host() { return *host_; }
    Staging& staging() { return *staging_; }
    // The legacy (NULL) stream.
    Stream& nullStream() { return nullStream_; }

    // Streams beside the legacy one: lanes 1.. of the context's channels,
    // taken in turn (created on first use). Destroyed with the context.
    Result<Stream*> createStream(unsigned flags, int priority);
    // Their work still runs; the handle goes (the object when no call holds it).
    // False when another thread destroyed it first.
    bool destroyStream(Stream* s);
    // Adds the newest work of every blocking stream (what the legacy stream waits for).
    void addBlockingStreamPoints(Dependencies& deps);

    // Events and modules: made in and destroyed with the context.
    void addEvent(std::shared_ptr<Event> e);
    void removeEvent(Event* e);
    void addModule(std::shared_ptr<Module> m);
    void removeModule(Module* m);
    // 16-byte slots the GPU writes timestamps into (host memory).
    struct TimestampSlot {
        uint64_t va = 0;
        const volatile uint64_t* cpu = nullptr;
    };
    Result<TimestampSlot> allocTimestamp();
    // Back to the pool once 'pending' (the GPU's last write to it) is done.
    void freeTimestamp(TimestampSlot slot, Point pending);

    // Waits for everything submitted in this context.
    Status synchronize();

    // The library thread running this context's host functions
    // (cuLaunchHostFunc, cuStreamAddCallback), started on first use.
    Result<HostFunctions*> hostFunctions();

    // A fault on the GPU makes the context unusable, as in libcuda: every
    // later call that needs it returns the fault's code.
    CUresult stickyError() const { return sticky_.load(std::memory_order_acquire); }
    void markFailed(CUresult code) {
        CUresult none = CUDA_SUCCESS;
        sticky_.compare_exchange_strong(none, code, std::memory_order_acq_rel);
    }
    // Faults that leave a context unusable (libcuda's sticky errors).
    static bool isFault(CUresult r) {
        return r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_TIMEOUT || r == CUDA_ERROR_ECC_UNCORRECTABLE ||
               (r >= CUDA_ERROR_HARDWARE_STACK_ERROR && r <= CUDA_ERROR_LAUNCH_FAILED);
    }
    // 's', after marking this context failed when 's' is such a fault (work
    // on this context's channels found it). A trap that follows a failed
    // device assert is CUDA_ERROR_ASSERT, as in libcuda.
    Status noted(Status s) { return isFault(s.code()) ? noteFault(s) : s; }

    // printf, assert, malloc/free in kernels: the FIFO, the heap, their
    // limits. flushDeviceOutput() prints what kernels printed (the
    // synchronising calls run it).
    DeviceRuntime& devrt() { return *devrt_; }
    void flushDeviceOutput();

    // The built-in copy and fill kernels (core/builtin.h), loaded on first use.
    BuiltinKernels& builtins() { return *builtins_; }

    // Kernels launching kernels (core/device_launch.h).
    DeviceLaunches& deviceLaunches() { return *deviceLaunches_; }

    // Launch support: what constant bank 0 and the QMD need from the context,
    // a note that new code was placed (caches must be invalidated before the
    // next launch on every lane), and local memory grown on demand.
    hw::ComputeState computeState() const;
    // Its local memory per thread alone (what SET_SHADER_LOCAL_MEMORY provides).
    uint32_t localBytesPerThread() const { return localBytesPerThread_.load(std::memory_order_acquire); }
    void noteNewCode() { codeGeneration_.fetch_add(1, std::memory_order_acq_rel); }
    // Whether a launch on 'lane' must invalidate the shader caches first (once per new code).
    bool takeCodeChanged(size_t lane) {
        const uint64_t g = codeGeneration_.load(std::memory_order_acquire);
        // Seen already (every launch but the first after new code): no
        // read-modify-write.
        if (laneCodeSeen_[lane].load(std::memory_order_acquire) == g) return false;
        return laneCodeSeen_[lane].exchange(g, std::memory_order_acq_rel) != g;
    }
    // Makes every thread of a launch able to use 'bytesPerThread' of local
    // memory (set on every lane's compute channel before later launches).
    Status ensureLocalMemory(uint32_t bytesPerThread);
    // Held by a launch from before ensureLocalMemory until it is submitted:
    // local memory is not given back meanwhile.
    class LaunchInFlight {
    public:
        explicit LaunchInFlight(Context& ctx) : ctx_(ctx) { ctx_.launchesInFlight_.fetch_add(1, std::memory_order_seq_cst); }
        ~LaunchInFlight() { ctx_.launchesInFlight_.fetch_sub(1, std::memory_order_release); }
        LaunchInFlight(const LaunchInFlight&) = delete;
        LaunchInFlight& operator=(const LaunchInFlight&) = delete;

    private:
        Context& ctx_;
    };
    // Modules of the context whose code is in video memory (the built-in
    // kernels' excepted): when the last one goes, so does local memory
    // (cuMemGetInfo returns to its value after context creation).
    void moduleResident() { residentModules_.fetch_add(1, std::memory_order_acq_rel); }
    void moduleGone();

    // The per-thread stack (CU_LIMIT_STACK_SIZE): every launch gets at least
    // this much local memory per thread, and a launch that needs more raises
    // it (as in libcuda, it does not come back down).
    static constexpr uint32_t kDefaultStackBytes = 1024;
    uint32_t stackBytes() const { return stackBytes_.load(std::memory_order_acquire); }
    // Local memory for 'bytes' now, then the new limit.
    Status setStackBytes(uint32_t bytes);
    // A launch needed 'bytes': the limit is at least that.
    void raiseStackBytes(uint32_t bytes);

    // Preferences and hints nvlite keeps for their getters (the hardware
    // path chooses its shared-memory carveout and L2 use by itself).
    std::atomic<CUfunc_cache> cacheConfig{CU_FUNC_CACHE_PREFER_NONE};
    std::atomic<size_t> l2FetchGranularity{kDefaultL2FetchGranularity};
    std::atomic<size_t> persistingL2Bytes{0};
    static constexpr size_t kDefaultL2FetchGranularity = 64;

    // Context-local storage of the libraries above (cudart): its destructors
    // run when the context is deactivated.
    ContextStorage storage;

    // Peer access (core/peer.h): the contexts whose memory this one maps,
    // each with the activation it was enabled in.
    struct PeerEntry {
        Context* context;
        uint64_t generation;
    };
    std::mutex peerMutex;
    std::vector<PeerEntry> peers;

    Context(Device& device, bool primary);  // through create()

private:
    Status noteFault(Status s);

    Device& device_;
    const bool primary_;
    std::atomic<unsigned> flags_{0};
    std::atomic<uint64_t> id_{0};
    std::atomic<uint32_t> stackBytes_{kDefaultStackBytes};
    std::atomic<uint64_t> generation_{0};
    std::mutex lifecycleMutex_;
    std::unique_ptr<hw::ContextChannels> channels_;
    std::unique_ptr<DeviceHeap> heap_;
    std::unique_ptr<HostMemory> host_;
    std::unique_ptr<Staging> staging_;
    Stream nullStream_;
    hw::ComputeState computeState_;  // all but localBytesPerThread, set at activation
    std::atomic<uint64_t> codeGeneration_{1};
    std::array<std::atomic<uint64_t>, kMaxLanes> laneCodeSeen_{};
    std::atomic<CUresult> sticky_{CUDA_SUCCESS};
    std::unique_ptr<DeviceRuntime> devrt_;  // lives as long as the Context object
    std::unique_ptr<BuiltinKernels> builtins_;  // likewise
    std::unique_ptr<DeviceLaunches> deviceLaunches_;  // likewise
    friend class DeviceLaunches;  // its lane (laneFor)

    // Lanes: created under localMutex_ (a new lane gets the current local memory).
    Result<hw::ContextChannels::Lane> laneFor(size_t index);
    size_t nextLane_ = 0;

    std::mutex streamsMutex_;
    std::unordered_map<const Stream*, std::shared_ptr<Stream>> streams_;
    // The unfinished work of destroyed blocking streams: the legacy stream
    // still follows it.
    Dependencies retired_;
    // Blocking streams in streams_, and those plus retired_'s points as the
    // legacy stream's submissions read them without the lock.
    size_t blockingStreams_ = 0;
    std::atomic<size_t> implicitSources_{0};
    void publishImplicitSourcesLocked();
    std::unordered_map<const Event*, std::shared_ptr<Event>> events_;
    std::unordered_map<const Module*, std::shared_ptr<Module>> modules_;

    std::mutex hostFunctionsMutex_;
    std::unique_ptr<HostFunctions> hostFunctions_;

    std::mutex timestampMutex_;
    std::vector<std::unique_ptr<hw::GpuMemory>> timestampPages_;
    std::vector<TimestampSlot> freeTimestamps_;
    std::vector<std::pair<TimestampSlot, Point>> pendingTimestamps_;  // freed, the GPU may still write them

    std::mutex localMutex_;
    std::atomic<uint32_t> localBytesPerThread_{0};
    uint64_t localVa_ = 0;
    uint64_t localBytesPerTpc_ = 0;
    std::vector<std::unique_ptr<hw::GpuMemory>> localMemory_;  // newest last; older ones kept for running work
    std::atomic<uint32_t> launchesInFlight_{0};
    std::atomic<uint32_t> residentModules_{0};
    // Gives local memory back when no launch is under way and every lane is idle.
    void releaseLocalMemory();
};

// Handles of contexts; the last 64 destroyed ones stay known.
using ContextRegistry = HandleRegistry<Context, 64>;

// The calling thread's context stack (it holds references to them).
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
// (CUDA_ERROR_CONTEXT_IS_DESTROYED), and holds a pass through its gate
// for the rest of the call.
Result<Context*> requireCurrent();
// For calls that work without a current context but not with a dead one
// (cuMemFree, cuMemFreeHost): checks cuInit and, if a context is current,
// that it is alive.
Status checkCurrentIfAny();

}  // namespace nvl::core
