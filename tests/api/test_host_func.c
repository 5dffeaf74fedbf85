/*
 * Host functions in streams: cuLaunchHostFunc and cuStreamAddCallback.
 *
 * A host function runs after the work before it in its stream and before
 * the work after it, on a thread of the library (not the caller's), in the
 * order of enqueueing within a stream; the driver may not be called from
 * inside one (CUDA_ERROR_NOT_PERMITTED); a stream callback gets the
 * stream's error, a host function is not called after one. Order is seen
 * through the data: a host function reads what a copy before it wrote and
 * writes what a copy after it reads, with busy work in front so that the
 * GPU is still working when the functions are enqueued.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvlite/nvlite.h"
#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_ctx_setup, ts_ctx_teardown)

/* ------------------------------------------------------------ order log */

#define LOG_MAX 4096
typedef struct {
    pthread_mutex_t mutex;
    int entries[LOG_MAX];
    int n;
    int off_main_thread; /* every call ran on another thread than the test's */
    pthread_t main;
} order_log;

static order_log olog;

static void log_reset(void) {
    pthread_mutex_lock(&olog.mutex);
    olog.n = 0;
    olog.off_main_thread = 1;
    olog.main = pthread_self();
    pthread_mutex_unlock(&olog.mutex);
}

static void log_add(int v) {
    pthread_mutex_lock(&olog.mutex);
    if (olog.n < LOG_MAX) olog.entries[olog.n++] = v;
    if (pthread_equal(pthread_self(), olog.main)) olog.off_main_thread = 0;
    pthread_mutex_unlock(&olog.mutex);
}

static int log_count(void) {
    pthread_mutex_lock(&olog.mutex);
    int n = olog.n;
    pthread_mutex_unlock(&olog.mutex);
    return n;
}

/* The i-th entry (read under the lock: the library's thread wrote it). */
static int log_entry(int i) {
    pthread_mutex_lock(&olog.mutex);
    int v = i < olog.n ? olog.entries[i] : -1;
    pthread_mutex_unlock(&olog.mutex);
    return v;
}

static int log_off_main_thread(void) {
    pthread_mutex_lock(&olog.mutex);
    int v = olog.off_main_thread;
    pthread_mutex_unlock(&olog.mutex);
    return v;
}

static void CUDA_CB note(void *data) { log_add((int)(intptr_t)data); }

/* What each callback was given, by tag. */
static CUresult cb_status[LOG_MAX];
static CUstream cb_stream[LOG_MAX];
static void CUDA_CB note_callback(CUstream s, CUresult status, void *data) {
    int i = (int)(intptr_t)data;
    pthread_mutex_lock(&olog.mutex);
    if (i >= 0 && i < LOG_MAX) {
        cb_status[i] = status;
        cb_stream[i] = s;
    }
    pthread_mutex_unlock(&olog.mutex);
    log_add(i);
}

static CUresult callback_status(int i) {
    pthread_mutex_lock(&olog.mutex);
    CUresult r = cb_status[i];
    pthread_mutex_unlock(&olog.mutex);
    return r;
}

static CUstream callback_stream(int i) {
    pthread_mutex_lock(&olog.mutex);
    CUstream s = cb_stream[i];
    pthread_mutex_unlock(&olog.mutex);
    return s;
}

/* ------------------------------------------------------------ order through data */

/* What a host function between two copies checks and changes. */
typedef struct {
    unsigned char *before;   /* pinned: the copy before the function wrote it */
    unsigned char *expected; /* what it must hold then */
    unsigned char *after;    /* pinned: the copy after the function reads it */
    size_t n;
    uint64_t seed;
    _Atomic int saw_before; /* 1: right bytes, 0: wrong, -1: not run */
} handoff;

static void CUDA_CB handoff_fn(void *data) {
    handoff *h = data;
    atomic_store(&h->saw_before, memcmp(h->before, h->expected, h->n) == 0);
    ts_fill_random(h->after, h->n, h->seed);
}

static void test_order_through_data(void **state) {
    (void)state;
    log_reset();
    const size_t n = 300 * TS_KiB + 3;
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    ts_busy busy = ts_busy_new();
    CUdeviceptr d = ts_dev_alloc(n), e = ts_dev_alloc(n);
    handoff h = {ts_pinned_alloc(n), ts_malloc(n), ts_pinned_alloc(n), n, 0xfeed, -1};
    unsigned char *out = ts_pinned_alloc(n), *want = ts_malloc(n);
    ts_fill_random(h.expected, n, 0xbeef);
    memset(h.before, 0, n);
    memset(h.after, 0, n);
    assert_cu_ok(cuMemcpyHtoD(d, h.expected, n));
    assert_cu_ok(cuCtxSynchronize());
    ts_busy_until_not_ready(&busy, s);
    assert_cu_ok(cuMemcpyDtoHAsync(h.before, d, n, s));  /* before the function */
    assert_cu_ok(cuLaunchHostFunc(s, handoff_fn, &h));
    assert_cu_ok(cuMemcpyHtoDAsync(e, h.after, n, s));   /* after it: what it wrote */
    assert_cu_ok(cuMemcpyDtoHAsync(out, e, n, s));
    assert_cu_ok(cuStreamSynchronize(s));
    assert_int_equal(atomic_load(&h.saw_before), 1);
    ts_fill_random(want, n, 0xfeed);
    assert_bytes_equal(want, out, n);
    ts_busy_free(&busy);
    assert_cu_ok(cuStreamDestroy(s));
}

/* Many functions and callbacks in several streams: each stream's run in
 * its order, on the library's thread, all of them before the streams'
 * synchronisation returns. */
static void test_order_many_streams(void **state) {
    (void)state;
    log_reset();
    enum { kStreams = 4, kPerStream = 200 };
    CUstream st[kStreams];
    ts_busy busy = ts_busy_new();
    for (int i = 0; i < kStreams; ++i) st[i] = ts_stream_new(i % 2 ? CU_STREAM_NON_BLOCKING : 0);
    ts_busy_queue(&busy, st[0]);
    for (int k = 0; k < kPerStream; ++k)
        for (int i = 0; i < kStreams; ++i) {
            const int tag = i * kPerStream + k;
            if (k % 3 == 0) assert_cu_ok(cuStreamAddCallback(st[i], note_callback, (void *)(intptr_t)tag, 0));
            else assert_cu_ok(cuLaunchHostFunc(st[i], note, (void *)(intptr_t)tag));
        }
    for (int i = 0; i < kStreams; ++i) assert_cu_ok(cuStreamSynchronize(st[i]));
    assert_int_equal(log_count(), kStreams * kPerStream);
    int next[kStreams] = {0};
    for (int j = 0; j < kStreams * kPerStream; ++j) {
        const int tag = log_entry(j), i = tag / kPerStream, k = tag % kPerStream;
        if (k != next[i]) fail_msg("stream %d: host function %d ran where %d was due", i, k, next[i]);
        next[i]++;
    }
    assert_true(log_off_main_thread());
    for (int i = 0; i < kStreams; ++i)
        for (int k = 0; k < kPerStream; k += 3) {
            assert_int_equal(callback_status(i * kPerStream + k), CUDA_SUCCESS);
            assert_ptr_equal(callback_stream(i * kPerStream + k), st[i]);
        }
    ts_busy_free(&busy);
    for (int i = 0; i < kStreams; ++i) assert_cu_ok(cuStreamDestroy(st[i]));
}

/* Host functions of different streams do not wait for each other: one
 * behind busy work does not hold back one of another stream (as libcuda,
 * whose order for the same calls was 3, 1, 2). */
static void test_streams_run_independently(void **state) {
    (void)state;
    log_reset();
    CUstream a = ts_stream_new(CU_STREAM_NON_BLOCKING), b = ts_stream_new(CU_STREAM_NON_BLOCKING);
    ts_busy busy = ts_busy_new();
    /* The library's thread and its semaphores exist before the busy work
     * (the simulated driver serialises their allocation with its copies). */
    assert_cu_ok(cuLaunchHostFunc(b, note, (void *)0));
    assert_cu_ok(cuStreamSynchronize(b));
    ts_busy_until_not_ready(&busy, a);
    ts_busy_queue(&busy, a); /* well behind the functions' enqueueing */
    assert_cu_ok(cuLaunchHostFunc(a, note, (void *)1));
    assert_cu_ok(cuLaunchHostFunc(b, note, (void *)2));
    assert_cu_ok(cuStreamSynchronize(b));
    assert_cu_ok(cuStreamSynchronize(a));
    assert_int_equal(log_count(), 3);
    assert_int_equal(log_entry(1), 2);
    assert_int_equal(log_entry(2), 1);
    ts_busy_free(&busy);
    assert_cu_ok(cuStreamDestroy(a));
    assert_cu_ok(cuStreamDestroy(b));
}

/* The legacy stream, the per-thread stream and CU_STREAM_LEGACY; the
 * callback's stream argument is the handle it was given. */
static void test_default_streams(void **state) {
    (void)state;
    log_reset();
    assert_cu_ok(cuLaunchHostFunc(NULL, note, (void *)1));
    assert_cu_ok(cuLaunchHostFunc(CU_STREAM_LEGACY, note, (void *)2));
    assert_cu_ok(cuLaunchHostFunc(CU_STREAM_PER_THREAD, note, (void *)3));
    assert_cu_ok(cuStreamAddCallback(NULL, note_callback, (void *)4, 0));
    assert_cu_ok(cuCtxSynchronize());
    assert_int_equal(log_count(), 4);
    for (int i = 0; i < 4; ++i) assert_int_equal(log_entry(i), i + 1);
    assert_null(callback_stream(4));
    assert_int_equal(callback_status(4), CUDA_SUCCESS);
}

/* ------------------------------------------------------------ blocking */

static atomic_int gate_open;
static void CUDA_CB wait_gate(void *data) {
    (void)data;
    const double t0 = ts_now();
    while (!atomic_load(&gate_open) && ts_now() - t0 < 20.0) usleep(500);
}

/* While a host function runs, the stream's later work waits: queries say
 * not ready, events after it are not reached; another stream that waits for
 * such an event waits too; everything goes on when it returns. */
static void test_host_function_blocks_stream(void **state) {
    (void)state;
    log_reset();
    atomic_store(&gate_open, 0);
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING), t = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent ev = ts_event_new(CU_EVENT_DISABLE_TIMING);
    CUdeviceptr d = ts_dev_alloc(4096);
    unsigned char *out = ts_pinned_alloc(4096);
    memset(out, 0, 4096);
    assert_cu_ok(cuLaunchHostFunc(s, wait_gate, NULL));
    assert_cu_ok(cuMemsetD8Async(d, 0x5a, 4096, s));
    assert_cu_ok(cuEventRecord(ev, s));
    assert_cu_ok(cuStreamWaitEvent(t, ev, 0));
    assert_cu_ok(cuMemcpyDtoHAsync(out, d, 4096, t));
    assert_cu_ok(cuLaunchHostFunc(t, note, (void *)7));
    usleep(50000);
    assert_cu(CUDA_ERROR_NOT_READY, cuStreamQuery(s));
    assert_cu(CUDA_ERROR_NOT_READY, cuEventQuery(ev));
    assert_cu(CUDA_ERROR_NOT_READY, cuStreamQuery(t));
    assert_int_equal(log_count(), 0);
    assert_int_equal(out[0], 0);
    atomic_store(&gate_open, 1);
    assert_cu_ok(cuStreamSynchronize(t));
    assert_int_equal(log_count(), 1);
    assert_bytes_all(out, 0x5a, 4096);
    assert_cu_ok(cuStreamQuery(s));
    assert_cu_ok(cuEventQuery(ev));
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuStreamDestroy(t));
    assert_cu_ok(cuEventDestroy(ev));
}

/* ------------------------------------------------------------ inside */

typedef struct {
    CUcontext ctx;
    CUstream stream;
    CUdeviceptr buf;
    CUresult alloc, memcpy_sync, memcpy_async, stream_sync, ctx_sync, query, launch_host, set_current, get_version,
        error_name;
    int version;
} inside_calls;

/* The results cross threads under the log's lock: the library orders them
 * (the function returns before the stream's synchronisation does) through
 * the GPU, which ThreadSanitizer cannot follow on the simulated driver (it
 * reads the semaphore through another mapping of the page). */
static void CUDA_CB call_inside(void *data) {
    pthread_mutex_lock(&olog.mutex);
    inside_calls *c = data;
    CUdeviceptr p = 0;
    unsigned char b[8] = {1};
    c->alloc = cuMemAlloc(&p, 16);
    c->memcpy_sync = cuMemcpyHtoD(c->buf, b, 8);
    c->memcpy_async = cuMemcpyHtoDAsync(c->buf, b, 8, c->stream);
    c->stream_sync = cuStreamSynchronize(c->stream);
    c->ctx_sync = cuCtxSynchronize();
    c->query = cuStreamQuery(c->stream);
    c->launch_host = cuLaunchHostFunc(c->stream, note, NULL);
    c->set_current = cuCtxSetCurrent(c->ctx);
    c->get_version = cuDriverGetVersion(&c->version);
    const char *name = NULL;
    c->error_name = cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &name);
    pthread_mutex_unlock(&olog.mutex);
}

/* The driver may not be called from a host function: what would wait for
 * the stream (or the context) would wait for itself. */
static void test_calls_inside_not_permitted(void **state) {
    ts_fixture *fx = ts_fx(state);
    log_reset();
    inside_calls c;
    memset(&c, 0, sizeof c);
    c.ctx = fx->ctx;
    c.stream = ts_stream_new(0);
    c.buf = ts_dev_alloc(64);
    assert_cu_ok(cuStreamAddCallback(c.stream, note_callback, (void *)0, 0));
    assert_cu_ok(cuLaunchHostFunc(c.stream, call_inside, &c));
    assert_cu_ok(cuStreamSynchronize(c.stream));
    pthread_mutex_lock(&olog.mutex);
    inside_calls seen = c;
    pthread_mutex_unlock(&olog.mutex);
    c = seen;
    assert_cu(CUDA_ERROR_NOT_PERMITTED, c.alloc);
    assert_cu(CUDA_ERROR_NOT_PERMITTED, c.memcpy_sync);
    assert_cu(CUDA_ERROR_NOT_PERMITTED, c.memcpy_async);
    assert_cu(CUDA_ERROR_NOT_PERMITTED, c.stream_sync);
    assert_cu(CUDA_ERROR_NOT_PERMITTED, c.ctx_sync);
    assert_cu(CUDA_ERROR_NOT_PERMITTED, c.query);
    assert_cu(CUDA_ERROR_NOT_PERMITTED, c.launch_host);
    /* What does not touch the driver's state works. */
    assert_cu_ok(c.get_version);
    assert_int_equal(c.version, CUDA_VERSION);
    assert_cu_ok(c.error_name);
    /* Outside, the same calls work again on the same thread kinds. */
    assert_cu_ok(cuStreamQuery(c.stream));
    assert_cu_ok(cuStreamDestroy(c.stream));
}

/* ------------------------------------------------------------ bad input */

static void test_argument_checks(void **state) {
    (void)state;
    CUstream s = ts_stream_new(0);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLaunchHostFunc(s, NULL, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamAddCallback(s, NULL, NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamAddCallback(s, note_callback, NULL, 1));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLaunchHostFunc((CUstream)(uintptr_t)0x1234, note, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamAddCallback((CUstream)(uintptr_t)0x1234, note_callback, NULL, 0));
    assert_cu_ok(cuStreamDestroy(s));
}

/* A stream destroyed with host functions still queued: they run. A context
 * destroyed after its host functions ran: nothing is left behind. */
static void test_destroyed_stream_still_runs_them(void **state) {
    (void)state;
    log_reset();
    CUstream s = ts_stream_new(0);
    ts_busy busy = ts_busy_new();
    ts_busy_queue(&busy, s);
    for (int i = 0; i < 10; ++i) assert_cu_ok(cuLaunchHostFunc(s, note, (void *)(intptr_t)i));
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuCtxSynchronize());
    assert_int_equal(log_count(), 10);
    ts_busy_free(&busy);
}

static void test_context_destroy_after_host_functions(void **state) {
    ts_fixture *fx = ts_fx(state);
    log_reset();
    for (int round = 0; round < 3; ++round) {
        CUcontext c;
        assert_cu_ok(cuCtxCreate(&c, NULL, 0, fx->dev));
        CUstream s;
        assert_cu_ok(cuStreamCreate(&s, 0));
        for (int i = 0; i < 5; ++i) assert_cu_ok(cuLaunchHostFunc(s, note, (void *)(intptr_t)i));
        /* Not synchronised on purpose: destruction waits for the work. */
        assert_cu_ok(cuCtxDestroy(c));
        assert_int_equal(log_count(), 5 * (round + 1));
    }
    assert_cu_ok(cuCtxSetCurrent(fx->ctx));
}

/* ------------------------------------------------------------ faults */

/* After a fault in the stream, a callback gets the error and a host
 * function is not called (cuLaunchHostFunc's documented difference). */
static void test_after_fault(void **state) {
    ts_fixture *fx = ts_fx(state);
    if (!ts_on_simulator()) ts_skip("the copy-engine fault is injected by the simulated driver");
    log_reset();
    CUstream s = ts_stream_new(0);
    CUdeviceptr d = ts_dev_alloc(TS_MiB);
    unsigned char *h = ts_pinned_alloc(TS_MiB);
    /* Everything is enqueued before the fault can strike (as in libcuda's
     * run, where both enqueues succeeded): the stream waits for a gate first. */
    atomic_store(&gate_open, 0);
    assert_cu_ok(cuLaunchHostFunc(s, wait_gate, NULL));
    assert_cu_ok(nvliteSimInjectFault(NVLITE_SIM_FAULT_COPY_MMU));
    assert_cu_ok(cuMemcpyDtoHAsync(h, d, TS_MiB, s));
    assert_cu_ok(cuLaunchHostFunc(s, note, (void *)1));
    assert_cu_ok(cuStreamAddCallback(s, note_callback, (void *)2, 0));
    atomic_store(&gate_open, 1);
    assert_cu(CUDA_ERROR_ILLEGAL_ADDRESS, cuStreamSynchronize(s));
    /* The callback runs on its thread: wait for it (bounded). */
    const double t0 = ts_now();
    while (log_count() < 1 && ts_now() - t0 < 10.0) usleep(1000);
    assert_int_equal(log_count(), 1);
    assert_int_equal(log_entry(0), 2);
    assert_cu(CUDA_ERROR_ILLEGAL_ADDRESS, callback_status(2));
    /* The context is lost: enqueueing answers its error. */
    assert_cu(CUDA_ERROR_ILLEGAL_ADDRESS, cuLaunchHostFunc(s, note, (void *)3));
    assert_cu_ok(cuCtxDestroy(fx->ctx));
    fx->ctx = NULL;
    assert_int_equal(log_count(), 1);
}

int main(void) {
    pthread_mutex_init(&olog.mutex, NULL);
    const struct CMUnitTest tests[] = {
        TEST(test_order_through_data),
        TEST(test_order_many_streams),
        TEST(test_streams_run_independently),
        TEST(test_default_streams),
        TEST(test_host_function_blocks_stream),
        TEST(test_calls_inside_not_permitted),
        TEST(test_argument_checks),
        TEST(test_destroyed_stream_still_runs_them),
        TEST(test_context_destroy_after_host_functions),
        TEST(test_after_fault),
    };
    ts_watchdog_arm("test_host_func", 600);
    return cmocka_run_group_tests(tests, ts_group_init, NULL);
}
