/*
 * Hardware-only: the ingredients of api/test_races' event test, one at a
 * time, so that a hang on the GPU names the one that hangs (make test-hw;
 * they skip without a real GPU). From the simplest:
 *
 *   (a) cross-lane waits between copy channels (one copy TSG): six
 *       non-blocking streams, each fills its own bytes, records its event,
 *       and the next stream waits for it, from one thread;
 *   (b) one timed event recorded in turn on the six streams (each record
 *       waits for the previous one's write of the event's slot) and waited for;
 *   (c) (a) and (b) from six threads, each with its own stream, sharing one
 *       event (no destroy);
 *   (d) streams (new lanes: channels joining running TSGs) created while
 *       other threads' streams wait for each other, in fresh contexts;
 *   (e) the event test itself: the shared event replaced and destroyed
 *       while six threads use it;
 *   (f) what (a)-(e) never do and the event test does: six threads that
 *       each wait (cuEventSynchronize) for their own stream's newest work
 *       while the others submit. A doorbell Host missed (it read GP_PUT
 *       before the store had landed) hangs exactly such a wait: nothing
 *       rings that channel again.
 *
 * Each test runs under a watchdog that names it; NVLITE_HANG_REPORT (10 s
 * unless set) makes nvlite report, before that, what a stuck wait's channel
 * acquires. Every byte written is checked at the end.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, ts_ctx_teardown)
#define NSTREAMS 6
#define WATCHDOG_SECONDS 90
#define SLICE 64 /* bytes each stream fills */

/* The GPU; or the simulator when NVLITE_DEVICE=sim says so (to try the
 * tests themselves without one). */
static int on_sim(void) {
    const char *d = getenv("NVLITE_DEVICE");
    return d && strcmp(d, "sim") == 0;
}

static int setup(void **state) { return on_sim() ? ts_ctx_setup(state) : ts_hw_ctx_setup(state); }

static void require_device(void) {
    const char *why = NULL;
    if (!on_sim() && !ts_have_real_gpu(&why)) ts_skip("no real GPU: %s", why);
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The last fill value of each stream's slice is there. */
static void check_slices(CUdeviceptr buf, const unsigned char *last) {
    unsigned char host[NSTREAMS * SLICE];
    assert_cu_ok(cuMemcpyDtoH(host, buf, sizeof host));
    for (int s = 0; s < NSTREAMS; ++s)
        for (int i = 0; i < SLICE; ++i)
            if (host[s * SLICE + i] != last[s]) fail_msg("stream %d byte %d: %u, expected %u", s, i, host[s * SLICE + i], last[s]);
}

static void make_streams(CUstream *s) {
    for (int i = 0; i < NSTREAMS; ++i) assert_cu_ok(cuStreamCreate(&s[i], CU_STREAM_NON_BLOCKING));
}

static void destroy_streams(CUstream *s) {
    for (int i = 0; i < NSTREAMS; ++i) {
        assert_cu_ok(cuStreamSynchronize(s[i]));
        assert_cu_ok(cuStreamDestroy(s[i]));
    }
}

/* (a) */
static void test_hw_cross_lane_copy_waits(void **state) {
    require_device();
    (void)state;
    ts_watchdog_arm("test_hw_cross_lane_copy_waits", WATCHDOG_SECONDS);
    CUstream s[NSTREAMS];
    CUevent e[NSTREAMS];
    make_streams(s);
    for (int i = 0; i < NSTREAMS; ++i) assert_cu_ok(cuEventCreate(&e[i], CU_EVENT_DISABLE_TIMING));
    CUdeviceptr buf = ts_dev_alloc(NSTREAMS * SLICE);
    unsigned char last[NSTREAMS] = {0};
    const double t0 = seconds();
    const int rounds = 20000;
    for (int k = 0; k < rounds; ++k) {
        const int i = k % NSTREAMS;
        last[i] = (unsigned char)(k * 7 + 1);
        assert_cu_ok(cuMemsetD8Async(buf + (CUdeviceptr)i * SLICE, last[i], SLICE, s[i]));
        assert_cu_ok(cuEventRecord(e[i], s[i]));
        assert_cu_ok(cuStreamWaitEvent(s[(i + 1) % NSTREAMS], e[i], 0));
    }
    destroy_streams(s);
    print_message("[          ] %d cross-lane waits in %.3f s\n", rounds, seconds() - t0);
    check_slices(buf, last);
    for (int i = 0; i < NSTREAMS; ++i) assert_cu_ok(cuEventDestroy(e[i]));
    ts_watchdog_disarm();
}

/* (b) */
static void test_hw_one_event_across_streams(void **state) {
    require_device();
    (void)state;
    ts_watchdog_arm("test_hw_one_event_across_streams", WATCHDOG_SECONDS);
    CUstream s[NSTREAMS];
    make_streams(s);
    CUevent e;
    assert_cu_ok(cuEventCreate(&e, 0));
    CUdeviceptr buf = ts_dev_alloc(NSTREAMS * SLICE);
    unsigned char last[NSTREAMS] = {0};
    const double t0 = seconds();
    const int rounds = 20000;
    for (int k = 0; k < rounds; ++k) {
        const int i = (k * 5) % NSTREAMS;
        last[i] = (unsigned char)(k * 3 + 2);
        assert_cu_ok(cuMemsetD8Async(buf + (CUdeviceptr)i * SLICE, last[i], SLICE, s[i]));
        assert_cu_ok(cuEventRecord(e, s[i]));
        if (k % 3 == 0) assert_cu_ok(cuStreamWaitEvent(s[(i + 2) % NSTREAMS], e, 0));
        if (k % 997 == 0) assert_cu_ok(cuEventSynchronize(e));
    }
    assert_cu_ok(cuEventSynchronize(e));
    destroy_streams(s);
    print_message("[          ] %d records of one event on %d streams in %.3f s\n", rounds, NSTREAMS, seconds() - t0);
    check_slices(buf, last);
    assert_cu_ok(cuEventDestroy(e));
    ts_watchdog_disarm();
}

/* ------------------------------------------------------------- threads */

typedef struct {
    CUcontext ctx;
    CUstream stream; /* created by the thread when 0 */
    CUdeviceptr buf;
    int index;
    int rounds; /* 0: until stop */
    unsigned char last;
} worker;

static _Atomic(CUevent) shared;
static atomic_int stop;
static atomic_int bad;

static void note(CUresult r, CUresult also) {
    if (r != CUDA_SUCCESS && r != also) atomic_fetch_add(&bad, 1);
}

static void *share_worker(void *p) {
    worker *w = p;
    note(cuCtxSetCurrent(w->ctx), CUDA_SUCCESS);
    if (!w->stream) note(cuStreamCreate(&w->stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    for (int k = 0; w->rounds ? k < w->rounds : !atomic_load(&stop); ++k) {
        CUevent e = atomic_load(&shared);
        switch ((k + w->index) % 4) {
        case 0: note(cuEventRecord(e, w->stream), CUDA_SUCCESS); break;
        case 1: note(cuStreamWaitEvent(w->stream, e, 0), CUDA_SUCCESS); break;
        case 2:
            w->last = (unsigned char)(k + w->index * 41 + 1);
            note(cuMemsetD8Async(w->buf + (CUdeviceptr)w->index * SLICE, w->last, SLICE, w->stream), CUDA_SUCCESS);
            break;
        case 3: note(cuEventQuery(e), CUDA_ERROR_NOT_READY); break;
        }
    }
    note(cuStreamSynchronize(w->stream), CUDA_SUCCESS);
    return NULL;
}

/* (c) */
static void test_hw_threads_share_an_event(void **state) {
    require_device();
    ts_watchdog_arm("test_hw_threads_share_an_event", WATCHDOG_SECONDS);
    CUcontext ctx = ts_fx(state)->ctx;
    CUevent e;
    assert_cu_ok(cuEventCreate(&e, 0));
    atomic_store(&shared, e);
    atomic_store(&bad, 0);
    CUdeviceptr buf = ts_dev_alloc(NSTREAMS * SLICE);
    worker w[NSTREAMS];
    pthread_t t[NSTREAMS];
    const double t0 = seconds();
    for (int i = 0; i < NSTREAMS; ++i) {
        w[i] = (worker){ctx, 0, buf, i, 20000, 0};
        assert_int_equal(pthread_create(&t[i], NULL, share_worker, &w[i]), 0);
    }
    for (int i = 0; i < NSTREAMS; ++i) pthread_join(t[i], NULL);
    print_message("[          ] %d threads x 20000 calls on one event in %.3f s\n", NSTREAMS, seconds() - t0);
    assert_int_equal(atomic_load(&bad), 0);
    unsigned char last[NSTREAMS];
    for (int i = 0; i < NSTREAMS; ++i) {
        last[i] = w[i].last;
        assert_cu_ok(cuStreamDestroy(w[i].stream));
    }
    check_slices(buf, last);
    assert_cu_ok(cuEventDestroy(e));
    ts_watchdog_disarm();
}

/* (d) */
static void test_hw_lanes_join_running_groups(void **state) {
    require_device();
    (void)state;
    ts_watchdog_arm("test_hw_lanes_join_running_groups", WATCHDOG_SECONDS);
    CUcontext outer = NULL;
    assert_cu_ok(cuCtxGetCurrent(&outer));
    const double t0 = seconds();
    for (int round = 0; round < 4; ++round) {
        CUcontext c = NULL;
        assert_cu_ok(cuCtxCreate(&c, NULL, 0, 0));
        CUevent e;
        assert_cu_ok(cuEventCreate(&e, 0));
        atomic_store(&shared, e);
        atomic_store(&stop, 0);
        atomic_store(&bad, 0);
        CUdeviceptr buf = 0;
        assert_cu_ok(cuMemAlloc(&buf, NSTREAMS * SLICE));
        worker w[2];
        pthread_t t[2];
        for (int i = 0; i < 2; ++i) {
            w[i] = (worker){c, 0, buf, i, 0, 0};
            assert_cu_ok(cuStreamCreate(&w[i].stream, CU_STREAM_NON_BLOCKING)); /* lanes 1, 2 */
            assert_int_equal(pthread_create(&t[i], NULL, share_worker, &w[i]), 0);
        }
        /* Lanes 3..6 join the context's TSGs while lanes 1 and 2 wait for each other. */
        CUstream more[4];
        for (int i = 0; i < 4; ++i) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            assert_cu_ok(cuStreamCreate(&more[i], CU_STREAM_NON_BLOCKING));
            assert_cu_ok(cuMemsetD8Async(buf + (CUdeviceptr)(2 + i) * SLICE, (unsigned char)(round + i + 1), SLICE, more[i]));
            assert_cu_ok(cuStreamWaitEvent(more[i], atomic_load(&shared), 0));
        }
        atomic_store(&stop, 1);
        for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
        assert_int_equal(atomic_load(&bad), 0);
        for (int i = 0; i < 4; ++i) assert_cu_ok(cuStreamSynchronize(more[i]));
        unsigned char last[NSTREAMS] = {w[0].last, w[1].last};
        for (int i = 0; i < 4; ++i) last[2 + i] = (unsigned char)(round + i + 1);
        check_slices(buf, last);
        assert_cu_ok(cuCtxDestroy(c));
    }
    assert_cu_ok(cuCtxSetCurrent(outer));
    print_message("[          ] 4 contexts, 4 lanes each joining under load, in %.3f s\n", seconds() - t0);
    ts_watchdog_disarm();
}

/* (e) */
static void test_hw_event_replaced_while_used(void **state) {
    require_device();
    ts_watchdog_arm("test_hw_event_replaced_while_used", WATCHDOG_SECONDS);
    CUcontext ctx = ts_fx(state)->ctx;
    CUevent e;
    assert_cu_ok(cuEventCreate(&e, 0));
    atomic_store(&shared, e);
    atomic_store(&stop, 0);
    atomic_store(&bad, 0);
    CUdeviceptr buf = ts_dev_alloc(NSTREAMS * SLICE);
    worker w[NSTREAMS];
    pthread_t t[NSTREAMS];
    for (int i = 0; i < NSTREAMS; ++i) {
        w[i] = (worker){ctx, 0, buf, i, 0, 0};
        assert_int_equal(pthread_create(&t[i], NULL, share_worker, &w[i]), 0);
    }
    const double t0 = seconds();
    ts_rng rng;
    ts_rng_init(&rng, 707);
    for (int i = 0; i < 400; ++i) {
        struct timespec ts = {0, (long)(ts_rng_below(&rng, 300) * 1000)};
        nanosleep(&ts, NULL);
        CUevent fresh;
        assert_cu_ok(cuEventCreate(&fresh, i % 4 == 0 ? CU_EVENT_DISABLE_TIMING : 0));
        CUevent old = atomic_exchange(&shared, fresh);
        assert_cu_ok(cuEventDestroy(old));
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < NSTREAMS; ++i) pthread_join(t[i], NULL);
    print_message("[          ] 400 events replaced under %d threads in %.3f s\n", NSTREAMS, seconds() - t0);
    unsigned char last[NSTREAMS];
    for (int i = 0; i < NSTREAMS; ++i) {
        last[i] = w[i].last;
        assert_cu_ok(cuStreamDestroy(w[i].stream));
    }
    check_slices(buf, last);
    assert_cu_ok(cuEventDestroy(atomic_load(&shared)));
    ts_watchdog_disarm();
}

/* (f) */
typedef struct {
    CUcontext ctx;
    CUdeviceptr buf;
    int index;
    int rounds;
    unsigned char last;
    double worst; /* longest cuEventSynchronize, seconds */
} syncer;

static void *sync_worker(void *p) {
    syncer *w = p;
    note(cuCtxSetCurrent(w->ctx), CUDA_SUCCESS);
    CUstream s = NULL;
    CUevent e[2] = {NULL, NULL};
    note(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    note(cuEventCreate(&e[0], 0), CUDA_SUCCESS);
    note(cuEventCreate(&e[1], CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    for (int k = 0; k < w->rounds; ++k) {
        w->last = (unsigned char)(k * 13 + w->index * 29 + 1);
        note(cuMemsetD8Async(w->buf + (CUdeviceptr)w->index * SLICE, w->last, SLICE, s), CUDA_SUCCESS);
        note(cuEventRecord(e[k & 1], s), CUDA_SUCCESS);
        const double t = seconds();
        note(cuEventSynchronize(e[k & 1]), CUDA_SUCCESS);
        const double took = seconds() - t;
        if (took > w->worst) w->worst = took;
    }
    note(cuStreamSynchronize(s), CUDA_SUCCESS);
    note(cuStreamDestroy(s), CUDA_SUCCESS);
    note(cuEventDestroy(e[0]), CUDA_SUCCESS);
    note(cuEventDestroy(e[1]), CUDA_SUCCESS);
    return NULL;
}

static void test_hw_own_work_synced_under_load(void **state) {
    require_device();
    ts_watchdog_arm("test_hw_own_work_synced_under_load", WATCHDOG_SECONDS);
    CUcontext ctx = ts_fx(state)->ctx;
    atomic_store(&bad, 0);
    CUdeviceptr buf = ts_dev_alloc(NSTREAMS * SLICE);
    syncer w[NSTREAMS];
    pthread_t t[NSTREAMS];
    const double t0 = seconds();
    for (int i = 0; i < NSTREAMS; ++i) {
        w[i] = (syncer){ctx, buf, i, on_sim() ? 300 : 5000, 0, 0.0};
        assert_int_equal(pthread_create(&t[i], NULL, sync_worker, &w[i]), 0);
    }
    double worst = 0;
    for (int i = 0; i < NSTREAMS; ++i) {
        pthread_join(t[i], NULL);
        if (w[i].worst > worst) worst = w[i].worst;
    }
    print_message("[          ] %d threads x %d record + synchronize of their own work in %.3f s, longest wait %.3f ms\n",
                  NSTREAMS, w[0].rounds, seconds() - t0, worst * 1e3);
    assert_int_equal(atomic_load(&bad), 0);
    unsigned char last[NSTREAMS];
    for (int i = 0; i < NSTREAMS; ++i) last[i] = w[i].last;
    check_slices(buf, last);
    ts_watchdog_disarm();
}

int main(void) {
    setenv("NVLITE_HANG_REPORT", "10", 0); /* read at the first long wait */
    const struct CMUnitTest tests[] = {
        TEST(test_hw_cross_lane_copy_waits),  TEST(test_hw_one_event_across_streams),
        TEST(test_hw_threads_share_an_event), TEST(test_hw_lanes_join_running_groups),
        TEST(test_hw_event_replaced_while_used), TEST(test_hw_own_work_synced_under_load),
    };
    return cmocka_run_group_tests_name("hw_stream_waits", tests, NULL, NULL);
}
