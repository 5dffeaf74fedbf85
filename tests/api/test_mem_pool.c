/*
 * Memory pools and stream-ordered allocation: cuMemAllocAsync,
 * cuMemAllocFromPoolAsync, cuMemFreeAsync, cuMemPool*, cuDeviceGet/Set(Default)MemPool.
 *
 * The heart of it is stream order: memory freed in one stream must not be
 * handed to another stream while work before the free may still use it.
 * The tests look at it through the data: busy work keeps the freeing stream
 * running, a copy behind the busy work still reads the freed allocation, and
 * the other stream writes whatever it was given at once; the bytes the copy
 * read must be the ones written before the free. Addresses show the reuse
 * rules (same stream, event dependencies, completed frees, internal
 * dependencies) without relying on them for safety. Expected codes and
 * counters: libcuda 580 on an H200 (tests/compat/expected/libcuda_mem_pools.txt).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_ctx_setup, pool_teardown)

static CUmemoryPool default_pool(void) {
    CUmemoryPool p = NULL;
    assert_cu_ok(cuDeviceGetDefaultMemPool(&p, 0));
    assert_non_null(p);
    return p;
}

static cuuint64_t attr64(CUmemoryPool p, CUmemPool_attribute a) {
    cuuint64_t v = 0;
    assert_cu_ok(cuMemPoolGetAttribute(p, a, &v));
    return v;
}

static int attr_int(CUmemoryPool p, CUmemPool_attribute a) {
    int v = -1;
    assert_cu_ok(cuMemPoolGetAttribute(p, a, &v));
    return v;
}

static void set_int(CUmemoryPool p, CUmemPool_attribute a, int v) { assert_cu_ok(cuMemPoolSetAttribute(p, a, &v)); }
static void set64(CUmemoryPool p, CUmemPool_attribute a, cuuint64_t v) {
    assert_cu_ok(cuMemPoolSetAttribute(p, a, &v));
}

/* Every test leaves the default pool as it found it. */
static int pool_teardown(void **state) {
    CUmemoryPool p = NULL;
    if (cuDeviceGetDefaultMemPool(&p, 0) == CUDA_SUCCESS) {
        int one = 1;
        cuuint64_t zero = 0;
        cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &one);
        cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &one);
        cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, &one);
        cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &zero);
        cuDeviceSetMemPool(0, p);
    }
    return ts_ctx_teardown(state);
}

/* ------------------------------------------------------------ pools */

static void test_device_supports_pools(void **state) {
    (void)state;
    int v = 0;
    assert_cu_ok(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0));
    assert_int_equal(v, 1);
    CUmemoryPool def = default_pool(), cur = NULL;
    assert_cu_ok(cuDeviceGetMemPool(&cur, 0));
    assert_ptr_equal(cur, def);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetDefaultMemPool(NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetDefaultMemPool(&cur, 99));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetMemPool(&cur, -1)); /* (sic) libcuda */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceSetMemPool(99, def));
    /* CUDA 13's getters by location. */
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    assert_cu_ok(cuMemGetDefaultMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    assert_ptr_equal(cur, def);
    assert_cu_ok(cuMemGetMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    assert_ptr_equal(cur, def);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemGetDefaultMemPool(&cur, NULL, CU_MEM_ALLOCATION_TYPE_PINNED));
}

static void test_attributes(void **state) {
    (void)state;
    CUmemoryPool def = default_pool();
    assert_int_equal(attr_int(def, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES), 1);
    assert_int_equal(attr_int(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC), 1);
    assert_int_equal(attr_int(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES), 1);
    assert_int_equal(attr64(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), 0);
    set_int(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, 0);
    assert_int_equal(attr_int(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC), 0);
    set64(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 12345);
    assert_int_equal(attr64(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), 12345);
    cuuint64_t v = 7;
    /* Current amounts are read-only; the high watermarks only reset. */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
    v = 0;
    assert_cu_ok(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolGetAttribute(def, (CUmemPool_attribute)0, &v));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolGetAttribute(def, (CUmemPool_attribute)9, &v));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolGetAttribute(NULL, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
    assert_cu(CUDA_ERROR_INVALID_VALUE,
              cuMemPoolGetAttribute((CUmemoryPool)(uintptr_t)0x1000, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
}

static CUmemPoolProps device_props(void) {
    CUmemPoolProps p;
    memset(&p, 0, sizeof p);
    p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    return p;
}

static void test_create_destroy(void **state) {
    (void)state;
    CUmemoryPool p = NULL, def = default_pool();
    CUmemPoolProps pr = device_props();
    assert_cu_ok(cuMemPoolCreate(&p, &pr));
    assert_non_null(p);
    assert_true(p != def);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolCreate(NULL, &pr));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolCreate(&p, NULL));
    CUmemoryPool q = NULL;
    pr.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolCreate(&q, &pr));
    pr = device_props(), pr.location.id = 99;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolCreate(&q, &pr));
    pr = device_props(), pr.reserved[3] = 1;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolCreate(&q, &pr));
    pr = device_props(), pr.handleTypes = CU_MEM_HANDLE_TYPE_WIN32;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolCreate(&q, &pr));
    /* A pool may name Linux's handle types; exporting (IPC) is what is not provided. */
    pr = device_props(), pr.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    assert_cu_ok(cuMemPoolCreate(&q, &pr));
    int fd = -1;
    assert_cu(CUDA_ERROR_NOT_SUPPORTED,
              cuMemPoolExportToShareableHandle(&fd, q, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    assert_cu_ok(cuMemPoolDestroy(q));
    /* Host pools and managed memory are not provided. */
    pr = device_props(), pr.location.type = CU_MEM_LOCATION_TYPE_HOST;
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, cuMemPoolCreate(&q, &pr));
    pr = device_props(), pr.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, cuMemPoolCreate(&q, &pr));
    /* Access: the owning device reads and writes. */
    CUmemLocation dev0 = {CU_MEM_LOCATION_TYPE_DEVICE, 0}, host = {CU_MEM_LOCATION_TYPE_HOST, 0},
                  dev99 = {CU_MEM_LOCATION_TYPE_DEVICE, 99};
    CUmemAccess_flags f = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    assert_cu_ok(cuMemPoolGetAccess(&f, p, &dev0));
    assert_int_equal(f, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    assert_cu_ok(cuMemPoolGetAccess(&f, p, &host));
    assert_int_equal(f, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolGetAccess(&f, p, &dev99));
    CUmemAccessDesc ad = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    assert_cu_ok(cuMemPoolSetAccess(p, &ad, 1));
    ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, cuMemPoolSetAccess(p, &ad, 1));
    ad.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuMemPoolSetAccess(p, &ad, 1)); /* (sic) libcuda */
    ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE, ad.location.id = 99;
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuMemPoolSetAccess(p, &ad, 1));
    assert_cu_ok(cuMemPoolSetAccess(p, &ad, 0));
    /* The device's current pool. */
    assert_cu_ok(cuDeviceSetMemPool(0, p));
    CUmemoryPool cur = NULL;
    assert_cu_ok(cuDeviceGetMemPool(&cur, 0));
    assert_ptr_equal(cur, p);
    CUdeviceptr d = 0;
    assert_cu_ok(cuMemAllocAsync(&d, 1000, NULL));
    CUmemoryPool from = NULL;
    assert_cu_ok(cuPointerGetAttribute(&from, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, d));
    assert_ptr_equal(from, p);
    assert_cu_ok(cuMemFreeAsync(d, NULL));
    /* Destroying the current pool makes the default one current again. */
    assert_cu_ok(cuMemPoolDestroy(p));
    assert_cu_ok(cuDeviceGetMemPool(&cur, 0));
    assert_ptr_equal(cur, def);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolDestroy(p));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolDestroy(NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemPoolDestroy(def));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceSetMemPool(0, p));
    assert_cu_ok(cuCtxSynchronize());
}

/* A pool destroyed while one of its allocations is live: the allocation
 * stays usable until freed, then the pool's memory goes. */
static void test_destroy_with_live_allocation(void **state) {
    (void)state;
    CUmemoryPool p = NULL;
    CUmemPoolProps pr = device_props();
    assert_cu_ok(cuMemPoolCreate(&p, &pr));
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = 0;
    assert_cu_ok(cuMemAllocFromPoolAsync(&d, 5000, p, s));
    assert_cu_ok(cuMemPoolDestroy(p));
    unsigned char in[5000], out[5000];
    ts_fill_random(in, sizeof in, 77);
    assert_cu_ok(cuMemcpyHtoDAsync(d, in, sizeof in, s));
    assert_cu_ok(cuMemcpyDtoHAsync(out, d, sizeof out, s));
    assert_cu_ok(cuMemFreeAsync(d, s));
    assert_cu_ok(cuStreamSynchronize(s));
    assert_bytes_equal(in, out, sizeof in);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFreeAsync(d, s));
    assert_cu_ok(cuStreamDestroy(s));
}

/* ------------------------------------------------------------ allocation */

static void test_alloc_async_arguments(void **state) {
    (void)state;
    CUstream s = ts_stream_new(0);
    CUdeviceptr d = 77;
    /* Nothing to allocate: success and NULL, which cuMemFreeAsync takes. */
    assert_cu_ok(cuMemAllocAsync(&d, 0, s));
    assert_true(d == 0);
    assert_cu_ok(cuMemFreeAsync(0, s));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemAllocAsync(NULL, 16, s));
    assert_cu(CUDA_ERROR_OUT_OF_MEMORY, cuMemAllocAsync(&d, (size_t)1 << 50, s));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemAllocAsync(&d, 16, (CUstream)(uintptr_t)0x1234));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemAllocFromPoolAsync(&d, 16, NULL, s));
    int host = 0;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFreeAsync(ts_dptr(&host), s));
    /* cuMemAlloc's memory: cuMemFreeAsync frees it too (libcuda). */
    CUdeviceptr plain = ts_dev_alloc(100);
    assert_cu_ok(cuMemFreeAsync(plain, s));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(plain));
    assert_cu_ok(cuMemAllocAsync(&d, 1000, s));
    assert_true(d % 256 == 0);
    CUdeviceptr base = 0;
    size_t size = 0;
    assert_cu_ok(cuMemGetAddressRange(&base, &size, d + 999));
    assert_true(base == d && size == 1000);
    unsigned type = 0;
    assert_cu_ok(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d));
    assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
    /* Pool memory is the pool's, not a context's. */
    CUcontext owner = (CUcontext)(uintptr_t)1;
    assert_cu_ok(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, d));
    assert_null(owner);
    int ordinal = -1;
    assert_cu_ok(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d));
    assert_int_equal(ordinal, 0);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFreeAsync(d + 1, s));
    assert_cu_ok(cuMemFreeAsync(d, s));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFreeAsync(d, s));
    /* cuMemFree takes stream-ordered memory too (after the work before it). */
    assert_cu_ok(cuMemAllocAsync(&d, 1000, s));
    assert_cu_ok(cuMemFree(d));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFreeAsync(d, s));
    assert_cu_ok(cuStreamSynchronize(s));
    assert_cu_ok(cuStreamDestroy(s));
}

/* Allocate, fill, copy and free in stream order, sizes odd, across pool
 * chunk boundaries; the data is right and the pool's counters add up. */
static void test_stream_ordered_data(void **state) {
    (void)state;
    CUmemoryPool def = default_pool();
    set64(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, ~(cuuint64_t)0);
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    static const size_t sizes[] = {1, 3, 4097, 65537, TS_MiB + 1, 20 * TS_MiB + 3, 40 * TS_MiB + 7};
    for (size_t i = 0; i < TS_ARRAY_SIZE(sizes); ++i) {
        const size_t n = sizes[i];
        unsigned char *in = ts_malloc(n), *out = ts_pinned_alloc(n);
        ts_fill_random(in, n, 500 + i);
        memset(out, 0, n);
        CUdeviceptr a = 0, b = 0;
        assert_cu_ok(cuMemAllocAsync(&a, n, s));
        assert_cu_ok(cuMemcpyHtoDAsync(a, in, n, s));
        assert_cu_ok(cuMemAllocAsync(&b, n, s));
        assert_true(b >= a + n || a >= b + n);
        assert_cu_ok(cuMemcpyDtoDAsync(b, a, n, s));
        assert_cu_ok(cuMemFreeAsync(a, s));
        assert_cu_ok(cuMemcpyDtoHAsync(out, b, n, s));
        assert_cu_ok(cuStreamSynchronize(s));
        assert_bytes_equal(in, out, n);
        assert_true(attr64(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) >= n);
        assert_true(attr64(def, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) >= attr64(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT));
        assert_cu_ok(cuMemFreeAsync(b, s));
        ts_free(in);
    }
    assert_cu_ok(cuStreamSynchronize(s));
    assert_int_equal(attr64(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0);
    assert_true(attr64(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH) >= 2 * (40 * TS_MiB + 7));
    /* The threshold kept the memory; trimming gives it back. */
    assert_true(attr64(def, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) > 0);
    assert_cu_ok(cuMemPoolTrimTo(def, 0));
    assert_int_equal(attr64(def, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0);
    assert_cu_ok(cuStreamDestroy(s));
}

/* With the release threshold at 0 (the default) a synchronisation gives
 * unused memory back; above it the pool keeps it. */
static void test_release_threshold(void **state) {
    (void)state;
    CUmemoryPool p = NULL;
    CUmemPoolProps pr = device_props();
    assert_cu_ok(cuMemPoolCreate(&p, &pr));
    CUstream s = ts_stream_new(0);
    CUdeviceptr d = 0;
    assert_cu_ok(cuMemAllocFromPoolAsync(&d, 3 * TS_MiB + 1, p, s));
    const cuuint64_t reserved = attr64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    assert_int_equal(reserved, 32 * TS_MiB); /* libcuda's step */
    assert_int_equal(attr64(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 3 * TS_MiB + 1); /* bytes asked for */
    assert_true(attr64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == reserved);
    assert_cu_ok(cuMemFreeAsync(d, s));
    assert_cu_ok(cuStreamSynchronize(s));
    assert_int_equal(attr64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0);
    assert_int_equal(attr64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), reserved);
    set64(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 64 * TS_MiB);
    assert_cu_ok(cuMemAllocFromPoolAsync(&d, 3 * TS_MiB + 1, p, s));
    assert_cu_ok(cuMemFreeAsync(d, s));
    assert_cu_ok(cuCtxSynchronize());
    assert_int_equal(attr64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), reserved);
    /* The same memory serves the next allocation. */
    CUdeviceptr again = 0;
    assert_cu_ok(cuMemAllocFromPoolAsync(&again, 3 * TS_MiB + 1, p, s));
    assert_true(again == d);
    assert_cu_ok(cuMemFreeAsync(again, s));
    assert_cu_ok(cuStreamSynchronize(s));
    assert_cu_ok(cuMemPoolTrimTo(p, 0));
    assert_int_equal(attr64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0);
    assert_cu_ok(cuMemPoolDestroy(p));
    assert_cu_ok(cuStreamDestroy(s));
}

/* A pool with a size limit refuses to grow past it. */
static void test_max_size(void **state) {
    (void)state;
    CUmemoryPool p = NULL;
    CUmemPoolProps pr = device_props();
    pr.maxSize = 8 * TS_MiB;
    assert_cu_ok(cuMemPoolCreate(&p, &pr));
    CUstream s = ts_stream_new(0);
    CUdeviceptr a = 0, b = 0;
    assert_cu_ok(cuMemAllocFromPoolAsync(&a, 5 * TS_MiB, p, s));
    assert_cu(CUDA_ERROR_OUT_OF_MEMORY, cuMemAllocFromPoolAsync(&b, 5 * TS_MiB, p, s));
    assert_cu_ok(cuMemFreeAsync(a, s));
    /* The same stream may take the freed memory at once. */
    assert_cu_ok(cuMemAllocFromPoolAsync(&b, 5 * TS_MiB, p, s));
    assert_true(b == a);
    assert_cu_ok(cuMemFreeAsync(b, s));
    assert_cu_ok(cuStreamSynchronize(s));
    assert_cu_ok(cuMemPoolDestroy(p));
    assert_cu_ok(cuStreamDestroy(s));
}

/* ------------------------------------------------------------ reuse in stream order */

/* Stream A: x <- fresh bytes, busy work, out <- x (behind the busy work),
 * free x. Stream B then allocates the same size and overwrites it at once.
 * Whatever B was given, out must hold the fresh bytes. Returns whether B
 * got x's address. */
typedef struct {
    CUstream a, b;
    ts_busy busy;
    size_t n;
    unsigned char *in, *out;
    CUmemoryPool pool;
} reuse_rig;

/* A fresh pool as the device's current one, keeping its memory: the first
 * allocation starts its first chunk, so which range an allocation gets
 * shows which rule allowed it. */
static CUmemoryPool fresh_pool(size_t max_size) {
    CUmemoryPool p = NULL;
    CUmemPoolProps pr = device_props();
    pr.maxSize = max_size;
    assert_cu_ok(cuMemPoolCreate(&p, &pr));
    set64(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, ~(cuuint64_t)0);
    assert_cu_ok(cuDeviceSetMemPool(0, p));
    return p;
}

static reuse_rig rig_new(unsigned flags_b) {
    reuse_rig r;
    r.pool = fresh_pool(0);
    r.a = ts_stream_new(CU_STREAM_NON_BLOCKING);
    r.b = ts_stream_new(flags_b);
    r.busy = ts_busy_new();
    r.n = 2 * TS_MiB + 333;
    r.in = ts_malloc(r.n);
    r.out = ts_pinned_alloc(r.n);
    return r;
}

static void rig_free(reuse_rig *r) {
    ts_busy_free(&r->busy);
    assert_cu_ok(cuStreamDestroy(r->a));
    assert_cu_ok(cuStreamDestroy(r->b));
    assert_cu_ok(cuDeviceSetMemPool(0, default_pool()));
    assert_cu_ok(cuMemPoolDestroy(r->pool));
}

/* Queues A's part; returns x. 'wait' (may be NULL) runs between the free and B's allocation. */
static CUdeviceptr rig_free_behind_busy(reuse_rig *r, uint64_t seed) {
    ts_fill_random(r->in, r->n, seed);
    memset(r->out, 0, r->n);
    CUdeviceptr x = 0;
    assert_cu_ok(cuMemAllocAsync(&x, r->n, r->a));
    assert_cu_ok(cuMemcpyHtoDAsync(x, r->in, r->n, r->a));
    ts_busy_until_not_ready(&r->busy, r->a);
    assert_cu_ok(cuMemcpyDtoHAsync(r->out, x, r->n, r->a));
    assert_cu_ok(cuMemFreeAsync(x, r->a));
    return x;
}

/* B's part: allocate, overwrite at once, free; then check A's bytes. */
static CUdeviceptr rig_take(reuse_rig *r, CUstream b) {
    CUdeviceptr y = 0;
    assert_cu_ok(cuMemAllocAsync(&y, r->n, b));
    assert_cu_ok(cuMemsetD8Async(y, 0xEE, r->n, b));
    assert_cu_ok(cuMemFreeAsync(y, b));
    assert_cu_ok(cuCtxSynchronize());
    assert_bytes_equal(r->in, r->out, r->n);
    return y;
}

static void test_reuse_same_stream(void **state) {
    (void)state;
    reuse_rig r = rig_new(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = rig_free_behind_busy(&r, 1);
    /* The freeing stream may reuse at once: its later work follows the free. */
    CUdeviceptr y = rig_take(&r, r.a);
    assert_true(y == x);
    rig_free(&r);
}

static void test_no_reuse_across_streams_while_pending(void **state) {
    (void)state;
    reuse_rig r = rig_new(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = rig_free_behind_busy(&r, 2);
    assert_cu(CUDA_ERROR_NOT_READY, cuStreamQuery(r.a));
    CUdeviceptr y = rig_take(&r, r.b);
    assert_true(y != x);
    rig_free(&r);
}

static void test_reuse_after_event_dependency(void **state) {
    (void)state;
    reuse_rig r = rig_new(CU_STREAM_NON_BLOCKING);
    CUevent ev = ts_event_new(CU_EVENT_DISABLE_TIMING);
    CUdeviceptr x = rig_free_behind_busy(&r, 3);
    assert_cu_ok(cuEventRecord(ev, r.a));
    assert_cu_ok(cuStreamWaitEvent(r.b, ev, 0));
    CUdeviceptr y = rig_take(&r, r.b);
    assert_true(y == x);
    /* Without following event dependencies, no. */
    set_int(r.pool, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, 0);
    x = rig_free_behind_busy(&r, 4);
    assert_cu_ok(cuEventRecord(ev, r.a));
    assert_cu_ok(cuStreamWaitEvent(r.b, ev, 0));
    y = rig_take(&r, r.b);
    assert_true(y != x);
    assert_cu_ok(cuEventDestroy(ev));
    rig_free(&r);
}

/* An event recorded in a third stream that itself waited for the freeing
 * stream: the dependency is followed through both. */
static void test_reuse_follows_transitive_events(void **state) {
    (void)state;
    reuse_rig r = rig_new(CU_STREAM_NON_BLOCKING);
    CUstream c = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent e1 = ts_event_new(CU_EVENT_DISABLE_TIMING), e2 = ts_event_new(CU_EVENT_DISABLE_TIMING);
    CUdeviceptr x = rig_free_behind_busy(&r, 5);
    assert_cu_ok(cuEventRecord(e1, r.a));
    assert_cu_ok(cuStreamWaitEvent(c, e1, 0));
    assert_cu_ok(cuEventRecord(e2, c));
    assert_cu_ok(cuStreamWaitEvent(r.b, e2, 0));
    CUdeviceptr y = rig_take(&r, r.b);
    assert_true(y == x);
    assert_cu_ok(cuEventDestroy(e1));
    assert_cu_ok(cuEventDestroy(e2));
    assert_cu_ok(cuStreamDestroy(c));
    rig_free(&r);
}

/* Polls the stream until its work is done, without a synchronising call. */
static void poll_done(CUstream s) {
    const double t0 = ts_now();
    CUresult q;
    while ((q = cuStreamQuery(s)) == CUDA_ERROR_NOT_READY && ts_now() - t0 < 60) usleep(200);
    assert_cu_ok(q);
}

static void test_reuse_after_completion(void **state) {
    (void)state;
    reuse_rig r = rig_new(CU_STREAM_NON_BLOCKING);
    /* Done (seen by polling): reused by anyone (opportunistic). */
    CUdeviceptr x = rig_free_behind_busy(&r, 6);
    poll_done(r.a);
    CUdeviceptr y = rig_take(&r, r.b);
    assert_true(y == x);
    /* Without opportunistic reuse, not... */
    set_int(r.pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, 0);
    x = rig_free_behind_busy(&r, 7);
    poll_done(r.a);
    y = rig_take(&r, r.b);
    assert_true(y != x);
    /* ... unless a synchronising call saw the free done (libcuda reuses then too). */
    x = rig_free_behind_busy(&r, 8);
    assert_cu_ok(cuStreamSynchronize(r.a));
    y = rig_take(&r, r.b);
    assert_true(y == x);
    rig_free(&r);
}

/* The legacy stream and a blocking stream order themselves: a blocking
 * stream's later work follows the legacy stream's earlier work. */
static void test_reuse_legacy_to_blocking_stream(void **state) {
    (void)state;
    CUmemoryPool pool = fresh_pool(0);
    ts_busy busy = ts_busy_new();
    CUstream b = ts_stream_new(0), nb = ts_stream_new(CU_STREAM_NON_BLOCKING);
    const size_t n = TS_MiB + 5;
    unsigned char *in = ts_malloc(n), *out = ts_pinned_alloc(n);
    ts_fill_random(in, n, 8);
    CUdeviceptr x = 0, y = 0;
    assert_cu_ok(cuMemAllocAsync(&x, n, NULL));
    assert_cu_ok(cuMemcpyHtoDAsync(x, in, n, NULL));
    ts_busy_until_not_ready(&busy, NULL);
    assert_cu_ok(cuMemcpyDtoHAsync(out, x, n, NULL));
    assert_cu_ok(cuMemFreeAsync(x, NULL));
    /* A non-blocking stream does not follow the legacy stream. */
    assert_cu_ok(cuMemAllocAsync(&y, n, nb));
    assert_true(y != x);
    assert_cu_ok(cuMemsetD8Async(y, 0xEE, n, nb));
    assert_cu_ok(cuMemFreeAsync(y, nb));
    /* A blocking one does. */
    assert_cu_ok(cuMemAllocAsync(&y, n, b));
    assert_true(y == x);
    assert_cu_ok(cuMemsetD8Async(y, 0xEE, n, b));
    assert_cu_ok(cuMemFreeAsync(y, b));
    assert_cu_ok(cuCtxSynchronize());
    assert_bytes_equal(in, out, n);
    ts_busy_free(&busy);
    assert_cu_ok(cuStreamDestroy(b));
    assert_cu_ok(cuStreamDestroy(nb));
    assert_cu_ok(cuDeviceSetMemPool(0, default_pool()));
    assert_cu_ok(cuMemPoolDestroy(pool));
}

/* When the pool cannot grow, the allocating stream is made to wait for a
 * pending free (internal dependencies); without that, out of memory. */
static void test_reuse_by_internal_dependency(void **state) {
    (void)state;
    reuse_rig r = rig_new(CU_STREAM_NON_BLOCKING);
    CUmemoryPool p = fresh_pool(4 * TS_MiB);
    CUdeviceptr x = rig_free_behind_busy(&r, 9);
    CUdeviceptr y = rig_take(&r, r.b);
    assert_true(y == x);
    set_int(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, 0);
    rig_free_behind_busy(&r, 10);
    assert_cu(CUDA_ERROR_OUT_OF_MEMORY, cuMemAllocAsync(&y, r.n, r.b));
    assert_cu_ok(cuCtxSynchronize());
    assert_bytes_equal(r.in, r.out, r.n);
    assert_cu_ok(cuMemPoolDestroy(p));
    rig_free(&r);
}

/* ------------------------------------------------------------ contexts */

/* Pool memory is the pool's: it outlives the context that allocated it
 * (whose pending frees complete with it) and serves the device's other
 * contexts. */
static void test_pool_memory_outlives_its_context(void **state) {
    ts_fixture *fx = ts_fx(state);
    CUmemoryPool pool = fresh_pool(0);
    CUcontext c;
    assert_cu_ok(cuCtxCreate(&c, NULL, 0, fx->dev));
    CUstream s;
    assert_cu_ok(cuStreamCreate(&s, 0));
    const size_t n = 4097;
    unsigned char in[4097], out[4097];
    ts_fill_random(in, n, 11);
    CUdeviceptr d = 0, e = 0;
    assert_cu_ok(cuMemAllocAsync(&d, n, s));
    assert_cu_ok(cuMemcpyHtoDAsync(d, in, n, s));
    assert_cu_ok(cuMemAllocAsync(&e, n, s));
    assert_cu_ok(cuMemFreeAsync(e, s)); /* pending when the context goes */
    assert_cu_ok(cuCtxDestroy(c));
    assert_cu_ok(cuCtxSetCurrent(fx->ctx));
    assert_int_equal(attr64(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), n);
    CUdeviceptr base = 0;
    size_t size = 0;
    assert_cu_ok(cuMemGetAddressRange(&base, &size, d + 5));
    assert_true(base == d && size == n);
    memset(out, 0, n);
    assert_cu_ok(cuMemcpyDtoH(out, d, n));
    assert_bytes_equal(in, out, n);
    assert_cu_ok(cuMemFreeAsync(d, NULL));
    assert_cu_ok(cuCtxSynchronize());
    assert_int_equal(attr64(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0);
    assert_cu_ok(cuDeviceSetMemPool(0, default_pool()));
    assert_cu_ok(cuMemPoolDestroy(pool));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_device_supports_pools),
        TEST(test_attributes),
        TEST(test_create_destroy),
        TEST(test_destroy_with_live_allocation),
        TEST(test_alloc_async_arguments),
        TEST(test_stream_ordered_data),
        TEST(test_release_threshold),
        TEST(test_max_size),
        TEST(test_reuse_same_stream),
        TEST(test_no_reuse_across_streams_while_pending),
        TEST(test_reuse_after_event_dependency),
        TEST(test_reuse_follows_transitive_events),
        TEST(test_reuse_after_completion),
        TEST(test_reuse_legacy_to_blocking_stream),
        TEST(test_reuse_by_internal_dependency),
        TEST(test_pool_memory_outlives_its_context),
    };
    ts_watchdog_arm("test_mem_pool", 600);
    return cmocka_run_group_tests(tests, ts_group_init, NULL);
}
