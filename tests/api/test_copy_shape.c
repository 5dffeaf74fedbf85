/*
 * Copies and fills of every shape: cuMemAllocPitch, cuMemcpy2D(Unaligned),
 * cuMemcpy3D, their Async forms, cuMemcpyPeer(Async), cuMemcpy3DPeer and
 * cuMemsetD2D8/16/32(Async).
 *
 * Every copy goes between buffers filled with random bytes (fixed seeds),
 * at odd widths, heights, depths, pitches and offsets, and the whole
 * destination buffer is compared with a CPU model of the copy: the bytes of
 * the rectangle and every byte around it that must not change. Shapes cross
 * the library's 8 MiB staging buffers (several lines per buffer, and lines
 * wider than a buffer). Expected codes for bad input: libcuda 580 on an
 * H200 (tests/compat/expected/libcuda_mem_pitch.txt); where libcuda crashes
 * (a bogus stream or array handle) nvlite answers with an error.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_ctx_setup, ts_ctx_teardown)

/* ------------------------------------------------------------ buffers */

typedef enum { MEM_PAGEABLE, MEM_PINNED, MEM_DEVICE, MEM_KINDS } mem_kind;
static const char *const kMemName[] = {"pageable", "pinned", "device"};

/* A buffer of one kind and its expected contents ('mirror'). */
typedef struct {
    mem_kind kind;
    size_t n;
    unsigned char *host;   /* pageable or pinned: the bytes themselves */
    CUdeviceptr dev;       /* device buffers */
    unsigned char *mirror; /* what the buffer must hold */
} buf;

static buf buf_new(mem_kind kind, size_t n, uint64_t seed) {
    buf b = {kind, n, NULL, 0, ts_malloc(n)};
    ts_fill_random(b.mirror, n, seed);
    switch (kind) {
    case MEM_PAGEABLE:
        b.host = ts_malloc(n);
        memcpy(b.host, b.mirror, n);
        break;
    case MEM_PINNED:
        assert_cu_ok(cuMemAllocHost((void **)&b.host, n));
        memcpy(b.host, b.mirror, n);
        break;
    default:
        assert_cu_ok(cuMemAlloc(&b.dev, n));
        assert_cu_ok(cuMemcpyHtoD(b.dev, b.mirror, n));
        /* From pageable memory the copy returns once the bytes are staged:
         * work of non-blocking streams would not wait for it. */
        assert_cu_ok(cuCtxSynchronize());
        break;
    }
    return b;
}

static void buf_free(buf *b) {
    if (b->kind == MEM_PAGEABLE) ts_free(b->host);
    else if (b->kind == MEM_PINNED) assert_cu_ok(cuMemFreeHost(b->host));
    else assert_cu_ok(cuMemFree(b->dev));
    ts_free(b->mirror);
}

/* The buffer's contents equal its mirror (read back on the legacy stream). */
static void buf_check(const buf *b, const char *what) {
    const unsigned char *actual = b->host;
    unsigned char *back = NULL;
    if (b->kind == MEM_DEVICE) {
        back = ts_malloc(b->n);
        assert_cu_ok(cuMemcpyDtoH(back, b->dev, b->n));
        actual = back;
    }
    if (memcmp(actual, b->mirror, b->n) != 0) print_error("wrong bytes after %s\n", what);
    assert_bytes_named(b->mirror, actual, b->n, what);
    ts_free(back);
}

/* ------------------------------------------------------------ shapes */

typedef struct {
    size_t w, h, d;                 /* bytes per line, lines, slices */
    size_t sx, sy, sz, spitch, sh;  /* source origin, pitch, lines per slice */
    size_t dx, dy, dz, dpitch, dh;
} shape;

static size_t extent_bytes(size_t x, size_t y, size_t z, size_t pitch, size_t lines, const shape *s) {
    return (z + s->d - 1) * pitch * lines + (y + s->h - 1) * pitch + x + s->w;
}
static size_t src_bytes(const shape *s) { return extent_bytes(s->sx, s->sy, s->sz, s->spitch, s->sh, s); }
static size_t dst_bytes(const shape *s) { return extent_bytes(s->dx, s->dy, s->dz, s->dpitch, s->dh, s); }

/* The CPU model: what the copy does to the destination's mirror. */
static void model_copy(buf *dst, const buf *src, const shape *s) {
    for (size_t z = 0; z < s->d; ++z)
        for (size_t y = 0; y < s->h; ++y)
            memcpy(dst->mirror + (s->dz + z) * s->dpitch * s->dh + (s->dy + y) * s->dpitch + s->dx,
                   src->mirror + (s->sz + z) * s->spitch * s->sh + (s->sy + y) * s->spitch + s->sx, s->w);
}

static void side2d(const buf *b, CUmemorytype *type, const void **host, CUdeviceptr *dev) {
    if (b->kind == MEM_DEVICE) {
        *type = CU_MEMORYTYPE_DEVICE;
        *dev = b->dev;
    } else {
        *type = CU_MEMORYTYPE_HOST;
        *host = b->host;
    }
}

static CUDA_MEMCPY2D make2d(const buf *dst, const buf *src, const shape *s) {
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    side2d(src, &c.srcMemoryType, &c.srcHost, &c.srcDevice);
    const void *dh = NULL;
    side2d(dst, &c.dstMemoryType, &dh, &c.dstDevice);
    c.dstHost = (void *)dh;
    c.srcXInBytes = s->sx;
    c.srcY = s->sy;
    c.srcPitch = s->spitch;
    c.dstXInBytes = s->dx;
    c.dstY = s->dy;
    c.dstPitch = s->dpitch;
    c.WidthInBytes = s->w;
    c.Height = s->h;
    return c;
}

static CUDA_MEMCPY3D make3d(const buf *dst, const buf *src, const shape *s) {
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    side2d(src, &c.srcMemoryType, &c.srcHost, &c.srcDevice);
    const void *dh = NULL;
    side2d(dst, &c.dstMemoryType, &dh, &c.dstDevice);
    c.dstHost = (void *)dh;
    c.srcXInBytes = s->sx;
    c.srcY = s->sy;
    c.srcZ = s->sz;
    c.srcPitch = s->spitch;
    c.srcHeight = s->sh;
    c.dstXInBytes = s->dx;
    c.dstY = s->dy;
    c.dstZ = s->dz;
    c.dstPitch = s->dpitch;
    c.dstHeight = s->dh;
    c.WidthInBytes = s->w;
    c.Height = s->h;
    c.Depth = s->d;
    return c;
}

/* 2-D shapes (d = 1). */
static const shape k2D[] = {
    {37, 11, 1, 3, 2, 0, 53, 0, 5, 1, 0, 61, 0},
    {1, 1000, 1, 0, 0, 0, 3, 0, 2, 0, 0, 7, 0},
    {4097, 3, 1, 1, 0, 0, 4099, 0, 0, 2, 0, 8191, 0},
    {100, 7, 1, 0, 0, 0, 100, 0, 0, 0, 0, 100, 0},  /* packed on both sides: one line */
    {3 * TS_MiB + 5, 5, 1, 0, 1, 0, 3 * TS_MiB + 8, 0, 3, 0, 0, 3 * TS_MiB + 16, 0}, /* two lines per staging buffer */
    {9 * TS_MiB + 3, 2, 1, 7, 0, 0, 9 * TS_MiB + 11, 0, 0, 1, 0, 9 * TS_MiB + 3, 0}, /* a line wider than a buffer */
};

/* 3-D shapes. */
static const shape k3D[] = {
    {13, 5, 3, 2, 1, 1, 17, 7, 4, 2, 1, 32, 9},
    {10, 4, 5, 0, 0, 0, 16, 4, 0, 0, 0, 16, 4},       /* packed slices on both sides */
    {10, 4, 5, 0, 0, 0, 10, 4, 0, 0, 0, 10, 4},       /* one line for everything */
    {33, 3, 4, 1, 0, 2, 35, 3, 3, 2, 0, 41, 6},       /* packed source, padded destination */
    {255, 17, 9, 5, 3, 1, 263, 21, 0, 0, 0, 255, 17}, /* packed destination */
    {TS_MiB + 1, 3, 3, 0, 0, 0, TS_MiB + 9, 3, 1, 0, 0, TS_MiB + 1, 4},
};

typedef enum { COPY_2D, COPY_2D_UNALIGNED, COPY_2D_ASYNC, COPY_3D, COPY_3D_ASYNC } copy_call;

static void copy_case(mem_kind dk, mem_kind sk, const shape *s, copy_call call, CUstream stream, uint64_t seed) {
    buf src = buf_new(sk, src_bytes(s), seed);
    buf dst = buf_new(dk, dst_bytes(s) + 13, seed ^ 0x5555);
    char what[160];
    snprintf(what, sizeof what, "%s -> %s copy %d, %zux%zux%zu", kMemName[sk], kMemName[dk], (int)call, s->w, s->h,
             s->d);
    if (call <= COPY_2D_ASYNC) {
        CUDA_MEMCPY2D c = make2d(&dst, &src, s);
        if (call == COPY_2D) assert_cu_ok(cuMemcpy2D(&c));
        else if (call == COPY_2D_UNALIGNED) assert_cu_ok(cuMemcpy2DUnaligned(&c));
        else assert_cu_ok(cuMemcpy2DAsync(&c, stream));
    } else {
        CUDA_MEMCPY3D c = make3d(&dst, &src, s);
        if (call == COPY_3D) assert_cu_ok(cuMemcpy3D(&c));
        else assert_cu_ok(cuMemcpy3DAsync(&c, stream));
    }
    if (call == COPY_2D_ASYNC || call == COPY_3D_ASYNC) assert_cu_ok(cuStreamSynchronize(stream));
    model_copy(&dst, &src, s);
    /* Synchronous copies are done when they return: host destinations are
     * checked without synchronising. */
    buf_check(&dst, what);
    /* The source was only read. */
    unsigned char *again = ts_malloc(src.n);
    ts_fill_random(again, src.n, seed);
    assert_bytes_named(again, src.mirror, src.n, "source mirror");
    if (sk != MEM_DEVICE) assert_bytes_named(again, src.host, src.n, "host source");
    ts_free(again);
    buf_free(&src);
    buf_free(&dst);
}

static void all_directions(const shape *shapes, size_t count, copy_call call, CUstream stream) {
    for (size_t i = 0; i < count; ++i)
        for (int dk = 0; dk < MEM_KINDS; ++dk)
            for (int sk = 0; sk < MEM_KINDS; ++sk) {
                /* The widest shapes only where staging or the engine moves them. */
                if (shapes[i].w * shapes[i].h > 4 * TS_MiB && dk != MEM_DEVICE && sk != MEM_DEVICE) continue;
                copy_case((mem_kind)dk, (mem_kind)sk, &shapes[i], call, stream, 0xC0FFEE00u + i * 16 + dk * 4 + sk);
            }
}

static void test_copy2d_all_directions(void **state) {
    (void)state;
    all_directions(k2D, TS_ARRAY_SIZE(k2D), COPY_2D, NULL);
}

static void test_copy2d_unaligned(void **state) {
    (void)state;
    all_directions(k2D, 3, COPY_2D_UNALIGNED, NULL);
}

static void test_copy2d_async_streams(void **state) {
    (void)state;
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    all_directions(k2D, TS_ARRAY_SIZE(k2D), COPY_2D_ASYNC, s);
    all_directions(k2D, 2, COPY_2D_ASYNC, NULL);
    all_directions(k2D, 2, COPY_2D_ASYNC, CU_STREAM_PER_THREAD);
    assert_cu_ok(cuStreamDestroy(s));
}

static void test_copy3d_all_directions(void **state) {
    (void)state;
    all_directions(k3D, TS_ARRAY_SIZE(k3D), COPY_3D, NULL);
}

static void test_copy3d_async(void **state) {
    (void)state;
    CUstream s = ts_stream_new(0);
    all_directions(k3D, TS_ARRAY_SIZE(k3D), COPY_3D_ASYNC, s);
    assert_cu_ok(cuStreamDestroy(s));
}

/* Pinned memory named as device memory (unified addressing) and
 * CU_MEMORYTYPE_UNIFIED on either side. */
static void test_copy2d_unified_naming(void **state) {
    (void)state;
    const shape s = {37, 11, 1, 3, 2, 0, 53, 0, 5, 1, 0, 61, 0};
    buf pin = buf_new(MEM_PINNED, src_bytes(&s), 71);
    buf dev = buf_new(MEM_DEVICE, dst_bytes(&s), 72);
    buf page = buf_new(MEM_PAGEABLE, dst_bytes(&s), 73);
    CUDA_MEMCPY2D c = make2d(&dev, &pin, &s);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = ts_dptr(pin.host);
    assert_cu_ok(cuMemcpy2D(&c));
    model_copy(&dev, &pin, &s);
    buf_check(&dev, "pinned named DEVICE -> device");
    c = make2d(&page, &dev, &s);
    c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.dstDevice = ts_dptr(page.host);
    assert_cu_ok(cuMemcpy2D(&c));
    model_copy(&page, &dev, &s);
    buf_check(&page, "UNIFIED device -> UNIFIED pageable");
    buf_free(&pin);
    buf_free(&dev);
    buf_free(&page);
}

/* An async 2-D copy is ordered after the stream's earlier work and before
 * its later work. */
static void test_copy2d_async_in_stream_order(void **state) {
    (void)state;
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    ts_busy busy = ts_busy_new();
    const shape sh = {300, 40, 1, 0, 0, 0, 512, 0, 0, 0, 0, 300, 0};
    buf a = buf_new(MEM_DEVICE, src_bytes(&sh), 81);
    buf b = buf_new(MEM_DEVICE, dst_bytes(&sh), 82);
    unsigned char *back = ts_pinned_alloc(b.n);
    unsigned char *fresh = ts_malloc(a.n);
    ts_fill_random(fresh, a.n, 83);
    for (int round = 0; round < 3; ++round) {
        ts_busy_queue(&busy, s);
        /* a <- fresh (after the busy work), b <- a (2-D), back <- b */
        assert_cu_ok(cuMemcpyHtoDAsync(a.dev, fresh, a.n, s));
        memcpy(a.mirror, fresh, a.n);
        CUDA_MEMCPY2D c = make2d(&b, &a, &sh);
        assert_cu_ok(cuMemcpy2DAsync(&c, s));
        model_copy(&b, &a, &sh);
        assert_cu_ok(cuMemcpyDtoHAsync(back, b.dev, b.n, s));
        assert_cu_ok(cuStreamSynchronize(s));
        assert_bytes_equal(b.mirror, back, b.n);
        ts_fill_random(fresh, a.n, 84 + round);
    }
    ts_busy_free(&busy);
    buf_free(&a);
    buf_free(&b);
    assert_cu_ok(cuStreamDestroy(s));
}

/* ------------------------------------------------------------ bad input */

static void test_copy2d_argument_checks(void **state) {
    (void)state;
    const shape s = {100, 10, 1, 0, 0, 0, 128, 0, 0, 0, 0, 128, 0};
    buf src = buf_new(MEM_PAGEABLE, 8192, 91);
    buf dst = buf_new(MEM_DEVICE, 8192, 92);
    CUDA_MEMCPY2D g = make2d(&dst, &src, &s), c;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2DUnaligned(NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2DAsync(NULL, NULL));
    c = g, c.WidthInBytes = 129;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    c = g, c.dstPitch = 64;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    c = g, c.srcMemoryType = (CUmemorytype)0;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    c = g, c.dstMemoryType = (CUmemorytype)9;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    /* CUDA arrays: a NULL one is invalid (libcuda); arrays are not provided,
     * so any other handle is not one nvlite could have made. */
    c = g, c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    c = g, c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2DAsync(&c, NULL));
    c = g, c.srcMemoryType = CU_MEMORYTYPE_ARRAY, c.srcArray = (CUarray)(uintptr_t)0x1000;
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, cuMemcpy2D(&c));
    c = g, c.srcHost = NULL;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    c = g, c.dstDevice = 0;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    /* The last line would end past the device allocation (8192 bytes). */
    c = g, c.dstY = 54, c.dstXInBytes = 29;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    c = g, c.dstY = 54, c.dstXInBytes = 28; /* ends exactly at the end */
    assert_cu_ok(cuMemcpy2D(&c));
    /* A host address named as device memory. */
    c = g, c.dstDevice = ts_dptr(src.host);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    /* Device memory named as host memory. */
    c = g, c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = (const void *)(uintptr_t)dst.dev;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    /* A line wider than its pitch, also when there is one line. */
    c = g, c.Height = 1, c.srcPitch = 10, c.dstPitch = 10;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    /* Pitches beyond CU_DEVICE_ATTRIBUTE_MAX_PITCH and 4 GiB: libcuda copies
     * (one line here, so nothing beyond it is read). */
    c = g, c.Height = 1, c.srcPitch = ((size_t)1 << 32) + 5;
    assert_cu_ok(cuMemcpy2DUnaligned(&c));
    assert_cu_ok(cuMemcpy2D(&c));
    /* Nothing to copy. */
    c = g, c.Height = 0;
    assert_cu_ok(cuMemcpy2D(&c));
    c = g, c.WidthInBytes = 0;
    assert_cu_ok(cuMemcpy2D(&c));
    /* A stream that is not one. */
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemcpy2DAsync(&g, (CUstream)(uintptr_t)0x1234));
    /* What succeeded copied what the model says. */
    const shape last = {100, 10, 1, 0, 0, 0, 128, 0, 28, 54, 0, 128, 0};
    const shape one = {100, 1, 1, 0, 0, 0, 128, 0, 0, 0, 0, 128, 0};
    model_copy(&dst, &src, &last);
    model_copy(&dst, &src, &one);
    buf_check(&dst, "the copies that succeeded");
    /* A pitch of 0 is the width (libcuda takes it): packed lines. */
    c = g, c.srcPitch = 0, c.dstY = 20;
    assert_cu_ok(cuMemcpy2D(&c));
    const shape packed = {100, 10, 1, 0, 0, 0, 100, 0, 0, 20, 0, 128, 0};
    model_copy(&dst, &src, &packed);
    buf_check(&dst, "source pitch 0");
    buf_free(&src);
    buf_free(&dst);
}

static void test_copy3d_argument_checks(void **state) {
    (void)state;
    const shape s = {13, 5, 3, 2, 1, 1, 17, 7, 4, 2, 1, 32, 9};
    buf src = buf_new(MEM_PAGEABLE, src_bytes(&s), 93);
    buf dst = buf_new(MEM_DEVICE, dst_bytes(&s), 94);
    CUDA_MEMCPY3D g = make3d(&dst, &src, &s), c;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy3D(NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DAsync(NULL, NULL));
    c = g, c.srcHeight = 4;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy3D(&c));
    c = g, c.dstHeight = 4;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy3D(&c));
    c = g, c.srcHeight = 4, c.Depth = 1, c.srcZ = 0; /* also for one slice */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DAsync(&c, NULL));
    c = g, c.WidthInBytes = 18;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy3D(&c));
    c = g, c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy3D(&c));
    c = g, c.dstZ = 2; /* the last slice would end past the allocation */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy3D(&c));
    c = g, c.Depth = 0;
    assert_cu_ok(cuMemcpy3D(&c));
    buf_check(&dst, "nothing copied");
    /* Levels of detail and the reserved fields are not looked at (libcuda). */
    c = g, c.srcLOD = 1, c.dstLOD = 2, c.reserved0 = &c, c.reserved1 = &c;
    assert_cu_ok(cuMemcpy3D(&c));
    model_copy(&dst, &src, &s);
    buf_check(&dst, "the good copy");
    /* A slice height of 0 is the copy's height. */
    c = g, c.dstHeight = 0, c.dstZ = 0;
    assert_cu_ok(cuMemcpy3D(&c));
    const shape packed = {13, 5, 3, 2, 1, 1, 17, 7, 4, 2, 0, 32, 5};
    model_copy(&dst, &src, &packed);
    buf_check(&dst, "destination slice height 0");
    buf_free(&src);
    buf_free(&dst);
}

/* ------------------------------------------------------------ cuMemAllocPitch */

static void test_alloc_pitch(void **state) {
    (void)state;
    static const size_t widths[] = {1, 3, 511, 512, 513, 4097, 65537};
    static const unsigned elems[] = {4, 8, 16};
    for (size_t i = 0; i < TS_ARRAY_SIZE(widths); ++i)
        for (size_t e = 0; e < 3; ++e) {
            CUdeviceptr p = 0;
            size_t pitch = 0;
            const size_t h = 7;
            assert_cu_ok(cuMemAllocPitch(&p, &pitch, widths[i], h, elems[e]));
            assert_true(pitch >= widths[i]);
            assert_true(pitch % elems[e] == 0);
            assert_true(p % 256 == 0);
            CUdeviceptr base = 0;
            size_t size = 0;
            assert_cu_ok(cuMemGetAddressRange(&base, &size, p + pitch * h - 1));
            assert_true(base == p && size >= pitch * h);
            /* The rows are usable: a pitched round trip. */
            const shape s = {widths[i], h, 1, 0, 0, 0, widths[i], 0, 0, 0, 0, pitch, 0};
            buf src = buf_new(MEM_PAGEABLE, src_bytes(&s), 100 + i * 3 + e);
            buf back = buf_new(MEM_PAGEABLE, src_bytes(&s), 200 + i * 3 + e);
            buf dev = {MEM_DEVICE, pitch * h, NULL, p, NULL};
            CUDA_MEMCPY2D c = make2d(&dev, &src, &s);
            assert_cu_ok(cuMemcpy2D(&c));
            const shape r = {widths[i], h, 1, 0, 0, 0, pitch, 0, 0, 0, 0, widths[i], 0};
            c = make2d(&back, &dev, &r);
            assert_cu_ok(cuMemcpy2D(&c));
            assert_bytes_equal(src.host, back.host, src.n);
            buf_free(&src);
            buf_free(&back);
            assert_cu_ok(cuMemFree(p));
        }
    CUdeviceptr p = 0;
    size_t pitch = 0;
    static const unsigned bad[] = {0, 1, 2, 3, 5, 32};
    for (size_t i = 0; i < TS_ARRAY_SIZE(bad); ++i)
        assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemAllocPitch(&p, &pitch, 100, 7, bad[i]));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemAllocPitch(NULL, &pitch, 100, 7, 4));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemAllocPitch(&p, NULL, 100, 7, 4));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemAllocPitch(&p, &pitch, 0, 7, 4));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemAllocPitch(&p, &pitch, 100, 0, 4));
}

/* ------------------------------------------------------------ 2-D fills */

typedef CUresult (*fill_fn)(CUdeviceptr, size_t, unsigned, size_t, size_t, CUstream);
static CUresult d2d8(CUdeviceptr d, size_t p, unsigned v, size_t w, size_t h, CUstream s) {
    return s ? cuMemsetD2D8Async(d, p, (unsigned char)v, w, h, s) : cuMemsetD2D8(d, p, (unsigned char)v, w, h);
}
static CUresult d2d16(CUdeviceptr d, size_t p, unsigned v, size_t w, size_t h, CUstream s) {
    return s ? cuMemsetD2D16Async(d, p, (unsigned short)v, w, h, s) : cuMemsetD2D16(d, p, (unsigned short)v, w, h);
}
static CUresult d2d32(CUdeviceptr d, size_t p, unsigned v, size_t w, size_t h, CUstream s) {
    return s ? cuMemsetD2D32Async(d, p, v, w, h, s) : cuMemsetD2D32(d, p, v, w, h);
}

static void model_fill(buf *b, size_t off, size_t pitch, unsigned value, unsigned esize, size_t w, size_t h) {
    for (size_t y = 0; y < h; ++y)
        for (size_t x = 0; x < w * esize; ++x)
            b->mirror[off + y * pitch + x] = (unsigned char)(value >> (8 * (x % esize)));
}

static void fills(CUstream s) {
    static const struct {
        unsigned esize;
        fill_fn fn;
        unsigned value;
    } kinds[] = {{1, d2d8, 0xa7}, {2, d2d16, 0xbeef}, {4, d2d32, 0xdeadbeef}};
    /* Offsets and pitches multiples of 4; widths in bytes (the element
     * count is width / element size, at least one). */
    static const struct {
        size_t off, pitch, w, h;
    } shapes[] = {{0, 20, 5, 1}, {4, 100, 7, 13}, {8, 1024, 255, 3}, {12, 36, 9, 50}, {16, 8, 2, 9},
                  {4, 4100, 1025, 65}, {0, 28, 28, 11} /* packed: one line */};
    for (size_t k = 0; k < 3; ++k)
        for (size_t i = 0; i < TS_ARRAY_SIZE(shapes); ++i) {
            const unsigned es = kinds[k].esize;
            const size_t off = shapes[i].off, pitch = shapes[i].pitch;
            const size_t w = shapes[i].w / es ? shapes[i].w / es : 1;
            buf b = buf_new(MEM_DEVICE, off + (shapes[i].h - 1) * pitch + w * es + 11, 300 + k * 16 + i);
            assert_cu_ok(kinds[k].fn(b.dev + off, pitch, kinds[k].value, w, shapes[i].h, s));
            model_fill(&b, off, pitch, kinds[k].value, es, w, shapes[i].h);
            if (s) assert_cu_ok(cuStreamSynchronize(s));
            char what[96];
            snprintf(what, sizeof what, "memsetD2D%u pitch %zu width %zu height %zu", es * 8, pitch, w, shapes[i].h);
            buf_check(&b, what);
            buf_free(&b);
        }
}

static void test_memset_d2d(void **state) {
    (void)state;
    fills(NULL);
}

static void test_memset_d2d_async(void **state) {
    (void)state;
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    fills(s);
    assert_cu_ok(cuStreamDestroy(s));
}

/* Pinned host memory is memory a fill can reach (unified addressing); the
 * synchronous form is done when it returns. */
static void test_memset_d2d_pinned_host(void **state) {
    (void)state;
    buf b = buf_new(MEM_PINNED, 1000, 301);
    assert_cu_ok(cuMemsetD2D16(ts_dptr(b.host) + 2, 100, 0x1234, 33, 9));
    model_fill(&b, 2, 100, 0x1234, 2, 33, 9);
    buf_check(&b, "memsetD2D16 of pinned memory");
    buf_free(&b);
}

static void test_memset_d2d_argument_checks(void **state) {
    (void)state;
    CUdeviceptr m = ts_dev_alloc(4096);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D8(m, 10, 1, 11, 2));      /* pitch < width */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D16(m, 10, 1, 6, 2));     /* pitch < 2 * width */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D32(m, 12, 1, 4, 2));     /* pitch < 4 * width */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D16(m + 1, 100, 1, 10, 2)); /* misaligned start */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D16(m, 101, 1, 10, 2));   /* misaligned pitch */
    assert_cu_ok(cuMemsetD2D16(m, 101, 1, 10, 1));                         /* ... unused for one line */
    assert_cu_ok(cuMemsetD2D8(m, 10, 1, 11, 1));                           /* so is a short one */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D32(m + 2, 100, 1, 10, 2));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D32(m, 102, 1, 10, 2));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D8(m, 100, 1, 100, 41));  /* past the end */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D8(0, 100, 1, 10, 2));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D32Async(m + 1, 100, 1, 10, 2, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemsetD2D8Async(m, 100, 1, 10, 2, (CUstream)(uintptr_t)0x1234));
    assert_cu_ok(cuMemsetD2D8(m + 96, 100, 1, 100, 40)); /* the last line ends at the end */
    assert_cu_ok(cuMemsetD2D8(m, 100, 1, 0, 2));
    assert_cu_ok(cuMemsetD2D8(m, 100, 1, 5, 0));
    assert_cu_ok(cuMemFree(m));
}

/* ------------------------------------------------------------ peer copies */

static void test_copy_peer_between_contexts(void **state) {
    ts_fixture *fx = ts_fx(state);
    const size_t n = 3 * TS_MiB + 7;
    buf a = buf_new(MEM_DEVICE, n, 401);
    CUcontext other;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev));
    CUdeviceptr b = 0;
    assert_cu_ok(cuMemAlloc(&b, n));
    assert_cu_ok(cuCtxPopCurrent(NULL));
    assert_cu_ok(cuMemcpyPeer(b, other, a.dev + 1, fx->ctx, n - 1));
    unsigned char *back = ts_malloc(n);
    assert_cu_ok(cuCtxPushCurrent(other));
    assert_cu_ok(cuMemcpyDtoH(back, b, n - 1));
    assert_cu_ok(cuCtxPopCurrent(NULL));
    assert_bytes_equal(a.mirror + 1, back, n - 1);
    /* Back, asynchronously, in a stream of the current context. */
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    assert_cu_ok(cuMemcpyPeerAsync(a.dev, fx->ctx, b, other, n - 1, s));
    assert_cu_ok(cuStreamSynchronize(s));
    memcpy(a.mirror, back, n - 1);
    buf_check(&a, "cuMemcpyPeerAsync");
    /* Within one context. */
    assert_cu_ok(cuMemcpyPeer(a.dev + 200, fx->ctx, a.dev, fx->ctx, 100));
    memmove(a.mirror + 200, a.mirror, 100);
    buf_check(&a, "cuMemcpyPeer, one context");
    /* A 3-D peer copy. */
    CUDA_MEMCPY3D_PEER p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p.srcDevice = b;
    p.srcContext = other;
    p.srcPitch = 64;
    p.srcHeight = 8;
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.dstDevice = a.dev;
    p.dstContext = fx->ctx;
    p.dstPitch = 80;
    p.dstHeight = 9;
    p.WidthInBytes = 61;
    p.Height = 7;
    p.Depth = 3;
    assert_cu_ok(cuMemcpy3DPeer(&p));
    for (size_t z = 0; z < 3; ++z)
        for (size_t y = 0; y < 7; ++y) memcpy(a.mirror + z * 720 + y * 80, back + z * 512 + y * 64, 61);
    buf_check(&a, "cuMemcpy3DPeer");
    assert_cu_ok(cuMemcpy3DPeerAsync(&p, s));
    assert_cu_ok(cuStreamSynchronize(s));
    buf_check(&a, "cuMemcpy3DPeerAsync (the same copy again)");
    /* NULL is the current context (libcuda takes it); handles that are not contexts. */
    assert_cu_ok(cuMemcpyPeer(a.dev + 300, NULL, a.dev, fx->ctx, 16));
    memmove(a.mirror + 300, a.mirror, 16);
    buf_check(&a, "cuMemcpyPeer, NULL context");
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuMemcpyPeer(b, other, a.dev, (CUcontext)(uintptr_t)0x1000, 16));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpyPeer(b, other, a.dev, fx->ctx, n + 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DPeer(NULL));
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuCtxDestroy(other));
    /* A destroyed context. */
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuMemcpyPeer(b, other, a.dev, fx->ctx, 16));
    buf_free(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_copy2d_all_directions),
        TEST(test_copy2d_unaligned),
        TEST(test_copy2d_async_streams),
        TEST(test_copy3d_all_directions),
        TEST(test_copy3d_async),
        TEST(test_copy2d_unified_naming),
        TEST(test_copy2d_async_in_stream_order),
        TEST(test_copy2d_argument_checks),
        TEST(test_copy3d_argument_checks),
        TEST(test_alloc_pitch),
        TEST(test_memset_d2d),
        TEST(test_memset_d2d_async),
        TEST(test_memset_d2d_pinned_host),
        TEST(test_memset_d2d_argument_checks),
        TEST(test_copy_peer_between_contexts),
    };
    return cmocka_run_group_tests(tests, ts_group_init, NULL);
}
