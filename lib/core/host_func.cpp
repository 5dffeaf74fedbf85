#include "core/host_func.h"

#include <atomic>
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

constexpr size_t kGateBytes = 4096;

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
    if (gate_) return kOk;
    NVL_ASSIGN_OR_RETURN(gate_, ctx_.device().gpu().allocHost(kGateBytes));
    std::memset(gate_->cpu(), 0, kGateBytes);
    try {
        thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
        gate_.reset();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return kOk;
}

Status HostFunctions::enqueue(Stream& stream, const Call& call) {
    {
        std::lock_guard lock(mutex_);
        NVL_TRY(start());
    }
    const uint64_t gateVa = gate_->va();
    hw::Channel& ch = stream.lastChannelOr(stream.computeChannel());
    Dependencies after;
    // The job is queued while the acquire is written (the stream's lock
    // held): its number, its place in the queue and the acquire agree, and
    // the thread has it before anything (CUDA_LAUNCH_BLOCKING) waits for it.
    return stream
        .submitWithData(
            ch, hw::Channel::kWaitDwords, 0,
            [&](hw::PushWriter& w, const hw::Channel::DataSlot&) {
                uint64_t number;
                {
                    std::lock_guard lock(mutex_);
                    number = ++enqueued_;
                    jobs_.push_back(Job{call, after, number});
                }
                wake_.notify_one();
                hw::writeAcquire(w, gateVa, number);
            },
            nullptr, hw::Channel::Completion::Channel, nullptr, &after)
        .status();
}

void HostFunctions::run() {
    auto* gate = static_cast<uint64_t*>(gate_->cpu());  // set before the thread started
    for (;;) {
        Job job;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
            if (jobs_.empty()) return;
            job = jobs_.front();
            jobs_.pop_front();
        }
        Status s = kOk;
        for (const Point& p : job.after) {
            s = p.channel->wait(p.value);
            if (!s.ok()) break;
        }
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
        __atomic_store_n(gate, job.number, __ATOMIC_RELEASE);
    }
}

}  // namespace nvl::core
