/*
 * bench_events: what events measure, and how much streams overlap, with
 * whichever driver-API library it is linked with (libcuda or libnvlite). Run
 * both builds in one go on the same GPU and compare the lines:
 *
 *   event-timed kernel   a fixed-work FMA kernel (the same kernel and launch
 *                        as tests/hw/test_hw_streams.c's "event timing:
 *                        fma_loop"), timed with cuEventElapsedTime, median
 *                        of 20: the two libraries should agree within 5 %
 *   event-timed spin     a kernel spinning 10 ms on %globaltimer
 *   overlap              a 30 ms spin kernel and a pinned host-to-device copy
 *                        of about 30 ms in two streams, alone and together
 *                        (events on the legacy stream around them): together
 *                        / (sum alone), 0.5 = full overlap, 1.0 = none; and
 *                        two spin kernels the same way
 *   host costs           cuEventRecord, cuEventQuery of a reached event
 *
 * The kernels are compiled with NVRTC once; both libraries get the same cubin.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../samples/sample_nvrtc.h"
#include "bench.h"

static const char* kSource =
    "extern \"C\" {\n"
    "__global__ void spin_ns(unsigned long long ns, unsigned long long* out) {\n"
    "    unsigned long long t0, t;\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "    do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); } while (t - t0 < ns);\n"
    "    if (out && threadIdx.x == 0) out[blockIdx.x] = t - t0;\n"
    "}\n"
    "__global__ void fma_loop(float* out, int iters) {\n"
    "    float a = threadIdx.x * 1e-3f, b = 0.999f, c = 1e-4f;\n"
    "    for (int i = 0; i < iters; ++i) a = fmaf(a, b, c);\n"
    "    out[blockIdx.x * blockDim.x + threadIdx.x] = a;\n"
    "}\n"
    "}\n";

#define FMA_GRID 1056 /* 8 blocks of 256 threads per SM of an H200 */
#define FMA_ITERS (1 << 19)

static CUfunction spin_fn, fma_fn;

static float elapsed_ms(CUevent a, CUevent b) {
    float ms = 0;
    CHECK(cuEventElapsedTime(&ms, a, b));
    return ms;
}

static void spin(CUstream s, double ms, unsigned blocks, unsigned threads) {
    unsigned long long ns = (unsigned long long)(ms * 1e6);
    CUdeviceptr none = 0;
    void* params[] = {&ns, &none};
    CHECK(cuLaunchKernel(spin_fn, blocks, 1, 1, threads, 1, 1, 0, s, params, NULL));
}

/* The overlap runs: 1 the first alone, 2 the second alone, 3 both. */
typedef struct {
    CUstream s1, s2;
    CUdeviceptr dev;
    void* host;
    size_t bytes;
    int two_kernels;
} overlap;

static void overlap_work(const overlap* o, int which) {
    if (which & 1) spin(o->s1, 30.0, o->two_kernels ? 2 : 1, o->two_kernels ? 64 : 32);
    if (which & 2) {
        if (o->two_kernels)
            spin(o->s2, 30.0, 2, 64);
        else
            CHECK(cuMemcpyHtoDAsync(o->dev, o->host, o->bytes, o->s2));
    }
}

/* Best of three, between two events on the legacy stream (the blocking
 * streams s1 and s2 follow the first and precede the second). */
static double overlap_time(const overlap* o, int which) {
    CUevent a, b;
    CHECK(cuEventCreate(&a, 0));
    CHECK(cuEventCreate(&b, 0));
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
        CHECK(cuCtxSynchronize());
        CHECK(cuEventRecord(a, NULL));
        overlap_work(o, which);
        CHECK(cuEventRecord(b, NULL));
        CHECK(cuEventSynchronize(b));
        const double ms = elapsed_ms(a, b);
        if (ms < best) best = ms;
    }
    CHECK(cuEventDestroy(a));
    CHECK(cuEventDestroy(b));
    return best;
}

int main(int argc, char** argv) {
    const char* tag = argc > 1 ? argv[1] : "lib";
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    char* cubin = compile_cubin(kSource, dev);
    CUmodule mod;
    CHECK(cuModuleLoadData(&mod, cubin));
    CHECK(cuModuleGetFunction(&spin_fn, mod, "spin_ns"));
    CHECK(cuModuleGetFunction(&fma_fn, mod, "fma_loop"));

    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUevent a, b;
    CHECK(cuEventCreate(&a, 0));
    CHECK(cuEventCreate(&b, CU_EVENT_BLOCKING_SYNC));

    /* The fixed-work kernel. */
    enum { RUNS = 20 };
    CUdeviceptr out;
    CHECK(cuMemAlloc(&out, (size_t)FMA_GRID * 256 * 4));
    int iters = FMA_ITERS;
    void* params[] = {&out, &iters};
    for (int i = 0; i < 3; ++i) CHECK(cuLaunchKernel(fma_fn, FMA_GRID, 1, 1, 256, 1, 1, 0, s, params, NULL));
    CHECK(cuStreamSynchronize(s));
    double ev[RUNS], host[RUNS];
    for (int i = 0; i < RUNS; ++i) {
        const double t0 = now();
        CHECK(cuEventRecord(a, s));
        CHECK(cuLaunchKernel(fma_fn, FMA_GRID, 1, 1, 256, 1, 1, 0, s, params, NULL));
        CHECK(cuEventRecord(b, s));
        CHECK(cuEventSynchronize(b));
        host[i] = (now() - t0) * 1e3;
        ev[i] = elapsed_ms(a, b);
    }
    printf("%s event-timed kernel: %.3f ms (median of %d)\n", tag, median(ev, RUNS), RUNS);
    printf("%s event-timed kernel, host wall clock: %.3f ms (median of %d)\n", tag, median(host, RUNS), RUNS);

    /* A 10 ms spin. */
    for (int i = 0; i < 5; ++i) {
        CHECK(cuEventRecord(a, s));
        spin(s, 10.0, 1, 32);
        CHECK(cuEventRecord(b, s));
        CHECK(cuEventSynchronize(b));
        ev[i] = elapsed_ms(a, b);
    }
    printf("%s event-timed 10 ms spin: %.3f ms (median of 5)\n", tag, median(ev, 5));

    /* Overlap: calibrate the copy to about 30 ms. */
    overlap o = {NULL, NULL, 0, NULL, 256u << 20, 0};
    CHECK(cuStreamCreate(&o.s1, 0));
    CHECK(cuStreamCreate(&o.s2, 0));
    CHECK(cuMemAllocHost(&o.host, o.bytes));
    memset(o.host, 0x5a, o.bytes);
    CHECK(cuMemAlloc(&o.dev, o.bytes));
    const double t256 = overlap_time(&o, 2);
    size_t want = (size_t)((double)o.bytes * 30.0 / t256) & ~(size_t)((1u << 20) - 1);
    if (want < (64u << 20)) want = 64u << 20;
    if (want > ((size_t)4 << 30)) want = (size_t)4 << 30;
    CHECK(cuMemFreeHost(o.host));
    CHECK(cuMemFree(o.dev));
    o.bytes = want;
    CHECK(cuMemAllocHost(&o.host, o.bytes));
    memset(o.host, 0x5a, o.bytes);
    CHECK(cuMemAlloc(&o.dev, o.bytes));
    double k1 = overlap_time(&o, 1), c1 = overlap_time(&o, 2), both = overlap_time(&o, 3);
    printf(
        "%s copy/kernel overlap: kernel %.2f ms, copy %.2f ms (%zu MiB), both %.2f ms, ratio %.2f "
        "(0.5 = full overlap, 1.0 = none)\n",
        tag, k1, c1, o.bytes >> 20, both, both / (k1 + c1));
    o.two_kernels = 1;
    k1 = overlap_time(&o, 1);
    c1 = overlap_time(&o, 2);
    both = overlap_time(&o, 3);
    printf("%s kernel/kernel overlap: %.2f ms and %.2f ms, both %.2f ms, ratio %.2f\n", tag, k1, c1, both,
           both / (k1 + c1));

    /* Host costs. */
    enum { REPS = 20, BATCH = 1000 };
    double rec[REPS], qry[REPS];
    for (int rep = 0; rep < REPS; ++rep) {
        double t0 = now();
        for (int i = 0; i < BATCH; ++i) CHECK(cuEventRecord(a, s));
        rec[rep] = (now() - t0) / BATCH;
        CHECK(cuEventSynchronize(a));
        t0 = now();
        for (int i = 0; i < BATCH; ++i) CHECK(cuEventQuery(a));
        qry[rep] = (now() - t0) / BATCH;
    }
    printf("%s cuEventRecord host cost: %.3f us, cuEventQuery (reached): %.3f us (medians of %d batches of %d)\n", tag,
           median(rec, REPS) * 1e6, median(qry, REPS) * 1e6, REPS, BATCH);

    CHECK(cuMemFreeHost(o.host));
    CHECK(cuMemFree(o.dev));
    CHECK(cuMemFree(out));
    CHECK(cuStreamDestroy(o.s1));
    CHECK(cuStreamDestroy(o.s2));
    CHECK(cuStreamDestroy(s));
    CHECK(cuEventDestroy(a));
    CHECK(cuEventDestroy(b));
    CHECK(cuModuleUnload(mod));
    CHECK(cuCtxDestroy(ctx));
    free(cubin);
    return 0;
}
