/*
 * bench_launch: kernel launch latency and host cost, and module load time,
 * of whichever driver-API library it is linked with (libcuda or libnvlite).
 * The kernels are compiled with NVRTC once; both libraries get the same cubin.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "../samples/sample_nvrtc.h"

static const char* kSource =
    "extern \"C\" __global__ void empty() {}\n"
    "extern \"C\" __global__ void four(int* p, int a, float b, long long c) { if (a < 0) p[0] = (int)(b + c); }\n";

/* Prints the median host time of one cuLaunchKernel over batches of launches
 * submitted back to back (the GPU drains each batch before the next). */
static void host_cost_per_launch(const char* tag, const char* what, CUfunction fn, void** args) {
    enum { REPS = 20, BATCH = 1000 };
    double t[REPS];
    for (int rep = 0; rep < REPS; ++rep) {
        double s = now();
        for (int i = 0; i < BATCH; ++i) CHECK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
        t[rep] = (now() - s) / BATCH;
        CHECK(cuCtxSynchronize());
    }
    printf("%s host cost per launch, %s: %.3f us (median of %d batches of %d)\n", tag, what, median(t, REPS) * 1e6,
           REPS, BATCH);
}

int main(int argc, char** argv) {
    const char* tag = argc > 1 ? argv[1] : "lib";
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));

    char* cubin = compile_cubin(kSource, dev);

    enum { N = 200 };
    double t[N];
    CUmodule mod;
    for (int i = 0; i < 20; ++i) {
        double a = now();
        CHECK(cuModuleLoadData(&mod, cubin));
        t[i] = now() - a;
        CHECK(cuModuleUnload(mod));
    }
    printf("%s cuModuleLoadData (small cubin): %.3f ms (median of 20)\n", tag, median(t, 20) * 1e3);

    CHECK(cuModuleLoadData(&mod, cubin));
    CUfunction empty, four;
    CHECK(cuModuleGetFunction(&empty, mod, "empty"));
    CHECK(cuModuleGetFunction(&four, mod, "four"));
    CUdeviceptr p;
    CHECK(cuMemAlloc(&p, 64));
    int a = 1;
    float b = 2.0f;
    long long c = 3;
    void* args[] = {&p, &a, &b, &c};

    for (int i = 0; i < 100; ++i) CHECK(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    CHECK(cuCtxSynchronize());
    for (int i = 0; i < N; ++i) {
        double s = now();
        CHECK(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
        CHECK(cuCtxSynchronize());
        t[i] = now() - s;
    }
    printf("%s empty launch + sync: %.2f us (median of %d)\n", tag, median(t, N) * 1e6, N);

    host_cost_per_launch(tag, "no args", empty, NULL);
    host_cost_per_launch(tag, "4 args", four, args);
    CHECK(cuMemFree(p));
    CHECK(cuModuleUnload(mod));
    CHECK(cuCtxDestroy(ctx));
    free(cubin);
    return 0;
}
