/*
 * Memory management: cuMemAlloc/cuMemFree, cuMemGetInfo,
 * cuMemGetAddressRange, pinned host memory (cuMemAllocHost, cuMemHostAlloc,
 * cuMemFreeHost, cuMemHostGetDevicePointer) and registered host memory
 * (cuMemHostRegister/cuMemHostUnregister), and what cuCtxDestroy frees.
 *
 * Expected codes: libcuda 580 on an H200 (tests/compat/expected/
 * libcuda_memory.txt); where the probe is silent, CUDA's documentation.
 * Each test runs in a fresh context (ts_ctx_setup) that its teardown
 * destroys, freeing whatever a failed test left behind.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_ctx_setup, ts_ctx_teardown)

static void mem_info(size_t *free_bytes, size_t *total) { assert_cu_ok(cuMemGetInfo(free_bytes, total)); }

/* Writes a seeded pattern to [p, p+n) and reads it back. */
static void check_round_trip(CUdeviceptr p, size_t n, uint64_t seed) {
    unsigned char *in = ts_malloc(n), *out = ts_malloc(n);
    ts_fill_random(in, n, seed);
    memset(out, 0, n);
    assert_cu_ok(cuMemcpyHtoD(p, in, n));
    assert_cu_ok(cuMemcpyDtoH(out, p, n));
    assert_bytes_equal(in, out, n);
    ts_free(in);
    ts_free(out);
}

/* ------------------------------------------------------------ cuMemAlloc */

static const size_t kSizes[] = {1,          3,          256,          257,           1000,
                                4096,       65537,      1 << 20,      (2 << 20) + 1, 64 << 20,
                                (64 << 20) + 1};

/* Each size: aligned to at least 256 bytes, found by cuMemGetAddressRange
 * from inside with its exact size, usable to its last byte, and disjoint
 * from the others (all live at once). */
static void test_alloc_sizes(void **state) {
    (void)state;
    CUdeviceptr p[TS_ARRAY_SIZE(kSizes)];
    for (size_t i = 0; i < TS_ARRAY_SIZE(kSizes); ++i) {
        const size_t n = kSizes[i];
        p[i] = 0;
        assert_cu_ok(cuMemAlloc(&p[i], n));
        assert_true(p[i] != 0);
        if (p[i] % 256 != 0) fail_msg("cuMemAlloc(%zu) = 0x%llx: not 256-byte aligned", n, (unsigned long long)p[i]);
        const CUdeviceptr probes[] = {p[i], p[i] + n / 2, p[i] + n - 1};
        for (size_t k = 0; k < TS_ARRAY_SIZE(probes); ++k) {
            CUdeviceptr base = 0;
            size_t size = 0;
            assert_cu_ok(cuMemGetAddressRange(&base, &size, probes[k]));
            assert_true(base == p[i]);
            assert_true(size == n);
        }
        /* The first and last bytes are ours. */
        unsigned char ends[2] = {(unsigned char)(0x11 + i), (unsigned char)(0xEE - i)}, back[2] = {0, 0};
        assert_cu_ok(cuMemcpyHtoD(p[i], &ends[0], 1));
        assert_cu_ok(cuMemcpyHtoD(p[i] + n - 1, &ends[1], 1));
        assert_cu_ok(cuMemcpyDtoH(&back[0], p[i], 1));
        assert_cu_ok(cuMemcpyDtoH(&back[1], p[i] + n - 1, 1));
        if (n > 1) assert_memory_equal(back, ends, 2);
        else assert_int_equal(back[0], ends[1]);
    }
    for (size_t i = 0; i < TS_ARRAY_SIZE(kSizes); ++i)
        for (size_t j = 0; j < TS_ARRAY_SIZE(kSizes); ++j)
            if (i != j && p[i] < p[j] + kSizes[j] && p[j] < p[i] + kSizes[i])
                fail_msg("allocations of %zu and %zu bytes overlap", kSizes[i], kSizes[j]);
    for (size_t i = 0; i < TS_ARRAY_SIZE(kSizes); ++i) assert_cu_ok(cuMemFree(p[i]));
}

static void test_alloc_bad_arguments(void **state) {
    (void)state;
    CUdeviceptr p = 0;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(&p, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(NULL, 16));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(NULL, 0));
}

/* Many small allocations with frees in between (fixed seed): live ones never
 * overlap, each keeps its own bytes, and all are found by address. */
#define CHURN_SLOTS 96
#define CHURN_STEPS 1500
static void test_alloc_many_small_interleaved(void **state) {
    (void)state;
    CUdeviceptr ptr[CHURN_SLOTS] = {0};
    size_t size[CHURN_SLOTS] = {0};
    unsigned char tag[CHURN_SLOTS] = {0};
    ts_rng rng;
    ts_rng_init(&rng, 0xA110C);
    unsigned char buf[4];
    for (int step = 0; step < CHURN_STEPS; ++step) {
        size_t s = (size_t)ts_rng_below(&rng, CHURN_SLOTS);
        if (ptr[s]) {
            /* Its first and last bytes still hold its tag. */
            assert_cu_ok(cuMemcpyDtoH(&buf[0], ptr[s], 1));
            assert_cu_ok(cuMemcpyDtoH(&buf[1], ptr[s] + size[s] - 1, 1));
            if (buf[0] != tag[s] || buf[1] != tag[s])
                fail_msg("step %d: allocation of %zu bytes lost its tag", step, size[s]);
            assert_cu_ok(cuMemFree(ptr[s]));
            ptr[s] = 0;
            continue;
        }
        /* Mostly tiny, sometimes a few pages, now and then 100 KiB. */
        uint64_t kind = ts_rng_below(&rng, 10);
        size[s] = 1 + (size_t)ts_rng_below(&rng, kind < 6 ? 300 : kind < 9 ? 20000 : 100000);
        assert_cu_ok(cuMemAlloc(&ptr[s], size[s]));
        assert_true(ptr[s] % 256 == 0);
        tag[s] = (unsigned char)(1 + ts_rng_below(&rng, 255));
        assert_cu_ok(cuMemsetD8(ptr[s], tag[s], size[s]));
        for (size_t o = 0; o < CHURN_SLOTS; ++o)
            if (o != s && ptr[o] && ptr[s] < ptr[o] + size[o] && ptr[o] < ptr[s] + size[s])
                fail_msg("step %d: new allocation [0x%llx, +%zu) overlaps [0x%llx, +%zu)", step,
                         (unsigned long long)ptr[s], size[s], (unsigned long long)ptr[o], size[o]);
    }
    for (size_t s = 0; s < CHURN_SLOTS; ++s) {
        if (!ptr[s]) continue;
        CUdeviceptr base = 0;
        size_t sz = 0;
        assert_cu_ok(cuMemGetAddressRange(&base, &sz, ptr[s] + size[s] - 1));
        assert_true(base == ptr[s] && sz == size[s]);
        unsigned char *back = ts_malloc(size[s]);
        assert_cu_ok(cuMemcpyDtoH(back, ptr[s], size[s]));
        assert_bytes_all(back, tag[s], size[s]);
        ts_free(back);
        assert_cu_ok(cuMemFree(ptr[s]));
    }
}

/* Requests that cannot fit: CUDA_ERROR_OUT_OF_MEMORY, and the library keeps
 * working afterwards. */
static void test_alloc_out_of_memory(void **state) {
    (void)state;
    size_t free0 = 0, total = 0;
    mem_info(&free0, &total);
    CUdeviceptr p = 0;
    assert_cu(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&p, (size_t)1 << 50));
    assert_cu(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&p, free0 + TS_MiB));
    assert_cu(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&p, total + TS_MiB));
    assert_cu(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&p, (size_t)-1));
    assert_cu(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&p, (size_t)-1 - 4095));

    size_t free1 = 0;
    mem_info(&free1, &total);
    /* Nothing of the failed requests is held (the heap may keep a chunk). */
    assert_true(free1 + 128 * TS_MiB >= free0);
    assert_cu_ok(cuMemAlloc(&p, TS_MiB + 5));
    check_round_trip(p, TS_MiB + 5, 0x00F);
    assert_cu_ok(cuMemFree(p));
    assert_cu_ok(cuCtxSynchronize());
    assert_cu(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&p, (size_t)1 << 50));
}

/* Allocating and freeing 1 GiB twenty times: nothing leaks. */
static void test_alloc_free_1gib_repeatedly(void **state) {
    (void)state;
    size_t free0 = 0, total = 0;
    mem_info(&free0, &total);
    if (free0 < 2 * TS_GiB) ts_skip("the device has %zu MiB free, 2 GiB are needed", free0 >> 20);
    for (int i = 0; i < 20; ++i) {
        CUdeviceptr p = 0;
        CUresult r = cuMemAlloc(&p, TS_GiB);
        if (r != CUDA_SUCCESS) fail_msg("iteration %d: cuMemAlloc(1 GiB) returned %s", i, ts_cu_name(r));
        CUdeviceptr base = 0;
        size_t size = 0;
        assert_cu_ok(cuMemGetAddressRange(&base, &size, p + TS_GiB - 1));
        assert_true(base == p && size == TS_GiB);
        size_t f = 0;
        mem_info(&f, &total);
        assert_true(f + TS_GiB <= free0 + 128 * TS_MiB); /* the GiB is accounted for */
        assert_cu_ok(cuMemFree(p));
    }
    size_t free1 = 0;
    mem_info(&free1, &total);
    if (free1 + 128 * TS_MiB < free0)
        fail_msg("free memory went from %zu to %zu MiB", free0 >> 20, free1 >> 20);
}

/* ------------------------------------------------------------ cuMemGetInfo */

static void test_mem_get_info(void **state) {
    (void)state;
    size_t fr = 0, to = 0;
    mem_info(&fr, &to);
    assert_true(fr > 0 && fr <= to);
    size_t dev_total = 0;
    assert_cu_ok(cuDeviceTotalMem(&dev_total, 0));
    assert_true(to == dev_total);
    size_t only = 0;
    assert_cu_ok(cuMemGetInfo(NULL, &only));
    assert_true(only == to);
    only = 0;
    assert_cu_ok(cuMemGetInfo(&only, NULL));
    assert_true(only <= to);
    assert_cu_ok(cuMemGetInfo(NULL, NULL));

    /* A large allocation shows in the free memory, and comes back. */
    CUdeviceptr p = 0;
    assert_cu_ok(cuMemAlloc(&p, 256 * TS_MiB));
    size_t fr2 = 0;
    mem_info(&fr2, &to);
    if (fr2 + 256 * TS_MiB > fr)
        fail_msg("free memory %zu MiB before and %zu MiB after allocating 256 MiB", fr >> 20, fr2 >> 20);
    assert_cu_ok(cuMemFree(p));
    size_t fr3 = 0;
    mem_info(&fr3, &to);
    assert_true(fr3 >= fr2 + 256 * TS_MiB);
}

/* ------------------------------------------------------------ cuMemGetAddressRange */

static void test_address_range(void **state) {
    (void)state;
    CUdeviceptr p = 0, base = 0;
    size_t size = 0;
    assert_cu_ok(cuMemAlloc(&p, 1000));
    assert_cu_ok(cuMemGetAddressRange(&base, &size, p + 999));
    assert_true(base == p && size == 1000);
    assert_cu_ok(cuMemGetAddressRange(&base, NULL, p + 1));
    assert_true(base == p);
    assert_cu_ok(cuMemGetAddressRange(NULL, &size, p + 1));
    assert_true(size == 1000);
    assert_cu_ok(cuMemGetAddressRange(NULL, NULL, p));
    /* One past the end, and further. */
    assert_cu(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, p + 1000));
    assert_cu(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, p + 4096));
    assert_cu(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, 0));
    int host_var = 0;
    assert_cu(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, ts_dptr(&host_var)));
    assert_cu_ok(cuMemFree(p));
    assert_cu(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, p));
    assert_cu(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, p + 10));

    /* A size that is a whole number of pages: the next byte is not it. */
    assert_cu_ok(cuMemAlloc(&p, 4096));
    assert_cu_ok(cuMemGetAddressRange(&base, &size, p + 4095));
    assert_true(base == p && size == 4096);
    assert_cu(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, p + 4096));
    assert_cu_ok(cuMemFree(p));
}

/* ------------------------------------------------------------ cuMemFree */

static void test_mem_free(void **state) {
    (void)state;
    CUdeviceptr p = 0;
    assert_cu_ok(cuMemAlloc(&p, 1000));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(p + 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(p + 999));
    /* Still allocated after the refused frees. */
    CUdeviceptr base = 0;
    assert_cu_ok(cuMemGetAddressRange(&base, NULL, p));
    assert_cu_ok(cuMemFree(p));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(p));
    assert_cu_ok(cuMemFree(0));
    int host_var = 0;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(ts_dptr(&host_var)));
    /* Pinned host memory is freed with cuMemFreeHost, not cuMemFree. */
    void *h = NULL;
    assert_cu_ok(cuMemAllocHost(&h, 4096));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(ts_dptr(h)));
    assert_cu_ok(cuMemFreeHost(h));
}

/* ------------------------------------------------------------ pinned host memory */

static void test_alloc_host(void **state) {
    (void)state;
    void *h = (void *)1;
    assert_cu_ok(cuMemAllocHost(&h, 0));
    assert_cu_ok(cuMemFreeHost(h)); /* whatever it gave, NULL included */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemAllocHost(NULL, 16));

    h = NULL;
    assert_cu_ok(cuMemAllocHost(&h, 100));
    assert_non_null(h);
    assert_true(((uintptr_t)h & 4095) == 0);
    /* Ordinary memory to the CPU. */
    memset(h, 0x5A, 100);
    assert_bytes_all(h, 0x5A, 100);

    CUdeviceptr dp = 0;
    assert_cu_ok(cuMemHostGetDevicePointer(&dp, h, 0));
    assert_true(dp == ts_dptr(h));
    assert_cu_ok(cuMemHostGetDevicePointer(&dp, (char *)h + 10, 0));
    assert_true(dp == ts_dptr(h) + 10);
    assert_cu_ok(cuMemHostGetDevicePointer(&dp, (char *)h + 99, 0));
    assert_true(dp == ts_dptr(h) + 99);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostGetDevicePointer(&dp, h, 1));
    int host_var = 0;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostGetDevicePointer(&dp, &host_var, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostGetDevicePointer(NULL, h, 0));
    CUdeviceptr base = 0;
    size_t size = 0;
    assert_cu_ok(cuMemGetAddressRange(&base, &size, ts_dptr(h)));
    assert_true(base == ts_dptr(h));

    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFreeHost((char *)h + 1));
    assert_cu_ok(cuMemFreeHost(h));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFreeHost(h));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostGetDevicePointer(&dp, h, 0));
    assert_cu_ok(cuMemFreeHost(NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFreeHost(&host_var));
}

static void test_host_alloc_flags(void **state) {
    (void)state;
    const unsigned good[] = {0,
                             CU_MEMHOSTALLOC_PORTABLE,
                             CU_MEMHOSTALLOC_DEVICEMAP,
                             CU_MEMHOSTALLOC_WRITECOMBINED,
                             CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED};
    for (size_t i = 0; i < TS_ARRAY_SIZE(good); ++i) {
        void *h = NULL;
        CUresult r = cuMemHostAlloc(&h, 1000, good[i]);
        if (r != CUDA_SUCCESS) fail_msg("cuMemHostAlloc(flags 0x%x) returned %s", good[i], ts_cu_name(r));
        assert_non_null(h);
        memset(h, (int)i + 1, 1000);
        CUdeviceptr dp = 0;
        assert_cu_ok(cuMemHostGetDevicePointer(&dp, h, 0));
        assert_true(dp == ts_dptr(h));
        check_round_trip(dp, 1000, 0xF1A6 + i); /* through the device's view, not the CPU's */
        assert_cu_ok(cuMemFreeHost(h));
    }
    void *h = NULL;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostAlloc(&h, 1000, 0x80));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostAlloc(NULL, 1000, 0));
    h = (void *)1;
    assert_cu_ok(cuMemHostAlloc(&h, 0, 0));
    assert_cu_ok(cuMemFreeHost(h));
}

/* ------------------------------------------------------------ registered host memory */

static void test_host_register(void **state) {
    (void)state;
    char *buf = ts_malloc(100000);
    CUdeviceptr dp = 0;
    assert_cu_ok(cuMemHostRegister(buf + 3, 50000, 0));
    assert_cu(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(buf + 3, 50000, 0));
    assert_cu(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(buf + 20000, 50000, 0));
    assert_cu(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(buf, 4, 0)); /* its first byte */
    assert_cu(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(buf + 50002, 100, 0)); /* its last */
    assert_cu_ok(cuMemHostGetDevicePointer(&dp, buf + 3, 0));
    assert_true(dp == ts_dptr(buf + 3));
    assert_cu_ok(cuMemHostGetDevicePointer(&dp, buf + 1000, 0));
    assert_true(dp == ts_dptr(buf + 1000));
    assert_cu_ok(cuMemHostGetDevicePointer(&dp, buf + 50002, 0));
    assert_true(dp == ts_dptr(buf + 50002));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostGetDevicePointer(&dp, buf + 3, 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostUnregister(buf + 100));
    assert_cu_ok(cuMemHostUnregister(buf + 3));
    assert_cu(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(buf + 3));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostGetDevicePointer(&dp, buf + 3, 0));

    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostRegister(buf, 0, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostRegister(NULL, 4096, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostRegister(buf, 4096, 0x40));
    assert_cu_ok(cuMemHostRegister(buf, 4096, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE));
    assert_cu_ok(cuMemHostUnregister(buf));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostUnregister(NULL));
    int host_var = 0;
    assert_cu(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(&host_var));
}

/* Two registrations sharing a page but no byte both succeed and both work;
 * undoing one leaves the other working. */
static void test_host_register_shared_page(void **state) {
    (void)state;
    char *buf = ts_malloc(64 * 1024);
    char *a = buf + 5, *b = buf + 5 + 3000; /* [a, a+3000) and [b, b+7001): adjacent */
    assert_cu_ok(cuMemHostRegister(a, 3000, 0));
    assert_cu_ok(cuMemHostRegister(b, 7001, 0));
    assert_cu(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(b - 1, 2, 0));
    CUdeviceptr da = 0, db = 0;
    assert_cu_ok(cuMemHostGetDevicePointer(&da, a, 0));
    assert_cu_ok(cuMemHostGetDevicePointer(&db, b, 0));
    assert_true(da == ts_dptr(a) && db == ts_dptr(b));

    CUdeviceptr d = 0;
    assert_cu_ok(cuMemAlloc(&d, 10001));
    ts_fill_random(a, 10001, 0x5A9E);
    unsigned char *expect = ts_malloc(10001);
    memcpy(expect, a, 10001);
    assert_cu_ok(cuMemcpyHtoD(d, a, 3000));
    assert_cu_ok(cuMemcpyHtoD(d + 3000, b, 7001));
    memset(a, 0, 10001);
    assert_cu_ok(cuMemcpyDtoH(a, d, 3000));
    assert_cu_ok(cuMemcpyDtoH(b, d + 3000, 7001));
    assert_bytes_equal(expect, a, 10001);

    assert_cu_ok(cuMemHostUnregister(a));
    /* b's pages, shared with a, stay pinned for b. */
    memset(b, 0, 7001);
    assert_cu_ok(cuMemcpyDtoH(b, d + 3000, 7001));
    assert_bytes_equal(expect + 3000, b, 7001);
    assert_cu_ok(cuMemcpy(db, d, 7001));
    assert_bytes_equal(expect, b, 7001);
    assert_cu_ok(cuMemHostUnregister(b));
    assert_cu_ok(cuMemFree(d));
}

/* ------------------------------------------------------------ cuCtxDestroy */

/* Destroying a context frees its memory: its pointers are unknown afterwards
 * and its host ranges can be registered again. */
static void test_context_destroy_frees_memory(void **state) {
    ts_fixture *fx = ts_fx(state);
    size_t free0 = 0, total = 0;
    mem_info(&free0, &total);

    CUcontext other = NULL;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev));
    CUdeviceptr p = 0;
    assert_cu_ok(cuMemAlloc(&p, 512 * TS_MiB));
    CUdeviceptr small = 0;
    assert_cu_ok(cuMemAlloc(&small, 1000));
    void *h = NULL;
    assert_cu_ok(cuMemAllocHost(&h, 8192));
    char *buf = ts_malloc(20000);
    assert_cu_ok(cuMemHostRegister(buf + 1, 10000, 0));
    assert_cu_ok(cuCtxDestroy(other));

    /* Back in the fixture's context. */
    CUcontext cur = NULL;
    assert_cu_ok(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, fx->ctx);
    CUdeviceptr base = 0;
    assert_cu(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, NULL, p));
    assert_cu(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, NULL, small + 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(p));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(small));
    CUdeviceptr dp = 0;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostGetDevicePointer(&dp, h, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemHostGetDevicePointer(&dp, buf + 1, 0));
    unsigned char x[4] = {1, 2, 3, 4};
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(small, x, sizeof x));
    assert_cu_ok(cuMemHostRegister(buf + 1, 10000, 0));
    assert_cu_ok(cuMemHostUnregister(buf + 1));
    size_t free1 = 0;
    mem_info(&free1, &total);
    if (free1 + 128 * TS_MiB < free0)
        fail_msg("free memory %zu MiB before the context, %zu MiB after destroying it", free0 >> 20, free1 >> 20);

    /* Without any context current: still unknown. */
    CUdeviceptr q = 0;
    assert_cu_ok(cuMemAlloc(&q, 1000));
    assert_cu_ok(cuCtxDestroy(fx->ctx));
    fx->ctx = NULL;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(q));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_alloc_sizes),
        TEST(test_alloc_bad_arguments),
        TEST(test_alloc_many_small_interleaved),
        TEST(test_alloc_out_of_memory),
        TEST(test_alloc_free_1gib_repeatedly),
        TEST(test_mem_get_info),
        TEST(test_address_range),
        TEST(test_mem_free),
        TEST(test_alloc_host),
        TEST(test_host_alloc_flags),
        TEST(test_host_register),
        TEST(test_host_register_shared_page),
        TEST(test_context_destroy_frees_memory),
    };
    return cmocka_run_group_tests_name("memory", tests, ts_group_init, NULL);
}
