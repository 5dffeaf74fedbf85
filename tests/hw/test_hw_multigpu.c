/*
 * Hardware-only tests on two GPUs (make test-hw; they skip, saying why, on a
 * machine with fewer than two GPUs or without a peer link between devices 0
 * and 1): a kernel on device 0 reading and writing device 1's memory once
 * peer access is enabled (an exact sum of an array that lives on device 1,
 * a scaled copy written into device 1), atomics over the link, peer copies
 * of odd sizes both ways through the copy engine, and kernels of both
 * devices ordered by events (device 1 writes, device 0 reads).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

static const char kSource[] =
    "extern \"C\" {\n"
    "// One block per 'chunk' values; the total in out[0] (exact: integers).\n"
    "__global__ void sum_u32(const unsigned* in, unsigned long long n, unsigned long long* out) {\n"
    "    unsigned long long s = 0;\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;\n"
    "         i += (unsigned long long)gridDim.x * blockDim.x) s += in[i];\n"
    "    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);\n"
    "    if ((threadIdx.x & 31) == 0) atomicAdd(out, s);\n"
    "}\n"
    "__global__ void scale(const unsigned* in, unsigned* out, unsigned n, unsigned k) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = in[i] * k + 1;\n"
    "}\n"
    "__global__ void count(unsigned* counter, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) atomicAdd(counter, 1u);\n"
    "}\n"
    "}\n";

typedef struct {
    CUcontext c0, c1;
} two;

static int two_setup(void **state) {
    static two none;
    *state = &none;
    if (!ts_have_real_gpu(NULL)) return 0;
    int n = 0;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&n) != CUDA_SUCCESS || n < 2) return 0;
    int access = 0;
    if (cuDeviceCanAccessPeer(&access, 0, 1) != CUDA_SUCCESS || !access) return 0;
    two *t = calloc(1, sizeof *t);
    if (!t) return -1;
    if (cuCtxCreate(&t->c1, NULL, 0, 1) != CUDA_SUCCESS || cuCtxCreate(&t->c0, NULL, 0, 0) != CUDA_SUCCESS) return -1;
    *state = t;
    return 0;
}

static int two_teardown(void **state) {
    two *t = *state;
    if (!t || !t->c0) return 0;
    int rc = 0;
    if (cuCtxDestroy(t->c0) != CUDA_SUCCESS) rc = -1;
    if (cuCtxDestroy(t->c1) != CUDA_SUCCESS) rc = -1;
    cuCtxSetCurrent(NULL);
    free(t);
    return rc;
}

static two *need_two(void **state) {
    two *t = *state;
    if (t && t->c0) return t;
    const char *why = NULL;
    if (!ts_have_real_gpu(&why)) ts_skip("no real GPU here: %s", why ? why : "");
    int n = 0;
    cuDeviceGetCount(&n);
    if (n < 2) ts_skip("needs two GPUs, this machine has %d", n);
    ts_skip("devices 0 and 1 have no peer link (cuDeviceCanAccessPeer says 0)");
    return NULL;
}

static void launch(CUfunction f, unsigned grid, unsigned block, void **args, CUstream s) {
    assert_cu_ok(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, args, NULL));
}

/* A kernel on device 0 sums an array that lives on device 1, exactly. */
static void test_kernel_sums_peer_array(void **state) {
    two *t = need_two(state);
    const unsigned long long n = (64ull << 20) / 4 + 12345; /* ~64 MiB of uint32, odd count */
    unsigned *host = malloc(n * 4);
    assert_non_null(host);
    ts_fill_random(host, n * 4, 1407);
    unsigned long long want = 0;
    for (unsigned long long i = 0; i < n; ++i) want += host[i];

    CUdeviceptr arr1;
    assert_cu_ok(cuCtxSetCurrent(t->c1));
    assert_cu_ok(cuMemAlloc(&arr1, n * 4));
    assert_cu_ok(cuMemcpyHtoD(arr1, host, n * 4));

    assert_cu_ok(cuCtxSetCurrent(t->c0));
    assert_cu_ok(cuCtxEnablePeerAccess(t->c1, 0));
    CUmodule m = ts_source_module(kSource, "multigpu.cu");
    CUfunction sum = ts_get_function(m, "sum_u32");
    CUdeviceptr out0;
    assert_cu_ok(cuMemAlloc(&out0, 8));
    assert_cu_ok(cuMemsetD8(out0, 0, 8));
    void *args[] = {&arr1, (void *)&n, &out0};
    launch(sum, 264, 256, args, NULL);
    unsigned long long got = 0;
    assert_cu_ok(cuMemcpyDtoH(&got, out0, 8));
    assert_int_equal(got, want);

    /* Allocated after peer access was enabled: mapped too. */
    CUdeviceptr late1;
    assert_cu_ok(cuCtxSetCurrent(t->c1));
    assert_cu_ok(cuMemAlloc(&late1, 4099 * 4));
    assert_cu_ok(cuMemcpyHtoD(late1, host + 7, 4099 * 4));
    assert_cu_ok(cuCtxSetCurrent(t->c0));
    unsigned long long n2 = 4099, want2 = 0;
    for (int i = 0; i < 4099; ++i) want2 += host[7 + i];
    assert_cu_ok(cuMemsetD8(out0, 0, 8));
    void *args2[] = {&late1, &n2, &out0};
    launch(sum, 3, 128, args2, NULL);
    assert_cu_ok(cuMemcpyDtoH(&got, out0, 8));
    assert_int_equal(got, want2);

    assert_cu_ok(cuModuleUnload(m));
    assert_cu_ok(cuMemFree(out0));
    assert_cu_ok(cuCtxDisablePeerAccess(t->c1));
    assert_cu_ok(cuCtxSetCurrent(t->c1));
    assert_cu_ok(cuMemFree(arr1));
    assert_cu_ok(cuMemFree(late1));
    free(host);
}

/* Device 0 writes into device 1 (stores and atomics), device 1 reads it back;
 * device 1's kernel waits for device 0's event. */
static void test_kernel_writes_peer_memory(void **state) {
    two *t = need_two(state);
    const unsigned n = 1000003;
    unsigned *host = malloc((size_t)n * 4), *got = malloc((size_t)n * 4);
    assert_non_null(host);
    assert_non_null(got);
    ts_fill_random(host, (size_t)n * 4, 1408);

    assert_cu_ok(cuCtxSetCurrent(t->c1));
    CUdeviceptr dst1, counter1;
    assert_cu_ok(cuMemAlloc(&dst1, (size_t)n * 4));
    assert_cu_ok(cuMemAlloc(&counter1, 4));
    assert_cu_ok(cuMemsetD32(counter1, 0, 1));
    CUmodule m1 = ts_source_module(kSource, "multigpu.cu");
    CUstream s1 = ts_stream_new(CU_STREAM_NON_BLOCKING);

    assert_cu_ok(cuCtxSetCurrent(t->c0));
    assert_cu_ok(cuCtxEnablePeerAccess(t->c1, 0));
    CUmodule m0 = ts_source_module(kSource, "multigpu.cu");
    CUdeviceptr src0;
    assert_cu_ok(cuMemAlloc(&src0, (size_t)n * 4));
    assert_cu_ok(cuMemcpyHtoD(src0, host, (size_t)n * 4));
    CUstream s0 = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent done0 = ts_event_new(CU_EVENT_DISABLE_TIMING);
    unsigned k = 3;
    void *a1[] = {&src0, &dst1, (void *)&n, &k};
    launch(ts_get_function(m0, "scale"), (n + 255) / 256, 256, a1, s0);
    void *a2[] = {&counter1, (void *)&n};
    launch(ts_get_function(m0, "count"), (n + 255) / 256, 256, a2, s0);
    assert_cu_ok(cuEventRecord(done0, s0));

    /* Device 1 adds its own count after device 0's, then reads everything. */
    assert_cu_ok(cuCtxSetCurrent(t->c1));
    assert_cu_ok(cuStreamWaitEvent(s1, done0, 0));
    launch(ts_get_function(m1, "count"), (n + 255) / 256, 256, a2, s1);
    assert_cu_ok(cuMemcpyDtoHAsync(got, dst1, (size_t)n * 4, s1));
    unsigned c = 0;
    assert_cu_ok(cuMemcpyDtoHAsync(&c, counter1, 4, s1));
    assert_cu_ok(cuStreamSynchronize(s1));
    for (unsigned i = 0; i < n; ++i) host[i] = host[i] * 3 + 1;
    assert_bytes_named(host, got, (size_t)n * 4, "device 1 memory written by device 0's kernel");
    assert_int_equal(c, 2 * n);

    assert_cu_ok(cuModuleUnload(m1));
    assert_cu_ok(cuMemFree(dst1));
    assert_cu_ok(cuMemFree(counter1));
    assert_cu_ok(cuCtxSetCurrent(t->c0));
    assert_cu_ok(cuModuleUnload(m0));
    assert_cu_ok(cuMemFree(src0));
    free(host);
    free(got);
}

/* Peer copies through the copy engine, both ways, odd sizes and offsets. */
static void test_peer_copies_odd_sizes(void **state) {
    two *t = need_two(state);
    const size_t bytes = (96u << 20) + 777;
    unsigned char *want = malloc(bytes), *got = malloc(bytes);
    assert_non_null(want);
    assert_non_null(got);
    ts_fill_random(want, bytes, 1409);
    CUdeviceptr a0, a1;
    assert_cu_ok(cuCtxSetCurrent(t->c1));
    assert_cu_ok(cuMemAlloc(&a1, bytes));
    assert_cu_ok(cuMemsetD8(a1, 0xee, bytes));
    assert_cu_ok(cuCtxSetCurrent(t->c0));
    assert_cu_ok(cuMemAlloc(&a0, bytes));
    assert_cu_ok(cuMemcpyHtoD(a0, want, bytes));
    ts_rng rng;
    ts_rng_init(&rng, 14);
    unsigned char *model = malloc(bytes);
    assert_non_null(model);
    memset(model, 0xee, bytes);
    for (int i = 0; i < 20; ++i) {
        size_t n = 1 + (size_t)ts_rng_below(&rng, i < 10 ? 65536 : bytes - 1);
        size_t s = (size_t)ts_rng_below(&rng, bytes - n + 1), d = (size_t)ts_rng_below(&rng, bytes - n + 1);
        assert_cu_ok(cuMemcpyPeer(a1 + d, t->c1, a0 + s, t->c0, n));
        memcpy(model + d, want + s, n);
    }
    assert_cu_ok(cuCtxSetCurrent(t->c1));
    assert_cu_ok(cuMemcpyDtoH(got, a1, bytes));
    assert_bytes_named(model, got, bytes, "device 1 after peer copies");
    /* And back, asynchronously on a device-1 stream. */
    CUstream s1 = ts_stream_new(CU_STREAM_NON_BLOCKING);
    assert_cu_ok(cuMemcpyPeerAsync(a0 + 1, t->c0, a1 + 2, t->c1, bytes - 3, s1));
    assert_cu_ok(cuStreamSynchronize(s1));
    assert_cu_ok(cuCtxSetCurrent(t->c0));
    assert_cu_ok(cuMemcpyDtoH(got, a0, bytes));
    memcpy(want + 1, model + 2, bytes - 3);
    assert_bytes_named(want, got, bytes, "device 0 after the copy back");
    assert_cu_ok(cuMemFree(a0));
    assert_cu_ok(cuCtxSetCurrent(t->c1));
    assert_cu_ok(cuMemFree(a1));
    free(want);
    free(got);
    free(model);
}

int main(void) {
    ts_watchdog_arm("test_hw_multigpu", 300);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kernel_sums_peer_array, two_setup, two_teardown),
        cmocka_unit_test_setup_teardown(test_kernel_writes_peer_memory, two_setup, two_teardown),
        cmocka_unit_test_setup_teardown(test_peer_copies_odd_sizes, two_setup, two_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
