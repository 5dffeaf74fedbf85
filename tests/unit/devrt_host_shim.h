// What devrt/devrt.cu needs from CUDA, for compiling it as host code in the
// tests: the qualifiers, atomicCAS, the fences, __trap() (a C++ exception
// here) and blockIdx/threadIdx (per CPU thread). The device's own memory
// ordering helpers have host versions in devrt.cu itself.
#pragma once

#include <stddef.h>
#include <stdint.h>

#define __device__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))

namespace devrthost {
struct Trap {};  // what __trap() throws
struct Dim3 {
    unsigned x = 0, y = 0, z = 0;
};
}  // namespace devrthost

[[noreturn]] inline void __trap() { throw devrthost::Trap{}; }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long expected, unsigned long long desired) {
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return expected;
}
inline thread_local devrthost::Dim3 blockIdx, threadIdx;
