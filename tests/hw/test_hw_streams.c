/*
 * Hardware-only stream and event tests (make test-hw; built in CI, they skip
 * without a real GPU): work in different streams runs at the same time on
 * the GPU, work in one stream and across cuStreamWaitEvent keeps its order
 * with real kernels, and events time kernels as the host sees them.
 *
 *   (a) copy/kernel overlap: a ~30 ms spin kernel in one stream and a pinned
 *       host-to-device copy of about the same duration in another; each
 *       alone and both together, timed with events recorded on the legacy
 *       stream around them (and the host's clock): together < 0.75 x the sum;
 *   (b) two kernels of a few blocks in two streams: the same;
 *   (c) kernel chains (x = x * m + a, which do not commute) with copies in
 *       between, in one stream; stream B waits for an event of stream A whose
 *       kernel is stuck behind a 20 ms spin; the legacy stream after a blocking
 *       stream; a non-blocking stream does not wait for the legacy stream;
 *   (d) event timing: a 10 ms spin (clock of the events = %globaltimer) and a
 *       fixed-work FMA kernel, compared with the host's wall clock; prints
 *       "event timing: fma_loop <ms>" (bench/bench_events.c times the same
 *       kernel and launch with libcuda and nvlite).
 *
 * Kernels are compiled at test time with NVRTC; every result is checked on
 * the host. The summary lines (print_message) go into the closing note.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_hw_ctx_setup, ts_ctx_teardown)

/* ------------------------------------------------------------------ kernels */

/* fma_loop and its launch (FMA_GRID x 256 threads, FMA_ITERS) are the same in
 * bench/bench_events.c. */
static const char kSource[] =
    "extern \"C\" {\n"
    "// Spins until %globaltimer has advanced by ns; the block's spin time to out.\n"
    "__global__ void spin_ns(unsigned long long ns, unsigned long long* out) {\n"
    "    unsigned long long t0, t;\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "    do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); } while (t - t0 < ns);\n"
    "    if (out && threadIdx.x == 0) out[blockIdx.x] = t - t0;\n"
    "}\n"
    "__global__ void affine(unsigned* buf, unsigned mul, unsigned add, unsigned n) {\n"
    "    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "        buf[i] = buf[i] * mul + add;\n"
    "}\n"
    "// Fixed work: iters dependent FMAs per thread.\n"
    "__global__ void fma_loop(float* out, int iters) {\n"
    "    float a = threadIdx.x * 1e-3f, b = 0.999f, c = 1e-4f;\n"
    "    for (int i = 0; i < iters; ++i) a = fmaf(a, b, c);\n"
    "    out[blockIdx.x * blockDim.x + threadIdx.x] = a;\n"
    "}\n"
    "}\n";

#define FMA_GRID 1056 /* 8 blocks of 256 threads per SM of an H200 */
#define FMA_ITERS (1 << 19)

typedef struct {
    CUmodule m;
    CUfunction spin, affine, fma;
} kernels;

/* Skips without a GPU or NVRTC. */
static kernels hw_kernels(void) {
    const char *why = NULL;
    if (!ts_have_real_gpu(&why)) ts_skip("no real GPU: %s", why);
    kernels k;
    k.m = ts_source_module(kSource, "hw_streams.cu");
    k.spin = ts_get_function(k.m, "spin_ns");
    k.affine = ts_get_function(k.m, "affine");
    k.fma = ts_get_function(k.m, "fma_loop");
    return k;
}

static void spin(const kernels *k, CUstream s, double ms, unsigned blocks, unsigned threads) {
    unsigned long long ns = (unsigned long long)(ms * 1e6);
    CUdeviceptr none = 0;
    void *params[] = {&ns, &none};
    assert_cu_ok(cuLaunchKernel(k->spin, blocks, 1, 1, threads, 1, 1, 0, s, params, NULL));
}

static void affine(const kernels *k, CUstream s, CUdeviceptr buf, unsigned mul, unsigned add, unsigned n) {
    void *params[] = {&buf, &mul, &add, &n};
    assert_cu_ok(cuLaunchKernel(k->affine, 264, 1, 1, 256, 1, 1, 0, s, params, NULL));
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* ------------------------------------------------------------------ (a), (b) overlap */

/* Runs 'work' between two events recorded on the legacy stream (which the
 * blocking streams of 'work' follow and precede); returns the events' ms, the
 * best of three, and the host's. */
typedef void (*work_fn)(const kernels *k, void *arg, int which);

static double timed(const kernels *k, work_fn work, void *arg, int which, double *host_ms) {
    CUevent a = ts_event_new(0), b = ts_event_new(0);
    double best = 1e30, best_host = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
        assert_cu_ok(cuCtxSynchronize());
        const double t0 = ts_now();
        assert_cu_ok(cuEventRecord(a, NULL));
        work(k, arg, which);
        assert_cu_ok(cuEventRecord(b, NULL));
        assert_cu_ok(cuEventSynchronize(b));
        const double host = (ts_now() - t0) * 1e3;
        float ms = 0;
        assert_cu_ok(cuEventElapsedTime(&ms, a, b));
        if (ms < best) best = ms;
        if (host < best_host) best_host = host;
    }
    assert_cu_ok(cuEventDestroy(a));
    assert_cu_ok(cuEventDestroy(b));
    if (host_ms) *host_ms = best_host;
    return best;
}

typedef struct {
    CUstream s1, s2;
    CUdeviceptr dev;
    void *host;
    size_t bytes;
    double kernel_ms;
} overlap_arg;

/* which: 1 the kernel, 2 the copy, 3 both. */
static void kernel_and_copy(const kernels *k, void *p, int which) {
    overlap_arg *o = p;
    if (which & 1) spin(k, o->s1, o->kernel_ms, 1, 32);
    if (which & 2) assert_cu_ok(cuMemcpyHtoDAsync(o->dev, o->host, o->bytes, o->s2));
}

static void two_kernels(const kernels *k, void *p, int which) {
    overlap_arg *o = p;
    if (which & 1) spin(k, o->s1, o->kernel_ms, 2, 64);
    if (which & 2) spin(k, o->s2, o->kernel_ms, 2, 64);
}

static void overlap_case(const kernels *k, const char *what, work_fn work, overlap_arg *o) {
    double h1 = 0, h2 = 0, h3 = 0;
    const double t1 = timed(k, work, o, 1, &h1), t2 = timed(k, work, o, 2, &h2), t3 = timed(k, work, o, 3, &h3);
    const double ratio = t3 / (t1 + t2);
    print_message(
        "%s: first alone %.2f ms, second alone %.2f ms, both %.2f ms = %.2f of the sum "
        "(host: %.2f, %.2f, %.2f ms)\n",
        what, t1, t2, t3, ratio, h1, h2, h3);
    if (t3 >= 0.75 * (t1 + t2))
        fail_msg("%s: together %.2f ms, alone %.2f + %.2f ms: they did not overlap", what, t3, t1, t2);
    /* Not faster than the longer one (within 5 %). */
    const double longer = t1 > t2 ? t1 : t2;
    if (t3 < 0.95 * longer)
        fail_msg("%s: together %.2f ms, less than the longer one alone (%.2f ms)", what, t3, longer);
}

static void test_hw_copy_kernel_overlap(void **state) {
    (void)state;
    kernels k = hw_kernels();
    overlap_arg o = {ts_stream_new(0), ts_stream_new(0), 0, NULL, 256 * TS_MiB, 30.0};
    /* A copy of about 30 ms: measure 256 MiB first. */
    assert_cu_ok(cuMemAllocHost(&o.host, o.bytes));
    ts_fill_random(o.host, o.bytes, 0x0E1A);
    o.dev = ts_dev_alloc(o.bytes);
    const double t256 = timed(&k, kernel_and_copy, &o, 2, NULL);
    size_t want = (size_t)((double)o.bytes * 30.0 / t256) & ~(TS_MiB - 1);
    if (want < 64 * TS_MiB) want = 64 * TS_MiB;
    if (want > 4 * TS_GiB) want = 4 * TS_GiB;
    assert_cu_ok(cuMemFreeHost(o.host));
    assert_cu_ok(cuMemFree(o.dev));
    o.bytes = want;
    assert_cu_ok(cuMemAllocHost(&o.host, o.bytes));
    ts_fill_random(o.host, o.bytes, 0x0E1B);
    o.dev = ts_dev_alloc(o.bytes);
    char what[96];
    snprintf(what, sizeof what, "copy/kernel overlap (30 ms spin, %zu MiB pinned host-to-device)", o.bytes >> 20);
    overlap_case(&k, what, kernel_and_copy, &o);
    /* The copy's bytes arrived. */
    unsigned char *back = ts_malloc(65536);
    assert_cu_ok(cuMemcpyDtoH(back, o.dev + o.bytes - 65536, 65536));
    assert_bytes_equal((unsigned char *)o.host + o.bytes - 65536, back, 65536);
    assert_cu_ok(cuMemFreeHost(o.host));
    assert_cu_ok(cuMemFree(o.dev));
    assert_cu_ok(cuStreamDestroy(o.s1));
    assert_cu_ok(cuStreamDestroy(o.s2));
    assert_cu_ok(cuModuleUnload(k.m));
}

static void test_hw_two_kernels_overlap(void **state) {
    (void)state;
    kernels k = hw_kernels();
    overlap_arg o = {ts_stream_new(0), ts_stream_new(0), 0, NULL, 0, 30.0}; /* blocking: the legacy events enclose them */
    overlap_case(&k, "kernel/kernel overlap (30 ms spins of 2 blocks)", two_kernels, &o);
    assert_cu_ok(cuStreamDestroy(o.s1));
    assert_cu_ok(cuStreamDestroy(o.s2));
    assert_cu_ok(cuModuleUnload(k.m));
}

/* ------------------------------------------------------------------ (c) order */

/* 40 random affine maps and copies between two buffers in one stream, behind
 * a 20 ms spin; the host computes the same. */
static void chain_in_stream(const kernels *k, CUstream s, uint64_t seed) {
    const unsigned n = (16u << 20) + 3;
    const size_t bytes = (size_t)n * 4;
    unsigned *src = NULL, *out = NULL;
    assert_cu_ok(cuMemAllocHost((void **)&src, bytes));
    assert_cu_ok(cuMemAllocHost((void **)&out, bytes));
    ts_fill_random(src, bytes, seed);
    memset(out, 0, bytes);
    CUdeviceptr x = ts_dev_alloc(bytes), y = ts_dev_alloc(bytes);
    ts_rng rng;
    ts_rng_init(&rng, seed ^ 0xAFF);
    unsigned mul[40], add[40];
    spin(k, s, 20.0, 1, 32);
    assert_cu_ok(cuMemcpyHtoDAsync(x, src, bytes, s));
    for (int i = 0; i < 40; ++i) {
        mul[i] = (unsigned)ts_rng_next(&rng) | 1u;
        add[i] = (unsigned)ts_rng_next(&rng);
        affine(k, s, i % 2 ? y : x, mul[i], add[i], n);
        /* Copy the current buffer to the other one (copy engine, then compute). */
        if (i % 2 == 0)
            assert_cu_ok(cuMemcpyDtoDAsync(y, x, bytes, s));
        else
            assert_cu_ok(cuMemcpyAsync(x, y, bytes, s));
    }
    assert_cu_ok(cuMemcpyDtoHAsync(out, x, bytes, s));
    assert_cu_ok(cuStreamSynchronize(s));
    for (unsigned j = 0; j < n; ++j) {
        unsigned v = src[j];
        for (int i = 0; i < 40; ++i) v = v * mul[i] + add[i];
        if (out[j] != v) fail_msg("element %u: %u, expected %u", j, out[j], v);
    }
    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFree(y));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out));
}

static void test_hw_kernel_chain_in_order(void **state) {
    (void)state;
    kernels k = hw_kernels();
    CUstream s = ts_stream_new(0), nb = ts_stream_new(CU_STREAM_NON_BLOCKING);
    chain_in_stream(&k, s, 0xC1);
    chain_in_stream(&k, nb, 0xC2);
    chain_in_stream(&k, NULL, 0xC3);
    chain_in_stream(&k, CU_STREAM_PER_THREAD, 0xC4);
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuStreamDestroy(nb));
    print_message(
        "kernel chains: 40 kernels and 40 copies in order on a blocking, a non-blocking, the NULL and the "
        "per-thread stream\n");
    assert_cu_ok(cuModuleUnload(k.m));
}

/* A's kernel waits behind a 20 ms spin; B's kernel, after cuStreamWaitEvent
 * (or the legacy stream's implicit wait), must run after it: (x*3+7)*5+11,
 * not (x*5+11)*3+7 (they differ for every x). */
static void cross_case(const kernels *k, CUstream a, CUstream b, int use_event, uint64_t seed) {
    const unsigned n = (4u << 20) + 1;
    const size_t bytes = (size_t)n * 4;
    unsigned *src = NULL, *out = NULL;
    assert_cu_ok(cuMemAllocHost((void **)&src, bytes));
    assert_cu_ok(cuMemAllocHost((void **)&out, bytes));
    ts_fill_random(src, bytes, seed);
    memset(out, 0, bytes);
    CUdeviceptr x = ts_dev_alloc(bytes);
    assert_cu_ok(cuMemcpyHtoD(x, src, bytes));
    CUevent e = ts_event_new(CU_EVENT_DISABLE_TIMING);
    spin(k, a, 20.0, 1, 32);
    affine(k, a, x, 3, 7, n);
    if (use_event) {
        assert_cu_ok(cuEventRecord(e, a));
        assert_cu_ok(cuStreamWaitEvent(b, e, 0));
    }
    affine(k, b, x, 5, 11, n);
    assert_cu_ok(cuMemcpyDtoHAsync(out, x, bytes, b));
    assert_cu_ok(cuStreamSynchronize(b));
    for (unsigned j = 0; j < n; ++j) {
        const unsigned want = (src[j] * 3u + 7u) * 5u + 11u;
        if (out[j] != want)
            fail_msg("element %u: %u, expected %u (%s)", j, out[j], want,
                     out[j] == (src[j] * 5u + 11u) * 3u + 7u ? "the second stream ran first" : "neither order");
    }
    assert_cu_ok(cuEventDestroy(e));
    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out));
}

static void test_hw_cross_stream_order(void **state) {
    (void)state;
    kernels k = hw_kernels();
    CUstream b1 = ts_stream_new(0), b2 = ts_stream_new(0), n1 = ts_stream_new(CU_STREAM_NON_BLOCKING),
             n2 = ts_stream_new(CU_STREAM_NON_BLOCKING);
    cross_case(&k, n1, n2, 1, 0xA1);
    cross_case(&k, b1, b2, 1, 0xA2);
    cross_case(&k, b1, n1, 1, 0xA3);
    cross_case(&k, NULL, n2, 1, 0xA4);
    cross_case(&k, n1, NULL, 1, 0xA5);
    /* No event: the legacy stream follows a blocking stream, and the other way. */
    cross_case(&k, b1, NULL, 0, 0xA6);
    cross_case(&k, NULL, b2, 0, 0xA7);
    cross_case(&k, CU_STREAM_LEGACY, b1, 0, 0xA8);
    print_message(
        "cross-stream order: cuStreamWaitEvent and the legacy stream's implicit waits hold behind a 20 ms "
        "spin\n");
    assert_cu_ok(cuStreamDestroy(b1));
    assert_cu_ok(cuStreamDestroy(b2));
    assert_cu_ok(cuStreamDestroy(n1));
    assert_cu_ok(cuStreamDestroy(n2));
    assert_cu_ok(cuModuleUnload(k.m));
}

/* A non-blocking stream's work runs while the legacy stream spins; a blocking
 * stream's waits for it. */
static void test_hw_non_blocking_does_not_wait(void **state) {
    (void)state;
    kernels k = hw_kernels();
    CUstream nb = ts_stream_new(CU_STREAM_NON_BLOCKING), bl = ts_stream_new(0);
    CUdeviceptr d = ts_dev_alloc(4099);
    unsigned char back[4099], expect[4099];
    spin(&k, NULL, 200.0, 1, 32);
    double t0 = ts_now();
    assert_cu_ok(cuMemsetD8Async(d, 0x6E, sizeof back, nb));
    assert_cu_ok(cuMemcpyDtoHAsync(back, d, sizeof back, nb));
    assert_cu_ok(cuStreamSynchronize(nb));
    const double nb_ms = (ts_now() - t0) * 1e3;
    assert_cu(CUDA_ERROR_NOT_READY, cuStreamQuery(NULL));
    memset(expect, 0x6E, sizeof expect);
    assert_memory_equal(back, expect, sizeof back);
    if (nb_ms > 100.0) fail_msg("the non-blocking stream's work took %.1f ms behind a 200 ms legacy spin", nb_ms);
    assert_cu_ok(cuStreamSynchronize(NULL));

    spin(&k, NULL, 200.0, 1, 32);
    t0 = ts_now();
    assert_cu_ok(cuMemsetD8Async(d, 0x6F, sizeof back, bl));
    assert_cu_ok(cuStreamSynchronize(bl));
    const double bl_ms = (ts_now() - t0) * 1e3;
    assert_cu_ok(cuStreamQuery(NULL));
    if (bl_ms < 150.0) fail_msg("the blocking stream's work was done %.1f ms into a 200 ms legacy spin", bl_ms);
    print_message(
        "behind a 200 ms legacy spin: non-blocking stream done after %.2f ms, blocking stream after %.1f ms\n", nb_ms,
        bl_ms);
    assert_cu_ok(cuMemFree(d));
    assert_cu_ok(cuStreamDestroy(nb));
    assert_cu_ok(cuStreamDestroy(bl));
    assert_cu_ok(cuModuleUnload(k.m));
}

/* ------------------------------------------------------------------ (d) event timing */

static void test_hw_event_timing(void **state) {
    (void)state;
    kernels k = hw_kernels();
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent a = ts_event_new(0), b = ts_event_new(CU_EVENT_BLOCKING_SYNC);

    /* A 10 ms spin: the events' clock is the one the kernel reads. */
    double spin_ms[5], spin_host[5];
    for (int i = 0; i < 5; ++i) {
        assert_cu_ok(cuStreamSynchronize(s));
        const double t0 = ts_now();
        assert_cu_ok(cuEventRecord(a, s));
        spin(&k, s, 10.0, 1, 32);
        assert_cu_ok(cuEventRecord(b, s));
        assert_cu_ok(cuEventSynchronize(b));
        spin_host[i] = (ts_now() - t0) * 1e3;
        float ms = 0;
        assert_cu_ok(cuEventElapsedTime(&ms, a, b));
        spin_ms[i] = ms;
        if (ms < 9.95 || ms > 10.5) fail_msg("a 10 ms spin timed at %.4f ms by events", (double)ms);
        if (ms > spin_host[i] + 0.05)
            fail_msg("events say %.4f ms, the host saw %.4f ms around them", (double)ms, spin_host[i]);
    }
    print_message("event timing: spin_10ms %.3f ms (host %.3f ms)\n", median_of(spin_ms, 5), median_of(spin_host, 5));

    /* The fixed-work kernel, as bench_events times it. */
    enum { RUNS = 20 };
    CUdeviceptr out = ts_dev_alloc((size_t)FMA_GRID * 256 * 4);
    int iters = FMA_ITERS;
    void *params[] = {&out, &iters};
    for (int i = 0; i < 3; ++i) assert_cu_ok(cuLaunchKernel(k.fma, FMA_GRID, 1, 1, 256, 1, 1, 0, s, params, NULL));
    assert_cu_ok(cuStreamSynchronize(s));
    double ev[RUNS], host[RUNS];
    for (int i = 0; i < RUNS; ++i) {
        const double t0 = ts_now();
        assert_cu_ok(cuEventRecord(a, s));
        assert_cu_ok(cuLaunchKernel(k.fma, FMA_GRID, 1, 1, 256, 1, 1, 0, s, params, NULL));
        assert_cu_ok(cuEventRecord(b, s));
        assert_cu_ok(cuEventSynchronize(b));
        host[i] = (ts_now() - t0) * 1e3;
        float ms = 0;
        assert_cu_ok(cuEventElapsedTime(&ms, a, b));
        ev[i] = ms;
        if (ms <= 0.0f || ms > host[i] + 0.05)
            fail_msg("run %d: events say %.4f ms, the host saw %.4f ms around them", i, (double)ms, host[i]);
    }
    const double ev_med = median_of(ev, RUNS), host_med = median_of(host, RUNS);
    print_message("event timing: fma_loop %.3f ms (median of %d; host wall clock %.3f ms)\n", ev_med, RUNS, host_med);
    /* The host's time adds the launch and the wake-up: well under a ms. */
    if (host_med - ev_med > 0.5 + 0.05 * host_med)
        fail_msg("fma_loop: events %.3f ms, host %.3f ms: too far apart", ev_med, host_med);
    float first = 0;
    assert_cu_ok(cuMemcpyDtoH(&first, out, 4));
    assert_true(first > 0.0f);
    assert_cu_ok(cuMemFree(out));
    assert_cu_ok(cuEventDestroy(a));
    assert_cu_ok(cuEventDestroy(b));
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuModuleUnload(k.m));
}

/* CPU time of the calling thread, in ms. */
static double thread_cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Waiting for a 200 ms kernel: SPIN may burn the core; AUTO, BLOCKING_SYNC
 * and a CU_EVENT_BLOCKING_SYNC event must not (spin briefly, then sleep), and
 * every wait must end soon after the kernel. */
static void test_hw_wait_cpu_cost(void **state) {
    ts_fixture *fx = ts_fx(state);
    const unsigned flags[] = {CU_CTX_SCHED_SPIN, CU_CTX_SCHED_YIELD, CU_CTX_SCHED_AUTO, CU_CTX_SCHED_BLOCKING_SYNC};
    static const char *const names[] = {"SPIN", "YIELD", "AUTO", "BLOCKING_SYNC"};
    for (size_t i = 0; i < TS_ARRAY_SIZE(flags); ++i) {
        CUcontext c = NULL;
        assert_cu_ok(cuCtxCreate(&c, NULL, flags[i], fx->dev));
        kernels k = hw_kernels();
        CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
        CUevent blocking = ts_event_new(CU_EVENT_BLOCKING_SYNC);
        spin(&k, s, 1.0, 1, 32); /* warm up: local memory, caches */
        assert_cu_ok(cuStreamSynchronize(s));
        /* cuStreamSynchronize */
        double w0 = ts_now(), c0 = thread_cpu_ms();
        spin(&k, s, 200.0, 1, 32);
        assert_cu_ok(cuStreamSynchronize(s));
        const double stream_wall = (ts_now() - w0) * 1e3, stream_cpu = thread_cpu_ms() - c0;
        /* cuEventSynchronize of a blocking-sync event */
        w0 = ts_now();
        c0 = thread_cpu_ms();
        spin(&k, s, 200.0, 1, 32);
        assert_cu_ok(cuEventRecord(blocking, s));
        assert_cu_ok(cuEventSynchronize(blocking));
        const double event_wall = (ts_now() - w0) * 1e3, event_cpu = thread_cpu_ms() - c0;
        print_message("wait %-13s stream sync: %.1f ms, %.1f ms of CPU; blocking event: %.1f ms, %.1f ms of CPU\n",
                      names[i], stream_wall, stream_cpu, event_wall, event_cpu);
        if (stream_wall > 205.0 || event_wall > 205.0)
            fail_msg("%s: a wait for a 200 ms kernel took %.1f / %.1f ms", names[i], stream_wall, event_wall);
        if (event_cpu > 40.0) fail_msg("%s: a blocking-sync event's wait used %.1f ms of CPU", names[i], event_cpu);
        if ((flags[i] == CU_CTX_SCHED_AUTO || flags[i] == CU_CTX_SCHED_BLOCKING_SYNC) && stream_cpu > 40.0)
            fail_msg("%s: waiting 200 ms used %.1f ms of CPU", names[i], stream_cpu);
        assert_cu_ok(cuEventDestroy(blocking));
        assert_cu_ok(cuStreamDestroy(s));
        assert_cu_ok(cuModuleUnload(k.m));
        assert_cu_ok(cuCtxDestroy(c));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_hw_wait_cpu_cost),
        TEST(test_hw_copy_kernel_overlap),        TEST(test_hw_two_kernels_overlap),
        TEST(test_hw_kernel_chain_in_order),      TEST(test_hw_cross_stream_order),
        TEST(test_hw_non_blocking_does_not_wait), TEST(test_hw_event_timing),
    };
    return cmocka_run_group_tests_name("hw_streams", tests, NULL, NULL);
}
