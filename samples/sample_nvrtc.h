/* Kernels for the samples and benchmarks, compiled at run time by NVRTC
 * (nvrtc_compile.h, the helper the tests use too). */
#ifndef NVLITE_SAMPLE_NVRTC_H
#define NVLITE_SAMPLE_NVRTC_H

#include "nvrtc_compile.h"
#include "sample.h"

/* Compiles CUDA C++ 'source' to a cubin for 'dev''s architecture; returns it
 * malloc'ed. Stops the program when compilation fails (NVRTC's log and why
 * are on stderr). */
static inline char* compile_cubin(const char* source, CUdevice dev) {
    int major = 0, minor = 0;
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    char* cubin = nvrtc_compile(source, "kernel.cu", 0, major * 10 + minor, NULL, 0, NULL);
    if (!cubin) exit(1);
    return cubin;
}

#endif
