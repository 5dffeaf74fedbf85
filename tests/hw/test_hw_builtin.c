/*
 * The built-in copy and fill kernels on a real GPU (issue 12): device-to-device
 * copies (1-D, 2-D, 3-D) and memsets (D8/D16/D32, 2-D) at sizes from the
 * kernel threshold (this test sets NVLITE_KERNEL_COPY_MIN / _FILL_MIN to
 * 64 KiB unless the environment has them) up, at odd sizes, offsets and
 * pitches, with random data; every byte of the destination is checked,
 * including 64 bytes around the work. Every launch variant of the library
 * (NVLITE_BUILTIN_VARIANT) runs the suite in a process of its own, unless
 * the environment names one. Also checked:
 * stream order with events across streams (kernel copies and memsets between
 * copy-engine work). Skips without a GPU.
 */
#define _POSIX_C_SOURCE 200809L  // setenv
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/test_support.h"

#define MiB ((size_t)1 << 20)

#define NEED_GPU()                                                   \
    do {                                                             \
        const char* why_ = NULL;                                     \
        if (!ts_have_real_gpu(&why_)) ts_skip("no real GPU: %s", why_); \
    } while (0)

static void check_region(const unsigned char* want, CUdeviceptr d, size_t n, const char* what) {
    unsigned char* got = ts_malloc(n);
    assert_cu_ok(cuMemcpyDtoH(got, d, n));
    assert_bytes_named(want, got, n, what);
    ts_free(got);
}

static void test_copies_1d(void** state) {
    (void)state;
    NEED_GPU();
    const size_t cap = 64 * MiB + 4096;
    CUdeviceptr a = ts_dev_alloc(cap), b = ts_dev_alloc(cap);
    unsigned char* src = ts_malloc(cap);
    unsigned char* dst = ts_malloc(cap);
    ts_rng rng;
    ts_rng_init(&rng, 1207);
    const size_t sizes[] = {64 * 1024, 64 * 1024 + 1, 300007, 1 * MiB + 15, 7 * MiB + 3, 64 * MiB + 13};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        for (int k = 0; k < 3; ++k) {
            const size_t n = sizes[i], so = ts_rng_below(&rng, 64), dof = ts_rng_below(&rng, 64);
            /* The bytes the copy may touch, and 64 beyond them on each side. */
            const size_t used = n + 128;
            ts_fill_random(src, used, 7000 + i * 10 + (uint64_t)k);
            ts_fill_random(dst, used, 8000 + i * 10 + (uint64_t)k);
            assert_cu_ok(cuMemcpyHtoD(a, src, used));
            assert_cu_ok(cuMemcpyHtoD(b, dst, used));
            CUstream s = k == 2 ? ts_stream_new(CU_STREAM_NON_BLOCKING) : NULL;
            assert_cu_ok(cuMemcpyDtoDAsync(b + dof, a + so, n, s));
            if (s) assert_cu_ok(cuStreamSynchronize(s));
            memcpy(dst + dof, src + so, n);
            check_region(dst, b, used, "1-D device-to-device copy");
        }
    }
}

static void test_fills(void** state) {
    (void)state;
    NEED_GPU();
    const size_t cap = 64 * MiB + 256;
    CUdeviceptr a = ts_dev_alloc(cap);
    unsigned char* mem = ts_malloc(cap);
    ts_rng rng;
    ts_rng_init(&rng, 1208);
    for (unsigned size = 1; size <= 4; size *= 2) {
        /* The largest is above the L2 (streaming variants take their hints). */
        const size_t counts[] = {64 * 1024 / size, 64 * 1024 / size + 1, 777777 / size, (64 * MiB + 100) / size};
        for (size_t c = 0; c < 4; ++c) {
            const size_t count = counts[c], off = ts_rng_below(&rng, 16) / size * size;
            const size_t used = off + count * size + 64; /* and 64 bytes beyond */
            const uint32_t value = (uint32_t)ts_rng_next(&rng) | 0x01010101u;
            ts_fill_random(mem, used, 9000 + size * 10 + c);
            assert_cu_ok(cuMemcpyHtoD(a, mem, used));
            if (size == 1) assert_cu_ok(cuMemsetD8(a + off, (unsigned char)value, count));
            else if (size == 2) assert_cu_ok(cuMemsetD16(a + off, (unsigned short)value, count));
            else assert_cu_ok(cuMemsetD32(a + off, value, count));
            ts_fill_host(mem + off, value, size, count);
            check_region(mem, a, used, "memset");
        }
    }
    /* 2-D: 2-byte elements, lines with gaps. */
    const size_t pitch = 4099 * 2, width = 3001, height = 300;
    ts_fill_random(mem, cap, 9100);
    assert_cu_ok(cuMemcpyHtoD(a, mem, cap));
    assert_cu_ok(cuMemsetD2D16(a + 6, pitch, 0xa55a, width, height));
    ts_fill_2d_host(mem + 6, pitch, 0xa55a, 2, width, height);
    check_region(mem, a, cap, "2-D memset");
}

static void test_copies_2d_3d(void** state) {
    (void)state;
    NEED_GPU();
    const size_t width = 70001, height = 9, depth = 3, sp = 70400, dp = 71000;
    const size_t sBytes = sp * height * depth + 64, dBytes = dp * height * depth + 64;
    CUdeviceptr s = ts_dev_alloc(sBytes), d = ts_dev_alloc(dBytes);
    unsigned char* src = ts_malloc(sBytes);
    unsigned char* dst = ts_malloc(dBytes);
    ts_fill_random(src, sBytes, 9200);
    ts_fill_random(dst, dBytes, 9201);
    assert_cu_ok(cuMemcpyHtoD(s, src, sBytes));
    assert_cu_ok(cuMemcpyHtoD(d, dst, dBytes));
    const ts_box b2 = {.srcX = 3, .srcPitch = sp, .dstX = 9, .dstY = 1, .dstPitch = dp, .width = width,
                       .height = height - 1, .depth = 1};
    const CUDA_MEMCPY2D c2 = ts_box_2d_dtod(d, s, &b2);
    assert_cu_ok(cuMemcpy2D(&c2));
    ts_box_copy_host(dst, src, &b2);
    const ts_box b3 = {.srcX = 1, .srcPitch = sp, .srcHeight = height, .dstX = 4, .dstPitch = dp, .dstHeight = height,
                       .width = width - 5, .height = height, .depth = depth};
    const CUDA_MEMCPY3D c3 = ts_box_3d_dtod(d, s, &b3);
    assert_cu_ok(cuMemcpy3D(&c3));
    ts_box_copy_host(dst, src, &b3);
    check_region(dst, d, dBytes, "2-D and 3-D device-to-device copies");
}

static void test_order_with_events(void** state) {
    (void)state;
    NEED_GPU();
    const size_t n = 32 * MiB + 7;
    CUdeviceptr a = ts_dev_alloc(n), b = ts_dev_alloc(n), c = ts_dev_alloc(n);
    unsigned char* pinned = ts_pinned_alloc(n);
    unsigned char* want = ts_malloc(n);
    CUstream s1 = ts_stream_new(CU_STREAM_NON_BLOCKING), s2 = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent e = ts_event_new(CU_EVENT_DISABLE_TIMING);
    for (int round = 0; round < 4; ++round) {
        ts_fill_random(want, n, 9300 + (uint64_t)round);
        memcpy(pinned, want, n);
        assert_cu_ok(cuMemcpyHtoDAsync(a, pinned, n, s1));  /* copy engine */
        assert_cu_ok(cuMemcpyDtoDAsync(b, a, n, s1));       /* kernel */
        assert_cu_ok(cuMemsetD8Async(a, 0, n, s1));         /* kernel: a is clobbered after the copy */
        assert_cu_ok(cuEventRecord(e, s1));
        assert_cu_ok(cuStreamWaitEvent(s2, e, 0));
        assert_cu_ok(cuMemcpyDtoDAsync(c, b, n, s2));       /* kernel on another stream */
        assert_cu_ok(cuMemcpyDtoHAsync(pinned, c, n, s2));  /* copy engine */
        assert_cu_ok(cuStreamSynchronize(s2));
        assert_bytes_named(want, pinned, n, "data through H2D, kernel copies and D2H in stream order");
    }
}

/* The launch variants of the library (lib/core/builtin.h, kVariants): each
 * runs the whole suite in a process of its own (the library reads
 * NVLITE_BUILTIN_VARIANT once). */
static const char* const kVariantNames[] = {"flat", "vec", "stream", "vec512", "vec1024", "stream512", "flatstream", "box"};

static int run_suite(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_copies_1d, ts_hw_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_fills, ts_hw_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_copies_2d_3d, ts_hw_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_order_with_events, ts_hw_ctx_setup, ts_ctx_teardown),
    };
    return cmocka_run_group_tests_name("hw_builtin", tests, NULL, NULL);
}

int main(int argc, char** argv) {
    (void)argc;
    setenv("NVLITE_KERNEL_COPY_MIN", "64k", 0);
    setenv("NVLITE_KERNEL_FILL_MIN", "64k", 0);
    /* A variant named by the environment (or by the parent run): that one. */
    if (getenv("NVLITE_BUILTIN_VARIANT")) {
        printf("variant %s\n", getenv("NVLITE_BUILTIN_VARIANT"));
        fflush(stdout);
        return run_suite();
    }
    int failed = 0;
    for (size_t i = 0; i < sizeof kVariantNames / sizeof kVariantNames[0]; ++i) {
        fflush(stdout);
        const pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) {
            setenv("NVLITE_BUILTIN_VARIANT", kVariantNames[i], 1);
            execv("/proc/self/exe", argv);
            _exit(127);
        }
        int status = 0;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "hw_builtin: variant %s FAILED (status %#x)\n", kVariantNames[i], status);
            failed = 1;
        }
    }
    return failed;
}
