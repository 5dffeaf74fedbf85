/*
 * Host threads (issue 4, "Threads"): eight threads work in one context at
 * once. Each has its own stream (cuStreamCreate; blocking and non-blocking),
 * except threads 6 and 7, which share one, and threads 4 and 5, which use the
 * legacy (NULL) stream, 5 through the synchronous calls (cuMemcpyHtoD/DtoD/
 * DtoH, cuMemcpy, cuMemsetD8). Every round of every thread: random bytes
 * (a fixed seed per thread and round) at an odd size and odd offsets go
 * host -> device -> device (a buffer cuMemAlloc'ed for the round and freed
 * after it) -> host, with a cuMemsetD8 over a sub-range in between; the
 * round ends with cuStreamSynchronize, cuEventRecord + cuEventSynchronize,
 * or cuStreamQuery / cuEventQuery polling, and the bytes are checked. Every
 * third round hands the data to a second stream of the thread through an
 * event (cuStreamWaitEvent) and copies it back from there; the threads with
 * their own stream replace it halfway (cuStreamDestroy + cuStreamCreate).
 *
 * Also: the same threads launching a small kernel between the copies (the
 * simulator validates and completes launches but does not run kernel code:
 * the bytes a kernel writes are checked on a real GPU only, the others
 * everywhere), and threads that allocate, fill, check and free device
 * buffers and create, record, wait on and destroy events and streams all at
 * once (an allocation handed to two threads shows as another thread's tag).
 *
 * cmocka's assertions longjmp: the worker threads only record what went
 * wrong, and the test's own thread asserts after joining them. Runs on the
 * simulator (make test, and under ThreadSanitizer in make test-tsan) and on
 * the GPU (make test-hw).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_ctx_setup, ts_ctx_teardown)

#define NTHREADS 8
#define COPY_ROUNDS 36
#define KERNEL_ROUNDS 20
#define CHURN_ITERATIONS 120
#define CHURN_SLOTS 5

/* Largest round of the copy test (odd); the host buffers have room for it
 * plus the offsets and guard bytes on both sides. */
#define MAX_N ((size_t)(2 * TS_MiB + 4093))
#define MAX_KERNEL_N ((size_t)(256 * TS_KiB + 77))
#define GUARD 64
#define HOST_BYTES (MAX_N + 2 * GUARD + 64)

/* ------------------------------------------------------------------ plans */

typedef enum { ST_BLOCKING, ST_NON_BLOCKING, ST_LEGACY, ST_SHARED } stream_kind;

typedef enum {
    END_STREAM_SYNC,  /* cuStreamSynchronize */
    END_EVENT_SYNC,   /* cuEventRecord + cuEventSynchronize */
    END_STREAM_QUERY, /* cuStreamQuery until CUDA_SUCCESS */
    END_EVENT_QUERY,  /* cuEventRecord + cuEventQuery until CUDA_SUCCESS */
    END_SYNC_CALLS,   /* nothing: the synchronous cuMemcpyDtoH waited */
} round_end;

typedef struct {
    const char *what;
    stream_kind stream;
    int pinned; /* host buffers from cuMemAllocHost, else malloc */
    round_end end;
    int sync_api; /* cuMemcpyHtoD/DtoD/DtoH, cuMemcpy, cuMemsetD8 */
} thread_plan;

static const thread_plan kPlans[NTHREADS] = {
    {"own blocking stream, pinned, cuStreamSynchronize", ST_BLOCKING, 1, END_STREAM_SYNC, 0},
    {"own blocking stream, pageable, cuEventSynchronize", ST_BLOCKING, 0, END_EVENT_SYNC, 0},
    {"own non-blocking stream, pinned, cuStreamQuery", ST_NON_BLOCKING, 1, END_STREAM_QUERY, 0},
    {"own non-blocking stream, pageable, cuEventQuery", ST_NON_BLOCKING, 0, END_EVENT_QUERY, 0},
    {"legacy stream, Async calls, pinned", ST_LEGACY, 1, END_STREAM_SYNC, 0},
    {"legacy stream, synchronous calls, pageable", ST_LEGACY, 0, END_SYNC_CALLS, 1},
    {"shared stream, pinned, cuEventSynchronize", ST_SHARED, 1, END_EVENT_SYNC, 0},
    {"shared stream, pageable, cuStreamSynchronize", ST_SHARED, 0, END_STREAM_SYNC, 0},
};

/* ------------------------------------------------------------------ workers */

typedef struct {
    int index;
    const thread_plan *plan;
    CUcontext ctx;
    CUstream shared;   /* the stream of ST_SHARED threads */
    CUfunction kernel; /* the kernel test: k_mix; NULL in the copy test */
    int kernels_run;   /* kernel results are checked (a real GPU) */
    int rounds;
    unsigned char *src; /* HOST_BYTES each, pinned or pageable */
    unsigned char *out;
    unsigned char *expect; /* pageable */
    unsigned char *host;   /* the churn test's read-back buffer */
    /* Results, read by the test's thread after pthread_join. */
    int rounds_done;
    int failures;
    size_t bytes_checked;
    char first[512];
} worker;

static void w_fail(worker *w, int line, const char *fmt, ...) {
    if (w->failures++ > 0) return;
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(w->first, sizeof w->first, "thread %d (%s), line %d: ", w->index,
                     w->plan ? w->plan->what : "churn", line);
    if (k > 0 && (size_t)k < sizeof w->first) vsnprintf(w->first + k, sizeof w->first - (size_t)k, fmt, ap);
    va_end(ap);
}

/* A failed call ends the worker (its later work would fail for the same reason). */
#define W_CU(w, call)                                                                        \
    do {                                                                                     \
        CUresult r_ = (call);                                                                \
        if (r_ != CUDA_SUCCESS) {                                                            \
            w_fail((w), __LINE__, "round %d: %s returned %s", round, #call, ts_cu_name(r_)); \
            goto done;                                                                       \
        }                                                                                    \
    } while (0)

/* Polls a query call until CUDA_SUCCESS (CUDA_ERROR_NOT_READY in between). */
#define W_POLL(w, call)                                                                      \
    do {                                                                                     \
        CUresult r_;                                                                         \
        while ((r_ = (call)) == CUDA_ERROR_NOT_READY) sched_yield();                         \
        if (r_ != CUDA_SUCCESS) {                                                            \
            w_fail((w), __LINE__, "round %d: %s returned %s", round, #call, ts_cu_name(r_)); \
            goto done;                                                                       \
        }                                                                                    \
    } while (0)

/* Compares n bytes; records the first difference. 1 when equal. */
static int w_check(worker *w, int round, const char *what, const unsigned char *expect, const unsigned char *got,
                   size_t n) {
    w->bytes_checked += n;
    if (memcmp(expect, got, n) == 0) return 1;
    size_t first = 0, count = 0;
    for (size_t i = n; i-- > 0;)
        if (expect[i] != got[i]) first = i, ++count;
    w_fail(w, __LINE__, "round %d: %s: %zu of %zu bytes differ, the first at %zu (expected 0x%02x, got 0x%02x)", round,
           what, count, n, first, expect[first], got[first]);
    return 0;
}

/* An odd size: now and then tiny, mostly up to 64 KiB, sometimes up to max. */
static size_t odd_size(ts_rng *rng, size_t max) {
    size_t n;
    switch (ts_rng_below(rng, 8)) {
    case 0: n = 1 + ts_rng_below(rng, 64); break;
    case 6: n = 65536 + ts_rng_below(rng, max / 4); break;
    case 7: n = max / 4 + ts_rng_below(rng, max - max / 4); break;
    default: n = 65 + ts_rng_below(rng, 65536); break;
    }
    n |= 1;
    return n > max ? (max | 1) - 2 : n;
}

static size_t odd_below(ts_rng *rng, size_t bound) { return ts_rng_below(rng, bound / 2) * 2 + 1; }

/* What k_mix does to p[i], i counted from the start of the range it was given. */
static unsigned char mix_byte(unsigned char b, unsigned key, size_t i) {
    return (unsigned char)(b * 5u + key + (unsigned)i);
}

static const char kMixSource[] =
    "extern \"C\" __global__ void k_mix(unsigned char* p, unsigned n, unsigned key) {\n"
    "    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "        p[i] = (unsigned char)(p[i] * 5u + key + i);\n"
    "}\n";

static CUresult launch_mix(CUfunction f, CUdeviceptr p, unsigned n, unsigned key, CUstream s) {
    void *params[] = {&p, &n, &key};
    unsigned blocks = (n + 255) / 256;
    if (blocks > 48) blocks = 48;
    return cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, s, params, NULL);
}

static CUresult stream_for(const worker *w, CUstream *s) {
    switch (w->plan->stream) {
    case ST_BLOCKING: return cuStreamCreate(s, CU_STREAM_DEFAULT);
    case ST_NON_BLOCKING: return cuStreamCreate(s, CU_STREAM_NON_BLOCKING);
    case ST_SHARED: *s = w->shared; return CUDA_SUCCESS;
    case ST_LEGACY: break;
    }
    *s = NULL;
    return CUDA_SUCCESS;
}

static int owns_stream(const worker *w) { return w->plan->stream == ST_BLOCKING || w->plan->stream == ST_NON_BLOCKING; }

/*
 * One thread of the copy and kernel tests. A round:
 *   src[hs..hs+n)  --H2D-->  a[oa..oa+n)          (k_mix over a sub-range)
 *   a[oa..oa+n)    --D2D-->  t[ot..ot+n)          t: cuMemAlloc'ed for the round
 *   cuMemsetD8(t + ot + ms, v, ml)                (k_mix over another sub-range)
 *   t[ot..ot+n)    --D2H-->  out[ho..ho+n)        on the side stream every third round
 * then the bytes of out are checked, and the guard bytes around them.
 */
static void *copy_worker(void *arg) {
    worker *w = arg;
    const thread_plan *plan = w->plan;
    const int kernels = w->kernel != NULL;
    const size_t max_n = kernels ? MAX_KERNEL_N : MAX_N;
    int round = -1;
    ts_rng rng;
    ts_rng_init(&rng, 0x7A3D0000u + 0x101u * (unsigned)w->index + (kernels ? 0x8000u : 0));
    CUstream s = NULL, side = NULL;
    CUevent ev = NULL, hand = NULL;
    CUdeviceptr a = 0, t = 0;

    W_CU(w, cuCtxSetCurrent(w->ctx));
    W_CU(w, stream_for(w, &s));
    W_CU(w, cuStreamCreate(&side, CU_STREAM_NON_BLOCKING));
    W_CU(w, cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    W_CU(w, cuEventCreate(&hand, CU_EVENT_DISABLE_TIMING));
    W_CU(w, cuMemAlloc(&a, max_n + 64));

    for (round = 0; round < w->rounds; ++round) {
        const size_t n = odd_size(&rng, max_n);
        const size_t oa = odd_below(&rng, 64), ot = odd_below(&rng, 64);
        const size_t hs = odd_below(&rng, GUARD), ho = GUARD + odd_below(&rng, GUARD);
        const size_t ms = ts_rng_below(&rng, n), ml = 1 + ts_rng_below(&rng, n - ms);
        const unsigned char v = (unsigned char)ts_rng_next(&rng);
        const int handoff = round % 3 == 2;
        /* Kernel ranges (the kernel test): [k1, k1+kl1) of a, [k2, k2+kl2) of t. */
        const size_t k1 = ts_rng_below(&rng, n), kl1 = 1 + ts_rng_below(&rng, n - k1);
        const size_t k2 = ts_rng_below(&rng, n), kl2 = 1 + ts_rng_below(&rng, n - k2);
        const unsigned key1 = (unsigned)ts_rng_next(&rng), key2 = (unsigned)ts_rng_next(&rng);
        const uint64_t seed = ((uint64_t)w->index << 32) ^ (uint64_t)round ^ (kernels ? 0x5A5A0000ull : 0);

        /* Halfway, a thread with its own stream replaces it. */
        if (owns_stream(w) && round == w->rounds / 2) {
            W_CU(w, cuStreamDestroy(s));
            s = NULL;
            W_CU(w, stream_for(w, &s));
        }

        ts_fill_random(w->src + hs, n, seed);
        ts_fill_random(w->out, ho + n + GUARD, seed ^ 0xC0FFEEull); /* what must be overwritten, and the guards */
        memcpy(w->expect, w->out, ho + n + GUARD);
        W_CU(w, cuMemAlloc(&t, ot + n + ts_rng_below(&rng, 4096)));

        if (plan->sync_api) {
            if (round & 1)
                W_CU(w, cuMemcpy(a + oa, ts_dptr(w->src + hs), n));
            else
                W_CU(w, cuMemcpyHtoD(a + oa, w->src + hs, n));
            if (kernels) W_CU(w, launch_mix(w->kernel, a + oa + k1, (unsigned)kl1, key1, NULL));
            W_CU(w, cuMemcpyDtoD(t + ot, a + oa, n));
            W_CU(w, cuMemsetD8(t + ot + ms, v, ml));
            if (kernels) W_CU(w, launch_mix(w->kernel, t + ot + k2, (unsigned)kl2, key2, NULL));
            if (handoff) {
                W_CU(w, cuEventRecord(hand, NULL));
                W_CU(w, cuStreamWaitEvent(side, hand, 0));
                W_CU(w, cuMemcpyDtoHAsync(w->out + ho, t + ot, n, side));
                W_CU(w, cuStreamSynchronize(side));
            } else if (round & 2) {
                W_CU(w, cuMemcpy(ts_dptr(w->out + ho), t + ot, n));
            } else {
                W_CU(w, cuMemcpyDtoH(w->out + ho, t + ot, n));
            }
        } else {
            W_CU(w, cuMemcpyHtoDAsync(a + oa, w->src + hs, n, s));
            if (kernels) W_CU(w, launch_mix(w->kernel, a + oa + k1, (unsigned)kl1, key1, s));
            W_CU(w, cuMemcpyDtoDAsync(t + ot, a + oa, n, s));
            W_CU(w, cuMemsetD8Async(t + ot + ms, v, ml, s));
            if (kernels) W_CU(w, launch_mix(w->kernel, t + ot + k2, (unsigned)kl2, key2, s));
            CUstream last = s;
            if (handoff) {
                W_CU(w, cuEventRecord(hand, s));
                W_CU(w, cuStreamWaitEvent(side, hand, 0));
                last = side;
            }
            W_CU(w, cuMemcpyDtoHAsync(w->out + ho, t + ot, n, last));
            if (handoff) {
                W_CU(w, cuStreamSynchronize(side));
            } else {
                switch (plan->end) {
                case END_STREAM_SYNC: W_CU(w, cuStreamSynchronize(s)); break;
                case END_EVENT_SYNC:
                    W_CU(w, cuEventRecord(ev, s));
                    W_CU(w, cuEventSynchronize(ev));
                    break;
                case END_STREAM_QUERY: W_POLL(w, cuStreamQuery(s)); break;
                case END_EVENT_QUERY:
                    W_CU(w, cuEventRecord(ev, s));
                    W_POLL(w, cuEventQuery(ev));
                    break;
                case END_SYNC_CALLS: break;
                }
            }
        }
        /* What the round must have produced. */
        unsigned char *e = w->expect + ho;
        memcpy(e, w->src + hs, n);
        if (kernels)
            for (size_t i = 0; i < kl1; ++i) e[k1 + i] = mix_byte(e[k1 + i], key1, i);
        memset(e + ms, v, ml);
        if (kernels)
            for (size_t i = 0; i < kl2; ++i) e[k2 + i] = mix_byte(e[k2 + i], key2, i);
        if (kernels && !w->kernels_run) {
            /* Kernel code does not run here: the bytes a kernel wrote last
             * are not known (the memset overwrote part of the first
             * kernel's), the others must be right all the same. */
            for (size_t i = k1; i < k1 + kl1; ++i)
                if (i < ms || i >= ms + ml) e[i] = w->out[ho + i];
            memcpy(e + k2, w->out + ho + k2, kl2);
        }
        if (!w_check(w, round, "the data", e, w->out + ho, n)) goto done;
        if (!w_check(w, round, "the guard bytes before the data", w->expect, w->out, ho)) goto done;
        if (!w_check(w, round, "the guard bytes after the data", e + n, w->out + ho + n, GUARD)) goto done;
        /* Only now: cuMemFree may wait for the work that uses the buffer. */
        W_CU(w, cuMemFree(t));
        t = 0;
        w->rounds_done = round + 1;
    }

done:
    /* Best effort: the context's teardown frees what a failed round left. */
    if (t) (void)cuMemFree(t);
    if (a) (void)cuMemFree(a);
    if (side) (void)cuStreamSynchronize(side);
    if (s) (void)cuStreamSynchronize(s);
    if (owns_stream(w) && s) (void)cuStreamDestroy(s);
    if (side) (void)cuStreamDestroy(side);
    if (ev) (void)cuEventDestroy(ev);
    if (hand) (void)cuEventDestroy(hand);
    (void)cuCtxSetCurrent(NULL);
    return NULL;
}

/* ------------------------------------------------------------------ the test's side */

typedef struct {
    worker w[NTHREADS];
    CUstream shared;
} crew;

static void crew_init(crew *c, ts_fixture *fx, CUfunction kernel, int kernels_run, int rounds) {
    memset(c, 0, sizeof *c);
    assert_cu_ok(cuStreamCreate(&c->shared, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < NTHREADS; ++i) {
        worker *w = &c->w[i];
        w->index = i;
        w->plan = &kPlans[i];
        w->ctx = fx->ctx;
        w->shared = c->shared;
        w->kernel = kernel;
        w->kernels_run = kernels_run;
        w->rounds = rounds;
        if (w->plan->pinned) {
            void *p = NULL, *q = NULL;
            assert_cu_ok(cuMemAllocHost(&p, HOST_BYTES));
            assert_cu_ok(cuMemAllocHost(&q, HOST_BYTES));
            w->src = p;
            w->out = q;
        } else {
            w->src = ts_malloc(HOST_BYTES);
            w->out = ts_malloc(HOST_BYTES);
        }
        w->expect = ts_malloc(HOST_BYTES);
    }
}

static void crew_run(crew *c, void *(*fn)(void *)) {
    pthread_t tid[NTHREADS];
    /* The test's thread has the context current too: it must not matter. */
    for (int i = 0; i < NTHREADS; ++i) assert_int_equal(pthread_create(&tid[i], NULL, fn, &c->w[i]), 0);
    for (int i = 0; i < NTHREADS; ++i) assert_int_equal(pthread_join(tid[i], NULL), 0);
}

static void crew_check_and_free(crew *c) {
    int failed = 0;
    for (int i = 0; i < NTHREADS; ++i) {
        worker *w = &c->w[i];
        if (w->failures) {
            print_error("%s (%d failure(s) in this thread)\n", w->first, w->failures);
            failed = 1;
        } else if (w->rounds_done != w->rounds || w->bytes_checked == 0) {
            print_error("thread %d: %d of %d rounds done, %zu bytes checked\n", i, w->rounds_done, w->rounds,
                        w->bytes_checked);
            failed = 1;
        }
    }
    for (int i = 0; i < NTHREADS; ++i) {
        worker *w = &c->w[i];
        if (w->plan->pinned) {
            assert_cu_ok(cuMemFreeHost(w->src));
            assert_cu_ok(cuMemFreeHost(w->out));
        }
    }
    assert_cu_ok(cuStreamSynchronize(c->shared));
    assert_cu_ok(cuStreamDestroy(c->shared));
    assert_cu_ok(cuCtxSynchronize());
    if (failed) fail_msg("some threads failed (above)");
}

static void test_threads_copy(void **state) {
    static crew c;
    crew_init(&c, ts_fx(state), NULL, 0, COPY_ROUNDS);
    crew_run(&c, copy_worker);
    crew_check_and_free(&c);
}

static void test_threads_launch_kernels(void **state) {
    CUmodule m = ts_source_module(kMixSource, "mix.cu");
    CUfunction f = ts_get_function(m, "k_mix");
    static crew c;
    crew_init(&c, ts_fx(state), f, ts_have_real_gpu(NULL), KERNEL_ROUNDS);
    crew_run(&c, copy_worker);
    crew_check_and_free(&c);
    assert_cu_ok(cuModuleUnload(m));
}

/* ------------------------------------------------------------------ churn */

/*
 * Each thread keeps CHURN_SLOTS device buffers alive. An empty slot gets a
 * buffer of a random odd size (now and then 64 MiB and more: past the 64 MiB
 * chunks), filled on the thread's fill stream, behind a 1 MiB device copy,
 * with a 32-bit tag that names the thread, the slot and the buffer
 * (cuMemsetD32Async, the last 1-3 bytes with cuMemsetD8Async), and a new
 * event recorded after the fill. A full slot is read back on the thread's
 * other stream after cuEventSynchronize or cuStreamWaitEvent on its event
 * (all of it up to 256 KiB, else its first and last 64 KiB), the tag is
 * checked, the event destroyed and the buffer freed. Every 16 iterations the
 * thread destroys its fill stream with the work still queued and makes a new
 * one: only the events say when the fills are done.
 */
#define CHURN_WHOLE ((size_t)256 * TS_KiB)
#define CHURN_EDGE ((size_t)64 * TS_KiB)
#define CHURN_BUSY ((size_t)TS_MiB)

typedef struct {
    CUdeviceptr p;
    size_t n;
    uint32_t tag;
    CUevent filled;
} churn_slot;

static unsigned char tag_byte(uint32_t tag, size_t i, size_t n) {
    const size_t words = n / 4;
    if (i < words * 4) return (unsigned char)(tag >> (8 * (i % 4)));
    return (unsigned char)(tag >> 24) ^ 0x5A;
}

/* Reads [off, off+len) of the slot's buffer on 'reader' and checks it. */
static int churn_check(worker *w, int round, const churn_slot *sl, CUstream reader, size_t off, size_t len) {
    CUresult r = cuMemcpyDtoHAsync(w->host, sl->p + off, len, reader);
    if (r == CUDA_SUCCESS) r = cuStreamSynchronize(reader);
    if (r != CUDA_SUCCESS) {
        w_fail(w, __LINE__, "iteration %d: reading back %zu bytes: %s", round, len, ts_cu_name(r));
        return 0;
    }
    for (size_t i = 0; i < len; ++i)
        if (w->host[i] != tag_byte(sl->tag, off + i, sl->n)) {
            w_fail(w, __LINE__, "iteration %d: buffer of %zu bytes tagged 0x%08x: byte %zu is 0x%02x, expected 0x%02x",
                   round, sl->n, (unsigned)sl->tag, off + i, w->host[i], tag_byte(sl->tag, off + i, sl->n));
            return 0;
        }
    w->bytes_checked += len;
    return 1;
}

static void *churn_worker(void *arg) {
    worker *w = arg;
    int round = -1;
    ts_rng rng;
    ts_rng_init(&rng, 0xC4A2000u + (unsigned)w->index);
    churn_slot slots[CHURN_SLOTS];
    memset(slots, 0, sizeof slots);
    const unsigned fill_flags = w->index & 1 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
    CUstream fill = NULL, reader = NULL;
    CUdeviceptr busy = 0;
    W_CU(w, cuCtxSetCurrent(w->ctx));
    W_CU(w, cuStreamCreate(&fill, fill_flags));
    W_CU(w, cuStreamCreate(&reader, CU_STREAM_NON_BLOCKING));
    W_CU(w, cuMemAlloc(&busy, 2 * CHURN_BUSY));

    for (round = 0; round < w->rounds + CHURN_SLOTS; ++round) {
        /* The last CHURN_SLOTS iterations empty the slots. */
        const int draining = round >= w->rounds;
        churn_slot *sl = &slots[draining ? round - w->rounds : (int)ts_rng_below(&rng, CHURN_SLOTS)];
        if (round % 16 == 15 && !draining) {
            W_CU(w, cuStreamDestroy(fill));
            fill = NULL;
            W_CU(w, cuStreamCreate(&fill, fill_flags));
        }
        if (sl->p) {
            if (round & 2)
                W_CU(w, cuStreamWaitEvent(reader, sl->filled, 0));
            else
                W_CU(w, cuEventSynchronize(sl->filled));
            if (sl->n <= CHURN_WHOLE) {
                if (!churn_check(w, round, sl, reader, 0, sl->n)) goto done;
            } else {
                if (!churn_check(w, round, sl, reader, 0, CHURN_EDGE)) goto done;
                if (!churn_check(w, round, sl, reader, sl->n - CHURN_EDGE, CHURN_EDGE)) goto done;
            }
            W_CU(w, cuEventDestroy(sl->filled));
            sl->filled = NULL;
            W_CU(w, cuMemFree(sl->p));
            sl->p = 0;
        } else if (!draining) {
            size_t n = ts_rng_below(&rng, 16) == 0
                           ? 64 * TS_MiB + ts_rng_below(&rng, 8 * TS_MiB)
                           : 1 + ts_rng_below(&rng, ts_rng_below(&rng, 4) ? 8192 : 512 * TS_KiB);
            n |= 1;
            sl->n = n;
            sl->tag = ((uint32_t)(w->index + 1) << 24) | ((uint32_t)(sl - slots) << 16) | (uint32_t)(round & 0xFFFF);
            W_CU(w, cuMemAlloc(&sl->p, n));
            W_CU(w, cuMemcpyDtoDAsync(busy + CHURN_BUSY, busy, CHURN_BUSY, fill));
            if (n / 4) W_CU(w, cuMemsetD32Async(sl->p, sl->tag, n / 4, fill));
            W_CU(w, cuMemsetD8Async(sl->p + n / 4 * 4, tag_byte(sl->tag, n - 1, n), n % 4, fill));
            W_CU(w, cuEventCreate(&sl->filled, round & 1 ? CU_EVENT_DISABLE_TIMING : CU_EVENT_DEFAULT));
            W_CU(w, cuEventRecord(sl->filled, fill));
        }
        w->rounds_done = round + 1 > w->rounds ? w->rounds : round + 1;
    }

done:
    for (int i = 0; i < CHURN_SLOTS; ++i) {
        if (slots[i].filled) (void)cuEventSynchronize(slots[i].filled), (void)cuEventDestroy(slots[i].filled);
        if (slots[i].p) (void)cuMemFree(slots[i].p);
    }
    if (fill) (void)cuStreamSynchronize(fill), (void)cuStreamDestroy(fill);
    if (reader) (void)cuStreamSynchronize(reader), (void)cuStreamDestroy(reader);
    if (busy) (void)cuMemFree(busy);
    (void)cuCtxSetCurrent(NULL);
    return NULL;
}

static void test_threads_alloc_event_stream_churn(void **state) {
    static worker w[NTHREADS];
    pthread_t tid[NTHREADS];
    size_t free0 = 0, free1 = 0, total = 0;
    /* What the context keeps once used: the channels of its streams, an
     * empty 2 MiB chunk, the built-in copy and fill kernels (a memset from 256 KiB
     * on loads them) and the local memory they need. */
    CUstream warm[NTHREADS + 1];
    CUdeviceptr p = 0;
    assert_cu_ok(cuMemAlloc(&p, 1 << 20));
    for (int i = 0; i <= NTHREADS; ++i) {
        assert_cu_ok(cuStreamCreate(&warm[i], i & 1 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT));
        assert_cu_ok(cuMemsetD8Async(p, (unsigned char)i, i == 0 ? 1 << 20 : 4097, warm[i]));
    }
    for (int i = 0; i <= NTHREADS; ++i) assert_cu_ok(cuStreamSynchronize(warm[i]));
    for (int i = 0; i <= NTHREADS; ++i) assert_cu_ok(cuStreamDestroy(warm[i]));
    assert_cu_ok(cuMemFree(p));
    assert_cu_ok(cuMemGetInfo(&free0, &total));
    memset(w, 0, sizeof w);
    for (int i = 0; i < NTHREADS; ++i) {
        w[i].index = i;
        w[i].ctx = ts_fx(state)->ctx;
        w[i].rounds = CHURN_ITERATIONS;
        w[i].host = ts_malloc(CHURN_WHOLE);
    }
    for (int i = 0; i < NTHREADS; ++i) assert_int_equal(pthread_create(&tid[i], NULL, churn_worker, &w[i]), 0);
    for (int i = 0; i < NTHREADS; ++i) assert_int_equal(pthread_join(tid[i], NULL), 0);
    int failed = 0;
    for (int i = 0; i < NTHREADS; ++i) {
        if (w[i].failures) {
            print_error("%s (%d failure(s) in this thread)\n", w[i].first, w[i].failures);
            failed = 1;
        } else if (w[i].rounds_done != w[i].rounds || w[i].bytes_checked == 0) {
            print_error("thread %d: %d of %d iterations done, %zu bytes checked\n", i, w[i].rounds_done, w[i].rounds,
                        w[i].bytes_checked);
            failed = 1;
        }
    }
    if (failed) fail_msg("some threads failed (above)");
    /* Everything was freed: the memory is back, but for the page tables RM
     * made for new address ranges on a GPU (it keeps them; 64 KiB seen on the
     * H200), which count as used in cuMemGetInfo there as under libcuda. */
    assert_cu_ok(cuMemGetInfo(&free1, &total));
    const size_t page_table_slack = ts_on_simulator() ? 0 : (size_t)2 << 20;
    if (free1 + page_table_slack < free0) fail_msg("%zu bytes fewer free after the churn", free0 - free1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_threads_copy),
        TEST(test_threads_launch_kernels),
        TEST(test_threads_alloc_event_stream_churn),
    };
    return cmocka_run_group_tests(tests, ts_group_init, NULL);
}
