#include "core/host_func.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <system_error>

#include "core/context.h"
#include "core/device.h"
#include "core/runtime.h"
#include "hw/channel.h"

namespace nvl::core {
namespace {

// Threads inside a host function now (checked first: inside() costs one
// load on every other thread).
std::atomic<int> running{0};
thread_local bool tlsInside = false;

constexpr size_t kGatePageBytes = 4096;

class InsideScope {
public:
    InsideScope() {
        tlsInside = true;
        running.fetch_add(1, std::memory_order_acq_rel);
    }
    ~InsideScope() {
        running.fetch_sub(1, std::memory_order_acq_rel);
        tlsInside = false;
    }
    InsideScope(const InsideScope&) = delete;
    InsideScope& operator=(const InsideScope&) = delete;
};

}  // namespace

bool HostFunctions::inside() { return running.load(std::memory_order_acquire) != 0 && tlsInside; }

bool insideHostFunction() { return HostFunctions::inside(); }

HostFunctions::~HostFunctions() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

Status HostFunctions::start() {
    if (thread_.joinable()) return kOk;
    try {
        thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return kOk;
}

Result<size_t> HostFunctions::takeSlot() {
    if (freeSlots_.empty()) {
        NVL_ASSIGN_OR_RETURN(auto page, ctx_.device().gpu().allocHost(kGatePageBytes));
        auto* cpu = static_cast<uint64_t*>(page->cpu());
        std::memset(cpu, 0, kGatePageBytes);
        for (size_t i = 0; i < kGatePageBytes / sizeof(uint64_t); ++i) {
            freeSlots_.push_back(slots_.size());
            slots_.push_back(Slot{cpu + i, page->va() + i * sizeof(uint64_t), 0});
        }
        gatePages_.push_back(std::move(page));
    }
    const size_t slot = freeSlots_.back();
    freeSlots_.pop_back();
    return slot;
}

Status HostFunctions::enqueue(Stream& stream, const Call& call) {
    size_t slot;
    uint64_t value, va;
    {
        std::lock_guard lock(mutex_);
        NVL_TRY(start());
        NVL_ASSIGN_OR_RETURN(slot, takeSlot());
        value = ++slots_[slot].last;
        va = slots_[slot].va;
    }
    hw::Channel& ch = stream.lastChannelOr(stream.computeChannel());
    Dependencies after;
    // The job is queued while the acquire is written (the stream's lock
    // held), so the thread has it before anything (CUDA_LAUNCH_BLOCKING) waits for it.
    Status s = stream
                   .submitWithData(
                       ch, hw::Channel::kWaitDwords, 0,
                       [&](hw::PushWriter& w, const hw::Channel::DataSlot&) {
                           {
                               std::lock_guard lock(mutex_);
                               jobs_.push_back(Job{call, after, slot, value});
                           }
                           wake_.notify_one();
                           hw::writeAcquire(w, va, value);
                       },
                       nullptr, hw::Channel::Completion::Channel, nullptr, &after)
                   .status();
    if (!s.ok()) {
        std::lock_guard lock(mutex_);
        // Not submitted: the slot's waiters (none) never see this value;
        // the next use waits for a larger one.
        freeSlots_.push_back(slot);
    }
    return s;
}

bool HostFunctions::takeReady(Job& job, Status& status) {
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
        Status s = kOk;
        bool ready = true;
        for (const Point& p : it->after) {
            if (p.done()) continue;
            s = p.channel->scopeError();  // a fault: ready, with the fault
            if (s.ok()) ready = false;
            break;
        }
        if (!ready) continue;
        job = std::move(*it);
        jobs_.erase(it);
        status = s;
        return true;
    }
    return false;
}

void HostFunctions::run() {
    // While every job waits for the GPU the thread polls, in steps that grow
    // with the time waited (a new job wakes it at once).
    constexpr auto kMinStep = std::chrono::microseconds(10), kMaxStep = std::chrono::microseconds(2000);
    auto step = kMinStep;
    std::unique_lock lock(mutex_);
    for (;;) {
        if (jobs_.empty()) {
            step = kMinStep;
            if (stopping_) return;
            wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
            continue;
        }
        Job job;
        Status s;
        if (!takeReady(job, s)) {
            const size_t queued = jobs_.size();
            wake_.wait_for(lock, step, [&] { return jobs_.size() != queued; });
            step = std::min(step + step / 4 + std::chrono::microseconds(1), kMaxStep);
            continue;
        }
        step = kMinStep;
        uint64_t* gate = slots_[job.slot].cpu;
        lock.unlock();
        if (s.ok() && ctx_.stickyError() != CUDA_SUCCESS) s = ctx_.stickyError();
        if (!s.ok()) (void)ctx_.noted(s);
        {
            InsideScope inside;
            try {
                if (job.call.callback) job.call.callback(job.call.stream, s.code(), job.call.userData);
                else if (s.ok()) job.call.function(job.call.userData);
            } catch (...) {
                // A C++ exception out of a user's function must not end the process.
            }
        }
        __atomic_store_n(gate, job.value, __ATOMIC_RELEASE);
        lock.lock();
        freeSlots_.push_back(job.slot);
    }
}

}  // namespace nvl::core
