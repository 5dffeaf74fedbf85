/*
 * Hardware-only fault tests (make test-hw, on a machine with an NVIDIA GPU;
 * built in CI, never run there: they skip without a real GPU). Kernels are
 * compiled with NVRTC. Each test makes the GPU fault for real and checks what
 * libcuda guarantees:
 *   - a kernel writing to an address that was never mapped, and one writing
 *     to a large (dedicated, really unmapped) cuMemAlloc allocation after
 *     cuMemFree: CUDA_ERROR_ILLEGAL_ADDRESS (RM: MMU fault, Xid 31);
 *   - a kernel executing __trap(): CUDA_ERROR_LAUNCH_FAILED (RM: SM
 *     exception, Xid 13);
 *   - reported by the next synchronising call within one second of the
 *     launch, from the error notifier (no timeout is involved);
 *   - sticky: later calls that need the context return the same code;
 *   - a copy ordered after the faulting kernel (it runs on the copy engine's
 *     own TSG, which RM does not tear down) returns the fault instead of
 *     waiting for ever;
 *   - cuCtxDestroy, a new context, and a correct vector add; a second
 *     context that existed during the fault is unaffected.
 * With NVLITE_TRACE=1 the library prints the RC error RM wrote into the
 * channel's error notifier ("channel 0x... stopped by RC error 31 ...").
 *
 * Not here: a copy-engine fault. No public API sequence makes the copy engine
 * touch an unmapped address (libcuda and nvlite check every copy's pointers
 * against their allocations, and cuMemFree/cuMemFreeHost wait for the work
 * in flight); tests/api/test_faults.c covers that path on the simulator.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_support.h"

#define PROMPT_SECONDS 1.0
static const unsigned kWatchdogSeconds = 60;

/* Above the CPU's user address space, inside the GPU's 49-bit one, away from
 * where RM places its own buffers: never mapped. */
#define UNMAPPED_ADDRESS ((CUdeviceptr)1 << 48)
/* Well above the 64 MiB sub-allocation chunks: its own mapping, gone on free. */
#define DEDICATED_BYTES ((size_t)256 << 20)

static const char kSource[] =
    "extern \"C\" {\n"
    "__global__ void k_store(unsigned* p, unsigned v, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) p[i] = v;\n"
    "}\n"
    "__global__ void k_trap(unsigned* p) {\n"
    "    if (threadIdx.x == 0 && blockIdx.x == 0) __trap();\n"
    "    p[blockIdx.x * blockDim.x + threadIdx.x] = 1;\n"
    "}\n"
    "__global__ void vadd(const float* a, const float* b, float* c, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n"
    "}\n";

typedef enum { FAULT_UNMAPPED, FAULT_FREED, FAULT_TRAP } fault_kind;

/* ------------------------------------------------------------------ fixture */

static int setup(void **state) {
    ts_watchdog_arm("test_hw_faults: a GPU fault hung the test", kWatchdogSeconds);
    return ts_hw_ctx_setup(state);
}

static int teardown(void **state) {
    int rc = ts_ctx_teardown(state);
    ts_watchdog_disarm();
    return rc;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* ------------------------------------------------------------------ kernels */

typedef struct {
    CUmodule module;
    CUfunction store, trap, vadd;
} kernels;

/* Skips without a GPU or NVRTC; the kernels loaded into the current context. */
static kernels load_kernels(void) {
    const char *why = NULL;
    if (!ts_have_real_gpu(&why)) ts_skip("no real GPU: %s", why);
    kernels k;
    k.module = ts_source_module(kSource, "hw_faults.cu");
    k.store = ts_get_function(k.module, "k_store");
    k.trap = ts_get_function(k.module, "k_trap");
    k.vadd = ts_get_function(k.module, "vadd");
    return k;
}

static CUresult launch_store(const kernels *k, CUdeviceptr p, unsigned v, unsigned n) {
    void *params[] = {&p, &v, &n};
    return cuLaunchKernel(k->store, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
}

static CUresult launch_trap(const kernels *k, CUdeviceptr scratch) {
    void *params[] = {&scratch};
    return cuLaunchKernel(k->trap, 4, 1, 1, 128, 1, 1, 0, NULL, params, NULL);
}

/* Prepares and launches the faulting kernel; returns the time of the launch. */
static double launch_faulting(const kernels *k, fault_kind kind, CUdeviceptr scratch) {
    double t0 = 0;
    switch (kind) {
    case FAULT_UNMAPPED:
        t0 = ts_now();
        assert_cu_ok(launch_store(k, UNMAPPED_ADDRESS, 0xbad, 1u << 16));
        break;
    case FAULT_FREED: {
        CUdeviceptr big = 0;
        assert_cu_ok(cuMemAlloc(&big, DEDICATED_BYTES));
        assert_cu_ok(launch_store(k, big, 7, (unsigned)(DEDICATED_BYTES / 4)));  /* it was usable */
        assert_cu_ok(cuCtxSynchronize());
        assert_cu_ok(cuMemFree(big));
        t0 = ts_now();
        assert_cu_ok(launch_store(k, big + DEDICATED_BYTES / 2, 0xbad, 1u << 20));
        break;
    }
    case FAULT_TRAP:
        t0 = ts_now();
        assert_cu_ok(launch_trap(k, scratch));
        break;
    }
    return t0;
}

static CUresult expected_code(fault_kind kind) {
    return kind == FAULT_TRAP ? CUDA_ERROR_LAUNCH_FAILED : CUDA_ERROR_ILLEGAL_ADDRESS;
}

static const char *fault_name(fault_kind kind) {
    return kind == FAULT_UNMAPPED ? "write to a never-mapped address"
           : kind == FAULT_FREED  ? "write to freed memory"
                                  : "__trap()";
}

/* ------------------------------------------------------------------ checks */

/* 'call' fails with 'code' within PROMPT_SECONDS of t0. */
#define assert_fault_by(code, t0, what, call)                                                        \
    do {                                                                                             \
        assert_cu((code), (call));                                                                   \
        const double took_ = ts_now() - (t0);                                                        \
        print_message("[          ] %s: %s after %.3f ms\n", (what), ts_cu_name(code), took_ * 1e3); \
        if (took_ >= PROMPT_SECONDS) fail_msg("the fault took %.3f s to be reported", took_);        \
    } while (0)

static void assert_sticky(CUresult code, const kernels *k, CUdeviceptr scratch) {
    unsigned char host[256] = {0};
    assert_cu(code, cuCtxSynchronize());
    CUdeviceptr p = 0;
    assert_cu(code, cuMemAlloc(&p, 4096));
    assert_cu(code, cuMemcpyHtoD(scratch, host, sizeof host));
    assert_cu(code, cuMemcpyDtoH(host, scratch, sizeof host));
    assert_cu(code, cuMemsetD8(scratch, 0, sizeof host));
    assert_cu(code, launch_store(k, scratch, 1, 64));
    assert_cu(code, cuCtxSynchronize());
}

/* A vector add of n floats in the current context, checked exactly. */
static void vector_add(const kernels *k, unsigned n, uint64_t seed) {
    const size_t bytes = (size_t)n * sizeof(float);
    float *a = ts_malloc(bytes), *b = ts_malloc(bytes), *c = ts_malloc(bytes);
    ts_rng rng;
    ts_rng_init(&rng, seed);
    for (unsigned i = 0; i < n; ++i) {
        a[i] = (float)(int)ts_rng_below(&rng, 2000001) / 8.0f - 125000.0f;
        b[i] = (float)(int)ts_rng_below(&rng, 2000001) / 3.0f;
    }
    CUdeviceptr da = 0, db = 0, dc = 0;
    assert_cu_ok(cuMemAlloc(&da, bytes));
    assert_cu_ok(cuMemAlloc(&db, bytes));
    assert_cu_ok(cuMemAlloc(&dc, bytes));
    assert_cu_ok(cuMemcpyHtoD(da, a, bytes));
    assert_cu_ok(cuMemcpyHtoD(db, b, bytes));
    assert_cu_ok(cuMemsetD32(dc, 0xffffffffu, n));
    void *params[] = {&da, &db, &dc, &n};
    assert_cu_ok(cuLaunchKernel(k->vadd, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
    assert_cu_ok(cuMemcpyDtoH(c, dc, bytes));
    for (unsigned i = 0; i < n; ++i) {
        const float want = a[i] + b[i];
        if (memcmp(&c[i], &want, sizeof want) != 0) fail_msg("c[%u] = %a, expected %a", i, (double)c[i], (double)want);
    }
    assert_cu_ok(cuMemFree(da));
    assert_cu_ok(cuMemFree(db));
    assert_cu_ok(cuMemFree(dc));
    ts_free(a);
    ts_free(b);
    ts_free(c);
}

/* Destroys the failed context; a new one computes correctly. */
static void recover(ts_fixture *fx, uint64_t seed) {
    const double t0 = ts_now();
    assert_cu_ok(cuCtxDestroy(fx->ctx));
    fx->ctx = NULL;
    assert_cu_ok(cuCtxCreate(&fx->ctx, NULL, 0, fx->dev));
    print_message("[          ] destroy + create: %.3f ms\n", (ts_now() - t0) * 1e3);
    kernels k = load_kernels();
    vector_add(&k, 1u << 20, seed);
    assert_cu_ok(cuModuleUnload(k.module));
}

static void fault_case(void **state, fault_kind kind, uint64_t seed) {
    ts_fixture *fx = ts_fx(state);
    kernels k = load_kernels();
    CUdeviceptr scratch = 0;
    assert_cu_ok(cuMemAlloc(&scratch, 1 << 20));
    assert_cu_ok(cuMemsetD8(scratch, 0, 1 << 20));
    assert_cu_ok(cuCtxSynchronize());
    const double t0 = launch_faulting(&k, kind, scratch);
    assert_fault_by(expected_code(kind), t0, fault_name(kind), cuCtxSynchronize());
    assert_sticky(expected_code(kind), &k, scratch);
    recover(fx, seed);
}

/* ------------------------------------------------------------------ tests */

static void test_hw_fault_unmapped_address(void **state) { fault_case(state, FAULT_UNMAPPED, 0xf001); }

static void test_hw_fault_freed_allocation(void **state) { fault_case(state, FAULT_FREED, 0xf002); }

static void test_hw_fault_trap(void **state) { fault_case(state, FAULT_TRAP, 0xf003); }

/* No explicit synchronisation: the copy back waits for the faulting kernel.
 * The copy runs in the copy engine's TSG, which RM's recovery leaves alone,
 * so only the context's view of all its channels ends the wait. */
static void test_hw_fault_copy_after_kernel(void **state) {
    ts_fixture *fx = ts_fx(state);
    kernels k = load_kernels();
    const fault_kind kinds[] = {FAULT_UNMAPPED, FAULT_TRAP};
    for (size_t i = 0; i < TS_ARRAY_SIZE(kinds); ++i) {
        CUdeviceptr scratch = 0;
        assert_cu_ok(cuMemAlloc(&scratch, 4 << 20));
        unsigned char *host = ts_malloc(4 << 20);
        const double t0 = launch_faulting(&k, kinds[i], scratch);
        assert_fault_by(expected_code(kinds[i]), t0, "copy after the kernel", cuMemcpyDtoH(host, scratch, 4 << 20));
        assert_sticky(expected_code(kinds[i]), &k, scratch);
        ts_free(host);
        recover(fx, 0xf004 + i);
        k = load_kernels();
    }
    assert_cu_ok(cuModuleUnload(k.module));
}

/* A context that exists beside the failing one keeps working (its channels
 * are other TSGs), before and after the failed context is destroyed. */
static void test_hw_fault_other_context_unaffected(void **state) {
    ts_fixture *fx = ts_fx(state);
    kernels k = load_kernels();
    CUcontext other = NULL, popped = NULL;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev));  /* pushed: current */
    kernels ko = load_kernels();
    vector_add(&ko, 1u << 16, 0xf010);
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, other);

    CUdeviceptr scratch = 0;
    assert_cu_ok(cuMemAlloc(&scratch, 1 << 20));
    const double t0 = launch_faulting(&k, FAULT_UNMAPPED, scratch);
    assert_fault_by(CUDA_ERROR_ILLEGAL_ADDRESS, t0, "fault in the first context", cuCtxSynchronize());

    assert_cu_ok(cuCtxPushCurrent(other));
    assert_cu_ok(cuCtxSynchronize());
    vector_add(&ko, 1u << 20, 0xf011);
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_cu(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
    recover(fx, 0xf012);

    assert_cu_ok(cuCtxPushCurrent(other));
    vector_add(&ko, 1u << 20, 0xf013);
    assert_cu_ok(cuModuleUnload(ko.module));
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_cu_ok(cuCtxDestroy(other));
}

/* Fault, destroy, recreate, again and again: nothing leaks (channels, TSGs,
 * memory) and every fault is reported as promptly as the first. */
static void test_hw_fault_repeated(void **state) {
    ts_fixture *fx = ts_fx(state);
    for (int round = 0; round < 8; ++round) {
        kernels k = load_kernels();
        CUdeviceptr scratch = 0;
        assert_cu_ok(cuMemAlloc(&scratch, 1 << 20));
        const fault_kind kind = (round & 1) ? FAULT_TRAP : FAULT_UNMAPPED;
        const double t0 = launch_faulting(&k, kind, scratch);
        assert_fault_by(expected_code(kind), t0, fault_name(kind), cuCtxSynchronize());
        assert_cu_ok(cuCtxDestroy(fx->ctx));
        fx->ctx = NULL;
        assert_cu_ok(cuCtxCreate(&fx->ctx, NULL, 0, fx->dev));
    }
    kernels k = load_kernels();
    vector_add(&k, 1u << 20, 0xf020);
    assert_cu_ok(cuModuleUnload(k.module));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_hw_fault_unmapped_address),
        TEST(test_hw_fault_freed_allocation),
        TEST(test_hw_fault_trap),
        TEST(test_hw_fault_copy_after_kernel),
        TEST(test_hw_fault_other_context_unaffected),
        TEST(test_hw_fault_repeated),
    };
    return cmocka_run_group_tests_name("hw_faults", tests, NULL, NULL);
}
