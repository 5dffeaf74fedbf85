/*
 * Hardware-only tests of device-side launches (dynamic parallelism: kernels
 * launching kernels, lib/core/device_launch.h), make test-hw; built in CI,
 * skipped there without a GPU. Kernels are compiled with NVRTC (-rdc) and
 * linked with the toolkit's libcudadevrt by cuLink, as programs do; every
 * result is checked on the host.
 *   - a tree: every block of a grid launches a child grid, whose first block
 *     launches a grandchild; a second launch of each block in the same
 *     (block's) stream checks that the child and the grandchild are done;
 *     a copy in the host stream right after the parent sees every result;
 *   - nesting: a kernel launching itself 40 levels deep (no limit, as
 *     libcuda's CDP2);
 *   - the explicit API (cudaGetParameterBufferV2 / cudaLaunchDeviceV2) with
 *     parameters of mixed sizes, and CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
 *     beyond it (rounded up to 32, as libcuda) the launches answer
 *     cudaErrorLaunchPendingCountExceeded, those within run;
 *   - device-side streams (made, launched into, destroyed), the special
 *     streams (tail launch, fire and forget), a geometry the device refuses
 *     (cudaErrorInvalidConfiguration, kept for cudaPeekAtLastError, cleared
 *     by cudaGetLastError);
 *   - PTX calling cudaGetParameterBufferV2 / cudaLaunchDeviceV2 directly (the
 *     CDP1 names libNVVM's device-side-launch sample links to), its module
 *     unloaded right after the launch.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_hw_ctx_setup, ts_ctx_teardown)

static const unsigned kWatchdogSeconds = 120;

static const char kSource[] =
    "extern \"C\" __global__ void leaf(int* out, int value) { out[blockIdx.x * blockDim.x + threadIdx.x] = value; }\n"
    "extern \"C\" __global__ void child(int* out, int value, int* mark, int markValue) {\n"
    "    out[blockIdx.x * blockDim.x + threadIdx.x] = value + (int)threadIdx.x;\n"
    "    if (blockIdx.x == 0 && threadIdx.x == 0) leaf<<<1, 1>>>(mark, markValue);\n"
    "}\n"
    "// Runs after child (and what child launched) in the block's stream.\n"
    "extern \"C\" __global__ void follower(const int* out, int n, int value, const int* mark, int markValue, int* ok) {\n"
    "    int good = *mark == markValue;\n"
    "    for (int i = 0; i < n; ++i) good &= out[i] == value + i % 64;\n"
    "    *ok = good ? 1 : 2;\n"
    "}\n"
    "extern \"C\" __global__ void tree(int* out, int* marks, int* ok) {\n"
    "    if (threadIdx.x == 1) {\n"
    "        const int b = blockIdx.x;\n"
    "        child<<<2, 64>>>(out + b * 128, 1000 * (b + 1), marks + b, 7 + b);\n"
    "        follower<<<1, 1>>>(out + b * 128, 128, 1000 * (b + 1), marks + b, 7 + b, ok + b);\n"
    "    }\n"
    "}\n"
    "// Launches itself, one level deeper each time, until 'limit'; records the\n"
    "// result of each launch.\n"
    "struct DiveArgs { int* depths; int* errors; int depth; int limit; };\n"
    "extern \"C\" __global__ void dive(int* depths, int* errors, int depth, int limit) {\n"
    "    depths[depth] = depth + 1;\n"
    "    if (depth + 1 >= limit) return;\n"
    "    DiveArgs* a = (DiveArgs*)cudaGetParameterBufferV2((void*)dive, dim3(1), dim3(1), 0);\n"
    "    if (!a) { errors[depth] = -1; return; }\n"
    "    a->depths = depths; a->errors = errors; a->depth = depth + 1; a->limit = limit;\n"
    "    errors[depth] = (int)cudaLaunchDeviceV2(a, 0);\n"
    "}\n"
    "// Parameters of mixed sizes at their offsets.\n"
    "struct Mixed { char c; double d; short s; long long* out; int i; };\n"
    "extern \"C\" __global__ void mixed(char c, double d, short s, long long* out, int i) {\n"
    "    out[0] = c; out[1] = (long long)(d * 4); out[2] = s; out[3] = i;\n"
    "}\n"
    "// Device-side streams and cudaGetLastError.\n"
    "extern \"C\" __global__ void streams(int* out, int* errors) {\n"
    "    cudaStream_t s;\n"
    "    errors[0] = (int)cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\n"
    "    leaf<<<1, 4, 0, s>>>(out, 41);\n"
    "    errors[1] = (int)cudaGetLastError();\n"
    "    errors[2] = (int)cudaStreamDestroy(s);\n"
    "    leaf<<<1, 4, 0, cudaStreamTailLaunch>>>(out + 4, 42);\n"
    "    leaf<<<1, 4, 0, cudaStreamFireAndForget>>>(out + 8, 43);\n"
    "    leaf<<<1, 2048>>>(out + 12, 44);\n"
    "    errors[3] = (int)cudaPeekAtLastError();\n"
    "    errors[4] = (int)cudaGetLastError();\n"
    "    errors[5] = (int)cudaGetLastError();\n"
    "}\n"
    "extern \"C\" __global__ void burst(long long* outs, int* results) {\n"
    "    const int t = threadIdx.x;\n"
    "    Mixed* m = (Mixed*)cudaGetParameterBufferV2((void*)mixed, dim3(1), dim3(1), 0);\n"
    "    if (!m) { results[t] = -1000 - (int)cudaGetLastError(); return; }\n"
    "    m->c = (char)(t + 3); m->d = t + 0.25; m->s = (short)(-100 * t); m->out = outs + 4 * t; m->i = 12345 + t;\n"
    "    results[t] = (int)cudaLaunchDeviceV2(m, 0);\n"
    "}\n";

/* dive_v1(int* out, int depth): out[depth] = depth + 1; below depth 3 it
 * launches itself with depth + 1, through cudaGetParameterBufferV2 /
 * cudaLaunchDeviceV2 called directly (libcudadevrt's CDP1 names, as
 * libNVVM's device-side-launch sample does). */
static const char kPtxV1[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".extern .func (.param .b64 ret) cudaGetParameterBufferV2\n"
    "(.param .b64 fn, .param .align 4 .b8 grid[12], .param .align 4 .b8 block[12], .param .b32 shared);\n"
    ".extern .func (.param .b32 ret) cudaLaunchDeviceV2 (.param .b64 buffer, .param .b64 stream);\n"
    ".visible .entry dive_v1(.param .u64 out, .param .u32 depth)\n{\n"
    ".reg .pred %p<3>;\n.reg .b32 %r<6>;\n.reg .b64 %rd<8>;\n"
    "ld.param.u64 %rd1, [out];\nld.param.u32 %r1, [depth];\n"
    "cvta.to.global.u64 %rd2, %rd1;\nmul.wide.s32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\n"
    "add.s32 %r2, %r1, 1;\nst.global.u32 [%rd4], %r2;\nsetp.ge.s32 %p1, %r2, 4;\n@%p1 bra DONE;\n"
    "mov.u64 %rd5, dive_v1;\n{\n"
    ".param .b64 a0;\nst.param.b64 [a0], %rd5;\n"
    ".param .align 4 .b8 a1[12];\nst.param.b32 [a1], 1;\nst.param.b32 [a1+4], 1;\nst.param.b32 [a1+8], 1;\n"
    ".param .align 4 .b8 a2[12];\nst.param.b32 [a2], 1;\nst.param.b32 [a2+4], 1;\nst.param.b32 [a2+8], 1;\n"
    ".param .b32 a3;\nst.param.b32 [a3], 0;\n.param .b64 r0;\n"
    "call.uni (r0), cudaGetParameterBufferV2, (a0, a1, a2, a3);\nld.param.b64 %rd6, [r0];\n}\n"
    "setp.eq.s64 %p2, %rd6, 0;\n@%p2 bra DONE;\nst.u64 [%rd6], %rd1;\nst.u32 [%rd6+8], %r2;\n{\n"
    ".param .b64 b0;\nst.param.b64 [b0], %rd6;\n.param .b64 b1;\nst.param.b64 [b1], 0;\n.param .b32 r1;\n"
    "call.uni (r1), cudaLaunchDeviceV2, (b0, b1);\nld.param.b32 %r3, [r1];\n}\n"
    "DONE:\nret;\n}\n";

/* The kernels of 'text' (CUDA C, or PTX when 'ptx'), linked with
 * libcudadevrt and loaded as a library. */
static CUlibrary load_linked(const char *text, int ptx) {
    if (ptx) return ts_load_with_cudadevrt(CU_JIT_INPUT_PTX, text, strlen(text) + 1, "dive_v1");
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) ts_skip("no NVRTC: %s", why);
    const char *opts[] = {"-rdc=true"};
    size_t size = 0;
    void *object = ts_compile_cubin_opts(text, "hw_device_launch.cu", ts_device_arch(), opts, 1, &size);
    assert_non_null(object);
    CUlibrary lib = ts_load_with_cudadevrt(CU_JIT_INPUT_CUBIN, object, size, "cdp");
    free(object);
    return lib;
}

static CUfunction kernel(CUlibrary lib, const char *name) {
    CUkernel k;
    assert_cu_ok(cuLibraryGetKernel(&k, lib, name));
    return (CUfunction)k;
}

static void test_tree_in_stream_order(void **state) {
    (void)state;
    CUlibrary lib = load_linked(kSource, 0);
    ts_watchdog_arm("test_hw_device_launch: a hang", kWatchdogSeconds);
    enum { kBlocks = 37, kPer = 128 };
    CUstream s;
    assert_cu_ok(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr out, marks, ok;
    assert_cu_ok(cuMemAlloc(&out, kBlocks * kPer * sizeof(int)));
    assert_cu_ok(cuMemAlloc(&marks, kBlocks * sizeof(int)));
    assert_cu_ok(cuMemAlloc(&ok, kBlocks * sizeof(int)));
    assert_cu_ok(cuMemsetD32(out, 0xdeadbeef, kBlocks * kPer));
    assert_cu_ok(cuMemsetD32(marks, 0x5a5a5a5a, kBlocks));
    assert_cu_ok(cuMemsetD32(ok, 0, kBlocks));
    void *params[] = {&out, &marks, &ok};
    for (int round = 0; round < 3; ++round) {
        assert_cu_ok(cuLaunchKernel(kernel(lib, "tree"), kBlocks, 1, 1, 96, 1, 1, 0, s, params, NULL));
        /* In the stream right after the parent: sees what its launches wrote. */
        static int gotOut[kBlocks * kPer], gotMarks[kBlocks], gotOk[kBlocks];
        assert_cu_ok(cuMemcpyDtoHAsync(gotOut, out, sizeof gotOut, s));
        assert_cu_ok(cuMemcpyDtoHAsync(gotMarks, marks, sizeof gotMarks, s));
        assert_cu_ok(cuMemcpyDtoHAsync(gotOk, ok, sizeof gotOk, s));
        assert_cu_ok(cuStreamSynchronize(s));
        for (int b = 0; b < kBlocks; ++b) {
            assert_int_equal(gotMarks[b], 7 + b);
            assert_int_equal(gotOk[b], 1);
            for (int i = 0; i < kPer; ++i) assert_int_equal(gotOut[b * kPer + i], 1000 * (b + 1) + i % 64);
        }
        assert_cu_ok(cuMemsetD32Async(out, 0, kBlocks * kPer, s));
        assert_cu_ok(cuMemsetD32Async(marks, 0, kBlocks, s));
        assert_cu_ok(cuMemsetD32Async(ok, 0, kBlocks, s));
    }
    ts_watchdog_disarm();
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuMemFree(out));
    assert_cu_ok(cuMemFree(marks));
    assert_cu_ok(cuMemFree(ok));
    assert_cu_ok(cuLibraryUnload(lib));
}

static void test_nesting(void **state) {
    (void)state;
    CUlibrary lib = load_linked(kSource, 0);
    ts_watchdog_arm("test_hw_device_launch: a hang", kWatchdogSeconds);
    enum { kLevels = 40 };
    CUdeviceptr depths, errors;
    assert_cu_ok(cuMemAlloc(&depths, kLevels * sizeof(int)));
    assert_cu_ok(cuMemAlloc(&errors, kLevels * sizeof(int)));
    assert_cu_ok(cuMemsetD32(depths, 0, kLevels));
    assert_cu_ok(cuMemsetD32(errors, 0x7777, kLevels));
    int depth = 0, limit = kLevels;
    void *params[] = {&depths, &errors, &depth, &limit};
    assert_cu_ok(cuLaunchKernel(kernel(lib, "dive"), 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    assert_cu_ok(cuCtxSynchronize());
    int gotDepths[kLevels], gotErrors[kLevels];
    assert_cu_ok(cuMemcpyDtoH(gotDepths, depths, sizeof gotDepths));
    assert_cu_ok(cuMemcpyDtoH(gotErrors, errors, sizeof gotErrors));
    /* No nesting limit (libcuda's CDP2 went 30 levels deep on the H200). */
    for (int d = 0; d < kLevels; ++d) {
        assert_int_equal(gotDepths[d], d + 1);
        assert_int_equal(gotErrors[d], d + 1 < kLevels ? 0 : 0x7777);
    }
    ts_watchdog_disarm();
    assert_cu_ok(cuMemFree(depths));
    assert_cu_ok(cuMemFree(errors));
    assert_cu_ok(cuLibraryUnload(lib));
}

static void test_pending_launch_limit_and_mixed_parameters(void **state) {
    (void)state;
    CUlibrary lib = load_linked(kSource, 0);
    ts_watchdog_arm("test_hw_device_launch: a hang", kWatchdogSeconds);
    size_t pending = 0;
    assert_cu_ok(cuCtxGetLimit(&pending, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT));
    assert_int_equal(pending, 2048);
    enum { kThreads = 45, kLimit = 17 };
    CUdeviceptr outs, results;
    assert_cu_ok(cuMemAlloc(&outs, kThreads * 4 * sizeof(long long)));
    assert_cu_ok(cuMemAlloc(&results, kThreads * sizeof(int)));
    for (int pass = 0; pass < 2; ++pass) {
        const int limit = pass == 0 ? 2048 : kLimit;
        assert_cu_ok(cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, (size_t)limit));
        assert_cu_ok(cuCtxGetLimit(&pending, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT));
        assert_int_equal(pending, limit);
        assert_cu_ok(cuMemsetD32(outs, 0x11111111, kThreads * 8));
        assert_cu_ok(cuMemsetD32(results, 0x7777, kThreads));
        void *params[] = {&outs, &results};
        assert_cu_ok(cuLaunchKernel(kernel(lib, "burst"), 1, 1, 1, kThreads, 1, 1, 0, NULL, params, NULL));
        assert_cu_ok(cuCtxSynchronize());
        long long got[kThreads * 4];
        int res[kThreads];
        assert_cu_ok(cuMemcpyDtoH(got, outs, sizeof got));
        assert_cu_ok(cuMemcpyDtoH(res, results, sizeof res));
        int launched = 0;
        for (int t = 0; t < kThreads; ++t) {
            if (res[t] == 69) { /* cudaErrorLaunchPendingCountExceeded */
                assert_int_equal(got[4 * t], 0x1111111111111111LL);
                continue;
            }
            assert_int_equal(res[t], 0);
            ++launched;
            assert_int_equal(got[4 * t + 0], t + 3);
            assert_int_equal(got[4 * t + 1], 4 * t + 1);
            assert_int_equal(got[4 * t + 2], -100 * t);
            assert_int_equal(got[4 * t + 3], 12345 + t);
        }
        /* libcuda holds the limit rounded up to 32 (both launch 32 of 45 here). */
        assert_int_equal(launched, pass == 0 ? kThreads : 32);
    }
    ts_watchdog_disarm();
    assert_cu_ok(cuMemFree(outs));
    assert_cu_ok(cuMemFree(results));
    assert_cu_ok(cuLibraryUnload(lib));
}

static void test_device_streams_and_last_error(void **state) {
    (void)state;
    CUlibrary lib = load_linked(kSource, 0);
    ts_watchdog_arm("test_hw_device_launch: a hang", kWatchdogSeconds);
    CUdeviceptr out, errors;
    assert_cu_ok(cuMemAlloc(&out, 16 * sizeof(int)));
    assert_cu_ok(cuMemAlloc(&errors, 6 * sizeof(int)));
    assert_cu_ok(cuMemsetD32(out, 0, 16));
    assert_cu_ok(cuMemsetD32(errors, 0x7777, 6));
    void *params[] = {&out, &errors};
    assert_cu_ok(cuLaunchKernel(kernel(lib, "streams"), 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    assert_cu_ok(cuCtxSynchronize());
    int got[16], err[6];
    assert_cu_ok(cuMemcpyDtoH(got, out, sizeof got));
    assert_cu_ok(cuMemcpyDtoH(err, errors, sizeof err));
    for (int i = 0; i < 12; ++i) assert_int_equal(got[i], 41 + i / 4);
    for (int i = 12; i < 16; ++i) assert_int_equal(got[i], 0); /* 2048 threads: never launched */
    assert_int_equal(err[0], 0);
    assert_int_equal(err[1], 0);
    assert_int_equal(err[2], 0);
    assert_int_equal(err[3], 9); /* cudaErrorInvalidConfiguration, peeked */
    assert_int_equal(err[4], 9); /* then read */
    assert_int_equal(err[5], 0); /* and gone */
    ts_watchdog_disarm();
    assert_cu_ok(cuMemFree(out));
    assert_cu_ok(cuMemFree(errors));
    assert_cu_ok(cuLibraryUnload(lib));
}

static void test_cdp1_names_module_unloaded_at_once(void **state) {
    (void)state;
    CUlibrary lib = load_linked(kPtxV1, 1);
    ts_watchdog_arm("test_hw_device_launch: a hang", kWatchdogSeconds);
    CUdeviceptr out;
    assert_cu_ok(cuMemAlloc(&out, 8 * sizeof(int)));
    assert_cu_ok(cuMemsetD32(out, 0, 8));
    int depth = 0;
    void *params[] = {&out, &depth};
    assert_cu_ok(cuLaunchKernel(kernel(lib, "dive_v1"), 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    /* As the sample does: nothing waits before the module goes. */
    assert_cu_ok(cuLibraryUnload(lib));
    assert_cu_ok(cuCtxSynchronize());
    int got[8];
    assert_cu_ok(cuMemcpyDtoH(got, out, sizeof got));
    for (int d = 0; d < 8; ++d) assert_int_equal(got[d], d < 4 ? d + 1 : 0);
    ts_watchdog_disarm();
    assert_cu_ok(cuMemFree(out));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_tree_in_stream_order),
        TEST(test_nesting),
        TEST(test_pending_launch_limit_and_mixed_parameters),
        TEST(test_device_streams_and_last_error),
        TEST(test_cdp1_names_module_unloaded_at_once),
    };
    return cmocka_run_group_tests_name("hw_device_launch", tests, NULL, NULL);
}
