/*
 * Hardware-only test of PTX written by early toolkits (make test-hw): a
 * ".version 1.4 / .target sm_20, map_f64_to_f32" module loaded the way
 * cuda-samples' matrixMulDynlinkJIT loads its kernel (cuModuleLoadDataEx
 * with an info log buffer and CU_JIT_MAX_REGISTERS 32) and a ".version 3.0"
 * module with .file/.loc (numba-cuda's TestCudaDriver shape). libcuda JITs
 * both; nvJitLink refuses their headers, which nvlite's loader raises to PTX
 * 3.1 first (lib/loader/ptx_compat.cpp). The kernels run and every element
 * is checked (random inputs, fixed seed, odd sizes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/legacy_ptx.h"
#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_hw_ctx_setup, ts_ctx_teardown)

static void require_gpu(void) {
    const char *why = NULL;
    if (!ts_have_real_gpu(&why)) ts_skip("no real GPU: %s", why);
}

static void test_legacy_header_sample_options(void **state) {
    (void)state;
    require_gpu();
    char info[1024];
    memset(info, 'X', sizeof info);
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER, CU_JIT_MAX_REGISTERS};
    void *values[] = {(void *)(size_t)sizeof info, info, (void *)(size_t)32};
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoadDataEx(&m, kLegacyHeaderPtx, 3, opts, values));
    assert_true(strlen(info) < sizeof info); /* written, NUL-terminated (libcuda leaves it empty here) */
    CUfunction f = NULL;
    assert_cu_ok(cuModuleGetFunction(&f, m, "legacy_scale"));
    int regs = 0;
    assert_cu_ok(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    assert_true(regs > 0 && regs <= 32);

    const int n = 100003;
    float *in = ts_malloc(n * sizeof(float)), *out = ts_malloc(n * sizeof(float));
    ts_rng rng;
    ts_rng_init(&rng, 1404);
    for (int i = 0; i < n; ++i) in[i] = (float)((double)ts_rng_below(&rng, 2000001) / 1000.0 - 1000.0);
    CUdeviceptr din = ts_dev_alloc(n * sizeof(float)), dout = ts_dev_alloc((n + 1) * sizeof(float));
    assert_cu_ok(cuMemcpyHtoD(din, in, n * sizeof(float)));
    assert_cu_ok(cuMemsetD32(dout, 0x7fc00bad, n + 1));
    float k = 1.75f;
    int count = n;
    void *params[] = {&dout, &din, &k, &count};
    assert_cu_ok(cuLaunchKernel(f, (n + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
    assert_cu_ok(cuCtxSynchronize());
    assert_cu_ok(cuMemcpyDtoH(out, dout, n * sizeof(float)));
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += out[i] != in[i] * k;
    unsigned past = 0;
    assert_cu_ok(cuMemcpyDtoH(&past, dout + n * sizeof(float), 4));
    print_message("[          ] legacy_scale (PTX 1.4, sm_20, map_f64_to_f32): %d of %d wrong\n", wrong, n);
    assert_int_equal(wrong, 0);
    assert_int_equal(past, 0x7fc00bad); /* nothing written past n */
    assert_cu_ok(cuModuleUnload(m));
}

static void test_ptx_3_0_with_line_info(void **state) {
    (void)state;
    require_gpu();
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoadData(&m, kLegacyV30Ptx));
    CUfunction f = NULL;
    assert_cu_ok(cuModuleGetFunction(&f, m, "legacy_iota"));
    const int n = 4099;
    CUdeviceptr d = ts_dev_alloc((n + 5) * sizeof(unsigned));
    assert_cu_ok(cuMemsetD32(d, 0xabcdef01u, n + 5));
    int count = n;
    void *params[] = {&d, &count};
    assert_cu_ok(cuLaunchKernel(f, (n + 63) / 64, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    unsigned *h = ts_malloc((n + 5) * sizeof(unsigned));
    assert_cu_ok(cuMemcpyDtoH(h, d, (n + 5) * sizeof(unsigned)));
    for (int i = 0; i < n + 5; ++i) {
        const unsigned want = i < n ? 3u * (unsigned)i + 1u : 0xabcdef01u;
        if (h[i] != want) fail_msg("element %d: %u, expected %u", i, h[i], want);
    }
    assert_cu_ok(cuModuleUnload(m));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_legacy_header_sample_options),
        TEST(test_ptx_3_0_with_line_info),
    };
    return cmocka_run_group_tests_name("hw_legacy_ptx", tests, NULL, NULL);
}
