/* What the samples and benchmarks share: error checks and a clock. */
#ifndef NVLITE_SAMPLE_H
#define NVLITE_SAMPLE_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda.h>

/* Stops the program with the CUresult's name when a call fails. */
#define CHECK(call)                                                        \
    do {                                                                   \
        CUresult r_ = (call);                                              \
        if (r_ != CUDA_SUCCESS) {                                          \
            const char* n_ = NULL;                                         \
            cuGetErrorName(r_, &n_);                                       \
            fprintf(stderr, "%s failed: %s\n", #call, n_ ? n_ : "?");      \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

/* Monotonic time in seconds. */
static inline double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
