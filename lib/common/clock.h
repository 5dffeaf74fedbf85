// The monotonic clock, in nanoseconds.
#pragma once

#include <cstdint>
#include <ctime>

namespace nvl {

inline uint64_t monotonicNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace nvl
