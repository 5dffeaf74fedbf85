/*
 * bench_launch: kernel launch latency and host cost, and module load time,
 * of whichever driver-API library it is linked with (libcuda or libnvlite).
 * The kernels are compiled with NVRTC once; both libraries get the same cubin.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda.h>
#include <nvrtc.h>

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

static const char* kSource =
    "extern \"C\" __global__ void empty() {}\n"
    "extern \"C\" __global__ void four(int* p, int a, float b, long long c) { if (a < 0) p[0] = (int)(b + c); }\n";

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

int main(int argc, char** argv) {
    const char* tag = argc > 1 ? argv[1] : "lib";
    CUdevice dev;
    CUcontext ctx;
    int major = 0, minor = 0;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));

    nvrtcProgram prog;
    char arch[32];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
    const char* opts[] = {arch};
    if (nvrtcCreateProgram(&prog, kSource, "bench.cu", 0, NULL, NULL) != NVRTC_SUCCESS ||
        nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS)
        return 1;
    size_t size = 0;
    nvrtcGetCUBINSize(prog, &size);
    char* cubin = malloc(size);
    nvrtcGetCUBIN(prog, cubin);
    nvrtcDestroyProgram(&prog);

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

    enum { BATCH = 1000 };
    for (int rep = 0; rep < N / 10; ++rep) {
        double s = now();
        for (int i = 0; i < BATCH; ++i) CHECK(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
        t[rep] = (now() - s) / BATCH;
        CHECK(cuCtxSynchronize());
    }
    printf("%s host cost per launch, no args: %.3f us (median of %d batches of %d)\n", tag, median(t, N / 10) * 1e6,
           N / 10, BATCH);
    for (int rep = 0; rep < N / 10; ++rep) {
        double s = now();
        for (int i = 0; i < BATCH; ++i) CHECK(cuLaunchKernel(four, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
        t[rep] = (now() - s) / BATCH;
        CHECK(cuCtxSynchronize());
    }
    printf("%s host cost per launch, 4 args: %.3f us (median of %d batches of %d)\n", tag, median(t, N / 10) * 1e6,
           N / 10, BATCH);
    CHECK(cuMemFree(p));
    CHECK(cuModuleUnload(mod));
    CHECK(cuCtxDestroy(ctx));
    free(cubin);
    return 0;
}
