#include "hw/cpu.h"

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

namespace nvl::hw {
namespace {
constexpr uint64_t kSpinNs = 20000;    // pure polling first: GPU round trips are microseconds
constexpr uint64_t kBlockSpinNs = 5000;
constexpr uint64_t kYieldNs = 200000;  // then give the core away, still polling often
constexpr uint64_t kMinSleepNs = 10000;
constexpr uint64_t kMaxSleepNs = 1000000;
constexpr uint64_t kSleepFraction = 128;  // each sleep is 1/128 of the time waited so far
constexpr long kSleepSlackNs = 1000;
}  // namespace

Backoff::~Backoff() {
    if (savedSlack_ > 0) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(savedSlack_), 0, 0, 0);
}

void Backoff::sleep(uint64_t elapsedNs) {
    if (savedSlack_ < 0) {
        savedSlack_ = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        if (savedSlack_ > kSleepSlackNs) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(kSleepSlackNs), 0, 0, 0);
        else savedSlack_ = 0;  // nothing to restore
    }
    uint64_t ns = elapsedNs / kSleepFraction;
    ns = ns < kMinSleepNs ? kMinSleepNs : ns > kMaxSleepNs ? kMaxSleepNs : ns;
    timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    nanosleep(&ts, nullptr);
}

void Backoff::pause() {
    if (start_ == 0) start_ = monotonicNs();
    ++spins_;
    if (mode_ == WaitMode::Spin || (spins_ & 63) != 0) {
        cpuRelax();
        return;
    }
    const uint64_t elapsed = monotonicNs() - start_;
    switch (mode_) {
    case WaitMode::Spin:
        break;
    case WaitMode::Yield:
        if (elapsed < kSpinNs) cpuRelax();
        else sched_yield();
        break;
    case WaitMode::Block:
        if (elapsed < kBlockSpinNs) cpuRelax();
        else sleep(elapsed);
        break;
    case WaitMode::Auto:
        if (elapsed < kSpinNs) cpuRelax();
        else if (elapsed < kYieldNs) sched_yield();
        else sleep(elapsed);
        break;
    }
}

}  // namespace nvl::hw
