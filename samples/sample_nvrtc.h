/* Kernels for the samples and benchmarks, compiled at run time by NVRTC. */
#ifndef NVLITE_SAMPLE_NVRTC_H
#define NVLITE_SAMPLE_NVRTC_H

#include <nvrtc.h>

#include "sample.h"

/* Compiles CUDA C++ 'source' to a cubin for 'dev''s architecture; returns it
 * malloc'ed. Stops the program with NVRTC's log when compilation fails. */
static inline char* compile_cubin(const char* source, CUdevice dev) {
    int major = 0, minor = 0;
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    char arch[32];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
    const char* opts[] = {arch};
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, source, "kernel.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        fprintf(stderr, "nvrtcCreateProgram failed: %s\n", nvrtcGetErrorString(r));
        exit(1);
    }
    if ((r = nvrtcCompileProgram(prog, 1, opts)) != NVRTC_SUCCESS) {
        size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        char* log = malloc(n + 1);
        if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) fprintf(stderr, "%s\n", log);
        fprintf(stderr, "nvrtcCompileProgram failed: %s\n", nvrtcGetErrorString(r));
        exit(1);
    }
    size_t size = 0;
    char* cubin = NULL;
    if (nvrtcGetCUBINSize(prog, &size) != NVRTC_SUCCESS || !(cubin = malloc(size)) ||
        nvrtcGetCUBIN(prog, cubin) != NVRTC_SUCCESS) {
        fprintf(stderr, "no cubin from NVRTC\n");
        exit(1);
    }
    nvrtcDestroyProgram(&prog);
    return cubin;
}

#endif
