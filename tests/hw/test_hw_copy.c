/*
 * Hardware-only copy tests (make test-hw, on a machine with an NVIDIA GPU;
 * built in CI, never run there): 1 GiB of random data host -> device ->
 * device -> host through pinned, pageable and registered host memory, and
 * 1 GiB memsets, checked byte for byte. The measured GB/s are printed for
 * information; nothing asserts a speed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_hw_ctx_setup, ts_ctx_teardown)

#define SIM_UUID "nvlite-sim-h200!" /* lib/kdrv/sim/sim_gpu_config.h */
#define SIM_NAME "nvlite simulated Hopper"

static const size_t kBytes = (size_t)1 << 30;

static void require_real_gpu(void) {
    const char *why = NULL;
    if (!ts_have_real_gpu(&why)) ts_skip("no real GPU: %s", why);
}

static double gbps(size_t bytes, double seconds) { return seconds > 0 ? (double)bytes / seconds / 1e9 : 0.0; }

/* The tests below measure the hardware, not the simulator. */
static void test_hw_device_is_real(void **state) {
    (void)state;
    const char *why = NULL;
    if (!ts_have_real_gpu(&why)) fail_msg("these tests need a real GPU: %s", why);
    assert_cu_ok(cuInit(0));
    char name[256];
    assert_cu_ok(cuDeviceGetName(name, sizeof name, 0));
    CUuuid uuid;
    assert_cu_ok(cuDeviceGetUuid(&uuid, 0));
    char bus[32];
    assert_cu_ok(cuDeviceGetPCIBusId(bus, sizeof bus, 0));
    size_t total = 0;
    assert_cu_ok(cuDeviceTotalMem(&total, 0));
    print_message("device 0: %s, %s, %zu MiB\n", name, bus, total >> 20);
    assert_string_not_equal(name, SIM_NAME);
    assert_memory_not_equal(uuid.bytes, SIM_UUID, 16);
}

typedef enum { HOST_PINNED, HOST_PAGEABLE, HOST_REGISTERED } host_kind;
static const char *const kKindName[] = {"pinned", "pageable", "registered"};

static unsigned char *host_alloc(host_kind kind, size_t n) {
    void *p = NULL;
    if (kind == HOST_PINNED) {
        assert_cu_ok(cuMemAllocHost(&p, n));
    } else {
        p = ts_malloc(n);
        if (kind == HOST_REGISTERED) assert_cu_ok(cuMemHostRegister(p, n, 0));
    }
    return p;
}

static void host_free(host_kind kind, unsigned char *p) {
    if (kind == HOST_PINNED) {
        assert_cu_ok(cuMemFreeHost(p));
        return;
    }
    if (kind == HOST_REGISTERED) assert_cu_ok(cuMemHostUnregister(p));
    ts_free(p);
}

/* 1 GiB: host -> A -> B -> host, odd offsets, checked byte for byte. */
static void round_trip(host_kind kind, uint64_t seed) {
    require_real_gpu();
    const size_t n = kBytes;
    unsigned char *src = host_alloc(kind, n + 8), *dst = host_alloc(kind, n + 8);
    ts_fill_random(src, n + 8, seed);
    memset(dst, 0, n + 8);
    CUdeviceptr a = 0, b = 0;
    assert_cu_ok(cuMemAlloc(&a, n + 8));
    assert_cu_ok(cuMemAlloc(&b, n + 8));

    double t = ts_now();
    assert_cu_ok(cuMemcpyHtoD(a + 3, src + 1, n));
    assert_cu_ok(cuCtxSynchronize());
    const double htod = ts_now() - t;
    t = ts_now();
    assert_cu_ok(cuMemcpyDtoD(b + 5, a + 3, n));
    assert_cu_ok(cuCtxSynchronize());
    const double dtod = ts_now() - t;
    t = ts_now();
    assert_cu_ok(cuMemcpyDtoH(dst + 7, b + 5, n));
    const double dtoh = ts_now() - t;
    print_message("%s: HtoD %.1f GB/s, DtoD %.1f GB/s (%.1f GB/s read+write), DtoH %.1f GB/s\n", kKindName[kind],
                  gbps(n, htod), gbps(n, dtod), gbps(2 * n, dtod), gbps(n, dtoh));

    assert_bytes_equal(src + 1, dst + 7, n);
    assert_bytes_all(dst, 0, 7);
    assert_bytes_all(dst + 7 + n, 0, 1);
    assert_cu_ok(cuMemFree(a));
    assert_cu_ok(cuMemFree(b));
    host_free(kind, src);
    host_free(kind, dst);
}

static void test_hw_round_trip_pinned(void **state) {
    (void)state;
    round_trip(HOST_PINNED, 0x4801);
}

static void test_hw_round_trip_pageable(void **state) {
    (void)state;
    round_trip(HOST_PAGEABLE, 0x4802);
}

static void test_hw_round_trip_registered(void **state) {
    (void)state;
    round_trip(HOST_REGISTERED, 0x4803);
}

/* 1 GiB memsets over random data: D32 over all of it, D8 at an odd offset,
 * D16 over the middle; the bytes they do not cover keep their data. */
static void test_hw_memset_1gib(void **state) {
    (void)state;
    require_real_gpu();
    const size_t n = kBytes;
    unsigned char *host = host_alloc(HOST_PINNED, n), *back = host_alloc(HOST_PINNED, n);
    CUdeviceptr d = 0;
    assert_cu_ok(cuMemAlloc(&d, n));

    assert_cu_ok(cuMemsetD32(d, 0xDEADBEEFu, n / 4));
    double t = ts_now();
    assert_cu_ok(cuMemsetD32(d, 0x8BADF00Du, n / 4));
    assert_cu_ok(cuCtxSynchronize());
    const double d32 = ts_now() - t;
    assert_cu_ok(cuMemcpyDtoH(back, d, n));
    for (size_t i = 0; i < n; i += 4) {
        const unsigned char want[4] = {0x0D, 0xF0, 0xAD, 0x8B};
        if (memcmp(back + i, want, 4) != 0) fail_msg("cuMemsetD32: wrong bytes at offset %zu", i);
    }

    ts_fill_random(host, n, 0x4804);
    assert_cu_ok(cuMemcpyHtoD(d, host, n));
    t = ts_now();
    assert_cu_ok(cuMemsetD8(d + 1, 0x5A, n - 2));
    assert_cu_ok(cuCtxSynchronize());
    const double d8 = ts_now() - t;
    const size_t mid = n / 4;
    assert_cu_ok(cuMemsetD16(d + mid, 0xA11C, n / 4));
    assert_cu_ok(cuMemcpyDtoH(back, d, n));
    assert_int_equal(back[0], host[0]);
    assert_int_equal(back[n - 1], host[n - 1]);
    assert_bytes_all(back + 1, 0x5A, mid - 1);
    for (size_t i = mid; i < mid + n / 2; i += 2)
        if (back[i] != 0x1C || back[i + 1] != 0xA1) fail_msg("cuMemsetD16: wrong bytes at offset %zu", i);
    assert_bytes_all(back + mid + n / 2, 0x5A, n - 1 - (mid + n / 2));
    print_message("memset 1 GiB: D32 %.1f GB/s, D8 %.1f GB/s\n", gbps(n, d32), gbps(n - 2, d8));

    assert_cu_ok(cuMemFree(d));
    host_free(HOST_PINNED, host);
    host_free(HOST_PINNED, back);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hw_device_is_real),
        TEST(test_hw_round_trip_pinned),
        TEST(test_hw_round_trip_pageable),
        TEST(test_hw_round_trip_registered),
        TEST(test_hw_memset_1gib),
    };
    return cmocka_run_group_tests_name("hw_copy", tests, NULL, NULL);
}
