/*
 * Contexts: cuCtxCreate (_v2, _v3, _v4 and the legacy name), cuCtxDestroy,
 * the per-thread stack (push, pop, set, get), cuCtxGetDevice,
 * cuCtxSynchronize and the primary context calls.
 *
 * Expected codes: libcuda 580 on an H200 (tests/compat/expected/
 * libcuda_contexts.txt); where the probe is silent, CUDA's documentation.
 * Every test leaves this thread's context stack empty and destroys what it
 * created, also when it fails (see ctx_teardown).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "support/test_support.h"

/* cuda.h declares the older cuCtxCreate revisions only for the driver itself
 * (__CUDA_API_VERSION_INTERNAL), as NVIDIA's does; libcuda exports them. */
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
                                CUdevice dev);

/* The legacy exports (NVIDIA's header maps these names to _v2/_v4). */
#undef cuCtxCreate
#undef cuCtxDestroy
CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxDestroy(CUcontext ctx);

/* ------------------------------------------------------------ bookkeeping */

/* Contexts a test made and has not destroyed, and primary context
 * references it holds: the teardown cleans up after a failed test. */
static CUcontext made[64];
static int made_count;
static int primary_refs;

static void track(CUcontext c) {
    assert_true(made_count < (int)TS_ARRAY_SIZE(made));
    made[made_count++] = c;
}

static void untrack(CUcontext c) {
    for (int i = 0; i < made_count; ++i)
        if (made[i] == c) {
            made[i] = made[--made_count];
            return;
        }
}

/* cuCtxCreate_v4 that must succeed; the new context is current. */
static CUcontext create(unsigned flags) {
    CUcontext c = NULL;
    assert_cu_ok(cuCtxCreate_v4(&c, NULL, flags, 0));
    assert_non_null(c);
    track(c);
    return c;
}

static void destroy(CUcontext c) {
    assert_cu_ok(cuCtxDestroy_v2(c));
    untrack(c);
}

static CUcontext current(void) {
    CUcontext c = (CUcontext)1;
    assert_cu_ok(cuCtxGetCurrent(&c));
    return c;
}

static int ctx_teardown(void **state) {
    int rc = 0;
    while (primary_refs > 0) {
        (void)cuDevicePrimaryCtxRelease_v2(0);
        --primary_refs;
    }
    while (made_count > 0) {
        CUresult r = cuCtxDestroy_v2(made[--made_count]);
        if (r != CUDA_SUCCESS) print_error("teardown: cuCtxDestroy of a leftover context: %s\n", ts_cu_name(r));
    }
    if (ts_check_no_current_context(state) != 0) rc = -1;
    return rc;
}

#define CTX_TEST(f) cmocka_unit_test_teardown(f, ctx_teardown)

/* ------------------------------------------------------------ no context */

static void test_no_current_context(void **state) {
    (void)state;
    CUcontext c = (CUcontext)1;
    assert_cu_ok(cuCtxGetCurrent(&c));
    assert_null(c);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxGetCurrent(NULL));
    CUdevice d = -7;
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetDevice(&d));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxSynchronize());
    CUdeviceptr p = 0;
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&p, 16));
    size_t fr = 0, to = 0;
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuMemGetInfo(&fr, &to));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxPopCurrent(&c));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxPopCurrent(NULL));
    void *h = NULL;
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuMemAllocHost(&h, 64));
    /* Setting "no context" when there is none is fine. */
    assert_cu_ok(cuCtxSetCurrent(NULL));
    assert_null(current());
}

/* ------------------------------------------------------------ creation */

static void test_create_bad_arguments(void **state) {
    (void)state;
    CUcontext c = NULL;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxCreate_v4(NULL, NULL, 0, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxCreate_v2(NULL, 0, 0));
    /* Unknown flag bits, and more than one scheduling policy. */
    const unsigned bad_flags[] = {0x1000, 0x100, 0x80000000u, CU_CTX_SCHED_SPIN | CU_CTX_SCHED_BLOCKING_SYNC,
                                  CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD,
                                  CU_CTX_SCHED_YIELD | CU_CTX_SCHED_BLOCKING_SYNC, CU_CTX_SCHED_MASK};
    for (size_t i = 0; i < TS_ARRAY_SIZE(bad_flags); ++i) {
        CUresult r = cuCtxCreate_v4(&c, NULL, bad_flags[i], 0);
        if (r != CUDA_ERROR_INVALID_VALUE) {
            if (r == CUDA_SUCCESS) track(c);
            fail_msg("cuCtxCreate(flags 0x%x) returned %s", bad_flags[i], ts_cu_name(r));
        }
    }
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxCreate_v2(&c, 0x1000, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuCtxCreate_v4(&c, NULL, 0, 99));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuCtxCreate_v4(&c, NULL, 0, -1));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuCtxCreate_v2(&c, 0, 99));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuCtxCreate_v3(&c, NULL, 0, 0, 99));
    /* Nothing was made current by the failures. */
    assert_null(current());
}

static void test_create_valid_flags(void **state) {
    (void)state;
    const unsigned flags[] = {CU_CTX_SCHED_AUTO,
                              CU_CTX_SCHED_SPIN,
                              CU_CTX_SCHED_YIELD,
                              CU_CTX_SCHED_BLOCKING_SYNC,
                              CU_CTX_MAP_HOST,
                              CU_CTX_LMEM_RESIZE_TO_MAX,
                              CU_CTX_SCHED_BLOCKING_SYNC | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX};
    for (size_t i = 0; i < TS_ARRAY_SIZE(flags); ++i) {
        CUcontext c = NULL;
        CUresult r = cuCtxCreate_v4(&c, NULL, flags[i], 0);
        if (r != CUDA_SUCCESS) fail_msg("cuCtxCreate(flags 0x%x) returned %s", flags[i], ts_cu_name(r));
        track(c);
        assert_ptr_equal(current(), c);
        CUdeviceptr p = 0;
        assert_cu_ok(cuMemAlloc(&p, 4096));
        assert_cu_ok(cuMemFree(p));
        assert_cu_ok(cuCtxSynchronize());
        destroy(c);
        assert_null(current());
    }
}

/* Every revision of cuCtxCreate, and cuCtxDestroy under both names. */
static void test_create_versions(void **state) {
    (void)state;
    CUcontext c = NULL;
    assert_cu_ok(cuCtxCreate_v2(&c, 0, 0));
    track(c);
    assert_ptr_equal(current(), c);
    destroy(c);

    assert_cu_ok(cuCtxCreate_v3(&c, NULL, 0, 0, 0));
    track(c);
    assert_ptr_equal(current(), c);
    destroy(c);

    assert_cu_ok(cuCtxCreate(&c, 0, 0)); /* the legacy export */
    track(c);
    assert_ptr_equal(current(), c);
    assert_cu_ok(cuCtxDestroy(c));
    untrack(c);
    assert_null(current());

    CUctxCreateParams params;
    memset(&params, 0, sizeof params);
    assert_cu_ok(cuCtxCreate_v4(&c, &params, 0, 0));
    track(c);
    assert_ptr_equal(current(), c);
    destroy(c);

    assert_cu_ok(cuCtxCreate_v4(&c, NULL, 0, 0));
    track(c);
    destroy(c);
    assert_null(current());
}

/* Execution affinity and CIG misuse, answered as libcuda 580 answers them
 * (tests/compat/expected/libcuda_misuse.txt): a count without its array is an
 * argument error, a count of 0 or less asks for nothing, any affinity is
 * unsupported; CIG without data is an argument error, with affinity too
 * NOT_SUPPORTED. */
static void test_create_affinity_misuse(void **state) {
    (void)state;
    CUcontext c = NULL;
    CUexecAffinityParam aff;
    memset(&aff, 0, sizeof aff);
    aff.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    aff.param.smCount.val = 7;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxCreate_v3(&c, NULL, 5, 0, 0));
    assert_cu(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, cuCtxCreate_v3(&c, &aff, 1, 0, 0));
    const int none[] = {-1, 0};
    for (unsigned i = 0; i < 2; ++i) {
        assert_cu_ok(cuCtxCreate_v3(&c, &aff, none[i], 0, 0));
        track(c);
        destroy(c);
        assert_cu_ok(cuCtxCreate_v3(&c, NULL, none[i], 0, 0));
        track(c);
        destroy(c);
    }
    CUctxCreateParams params;
    memset(&params, 0, sizeof params);
    params.numExecAffinityParams = 5;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxCreate_v4(&c, &params, 0, 0));
    params.numExecAffinityParams = -3;
    assert_cu_ok(cuCtxCreate_v4(&c, &params, 0, 0));
    track(c);
    destroy(c);
    params.execAffinityParams = &aff;
    params.numExecAffinityParams = 1;
    assert_cu(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, cuCtxCreate_v4(&c, &params, 0, 0));
    CUctxCigParam cig;
    memset(&cig, 0, sizeof cig);
    params.cigParams = &cig;
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, cuCtxCreate_v4(&c, &params, 0, 0));
    params.execAffinityParams = NULL;
    params.numExecAffinityParams = 0;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxCreate_v4(&c, &params, 0, 0));
    cig.sharedDataType = CIG_DATA_TYPE_NV_BLOB;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxCreate_v4(&c, &params, 0, 0));
    assert_null(current());
}

static void test_create_then_query(void **state) {
    (void)state;
    CUcontext c = create(0);
    assert_ptr_equal(current(), c);
    CUdevice d = -7;
    assert_cu_ok(cuCtxGetDevice(&d));
    assert_int_equal(d, 0);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxGetDevice(NULL));
    assert_cu_ok(cuCtxSynchronize());
    size_t fr = 0, to = 0;
    assert_cu_ok(cuMemGetInfo(&fr, &to));
    assert_true(fr > 0 && fr <= to);
    destroy(c);
    assert_null(current());
}

/* Two contexts are different handles with separate memory. */
static void test_two_contexts_are_distinct(void **state) {
    (void)state;
    CUcontext a = create(0);
    CUdeviceptr pa = 0;
    assert_cu_ok(cuMemAlloc(&pa, 1000));
    CUcontext b = create(0);
    assert_ptr_not_equal(a, b);
    CUdeviceptr pb = 0;
    assert_cu_ok(cuMemAlloc(&pb, 1000));
    assert_true(pa != pb);
    /* Unified addressing: a's memory is reachable while b is current. */
    unsigned char in[1000], out[1000];
    ts_fill_random(in, sizeof in, 0xC0);
    assert_cu_ok(cuMemcpyHtoD(pa, in, sizeof in));
    assert_cu_ok(cuMemcpyDtoD(pb, pa, sizeof in));
    assert_cu_ok(cuMemcpyDtoH(out, pb, sizeof out));
    assert_memory_equal(in, out, sizeof in);
    destroy(b);
    assert_ptr_equal(current(), a);
    assert_cu_ok(cuMemFree(pa));
    destroy(a);
    assert_null(current());
}

/* ------------------------------------------------------------ the stack */

static void test_push_pop(void **state) {
    (void)state;
    CUcontext c = create(0);
    CUcontext c2 = create(CU_CTX_SCHED_BLOCKING_SYNC);
    assert_ptr_equal(current(), c2);

    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c2);
    assert_ptr_equal(current(), c);
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c);
    assert_null(current());

    popped = (CUcontext)1;
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxPopCurrent(&popped));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxPopCurrent(NULL));

    assert_cu_ok(cuCtxPushCurrent(c));
    assert_ptr_equal(current(), c);
    assert_cu_ok(cuCtxPushCurrent(c2));
    assert_ptr_equal(current(), c2);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxPushCurrent(NULL));
    assert_ptr_equal(current(), c2);
    assert_cu_ok(cuCtxPopCurrent(NULL)); /* pop without reading it */
    assert_ptr_equal(current(), c);

    /* The same context twice on the stack. */
    assert_cu_ok(cuCtxPushCurrent(c));
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c);
    assert_ptr_equal(current(), c);
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_null(current());

    destroy(c2);
    destroy(c);
}

/* cuCtxSetCurrent replaces the top of the stack; NULL pops it. */
static void test_set_current(void **state) {
    (void)state;
    CUcontext c = create(0);
    CUcontext c2 = create(0);
    /* [c, c2] */
    assert_cu_ok(cuCtxSetCurrent(c));
    /* [c, c] */
    assert_ptr_equal(current(), c);
    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c);
    assert_ptr_equal(current(), c);
    assert_cu_ok(cuCtxSetCurrent(c2));
    /* [c2] */
    assert_ptr_equal(current(), c2);
    assert_cu_ok(cuCtxSetCurrent(NULL));
    assert_null(current());
    assert_cu_ok(cuCtxSetCurrent(NULL));
    assert_null(current());
    /* On an empty stack it pushes. */
    assert_cu_ok(cuCtxSetCurrent(c));
    assert_ptr_equal(current(), c);
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c);
    assert_null(current());
    destroy(c);
    destroy(c2);
}

/* ------------------------------------------------------------ destruction */

static void test_destroy(void **state) {
    (void)state;
    CUcontext c = create(0);
    CUcontext c2 = create(0);
    assert_cu_ok(cuCtxSetCurrent(c)); /* [c, c] -> c2 is current nowhere */
    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    /* [c] */
    destroy(c2);
    assert_ptr_equal(current(), c);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxDestroy_v2(NULL));
    /* A second destroy: libcuda 580 on the H200 answers either, from run to
     * run of the same sequence (libcuda_contexts.txt first recorded
     * INVALID_CONTEXT for "cuCtxDestroy(c2) twice", a later probe run
     * CONTEXT_IS_DESTROYED; fresh processes gave both, depending on what
     * else had been created and destroyed). */
    assert_cu_either(CUDA_ERROR_CONTEXT_IS_DESTROYED, CUDA_ERROR_INVALID_CONTEXT, cuCtxDestroy_v2(c2));

    /* Destroying the current context pops it. */
    destroy(c);
    assert_null(current());
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxSynchronize());
    CUdeviceptr p = 0;
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&p, 16));
    assert_cu_either(CUDA_ERROR_CONTEXT_IS_DESTROYED, CUDA_ERROR_INVALID_CONTEXT, cuCtxDestroy_v2(c));
}

/* Destroying a context below the top of the stack leaves it there,
 * destroyed: it is found again once the contexts above it are popped. */
static void test_destroy_below_top(void **state) {
    (void)state;
    CUcontext c1 = create(0);
    CUcontext c2 = create(0);
    destroy(c1);
    assert_ptr_equal(current(), c2);
    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c2);
    assert_ptr_equal(current(), c1);
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxSynchronize());
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c1);
    assert_null(current());
    destroy(c2);
}

/* A destroyed context that is still on the stack (pushed twice, destroyed
 * once) stays current: the calls that need it say it is destroyed. */
static void test_destroyed_but_current(void **state) {
    (void)state;
    CUcontext c3 = create(0);
    assert_cu_ok(cuCtxPushCurrent(c3));
    destroy(c3);
    assert_ptr_equal(current(), c3);
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxSynchronize());
    CUdeviceptr p = 0;
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuMemAlloc(&p, 16));
    CUdevice d = -7;
    assert_cu_ok(cuCtxGetDevice(&d));
    assert_int_equal(d, 0);
    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c3);
    assert_null(current());
}

/* ------------------------------------------------------------ primary context */

static void primary_state(unsigned *flags, int *active) {
    *flags = 77;
    *active = 77;
    assert_cu_ok(cuDevicePrimaryCtxGetState(0, flags, active));
}

static void test_primary_context(void **state) {
    (void)state;
    unsigned flags;
    int active;
    primary_state(&flags, &active);
    assert_int_equal(flags, 0);
    assert_int_equal(active, 0);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxGetState(0, NULL, &active));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxGetState(0, &flags, NULL));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxGetState(99, &flags, &active));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuDevicePrimaryCtxRelease(0));

    CUcontext c = NULL, c2 = NULL;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxRetain(NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxRetain(&c, 99));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxRetain(&c, -1));

    assert_cu_ok(cuDevicePrimaryCtxRetain(&c, 0));
    ++primary_refs;
    assert_non_null(c);
    primary_state(&flags, &active);
    assert_int_equal(active, 1);
    assert_null(current()); /* retaining does not make it current */
    assert_cu_ok(cuDevicePrimaryCtxRetain(&c2, 0));
    ++primary_refs;
    assert_ptr_equal(c, c2);

    assert_cu_ok(cuCtxSetCurrent(c));
    CUdeviceptr p = 0;
    assert_cu_ok(cuMemAlloc(&p, 4096));
    assert_cu_ok(cuMemFree(p));
    CUdevice d = -7;
    assert_cu_ok(cuCtxGetDevice(&d));
    assert_int_equal(d, 0);

    assert_cu_ok(cuDevicePrimaryCtxRelease(0));
    --primary_refs;
    primary_state(&flags, &active);
    assert_int_equal(active, 1);
    assert_cu_ok(cuDevicePrimaryCtxRelease(0));
    --primary_refs;
    primary_state(&flags, &active);
    assert_int_equal(flags, 0);
    assert_int_equal(active, 0);

    /* Still current, but gone. */
    assert_ptr_equal(current(), c);
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuMemAlloc(&p, 4096));
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxSynchronize());
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuDevicePrimaryCtxRelease(0));
    assert_cu_ok(cuDevicePrimaryCtxReset(0)); /* inactive: nothing to do */
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxReset(99));

    /* Retained again: the same handle, working again. */
    assert_cu_ok(cuDevicePrimaryCtxRetain(&c2, 0));
    ++primary_refs;
    assert_ptr_equal(c, c2);
    assert_cu_ok(cuCtxSetCurrent(c2));
    assert_cu_ok(cuMemAlloc(&p, 4096));

    /* Reset while active: destroyed (its memory with it) but still retained. */
    assert_cu_ok(cuDevicePrimaryCtxReset(0));
    primary_state(&flags, &active);
    assert_int_equal(active, 0);
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuMemFree(p));
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuMemAlloc(&p, 4096));
    primary_state(&flags, &active);
    assert_int_equal(active, 0);
    assert_cu_ok(cuDevicePrimaryCtxRelease(0));
    --primary_refs;
    assert_cu_ok(cuCtxSetCurrent(NULL));
    assert_null(current());
}

/* The flags given to cuDevicePrimaryCtxSetFlags are the ones reported. */
static void test_primary_context_flags(void **state) {
    (void)state;
    unsigned flags;
    int active;
    assert_cu_ok(cuDevicePrimaryCtxSetFlags(0, CU_CTX_SCHED_BLOCKING_SYNC));
    primary_state(&flags, &active);
    assert_int_equal(flags, CU_CTX_SCHED_BLOCKING_SYNC);
    assert_int_equal(active, 0);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxSetFlags(0, 0x1000));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxSetFlags(0, CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxSetFlags(99, 0));
    assert_cu_ok(cuDevicePrimaryCtxSetFlags(0, 0));
    primary_state(&flags, &active);
    assert_int_equal(flags, 0);
}

/* ------------------------------------------------------------ threads */

/* What a worker thread saw; cmocka's assertions stay in the test's thread. */
struct worker {
    CUcontext ctx;
    pthread_barrier_t *barrier;
    int index;
    CUdeviceptr out_ptr;
    CUcontext own_ctx;
    unsigned char *in, *out; /* SHARED_BYTES each */
    char error[256];
};

#define W_EXPECT(w, expected, call)                                                                    \
    do {                                                                                               \
        CUresult r_ = (call);                                                                          \
        if (r_ != (expected)) {                                                                        \
            snprintf((w)->error, sizeof (w)->error, "line %d: %s returned %s, expected %s", __LINE__, \
                     #call, ts_cu_name(r_), ts_cu_name(expected));                                     \
            return NULL;                                                                               \
        }                                                                                              \
    } while (0)
#define W_TRUE(w, cond)                                                                               \
    do {                                                                                              \
        if (!(cond)) {                                                                                \
            snprintf((w)->error, sizeof (w)->error, "line %d: %s is false", __LINE__, #cond);        \
            return NULL;                                                                              \
        }                                                                                             \
    } while (0)

static void run_workers(struct worker *w, int n, void *(*fn)(void *)) {
    pthread_t tid[16];
    assert_true(n <= 16);
    for (int i = 0; i < n; ++i) assert_int_equal(pthread_create(&tid[i], NULL, fn, &w[i]), 0);
    for (int i = 0; i < n; ++i) pthread_join(tid[i], NULL);
    for (int i = 0; i < n; ++i)
        if (w[i].error[0]) fail_msg("thread %d: %s", i, w[i].error);
}

static const unsigned char kPattern[] = "written by the other thread";

static void *stack_worker(void *arg) {
    struct worker *w = arg;
    CUcontext c = (CUcontext)1;
    W_EXPECT(w, CUDA_SUCCESS, cuCtxGetCurrent(&c));
    W_TRUE(w, c == NULL); /* not current here */
    CUdevice d = -7;
    W_EXPECT(w, CUDA_ERROR_INVALID_CONTEXT, cuCtxGetDevice(&d));
    CUdeviceptr p = 0;
    W_EXPECT(w, CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&p, 64));

    /* Pushed here, it works here. */
    W_EXPECT(w, CUDA_SUCCESS, cuCtxPushCurrent(w->ctx));
    W_EXPECT(w, CUDA_SUCCESS, cuCtxGetCurrent(&c));
    W_TRUE(w, c == w->ctx);
    W_EXPECT(w, CUDA_SUCCESS, cuMemAlloc(&p, sizeof kPattern));
    W_EXPECT(w, CUDA_SUCCESS, cuMemcpyHtoD(p, kPattern, sizeof kPattern));
    w->out_ptr = p;
    CUcontext popped = NULL;
    W_EXPECT(w, CUDA_SUCCESS, cuCtxPopCurrent(&popped));
    W_TRUE(w, popped == w->ctx);
    W_EXPECT(w, CUDA_SUCCESS, cuCtxGetCurrent(&c));
    W_TRUE(w, c == NULL);

    /* A context made here and left current here when the thread ends. */
    W_EXPECT(w, CUDA_SUCCESS, cuCtxCreate_v4(&w->own_ctx, NULL, 0, 0));
    return NULL;
}

/* The stack is per thread: a context current in one thread is not current in
 * another, which can push it and use it. */
static void test_thread_stack_is_per_thread(void **state) {
    (void)state;
    CUcontext c = create(0);
    struct worker w;
    memset(&w, 0, sizeof w);
    w.ctx = c;
    run_workers(&w, 1, stack_worker);
    assert_non_null(w.own_ctx);
    track(w.own_ctx);
    /* Nothing the thread did changed this thread's stack. */
    assert_ptr_equal(current(), c);
    unsigned char out[sizeof kPattern];
    assert_cu_ok(cuMemcpyDtoH(out, w.out_ptr, sizeof out));
    assert_memory_equal(out, kPattern, sizeof kPattern);
    assert_cu_ok(cuMemFree(w.out_ptr));
    /* Handles are process-wide: the thread's context can be destroyed here. */
    assert_ptr_not_equal(w.own_ctx, c);
    destroy(w.own_ctx);
    assert_ptr_equal(current(), c);
    destroy(c);
}

static void *destroyed_elsewhere_worker(void *arg) {
    struct worker *w = arg;
    W_EXPECT(w, CUDA_SUCCESS, cuCtxPushCurrent(w->ctx));
    pthread_barrier_wait(w->barrier); /* pushed */
    pthread_barrier_wait(w->barrier); /* destroyed by the test's thread */
    CUcontext c = NULL;
    W_EXPECT(w, CUDA_SUCCESS, cuCtxGetCurrent(&c));
    W_TRUE(w, c == w->ctx);
    W_EXPECT(w, CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxSynchronize());
    CUdeviceptr p = 0;
    W_EXPECT(w, CUDA_ERROR_CONTEXT_IS_DESTROYED, cuMemAlloc(&p, 64));
    W_EXPECT(w, CUDA_SUCCESS, cuCtxPopCurrent(&c));
    W_TRUE(w, c == w->ctx);
    return NULL;
}

/* CUDA: "If ctx is current to other threads, then ctx will remain current to
 * those threads, and attempting to access ctx from those threads will result
 * in the error CUDA_ERROR_CONTEXT_IS_DESTROYED." */
static void test_thread_context_destroyed_elsewhere(void **state) {
    (void)state;
    CUcontext c = create(0);
    assert_cu_ok(cuCtxPopCurrent(NULL));
    pthread_barrier_t barrier;
    assert_int_equal(pthread_barrier_init(&barrier, NULL, 2), 0);
    struct worker w;
    memset(&w, 0, sizeof w);
    w.ctx = c;
    w.barrier = &barrier;
    pthread_t tid;
    assert_int_equal(pthread_create(&tid, NULL, destroyed_elsewhere_worker, &w), 0);
    pthread_barrier_wait(&barrier);
    CUresult r = cuCtxDestroy_v2(c);
    if (r == CUDA_SUCCESS) untrack(c);
    pthread_barrier_wait(&barrier);
    pthread_join(tid, NULL);
    pthread_barrier_destroy(&barrier);
    assert_cu_ok(r);
    if (w.error[0]) fail_msg("thread: %s", w.error);
    assert_null(current());
}

#define SHARED_THREADS 4
#define SHARED_ROUNDS 12
#define SHARED_BYTES 300000

static void *shared_worker(void *arg) {
    struct worker *w = arg;
    W_EXPECT(w, CUDA_SUCCESS, cuCtxPushCurrent(w->ctx));
    pthread_barrier_wait(w->barrier);
    ts_rng rng;
    ts_rng_init(&rng, 0x5EED0000u + (uint64_t)w->index);
    unsigned char *in = w->in, *out = w->out;
    for (int round = 0; round < SHARED_ROUNDS; ++round) {
        size_t n = 1 + (size_t)ts_rng_below(&rng, SHARED_BYTES - 1);
        ts_fill_random(in, n, ts_rng_next(&rng));
        memset(out, 0, n);
        CUdeviceptr a = 0, b = 0;
        W_EXPECT(w, CUDA_SUCCESS, cuMemAlloc(&a, n));
        W_EXPECT(w, CUDA_SUCCESS, cuMemAlloc(&b, n));
        W_EXPECT(w, CUDA_SUCCESS, cuMemcpyHtoD(a, in, n));
        W_EXPECT(w, CUDA_SUCCESS, cuMemcpyDtoD(b, a, n));
        W_EXPECT(w, CUDA_SUCCESS, cuMemcpyDtoH(out, b, n));
        if (memcmp(in, out, n) != 0) {
            snprintf(w->error, sizeof w->error, "round %d: %zu bytes came back different", round, n);
            return NULL;
        }
        W_EXPECT(w, CUDA_SUCCESS, cuMemFree(a));
        W_EXPECT(w, CUDA_SUCCESS, cuMemFree(b));
    }
    CUcontext popped = NULL;
    W_EXPECT(w, CUDA_SUCCESS, cuCtxPopCurrent(&popped));
    W_TRUE(w, popped == w->ctx);
    return NULL;
}

/* Several threads using one context at once, each with its own data. */
static void test_threads_share_a_context(void **state) {
    (void)state;
    CUcontext c = create(0);
    pthread_barrier_t barrier;
    assert_int_equal(pthread_barrier_init(&barrier, NULL, SHARED_THREADS), 0);
    struct worker w[SHARED_THREADS];
    memset(w, 0, sizeof w);
    for (int i = 0; i < SHARED_THREADS; ++i) {
        w[i].ctx = c;
        w[i].barrier = &barrier;
        w[i].index = i;
        w[i].in = ts_malloc(SHARED_BYTES);
        w[i].out = ts_malloc(SHARED_BYTES);
    }
    run_workers(w, SHARED_THREADS, shared_worker);
    pthread_barrier_destroy(&barrier);
    assert_ptr_equal(current(), c);
    destroy(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        CTX_TEST(test_no_current_context),
        CTX_TEST(test_create_bad_arguments),
        CTX_TEST(test_create_valid_flags),
        CTX_TEST(test_create_versions),
        CTX_TEST(test_create_affinity_misuse),
        CTX_TEST(test_create_then_query),
        CTX_TEST(test_two_contexts_are_distinct),
        CTX_TEST(test_push_pop),
        CTX_TEST(test_set_current),
        CTX_TEST(test_destroy),
        CTX_TEST(test_destroy_below_top),
        CTX_TEST(test_destroyed_but_current),
        CTX_TEST(test_primary_context),
        CTX_TEST(test_primary_context_flags),
        CTX_TEST(test_thread_stack_is_per_thread),
        CTX_TEST(test_thread_context_destroyed_elsewhere),
        CTX_TEST(test_threads_share_a_context),
    };
    return cmocka_run_group_tests_name("context", tests, ts_group_init, NULL);
}
