// Helpers shared by the runtime-API test programs (tests/cudart/*.cu): where
// they run, and cmocka assertions on cudaError_t with the call's text.
#pragma once

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

extern "C" {
#include <cmocka.h>
}

inline bool onSimulator() {
    const char* d = std::getenv("NVLITE_DEVICE");
    return d && std::strcmp(d, "sim") == 0;
}

inline void checkRt(cudaError_t expected, cudaError_t actual, const char* expr, int line) {
    if (expected == actual) return;
    print_error("line %d: %s\n  expected %s (%d), got %s (%d): %s\n", line, expr, cudaGetErrorName(expected),
                (int)expected, cudaGetErrorName(actual), (int)actual, cudaGetErrorString(actual));
    fail();
}
#define assert_rt(expected, call) checkRt((expected), (call), #call, __LINE__)
#define assert_rt_ok(call) assert_rt(cudaSuccess, (call))
