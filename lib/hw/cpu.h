// CPU-side ordering and waiting primitives for talking to the GPU.
#pragma once

#include <cstdint>

#include "common/clock.h"

namespace nvl::hw {

// Orders earlier stores (including write-combined ones to BAR1) before later ones.
inline void storeFence() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_sfence();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

// Orders earlier stores (write-combined ones included) before every later
// load and store: after CPU writes through BAR1 that a read may follow.
inline void writeBarrier() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_mfence();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

// How a thread waits for the GPU (the context's CU_CTX_SCHED_* choice).
//   Spin   polls without pause, lowest latency, one core busy
//   Yield  polls, giving the core to other threads between polls
//   Block  polls a few microseconds, then sleeps between polls
//   Auto   polls, then yields, then sleeps: short waits stay fast, long
//          ones do not burn a core
enum class WaitMode { Auto, Spin, Yield, Block };

// One wait: call pause() between polls. Sleeps grow with the time already
// waited (a small fraction of it), so a wait ends soon after the work does
// without waking up too often; the thread's timer slack is lowered while it
// sleeps (and restored) so that a short sleep is a short sleep.
class Backoff {
public:
    explicit Backoff(WaitMode mode = WaitMode::Auto) : mode_(mode) {}
    ~Backoff();
    Backoff(const Backoff&) = delete;
    Backoff& operator=(const Backoff&) = delete;
    void pause();

private:
    void sleep(uint64_t elapsedNs);

    WaitMode mode_;
    uint64_t start_ = 0;
    uint32_t spins_ = 0;
    long savedSlack_ = -1;  // the thread's timer slack before we lowered it
};

}  // namespace nvl::hw
