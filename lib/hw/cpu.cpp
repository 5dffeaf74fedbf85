#include "hw/cpu.h"

#include <sched.h>

namespace nvl::hw {
namespace {
constexpr uint64_t kSpinNs = 20000;    // pure spinning first: GPU round trips are microseconds
constexpr uint64_t kYieldNs = 200000;  // then give the core away, still polling often
constexpr uint32_t kMaxSleepNs = 200000;
}  // namespace

void Backoff::pause() {
    if (start_ == 0) start_ = monotonicNs();
    ++spins_;
    if ((spins_ & 63) != 0) {
        cpuRelax();
        return;
    }
    uint64_t elapsed = monotonicNs() - start_;
    if (elapsed < kSpinNs) {
        cpuRelax();
    } else if (elapsed < kYieldNs) {
        sched_yield();
    } else {
        sleepNs_ = sleepNs_ ? (sleepNs_ * 2 > kMaxSleepNs ? kMaxSleepNs : sleepNs_ * 2) : 10000;
        timespec ts{0, static_cast<long>(sleepNs_)};
        nanosleep(&ts, nullptr);
    }
}

}  // namespace nvl::hw
