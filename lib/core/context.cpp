#include "core/context.h"

#include <algorithm>
#include <vector>

#include "common/align.h"
#include "core/device.h"
#include "core/handle_registry.h"
#include "core/memory.h"
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

Context::Context(Device& device, bool primary) : device_(device), primary_(primary) {}
Context::~Context() = default;

Context* Context::fromHandle(CUcontext handle) { return HandleRegistry<Context>::get().find(handle); }

Status Context::activate(unsigned flags) {
    std::lock_guard lock(lifecycleMutex_);
    if (active()) return kOk;
    NVL_ASSIGN_OR_RETURN(channels_, hw::ContextChannels::create(device_.gpu()));
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
    flags_ = flags;
    generation_.fetch_add(1, std::memory_order_acq_rel);
    active_.store(true, std::memory_order_release);
    return kOk;
}

void Context::deactivate() {
    std::lock_guard lock(lifecycleMutex_);
    if (!active()) return;
    active_.store(false, std::memory_order_release);
    (void)synchronize();
    AddressMap::get().removeContext(this);
    staging_.reset();
    host_.reset();
    heap_.reset();
    nullStream_.reset();
    channels_.reset();
    std::lock_guard localLock(localMutex_);
    localMemory_.clear();
    localBytesPerThread_ = 0;
}

Status Context::synchronize() {
    hw::Channel& copy = channels_->copy();
    hw::Channel& compute = channels_->compute();
    NVL_TRY(copy.wait(copy.lastSubmitted()));
    NVL_TRY(compute.wait(compute.lastSubmitted()));
    return kOk;
}

hw::ComputeState Context::computeState() const {
    hw::ComputeState s = computeState_;
    s.localBytesPerThread = localBytesPerThread_.load(std::memory_order_acquire);
    return s;
}

Status Context::ensureLocalMemory(uint32_t bytesPerThread) {
    // The hardware's own per-thread area comes on top of what the kernel asks
    // for (tinygrad measured 0x240 bytes on sm_8x/sm_90).
    constexpr uint32_t kReservedPerThread = 0x240;
    const uint32_t want = static_cast<uint32_t>(alignUp(bytesPerThread + kReservedPerThread, 32));
    if (localBytesPerThread_.load(std::memory_order_acquire) >= want) return kOk;
    std::lock_guard lock(localMutex_);
    if (localBytesPerThread_.load(std::memory_order_relaxed) >= want) return kOk;
    const hw::GpuInfo& gi = device_.info();
    const hw::LocalMemorySize size =
        hw::localMemorySize(want, gi.maxWarpsPerSm, gi.smPerTpc, gi.maxTpcPerGpc, gi.gpcCount);
    NVL_ASSIGN_OR_RETURN(auto mem, device_.gpu().allocVideo(size.totalBytes, hw::VideoMemoryOptions{}));
    const uint64_t va = mem->va();
    NVL_TRY(nullStream_
                .submit(channels_->compute(), hw::kLocalMemoryDwords,
                        [&](hw::PushWriter& w) { hw::setLocalMemory(w, va, size.bytesPerTpc); })
                .status());
    localMemory_.push_back(std::move(mem));
    localBytesPerThread_.store(want, std::memory_order_release);
    return kOk;
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
    return ctx;
}

Status checkCurrentIfAny() {
    NVL_TRY(Runtime::get().checkInit());
    Context* ctx = current::top();
    if (ctx && !ctx->active()) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    return kOk;
}

}  // namespace nvl::core
