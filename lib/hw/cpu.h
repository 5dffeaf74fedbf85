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

// Spins briefly, then yields, then sleeps with growing intervals: waiting
// on the GPU must not burn a core once it is clearly going to take a while.
class Backoff {
public:
    void pause();

private:
    uint64_t start_ = 0;
    uint32_t spins_ = 0;
    uint32_t sleepNs_ = 0;
};

}  // namespace nvl::hw
