/*
 * Streams (issue 4, "Streams" and "Waiting"): cuStreamCreate(WithPriority),
 * cuStreamDestroy, cuStreamGetFlags/GetPriority/GetCtx, cuCtxGetStream-
 * PriorityRange, cuStreamQuery/Synchronize, cuStreamWaitEvent, the stream
 * argument of every Async copy and fill and of cuLaunchKernel, the legacy
 * (NULL) stream's implicit order with blocking streams, non-blocking
 * streams, CU_STREAM_LEGACY / CU_STREAM_PER_THREAD and the _ptsz exports,
 * contexts created with each CU_CTX_SCHED_* flag, and CUDA_LAUNCH_BLOCKING=1
 * (read at cuInit: checked in a child process, this binary run again with
 * "--launch-blocking-child").
 *
 * Runs on the simulator (make test) and on the GPU (make test-hw). The
 * simulator runs copies and fills (a 64 MiB copy is a memmove of tens of ms)
 * but not kernel code, so kernels' results are checked on a real GPU only.
 * Ordering is checked through data: random (fixed seeds) at odd sizes and
 * offsets, buffers pre-filled with other bytes, so that work run early, late
 * or not at all gives different bytes. "Busy work" (64 MiB device copies,
 * more of them until cuStreamQuery sees them running) keeps a stream busy so
 * that a missing wait lets later work run ahead.
 *
 * Expected codes: CUDA's documentation; where it is silent or where libcuda
 * may differ from it, the case is also in tests/compat/compat_probe.c's
 * "streams" section and marked "checked by compat probe 'streams'" here.
 * Made-up handles: nvlite's own answer (libcuda may crash on them).
 */
#define _GNU_SOURCE /* RTLD_DEFAULT, RUSAGE_THREAD */
#include <dlfcn.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_ctx_setup, ts_ctx_teardown)

extern char **environ;

/* ------------------------------------------------------------------ helpers */

static CUcontext current_ctx(void) {
    CUcontext c = NULL;
    assert_cu_ok(cuCtxGetCurrent(&c));
    return c;
}

static const char *stream_name(CUstream s) {
    if (s == NULL) return "the NULL stream";
    if (s == CU_STREAM_LEGACY) return "CU_STREAM_LEGACY";
    if (s == CU_STREAM_PER_THREAD) return "CU_STREAM_PER_THREAD";
    return "a created stream";
}

/* A kernel for the launch tests: out[i] = out[i] * 3 + v. The simulator
 * completes launches without running them: its effect is checked on a real
 * GPU only. */
static const char kSource[] =
    "extern \"C\" __global__ void mark(unsigned* out, unsigned v, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = out[i] * 3u + v;\n"
    "}\n";

/* ------------------------------------------------------------------ random chains */

/* A chain of random async fills and copies on one stream through three device
 * buffers, mirrored on the host: any reordering, any dropped or repeated
 * operation changes the bytes. Pageable device-to-host copies in the middle
 * are checked at once: an Async copy to pageable memory returns only once it
 * has completed (CUDA's "API synchronization behavior"), after everything
 * before it in the stream. */
#define CHAIN_BUFS 3

typedef struct {
    CUstream s;
    size_t n;
    CUdeviceptr d[CHAIN_BUFS];
    unsigned char *mirror[CHAIN_BUFS];
    unsigned char *src;  /* pinned, random, never changed while the chain runs */
    unsigned char *page; /* pageable destination of the mid-chain checks */
    ts_rng rng;
    unsigned steps, checks;
} chain;

static void chain_init(chain *c, CUstream s, size_t n, uint64_t seed) {
    memset(c, 0, sizeof *c);
    c->s = s;
    c->n = n;
    ts_rng_init(&c->rng, seed);
    c->src = ts_pinned_alloc(n);
    ts_fill_random(c->src, n, seed ^ 0x5EED);
    c->page = ts_malloc(n);
    for (int i = 0; i < CHAIN_BUFS; ++i) {
        c->d[i] = ts_dev_alloc(n);
        c->mirror[i] = ts_malloc(n);
        ts_fill_random(c->mirror[i], n, seed * 7 + (uint64_t)i);
        assert_cu_ok(cuMemcpyHtoD(c->d[i], c->mirror[i], n));
    }
    /* A synchronous copy from pageable memory may return before its DMA is
     * done, and a non-blocking stream would not wait for it. */
    assert_cu_ok(cuCtxSynchronize());
}

static size_t below(chain *c, size_t bound) { return (size_t)ts_rng_below(&c->rng, bound ? bound : 1); }

static void chain_step(chain *c) {
    const size_t n = c->n;
    const int x = (int)below(c, CHAIN_BUFS);
    const int y = (x + 1 + (int)below(c, CHAIN_BUFS - 1)) % CHAIN_BUFS; /* != x */
    const unsigned op = (unsigned)below(c, 8);
    ++c->steps;
    switch (op) {
    case 0: { /* memset D8 */
        const size_t cnt = 1 + below(c, n / 2), off = below(c, n - cnt + 1);
        const unsigned char v = (unsigned char)ts_rng_next(&c->rng);
        assert_cu_ok(cuMemsetD8Async(c->d[x] + off, v, cnt, c->s));
        memset(c->mirror[x] + off, v, cnt);
        break;
    }
    case 1: { /* memset D16 */
        const size_t cnt = 1 + below(c, n / 8), off = 2 * below(c, (n - 2 * cnt) / 2 + 1);
        const unsigned short v = (unsigned short)ts_rng_next(&c->rng);
        assert_cu_ok(cuMemsetD16Async(c->d[x] + off, v, cnt, c->s));
        for (size_t k = 0; k < cnt; ++k) memcpy(c->mirror[x] + off + 2 * k, &v, 2);
        break;
    }
    case 2: { /* memset D32 */
        const size_t cnt = 1 + below(c, n / 16), off = 4 * below(c, (n - 4 * cnt) / 4 + 1);
        const uint32_t v = (uint32_t)ts_rng_next(&c->rng);
        assert_cu_ok(cuMemsetD32Async(c->d[x] + off, v, cnt, c->s));
        for (size_t k = 0; k < cnt; ++k) memcpy(c->mirror[x] + off + 4 * k, &v, 4);
        break;
    }
    case 3: { /* device to device, part of a buffer */
        const size_t len = 1 + below(c, n / 3), so = below(c, n - len + 1), dof = below(c, n - len + 1);
        assert_cu_ok(cuMemcpyDtoDAsync(c->d[y] + dof, c->d[x] + so, len, c->s));
        memcpy(c->mirror[y] + dof, c->mirror[x] + so, len);
        break;
    }
    case 4: { /* pinned host to device */
        const size_t len = 1 + below(c, n / 3), so = below(c, n - len + 1), dof = below(c, n - len + 1);
        assert_cu_ok(cuMemcpyHtoDAsync(c->d[y] + dof, c->src + so, len, c->s));
        memcpy(c->mirror[y] + dof, c->src + so, len);
        break;
    }
    case 5: { /* cuMemcpyAsync, a whole buffer: the load */
        assert_cu_ok(cuMemcpyAsync(c->d[y], c->d[x], n, c->s));
        memcpy(c->mirror[y], c->mirror[x], n);
        break;
    }
    case 6: { /* device to pageable host: complete when it returns */
        const size_t len = 1 + below(c, 65536), off = below(c, n - len + 1);
        memset(c->page, 0xE7, len);
        assert_cu_ok(cuMemcpyDtoHAsync(c->page, c->d[x] + off, len, c->s));
        ++c->checks;
        if (memcmp(c->page, c->mirror[x] + off, len) != 0)
            print_error("%s, step %u: pageable cuMemcpyDtoHAsync of %zu bytes at %zu of buffer %d\n", stream_name(c->s),
                        c->steps, len, off, x);
        assert_bytes_named(c->mirror[x] + off, c->page, len, "bytes read back in the middle of the chain");
        break;
    }
    default: { /* a small odd copy at an odd place, device to device */
        const size_t len = 1 + below(c, 999), so = below(c, n - len + 1), dof = below(c, n - len + 1);
        assert_cu_ok(cuMemcpyDtoDAsync(c->d[y] + dof, c->d[x] + so, len, c->s));
        memcpy(c->mirror[y] + dof, c->mirror[x] + so, len);
        break;
    }
    }
}

/* Reads every buffer back through the stream, synchronizes the stream alone
 * and compares; frees the chain. */
static void chain_finish(chain *c) {
    unsigned char *out[CHAIN_BUFS];
    for (int i = 0; i < CHAIN_BUFS; ++i) {
        out[i] = ts_pinned_alloc(c->n);
        memset(out[i], 0xEE, c->n);
        assert_cu_ok(cuMemcpyDtoHAsync(out[i], c->d[i], c->n, c->s));
    }
    assert_cu_ok(cuStreamSynchronize(c->s));
    for (int i = 0; i < CHAIN_BUFS; ++i) {
        if (memcmp(out[i], c->mirror[i], c->n) != 0)
            print_error("%s: buffer %d wrong after %u random operations\n", stream_name(c->s), i, c->steps);
        assert_bytes_named(c->mirror[i], out[i], c->n, "a buffer at the end of the chain");
        assert_cu_ok(cuMemFreeHost(out[i]));
        assert_cu_ok(cuMemFree(c->d[i]));
        ts_free(c->mirror[i]);
    }
    assert_cu_ok(cuMemFreeHost(c->src));
    ts_free(c->page);
}

/* ------------------------------------------------------------------ creation and queries */

static void test_priority_range(void **state) {
    (void)state;
    int least = 12345, greatest = 12345, supported = -1;
    assert_cu_ok(cuCtxGetStreamPriorityRange(&least, &greatest));
    assert_cu_ok(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, 0));
    print_message("stream priorities: least %d, greatest %d (supported: %d)\n", least, greatest, supported);
    /* Lower numbers are higher priorities; 0 and 0 when unsupported. */
    if (supported) {
        assert_true(greatest < least);
    } else {
        assert_int_equal(least, 0);
        assert_int_equal(greatest, 0);
    }
    /* Either pointer may be NULL (CUDA's documentation of the runtime's
     * equivalent; checked by compat probe 'streams'). */
    int l2 = 777, g2 = 777;
    assert_cu_ok(cuCtxGetStreamPriorityRange(NULL, NULL));
    assert_cu_ok(cuCtxGetStreamPriorityRange(&l2, NULL));
    assert_int_equal(l2, least);
    assert_cu_ok(cuCtxGetStreamPriorityRange(NULL, &g2));
    assert_int_equal(g2, greatest);
}

static void test_create_and_query(void **state) {
    ts_fixture *fx = ts_fx(state);
    int least = 0, greatest = 0;
    assert_cu_ok(cuCtxGetStreamPriorityRange(&least, &greatest));
    const unsigned flags[] = {CU_STREAM_DEFAULT, CU_STREAM_NON_BLOCKING};
    for (size_t i = 0; i < TS_ARRAY_SIZE(flags); ++i) {
        CUstream s = ts_stream_new(flags[i]);
        unsigned f = 0xdead;
        int prio = 12345;
        CUcontext c = NULL;
        assert_cu_ok(cuStreamGetFlags(s, &f));
        assert_int_equal(f, flags[i]);
        /* cuStreamCreate's streams have the default priority, 0. */
        assert_cu_ok(cuStreamGetPriority(s, &prio));
        assert_int_equal(prio, 0);
        assert_cu_ok(cuStreamGetCtx(s, &c));
        assert_ptr_equal(c, fx->ctx);
        /* A new stream has no work. */
        assert_cu_ok(cuStreamQuery(s));
        assert_cu_ok(cuStreamSynchronize(s));
        assert_cu_ok(cuStreamDestroy(s));
    }
    /* Many at once, all different, destroyed in a shuffled order. */
    enum { MANY = 40 };
    CUstream s[MANY];
    for (int i = 0; i < MANY; ++i) {
        const unsigned fl = i % 3 == 0 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
        const int want = least - (i % (least - greatest + 1)); /* every priority in range */
        assert_cu_ok(cuStreamCreateWithPriority(&s[i], fl, want));
        for (int j = 0; j < i; ++j) assert_ptr_not_equal(s[i], s[j]);
        unsigned f = 0;
        int prio = 0;
        assert_cu_ok(cuStreamGetFlags(s[i], &f));
        assert_cu_ok(cuStreamGetPriority(s[i], &prio));
        assert_int_equal(f, fl);
        assert_int_equal(prio, want);
    }
    ts_rng rng;
    ts_rng_init(&rng, 0x57E4);
    for (int i = MANY - 1; i > 0; --i) {
        const int j = (int)ts_rng_below(&rng, (uint64_t)i + 1);
        CUstream t = s[i];
        s[i] = s[j];
        s[j] = t;
    }
    for (int i = 0; i < MANY; ++i) assert_cu_ok(cuStreamDestroy(s[i]));

    /* The _v2 export and the old name libcuda still exports. */
    typedef CUresult (*destroy_fn)(CUstream);
    destroy_fn v1 = (destroy_fn)dlsym(RTLD_DEFAULT, "cuStreamDestroy");
    destroy_fn v2 = (destroy_fn)dlsym(RTLD_DEFAULT, "cuStreamDestroy_v2");
    assert_non_null(v1);
    assert_non_null(v2);
    CUstream a = ts_stream_new(0), b = ts_stream_new(0);
    assert_cu_ok(v1(a));
    assert_cu_ok(v2(b));
}

/* Out-of-range priorities are clamped to the range (CUDA's documentation of
 * cuStreamCreateWithPriority). */
static void test_priority_clamping(void **state) {
    (void)state;
    int least = 0, greatest = 0;
    assert_cu_ok(cuCtxGetStreamPriorityRange(&least, &greatest));
    const int asked[] = {least,        greatest,        least + 1, least + 7, INT_MAX, (least + greatest) / 2,
                         greatest - 1, greatest - 1000, INT_MIN,   3,         -3,      -100};
    for (size_t i = 0; i < TS_ARRAY_SIZE(asked); ++i)
        for (unsigned fl = 0; fl <= CU_STREAM_NON_BLOCKING; ++fl) {
            CUstream s = NULL;
            assert_cu_ok(cuStreamCreateWithPriority(&s, fl, asked[i]));
            const int want = asked[i] < greatest ? greatest : asked[i] > least ? least : asked[i];
            int got = 12345;
            assert_cu_ok(cuStreamGetPriority(s, &got));
            if (got != want)
                fail_msg(
                    "cuStreamCreateWithPriority(flags %u, priority %d): cuStreamGetPriority says %d, expected %d "
                    "(range %d..%d)",
                    fl, asked[i], got, want, greatest, least);
            /* A stream of any priority runs work. */
            CUdeviceptr d = ts_dev_alloc(4099);
            unsigned char back[4099], expect[4099];
            memset(expect, (int)(0x40 + i), sizeof expect);
            assert_cu_ok(cuMemsetD8Async(d, (unsigned char)(0x40 + i), sizeof back, s));
            assert_cu_ok(cuMemcpyDtoHAsync(back, d, sizeof back, s));
            assert_memory_equal(back, expect, sizeof back);
            assert_cu_ok(cuMemFree(d));
            assert_cu_ok(cuStreamDestroy(s));
        }
}

/* NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD: the current context's
 * (CUDA's documentation of cuStreamGetCtx), flags 0 and priority 0 (checked
 * by compat probe 'streams'). */
static void test_special_stream_queries(void **state) {
    ts_fixture *fx = ts_fx(state);
    const CUstream special[] = {NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD};
    CUcontext other = NULL;
    for (int round = 0; round < 2; ++round) {
        const CUcontext want = round == 0 ? fx->ctx : other;
        for (size_t i = 0; i < TS_ARRAY_SIZE(special); ++i) {
            CUcontext c = NULL;
            unsigned f = 0xdead;
            int prio = 12345;
            assert_cu_ok(cuStreamGetCtx(special[i], &c));
            if (c != want) fail_msg("cuStreamGetCtx(%s) is not the current context", stream_name(special[i]));
            assert_cu_ok(cuStreamGetFlags(special[i], &f));
            assert_int_equal(f, 0);
            assert_cu_ok(cuStreamGetPriority(special[i], &prio));
            assert_int_equal(prio, 0);
            assert_cu_ok(cuStreamQuery(special[i]));
            assert_cu_ok(cuStreamSynchronize(special[i]));
        }
        if (round == 0) assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev)); /* now current */
    }
    assert_cu_ok(cuCtxDestroy(other));
    assert_ptr_equal(current_ctx(), fx->ctx);
}

/* ------------------------------------------------------------------ bad input */

static void test_stream_bad_input(void **state) {
    ts_fixture *fx = ts_fx(state);
    CUstream s = NULL;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamCreate(NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamCreateWithPriority(NULL, 0, 0));
    /* Unknown flag bits (checked by compat probe 'streams'). */
    const unsigned bad_flags[] = {0x2, 0x3, 0x4, 0x100, 0x80000000u, 0xffffffffu};
    for (size_t i = 0; i < TS_ARRAY_SIZE(bad_flags); ++i) {
        s = NULL;
        CUresult r = cuStreamCreate(&s, bad_flags[i]);
        if (r != CUDA_ERROR_INVALID_VALUE)
            fail_msg("cuStreamCreate(flags 0x%x) returned %s", bad_flags[i], ts_cu_name(r));
        r = cuStreamCreateWithPriority(&s, bad_flags[i], -1);
        if (r != CUDA_ERROR_INVALID_VALUE)
            fail_msg("cuStreamCreateWithPriority(flags 0x%x) returned %s", bad_flags[i], ts_cu_name(r));
    }

    /* NULL out pointers, on created and special streams. */
    s = ts_stream_new(0);
    const CUstream handles[] = {s, NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD};
    for (size_t i = 0; i < TS_ARRAY_SIZE(handles); ++i) {
        assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamGetFlags(handles[i], NULL));
        assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamGetPriority(handles[i], NULL));
        assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamGetCtx(handles[i], NULL));
    }

    /* cuStreamWaitEvent: no event, unknown flags (checked by compat probe
     * 'streams'); CU_EVENT_WAIT_EXTERNAL: at the end. */
    CUevent e = ts_event_new(0);
    assert_cu_ok(cuEventRecord(e, s));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamWaitEvent(s, NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamWaitEvent(s, e, 0x2));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamWaitEvent(s, e, 0x80000000u));
    assert_cu_ok(cuStreamWaitEvent(s, e, CU_EVENT_WAIT_DEFAULT));

    /* A handle that is no stream (nvlite's own answer: libcuda may crash). */
    static struct { unsigned char junk[512]; } not_a_stream;
    memset(&not_a_stream, 0x6B, sizeof not_a_stream);
    const CUstream junk = (CUstream)(void *)&not_a_stream;
    unsigned f = 0;
    int prio = 0;
    CUcontext c = NULL;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamQuery(junk));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamSynchronize(junk));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamGetFlags(junk, &f));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamGetPriority(junk, &prio));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamGetCtx(junk, &c));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamWaitEvent(junk, e, 0));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(e, junk));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamDestroy(junk));

    /* A destroyed stream: an error, not a crash (checked by compat probe
     * 'streams'). */
    CUstream gone = ts_stream_new(CU_STREAM_NON_BLOCKING);
    assert_cu_ok(cuStreamDestroy(gone));
    CUdeviceptr d = ts_dev_alloc(1000);
    unsigned char host[1000];
    ts_fill_random(host, sizeof host, 0x90E);
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamQuery(gone));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamSynchronize(gone));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamGetFlags(gone, &f));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamGetPriority(gone, &prio));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamWaitEvent(gone, e, 0));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(e, gone));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemcpyHtoDAsync(d, host, sizeof host, gone));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemsetD8Async(d, 1, sizeof host, gone));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamDestroy(gone));
    /* The special handles are not destroyed (checked by compat probe
     * 'streams'), and still work afterwards. */
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamDestroy(NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamDestroy(CU_STREAM_LEGACY));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamDestroy(CU_STREAM_PER_THREAD));
    unsigned char back[1000];
    assert_cu_ok(cuMemcpyHtoDAsync(d, host, sizeof host, NULL));
    assert_cu_ok(cuMemcpyDtoHAsync(back, d, sizeof back, CU_STREAM_LEGACY));
    assert_cu_ok(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    assert_memory_equal(back, host, sizeof host);

    /* No current context: the calls that need one say so; a created stream
     * keeps working through its handle (checked by compat probe 'streams'). */
    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, fx->ctx);
    int l = 0, g = 0;
    CUstream none = NULL;
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuStreamCreate(&none, 0));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuStreamCreateWithPriority(&none, 0, -1));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetStreamPriorityRange(&l, &g));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuStreamQuery(NULL));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuStreamSynchronize(NULL));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuStreamGetCtx(NULL, &c));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuStreamGetCtx(CU_STREAM_LEGACY, &c));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuStreamGetCtx(CU_STREAM_PER_THREAD, &c));
    assert_cu_ok(cuStreamQuery(s));
    assert_cu_ok(cuStreamSynchronize(s));
    c = NULL;
    assert_cu_ok(cuStreamGetCtx(s, &c));
    assert_ptr_equal(c, fx->ctx);
    assert_cu_ok(cuCtxPushCurrent(popped));

    /* CU_EVENT_WAIT_EXTERNAL outside of stream capture: libcuda 580 answers
     * CUDA_ERROR_ILLEGAL_STATE (compat probe 'streams'). */
    assert_cu(CUDA_ERROR_ILLEGAL_STATE, cuStreamWaitEvent(s, e, CU_EVENT_WAIT_EXTERNAL));

    assert_cu_ok(cuMemFree(d));
    assert_cu_ok(cuEventDestroy(e));
    assert_cu_ok(cuStreamDestroy(s));
}

/* ------------------------------------------------------------------ order within a stream */

static void one_chain(CUstream s, uint64_t seed) {
    ts_busy w = ts_busy_new();
    chain c;
    chain_init(&c, s, 3 * TS_MiB + 77, seed);
    ts_busy_queue(&w, s); /* the chain queues behind it */
    for (int i = 0; i < 150; ++i) chain_step(&c);
    chain_finish(&c);
    ts_busy_free(&w);
}

static void test_in_order_created_stream(void **state) {
    (void)state;
    CUstream s = ts_stream_new(CU_STREAM_DEFAULT);
    one_chain(s, 0x0C1);
    assert_cu_ok(cuStreamDestroy(s));
}

static void test_in_order_non_blocking_stream(void **state) {
    (void)state;
    int least = 0, greatest = 0;
    assert_cu_ok(cuCtxGetStreamPriorityRange(&least, &greatest));
    CUstream s = NULL;
    assert_cu_ok(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, greatest));
    one_chain(s, 0x0C2);
    assert_cu_ok(cuStreamDestroy(s));
}

static void test_in_order_special_streams(void **state) {
    (void)state;
    one_chain(NULL, 0x0C3);
    one_chain(CU_STREAM_LEGACY, 0x0C4);
    one_chain(CU_STREAM_PER_THREAD, 0x0C5);
}

/* More streams than the context has lanes of channels (8), mixed flags and
 * priorities, their chains issued interleaved: each stream's order holds. */
static void test_in_order_many_streams_interleaved(void **state) {
    (void)state;
    enum { STREAMS = 12 };
    int least = 0, greatest = 0;
    assert_cu_ok(cuCtxGetStreamPriorityRange(&least, &greatest));
    chain *c = ts_malloc(STREAMS * sizeof *c);
    for (int i = 0; i < STREAMS; ++i) {
        CUstream s = NULL;
        assert_cu_ok(cuStreamCreateWithPriority(&s, i % 2 ? CU_STREAM_NON_BLOCKING : 0, i % 3 ? least : greatest));
        chain_init(&c[i], s, TS_MiB + 333 + 2 * (size_t)i, 0xCA00 + (uint64_t)i);
    }
    ts_rng rng;
    ts_rng_init(&rng, 0xC0FFEE);
    for (int k = 0; k < STREAMS * 60; ++k) chain_step(&c[ts_rng_below(&rng, STREAMS)]);
    for (int i = 0; i < STREAMS; ++i) {
        CUstream s = c[i].s;
        chain_finish(&c[i]);
        assert_cu_ok(cuStreamDestroy(s));
    }
    ts_free(c);
}

/* ------------------------------------------------------------------ query */

static void test_query_while_busy(void **state) {
    (void)state;
    ts_busy w = ts_busy_new();
    const CUstream streams[] = {ts_stream_new(0), ts_stream_new(CU_STREAM_NON_BLOCKING), NULL, CU_STREAM_LEGACY,
                                CU_STREAM_PER_THREAD};
    for (size_t i = 0; i < TS_ARRAY_SIZE(streams); ++i) {
        ts_busy_until_not_ready(&w, streams[i]);
        /* Done after synchronizing. */
        assert_cu_ok(cuStreamSynchronize(streams[i]));
        assert_cu_ok(cuStreamQuery(streams[i]));
        assert_cu_ok(cuStreamQuery(streams[i]));
    }
    /* A big pinned host-to-device copy: not ready while it runs, its bytes
     * there after cuStreamSynchronize. */
    CUstream s = streams[0];
    const size_t n = 128 * TS_MiB + 5;
    unsigned char *src = ts_pinned_alloc(n), *back = ts_malloc(4099);
    ts_fill_random(src, n, 0xB16C);
    CUdeviceptr d = ts_dev_alloc(n);
    assert_cu_ok(cuMemsetD8(d, 0x3D, n));
    ts_busy_queue(&w, s);
    assert_cu_ok(cuMemcpyHtoDAsync(d, src, n, s));
    assert_cu(CUDA_ERROR_NOT_READY, cuStreamQuery(s));
    assert_cu_ok(cuStreamSynchronize(s));
    assert_cu_ok(cuStreamQuery(s));
    assert_cu_ok(cuMemcpyDtoH(back, d + n - 4099, 4099));
    assert_bytes_equal(src + n - 4099, back, 4099);
    assert_cu_ok(cuMemFree(d));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuStreamDestroy(streams[0]));
    assert_cu_ok(cuStreamDestroy(streams[1]));
    ts_busy_free(&w);
}

/* ------------------------------------------------------------------ order across streams */

/* Stream b waits for an event recorded in stream a after busy work and two
 * copies; b's copy reads what a wrote. Only b is synchronized. */
static void wait_event_case(unsigned flags_a, unsigned flags_b, uint64_t seed) {
    const size_t n = 8 * TS_MiB + 5;
    ts_busy w = ts_busy_new();
    CUstream a = ts_stream_new(flags_a), b = ts_stream_new(flags_b);
    CUevent e = ts_event_new(CU_EVENT_DISABLE_TIMING);
    unsigned char *src = ts_pinned_alloc(n), *out = ts_pinned_alloc(n);
    ts_fill_random(src, n, seed);
    memset(out, 0xEE, n);
    CUdeviceptr x = ts_dev_alloc(n), y = ts_dev_alloc(n);
    /* A memset of device memory may still run when it returns; non-blocking
     * streams do not wait for it. */
    assert_cu_ok(cuMemsetD8(y, 0x5A, n));
    assert_cu_ok(cuCtxSynchronize());
    ts_busy_until_not_ready(&w, a);
    assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, a));
    assert_cu_ok(cuMemcpyDtoDAsync(y, x, n, a));
    assert_cu_ok(cuEventRecord(e, a));
    assert_cu_ok(cuStreamWaitEvent(b, e, 0));
    assert_cu_ok(cuMemcpyDtoHAsync(out, y, n, b));
    assert_cu_ok(cuStreamSynchronize(b));
    if (memcmp(out, src, n) != 0)
        print_error("stream b (flags %u) read y before stream a (flags %u) wrote it\n", flags_b, flags_a);
    assert_bytes_equal(src, out, n);
    /* b waited for e, e is a's last work: both are done. */
    assert_cu_ok(cuEventQuery(e));
    assert_cu_ok(cuStreamQuery(a));
    assert_cu_ok(cuEventDestroy(e));
    assert_cu_ok(cuStreamDestroy(a));
    assert_cu_ok(cuStreamDestroy(b));
    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFree(y));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out));
    ts_busy_free(&w);
}

static void test_wait_event_orders_streams(void **state) {
    (void)state;
    wait_event_case(CU_STREAM_NON_BLOCKING, CU_STREAM_NON_BLOCKING, 0xE1);
    wait_event_case(CU_STREAM_DEFAULT, CU_STREAM_DEFAULT, 0xE2);
    wait_event_case(CU_STREAM_DEFAULT, CU_STREAM_NON_BLOCKING, 0xE3);
    wait_event_case(CU_STREAM_NON_BLOCKING, CU_STREAM_DEFAULT, 0xE4);
}

/* a -> b -> c -> a through three events, each step a copy of the previous
 * step's buffer; then the legacy stream waits for an event of a non-blocking
 * stream, and a non-blocking stream for an event recorded on the legacy
 * stream. */
static void test_wait_event_ring(void **state) {
    (void)state;
    const size_t n = 5 * TS_MiB + 3;
    ts_busy w = ts_busy_new();
    CUstream s[3] = {ts_stream_new(CU_STREAM_NON_BLOCKING), ts_stream_new(CU_STREAM_NON_BLOCKING), ts_stream_new(0)};
    CUevent e[3] = {ts_event_new(0), ts_event_new(CU_EVENT_DISABLE_TIMING), ts_event_new(CU_EVENT_BLOCKING_SYNC)};
    CUdeviceptr x[4];
    for (int i = 0; i < 4; ++i) {
        x[i] = ts_dev_alloc(n);
        assert_cu_ok(cuMemsetD8(x[i], (unsigned char)(0x70 + i), n));
    }
    assert_cu_ok(cuCtxSynchronize()); /* the fills are done before the non-blocking streams start */
    unsigned char *src = ts_pinned_alloc(n), *out = ts_pinned_alloc(n);
    ts_fill_random(src, n, 0x417);
    memset(out, 0xEE, n);
    ts_busy_until_not_ready(&w, s[0]);
    assert_cu_ok(cuMemcpyHtoDAsync(x[0], src, n, s[0]));
    for (int i = 0; i < 3; ++i) {
        if (i > 0) assert_cu_ok(cuStreamWaitEvent(s[i], e[i - 1], 0));
        assert_cu_ok(cuMemcpyDtoDAsync(x[i + 1], x[i], n, s[i]));
        assert_cu_ok(cuEventRecord(e[i], s[i]));
    }
    assert_cu_ok(cuStreamWaitEvent(s[0], e[2], 0));
    assert_cu_ok(cuMemcpyDtoHAsync(out, x[3], n, s[0]));
    assert_cu_ok(cuStreamSynchronize(s[0]));
    assert_bytes_named(src, out, n, "the end of the a -> b -> c -> a ring");

    /* Non-blocking stream -> legacy stream. */
    ts_fill_random(src, n, 0x418);
    memset(out, 0xEE, n);
    ts_busy_until_not_ready(&w, s[1]);
    assert_cu_ok(cuMemcpyHtoDAsync(x[1], src, n, s[1]));
    assert_cu_ok(cuEventRecord(e[1], s[1]));
    assert_cu_ok(cuStreamWaitEvent(NULL, e[1], 0));
    assert_cu_ok(cuMemcpyDtoHAsync(out, x[1], n, NULL));
    assert_cu_ok(cuStreamSynchronize(NULL));
    assert_bytes_named(src, out, n, "the legacy stream's read after waiting for a non-blocking stream");

    /* Legacy stream -> non-blocking stream. */
    ts_fill_random(src, n, 0x419);
    memset(out, 0xEE, n);
    ts_busy_until_not_ready(&w, NULL);
    assert_cu_ok(cuMemcpyHtoDAsync(x[2], src, n, NULL));
    assert_cu_ok(cuEventRecord(e[0], NULL));
    assert_cu_ok(cuStreamWaitEvent(s[1], e[0], 0));
    assert_cu_ok(cuMemcpyDtoHAsync(out, x[2], n, s[1]));
    assert_cu_ok(cuStreamSynchronize(s[1]));
    assert_bytes_named(src, out, n, "a non-blocking stream's read after waiting for the legacy stream");

    for (int i = 0; i < 3; ++i) {
        assert_cu_ok(cuEventDestroy(e[i]));
        assert_cu_ok(cuStreamDestroy(s[i]));
    }
    for (int i = 0; i < 4; ++i) assert_cu_ok(cuMemFree(x[i]));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out));
    ts_busy_free(&w);
}

/* cuStreamWaitEvent uses the event as recorded at the time of the call (CUDA's
 * documentation of cuEventRecord): recording the event again elsewhere
 * afterwards does not release the wait early. Waiting for an event never
 * recorded waits for nothing. */
static void test_wait_event_uses_state_at_call(void **state) {
    (void)state;
    const size_t n = 6 * TS_MiB + 1;
    ts_busy w = ts_busy_new();
    CUstream a = ts_stream_new(CU_STREAM_NON_BLOCKING), b = ts_stream_new(CU_STREAM_NON_BLOCKING),
             idle = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent e = ts_event_new(0), never = ts_event_new(0);
    unsigned char *src = ts_pinned_alloc(n), *out = ts_pinned_alloc(n);
    ts_fill_random(src, n, 0x5747);
    memset(out, 0xEE, n);
    CUdeviceptr x = ts_dev_alloc(n);
    assert_cu_ok(cuMemsetD8(x, 0x99, n));
    assert_cu_ok(cuCtxSynchronize()); /* done before the non-blocking streams start */
    ts_busy_until_not_ready(&w, a);
    assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, a));
    assert_cu_ok(cuEventRecord(e, a));
    assert_cu_ok(cuStreamWaitEvent(b, e, 0));
    assert_cu_ok(cuEventRecord(e, idle)); /* e now stands for nothing pending */
    assert_cu_ok(cuEventSynchronize(e));
    assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, b));
    assert_cu_ok(cuStreamSynchronize(b));
    assert_bytes_named(src, out, n, "a read after waiting for an event that was recorded again later");

    /* Never recorded: nothing to wait for, the stream's work runs. */
    memset(out, 0xEE, n);
    assert_cu_ok(cuStreamWaitEvent(b, never, 0));
    assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, b));
    assert_cu_ok(cuStreamSynchronize(b));
    assert_bytes_equal(src, out, n);

    assert_cu_ok(cuEventDestroy(e));
    assert_cu_ok(cuEventDestroy(never));
    assert_cu_ok(cuStreamDestroy(a));
    assert_cu_ok(cuStreamDestroy(b));
    assert_cu_ok(cuStreamDestroy(idle));
    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out));
    ts_busy_free(&w);
}

/* ------------------------------------------------------------------ legacy stream */

/* Work in a blocking stream followed by work on the legacy stream that depends
 * on it, without events: the legacy stream waits for the blocking streams; and
 * the other way round. */
static void test_legacy_stream_orders_blocking_streams(void **state) {
    (void)state;
    const size_t n = 7 * TS_MiB + 9;
    ts_busy w = ts_busy_new();
    CUstream s = ts_stream_new(CU_STREAM_DEFAULT), s2 = ts_stream_new(CU_STREAM_DEFAULT);
    unsigned char *src = ts_pinned_alloc(n), *out = ts_pinned_alloc(n), *page = ts_malloc(n);
    CUdeviceptr x = ts_dev_alloc(n), y = ts_dev_alloc(n);
    const CUstream legacy[] = {NULL, CU_STREAM_LEGACY};
    for (size_t i = 0; i < TS_ARRAY_SIZE(legacy); ++i) {
        /* Blocking stream -> legacy stream (async copy, then cuStreamSynchronize
         * of the legacy stream alone). */
        ts_fill_random(src, n, 0x1E6 + i);
        memset(out, 0xEE, n);
        ts_busy_until_not_ready(&w, s);
        assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, s));
        assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, legacy[i]));
        assert_cu_ok(cuStreamSynchronize(legacy[i]));
        if (memcmp(out, src, n) != 0) print_error("%s did not wait for a blocking stream\n", stream_name(legacy[i]));
        assert_bytes_equal(src, out, n);

        /* Two blocking streams -> a synchronous copy (legacy stream). */
        ts_fill_random(src, n, 0x2E6 + i);
        ts_busy_until_not_ready(&w, s);
        assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, s));
        ts_busy_queue(&w, s2);
        assert_cu_ok(cuMemcpyDtoDAsync(y, x, n / 2, s2)); /* s2 is not ordered after s: not read */
        assert_cu_ok(cuMemcpyDtoH(page, x, n));
        assert_bytes_named(src, page, n, "a synchronous copy after a blocking stream's copy");
        assert_cu_ok(cuStreamSynchronize(s2));

        /* Legacy stream -> blocking stream. */
        ts_fill_random(src, n, 0x3E6 + i);
        memset(out, 0xEE, n);
        ts_busy_until_not_ready(&w, legacy[i]);
        assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, legacy[i]));
        assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, s));
        assert_cu_ok(cuStreamSynchronize(s));
        if (memcmp(out, src, n) != 0) print_error("a blocking stream did not wait for %s\n", stream_name(legacy[i]));
        assert_bytes_equal(src, out, n);
    }
    /* The per-thread default stream -> legacy stream (the per-thread stream
     * synchronizes with the legacy stream like a blocking stream). */
    ts_fill_random(src, n, 0x4E6);
    memset(out, 0xEE, n);
    ts_busy_until_not_ready(&w, CU_STREAM_PER_THREAD);
    assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, CU_STREAM_PER_THREAD));
    assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, NULL));
    assert_cu_ok(cuStreamSynchronize(NULL));
    assert_bytes_equal(src, out, n);

    /* An event recorded on the legacy stream follows the blocking streams'
     * work submitted before it. */
    ts_fill_random(src, n, 0x5E6);
    memset(out, 0xEE, n);
    CUevent e = ts_event_new(CU_EVENT_DISABLE_TIMING);
    ts_busy_until_not_ready(&w, s);
    assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, s));
    assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, s));
    assert_cu_ok(cuEventRecord(e, NULL));
    assert_cu_ok(cuEventSynchronize(e));
    assert_bytes_named(src, out, n,
                       "a blocking stream's copy once an event recorded later on the legacy stream is done");

    assert_cu_ok(cuEventDestroy(e));
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuStreamDestroy(s2));
    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFree(y));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out));
    ts_free(page);
    ts_busy_free(&w);
}

/* CU_STREAM_NON_BLOCKING: what can be told without timing. An empty
 * non-blocking stream is idle and synchronizes at once while the legacy stream
 * is busy (a stream that waited for the legacy stream would return only after
 * it: the legacy stream would then be done); ordering with the legacy stream
 * through events works; cuCtxSynchronize waits for non-blocking streams. */
static void test_non_blocking_stream(void **state) {
    (void)state;
    const size_t n = 4 * TS_MiB + 11;
    ts_busy w = ts_busy_new();
    CUstream nb = ts_stream_new(CU_STREAM_NON_BLOCKING);
    unsigned f = 0;
    assert_cu_ok(cuStreamGetFlags(nb, &f));
    assert_int_equal(f, CU_STREAM_NON_BLOCKING);

    int seen = 0;
    for (int round = 0; round < 3 && !seen; ++round) {
        ts_busy_until_not_ready(&w, NULL);
        ts_busy_queue(&w, NULL); /* and as much again: a longer window */
        assert_cu_ok(cuStreamQuery(nb));
        assert_cu_ok(cuStreamSynchronize(nb));
        /* The legacy stream was still busy after nb's synchronization: nb did
         * not wait for it. (Done in the meantime by chance: try again.) */
        seen = cuStreamQuery(NULL) == CUDA_ERROR_NOT_READY;
        assert_cu_ok(cuStreamSynchronize(NULL));
    }
    if (!seen) fail_msg("cuStreamSynchronize of an empty non-blocking stream waited for the legacy stream");

    /* Explicit order with the legacy stream. */
    unsigned char *src = ts_pinned_alloc(n), *out = ts_pinned_alloc(n);
    ts_fill_random(src, n, 0x9B);
    memset(out, 0xEE, n);
    CUdeviceptr x = ts_dev_alloc(n);
    CUevent e = ts_event_new(CU_EVENT_DISABLE_TIMING);
    ts_busy_until_not_ready(&w, NULL);
    assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, NULL));
    assert_cu_ok(cuEventRecord(e, NULL));
    assert_cu_ok(cuStreamWaitEvent(nb, e, 0));
    assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, nb));
    assert_cu_ok(cuStreamSynchronize(nb));
    assert_bytes_equal(src, out, n);

    /* cuCtxSynchronize covers non-blocking streams. */
    ts_fill_random(src, n, 0x9C);
    memset(out, 0xEE, n);
    ts_busy_until_not_ready(&w, nb);
    assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, nb));
    assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, nb));
    assert_cu_ok(cuCtxSynchronize());
    assert_bytes_named(src, out, n, "a non-blocking stream's copy after cuCtxSynchronize");
    assert_cu_ok(cuStreamQuery(nb));

    assert_cu_ok(cuEventDestroy(e));
    assert_cu_ok(cuStreamDestroy(nb));
    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out));
    ts_busy_free(&w);
}

/* ------------------------------------------------------------------ every async call */

/* Every copy, fill, event and wait call with the NULL stream, CU_STREAM_LEGACY,
 * CU_STREAM_PER_THREAD and a created stream; the data checked. */
static void test_every_async_call_takes_special_handles(void **state) {
    (void)state;
    const size_t n = 2 * TS_MiB + 7;
    const CUstream handles[] = {NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, ts_stream_new(CU_STREAM_NON_BLOCKING)};
    unsigned char *src = ts_pinned_alloc(n), *back = ts_pinned_alloc(n), *expect = ts_malloc(n);
    CUdeviceptr a = ts_dev_alloc(n), b = ts_dev_alloc(n), c = ts_dev_alloc(n);
    CUevent e1 = ts_event_new(0), e2 = ts_event_new(0);
    for (size_t i = 0; i < TS_ARRAY_SIZE(handles); ++i) {
        const CUstream h = handles[i];
        ts_fill_random(src, n, 0xA11 + i);
        memset(back, 0, n);
        assert_cu_ok(cuEventRecord(e1, h));
        assert_cu_ok(cuMemcpyHtoDAsync(a, src, n, h));
        assert_cu_ok(cuMemcpyDtoDAsync(b + 1, a, n - 1, h));
        assert_cu_ok(cuMemsetD8Async(b, 0x3C, 1, h));
        assert_cu_ok(cuMemsetD16Async(b + 1000, 0xBEEF, 51, h));
        assert_cu_ok(cuMemsetD32Async(b + 2000, 0x01020304u, 33, h));
        assert_cu_ok(cuStreamWaitEvent(h, e1, 0));
        assert_cu_ok(cuMemcpyAsync(c, b, n, h));
        assert_cu_ok(cuEventRecordWithFlags(e2, h, CU_EVENT_RECORD_DEFAULT));
        assert_cu_ok(cuStreamWaitEvent(h, e2, CU_EVENT_WAIT_DEFAULT));
        assert_cu_ok(cuMemcpyDtoHAsync(back, c, n, h));
        assert_cu_ok(cuStreamSynchronize(h));
        expect[0] = 0x3C;
        memcpy(expect + 1, src, n - 1);
        for (size_t k = 0; k < 51; ++k) expect[1000 + 2 * k] = 0xEF, expect[1001 + 2 * k] = 0xBE;
        for (size_t k = 0; k < 33; ++k)
            expect[2000 + 4 * k] = 4, expect[2001 + 4 * k] = 3, expect[2002 + 4 * k] = 2, expect[2003 + 4 * k] = 1;
        if (memcmp(expect, back, n) != 0) print_error("async calls on %s\n", stream_name(h));
        assert_bytes_equal(expect, back, n);
        assert_cu_ok(cuStreamQuery(h));
        assert_cu_ok(cuEventQuery(e1));
        assert_cu_ok(cuEventQuery(e2));
        float ms = -1.0f;
        assert_cu_ok(cuEventElapsedTime(&ms, e1, e2));
        assert_true(ms >= 0.0f);
    }
    assert_cu_ok(cuEventDestroy(e1));
    assert_cu_ok(cuEventDestroy(e2));
    assert_cu_ok(cuStreamDestroy(handles[3]));
    assert_cu_ok(cuMemFree(a));
    assert_cu_ok(cuMemFree(b));
    assert_cu_ok(cuMemFree(c));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(back));
}

/* cuLaunchKernel on every kind of stream handle, in order with copies. */
static void test_launch_on_every_stream_handle(void **state) {
    (void)state;
    CUmodule m = ts_source_module(kSource, "streams.cu");
    CUfunction f = ts_get_function(m, "mark");
    const unsigned count = 100003;
    const size_t bytes = (size_t)count * 4;
    const CUstream handles[] = {NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, ts_stream_new(0),
                                ts_stream_new(CU_STREAM_NON_BLOCKING)};
    uint32_t *in = (void *)ts_pinned_alloc(bytes), *out = (void *)ts_pinned_alloc(bytes);
    CUdeviceptr d = ts_dev_alloc(bytes);
    const int real_gpu = ts_have_real_gpu(NULL);
    for (size_t i = 0; i < TS_ARRAY_SIZE(handles); ++i) {
        const CUstream h = handles[i];
        ts_fill_random(in, bytes, 0x1A0 + i);
        memset(out, 0, bytes);
        unsigned v1 = 7 + (unsigned)i, v2 = 1000 + (unsigned)i, nn = count;
        void *p1[] = {&d, &v1, &nn}, *p2[] = {&d, &v2, &nn};
        assert_cu_ok(cuMemcpyHtoDAsync(d, in, bytes, h));
        assert_cu_ok(cuLaunchKernel(f, (count + 255) / 256, 1, 1, 256, 1, 1, 0, h, p1, NULL));
        assert_cu_ok(cuLaunchKernel(f, (count + 127) / 128, 1, 1, 128, 1, 1, 0, h, p2, NULL));
        assert_cu_ok(cuMemcpyDtoHAsync(out, d, bytes, h));
        assert_cu_ok(cuStreamSynchronize(h));
        assert_cu_ok(cuStreamQuery(h));
        if (real_gpu) {
            for (unsigned k = 0; k < count; ++k) {
                const uint32_t want = (in[k] * 3u + v1) * 3u + v2;
                if (out[k] != want) fail_msg("%s: element %u is %u, expected %u", stream_name(h), k, out[k], want);
            }
        } else {
            /* The simulator does not run kernels: the copies around them
             * still ran, in order. */
            assert_bytes_equal(in, out, bytes);
        }
    }
    assert_cu_ok(cuStreamDestroy(handles[3]));
    assert_cu_ok(cuStreamDestroy(handles[4]));
    assert_cu_ok(cuMemFree(d));
    assert_cu_ok(cuMemFreeHost(in));
    assert_cu_ok(cuMemFreeHost(out));
    assert_cu_ok(cuModuleUnload(m));
}

/* The per-thread default stream's exports (what <cuda.h> maps the calls to
 * under CUDA_API_PER_THREAD_DEFAULT_STREAM): NULL is the per-thread stream. */
static void test_ptsz_exports(void **state) {
    ts_fixture *fx = ts_fx(state);
    typedef CUresult (*stream_fn)(CUstream);
    typedef CUresult (*flags_fn)(CUstream, unsigned *);
    typedef CUresult (*prio_fn)(CUstream, int *);
    typedef CUresult (*ctx_fn)(CUstream, CUcontext *);
    typedef CUresult (*wait_fn)(CUstream, CUevent, unsigned);
    typedef CUresult (*record_fn)(CUevent, CUstream);
    typedef CUresult (*record_flags_fn)(CUevent, CUstream, unsigned);
    stream_fn query = (stream_fn)dlsym(RTLD_DEFAULT, "cuStreamQuery_ptsz");
    stream_fn sync = (stream_fn)dlsym(RTLD_DEFAULT, "cuStreamSynchronize_ptsz");
    flags_fn get_flags = (flags_fn)dlsym(RTLD_DEFAULT, "cuStreamGetFlags_ptsz");
    prio_fn get_prio = (prio_fn)dlsym(RTLD_DEFAULT, "cuStreamGetPriority_ptsz");
    ctx_fn get_ctx = (ctx_fn)dlsym(RTLD_DEFAULT, "cuStreamGetCtx_ptsz");
    wait_fn wait = (wait_fn)dlsym(RTLD_DEFAULT, "cuStreamWaitEvent_ptsz");
    record_fn record = (record_fn)dlsym(RTLD_DEFAULT, "cuEventRecord_ptsz");
    record_flags_fn record_flags = (record_flags_fn)dlsym(RTLD_DEFAULT, "cuEventRecordWithFlags_ptsz");
    if (!query || !sync || !get_flags || !get_prio || !get_ctx || !wait || !record || !record_flags)
        fail_msg("a _ptsz export of the stream and event calls is missing");

    const size_t n = 3 * TS_MiB + 1;
    ts_busy w = ts_busy_new();
    unsigned char *src = ts_pinned_alloc(n), *out = ts_pinned_alloc(n);
    ts_fill_random(src, n, 0x9757);
    memset(out, 0xEE, n);
    CUdeviceptr x = ts_dev_alloc(n);
    CUevent e1 = ts_event_new(0), e2 = ts_event_new(0);
    unsigned f = 0xdead;
    int prio = 12345;
    CUcontext c = NULL;
    assert_cu_ok(get_flags(NULL, &f));
    assert_int_equal(f, 0);
    assert_cu_ok(get_prio(NULL, &prio));
    assert_int_equal(prio, 0);
    assert_cu_ok(get_ctx(NULL, &c));
    assert_ptr_equal(c, fx->ctx);
    assert_cu(CUDA_ERROR_INVALID_VALUE, get_flags(NULL, NULL));

    assert_cu_ok(record(e1, NULL));
    ts_busy_queue(&w, CU_STREAM_PER_THREAD);
    assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, CU_STREAM_PER_THREAD));
    assert_cu_ok(record_flags(e2, NULL, CU_EVENT_RECORD_DEFAULT));
    CUstream nb = ts_stream_new(CU_STREAM_NON_BLOCKING);
    assert_cu_ok(cuStreamWaitEvent(nb, e2, 0));
    assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, nb));
    assert_cu_ok(wait(NULL, e2, 0));
    assert_cu_ok(sync(NULL));
    assert_cu_ok(query(NULL));
    assert_cu_ok(cuEventQuery(e2));
    assert_cu_ok(cuStreamSynchronize(nb));
    assert_bytes_equal(src, out, n);
    float ms = -1.0f;
    assert_cu_ok(cuEventElapsedTime(&ms, e1, e2));
    assert_true(ms > 0.0f);

    assert_cu_ok(cuStreamDestroy(nb));
    assert_cu_ok(cuEventDestroy(e1));
    assert_cu_ok(cuEventDestroy(e2));
    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out));
    ts_busy_free(&w);
}

/* ------------------------------------------------------------------ lifetime */

/* cuStreamDestroy with work still queued returns at once; the work completes
 * (CUDA's documentation of cuStreamDestroy). */
static void test_destroy_stream_with_pending_work(void **state) {
    (void)state;
    const size_t n = 9 * TS_MiB + 1;
    ts_busy w = ts_busy_new();
    unsigned char *src = ts_pinned_alloc(n), *out = ts_pinned_alloc(n);
    ts_fill_random(src, n, 0xDE57);
    memset(out, 0xEE, n);
    CUdeviceptr x = ts_dev_alloc(n);
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    ts_busy_until_not_ready(&w, s);
    assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, s));
    assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, s));
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuCtxSynchronize());
    assert_bytes_named(src, out, n, "the work of a stream destroyed while it ran");

    /* And a context destroyed with streams and events in it. */
    CUcontext other = NULL;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, 0));
    CUstream left[3] = {ts_stream_new(0), ts_stream_new(CU_STREAM_NON_BLOCKING), ts_stream_new(0)};
    CUevent ev = ts_event_new(0);
    CUdeviceptr y = ts_dev_alloc(n);
    for (int i = 0; i < 3; ++i) assert_cu_ok(cuMemsetD32Async(y, 0x01010101u * (unsigned)i, n / 4, left[i]));
    assert_cu_ok(cuEventRecord(ev, left[2]));
    assert_cu_ok(cuCtxDestroy(other));

    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out));
    ts_busy_free(&w);
}

/* ------------------------------------------------------------------ contexts */

/* A stream of another context, used while a different context is current.
 * Documented: cuStreamGetCtx names the stream's own context; cuStreamWaitEvent
 * takes an event of another context; cuEventRecord wants event and stream of
 * one context (else CUDA_ERROR_INVALID_HANDLE). The rest: checked by compat
 * probe 'streams'. */
static void test_stream_of_other_context(void **state) {
    ts_fixture *fx = ts_fx(state);
    const size_t n = 5 * TS_MiB + 3;
    ts_busy w = ts_busy_new();
    CUstream s1 = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent e1 = ts_event_new(0);
    CUdeviceptr d1 = ts_dev_alloc(n);
    void *portable = NULL;
    assert_cu_ok(cuMemHostAlloc(&portable, n, CU_MEMHOSTALLOC_PORTABLE));
    unsigned char *h = portable, *src = ts_pinned_alloc(n);
    ts_fill_random(src, n, 0xC7C7);
    memset(h, 0x44, n);

    CUcontext c2 = NULL;
    assert_cu_ok(cuCtxCreate(&c2, NULL, 0, fx->dev)); /* current */
    CUstream s2 = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent e2 = ts_event_new(0);
    CUdeviceptr d2 = ts_dev_alloc(n);
    unsigned char *out = ts_pinned_alloc(n);
    memset(out, 0xEE, n);

    CUcontext c = NULL;
    assert_cu_ok(cuStreamGetCtx(s1, &c));
    assert_ptr_equal(c, fx->ctx);
    assert_cu_ok(cuStreamGetCtx(s2, &c));
    assert_ptr_equal(c, c2);
    assert_cu_ok(cuStreamQuery(s1));       /* checked by compat probe 'streams' */
    assert_cu_ok(cuStreamSynchronize(s1)); /* checked by compat probe 'streams' */
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(e2, s1));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(e1, s2));
    /* Work into a stream of a context that is not current goes to that
     * stream, in its context (libcuda 580 on the H200: compat probe 'streams'). */
    assert_cu_ok(cuMemsetD8Async(d2, 1, n, s1));
    assert_cu_ok(cuMemcpyAsync(ts_dptr(h), d2, n, s1));
    assert_cu_ok(cuStreamSynchronize(s1));
    for (size_t i = 0; i < n; ++i)
        if (((unsigned char *)h)[i] != 1) fail_msg("byte %zu of a copy in another context's stream: %u", i, ((unsigned char *)h)[i]);

    /* c1's stream writes the portable buffer, c2's stream waits for c1's event
     * and reads it. */
    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c2);
    ts_busy_until_not_ready(&w, s1);
    assert_cu_ok(cuMemcpyHtoDAsync(d1, src, n, s1));
    assert_cu_ok(cuMemcpyDtoHAsync(h, d1, n, s1));
    assert_cu_ok(cuEventRecord(e1, s1));
    assert_cu_ok(cuCtxPushCurrent(c2));
    assert_cu_ok(cuEventRecord(e1, s1)); /* same context as the event; checked by compat probe 'streams' */
    assert_cu_ok(cuStreamWaitEvent(s2, e1, 0));
    assert_cu_ok(cuMemcpyHtoDAsync(d2, h, n, s2));
    assert_cu_ok(cuMemcpyDtoHAsync(out, d2, n, s2));
    assert_cu_ok(cuStreamSynchronize(s2));
    assert_bytes_named(src, out, n, "a read in one context after waiting for an event of another");
    assert_cu_ok(cuEventRecord(e2, s2));
    assert_cu_ok(cuEventSynchronize(e2));
    float ms = 0;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, e1, e2)); /* checked by compat probe 'streams' */
    assert_cu_ok(cuEventSynchronize(e1));
    /* NULL is c2's legacy stream here (checked by compat probe 'streams';
     * checked after c2 is gone, so that a failure leaves no context behind). */
    const CUresult record_on_c2_legacy_stream = cuEventRecord(e1, NULL);

    assert_cu_ok(cuCtxDestroy(c2));
    assert_ptr_equal(current_ctx(), fx->ctx);
    assert_cu(CUDA_ERROR_INVALID_HANDLE, record_on_c2_legacy_stream);
    assert_cu_ok(cuStreamDestroy(s1));
    assert_cu_ok(cuEventDestroy(e1));
    assert_cu_ok(cuMemFree(d1));
    assert_cu_ok(cuMemFreeHost(portable));
    assert_cu_ok(cuMemFreeHost(src));
    ts_busy_free(&w);
}

/* ------------------------------------------------------------------ waiting */

static double thread_cpu_seconds(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0) return 0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

/* Contexts made with each CU_CTX_SCHED_* flag: each way of waiting
 * (cuStreamSynchronize, cuEventSynchronize of a default and a blocking-sync
 * event, cuCtxSynchronize, a synchronous copy) returns once the work is done.
 * The CPU time each wait took is printed, not checked. */
static void test_sched_flags_wait(void **state) {
    ts_fixture *fx = ts_fx(state);
    const unsigned flags[] = {CU_CTX_SCHED_AUTO, CU_CTX_SCHED_SPIN, CU_CTX_SCHED_YIELD, CU_CTX_SCHED_BLOCKING_SYNC};
    static const char *const names[] = {"AUTO", "SPIN", "YIELD", "BLOCKING_SYNC"};
    const size_t n = 6 * TS_MiB + 5;
    for (size_t i = 0; i < TS_ARRAY_SIZE(flags); ++i) {
        CUcontext c = NULL;
        assert_cu_ok(cuCtxCreate(&c, NULL, flags[i], fx->dev));
        unsigned got = 0xdead;
        assert_cu_ok(cuCtxGetFlags(&got));
        assert_int_equal(got & CU_CTX_SCHED_MASK, flags[i]);
        ts_busy w = ts_busy_new();
        CUstream s = ts_stream_new(i % 2 ? CU_STREAM_NON_BLOCKING : 0);
        CUevent ev_default = ts_event_new(0), ev_blocking = ts_event_new(CU_EVENT_BLOCKING_SYNC);
        unsigned char *src = ts_pinned_alloc(n), *out = ts_pinned_alloc(n), *page = ts_malloc(n);
        CUdeviceptr x = ts_dev_alloc(n);
        double cpu = 0, wall = 0;
        for (int way = 0; way < 5; ++way) {
            ts_fill_random(src, n, 0x5C0 + 16 * i + (uint64_t)way);
            memset(out, 0xEE, n);
            const CUstream on = way == 4 ? NULL : s;
            ts_busy_until_not_ready(&w, on);
            assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, on));
            assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, on));
            const double t0 = ts_now(), c0 = thread_cpu_seconds();
            switch (way) {
            case 0:
                assert_cu_ok(cuStreamSynchronize(s));
                break;
            case 1:
                assert_cu_ok(cuEventRecord(ev_default, s));
                assert_cu_ok(cuEventSynchronize(ev_default));
                break;
            case 2:
                assert_cu_ok(cuEventRecord(ev_blocking, s));
                assert_cu_ok(cuEventSynchronize(ev_blocking));
                break;
            case 3:
                assert_cu_ok(cuCtxSynchronize());
                break;
            default:
                /* A synchronous copy on the legacy stream waits for it. */
                assert_cu_ok(cuMemcpyDtoH(page, x, n));
                assert_bytes_named(src, page, n, "a synchronous copy after busy work");
                assert_cu_ok(cuStreamSynchronize(NULL));
                break;
            }
            wall += ts_now() - t0;
            cpu += thread_cpu_seconds() - c0;
            if (memcmp(out, src, n) != 0) print_error("CU_CTX_SCHED_%s, wait %d returned early\n", names[i], way);
            assert_bytes_equal(src, out, n);
        }
        print_message("CU_CTX_SCHED_%-13s waits: %.1f ms, %.1f ms of CPU time\n", names[i], wall * 1e3, cpu * 1e3);
        assert_cu_ok(cuEventDestroy(ev_default));
        assert_cu_ok(cuEventDestroy(ev_blocking));
        assert_cu_ok(cuStreamDestroy(s));
        assert_cu_ok(cuMemFree(x));
        assert_cu_ok(cuMemFreeHost(src));
        assert_cu_ok(cuMemFreeHost(out));
        ts_free(page);
        ts_busy_free(&w);
        assert_cu_ok(cuCtxDestroy(c));
        assert_ptr_equal(current_ctx(), fx->ctx);
    }
}

/* ------------------------------------------------------------------ CUDA_LAUNCH_BLOCKING */

#define CHILD_ARG "--launch-blocking-child"

/* In the child (CUDA_LAUNCH_BLOCKING=1 from the start): 'reps' busy copies,
 * which the parent saw still running right after it queued them, are done
 * when the calls return; so are copies, fills, event records and launches. */
static int launch_blocking_child(unsigned reps) {
    alarm(120); /* a hang in the child must not hang the parent's waitpid */
    int bad = 0;
#define CHILD_CU(call)                                                                         \
    do {                                                                                       \
        CUresult r_ = (call);                                                                  \
        if (r_ != CUDA_SUCCESS) {                                                              \
            fprintf(stderr, "launch-blocking child: %s returned %s\n", #call, ts_cu_name(r_)); \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)
#define CHILD_EXPECT(cond, ...)                                     \
    do {                                                            \
        if (!(cond)) {                                              \
            fprintf(stderr, "launch-blocking child: " __VA_ARGS__); \
            fputc('\n', stderr);                                    \
            ++bad;                                                  \
        }                                                           \
    } while (0)
    CUcontext ctx = NULL;
    CHILD_CU(cuInit(0));
    CHILD_CU(cuCtxCreate(&ctx, NULL, 0, 0));
    const size_t big = 64 * TS_MiB + 3, n = 3 * TS_MiB + 1;
    CUdeviceptr a = 0, b = 0, x = 0;
    CHILD_CU(cuMemAlloc(&a, big));
    CHILD_CU(cuMemAlloc(&b, big));
    CHILD_CU(cuMemAlloc(&x, n));
    CUstream s = NULL;
    CHILD_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUevent e = NULL;
    CHILD_CU(cuEventCreate(&e, 0));
    const CUstream streams[] = {s, NULL};
    for (int k = 0; k < 2; ++k) {
        for (unsigned i = 0; i < reps; ++i) CHILD_CU(cuMemcpyDtoDAsync(i & 1 ? a : b, i & 1 ? b : a, big, streams[k]));
        const CUresult r = cuStreamQuery(streams[k]);
        CHILD_EXPECT(r == CUDA_SUCCESS, "cuStreamQuery(%s) right after %u queued copies returned %s",
                     stream_name(streams[k]), reps, ts_cu_name(r));
        for (unsigned i = 0; i < reps; ++i) CHILD_CU(cuMemcpyDtoDAsync(i & 1 ? a : b, i & 1 ? b : a, big, streams[k]));
        CHILD_CU(cuEventRecord(e, streams[k]));
        const CUresult q = cuEventQuery(e);
        CHILD_EXPECT(q == CUDA_SUCCESS, "cuEventQuery right after recording behind %u copies returned %s", reps,
                     ts_cu_name(q));
    }
    /* Data through pinned memory, read without any synchronization. */
    void *srcv = NULL, *outv = NULL;
    CHILD_CU(cuMemAllocHost(&srcv, n));
    CHILD_CU(cuMemAllocHost(&outv, n));
    unsigned char *src = srcv, *out = outv;
    ts_fill_random(src, n, 0x1B10C);
    memset(out, 0xEE, n);
    CHILD_CU(cuMemcpyHtoDAsync(x, src, n, s));
    CHILD_CU(cuMemcpyDtoHAsync(out, x, n, s));
    CHILD_EXPECT(memcmp(out, src, n) == 0, "cuMemcpyDtoHAsync to pinned memory had not landed when it returned");
    CHILD_CU(cuMemsetD32Async(ts_dptr(out) + 4, 0xA5C3E1F0u, 1000, s));
    uint32_t word = 0;
    memcpy(&word, out + 4 + 4 * 999, 4);
    CHILD_EXPECT(word == 0xA5C3E1F0u, "cuMemsetD32Async of pinned memory had not landed when it returned");
    /* A launch (the simulator completes it without running it). */
    if (ts_nvrtc_available(NULL)) {
        size_t size = 0;
        void *cubin = ts_compile_cubin(kSource, "streams.cu", ts_device_arch(), &size);
        CHILD_EXPECT(cubin != NULL, "NVRTC could not compile the kernel");
        if (cubin) {
            CUmodule m = NULL;
            CUfunction f = NULL;
            CHILD_CU(cuModuleLoadData(&m, cubin));
            CHILD_CU(cuModuleGetFunction(&f, m, "mark"));
            unsigned v = 5, cnt = (unsigned)(n / 4);
            void *params[] = {&x, &v, &cnt};
            for (unsigned i = 0; i < reps; ++i) CHILD_CU(cuMemcpyDtoDAsync(i & 1 ? a : b, i & 1 ? b : a, big, s));
            CHILD_CU(cuLaunchKernel(f, (cnt + 255) / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
            const CUresult r = cuStreamQuery(s);
            CHILD_EXPECT(r == CUDA_SUCCESS, "cuStreamQuery right after a launch behind busy work returned %s",
                         ts_cu_name(r));
            CHILD_CU(cuModuleUnload(m));
            free(cubin);
        }
    }
    CHILD_CU(cuCtxDestroy(ctx));
    return bad ? 1 : 0;
#undef CHILD_CU
#undef CHILD_EXPECT
}

static void test_launch_blocking_env(void **state) {
    (void)state;
    /* Without the variable (this process): the busy work is seen running. */
    const char *set = getenv("CUDA_LAUNCH_BLOCKING");
    if (set && set[0] == '1') ts_skip("CUDA_LAUNCH_BLOCKING=1 is set for the whole test run: no asynchronous control");
    ts_busy w = ts_busy_new();
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    ts_busy_until_not_ready(&w, s);
    assert_cu_ok(cuStreamSynchronize(s));
    ts_busy_until_not_ready(&w, NULL); /* the legacy stream too, with this many */
    assert_cu_ok(cuStreamSynchronize(NULL));
    const unsigned reps = w.reps;
    assert_cu_ok(cuStreamDestroy(s));
    ts_busy_free(&w);

    /* The same in a child started with CUDA_LAUNCH_BLOCKING=1. */
    size_t count = 0;
    while (environ[count]) ++count;
    char **env = ts_malloc((count + 2) * sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < count; ++i)
        if (strncmp(environ[i], "CUDA_LAUNCH_BLOCKING=", 21) != 0) env[k++] = environ[i];
    char assignment[] = "CUDA_LAUNCH_BLOCKING=1";
    env[k++] = assignment;
    env[k] = NULL;
    char reps_arg[32], self[] = "test_streams", child_arg[] = CHILD_ARG;
    snprintf(reps_arg, sizeof reps_arg, "%u", reps);
    char *argv[] = {self, child_arg, reps_arg, NULL};
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, env);
    if (rc != 0) fail_msg("posix_spawn(/proc/self/exe): %s", strerror(rc));
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    ts_free(env);
    if (!WIFEXITED(status)) fail_msg("the CUDA_LAUNCH_BLOCKING=1 child did not exit normally (status 0x%x)", status);
    if (WEXITSTATUS(status) != 0)
        fail_msg(
            "with CUDA_LAUNCH_BLOCKING=1, asynchronous work was still running when its call returned (the "
            "child's messages above)");
}

/* A blocking stream destroyed with a large copy still in flight: the legacy
 * stream still follows that copy (a small synchronous read right after the
 * destroy, small enough for nvlite's CPU path through BAR1, sees the copied
 * bytes, for every round). */
static void test_legacy_follows_destroyed_stream(void **state) {
    (void)state;
    const size_t n = 32 * TS_MiB + 13;
    unsigned char *src = ts_pinned_alloc(n);
    CUdeviceptr d = ts_dev_alloc(n);
    for (int round = 0; round < 3; ++round) {
        ts_fill_random(src, n, 0xD35700 + (uint64_t)round);
        assert_cu_ok(cuMemsetD8(d, 0, n));
        assert_cu_ok(cuCtxSynchronize());
        CUstream s = ts_stream_new(CU_STREAM_DEFAULT);
        assert_cu_ok(cuMemcpyHtoDAsync(d, src, n, s));
        assert_cu_ok(cuStreamDestroy(s));
        unsigned char tail[16];
        assert_cu_ok(cuMemcpyDtoH(tail, d + n - sizeof tail, sizeof tail));
        assert_bytes_named(src + n - sizeof tail, tail, sizeof tail, "the end of a copy in a destroyed stream");
    }
    assert_cu_ok(cuMemFree(d));
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], CHILD_ARG) == 0)
        return launch_blocking_child((unsigned)strtoul(argv[2], NULL, 10));
    const struct CMUnitTest tests[] = {
        TEST(test_priority_range),
        TEST(test_create_and_query),
        TEST(test_priority_clamping),
        TEST(test_special_stream_queries),
        TEST(test_stream_bad_input),
        TEST(test_in_order_created_stream),
        TEST(test_in_order_non_blocking_stream),
        TEST(test_in_order_special_streams),
        TEST(test_in_order_many_streams_interleaved),
        TEST(test_query_while_busy),
        TEST(test_wait_event_orders_streams),
        TEST(test_wait_event_ring),
        TEST(test_wait_event_uses_state_at_call),
        TEST(test_legacy_stream_orders_blocking_streams),
        TEST(test_non_blocking_stream),
        TEST(test_every_async_call_takes_special_handles),
        TEST(test_launch_on_every_stream_handle),
        TEST(test_ptsz_exports),
        TEST(test_destroy_stream_with_pending_work),
        TEST(test_legacy_follows_destroyed_stream),
        TEST(test_stream_of_other_context),
        TEST(test_sched_flags_wait),
        TEST(test_launch_blocking_env),
    };
    return cmocka_run_group_tests_name("streams", tests, ts_group_init, NULL);
}
