/*
 * Hardware-only tests of issue 10 part C (make test-hw; built in CI, they
 * skip without a real GPU): pitched copies and fills at sizes the copy
 * engine walks line by line, stream-ordered allocation against real
 * kernels, host functions between kernels.
 *
 *   (a) 2-D copies of an 8191 x 2049 image (odd width, odd pitches, odd
 *       offsets) between device, pinned and pageable memory, and a
 *       257 x 129 x 67 3-D box between padded and packed layouts, checked
 *       byte for byte against a CPU model, untouched bytes included;
 *       2-D fills of every element size over a large pitched image;
 *   (b) pool reuse across streams: a kernel that spins, then writes a
 *       pattern into a stream-ordered allocation, a copy behind it that reads
 *       it back and a free; another stream allocates at once and overwrites
 *       what it gets; the pattern must arrive intact (and the other stream
 *       must not get the same range unless it followed an event);
 *   (c) host functions between kernels: a kernel writes a value after a
 *       20 ms spin, the host function reads it (it must see the value) and
 *       writes another, which the kernel after the function reads.
 *
 * Kernels are compiled at test time with NVRTC; every result is checked on
 * the host; print_message lines give the sizes moved.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_hw_ctx_setup, ts_ctx_teardown)

static const char kSource[] =
    "extern \"C\" {\n"
    "// Spins for ns, then fills n words with seed + index (one block).\n"
    "__global__ void spin_then_fill(unsigned long long ns, unsigned* buf, unsigned n, unsigned seed) {\n"
    "    unsigned long long t0, t;\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "    do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); } while (t - t0 < ns);\n"
    "    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) buf[i] = seed + i * 2654435761u;\n"
    "}\n"
    "// out[0] = *in + 1 (one thread).\n"
    "__global__ void increment(const volatile unsigned* in, unsigned* out) { out[0] = in[0] + 1; }\n"
    "}\n";

typedef struct {
    CUmodule m;
    CUfunction spin_fill, increment;
} kernels;

static kernels hw_kernels(void) {
    const char *why = NULL;
    if (!ts_have_real_gpu(&why)) ts_skip("no real GPU: %s", why);
    kernels k;
    k.m = ts_source_module(kSource, "hw_mem.cu");
    k.spin_fill = ts_get_function(k.m, "spin_then_fill");
    k.increment = ts_get_function(k.m, "increment");
    return k;
}

static void spin_fill(const kernels *k, CUstream s, double ms, CUdeviceptr buf, unsigned n, unsigned seed) {
    unsigned long long ns = (unsigned long long)(ms * 1e6);
    void *args[] = {&ns, &buf, &n, &seed};
    assert_cu_ok(cuLaunchKernel(k->spin_fill, 1, 1, 1, 256, 1, 1, 0, s, args, NULL));
}

static unsigned pattern_word(unsigned seed, unsigned i) { return seed + i * 2654435761u; }

static void require_gpu(void) {
    const char *why = NULL;
    if (!ts_have_real_gpu(&why)) ts_skip("no real GPU: %s", why);
}

/* ------------------------------------------------------------------ (a) shapes */

typedef enum { PAGEABLE, PINNED, DEVICE } kind;

typedef struct {
    kind k;
    size_t n;
    unsigned char *host;
    CUdeviceptr dev;
    unsigned char *mirror;
} buffer;

static buffer buffer_new(kind k, size_t n, uint64_t seed) {
    buffer b = {k, n, NULL, 0, ts_malloc(n)};
    ts_fill_random(b.mirror, n, seed);
    if (k == PAGEABLE) b.host = ts_malloc(n);
    else if (k == PINNED) assert_cu_ok(cuMemAllocHost((void **)&b.host, n));
    if (k == DEVICE) {
        assert_cu_ok(cuMemAlloc(&b.dev, n));
        assert_cu_ok(cuMemcpyHtoD(b.dev, b.mirror, n));
        assert_cu_ok(cuCtxSynchronize());
    } else {
        memcpy(b.host, b.mirror, n);
    }
    return b;
}

static void buffer_free(buffer *b) {
    if (b->k == PAGEABLE) ts_free(b->host);
    else if (b->k == PINNED) assert_cu_ok(cuMemFreeHost(b->host));
    else assert_cu_ok(cuMemFree(b->dev));
    ts_free(b->mirror);
}

static void buffer_check(const buffer *b, const char *what) {
    const unsigned char *actual = b->host;
    unsigned char *back = NULL;
    if (b->k == DEVICE) {
        back = ts_malloc(b->n);
        assert_cu_ok(cuMemcpyDtoH(back, b->dev, b->n));
        actual = back;
    }
    if (memcmp(actual, b->mirror, b->n) != 0) print_error("wrong bytes after %s\n", what);
    assert_bytes_named(b->mirror, actual, b->n, what);
    ts_free(back);
}

static void side(const buffer *b, CUmemorytype *t, const void **h, CUdeviceptr *d) {
    if (b->k == DEVICE) *t = CU_MEMORYTYPE_DEVICE, *d = b->dev;
    else *t = CU_MEMORYTYPE_HOST, *h = b->host;
}

static void test_big_2d_copies(void **state) {
    (void)state;
    require_gpu();
    const size_t W = 8191, H = 2049, SP = 8209, DP = 8704, SX = 5, SY = 3, DX = 11, DY = 2;
    const size_t sbytes = (SY + H) * SP, dbytes = (DY + H) * DP;
    static const kind kinds[] = {PAGEABLE, PINNED, DEVICE};
    size_t moved = 0;
    for (int d = 0; d < 3; ++d)
        for (int s = 0; s < 3; ++s) {
            if (kinds[d] != DEVICE && kinds[s] != DEVICE) continue;
            buffer src = buffer_new(kinds[s], sbytes, 0x2d00 + s);
            buffer dst = buffer_new(kinds[d], dbytes, 0x2d10 + d);
            CUDA_MEMCPY2D c;
            memset(&c, 0, sizeof c);
            side(&src, &c.srcMemoryType, &c.srcHost, &c.srcDevice);
            const void *dh = NULL;
            side(&dst, &c.dstMemoryType, &dh, &c.dstDevice);
            c.dstHost = (void *)dh;
            c.srcXInBytes = SX, c.srcY = SY, c.srcPitch = SP;
            c.dstXInBytes = DX, c.dstY = DY, c.dstPitch = DP;
            c.WidthInBytes = W, c.Height = H;
            assert_cu_ok(cuMemcpy2D(&c));
            for (size_t y = 0; y < H; ++y)
                memcpy(dst.mirror + (DY + y) * DP + DX, src.mirror + (SY + y) * SP + SX, W);
            buffer_check(&dst, "2-D copy of 8191 x 2049");
            moved += W * H;
            buffer_free(&src);
            buffer_free(&dst);
        }
    print_message("2-D copies: %zu MiB moved, every byte checked\n", moved >> 20);
}

static void test_big_3d_copies(void **state) {
    (void)state;
    require_gpu();
    const size_t W = 257, H = 129, D = 67;
    /* padded source (pitch 320, 131 lines per slice), packed destination */
    const size_t SP = 320, SH = 131, DP = W, DH = H;
    buffer src = buffer_new(DEVICE, SP * SH * D, 0x3d01);
    buffer dst = buffer_new(DEVICE, DP * DH * D, 0x3d02);
    buffer page = buffer_new(PAGEABLE, SP * SH * D, 0x3d03);
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = src.dev, c.srcPitch = SP, c.srcHeight = SH;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = dst.dev, c.dstPitch = DP, c.dstHeight = DH;
    c.WidthInBytes = W, c.Height = H, c.Depth = D;
    assert_cu_ok(cuMemcpy3D(&c));
    for (size_t z = 0; z < D; ++z)
        for (size_t y = 0; y < H; ++y)
            memcpy(dst.mirror + z * DP * DH + y * DP, src.mirror + z * SP * SH + y * SP, W);
    buffer_check(&dst, "3-D padded -> packed");
    /* and back into pageable memory, padded */
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = dst.dev, c.srcPitch = DP, c.srcHeight = DH;
    c.dstMemoryType = CU_MEMORYTYPE_HOST, c.dstHost = page.host, c.dstPitch = SP, c.dstHeight = SH;
    c.WidthInBytes = W, c.Height = H, c.Depth = D;
    assert_cu_ok(cuMemcpy3D(&c));
    for (size_t z = 0; z < D; ++z)
        for (size_t y = 0; y < H; ++y)
            memcpy(page.mirror + z * SP * SH + y * SP, dst.mirror + z * DP * DH + y * DP, W);
    buffer_check(&page, "3-D packed -> padded pageable");
    buffer_free(&src);
    buffer_free(&dst);
    buffer_free(&page);
}

static void test_big_2d_fills(void **state) {
    (void)state;
    require_gpu();
    const size_t pitch = 16388, h = 1031;
    buffer b = buffer_new(DEVICE, pitch * h + 64, 0xf111);
    assert_cu_ok(cuMemsetD2D8(b.dev + 1, pitch, 0x3c, 16001, h));
    for (size_t y = 0; y < h; ++y) memset(b.mirror + 1 + y * pitch, 0x3c, 16001);
    buffer_check(&b, "memsetD2D8");
    assert_cu_ok(cuMemsetD2D16(b.dev + 2, pitch, 0xa55a, 7001, h));
    for (size_t y = 0; y < h; ++y)
        for (size_t x = 0; x < 7001 * 2; ++x) b.mirror[2 + y * pitch + x] = x % 2 ? 0xa5 : 0x5a;
    buffer_check(&b, "memsetD2D16");
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    assert_cu_ok(cuMemsetD2D32Async(b.dev + 4, pitch, 0x01020304, 4001, h, s));
    assert_cu_ok(cuStreamSynchronize(s));
    for (size_t y = 0; y < h; ++y)
        for (size_t x = 0; x < 4001 * 4; ++x) b.mirror[4 + y * pitch + x] = (unsigned char)(4 - x % 4);
    buffer_check(&b, "memsetD2D32Async");
    assert_cu_ok(cuStreamDestroy(s));
    buffer_free(&b);
}

/* ------------------------------------------------------------------ (b) pools */

static void test_pool_reuse_across_streams_with_kernels(void **state) {
    (void)state;
    kernels k = hw_kernels();
    CUstream a = ts_stream_new(CU_STREAM_NON_BLOCKING), b = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent ev = ts_event_new(CU_EVENT_DISABLE_TIMING);
    const unsigned n = (unsigned)(TS_MiB / 4 + 77);
    unsigned *out = (unsigned *)ts_pinned_alloc(n * 4);
    int same_without = 0, same_with = 0;
    for (int round = 0; round < 6; ++round) {
        const int with_event = round % 2;
        memset(out, 0, n * 4);
        CUdeviceptr x = 0, y = 0;
        assert_cu_ok(cuMemAllocAsync(&x, n * 4, a));
        spin_fill(&k, a, 20, x, n, 1000u + (unsigned)round);
        assert_cu_ok(cuMemcpyDtoHAsync(out, x, n * 4, a));
        assert_cu_ok(cuMemFreeAsync(x, a));
        if (with_event) {
            assert_cu_ok(cuEventRecord(ev, a));
            assert_cu_ok(cuStreamWaitEvent(b, ev, 0));
        }
        assert_cu_ok(cuMemAllocAsync(&y, n * 4, b));
        assert_cu_ok(cuMemsetD32Async(y, 0xdeadbeef, n, b));
        assert_cu_ok(cuMemFreeAsync(y, b));
        assert_cu_ok(cuCtxSynchronize());
        for (unsigned i = 0; i < n; ++i)
            if (out[i] != pattern_word(1000u + (unsigned)round, i))
                fail_msg("round %d: word %u is 0x%x, the kernel wrote 0x%x", round, i, out[i],
                         pattern_word(1000u + (unsigned)round, i));
        if (with_event) same_with += x == y;
        else same_without += x == y;
    }
    assert_int_equal(same_without, 0);
    assert_int_equal(same_with, 3);
    print_message("pool reuse: never across unordered streams, always after the event (3 of 3)\n");
    assert_cu_ok(cuEventDestroy(ev));
    assert_cu_ok(cuStreamDestroy(a));
    assert_cu_ok(cuStreamDestroy(b));
}

/* ------------------------------------------------------------------ (c) host functions */

typedef struct {
    volatile unsigned *mapped; /* pinned: the kernel wrote [0], the function writes [1] */
    atomic_int saw;
} handoff;

static void CUDA_CB read_then_write(void *data) {
    handoff *h = data;
    atomic_store(&h->saw, (int)h->mapped[0]);
    h->mapped[1] = h->mapped[0] * 3;
}

static void test_host_function_between_kernels(void **state) {
    (void)state;
    kernels k = hw_kernels();
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    unsigned *mapped = (unsigned *)ts_pinned_alloc(64);
    CUdeviceptr dev = ts_dev_alloc(64);
    for (int round = 0; round < 5; ++round) {
        memset(mapped, 0, 64);
        handoff h = {mapped, -1};
        const unsigned seed = 77u + (unsigned)round;
        /* the kernel fills dev[0] after 20 ms; a copy brings it to mapped[0] */
        spin_fill(&k, s, 20, dev, 1, seed);
        assert_cu_ok(cuMemcpyDtoHAsync(mapped, dev, 4, s));
        assert_cu_ok(cuLaunchHostFunc(s, read_then_write, &h));
        /* the kernel after it reads mapped[1] (through unified addressing) */
        CUdeviceptr in = ts_dptr(mapped + 1), out = dev + 16;
        void *args[] = {&in, &out};
        assert_cu_ok(cuLaunchKernel(k.increment, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
        unsigned result = 0;
        assert_cu_ok(cuMemcpyDtoHAsync(&result, dev + 16, 4, s));
        assert_cu_ok(cuStreamSynchronize(s));
        assert_int_equal((unsigned)atomic_load(&h.saw), seed);
        assert_int_equal(result, seed * 3 + 1);
    }
    assert_cu_ok(cuStreamDestroy(s));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_big_2d_copies),
        TEST(test_big_3d_copies),
        TEST(test_big_2d_fills),
        TEST(test_pool_reuse_across_streams_with_kernels),
        TEST(test_host_function_between_kernels),
    };
    ts_watchdog_arm("test_hw_mem", 600);
    return cmocka_run_group_tests(tests, ts_group_init, NULL);
}
