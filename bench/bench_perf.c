/*
 * bench_perf: the figures of issue 12, for whichever driver-API library it is
 * linked with (libcuda or libnvlite). One section per run (some figures need
 * a fresh process); bench/compare.py runs every section against both
 * libraries, interleaved, several rounds, and prints the table.
 *
 *   bench_perf TAG copy     device-to-device copies 64 MiB and 1 GiB, memsets 1 GiB (event-timed),
 *                           and both at 4 KiB .. 4 MiB (us per operation: the kernel/copy-engine crossover;
 *                           which engine runs each size follows NVLITE_KERNEL_COPY_MIN / _FILL_MIN),
 *                           and an empty kernel alternating with a 64/256 KiB copy (us per pair)
 *   bench_perf TAG launch   20,000 back-to-back empty launches on one stream (and
 *                           1,500, which fit nvlite's rings: the host's own cost)
 *   bench_perf TAG load     cuModuleLoadData of a 3-kernel cubin, first load in a fresh context
 *   bench_perf TAG mem      device memory taken by context creation, first module load, first
 *                           launch (a kernel with 64 ints of local memory), and still held after
 *                           freeing and unloading everything, step by step (fresh process)
 *   bench_perf TAG small    4-byte H2D + D2H in a fresh process and after other work
 *
 * The kernels come from build time (bench/perf_kernels.cu -> perf_kernels_smXX.cubin
 * next to this program): no NVRTC at run time.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static const char* tag = "lib";

static char* read_cubin(CUdevice dev) {
    int major = 0, minor = 0;
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "bench_perf: cannot find its own path\n");
        exit(1);
    }
    exe[n] = 0;
    char* slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/perf_kernels_sm%d%d.cubin", exe, major, minor);
    FILE* f = fopen(path, "rb");
    if (!f && major == 8) {  /* sm_80 code runs on sm_86/89 */
        snprintf(path, sizeof path, "%s/perf_kernels_sm80.cubin", exe);
        f = fopen(path, "rb");
    }
    if (!f) {
        fprintf(stderr, "bench_perf: no %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* data = malloc((size_t)size);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "bench_perf: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    return data;
}

/* GB/s of an operation on 'bytes', event-timed on a stream: median of 'reps'. */
typedef void (*op_fn)(CUstream s, CUdeviceptr dst, CUdeviceptr src, size_t bytes);
static void op_copy(CUstream s, CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    CHECK(cuMemcpyDtoDAsync(dst, src, bytes, s));
}
static void op_memset32(CUstream s, CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    (void)src;
    CHECK(cuMemsetD32Async(dst, 0x3f800000u, bytes / 4, s));
}
static void op_memset8(CUstream s, CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    (void)src;
    CHECK(cuMemsetD8Async(dst, 0x5a, bytes, s));
}

static double event_gbps(op_fn op, CUdeviceptr dst, CUdeviceptr src, size_t bytes, int reps) {
    CUstream s;
    CUevent a, b;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&a, 0));
    CHECK(cuEventCreate(&b, 0));
    op(s, dst, src, bytes); /* warm-up (loads what the operation needs) */
    CHECK(cuStreamSynchronize(s));
    double v[32];
    if (reps > 32) reps = 32;
    for (int i = 0; i < reps; ++i) {
        CHECK(cuEventRecord(a, s));
        op(s, dst, src, bytes);
        CHECK(cuEventRecord(b, s));
        CHECK(cuEventSynchronize(b));
        float ms = 0;
        CHECK(cuEventElapsedTime(&ms, a, b));
        v[i] = (double)bytes / (ms * 1e-3) / 1e9;
    }
    CHECK(cuEventDestroy(a));
    CHECK(cuEventDestroy(b));
    CHECK(cuStreamDestroy(s));
    return median(v, reps);
}

/* Microseconds per operation on 'bytes', event-timed: 'batch' operations
 * back to back between two events, median of 'reps' batches. */
static double event_us_per_op(op_fn op, CUdeviceptr dst, CUdeviceptr src, size_t bytes, int batch, int reps) {
    CUstream s;
    CUevent a, b;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&a, 0));
    CHECK(cuEventCreate(&b, 0));
    for (int i = 0; i < 8; ++i) op(s, dst, src, bytes); /* warm-up */
    CHECK(cuStreamSynchronize(s));
    double v[32];
    if (reps > 32) reps = 32;
    for (int i = 0; i < reps; ++i) {
        CHECK(cuEventRecord(a, s));
        for (int k = 0; k < batch; ++k) op(s, dst, src, bytes);
        CHECK(cuEventRecord(b, s));
        CHECK(cuEventSynchronize(b));
        float ms = 0;
        CHECK(cuEventElapsedTime(&ms, a, b));
        v[i] = (double)ms * 1e3 / batch;
    }
    CHECK(cuEventDestroy(a));
    CHECK(cuEventDestroy(b));
    CHECK(cuStreamDestroy(s));
    return median(v, reps);
}

/* Where a kernel beats the copy engine: small device-to-device copies and
 * memsets, time per operation (info rows of bench/compare.py). */
static void crossover(CUdeviceptr x, CUdeviceptr y) {
    static const struct {
        size_t bytes;
        const char* name;
    } sizes[] = {{4096, "4 KiB"},     {64 << 10, "64 KiB"},   {128 << 10, "128 KiB"}, {256 << 10, "256 KiB"},
                 {512 << 10, "512 KiB"}, {1 << 20, "1 MiB"},     {2 << 20, "2 MiB"},     {4 << 20, "4 MiB"}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        printf("%s crossover D2D copy %s: %.2f us\n", tag, sizes[i].name,
               event_us_per_op(op_copy, y, x, sizes[i].bytes, 200, 11));
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        printf("%s crossover memset D32 %s: %.2f us\n", tag, sizes[i].name,
               event_us_per_op(op_memset32, y, 0, sizes[i].bytes, 200, 11));
}

/* A kernel and a device-to-device copy, alternating on one stream: what a copy
 * costs between kernels (on the copy engine, each switch of engine is a wait
 * across channels; as a kernel, none). Microseconds per pair, event-timed. */
static CUfunction mixed_kernel;
static void op_kernel_then_copy(CUstream s, CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    CHECK(cuLaunchKernel(mixed_kernel, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    CHECK(cuMemcpyDtoDAsync(dst, src, bytes, s));
}

static void mixed(CUdevice dev, CUdeviceptr x, CUdeviceptr y) {
    char* cubin = read_cubin(dev);
    CUmodule mod;
    CHECK(cuModuleLoadData(&mod, cubin));
    CHECK(cuModuleGetFunction(&mixed_kernel, mod, "empty"));
    static const struct {
        size_t bytes;
        const char* name;
    } sizes[] = {{64 << 10, "64 KiB"}, {256 << 10, "256 KiB"}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        printf("%s crossover empty kernel + D2D copy %s: %.2f us\n", tag, sizes[i].name,
               event_us_per_op(op_kernel_then_copy, y, x, sizes[i].bytes, 100, 11));
    CHECK(cuModuleUnload(mod));
    free(cubin);
}

static void section_copy(CUdevice dev) {
    const size_t big = (size_t)1 << 30, small = (size_t)64 << 20;
    CUdeviceptr x, y;
    CHECK(cuMemAlloc(&x, big));
    CHECK(cuMemAlloc(&y, big));
    CHECK(cuMemsetD8(x, 1, big));
    printf("%s D2D copy 64 MiB: %.1f GB/s\n", tag, event_gbps(op_copy, y, x, small, 21));
    printf("%s D2D copy 1 GiB: %.1f GB/s\n", tag, event_gbps(op_copy, y, x, big, 9));
    printf("%s D2D copy 64 MiB, offsets 1/3: %.1f GB/s\n", tag, event_gbps(op_copy, y + 1, x + 3, small, 21));
    printf("%s memset D32 1 GiB: %.1f GB/s\n", tag, event_gbps(op_memset32, y, 0, big, 9));
    printf("%s memset D8 1 GiB: %.1f GB/s\n", tag, event_gbps(op_memset8, y, 0, big, 9));
    crossover(x, y);
    mixed(dev, x, y);
    /* Check one result, so a fast wrong path cannot pass. */
    unsigned char probe[3] = {0, 0, 0};
    CHECK(cuMemsetD8(x, 0x77, small));
    CHECK(cuMemcpyDtoD(y + 5, x, small));
    CHECK(cuMemcpyDtoH(probe, y + 5 + small - 3, 3));
    if (probe[0] != 0x77 || probe[1] != 0x77 || probe[2] != 0x77) {
        printf("%s D2D copy: WRONG DATA\n", tag);
        exit(1);
    }
    CHECK(cuMemFree(x));
    CHECK(cuMemFree(y));
}

/* 'n' empty launches back to back on 's': host time and time until done per
 * launch, medians of 7 rounds. */
static void back_to_back(CUfunction empty, CUstream s, int n) {
    enum { REPS = 7 };
    double host[REPS], done[REPS];
    for (int r = 0; r < REPS; ++r) {
        CHECK(cuStreamSynchronize(s));
        double a = now();
        for (int i = 0; i < n; ++i) CHECK(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        double b = now();
        CHECK(cuStreamSynchronize(s));
        double c = now();
        host[r] = (b - a) / n;
        done[r] = (c - a) / n;
    }
    printf("%s %d launches, host time per launch: %.3f us\n", tag, n, median(host, REPS) * 1e6);
    printf("%s %d launches, until done, per launch: %.3f us\n", tag, n, median(done, REPS) * 1e6);
}

static void section_launch(CUdevice dev) {
    char* cubin = read_cubin(dev);
    CUmodule mod;
    CUfunction empty;
    CHECK(cuModuleLoadData(&mod, cubin));
    CHECK(cuModuleGetFunction(&empty, mod, "empty"));
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < 1000; ++i) CHECK(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    CHECK(cuStreamSynchronize(s));
    back_to_back(empty, s, 20000);
    /* 1,500 launches fit nvlite's compute channel rings (2,048 GPFIFO entries):
     * the host never waits for the GPU to free a slot, so this is the host's
     * own cost back to back; the 20,000 above wait for the GPU from the
     * 2,048th on (lib/hw/LAUNCH_ORDER.md). */
    back_to_back(empty, s, 1500);
    CHECK(cuStreamDestroy(s));
    CHECK(cuModuleUnload(mod));
    free(cubin);
}

static void section_load(CUdevice dev) {
    char* cubin = read_cubin(dev);
    enum { N = 15 };
    double t[N];
    for (int i = 0; i < N; ++i) {
        CUcontext ctx;
        CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
        CUmodule mod;
        double a = now();
        CHECK(cuModuleLoadData(&mod, cubin));
        t[i] = now() - a;
        CHECK(cuModuleUnload(mod));
        CHECK(cuCtxDestroy(ctx));
    }
    printf("%s first cuModuleLoadData in a context (3 kernels): %.3f ms\n", tag, median(t, N) * 1e3);
    free(cubin);
}

static double used_mib(void) {
    size_t free_b = 0, total = 0;
    CHECK(cuMemGetInfo(&free_b, &total));
    return (double)(total - free_b) / (1024.0 * 1024.0);
}

static void section_mem(CUdevice dev) {
    char* cubin = read_cubin(dev);
    /* Read before a context exists: the GPU's memory in use by others. */
    CUcontext ctx;
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    const double base = used_mib();
    CUmodule mod;
    CHECK(cuModuleLoadData(&mod, cubin));
    CUfunction local64, empty;
    CHECK(cuModuleGetFunction(&local64, mod, "local64"));
    CHECK(cuModuleGetFunction(&empty, mod, "empty"));
    const double loaded = used_mib();
    CUdeviceptr out;
    CHECK(cuMemAlloc(&out, 1 << 20));
    const double allocated = used_mib();
    int seed = 5;
    void* args[] = {&out, &seed};
    CHECK(cuLaunchKernel(local64, 64, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CHECK(cuCtxSynchronize());
    const double launched = used_mib();
    /* A device-to-device copy and a memset (what the built-in kernels take). */
    CUdeviceptr big;
    CHECK(cuMemAlloc(&big, (size_t)64 << 20));
    CHECK(cuMemsetD32(big, 1, (size_t)16 << 20));
    CHECK(cuMemcpyDtoD(big, big + ((size_t)32 << 20), (size_t)32 << 20));
    CHECK(cuCtxSynchronize());
    const double copied = used_mib();
    CHECK(cuMemFree(big));
    const double freedBig = used_mib();
    CHECK(cuMemFree(out));
    const double freedAll = used_mib();
    CHECK(cuModuleUnload(mod));
    CHECK(cuCtxSynchronize());
    const double after = used_mib();
    /* Context creation: the context's own take is not visible from inside
     * it; report what the GPU holds with the context alive (total - free),
     * the same reading for both libraries on an otherwise idle GPU. */
    printf("%s memory in use with a fresh context: %.1f MiB\n", tag, base);
    printf("%s memory taken by the first module load: %.1f MiB\n", tag, loaded - base);
    printf("%s memory taken by the first launch (64-int local array): %.1f MiB\n", tag, launched - allocated);
    printf("%s memory in use after context, load and launch: %.1f MiB\n", tag, launched - (allocated - loaded));
    printf("%s memory still held after freeing and unloading everything: %.1f MiB\n", tag, after - base);
    /* Where what stays comes from: each step's reading against the fresh
     * context's (the built-in kernels load at the memset/copy). */
    printf("%s memory step 1, 64 MiB allocated, memset and copy done: %.2f MiB\n", tag, copied - base);
    printf("%s memory step 2, the 64 MiB freed: %.2f MiB\n", tag, freedBig - base);
    printf("%s memory step 3, the 1 MiB freed too: %.2f MiB\n", tag, freedAll - base);
    printf("%s memory step 4, the module unloaded too: %.2f MiB\n", tag, after - base);
    CHECK(cuCtxDestroy(ctx));
    free(cubin);
}

static double small_round_trip(CUdeviceptr d) {
    enum { N = 300 };
    double t[N];
    uint32_t in = 0, out = 0;
    for (int i = 0; i < N; ++i) {
        in = (uint32_t)i * 2654435761u + 1;
        double a = now();
        CHECK(cuMemcpyHtoD(d, &in, 4));
        CHECK(cuMemcpyDtoH(&out, d, 4));
        t[i] = now() - a;
        if (out != in) {
            printf("%s small round trip: WRONG DATA\n", tag);
            exit(1);
        }
    }
    return median(t, N);
}

static void section_small(CUdevice dev) {
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, 4096));
    printf("%s 4-byte H2D+D2H, fresh process: %.2f us\n", tag, small_round_trip(d) * 1e6);
    /* Other work: big copies both ways (pinned and pageable), launches,
     * device-to-device copies and memsets, allocations. */
    char* cubin = read_cubin(dev);
    CUmodule mod;
    CUfunction empty;
    CHECK(cuModuleLoadData(&mod, cubin));
    CHECK(cuModuleGetFunction(&empty, mod, "empty"));
    const size_t bytes = (size_t)64 << 20;
    CUdeviceptr big, big2;
    CHECK(cuMemAlloc(&big, bytes));
    CHECK(cuMemAlloc(&big2, bytes));
    void* pinned;
    CHECK(cuMemAllocHost(&pinned, bytes));
    void* pageable = malloc(bytes);
    memset(pageable, 3, bytes);
    memset(pinned, 4, bytes);
    for (int i = 0; i < 3; ++i) {
        CHECK(cuMemcpyHtoD(big, pageable, bytes));
        CHECK(cuMemcpyDtoH(pageable, big, bytes));
        CHECK(cuMemcpyHtoD(big, pinned, bytes));
        CHECK(cuMemcpyDtoH(pinned, big, bytes));
        CHECK(cuMemcpyDtoD(big2, big, bytes));
        CHECK(cuMemsetD8(big2, 1, bytes));
        for (int k = 0; k < 100; ++k) CHECK(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
        CHECK(cuCtxSynchronize());
    }
    printf("%s 4-byte H2D+D2H, after other work: %.2f us\n", tag, small_round_trip(d) * 1e6);
    CHECK(cuMemFreeHost(pinned));
    free(pageable);
    CHECK(cuMemFree(big));
    CHECK(cuMemFree(big2));
    CHECK(cuModuleUnload(mod));
    CHECK(cuMemFree(d));
    free(cubin);
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s TAG copy|launch|load|mem|small\n", argv[0]);
        return 2;
    }
    tag = argv[1];
    const char* what = argv[2];
    CUdevice dev;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    if (!strcmp(what, "load")) {
        section_load(dev);
        return 0;
    }
    if (!strcmp(what, "mem")) {
        section_mem(dev);
        return 0;
    }
    CUcontext ctx;
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    if (!strcmp(what, "copy")) section_copy(dev);
    else if (!strcmp(what, "launch")) section_launch(dev);
    else if (!strcmp(what, "small")) section_small(dev);
    else {
        fprintf(stderr, "bench_perf: unknown section %s\n", what);
        return 2;
    }
    CHECK(cuCtxDestroy(ctx));
    return 0;
}
