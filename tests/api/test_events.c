/*
 * Events (issue 4, "Events"): cuEventCreate with CU_EVENT_DEFAULT,
 * BLOCKING_SYNC, DISABLE_TIMING (and INTERPROCESS | DISABLE_TIMING),
 * cuEventRecord, cuEventRecordWithFlags, cuEventQuery, cuEventSynchronize,
 * cuEventElapsedTime (the _v2 export and the old name), cuEventDestroy;
 * unrecorded events, events not yet reached, events recorded again, events of
 * two contexts, bad handles and flags.
 *
 * Runs on the simulator (make test) and on the GPU (make test-hw). The
 * simulator stamps semaphore releases with its clock as the copy engine
 * reaches them, so elapsed times of copies are real durations there too.
 * "Busy work" (64 MiB device copies queued until cuStreamQuery sees them
 * running) keeps a stream busy so that an event behind it is not reached yet.
 *
 * Expected codes: CUDA's documentation of the calls (cuEventElapsedTime:
 * CUDA_ERROR_INVALID_HANDLE for an event never recorded or made with
 * CU_EVENT_DISABLE_TIMING, CUDA_ERROR_NOT_READY while one is not reached;
 * an event never recorded is complete for cuEventQuery and
 * cuEventSynchronize). Where the documentation is silent, or libcuda may
 * differ from it, the case is also in tests/compat/compat_probe.c's
 * "streams" section and marked "checked by compat probe 'streams'" here.
 * Made-up handles: nvlite's own answer (libcuda may crash on them).
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_ctx_setup, ts_ctx_teardown)

typedef CUresult (*elapsed_fn)(float *, CUevent, CUevent);

/* ------------------------------------------------------------------ helpers */

static float elapsed(CUevent a, CUevent b) {
    float ms = NAN;
    assert_cu_ok(cuEventElapsedTime(&ms, a, b));
    assert_false(isnan(ms));
    return ms;
}

static const unsigned kFlags[] = {CU_EVENT_DEFAULT, CU_EVENT_BLOCKING_SYNC, CU_EVENT_DISABLE_TIMING,
                                  CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING,
                                  CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING};

/* ------------------------------------------------------------------ creation */

/* Every valid flag combination: never recorded it is complete; recorded
 * behind busy work it is not reached, then is after cuEventSynchronize, and
 * so is everything before it in the stream. */
static void test_create_each_flag(void **state) {
    (void)state;
    const size_t n = 5 * TS_MiB + 3;
    ts_busy w = ts_busy_new();
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    unsigned char *src = ts_pinned_alloc(n), *out = ts_pinned_alloc(n);
    CUdeviceptr x = ts_dev_alloc(n);
    for (size_t i = 0; i < TS_ARRAY_SIZE(kFlags); ++i) {
        CUevent e = NULL;
        const CUresult r = cuEventCreate(&e, kFlags[i]);
        if (r != CUDA_SUCCESS) fail_msg("cuEventCreate(flags 0x%x) returned %s", kFlags[i], ts_cu_name(r));
        assert_cu_ok(cuEventQuery(e));
        assert_cu_ok(cuEventSynchronize(e));
        ts_fill_random(src, n, 0xF1A6 + i);
        memset(out, 0xEE, n);
        ts_busy_until_not_ready(&w, s);
        assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, s));
        assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, s));
        assert_cu_ok(cuEventRecord(e, s));
        assert_cu(CUDA_ERROR_NOT_READY, cuEventQuery(e));
        assert_cu_ok(cuEventSynchronize(e));
        if (memcmp(out, src, n) != 0) print_error("cuEventSynchronize (flags 0x%x) returned early\n", kFlags[i]);
        assert_bytes_equal(src, out, n);
        assert_cu_ok(cuEventQuery(e));
        assert_cu_ok(cuEventDestroy(e));
    }
    /* Many at once, all different. */
    enum { MANY = 300 };
    CUevent *many = ts_malloc(MANY * sizeof *many);
    for (int i = 0; i < MANY; ++i) {
        many[i] = ts_event_new(kFlags[i % TS_ARRAY_SIZE(kFlags)]);
        for (int j = 0; j < i; ++j) assert_ptr_not_equal(many[i], many[j]);
    }
    for (int i = 0; i < MANY; ++i) assert_cu_ok(cuEventRecord(many[i], i % 2 ? s : NULL));
    for (int i = MANY - 1; i >= 0; --i) assert_cu_ok(cuEventDestroy(many[i]));
    ts_free(many);
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out));
    ts_busy_free(&w);
}

static void test_create_bad_input(void **state) {
    ts_fixture *fx = ts_fx(state);
    CUevent e = NULL;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuEventCreate(NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuEventCreate(NULL, CU_EVENT_DISABLE_TIMING));
    /* Unknown flag bits (checked by compat probe 'streams'); an interprocess
     * event must have CU_EVENT_DISABLE_TIMING (CUDA's documentation). */
    const unsigned bad[] = {0x8,
                            0x10,
                            0x100,
                            0x80000000u,
                            0xffffffffu,
                            CU_EVENT_INTERPROCESS,
                            CU_EVENT_INTERPROCESS | CU_EVENT_BLOCKING_SYNC};
    for (size_t i = 0; i < TS_ARRAY_SIZE(bad); ++i) {
        e = NULL;
        const CUresult r = cuEventCreate(&e, bad[i]);
        if (r != CUDA_ERROR_INVALID_VALUE) fail_msg("cuEventCreate(flags 0x%x) returned %s", bad[i], ts_cu_name(r));
    }
    /* No current context. */
    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, fx->ctx);
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuEventCreate(&e, 0));
    assert_cu_ok(cuCtxPushCurrent(popped));
}

/* ------------------------------------------------------------------ unrecorded */

/* "Before the first call to cuEventRecord, an event represents an empty set of
 * work": cuEventQuery and cuEventSynchronize succeed, a stream waiting for it
 * waits for nothing; cuEventElapsedTime answers CUDA_ERROR_INVALID_HANDLE. */
static void test_unrecorded_event(void **state) {
    (void)state;
    const size_t n = 3 * TS_MiB + 1;
    ts_busy w = ts_busy_new();
    CUevent done = ts_event_new(0);
    assert_cu_ok(cuEventRecord(done, NULL));
    assert_cu_ok(cuEventSynchronize(done));
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    unsigned char *src = ts_pinned_alloc(n), *out = ts_pinned_alloc(n);
    CUdeviceptr x = ts_dev_alloc(n);
    elapsed_fn v1 = (elapsed_fn)dlsym(RTLD_DEFAULT, "cuEventElapsedTime");
    assert_non_null(v1);
    for (size_t i = 0; i < TS_ARRAY_SIZE(kFlags); ++i) {
        CUevent e = ts_event_new(kFlags[i]);
        /* Not tied to the context's work either. */
        ts_busy_until_not_ready(&w, NULL);
        assert_cu_ok(cuEventQuery(e));
        assert_cu_ok(cuEventSynchronize(e));
        float ms = 123.0f;
        assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, e, e));
        assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, e, done));
        assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, done, e));
        assert_cu(CUDA_ERROR_INVALID_HANDLE, v1(&ms, e, done));
        assert_cu(CUDA_ERROR_INVALID_HANDLE, v1(&ms, done, e));
        /* A wait for it: nothing. */
        ts_fill_random(src, n, 0x0E + i);
        memset(out, 0xEE, n);
        assert_cu_ok(cuStreamWaitEvent(s, e, 0));
        assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, s));
        assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, s));
        assert_cu_ok(cuStreamSynchronize(s));
        assert_bytes_equal(src, out, n);
        assert_cu_ok(cuStreamSynchronize(NULL));
        assert_cu_ok(cuEventDestroy(e));
    }
    assert_cu_ok(cuEventDestroy(done));
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out));
    ts_busy_free(&w);
}

/* ------------------------------------------------------------------ elapsed time */

/* CU_EVENT_DISABLE_TIMING on either side: CUDA_ERROR_INVALID_HANDLE, also
 * when both are recorded and complete; the events still order and wait. */
static void test_elapsed_disable_timing(void **state) {
    (void)state;
    CUevent timed = ts_event_new(0), timed2 = ts_event_new(CU_EVENT_BLOCKING_SYNC), off = ts_event_new(CU_EVENT_DISABLE_TIMING),
            off2 = ts_event_new(CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC);
    CUstream s = ts_stream_new(0);
    CUdeviceptr x = ts_dev_alloc(4097);
    assert_cu_ok(cuEventRecord(timed, s));
    assert_cu_ok(cuEventRecord(off, s));
    assert_cu_ok(cuMemsetD8Async(x, 0x31, 4097, s));
    assert_cu_ok(cuEventRecord(off2, s));
    assert_cu_ok(cuEventRecord(timed2, s));
    assert_cu_ok(cuStreamSynchronize(s));
    float ms = 55.0f;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, timed, off));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, off, timed));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, off, off2));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, off2, timed2));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, off, off));
    elapsed_fn v1 = (elapsed_fn)dlsym(RTLD_DEFAULT, "cuEventElapsedTime");
    assert_non_null(v1);
    assert_cu(CUDA_ERROR_INVALID_HANDLE, v1(&ms, timed, off));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, v1(&ms, off2, timed2));
    /* The timed pair works. */
    assert_true(elapsed(timed, timed2) >= 0.0f);
    assert_cu_ok(cuEventQuery(off));
    assert_cu_ok(cuEventSynchronize(off2));
    assert_cu_ok(cuEventDestroy(timed));
    assert_cu_ok(cuEventDestroy(timed2));
    assert_cu_ok(cuEventDestroy(off));
    assert_cu_ok(cuEventDestroy(off2));
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuMemFree(x));
}

/* Recorded but not reached: CUDA_ERROR_NOT_READY, the end or the start. */
static void test_elapsed_not_ready(void **state) {
    (void)state;
    ts_busy w = ts_busy_new();
    CUstream s = ts_stream_new(0);
    CUevent a = ts_event_new(0), b = ts_event_new(0), c = ts_event_new(0);
    assert_cu_ok(cuEventRecord(a, s));
    assert_cu_ok(cuEventSynchronize(a));
    ts_busy_until_not_ready(&w, s);
    assert_cu_ok(cuEventRecord(b, s));
    float ms = 77.0f;
    assert_cu(CUDA_ERROR_NOT_READY, cuEventElapsedTime(&ms, a, b));
    assert_cu(CUDA_ERROR_NOT_READY, cuEventElapsedTime(&ms, b, a));
    assert_cu(CUDA_ERROR_NOT_READY, cuEventQuery(b));
    assert_cu_ok(cuEventSynchronize(b));
    assert_true(elapsed(a, b) > 0.0f);

    /* Both not reached. */
    ts_busy_until_not_ready(&w, s);
    assert_cu_ok(cuEventRecord(a, s));
    ts_busy_queue(&w, s);
    assert_cu_ok(cuEventRecord(c, s));
    assert_cu(CUDA_ERROR_NOT_READY, cuEventElapsedTime(&ms, a, c));
    assert_cu_ok(cuEventSynchronize(c));
    assert_cu_ok(cuEventQuery(a)); /* before c in the same stream */
    assert_true(elapsed(a, c) > 0.0f);
    assert_cu_ok(cuEventDestroy(a));
    assert_cu_ok(cuEventDestroy(b));
    assert_cu_ok(cuEventDestroy(c));
    assert_cu_ok(cuStreamDestroy(s));
    ts_busy_free(&w);
}

/* Elapsed times of copies: positive, within the host's time around them, no
 * faster than the hardware could be; additive over consecutive intervals,
 * negated when the events are swapped, 0 from an event to itself. */
static void test_elapsed_time_of_copies(void **state) {
    (void)state;
    const size_t n = 64 * TS_MiB + 3;
    unsigned char *src = ts_pinned_alloc(n);
    ts_fill_random(src, n, 0x7173);
    CUdeviceptr x = ts_dev_alloc(n), y = ts_dev_alloc(n);
    const CUstream streams[] = {ts_stream_new(0), NULL};
    for (size_t i = 0; i < TS_ARRAY_SIZE(streams); ++i) {
        const CUstream s = streams[i];
        CUevent a = ts_event_new(0), b = ts_event_new(CU_EVENT_BLOCKING_SYNC), c = ts_event_new(0);
        assert_cu_ok(cuStreamSynchronize(s));
        const double t0 = ts_now();
        assert_cu_ok(cuEventRecord(a, s));
        assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, s));
        assert_cu_ok(cuEventRecord(b, s));
        assert_cu_ok(cuMemcpyDtoDAsync(y, x, n, s));
        assert_cu_ok(cuEventRecord(c, s));
        assert_cu_ok(cuEventSynchronize(c));
        const double host_ms = (ts_now() - t0) * 1e3;
        const float ab = elapsed(a, b), bc = elapsed(b, c), ac = elapsed(a, c);
        print_message(
            "%s: host-to-device %zu bytes %.3f ms (%.1f GB/s), device-to-device %.3f ms, both %.3f ms, "
            "host %.3f ms\n",
            i ? "NULL stream" : "created stream", n, (double)ab, (double)n / ab / 1e6, (double)bc, (double)ac, host_ms);
        assert_true(ab > 0.0f);
        assert_true(bc > 0.0f);
        /* Within the host's interval (1 ms for clock granularity). */
        if (ac > host_ms + 1.0) fail_msg("the events span %.3f ms, the host saw %.3f ms", (double)ac, host_ms);
        /* No pinned copy beats 1 TB/s, no device copy 20 TB/s. */
        if (ab < (double)n / 1e12 * 1e3) fail_msg("host-to-device copy of %zu bytes timed at %.6f ms", n, (double)ab);
        if (bc < (double)n / 20e12 * 1e3)
            fail_msg("device-to-device copy of %zu bytes timed at %.6f ms", n, (double)bc);
        if (fabs((double)ac - (double)ab - (double)bc) > 1e-3 + 1e-5 * ac)
            fail_msg("elapsed(a, c) %.6f ms is not elapsed(a, b) %.6f + elapsed(b, c) %.6f", (double)ac, (double)ab,
                     (double)bc);
        const float ca = elapsed(c, a);
        if (fabs((double)ca + (double)ac) > 1e-6 * fabs(ac) + 1e-6)
            fail_msg("elapsed(c, a) %.6f ms is not -elapsed(a, c) %.6f ms", (double)ca, (double)ac);
        assert_true(elapsed(a, a) == 0.0f);
        assert_true(elapsed(c, c) == 0.0f);
        /* The old export gives the same. */
        elapsed_fn v1 = (elapsed_fn)dlsym(RTLD_DEFAULT, "cuEventElapsedTime");
        elapsed_fn v2 = (elapsed_fn)dlsym(RTLD_DEFAULT, "cuEventElapsedTime_v2");
        assert_non_null(v1);
        assert_non_null(v2);
        float m1 = -1.0f, m2 = -2.0f;
        assert_cu_ok(v1(&m1, a, c));
        assert_cu_ok(v2(&m2, a, c));
        assert_true(m1 == ac);
        assert_true(m2 == ac);
        /* No place for the result. */
        assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(NULL, a, c)); /* libcuda 580: compat probe */
        assert_cu(CUDA_ERROR_INVALID_HANDLE, v1(NULL, a, c)); /* libcuda 580: compat probe */
        assert_cu_ok(cuEventDestroy(a));
        assert_cu_ok(cuEventDestroy(b));
        assert_cu_ok(cuEventDestroy(c));
    }
    assert_cu_ok(cuStreamDestroy(streams[0]));
    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFree(y));
    assert_cu_ok(cuMemFreeHost(src));
}

/* Events recorded one after another in a stream, between copies of random
 * sizes, and in a second stream after waiting for the first: times never go
 * back. */
static void test_event_times_are_ordered(void **state) {
    (void)state;
    enum { EVENTS = 60 };
    const size_t n = 2 * TS_MiB + 9;
    CUstream s = ts_stream_new(0), t = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = ts_dev_alloc(n), y = ts_dev_alloc(n);
    CUevent e[EVENTS], f[EVENTS];
    ts_rng rng;
    ts_rng_init(&rng, 0x0DE5);
    for (int i = 0; i < EVENTS; ++i) {
        e[i] = ts_event_new(i % 3 == 1 ? CU_EVENT_BLOCKING_SYNC : 0);
        f[i] = ts_event_new(0);
        const size_t len = 1 + (size_t)ts_rng_below(&rng, n);
        if (i % 4 == 0)
            assert_cu_ok(cuMemsetD8Async(y, (unsigned char)i, len, s));
        else
            assert_cu_ok(cuMemcpyDtoDAsync(y, x, len, s));
        assert_cu_ok(cuEventRecord(e[i], s));
        assert_cu_ok(cuStreamWaitEvent(t, e[i], 0));
        assert_cu_ok(cuEventRecord(f[i], t));
    }
    assert_cu_ok(cuStreamSynchronize(t));
    assert_cu_ok(cuEventQuery(e[EVENTS - 1]));
    float prev = 0.0f;
    for (int i = 1; i < EVENTS; ++i) {
        const float from_first = elapsed(e[0], e[i]);
        if (from_first < prev)
            fail_msg("event %d is %.6f ms after the first, event %d was %.6f ms", i, (double)from_first, i - 1,
                     (double)prev);
        prev = from_first;
        /* t's event i follows s's event i. */
        const float behind = elapsed(e[i], f[i]);
        if (behind < 0.0f)
            fail_msg("the waiting stream's event %d is %.6f ms before the one it waited for", i, (double)behind);
    }
    for (int i = 0; i < EVENTS; ++i) {
        assert_cu_ok(cuEventDestroy(e[i]));
        assert_cu_ok(cuEventDestroy(f[i]));
    }
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuStreamDestroy(t));
    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFree(y));
}

/* ------------------------------------------------------------------ recording again */

/* A second cuEventRecord replaces the first: queries, waits and times use the
 * newest record. */
static void test_record_again(void **state) {
    (void)state;
    ts_busy w = ts_busy_new();
    CUstream s = ts_stream_new(0), other = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent a = ts_event_new(0), e = ts_event_new(0);
    assert_cu_ok(cuEventRecord(a, s));
    ts_busy_queue(&w, s);
    assert_cu_ok(cuEventRecord(e, s));
    assert_cu_ok(cuEventSynchronize(e));
    const float t1 = elapsed(a, e);
    /* Again, behind more work: not reached, although the first record was. */
    ts_busy_until_not_ready(&w, s);
    assert_cu_ok(cuEventRecord(e, s));
    assert_cu(CUDA_ERROR_NOT_READY, cuEventQuery(e));
    float ms = 0;
    assert_cu(CUDA_ERROR_NOT_READY, cuEventElapsedTime(&ms, a, e));
    assert_cu_ok(cuEventSynchronize(e));
    const float t2 = elapsed(a, e);
    if (!(t2 > t1)) fail_msg("recorded again after more work: %.6f ms, first %.6f ms", (double)t2, (double)t1);
    /* Again, on another (idle) stream, later. */
    assert_cu_ok(cuEventRecord(e, other));
    assert_cu_ok(cuEventSynchronize(e));
    const float t3 = elapsed(a, e);
    if (t3 < t2) fail_msg("recorded again later on an idle stream: %.6f ms, before %.6f ms", (double)t3, (double)t2);
    /* Many times in a row, with work in between. */
    float prev = t3;
    for (int i = 0; i < 50; ++i) {
        assert_cu_ok(cuMemsetD32Async(w.a, (unsigned)i, 1 + 4099 * (size_t)i, s));
        assert_cu_ok(cuEventRecord(e, i % 2 ? s : NULL));
        assert_cu_ok(cuEventSynchronize(e));
        const float t = elapsed(a, e);
        if (t < prev) fail_msg("record %d: %.6f ms, the one before %.6f ms", i, (double)t, (double)prev);
        prev = t;
    }
    /* The start recorded again after the end: negative. */
    assert_cu_ok(cuEventRecord(a, s));
    assert_cu_ok(cuEventSynchronize(a));
    assert_true(elapsed(a, e) <= 0.0f);
    assert_cu_ok(cuEventDestroy(a));
    assert_cu_ok(cuEventDestroy(e));
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuStreamDestroy(other));
    ts_busy_free(&w);
}

/* cuEventRecordWithFlags with CU_EVENT_RECORD_DEFAULT is cuEventRecord. */
static void test_record_with_flags(void **state) {
    (void)state;
    ts_busy w = ts_busy_new();
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent a = ts_event_new(0), b = ts_event_new(CU_EVENT_BLOCKING_SYNC);
    assert_cu_ok(cuEventRecordWithFlags(a, s, CU_EVENT_RECORD_DEFAULT));
    ts_busy_until_not_ready(&w, s);
    assert_cu_ok(cuEventRecordWithFlags(b, s, CU_EVENT_RECORD_DEFAULT));
    assert_cu(CUDA_ERROR_NOT_READY, cuEventQuery(b));
    assert_cu_ok(cuEventSynchronize(b));
    assert_cu_ok(cuEventQuery(a));
    assert_true(elapsed(a, b) > 0.0f);
    assert_cu_ok(cuEventRecordWithFlags(a, NULL, CU_EVENT_RECORD_DEFAULT));
    assert_cu_ok(cuEventRecordWithFlags(a, CU_STREAM_LEGACY, CU_EVENT_RECORD_DEFAULT));
    assert_cu_ok(cuEventRecordWithFlags(a, CU_STREAM_PER_THREAD, CU_EVENT_RECORD_DEFAULT));
    assert_cu_ok(cuEventSynchronize(a));
    /* Unknown flags; no event (checked by compat probe 'streams'). */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuEventRecordWithFlags(a, s, 0x2));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuEventRecordWithFlags(a, s, 0x80000000u));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecordWithFlags(NULL, s, 0));
    assert_cu_ok(cuEventQuery(a));
    /* CU_EVENT_RECORD_EXTERNAL outside of stream capture: libcuda 580 answers
     * CUDA_ERROR_ILLEGAL_STATE (compat probe 'streams'). */
    assert_cu(CUDA_ERROR_ILLEGAL_STATE, cuEventRecordWithFlags(a, s, CU_EVENT_RECORD_EXTERNAL));
    assert_cu_ok(cuEventSynchronize(a));
    assert_cu_ok(cuEventDestroy(a));
    assert_cu_ok(cuEventDestroy(b));
    assert_cu_ok(cuStreamDestroy(s));
    ts_busy_free(&w);
}

/* ------------------------------------------------------------------ destroy */

static void test_destroy(void **state) {
    (void)state;
    const size_t n = 6 * TS_MiB + 7;
    ts_busy w = ts_busy_new();
    CUstream a = ts_stream_new(CU_STREAM_NON_BLOCKING), b = ts_stream_new(CU_STREAM_NON_BLOCKING);
    unsigned char *src = ts_pinned_alloc(n), *out = ts_pinned_alloc(n);
    ts_fill_random(src, n, 0xDE57);
    memset(out, 0xEE, n);
    CUdeviceptr x = ts_dev_alloc(n);
    assert_cu_ok(cuMemsetD8(x, 0x12, n));
    assert_cu_ok(cuCtxSynchronize()); /* done before the non-blocking streams start */

    /* Destroyed while not reached, after a stream was told to wait for it: the
     * call returns at once, the wait still holds (CUDA's documentation of
     * cuEventDestroy). */
    CUevent e = ts_event_new(0);
    ts_busy_until_not_ready(&w, a);
    assert_cu_ok(cuMemcpyHtoDAsync(x, src, n, a));
    assert_cu_ok(cuEventRecord(e, a));
    assert_cu_ok(cuStreamWaitEvent(b, e, 0));
    assert_cu_ok(cuEventDestroy(e));
    assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, b));
    assert_cu_ok(cuStreamSynchronize(b));
    assert_bytes_named(src, out, n, "a read behind a wait for an event destroyed before it was reached");

    /* A destroyed event is an error, not a crash: libcuda 580 answers
     * CUDA_ERROR_CONTEXT_IS_DESTROYED (compat probe 'streams'). */
    CUevent gone = ts_event_new(0), ok = ts_event_new(0);
    assert_cu_ok(cuEventRecord(ok, a));
    assert_cu_ok(cuEventRecord(gone, a));
    assert_cu_ok(cuEventSynchronize(gone));
    assert_cu_ok(cuEventDestroy(gone));
    float ms = 0;
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuEventQuery(gone));
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuEventSynchronize(gone));
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuEventRecord(gone, a));
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuEventElapsedTime(&ms, ok, gone));
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuEventElapsedTime(&ms, gone, ok));
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuStreamWaitEvent(b, gone, 0));
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuEventDestroy(gone));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventDestroy(NULL));

    /* The old name libcuda still exports, and _v2. */
    typedef CUresult (*destroy_fn)(CUevent);
    destroy_fn v1 = (destroy_fn)dlsym(RTLD_DEFAULT, "cuEventDestroy");
    destroy_fn v2 = (destroy_fn)dlsym(RTLD_DEFAULT, "cuEventDestroy_v2");
    assert_non_null(v1);
    assert_non_null(v2);
    CUevent e1 = ts_event_new(0), e2 = ts_event_new(CU_EVENT_DISABLE_TIMING);
    assert_cu_ok(cuEventRecord(e1, NULL));
    assert_cu_ok(v1(e1));
    assert_cu_ok(v2(e2));

    assert_cu_ok(cuEventDestroy(ok));
    assert_cu_ok(cuStreamDestroy(a));
    assert_cu_ok(cuStreamDestroy(b));
    assert_cu_ok(cuMemFree(x));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out));
    ts_busy_free(&w);
}

/* ------------------------------------------------------------------ bad handles */

static void test_bad_handles(void **state) {
    (void)state;
    static struct { unsigned char junk[512]; } not_an_event;
    memset(&not_an_event, 0x3E, sizeof not_an_event);
    const CUevent junk = (CUevent)(void *)&not_an_event;
    CUevent good = ts_event_new(0);
    CUstream s = ts_stream_new(0);
    assert_cu_ok(cuEventRecord(good, s));
    assert_cu_ok(cuEventSynchronize(good));
    float ms = 0;
    /* Made up (nvlite's own answer: libcuda may crash). */
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(junk, s));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecordWithFlags(junk, s, 0));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventQuery(junk));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventSynchronize(junk));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, junk, good));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, good, junk));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamWaitEvent(s, junk, 0));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventDestroy(junk));
    /* NULL (checked by compat probe 'streams'). */
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(NULL, s));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(NULL, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventQuery(NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventSynchronize(NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, NULL, good));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, good, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(NULL, good, good)); /* libcuda 580: compat probe */
    /* The good one is unharmed. */
    assert_cu_ok(cuEventQuery(good));
    assert_true(elapsed(good, good) == 0.0f);
    assert_cu_ok(cuEventDestroy(good));
    assert_cu_ok(cuStreamDestroy(s));
}

/* ------------------------------------------------------------------ contexts */

/* Events of two contexts: recorded in a stream of another context:
 * CUDA_ERROR_INVALID_HANDLE (CUDA's documentation of cuEventRecord); queried,
 * synchronized, destroyed while the other context is current: fine; timed
 * against each other: CUDA_ERROR_INVALID_HANDLE (checked by compat probe
 * 'streams'). */
static void test_events_of_two_contexts(void **state) {
    ts_fixture *fx = ts_fx(state);
    ts_busy w = ts_busy_new();
    CUcontext c2 = NULL;
    assert_cu_ok(cuCtxCreate(&c2, NULL, 0, fx->dev)); /* current */
    CUstream s2 = ts_stream_new(0);
    CUevent e2 = ts_event_new(0);
    assert_cu_ok(cuEventRecord(e2, s2));
    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c2);
    CUstream s1 = ts_stream_new(0);
    CUevent e1 = ts_event_new(0), f1 = ts_event_new(0);
    assert_cu_ok(cuEventRecord(f1, s1));
    ts_busy_until_not_ready(&w, s1);
    assert_cu_ok(cuEventRecord(e1, s1));
    assert_cu_ok(cuCtxPushCurrent(c2));
    assert_cu(CUDA_ERROR_NOT_READY, cuEventQuery(e1)); /* checked by compat probe 'streams' */
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(e1, s2));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(e2, s1));
    assert_cu_ok(cuEventSynchronize(e1)); /* checked by compat probe 'streams' */
    assert_cu_ok(cuEventQuery(e1));
    assert_cu_ok(cuEventSynchronize(e2));
    float ms = 0;
    assert_cu_ok(cuEventElapsedTime(&ms, f1, e1)); /* both of the other context */
    assert_true(ms > 0.0f);
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, e1, e2));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, e2, e1));
    assert_cu_ok(cuEventDestroy(e1)); /* checked by compat probe 'streams' */
    assert_cu_ok(cuEventDestroy(e2));
    assert_cu_ok(cuStreamDestroy(s2));
    assert_cu_ok(cuCtxDestroy(c2));
    assert_ptr_equal(popped, c2);
    assert_cu_ok(cuEventDestroy(f1));
    assert_cu_ok(cuStreamDestroy(s1));
    ts_busy_free(&w);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_create_each_flag),
        TEST(test_create_bad_input),
        TEST(test_unrecorded_event),
        TEST(test_elapsed_disable_timing),
        TEST(test_elapsed_not_ready),
        TEST(test_elapsed_time_of_copies),
        TEST(test_event_times_are_ordered),
        TEST(test_record_again),
        TEST(test_record_with_flags),
        TEST(test_destroy),
        TEST(test_bad_handles),
        TEST(test_events_of_two_contexts),
    };
    return cmocka_run_group_tests_name("events", tests, ts_group_init, NULL);
}
