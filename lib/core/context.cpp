#include "core/context.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/align.h"
#include "common/trace.h"
#include "core/builtin.h"
#include "core/device.h"
#include "core/device_launch.h"
#include "core/devrt.h"
#include "core/event.h"
#include "core/handle_registry.h"
#include "core/host_func.h"
#include "core/mem_pool.h"
#include "core/memory.h"
#include "core/module.h"
#include "core/peer.h"
#include "core/runtime.h"
#include "core/staging.h"
#include "core/thread_state.h"

namespace nvl::core {
namespace {

// The thread's stack of current contexts: it outlives the thread's
// thread_local destructors and, on the main thread, exit()'s (cudart's
// atexit teardown still asks for the current context; core/thread_state.h).
using ContextStack = std::vector<std::shared_ptr<Context>>;
ContextStack& threadStack() { return ThreadState<ContextStack>::get(); }

}  // namespace

Result<std::shared_ptr<Context>> Context::create(Device& device, unsigned flags, bool primary) {
    auto ctx = std::make_shared<Context>(device, primary);
    if (!primary) NVL_TRY(ctx->activate(flags));
    ContextRegistry::get().add(ctx);
    return ctx;
}

Context::Context(Device& device, bool primary)
    : device_(device),
      primary_(primary),
      nullStream_(*this, Stream::Kind::Legacy, 0, 0),
      devrt_(std::make_unique<DeviceRuntime>(*this)),
      builtins_(std::make_unique<BuiltinKernels>(*this)),
      deviceLaunches_(std::make_unique<DeviceLaunches>(*this)) {}

Context::~Context() { deactivate(); }

Context* Context::fromHandle(CUcontext handle) {
    std::shared_ptr<Context> c = ContextRegistry::get().find(handle);
    if (!c) c = ContextRegistry::get().retired(handle);
    Context* raw = c.get();
    CallScope::keep(std::move(c));
    return raw;
}

bool Context::destroy(Context& ctx) {
    if (!ctx.deactivate()) return false;
    ContextRegistry::get().remove(&ctx);
    return true;
}

namespace {

hw::WaitMode waitModeFor(unsigned flags) {
    switch (flags & CU_CTX_SCHED_MASK) {
    case CU_CTX_SCHED_SPIN: return hw::WaitMode::Spin;
    case CU_CTX_SCHED_YIELD: return hw::WaitMode::Yield;
    case CU_CTX_SCHED_BLOCKING_SYNC: return hw::WaitMode::Block;
    default: return hw::WaitMode::Auto;
    }
}

std::atomic<uint64_t> lastContextId{0};

}  // namespace

Status Context::activate(unsigned flags) {
    std::lock_guard lock(lifecycleMutex_);
    if (active()) return kOk;
    NVL_ASSIGN_OR_RETURN(channels_, hw::ContextChannels::create(device_.gpu(), waitModeFor(flags)));
    nullStream_.setLane(0, channels_->lane(0));
    for (auto& seen : laneCodeSeen_) seen.store(0, std::memory_order_relaxed);
    sticky_.store(CUDA_SUCCESS, std::memory_order_release);
    heap_ = std::make_unique<DeviceHeap>(device_.gpu());
    host_ = std::make_unique<HostMemory>(device_.gpu());
    staging_ = std::make_unique<Staging>(*this);
    const hw::GpuInfo& gi = device_.info();
    computeState_.sharedWindow = device_.gpu().vaSpace().sharedWindow();
    computeState_.localWindow = device_.gpu().vaSpace().localWindow();
    computeState_.smVersion = (gi.smMajor << 4) | gi.smMinor;
    NVL_ASSIGN_OR_RETURN(int smShared, device_.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
    computeState_.maxSmSharedKiB = static_cast<uint32_t>(smShared) / 1024;
    computeState_.qmd = &hw::qmdLayoutFor(gi.computeClass);
    computeState_.smCount = gi.smCount;
    flags_.store(flags, std::memory_order_release);
    id_.store(lastContextId.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_release);
    stackBytes_.store(kDefaultStackBytes, std::memory_order_release);
    cacheConfig.store(CU_FUNC_CACHE_PREFER_NONE, std::memory_order_relaxed);
    l2FetchGranularity.store(kDefaultL2FetchGranularity, std::memory_order_relaxed);
    persistingL2Bytes.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    open();
    return kOk;
}

bool Context::deactivate() {
    // First, while the context still works: context-local storage's
    // destructors may use it (nothing left to do on a second call).
    if (active()) storage.destroyAll(handle());
    std::lock_guard lock(lifecycleMutex_);
    // No new call gets in; those inside finish first.
    if (!close()) return false;
    (void)synchronize();
    dropPeerAccess(*this);
    // Before the channels go: host functions still queued (after a fault)
    // and pools' stream-ordered frees refer to them.
    {
        std::unique_ptr<HostFunctions> hostFunctions;
        {
            std::lock_guard hfLock(hostFunctionsMutex_);
            hostFunctions = std::move(hostFunctions_);
        }
    }
    // Their launches ran (above); the queues and the launch lane's stream go.
    deviceLaunches_->release();
    MemPools::get().releaseContext(*this);
    // What the context made goes with it: the handles first (calls holding
    // the objects keep them until they return), then the resources.
    std::unordered_map<const Stream*, std::shared_ptr<Stream>> streams;
    std::unordered_map<const Event*, std::shared_ptr<Event>> events;
    std::unordered_map<const Module*, std::shared_ptr<Module>> modules;
    {
        std::lock_guard streamsLock(streamsMutex_);
        streams.swap(streams_);
        events.swap(events_);
        modules.swap(modules_);
        retired_.clear();
        blockingStreams_ = 0;
        publishImplicitSourcesLocked();
    }
    for (auto& [p, st] : streams) {
        st->retire();
        HandleRegistry<Stream>::get().remove(p);
    }
    for (auto& [p, e] : events) {
        Event::forget(*e);
        e->detach();
    }
    for (auto& [p, m] : modules) m->forget();
    AddressMap::get().removeContext(this);
    // Channels first: after a fault the waits above return at once, and a
    // copy engine RM did not stop may still use the memory freed below.
    nullStream_.reset();
    staging_->forgetChannels();
    channels_.reset();
    devrt_->release();
    builtins_->forget();  // its code goes with the heap
    staging_.reset();
    host_.reset();
    heap_.reset();
    {
        // Emptied with their storage: a destroyed context's object may stay
        // a while (ContextRegistry), it holds nothing then.
        std::lock_guard tsLock(timestampMutex_);
        std::vector<TimestampSlot>().swap(freeTimestamps_);
        std::vector<std::pair<TimestampSlot, Point>>().swap(pendingTimestamps_);
        std::vector<std::unique_ptr<hw::GpuMemory>>().swap(timestampPages_);
    }
    std::lock_guard localLock(localMutex_);
    std::vector<std::unique_ptr<hw::GpuMemory>>().swap(localMemory_);
    residentModules_.store(0, std::memory_order_release);
    localBytesPerThread_ = 0;
    localVa_ = 0;
    localBytesPerTpc_ = 0;
    nextLane_ = 0;
    return true;
}

Status Context::synchronize() {
    // Lanes only grow while the context lives: take them under the lock,
    // wait without it.
    std::array<hw::ContextChannels::Lane, kMaxLanes> lanes;
    size_t count;
    {
        std::lock_guard lock(localMutex_);
        count = channels_->laneCount();
        for (size_t i = 0; i < count; ++i) lanes[i] = channels_->lane(i);
    }
    Status first = kOk;
    for (size_t i = 0; i < count; ++i) {
        for (hw::Channel* ch : {lanes[i].copy, lanes[i].compute}) {
            Status s = ch->wait(ch->lastSubmitted());
            if (!s.ok() && first.ok()) first = s;
        }
    }
    devrt_->flush();
    return first;
}

Result<HostFunctions*> Context::hostFunctions() {
    std::lock_guard lock(hostFunctionsMutex_);
    if (!hostFunctions_) hostFunctions_ = std::make_unique<HostFunctions>(*this);
    return hostFunctions_.get();
}

void Context::flushDeviceOutput() { devrt_->flush(); }

Status Context::noteFault(Status s) {
    if (devrt_->asserted()) s = Status(CUDA_ERROR_ASSERT, s.driverStatus(), s.where());
    markFailed(s.code());
    return s;
}

Result<hw::ContextChannels::Lane> Context::laneFor(size_t index) {
    std::lock_guard lock(localMutex_);
    while (channels_->laneCount() <= index) {
        NVL_ASSIGN_OR_RETURN(hw::ContextChannels::Lane lane, channels_->addLane());
        if (localVa_) {
            NVL_ASSIGN_OR_RETURN(uint64_t v, lane.compute->submit(hw::kLocalMemoryDwords, [&](hw::PushWriter& w) {
                hw::setLocalMemory(w, localVa_, localBytesPerTpc_);
            }));
            (void)v;  // ordered before the lane's launches by the channel itself
        }
    }
    return channels_->lane(index);
}

Result<Stream*> Context::createStream(unsigned flags, int priority) {
    const Stream::Kind kind = (flags & CU_STREAM_NON_BLOCKING) ? Stream::Kind::NonBlocking : Stream::Kind::Blocking;
    auto st = std::make_shared<Stream>(*this, kind, flags, priority);
    st->keepContext(shared_from_this());
    size_t index;
    {
        std::lock_guard lock(localMutex_);
        index = 1 + nextLane_++ % kStreamLanes;
    }
    auto lane = laneFor(index);
    if (!lane) {
        // No more channels (the GPU or RM refuses): share the legacy stream's.
        if (trace::api()) trace::print("stream lane %zu unavailable (error %d); using lane 0", index, lane.status().code());
        index = 0;
        std::lock_guard lock(localMutex_);
        lane = channels_->lane(0);
    }
    st->setLane(index, *lane);
    Stream* raw = st.get();
    {
        std::lock_guard lock(streamsMutex_);
        streams_[raw] = st;
        if (kind == Stream::Kind::Blocking) ++blockingStreams_;
        publishImplicitSourcesLocked();
    }
    HandleRegistry<Stream>::get().add(std::move(st));
    return raw;
}

bool Context::destroyStream(Stream* s) {
    std::shared_ptr<Stream> gone = HandleRegistry<Stream>::get().remove(s);
    if (!gone) return false;
    // No submission after this one; what it submitted before still runs.
    const Point last = s->retire();
    std::lock_guard lock(streamsMutex_);
    if (streams_.erase(s) && s->kind() == Stream::Kind::Blocking) --blockingStreams_;
    // The legacy stream still follows a blocking stream's unfinished work.
    if (s->kind() == Stream::Kind::Blocking && !last.done()) {
        retired_.pruneDone();
        retired_.add(last);
    }
    publishImplicitSourcesLocked();
    return true;
}

void Context::publishImplicitSourcesLocked() {
    implicitSources_.store(blockingStreams_ + retired_.size(), std::memory_order_release);
}

void Context::addBlockingStreamPoints(Dependencies& deps) {
    // None (the common case): no lock. A blocking stream created, or
    // destroyed with work left, before this call (in this thread, or one it
    // synchronised with) is seen here.
    if (implicitSources_.load(std::memory_order_acquire) == 0) return;
    std::lock_guard lock(streamsMutex_);
    for (const auto& [p, st] : streams_)
        if (st->kind() == Stream::Kind::Blocking) deps.add(st->last());
    retired_.pruneDone();
    for (const Point& p : retired_) deps.add(p);
    publishImplicitSourcesLocked();
}

void Context::addEvent(std::shared_ptr<Event> e) {
    std::lock_guard lock(streamsMutex_);
    const Event* key = e.get();
    events_[key] = std::move(e);
}

void Context::removeEvent(Event* e) {
    std::shared_ptr<Event> gone;  // freed outside the lock
    std::lock_guard lock(streamsMutex_);
    auto it = events_.find(e);
    if (it == events_.end()) return;
    gone = std::move(it->second);
    events_.erase(it);
}

void Context::addModule(std::shared_ptr<Module> m) {
    std::lock_guard lock(streamsMutex_);
    const Module* key = m.get();
    modules_[key] = std::move(m);
}

void Context::removeModule(Module* m) {
    std::shared_ptr<Module> gone;  // freed outside the lock
    std::lock_guard lock(streamsMutex_);
    auto it = modules_.find(m);
    if (it == modules_.end()) return;
    gone = std::move(it->second);
    modules_.erase(it);
}

Result<Context::TimestampSlot> Context::allocTimestamp() {
    std::lock_guard lock(timestampMutex_);
    std::erase_if(pendingTimestamps_, [&](const std::pair<TimestampSlot, Point>& p) {
        if (!p.second.done()) return false;
        freeTimestamps_.push_back(p.first);
        return true;
    });
    if (freeTimestamps_.empty()) {
        constexpr size_t kPage = 4096, kSlot = 16;
        NVL_ASSIGN_OR_RETURN(auto page, device_.gpu().allocHost(kPage));
        auto* cpu = static_cast<uint8_t*>(page->cpu());
        std::memset(cpu, 0, kPage);
        for (size_t off = kPage; off >= kSlot; off -= kSlot)
            freeTimestamps_.push_back({page->va() + off - kSlot, reinterpret_cast<const volatile uint64_t*>(cpu + off - kSlot)});
        timestampPages_.push_back(std::move(page));
    }
    TimestampSlot slot = freeTimestamps_.back();
    freeTimestamps_.pop_back();
    return slot;
}

void Context::freeTimestamp(TimestampSlot slot, Point pending) {
    std::lock_guard lock(timestampMutex_);
    if (timestampPages_.empty()) return;
    if (pending.done()) freeTimestamps_.push_back(slot);
    else pendingTimestamps_.emplace_back(slot, pending);
}

hw::ComputeState Context::computeState() const {
    hw::ComputeState s = computeState_;
    s.localBytesPerThread = localBytesPerThread_.load(std::memory_order_acquire);
    return s;
}

void Context::setFlags(unsigned flags) {
    std::lock_guard lifecycle(lifecycleMutex_);
    flags_.store(flags, std::memory_order_release);
    if (!active()) return;
    std::lock_guard lanes(localMutex_);  // lanes are added under it
    channels_->setWaitMode(waitModeFor(flags));
}

Status Context::setStackBytes(uint32_t bytes) {
    NVL_TRY(ensureLocalMemory(bytes));
    stackBytes_.store(bytes, std::memory_order_release);
    return kOk;
}

void Context::raiseStackBytes(uint32_t bytes) {
    uint32_t now = stackBytes_.load(std::memory_order_relaxed);
    while (bytes > now && !stackBytes_.compare_exchange_weak(now, bytes, std::memory_order_acq_rel)) {
    }
}

Status Context::ensureLocalMemory(uint32_t bytesPerThread) {
    // The hardware's own per-thread area comes on top of what the kernel asks
    // for (tinygrad measured 0x240 bytes on sm_8x/sm_90).
    constexpr uint32_t kReservedPerThread = 0x240;
    // CUDA's limit for a thread's local memory (512 KiB); an image claiming
    // more gets no memory for it (and the QMD field could not say it).
    constexpr uint32_t kMaxBytesPerThread = 512 * 1024;
    if (bytesPerThread > kMaxBytesPerThread) return CUDA_ERROR_OUT_OF_MEMORY;
    const uint32_t want = static_cast<uint32_t>(alignUp(bytesPerThread + kReservedPerThread, 32));
    // seq_cst: ordered after the caller's LaunchInFlight (releaseLocalMemory).
    if (localBytesPerThread_.load(std::memory_order_seq_cst) >= want) return kOk;
    std::lock_guard lock(localMutex_);
    if (localBytesPerThread_.load(std::memory_order_relaxed) >= want) return kOk;
    const hw::GpuInfo& gi = device_.info();
    const hw::LocalMemorySize size =
        hw::localMemorySize(want, gi.maxWarpsPerSm, gi.smPerTpc, gi.maxTpcPerGpc, gi.gpcCount);
    NVL_ASSIGN_OR_RETURN(auto mem, device_.gpu().allocVideo(size.totalBytes, hw::VideoMemoryOptions{}));
    const uint64_t va = mem->va();
    // Kept from here on: lanes switched to it before a failure below use it.
    localMemory_.push_back(std::move(mem));
    for (size_t i = 0; i < channels_->laneCount(); ++i) {
        NVL_TRY(channels_->lane(i)
                    .compute->submit(hw::kLocalMemoryDwords,
                                     [&](hw::PushWriter& w) { hw::setLocalMemory(w, va, size.bytesPerTpc); })
                    .status());
    }
    localVa_ = va;
    localBytesPerTpc_ = size.bytesPerTpc;
    localBytesPerThread_.store(want, std::memory_order_release);
    return kOk;
}

void Context::moduleGone() {
    if (residentModules_.fetch_sub(1, std::memory_order_acq_rel) == 1) releaseLocalMemory();
}

void Context::releaseLocalMemory() {
    std::lock_guard lock(localMutex_);
    if (localMemory_.empty() || !channels_) return;
    // A launch past its check of the size holds a LaunchInFlight; one that
    // comes later sees 0 and waits for this lock (then allocates anew).
    const uint32_t had = localBytesPerThread_.exchange(0, std::memory_order_seq_cst);
    auto keep = [&] { localBytesPerThread_.store(had, std::memory_order_release); };
    if (launchesInFlight_.load(std::memory_order_seq_cst) != 0) return keep();
    for (size_t i = 0; i < channels_->laneCount(); ++i) {
        hw::Channel* ch = channels_->lane(i).compute;
        if (!ch->wait(ch->lastSubmitted()).ok()) return keep();
    }
    // The lanes still name the old window; the next launch sets a new one
    // on every lane before it runs.
    localMemory_.clear();
    localVa_ = 0;
    localBytesPerTpc_ = 0;
}

namespace current {

Context* top() {
    const ContextStack& stack = threadStack();
    return stack.empty() ? nullptr : stack.back().get();
}

void push(Context* ctx) { threadStack().push_back(ctx->shared_from_this()); }

Context* pop() {
    ContextStack& stack = threadStack();
    if (stack.empty()) return nullptr;
    std::shared_ptr<Context> c = std::move(stack.back());
    stack.pop_back();
    Context* raw = c.get();
    CallScope::keep(std::move(c));  // the caller may still look at it
    return raw;
}

void set(Context* ctx) {
    ContextStack& stack = threadStack();
    if (stack.empty()) {
        if (ctx) stack.push_back(ctx->shared_from_this());
    } else if (ctx) {
        CallScope::keep(std::move(stack.back()));
        stack.back() = ctx->shared_from_this();
    } else {
        CallScope::keep(std::move(stack.back()));
        stack.pop_back();
    }
}

void remove(Context* ctx) {
    std::erase_if(threadStack(), [&](const std::shared_ptr<Context>& c) { return c.get() == ctx; });
}

}  // namespace current

Result<Context*> requireCurrent() {
    NVL_TRY(Runtime::get().checkInit());
    Context* ctx = current::top();
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
    // Destroyed, or a primary context that was released or reset (libcuda
    // does not bring a reset primary context back until it is retained).
    // The thread's stack keeps the object; the pass keeps its resources.
    if (!CallScope::use(*ctx)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (CUresult sticky = ctx->stickyError(); sticky != CUDA_SUCCESS) return sticky;
    return ctx;
}

Status checkCurrentIfAny() {
    NVL_TRY(Runtime::get().checkInit());
    Context* ctx = current::top();
    if (ctx && !ctx->active()) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    return kOk;
}

}  // namespace nvl::core
