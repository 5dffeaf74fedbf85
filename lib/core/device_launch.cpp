#include "core/device_launch.h"

#include <cstring>

#include "common/trace.h"
#include "core/context.h"
#include "core/device.h"
#include "core/host_func.h"
#include "core/launch.h"
#include "core/memory.h"
#include "core/module.h"
#include "hw/cpu.h"
#include "hw/gpu.h"

namespace nvl::core {

// The queues' memory of one activation of a context: taken by streams, given
// back when a stream lets go, freed at teardown.
class LaunchQueuePool {
public:
    explicit LaunchQueuePool(Context& ctx) : ctx_(ctx) {}

    Result<DeviceLaunchQueue::Memory> take(uint64_t count) {
        {
            std::lock_guard lock(mutex_);
            for (auto it = free_.begin(); it != free_.end(); ++it) {
                if (it->count != count) continue;
                DeviceLaunchQueue::Memory m = std::move(*it);
                free_.erase(it);
                return m;
            }
        }
        DeviceLaunchQueue::Memory m;
        // Device atomics on the header: video memory, which small
        // allocations also map for the CPU at the same address.
        NVL_ASSIGN_OR_RETURN(DeviceHeap::Block header, ctx_.heap().alloc(sizeof(devrt::LaunchQueue)));
        if (!header.cpuVisible) {
            ctx_.heap().free(header.va);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        // The slots, and the overflow slot after them.
        const uint64_t bytes = (count + 1) * devrt::kLaunchSlotBytes;
        auto slots = ctx_.device().gpu().allocHost(bytes);
        if (!slots) {
            ctx_.heap().free(header.va);
            return slots.status();
        }
        std::memset((*slots)->cpu(), 0, bytes);
        m.headerVa = header.va;
        m.slots = std::move(*slots);
        m.count = count;
        devrt::LaunchQueue init{};
        init.slots = count;
        init.slotsAddress = m.slots->va();
        std::memcpy(reinterpret_cast<void*>(m.headerVa), &init, sizeof init);
        hw::writeBarrier();
        return m;
    }

    void giveBack(DeviceLaunchQueue::Memory m) {
        std::lock_guard lock(mutex_);
        // After teardown the header went with the context's heap.
        if (!released_) free_.push_back(std::move(m));
    }

    // Teardown: the GPU is idle.
    void release() {
        std::vector<DeviceLaunchQueue::Memory> gone;
        {
            std::lock_guard lock(mutex_);
            released_ = true;
            gone.swap(free_);
        }
        for (auto& m : gone) ctx_.heap().free(m.headerVa);
    }

private:
    Context& ctx_;
    std::mutex mutex_;
    bool released_ = false;
    std::vector<DeviceLaunchQueue::Memory> free_;
};

DeviceLaunchQueue::~DeviceLaunchQueue() { pool_->giveBack(std::move(mem_)); }

namespace {

// The drain's host function: a stream callback, so that it is called (and
// its job freed) after a failure too.
struct DrainJob {
    DeviceLaunches* owner;
    DeviceLaunches::Drain drain;
};

void CUDA_CB runDrain(CUstream, CUresult status, void* userData) {
    std::unique_ptr<DrainJob> job(static_cast<DrainJob*>(userData));
    if (status == CUDA_SUCCESS) (void)job->owner->drain(job->drain);
}

}  // namespace

DeviceLaunches::DeviceLaunches(Context& ctx) : ctx_(ctx), pool_(std::make_shared<LaunchQueuePool>(ctx)) {}

DeviceLaunches::~DeviceLaunches() = default;

size_t DeviceLaunches::pendingLimit() const {
    std::lock_guard lock(mutex_);
    return pendingLimit_;
}

// libcuda's launches fail once more are pending than the limit rounded up
// to a multiple of 32 (at least 32): seen on the H200 with limits 1 and 17.
uint64_t DeviceLaunches::slotsFor(size_t limit) {
    return std::max<uint64_t>(kSlotGranule, (limit + kSlotGranule - 1) / kSlotGranule * kSlotGranule);
}

Status DeviceLaunches::setPendingLimit(size_t count) {
    if (count > kMaxPendingLaunches) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(mutex_);
    pendingLimit_ = count;
    return kOk;
}

Result<std::shared_ptr<DeviceLaunchQueue>> DeviceLaunches::queueFor(Stream& st) {
    std::lock_guard lock(mutex_);
    // A queue made under an older limit is replaced by one of the new size.
    const uint64_t slots = slotsFor(pendingLimit_);
    if (st.deviceLaunchQueue && st.deviceLaunchQueue->count() == slots) return st.deviceLaunchQueue;
    NVL_ASSIGN_OR_RETURN(DeviceLaunchQueue::Memory m, pool_->take(slots));
    st.deviceLaunchQueue = std::make_shared<DeviceLaunchQueue>(pool_, std::move(m));
    return st.deviceLaunchQueue;
}

Status DeviceLaunches::runAfter(Stream& st, std::shared_ptr<DeviceLaunchQueue> queue, Function& parent) {
    NVL_ASSIGN_OR_RETURN(HostFunctions * hf, ctx_.hostFunctions());
    auto job = std::make_unique<DrainJob>(DrainJob{this, Drain{std::move(queue), parent.module().functions()}});
    HostFunctions::Call call;
    call.callback = runDrain;
    call.userData = job.get();
    NVL_TRY(hf->enqueue(st, call));
    (void)job.release();  // the host function frees it
    return kOk;
}

Status DeviceLaunches::drain(const Drain& d) {
    // runLaunches gave every slot back ('taken' is 0 again); the numbers start anew.
    Status s = runLaunches(d);
    __atomic_store_n(&d.queue->header()->launched, uint64_t{0}, __ATOMIC_RELAXED);
    hw::writeBarrier();
    if (!s.ok()) {
        if (trace::api()) trace::print("device-side launch failed: error %d", s.code());
        // A fault is the context's already; a launch the host could not make
        // fails it as a failed launch would.
        ctx_.markFailed(Context::isFault(s.code()) ? s.code() : CUDA_ERROR_LAUNCH_FAILED);
    }
    return s;
}

// Depth first, without recursion (the depth is bounded by the slots only):
// a level is the launches one grid made (the slots [from, end) it took, in
// launch order); each launch runs, then the level of what it launched (the
// slots above 'end'), then the next launch. A level's slots are free again
// once it is done.
Status DeviceLaunches::runLaunches(const Drain& d) {
    const DeviceLaunchQueue& q = *d.queue;
    devrt::LaunchQueue* h = q.header();
    struct Level {
        uint64_t from, end;
        std::vector<uint64_t> order;
        size_t next = 0;
    };
    auto levelFrom = [&](uint64_t from) {
        Level l;
        l.end = std::max(from, std::min<uint64_t>(__atomic_load_n(&h->taken, __ATOMIC_ACQUIRE), q.count()));
        l.from = from;
        l.order = launchOrder(from, l.end, [&](uint64_t i) { return __atomic_load_n(&q.slot(i)->number, __ATOMIC_ACQUIRE); });
        return l;
    };
    std::vector<Level> levels;
    levels.push_back(levelFrom(0));
    Status result = kOk;
    while (!levels.empty()) {
        Level& l = levels.back();
        if (!result.ok() || l.next == l.order.size()) {
            for (uint64_t i = l.from; i < l.end; ++i) __atomic_store_n(&q.slot(i)->number, 0u, __ATOMIC_RELAXED);
            __atomic_store_n(&h->taken, l.from, __ATOMIC_RELAXED);
            hw::writeBarrier();
            levels.pop_back();
            continue;
        }
        const uint64_t i = l.order[l.next++];
        const uint64_t end = l.end;
        const devrt::LaunchSlot slot = *q.slot(i);
        // What this launch launches goes above the slots of its siblings.
        __atomic_store_n(&h->taken, end, __ATOMIC_RELAXED);
        hw::writeBarrier();
        result = launchOne(d, slot, q.params(i), static_cast<uint32_t>(std::min<size_t>(levels.size(), UINT32_MAX)));
        if (result.ok()) levels.push_back(levelFrom(end));
    }
    return result;
}

Status DeviceLaunches::launchOne(const Drain& d, const devrt::LaunchSlot& slot, const uint8_t* params, uint32_t depth) {
    Function* f = nullptr;
    for (const auto& fn : d.functions) {
        if (fn->descriptor().programVa == slot.function) {
            f = fn.get();
            break;
        }
    }
    if (!f) {
        if (trace::api())
            trace::print("device-side launch of 0x%llx: not a kernel of the launching module",
                         static_cast<unsigned long long>(slot.function));
        return CUDA_ERROR_LAUNCH_FAILED;
    }
    size_t bytes = f->kernel().paramBytes;
    if (bytes > devrt::kLaunchParamBytes) return CUDA_ERROR_LAUNCH_FAILED;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, const_cast<uint8_t*>(params), CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes,
                     CU_LAUNCH_PARAM_END};
    LaunchRequest r{};
    for (int i = 0; i < 3; ++i) {
        r.grid[i] = slot.grid[i];
        r.block[i] = slot.block[i];
    }
    r.sharedMemBytes = slot.sharedBytes;
    r.kernelParams = nullptr;
    r.extra = extra;
    r.launchQueue = d.queue->va();
    r.launchDepth = depth;
    NVL_ASSIGN_OR_RETURN(Stream * st, launchStream());
    Status s = launchKernel(*st, *f, r);
    if (!s.ok()) {
        if (trace::api()) trace::print("device-side launch refused: error %d", s.code());
        return s;
    }
    return ctx_.noted(st->synchronize(false));
}

Result<Stream*> DeviceLaunches::launchStream() {
    std::lock_guard lock(mutex_);
    if (!stream_) {
        auto st = std::make_shared<Stream>(ctx_, Stream::Kind::NonBlocking, CU_STREAM_NON_BLOCKING, 0);
        NVL_ASSIGN_OR_RETURN(hw::ContextChannels::Lane lane, ctx_.laneFor(kDeviceLaunchLane));
        st->setLane(kDeviceLaunchLane, lane);
        stream_ = std::move(st);
    }
    return stream_.get();
}

void DeviceLaunches::release() {
    std::shared_ptr<Stream> stream;
    std::shared_ptr<DeviceLaunchQueue> legacy;
    std::shared_ptr<LaunchQueuePool> pool;
    {
        std::lock_guard lock(mutex_);
        stream.swap(stream_);
        legacy.swap(ctx_.nullStream().deviceLaunchQueue);
        pool = pool_;
        pool_ = std::make_shared<LaunchQueuePool>(ctx_);
        pendingLimit_ = kDefaultPendingLaunches;
    }
    if (stream) stream->reset();
    legacy.reset();
    pool->release();
}

}  // namespace nvl::core
