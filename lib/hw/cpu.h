// CPU-side ordering and waiting primitives for talking to the GPU.
#pragma once

#include <cstdint>
#include <ctime>

namespace nvl::hw {

// Orders earlier stores (including write-combined ones to BAR1) before later ones.
inline void storeFence() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_sfence();
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

inline uint64_t monotonicNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
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
