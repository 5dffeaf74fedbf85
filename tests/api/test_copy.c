/*
 * Copies and fills: cuMemcpyHtoD/DtoH/DtoD, cuMemcpy, their Async forms on
 * the NULL, legacy and per-thread streams, cuMemsetD8/D16/D32 (and Async).
 *
 * Data is random (xorshift64*, fixed seeds) at odd sizes and odd offsets, and
 * every check is byte for byte, including the bytes around the destination
 * that must not change. Sizes cross the library's 8 MiB staging buffers.
 * Expected codes for bad input: libcuda 580 on an H200
 * (tests/compat/expected/libcuda_memory.txt); where the probe is silent,
 * CUDA's documentation.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_ctx_setup, ts_ctx_teardown)

static const size_t kSizes[] = {1,
                                3,
                                4095,
                                4097,
                                64 * TS_KiB + 7,
                                TS_MiB + 13,
                                8 * TS_MiB + 5, /* one staging buffer and a bit */
                                64 * TS_MiB + 3};

/* Offsets inside the source and destination buffers: odd on purpose. */
#define SRC_OFF 3
#define DEV_OFF 5
#define DST_OFF 7
#define SLACK 16 /* bytes beyond each range, checked for stray writes */

/* ------------------------------------------------------------ host buffers */

typedef enum { HOST_PAGEABLE, HOST_PINNED, HOST_REGISTERED, HOST_KINDS } host_kind;
static const char *const kKindName[] = {"pageable", "pinned", "registered"};

typedef struct {
    unsigned char *p;
    void *raw;
    size_t n;
    host_kind kind;
} hbuf;

static hbuf host_alloc(host_kind kind, size_t n) {
    hbuf b = {NULL, NULL, n, kind};
    switch (kind) {
    case HOST_PAGEABLE:
        b.raw = ts_malloc(n);
        b.p = b.raw;
        break;
    case HOST_PINNED:
        assert_cu_ok(cuMemAllocHost(&b.raw, n));
        b.p = b.raw;
        break;
    default:
        /* malloc'd, registered from an odd address */
        b.raw = ts_malloc(n + 32);
        b.p = (unsigned char *)b.raw + 13;
        assert_cu_ok(cuMemHostRegister(b.p, n, 0));
        break;
    }
    return b;
}

static void host_free(hbuf *b) {
    switch (b->kind) {
    case HOST_PAGEABLE:
        ts_free(b->raw);
        break;
    case HOST_PINNED:
        assert_cu_ok(cuMemFreeHost(b->raw));
        break;
    default:
        assert_cu_ok(cuMemHostUnregister(b->p));
        ts_free(b->raw);
        break;
    }
    b->p = NULL;
    b->raw = NULL;
}

/* ------------------------------------------------------------ device buffers */

/* A device buffer filled with random bytes; 'mirror' (host) holds what it
 * should contain. */
typedef struct {
    CUdeviceptr d;
    unsigned char *mirror;
    size_t n;
} dbuf;

static dbuf device_alloc(size_t n, uint64_t seed) {
    dbuf b = {0, ts_malloc(n), n};
    assert_cu_ok(cuMemAlloc(&b.d, n));
    ts_fill_random(b.mirror, n, seed);
    assert_cu_ok(cuMemcpyHtoD(b.d, b.mirror, n));
    return b;
}

static void device_free(dbuf *b) {
    assert_cu_ok(cuMemFree(b->d));
    ts_free(b->mirror);
    b->mirror = NULL;
}

/* The device buffer holds exactly its mirror, read back through pageable
 * memory: a synchronous copy on the legacy stream, so after everything
 * issued before it (no cuCtxSynchronize on purpose). */
static void expect_device(const dbuf *b, const char *what) {
    unsigned char *back = ts_malloc(b->n);
    memset(back, 0, b->n);
    assert_cu_ok(cuMemcpyDtoH(back, b->d, b->n));
    if (memcmp(back, b->mirror, b->n) != 0) print_error("device contents wrong after %s\n", what);
    assert_bytes_equal(b->mirror, back, b->n);
    ts_free(back);
}

/* ------------------------------------------------------------ HtoD / DtoH */

/* For each size: host(kind)+SRC_OFF -> device+DEV_OFF -> host(kind)+DST_OFF,
 * nothing around either destination touched. */
static void htod_dtoh_round_trips(host_kind kind) {
    for (size_t i = 0; i < TS_ARRAY_SIZE(kSizes); ++i) {
        const size_t n = kSizes[i];
        const uint64_t seed = 0x10000 * (kind + 1) + i;
        hbuf src = host_alloc(kind, n + SLACK);
        hbuf dst = host_alloc(kind, n + SLACK);
        ts_fill_random(src.p, src.n, seed);
        ts_fill_random(dst.p, dst.n, ~seed);
        unsigned char *expect = ts_malloc(dst.n);
        memcpy(expect, dst.p, dst.n);
        memcpy(expect + DST_OFF, src.p + SRC_OFF, n);
        dbuf dev = device_alloc(n + SLACK, seed * 31);

        assert_cu_ok(cuMemcpyHtoD(dev.d + DEV_OFF, src.p + SRC_OFF, n));
        memcpy(dev.mirror + DEV_OFF, src.p + SRC_OFF, n);
        expect_device(&dev, "cuMemcpyHtoD");
        assert_cu_ok(cuMemcpyDtoH(dst.p + DST_OFF, dev.d + DEV_OFF, n));
        if (memcmp(dst.p, expect, dst.n) != 0) print_error("%s, %zu bytes: DtoH wrong\n", kKindName[kind], n);
        assert_bytes_equal(expect, dst.p, dst.n);
        /* The source was only read. */
        unsigned char *src_again = ts_malloc(src.n);
        ts_fill_random(src_again, src.n, seed);
        assert_bytes_equal(src_again, src.p, src.n);

        ts_free(src_again);
        ts_free(expect);
        device_free(&dev);
        host_free(&src);
        host_free(&dst);
    }
}

static void test_htod_dtoh_pageable(void **state) {
    (void)state;
    htod_dtoh_round_trips(HOST_PAGEABLE);
}

static void test_htod_dtoh_pinned(void **state) {
    (void)state;
    htod_dtoh_round_trips(HOST_PINNED);
}

static void test_htod_dtoh_registered(void **state) {
    (void)state;
    htod_dtoh_round_trips(HOST_REGISTERED);
}

/* Pinned memory named by its device pointer works as the device side of
 * cuMemcpyHtoD/DtoH too (unified addressing). Host memory to host memory is
 * "fully synchronous with respect to the host" (CUDA's API synchronization
 * behavior): the bytes are there when the call returns, no synchronization
 * needed (none is done here on purpose). */
static void test_htod_dtoh_pinned_as_device_side(void **state) {
    (void)state;
    const size_t n = 64 * TS_KiB + 7;
    hbuf pinned = host_alloc(HOST_PINNED, n + SLACK);
    memset(pinned.p, 0, pinned.n);
    unsigned char *src = ts_malloc(n), *out = ts_malloc(n);
    ts_fill_random(src, n, 0xD00D);
    CUdeviceptr dp = 0;
    assert_cu_ok(cuMemHostGetDevicePointer(&dp, pinned.p, 0));
    assert_cu_ok(cuMemcpyHtoD(dp + DEV_OFF, src, n));
    assert_bytes_equal(src, pinned.p + DEV_OFF, n);
    memset(out, 0, n);
    assert_cu_ok(cuMemcpyDtoH(out, dp + DEV_OFF, n));
    assert_bytes_equal(src, out, n);
    host_free(&pinned);
}

/* The same through cuMemcpy: pageable to pinned host memory. */
static void test_memcpy_pageable_to_pinned_is_synchronous(void **state) {
    (void)state;
    const size_t n = 64 * TS_KiB + 7;
    hbuf pinned = host_alloc(HOST_PINNED, n);
    memset(pinned.p, 0, n);
    unsigned char *src = ts_malloc(n);
    ts_fill_random(src, n, 0xD11D);
    assert_cu_ok(cuMemcpy(ts_dptr(pinned.p), ts_dptr(src), n));
    assert_bytes_equal(src, pinned.p, n);
    host_free(&pinned);
}

/* ------------------------------------------------------------ DtoD */

static void test_dtod(void **state) {
    (void)state;
    for (size_t i = 0; i < TS_ARRAY_SIZE(kSizes); ++i) {
        const size_t n = kSizes[i];
        dbuf a = device_alloc(n + SLACK, 0xA000 + i);
        dbuf b = device_alloc(n + SLACK, 0xB000 + i);
        assert_cu_ok(cuMemcpyDtoD(b.d + DST_OFF, a.d + SRC_OFF, n));
        memcpy(b.mirror + DST_OFF, a.mirror + SRC_OFF, n);
        expect_device(&b, "cuMemcpyDtoD");
        expect_device(&a, "cuMemcpyDtoD (its source)");
        device_free(&a);
        device_free(&b);
    }
}

/* Within one allocation, ranges apart. */
static void test_dtod_same_allocation(void **state) {
    (void)state;
    const size_t n = TS_MiB + 13;
    dbuf a = device_alloc(2 * n + SLACK, 0x5A3E);
    assert_cu_ok(cuMemcpyDtoD(a.d + n + DST_OFF, a.d + SRC_OFF, n));
    memmove(a.mirror + n + DST_OFF, a.mirror + SRC_OFF, n);
    expect_device(&a, "cuMemcpyDtoD within an allocation");
    device_free(&a);
}

/* Overlapping source and destination. CUDA does not say what lands in the
 * destination (libcuda 580 on the H200 gives neither memmove's nor memcpy's
 * result: measured, a few thousand bytes of 8 MiB differ from memmove's), but
 * the copy is accepted and nothing outside the destination changes. */
static const long kShifts[] = {1, 7, 4096, -1, -5, -65536};
static const size_t kOverlapSizes[] = {4097, TS_MiB + 13, 8 * TS_MiB + 5};
#define OVERLAP_MARGIN (65536 + SLACK)

static void overlapping_copies(int exact) {
    for (size_t i = 0; i < TS_ARRAY_SIZE(kOverlapSizes); ++i) {
        for (size_t k = 0; k < TS_ARRAY_SIZE(kShifts); ++k) {
            const size_t n = kOverlapSizes[i];
            const long s = kShifts[k];
            if ((size_t)labs(s) >= n) continue;
            dbuf a = device_alloc(n + 2 * OVERLAP_MARGIN, 0x0F00 + 16 * i + k);
            const size_t src = OVERLAP_MARGIN, dst = (size_t)((long)OVERLAP_MARGIN + s);
            assert_cu_ok(cuMemcpyDtoD(a.d + dst, a.d + src, n));
            unsigned char *back = ts_malloc(a.n);
            assert_cu_ok(cuMemcpyDtoH(back, a.d, a.n));
            char what[96];
            snprintf(what, sizeof what, "overlapping cuMemcpyDtoD of %zu bytes, shift %ld: outside", n, s);
            assert_bytes_named(a.mirror, back, dst, what);
            assert_bytes_named(a.mirror + dst + n, back + dst + n, a.n - dst - n, what);
            if (exact) {
                memmove(a.mirror + dst, a.mirror + src, n);
                snprintf(what, sizeof what, "overlapping cuMemcpyDtoD of %zu bytes, shift %ld: as memmove", n, s);
                assert_bytes_named(a.mirror + dst, back + dst, n, what);
            }
            ts_free(back);
            device_free(&a);
        }
    }
}

static void test_dtod_overlapping(void **state) {
    (void)state;
    overlapping_copies(0);
}

/* nvlite's own guarantee, beyond CUDA's: an overlapping device-to-device copy
 * (one copy-engine transfer) gives memmove's result, on the simulator and on
 * the H200 alike (measured). libcuda 580 does not (see above). */
static void test_dtod_overlapping_is_memmove(void **state) {
    (void)state;
    overlapping_copies(1);
}

/* ------------------------------------------------------------ cuMemcpy */

typedef enum { WHERE_DEVICE, WHERE_PINNED, WHERE_PAGEABLE } where;
static const char *const kWhereName[] = {"device", "pinned", "pageable"};

/* One side of a cuMemcpy: 'addr' is what cuMemcpy gets, 'mirror' what it
 * should hold. */
typedef struct {
    where w;
    CUdeviceptr addr;
    unsigned char *host; /* host-side buffers: the memory itself */
    dbuf dev;
} side;

static side side_alloc(where w, size_t n, uint64_t seed) {
    side s;
    memset(&s, 0, sizeof s);
    s.w = w;
    if (w == WHERE_DEVICE) {
        s.dev = device_alloc(n, seed);
        s.addr = s.dev.d;
    } else {
        if (w == WHERE_PINNED)
            assert_cu_ok(cuMemAllocHost((void **)&s.host, n));
        else
            s.host = ts_malloc(n);
        ts_fill_random(s.host, n, seed);
        s.addr = ts_dptr(s.host);
    }
    return s;
}

static void side_free(side *s) {
    if (s->w == WHERE_DEVICE)
        device_free(&s->dev);
    else if (s->w == WHERE_PINNED)
        assert_cu_ok(cuMemFreeHost(s->host));
    else
        ts_free(s->host);
}

/* Whether one side holds what it should; host sides are checked without any
 * synchronization (cuMemcpy to host memory is complete when it returns). */
static int side_matches(side *s, const unsigned char *expect, size_t n) {
    if (s->w != WHERE_DEVICE) return memcmp(s->host, expect, n) == 0;
    unsigned char *back = ts_malloc(n);
    memset(back, 0, n);
    assert_cu_ok(cuMemcpyDtoH(back, s->dev.d, n));
    int same = memcmp(back, expect, n) == 0;
    ts_free(back);
    return same;
}

/* cuMemcpy between every pair of device, pinned and pageable memory; every
 * pair is tried and all the wrong ones are listed. */
static void test_memcpy_every_combination(void **state) {
    (void)state;
    const size_t sizes[] = {3, 4097, TS_MiB + 13, 8 * TS_MiB + 5};
    int wrong = 0;
    for (int from = 0; from < 3; ++from)
        for (int to = 0; to < 3; ++to)
            for (size_t i = 0; i < TS_ARRAY_SIZE(sizes); ++i) {
                const size_t n = sizes[i];
                const uint64_t seed = 0xC0C0 + 100 * (uint64_t)from + 10 * (uint64_t)to + i;
                side src = side_alloc((where)from, n + SLACK, seed);
                side dst = side_alloc((where)to, n + SLACK, ~seed);
                unsigned char *src_before = ts_malloc(n + SLACK), *expect = ts_malloc(n + SLACK);
                ts_fill_random(src_before, n + SLACK, seed);
                ts_fill_random(expect, n + SLACK, ~seed);
                memcpy(expect + DST_OFF, src_before + SRC_OFF, n);

                assert_cu_ok(cuMemcpy(dst.addr + DST_OFF, src.addr + SRC_OFF, n));
                if (!side_matches(&dst, expect, n + SLACK)) {
                    print_error("cuMemcpy %s -> %s, %zu bytes: destination wrong\n", kWhereName[from],
                                kWhereName[to], n);
                    ++wrong;
                }
                if (!side_matches(&src, src_before, n + SLACK)) {
                    print_error("cuMemcpy %s -> %s, %zu bytes: source changed\n", kWhereName[from], kWhereName[to],
                                n);
                    ++wrong;
                }
                ts_free(src_before);
                ts_free(expect);
                side_free(&src);
                side_free(&dst);
            }
    assert_int_equal(wrong, 0);
}

/* ------------------------------------------------------------ asynchronous forms */

/* Everything async on one stream, one cuCtxSynchronize, then check. */
static void async_everything(CUstream stream, uint64_t seed) {
    const size_t n = 3 * TS_MiB + 11;
    hbuf src = host_alloc(HOST_PINNED, n);
    hbuf back = host_alloc(HOST_PINNED, n);
    hbuf pageable = host_alloc(HOST_PAGEABLE, n);
    ts_fill_random(src.p, n, seed);
    ts_fill_random(pageable.p, n, seed + 1);
    memset(back.p, 0, n);
    CUdeviceptr a = 0, b = 0, c = 0;
    assert_cu_ok(cuMemAlloc(&a, n));
    assert_cu_ok(cuMemAlloc(&b, n));
    assert_cu_ok(cuMemAlloc(&c, n));

    assert_cu_ok(cuMemcpyHtoDAsync(a, src.p, n, stream));
    assert_cu_ok(cuMemcpyDtoDAsync(b + 1, a, n - 1, stream));
    assert_cu_ok(cuMemsetD8Async(b, 0x3C, 1, stream));
    assert_cu_ok(cuMemsetD16Async(b + 1000, 0xBEEF, 51, stream));
    assert_cu_ok(cuMemsetD32Async(b + 2000, 0x01020304u, 33, stream));
    assert_cu_ok(cuMemcpyAsync(c, b, n, stream));
    assert_cu_ok(cuMemcpyDtoHAsync(back.p, c, n, stream));
    assert_cu_ok(cuCtxSynchronize());

    unsigned char *expect = ts_malloc(n);
    expect[0] = 0x3C;
    memcpy(expect + 1, src.p, n - 1);
    for (size_t k = 0; k < 51; ++k) expect[1000 + 2 * k] = 0xEF, expect[1001 + 2 * k] = 0xBE;
    for (size_t k = 0; k < 33; ++k)
        expect[2000 + 4 * k] = 4, expect[2001 + 4 * k] = 3, expect[2002 + 4 * k] = 2, expect[2003 + 4 * k] = 1;
    assert_bytes_equal(expect, back.p, n);

    /* Pageable memory with the async forms (they return once the host
     * buffer may be reused). */
    assert_cu_ok(cuMemcpyHtoDAsync(a + 1, pageable.p, n - 1, stream));
    memset(pageable.p, 0, n);
    assert_cu_ok(cuMemcpyDtoHAsync(pageable.p, a, n, stream));
    assert_cu_ok(cuMemcpyAsync(ts_dptr(back.p), a, n, stream));
    assert_cu_ok(cuCtxSynchronize());
    ts_fill_random(expect + 1, n - 1, seed + 1);
    expect[0] = src.p[0];
    assert_bytes_equal(expect, pageable.p, n);
    assert_bytes_equal(expect, back.p, n);

    assert_cu_ok(cuMemFree(a));
    assert_cu_ok(cuMemFree(b));
    assert_cu_ok(cuMemFree(c));
    host_free(&src);
    host_free(&back);
    host_free(&pageable);
}

static void test_async_null_stream(void **state) {
    (void)state;
    async_everything(NULL, 0xA51);
}

static void test_async_legacy_stream(void **state) {
    (void)state;
    async_everything(CU_STREAM_LEGACY, 0xA52);
}

static void test_async_per_thread_stream(void **state) {
    (void)state;
    async_everything(CU_STREAM_PER_THREAD, 0xA53);
}

/* A handle that is no stream: CUDA_ERROR_INVALID_HANDLE, and nothing copied. */
static void test_async_made_up_stream(void **state) {
    (void)state;
    static struct {
        unsigned char junk[512];
    } not_a_stream;
    memset(&not_a_stream, 0x5C, sizeof not_a_stream);
    const CUstream bad = (CUstream)(void *)&not_a_stream;
    dbuf a = device_alloc(4096, 0xBAD1);
    dbuf b = device_alloc(4096, 0xBAD2);
    hbuf h = host_alloc(HOST_PINNED, 4096);
    ts_fill_random(h.p, 4096, 0xBAD3);
    unsigned char *h_before = ts_malloc(4096);
    memcpy(h_before, h.p, 4096);

    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemcpyHtoDAsync(a.d, h.p, 4096, bad));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemcpyDtoHAsync(h.p, a.d, 4096, bad));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemcpyDtoDAsync(b.d, a.d, 4096, bad));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemcpyAsync(b.d, a.d, 4096, bad));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemsetD8Async(a.d, 1, 4096, bad));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemsetD16Async(a.d, 1, 2048, bad));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemsetD32Async(a.d, 1, 1024, bad));
    expect_device(&a, "async calls refused for their stream");
    expect_device(&b, "async calls refused for their stream");
    assert_bytes_equal(h_before, h.p, 4096);
    device_free(&a);
    device_free(&b);
    host_free(&h);
}

/* HtoD(A) -> DtoD(A->B) -> memset(part of B) -> DtoH(B), all async, one
 * cuCtxSynchronize: each step sees the one before. */
static void async_chain(host_kind kind, size_t n, uint64_t seed) {
    hbuf src = host_alloc(kind, n), dst = host_alloc(kind, n);
    ts_fill_random(src.p, n, seed);
    memset(dst.p, 0xEE, n);
    CUdeviceptr a = 0, b = 0;
    assert_cu_ok(cuMemAlloc(&a, n));
    assert_cu_ok(cuMemAlloc(&b, n));
    assert_cu_ok(cuMemsetD8(b, 0x11, n)); /* not what the chain leaves */
    const size_t m0 = n / 3, mlen = n / 4;
    assert_cu_ok(cuMemcpyHtoDAsync(a, src.p, n, NULL));
    assert_cu_ok(cuMemcpyDtoDAsync(b, a, n, NULL));
    assert_cu_ok(cuMemsetD8Async(b + m0, 0x7E, mlen, NULL));
    assert_cu_ok(cuMemcpyDtoHAsync(dst.p, b, n, NULL));
    assert_cu_ok(cuCtxSynchronize());
    unsigned char *expect = ts_malloc(n);
    memcpy(expect, src.p, n);
    memset(expect + m0, 0x7E, mlen);
    if (memcmp(expect, dst.p, n) != 0) print_error("async chain through %s memory, %zu bytes\n", kKindName[kind], n);
    assert_bytes_equal(expect, dst.p, n);
    ts_free(expect);
    assert_cu_ok(cuMemFree(a));
    assert_cu_ok(cuMemFree(b));
    host_free(&src);
    host_free(&dst);
}

static void test_async_chain_ordering(void **state) {
    (void)state;
    async_chain(HOST_PINNED, 3 * TS_MiB + 1, 0xC4A1);
    async_chain(HOST_PAGEABLE, 3 * TS_MiB + 1, 0xC4A2);
    async_chain(HOST_PINNED, 9 * TS_MiB + 7, 0xC4A3);
    async_chain(HOST_PAGEABLE, 9 * TS_MiB + 7, 0xC4A4);
    async_chain(HOST_REGISTERED, 2 * TS_MiB + 3, 0xC4A5);
}

/* A small synchronous copy issued while a large asynchronous one to the same
 * place is still queued must land after it (small copies may take a CPU
 * shortcut through BAR1 only when nothing is in flight). */
static void test_small_copy_after_queued_large_copy(void **state) {
    (void)state;
    const size_t big = 4 * TS_MiB + 3;
    hbuf a = host_alloc(HOST_PINNED, big);
    ts_fill_random(a.p, big, 0xB16);
    unsigned char small[16], back[64];
    ts_fill_random(small, sizeof small, 0x5A11);
    CUdeviceptr d = 0;
    assert_cu_ok(cuMemAlloc(&d, big));
    for (int round = 0; round < 20; ++round) {
        assert_cu_ok(cuMemcpyHtoDAsync(d, a.p, big, NULL));
        assert_cu_ok(cuMemcpyHtoD(d + 8, small, sizeof small));
        assert_cu_ok(cuMemcpyDtoH(back, d, sizeof back));
        assert_bytes_equal(a.p, back, 8);
        assert_bytes_equal(small, back + 8, sizeof small);
        assert_bytes_equal(a.p + 24, back + 24, sizeof back - 24);
        /* And a small read right after a queued write sees that write. */
        assert_cu_ok(cuMemcpyHtoDAsync(d, a.p, big, NULL));
        unsigned char word[4];
        assert_cu_ok(cuMemcpyDtoH(word, d + 8, sizeof word));
        assert_bytes_equal(a.p + 8, word, sizeof word);
    }
    assert_cu_ok(cuMemFree(d));
    host_free(&a);
}

/* Many small async copies to one place: the last one's data stays. */
#define SMALL_COPIES 64
static void test_async_many_copies_same_place(void **state) {
    (void)state;
    const size_t n = 4099;
    hbuf slots = host_alloc(HOST_PINNED, SMALL_COPIES * n);
    ts_fill_random(slots.p, slots.n, 0x51075);
    CUdeviceptr d = 0;
    assert_cu_ok(cuMemAlloc(&d, n + 1));
    for (int i = 0; i < SMALL_COPIES; ++i) assert_cu_ok(cuMemcpyHtoDAsync(d + 1, slots.p + (size_t)i * n, n, NULL));
    unsigned char *back = ts_malloc(n);
    assert_cu_ok(cuMemcpyDtoH(back, d + 1, n));
    assert_bytes_equal(slots.p + (size_t)(SMALL_COPIES - 1) * n, back, n);

    /* Through pageable memory refilled between the calls, sometimes larger
     * than the staging buffers, so the staging ring wraps many times. */
    const size_t big = 8 * TS_MiB + 5;
    CUdeviceptr e = 0;
    assert_cu_ok(cuMemAlloc(&e, big));
    unsigned char *pageable = ts_malloc(big);
    for (int i = 0; i < 40; ++i) {
        size_t len = i % 8 == 7 ? big : n;
        ts_fill_random(pageable, len, 0xF00 + (uint64_t)i);
        assert_cu_ok(cuMemcpyHtoDAsync(e, pageable, len, NULL));
    }
    /* The last was i = 39: big. */
    unsigned char *expect = ts_malloc(big), *out = ts_malloc(big);
    ts_fill_random(expect, big, 0xF00 + 39);
    assert_cu_ok(cuMemcpyDtoHAsync(out, e, big, NULL));
    assert_cu_ok(cuCtxSynchronize());
    assert_bytes_equal(expect, out, big);

    /* Alternating fills and copies to the same bytes. */
    for (unsigned i = 0; i < 50; ++i) {
        if (i % 2)
            assert_cu_ok(cuMemsetD32Async(d, 0x01010101u * i, (n + 1) / 4, NULL));
        else
            assert_cu_ok(cuMemcpyHtoDAsync(d, slots.p + (size_t)i * n, n, NULL));
    }
    assert_cu_ok(cuMemcpyDtoH(back, d, 4));
    unsigned char last[4] = {49, 49, 49, 49};
    assert_memory_equal(back, last, 4);
    host_free(&slots);
    assert_cu_ok(cuMemFree(d));
    assert_cu_ok(cuMemFree(e));
}

/* ------------------------------------------------------------ memset */

static const size_t kCounts[] = {1, 3, 1001, 65537};

/* cuMemsetD8/D16/D32 (sync or async) of 'count' elements at byte offset
 * 'off' of a random buffer; checks the whole buffer. */
static void memset_case(unsigned elem, size_t off, size_t count, uint32_t value, int async, uint64_t seed) {
    const size_t bytes = count * elem;
    dbuf b = device_alloc(off + bytes + SLACK, seed);
    CUresult r;
    switch (elem) {
    case 1:
        r = async ? cuMemsetD8Async(b.d + off, (unsigned char)value, count, NULL)
                  : cuMemsetD8(b.d + off, (unsigned char)value, count);
        break;
    case 2:
        r = async ? cuMemsetD16Async(b.d + off, (unsigned short)value, count, NULL)
                  : cuMemsetD16(b.d + off, (unsigned short)value, count);
        break;
    default:
        r = async ? cuMemsetD32Async(b.d + off, value, count, NULL) : cuMemsetD32(b.d + off, value, count);
        break;
    }
    if (r != CUDA_SUCCESS)
        fail_msg("cuMemsetD%u%s(offset %zu, count %zu) returned %s", elem * 8, async ? "Async" : "", off, count,
                 ts_cu_name(r));
    for (size_t k = 0; k < count; ++k)
        for (unsigned j = 0; j < elem; ++j) b.mirror[off + k * elem + j] = (unsigned char)(value >> (8 * j));
    char what[96];
    snprintf(what, sizeof what, "cuMemsetD%u%s(offset %zu, count %zu)", elem * 8, async ? "Async" : "", off, count);
    expect_device(&b, what);
    device_free(&b);
}

static void test_memset_d8(void **state) {
    (void)state;
    const unsigned char values[] = {0x00, 0xFF, 0xA7};
    for (size_t off = 0; off < 8; ++off)
        for (size_t c = 0; c < TS_ARRAY_SIZE(kCounts); ++c)
            memset_case(1, off, kCounts[c], values[(off + c) % 3], (int)(off & 1), 0xD8000 + 16 * off + c);
}

static void test_memset_d16(void **state) {
    (void)state;
    const unsigned short values[] = {0x0000, 0xFFFF, 0xA55A, 0x1234};
    for (size_t off = 0; off < 8; off += 2)
        for (size_t c = 0; c < TS_ARRAY_SIZE(kCounts); ++c)
            memset_case(2, off, kCounts[c], values[(off / 2 + c) % 4], (int)(c & 1), 0xD1600 + 16 * off + c);
}

static void test_memset_d32(void **state) {
    (void)state;
    const uint32_t values[] = {0, 0xFFFFFFFFu, 0xDEADBEEFu, 0x00C0FFEEu};
    for (size_t off = 0; off < 16; off += 4)
        for (size_t c = 0; c < TS_ARRAY_SIZE(kCounts); ++c)
            memset_case(4, off, kCounts[c], values[(off / 4 + c) % 4], (int)(c & 1), 0xD3200 + 16 * off + c);
}

static void test_memset_large(void **state) {
    (void)state;
    memset_case(1, 1, 64 * TS_MiB + 3, 0x5B, 0, 0x1A26E1);
    memset_case(2, 2, 8 * TS_MiB + 3, 0xC3A5, 1, 0x1A26E2);
    memset_case(4, 4, 16 * TS_MiB + 1, 0x89ABCDEFu, 0, 0x1A26E3);
}

/* Fills of pinned host memory through its device pointer: synchronous ones
 * are complete when they return (CUDA's "API synchronization behavior":
 * memsets are asynchronous "except when the target is pinned host memory"). */
static void test_memset_pinned_host(void **state) {
    (void)state;
    hbuf h = host_alloc(HOST_PINNED, 10000);
    ts_fill_random(h.p, h.n, 0x9199);
    unsigned char *expect = ts_malloc(h.n);
    memcpy(expect, h.p, h.n);
    CUdeviceptr dp = 0;
    assert_cu_ok(cuMemHostGetDevicePointer(&dp, h.p, 0));
    assert_cu_ok(cuMemsetD8(dp + 3, 0x42, 5001));
    memset(expect + 3, 0x42, 5001);
    assert_cu_ok(cuMemsetD32(dp + 6000, 0xCAFEF00Du, 999));
    for (size_t k = 0; k < 999; ++k) memcpy(expect + 6000 + 4 * k, &(uint32_t){0xCAFEF00Du}, 4);
    assert_bytes_equal(expect, h.p, h.n);
    assert_cu_ok(cuMemsetD16Async(dp + 8000, 0x7711, 3, NULL));
    for (size_t k = 0; k < 3; ++k) expect[8000 + 2 * k] = 0x11, expect[8001 + 2 * k] = 0x77;
    assert_cu_ok(cuCtxSynchronize());
    assert_bytes_equal(expect, h.p, h.n);
    host_free(&h);
}

static void test_memset_bad(void **state) {
    (void)state;
    dbuf b = device_alloc(1000, 0xBADF);
    CUdeviceptr p = b.d;
    /* Misaligned for the element size. */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD16(p + 1, 3, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD16(p + 3, 3, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(p + 1, 3, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(p + 2, 3, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(p + 3, 3, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(p + 6, 3, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD16Async(p + 1, 3, 10, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD32Async(p + 1, 3, 10, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD32Async(p + 2, 3, 10, NULL));
    /* Past the end. */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(p + 1, 3, 1000));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(p, 3, 1001));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD16(p + 2, 3, 500));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(p + 4, 3, 250));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD8Async(p + 1, 3, 1000, NULL));
    /* Nowhere. */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(0, 3, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(0, 3, 10));
    expect_device(&b, "refused memsets");
    /* Count 0 does nothing, successfully. */
    assert_cu_ok(cuMemsetD8(p, 3, 0));
    assert_cu_ok(cuMemsetD16(p + 2, 3, 0));
    assert_cu_ok(cuMemsetD32(p + 4, 3, 0));
    assert_cu_ok(cuMemsetD8Async(p, 3, 0, NULL));
    expect_device(&b, "memsets of 0 elements");
    /* The largest that fit. */
    assert_cu_ok(cuMemsetD8(p + 1, 0x21, 999));
    memset(b.mirror + 1, 0x21, 999);
    assert_cu_ok(cuMemsetD16(p + 2, 0x2222, 499));
    memset(b.mirror + 2, 0x22, 998);
    assert_cu_ok(cuMemsetD32(p + 4, 0x23232323u, 249));
    memset(b.mirror + 4, 0x23, 996);
    expect_device(&b, "memsets up to the end");
    /* Freed memory. */
    CUdeviceptr q = 0;
    assert_cu_ok(cuMemAlloc(&q, 1000));
    assert_cu_ok(cuMemFree(q));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(q, 1, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(q, 1, 10));
    device_free(&b);
}

/* ------------------------------------------------------------ bad copies */

/* libcuda_memory.txt's bad ranges; a refused copy writes nothing. */
static void test_copy_bad_ranges(void **state) {
    (void)state;
    dbuf p = device_alloc(1000, 0xE1);
    dbuf q = device_alloc(1000, 0xE2);
    unsigned char hb[4096];
    ts_fill_random(hb, sizeof hb, 0xE3);
    unsigned char hb_before[sizeof hb];
    memcpy(hb_before, hb, sizeof hb);

    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(p.d, hb, 1001));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(p.d + 1, hb, 1000));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(p.d, NULL, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(0, hb, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(ts_dptr(hb), hb + 100, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(hb, p.d, 1001));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(hb, p.d + 999, 2));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(NULL, p.d, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoD(q.d, p.d + 1, 1000));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoD(q.d + 1, p.d, 1000));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy(q.d, p.d, 1001));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoDAsync(p.d, hb, 1001, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoHAsync(hb, p.d, 1001, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoDAsync(q.d, p.d + 1, 1000, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyAsync(q.d, p.d, 1001, NULL));
    expect_device(&p, "refused copies");
    expect_device(&q, "refused copies");
    assert_memory_equal(hb, hb_before, sizeof hb);

    /* Count 0: nothing to do, successfully. */
    assert_cu_ok(cuMemcpyHtoD(p.d, hb, 0));
    assert_cu_ok(cuMemcpyDtoH(hb, p.d, 0));
    assert_cu_ok(cuMemcpyDtoD(q.d, p.d, 0));
    assert_cu_ok(cuMemcpy(q.d, p.d, 0));
    assert_cu_ok(cuMemcpyHtoDAsync(p.d, hb, 0, NULL));
    expect_device(&q, "copies of 0 bytes");

    /* Exactly to the end. */
    assert_cu_ok(cuMemcpyHtoD(p.d + 1, hb, 999));
    memcpy(p.mirror + 1, hb, 999);
    assert_cu_ok(cuMemcpyDtoD(q.d, p.d, 1000));
    memcpy(q.mirror, p.mirror, 1000);
    expect_device(&q, "copies up to the end");

    /* Freed memory on either side. */
    assert_cu_ok(cuMemFree(q.d));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(q.d, hb, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoD(p.d, q.d, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoD(q.d, p.d, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(hb, q.d, 10));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(q.d, 1, 10));
    assert_memory_equal(hb, hb_before, sizeof hb);
    expect_device(&p, "copies from freed memory");
    ts_free(q.mirror);
    device_free(&p);
}

/* cuMemcpy between two pageable buffers is a plain host copy. */
static void test_memcpy_host_to_host(void **state) {
    (void)state;
    unsigned char hb[4096], expect[4096];
    ts_fill_random(hb, sizeof hb, 0x4242);
    memcpy(expect, hb, sizeof hb);
    memcpy(expect, hb + 2000, 100);
    assert_cu_ok(cuMemcpy(ts_dptr(hb), ts_dptr(hb + 2000), 100));
    assert_memory_equal(expect, hb, sizeof hb);
}

/* ------------------------------------------------------------ 1 GiB */

static void test_copy_1gib(void **state) {
    (void)state;
    const uint64_t ram = ts_host_ram_bytes();
    if (ram < 8ull * TS_GiB)
        ts_skip("this machine has %llu MiB of RAM; the 1 GiB copy test needs 8 GiB",
                (unsigned long long)(ram >> 20));
    size_t fr = 0, to = 0;
    assert_cu_ok(cuMemGetInfo(&fr, &to));
    if (fr < 2 * TS_GiB + 64 * TS_MiB) ts_skip("the device has %zu MiB free; 2 GiB are needed", fr >> 20);
    const size_t n = TS_GiB;
    double t = ts_now();
    unsigned char *src = ts_malloc(n + 8), *dst = ts_malloc(n + 8);
    ts_fill_random(src, n + 8, 0x1618);
    memset(dst, 0, n + 8);
    CUdeviceptr a = 0, b = 0;
    assert_cu_ok(cuMemAlloc(&a, n + 8));
    assert_cu_ok(cuMemAlloc(&b, n + 8));
    double times[4];
    times[0] = ts_now() - t;
    t = ts_now();
    assert_cu_ok(cuMemcpyHtoD(a + 3, src + 1, n));
    times[1] = ts_now() - t;
    t = ts_now();
    assert_cu_ok(cuMemcpyDtoD(b + 5, a + 3, n));
    assert_cu_ok(cuCtxSynchronize());
    times[2] = ts_now() - t;
    t = ts_now();
    assert_cu_ok(cuMemcpyDtoH(dst + 7, b + 5, n));
    times[3] = ts_now() - t;
    print_message("1 GiB: setup %.2f s, HtoD %.2f s, DtoD %.2f s, DtoH %.2f s\n", times[0], times[1], times[2],
                  times[3]);
    assert_bytes_equal(src + 1, dst + 7, n);
    assert_bytes_all(dst, 0, 7);
    assert_bytes_all(dst + 7 + n, 0, 1);
    assert_cu_ok(cuMemFree(a));
    assert_cu_ok(cuMemFree(b));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_htod_dtoh_pageable),
        TEST(test_htod_dtoh_pinned),
        TEST(test_htod_dtoh_registered),
        TEST(test_htod_dtoh_pinned_as_device_side),
        TEST(test_memcpy_pageable_to_pinned_is_synchronous),
        TEST(test_dtod),
        TEST(test_dtod_same_allocation),
        TEST(test_dtod_overlapping),
        TEST(test_dtod_overlapping_is_memmove),
        TEST(test_memcpy_every_combination),
        TEST(test_async_null_stream),
        TEST(test_async_legacy_stream),
        TEST(test_async_per_thread_stream),
        TEST(test_async_made_up_stream),
        TEST(test_async_chain_ordering),
        TEST(test_async_many_copies_same_place),
        TEST(test_small_copy_after_queued_large_copy),
        TEST(test_memset_d8),
        TEST(test_memset_d16),
        TEST(test_memset_d32),
        TEST(test_memset_large),
        TEST(test_memset_pinned_host),
        TEST(test_memset_bad),
        TEST(test_copy_bad_ranges),
        TEST(test_memcpy_host_to_host),
        TEST(test_copy_1gib),
    };
    return cmocka_run_group_tests_name("copy", tests, ts_group_init, NULL);
}
