#include "core/context.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/align.h"
#include "common/trace.h"
#include "core/builtin.h"
#include "core/device.h"
#include "core/devrt.h"
#include "core/event.h"
#include "core/handle_registry.h"
#include "core/host_func.h"
#include "core/mem_pool.h"
#include "core/memory.h"
#include "core/peer.h"
#include "core/runtime.h"
#include "core/staging.h"

namespace nvl::core {
namespace {

thread_local std::vector<Context*> tlsStack;

}  // namespace

Result<Context*> Context::create(Device& device, unsigned flags, bool primary) {
    auto* ctx = new Context(device, primary);
    HandleRegistry<Context>::get().add(ctx);
    if (!primary) NVL_TRY(ctx->activate(flags));
    return ctx;
}

Context::Context(Device& device, bool primary)
    : device_(device),
      primary_(primary),
      nullStream_(*this, Stream::Kind::Legacy, 0, 0),
      devrt_(std::make_unique<DeviceRuntime>(*this)),
      builtins_(std::make_unique<BuiltinKernels>(*this)) {}
Context::~Context() = default;

Context* Context::fromHandle(CUcontext handle) { return HandleRegistry<Context>::get().find(handle); }

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
    active_.store(true, std::memory_order_release);
    return kOk;
}

void Context::deactivate() {
    // First, while the context still works: the destructors may use it.
    storage.destroyAll(handle());
    std::lock_guard lock(lifecycleMutex_);
    if (!active()) return;
    active_.store(false, std::memory_order_release);
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
    MemPools::get().releaseContext(*this);
    {
        std::lock_guard streamsLock(streamsMutex_);
        for (Stream* st : streams_) {
            HandleRegistry<Stream>::get().remove(st);
            delete st;
        }
        streams_.clear();
        for (Event* e : events_) {
            HandleRegistry<Event>::get().remove(e);
            e->detach();
            delete e;
        }
        events_.clear();
        retired_.clear();
    }
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
        std::lock_guard tsLock(timestampMutex_);
        freeTimestamps_.clear();
        pendingTimestamps_.clear();
        timestampPages_.clear();
    }
    std::lock_guard localLock(localMutex_);
    localMemory_.clear();
    residentModules_.store(0, std::memory_order_release);
    localBytesPerThread_ = 0;
    localVa_ = 0;
    localBytesPerTpc_ = 0;
    nextLane_ = 0;
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
    auto st = std::make_unique<Stream>(*this, kind, flags, priority);
    size_t index;
    {
        std::lock_guard lock(localMutex_);
        index = 1 + nextLane_++ % (kMaxLanes - 1);
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
    Stream* raw = st.release();
    {
        std::lock_guard lock(streamsMutex_);
        streams_.insert(raw);
    }
    HandleRegistry<Stream>::get().add(raw);
    return raw;
}

void Context::destroyStream(Stream* s) {
    HandleRegistry<Stream>::get().remove(s);
    {
        std::lock_guard lock(streamsMutex_);
        streams_.erase(s);
        // Its work still runs, and the legacy stream still follows it.
        if (s->kind() == Stream::Kind::Blocking && !s->idle()) {
            retired_.pruneDone();
            retired_.add(s->last());
        }
    }
    delete s;
}

void Context::addBlockingStreamPoints(Dependencies& deps) {
    std::lock_guard lock(streamsMutex_);
    for (Stream* st : streams_)
        if (st->kind() == Stream::Kind::Blocking) deps.add(st->last());
    retired_.pruneDone();
    for (const Point& p : retired_) deps.add(p);
}

void Context::addEvent(Event* e) {
    std::lock_guard lock(streamsMutex_);
    events_.insert(e);
}

void Context::removeEvent(Event* e) {
    std::lock_guard lock(streamsMutex_);
    events_.erase(e);
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

Context* top() { return tlsStack.empty() ? nullptr : tlsStack.back(); }

void push(Context* ctx) { tlsStack.push_back(ctx); }

Context* pop() {
    if (tlsStack.empty()) return nullptr;
    Context* c = tlsStack.back();
    tlsStack.pop_back();
    return c;
}

void set(Context* ctx) {
    if (tlsStack.empty()) {
        if (ctx) tlsStack.push_back(ctx);
    } else if (ctx) {
        tlsStack.back() = ctx;
    } else {
        tlsStack.pop_back();
    }
}

void remove(Context* ctx) { std::erase(tlsStack, ctx); }

}  // namespace current

Result<Context*> requireCurrent() {
    NVL_TRY(Runtime::get().checkInit());
    Context* ctx = current::top();
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
    // Destroyed, or a primary context that was released or reset (libcuda
    // does not bring a reset primary context back until it is retained).
    if (!ctx->active()) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
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
