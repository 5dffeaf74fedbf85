/*
 * The per-thread default stream build of a program: with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM defined, <cuda.h> maps the copy and
 * memset calls to their _ptds (synchronous) and _ptsz (asynchronous)
 * exports, and the NULL stream means the calling thread's default stream.
 * The data checks of test_copy.c, through those exports.
 */
#define _POSIX_C_SOURCE 200809L
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "support/test_support.h"

#if !defined(__CUDA_API_PER_THREAD_DEFAULT_STREAM)
#error "the header did not select the per-thread default stream"
#endif

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_ctx_setup, ts_ctx_teardown)

/* Synchronous forms (_ptds): pageable and pinned, odd sizes and offsets. */
static void test_ptds_sync_copies(void **state) {
    (void)state;
    const size_t sizes[] = {1, 4097, TS_MiB + 13, 8 * TS_MiB + 5};
    for (size_t i = 0; i < TS_ARRAY_SIZE(sizes); ++i) {
        const size_t n = sizes[i];
        unsigned char *src = ts_malloc(n + 3), *out = ts_malloc(n + 7);
        void *pinned = NULL;
        assert_cu_ok(cuMemAllocHost(&pinned, n + 7));
        ts_fill_random(src, n + 3, 0x9700 + i);
        CUdeviceptr a = 0, b = 0;
        assert_cu_ok(cuMemAlloc(&a, n + 5));
        assert_cu_ok(cuMemAlloc(&b, n + 5));
        assert_cu_ok(cuMemcpyHtoD(a + 5, src + 3, n));
        assert_cu_ok(cuMemcpyDtoD(b + 1, a + 5, n));
        memset(out, 0, n + 7);
        assert_cu_ok(cuMemcpyDtoH(out + 7, b + 1, n));
        assert_bytes_equal(src + 3, out + 7, n);
        assert_bytes_all(out, 0, 7);
        /* cuMemcpy (_ptds): device -> pinned -> pageable. */
        memset(pinned, 0, n + 7);
        assert_cu_ok(cuMemcpy(ts_dptr(pinned) + 7, a + 5, n));
        assert_bytes_equal(src + 3, (unsigned char *)pinned + 7, n);
        memset(out, 0, n + 7);
        assert_cu_ok(cuMemcpy(ts_dptr(out), ts_dptr(pinned) + 7, n));
        assert_bytes_equal(src + 3, out, n);
        assert_cu_ok(cuMemFree(a));
        assert_cu_ok(cuMemFree(b));
        assert_cu_ok(cuMemFreeHost(pinned));
        ts_free(src);
        ts_free(out);
    }
}

static void test_ptds_memsets(void **state) {
    (void)state;
    const size_t n = 65536 + 9;
    CUdeviceptr d = 0;
    assert_cu_ok(cuMemAlloc(&d, n));
    unsigned char *expect = ts_malloc(n), *out = ts_malloc(n);
    ts_fill_random(expect, n, 0x97E7);
    assert_cu_ok(cuMemcpyHtoD(d, expect, n));
    assert_cu_ok(cuMemsetD8(d + 1, 0xA1, 1001));
    memset(expect + 1, 0xA1, 1001);
    assert_cu_ok(cuMemsetD16(d + 2000, 0xB2C3, 501));
    for (size_t k = 0; k < 501; ++k) expect[2000 + 2 * k] = 0xC3, expect[2001 + 2 * k] = 0xB2;
    assert_cu_ok(cuMemsetD32Async(d + 4000, 0x01234567u, 3001, NULL));
    for (size_t k = 0; k < 3001; ++k)
        expect[4000 + 4 * k] = 0x67, expect[4001 + 4 * k] = 0x45, expect[4002 + 4 * k] = 0x23,
                          expect[4003 + 4 * k] = 0x01;
    assert_cu_ok(cuMemsetD8Async(d + n - 3, 0xD4, 3, NULL));
    memset(expect + n - 3, 0xD4, 3);
    assert_cu_ok(cuMemsetD16Async(d + 30000, 0xE5F6, 2, NULL));
    expect[30000] = 0xF6, expect[30001] = 0xE5, expect[30002] = 0xF6, expect[30003] = 0xE5;
    assert_cu_ok(cuMemcpyDtoH(out, d, n));
    assert_bytes_equal(expect, out, n);
    /* The argument checks are the same. */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD16(d + 1, 0, 4));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD32Async(d + 2, 0, 4, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(d, 0, n + 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(d, out, n + 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(out, d + 1, n));
    assert_cu_ok(cuMemFree(d));
}

/* Asynchronous forms (_ptsz) on the NULL stream, which is now the calling
 * thread's default stream: a chain, then one cuCtxSynchronize. */
static void async_chain(uint64_t seed, char *error, size_t error_size) {
    const size_t n = 2 * TS_MiB + 3;
    void *src = NULL, *dst = NULL;
    CUdeviceptr a = 0, b = 0;
    CUresult r;
#define TRY(call)                                                                                      \
    do {                                                                                               \
        if ((r = (call)) != CUDA_SUCCESS) {                                                            \
            snprintf(error, error_size, "%s returned %s", #call, ts_cu_name(r));                       \
            goto out;                                                                                  \
        }                                                                                              \
    } while (0)
    TRY(cuMemAllocHost(&src, n));
    TRY(cuMemAllocHost(&dst, n));
    ts_fill_random(src, n, seed);
    memset(dst, 0, n);
    TRY(cuMemAlloc(&a, n));
    TRY(cuMemAlloc(&b, n));
    TRY(cuMemcpyHtoDAsync(a, src, n, NULL));
    TRY(cuMemcpyDtoDAsync(b, a, n, NULL));
    TRY(cuMemsetD8Async(b + 10, 0x66, 100, NULL));
    TRY(cuMemcpyAsync(a, b, n, NULL));
    TRY(cuMemcpyDtoHAsync(dst, a, n, NULL));
    TRY(cuCtxSynchronize());
    memset((unsigned char *)src + 10, 0x66, 100);
    if (memcmp(src, dst, n) != 0) snprintf(error, error_size, "the chain's result is wrong");
out:
    if (a) cuMemFree(a);
    if (b) cuMemFree(b);
    if (src) cuMemFreeHost(src);
    if (dst) cuMemFreeHost(dst);
#undef TRY
}

static void test_ptsz_async_chain(void **state) {
    (void)state;
    char error[256] = "";
    async_chain(0x9751, error, sizeof error);
    if (error[0]) fail_msg("%s", error);
}

struct chain_thread {
    CUcontext ctx;
    uint64_t seed;
    char error[256];
};

static void *chain_thread_main(void *arg) {
    struct chain_thread *t = arg;
    CUresult r = cuCtxPushCurrent(t->ctx);
    if (r != CUDA_SUCCESS) {
        snprintf(t->error, sizeof t->error, "cuCtxPushCurrent returned %s", ts_cu_name(r));
        return NULL;
    }
    for (int i = 0; i < 3 && !t->error[0]; ++i) async_chain(t->seed + (uint64_t)i, t->error, sizeof t->error);
    CUcontext popped = NULL;
    cuCtxPopCurrent(&popped);
    return NULL;
}

/* Several threads, each on its own default stream, at once. */
static void test_ptsz_threads(void **state) {
    ts_fixture *fx = ts_fx(state);
    struct chain_thread t[3];
    pthread_t tid[3];
    for (int i = 0; i < 3; ++i) {
        memset(&t[i], 0, sizeof t[i]);
        t[i].ctx = fx->ctx;
        t[i].seed = 0x97A0 + 16 * (uint64_t)i;
        assert_int_equal(pthread_create(&tid[i], NULL, chain_thread_main, &t[i]), 0);
    }
    for (int i = 0; i < 3; ++i) pthread_join(tid[i], NULL);
    for (int i = 0; i < 3; ++i)
        if (t[i].error[0]) fail_msg("thread %d: %s", i, t[i].error);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_ptds_sync_copies),
        TEST(test_ptds_memsets),
        TEST(test_ptsz_async_chain),
        TEST(test_ptsz_threads),
    };
    return cmocka_run_group_tests_name("copy_ptds", tests, ts_group_init, NULL);
}
