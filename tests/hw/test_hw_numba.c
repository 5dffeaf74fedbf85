/*
 * Hardware-only checks of what numba-cuda's suite needed (make test-hw; built
 * in CI, skipped there without a GPU). Kernels are compiled with NVRTC at test
 * time; every result is checked on the host.
 *   - __constant__ data read through generic pointers (cvta.const, how numba
 *     passes print()'s format strings and its constant arrays): values, and
 *     printf with a format string that lives in constant memory;
 *   - cooperative groups through libcudadevrt's cudaCGGetIntrinsicHandle /
 *     cudaCGSynchronize (numba's this_grid().sync()), linked by nvJitLink and
 *     loaded with cuLibraryLoadData: many rounds over every block the GPU
 *     holds, each checked by the blocks themselves.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_support.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_hw_ctx_setup, ts_ctx_teardown)

/* NVRTC declares printf, not vprintf (what printf becomes, and what numba
 * calls): the source declares it as CUDA's headers do. */
static const char kConstSource[] =
    "extern \"C\" __device__ int vprintf(const char*, const char*);\n"
    "__constant__ double c_values[7] = {3.5, -2.25, 1.0, 7.75, 0.125, 1e300, -0.0};\n"
    "__constant__ char c_format[] = \"numba-const %d %.3f\\n\";\n"
    "__device__ __noinline__ void copy(double* d, const double* s, int n) { for (int i = 0; i < n; ++i) d[i] = s[i]; }\n"
    "struct Args { int i; double v; };\n"
    "extern \"C\" __global__ void k_const(double* out, int n) { copy(out, c_values + 1, n); }\n"
    "extern \"C\" __global__ void k_print(void) {\n"
    "    Args a = {(int)threadIdx.x, c_values[threadIdx.x % 5]};\n"
    "    vprintf(c_format, (const char*)&a);\n"
    "}\n";

/* Each round every block writes its slot, the grid syncs, every block checks
 * another block's slot (read through volatile: written by another SM), the
 * grid syncs again. */
static const char kCgSource[] =
    "extern \"C\" __global__ void k_cg(unsigned* slots, unsigned* errors, unsigned rounds) {\n"
    "    unsigned long long h = cudaCGGetIntrinsicHandle(cudaCGScopeGrid);\n"
    "    if (h == 0) { if (threadIdx.x == 0) atomicAdd(errors, 1000000u); return; }\n"
    "    unsigned n = gridDim.x, b = blockIdx.x;\n"
    "    volatile unsigned* vs = slots;\n"
    "    for (unsigned r = 1; r <= rounds; ++r) {\n"
    "        if (threadIdx.x == 0) vs[b] = r * 100000u + b;\n"
    "        if (cudaCGSynchronize(h, 0) != cudaSuccess) { if (threadIdx.x == 0) atomicAdd(errors, 10000u); return; }\n"
    "        unsigned nb = (b + 1 + r) % n;\n"
    "        if (threadIdx.x == 0 && vs[nb] != r * 100000u + nb) atomicAdd(errors, 1u);\n"
    "        if (cudaCGSynchronize(h, 0) != cudaSuccess) { if (threadIdx.x == 0) atomicAdd(errors, 10000u); return; }\n"
    "    }\n"
    "}\n";

static void *compile_rdc(const char *source, const char *name, size_t *size) {
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) return NULL;
    const char *opts[] = {"-rdc=true"};
    void *cubin = ts_compile_cubin_opts(source, name, ts_device_arch(), opts, 1, size);
    assert_non_null(cubin);
    return cubin;
}

static void test_constant_generic_pointers(void **state) {
    (void)state;
    size_t size = 0;
    void *cubin = compile_rdc(kConstSource, "hw_numba_const.cu", &size);
    if (!cubin) ts_skip("no NVRTC");
    CUlibrary lib;
    assert_cu_ok(cuLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
    free(cubin);
    CUkernel k;
    assert_cu_ok(cuLibraryGetKernel(&k, lib, "k_const"));
    CUdeviceptr out;
    assert_cu_ok(cuMemAlloc(&out, 6 * sizeof(double)));
    assert_cu_ok(cuMemsetD8(out, 0x7f, 6 * sizeof(double)));
    int n = 6;
    void *params[] = {&out, &n};
    assert_cu_ok(cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    double got[6];
    assert_cu_ok(cuMemcpyDtoH(got, out, sizeof got));
    const double expected[6] = {-2.25, 1.0, 7.75, 0.125, 1e300, -0.0};
    assert_memory_equal(got, expected, sizeof got);
    assert_cu_ok(cuMemFree(out));
    assert_cu_ok(cuLibraryUnload(lib));
}

static void test_printf_format_in_constant_memory(void **state) {
    (void)state;
    size_t size = 0;
    void *cubin = compile_rdc(kConstSource, "hw_numba_print.cu", &size);
    if (!cubin) ts_skip("no NVRTC");
    CUlibrary lib;
    assert_cu_ok(cuLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
    free(cubin);
    CUkernel k;
    assert_cu_ok(cuLibraryGetKernel(&k, lib, "k_print"));

    fflush(stdout);
    char path[] = "/tmp/nvlite_hw_numba_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    int saved = dup(1);
    assert_true(saved >= 0 && dup2(fd, 1) == 1);
    CUresult launched = cuLaunchKernel((CUfunction)k, 1, 1, 1, 3, 1, 1, 0, NULL, NULL, NULL);
    CUresult synced = cuCtxSynchronize();
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    assert_cu_ok(launched);
    assert_cu_ok(synced);
    char text[512] = {0};
    ssize_t got = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    assert_true(got > 0);
    /* Threads print in any order. */
    assert_non_null(strstr(text, "numba-const 0 3.500\n"));
    assert_non_null(strstr(text, "numba-const 1 -2.250\n"));
    assert_non_null(strstr(text, "numba-const 2 1.000\n"));
    assert_cu_ok(cuLibraryUnload(lib));
}

static void test_cooperative_groups_through_cudadevrt(void **state) {
    (void)state;
    size_t size = 0;
    void *object = compile_rdc(kCgSource, "hw_numba_cg.cu", &size);
    if (!object) ts_skip("no NVRTC");
    CUlibrary lib = ts_load_with_cudadevrt(CU_JIT_INPUT_CUBIN, object, size, "cg");
    free(object);
    CUkernel k;
    assert_cu_ok(cuLibraryGetKernel(&k, lib, "k_cg"));
    CUfunction f = (CUfunction)k;

    int sms = 0;
    CUdevice dev;
    assert_cu_ok(cuCtxGetDevice(&dev));
    assert_cu_ok(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    /* Every block the GPU holds at once, for block sizes whose grids need
     * different shared-memory carveouts (1 KiB reserved per block: 16 KiB
     * for 16 blocks of 128 threads, 32 KiB for 32 blocks of 32). */
    const unsigned blockSizes[] = {128, 32, 96, 1024};
    const size_t maxBlocks = (size_t)sms * 32;
    CUdeviceptr slots, errors;
    assert_cu_ok(cuMemAlloc(&slots, maxBlocks * sizeof(unsigned)));
    assert_cu_ok(cuMemAlloc(&errors, sizeof(unsigned)));
    unsigned rounds = 200;
    void *params[] = {&slots, &errors, &rounds};
    ts_watchdog_arm("cooperative groups through libcudadevrt", 60);
    for (size_t i = 0; i < TS_ARRAY_SIZE(blockSizes); ++i) {
        int perSm = 0;
        assert_cu_ok(cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, f, (int)blockSizes[i], 0));
        if (perSm == 0 && blockSizes[i] > 128) {
            /* Too many registers for such a block: nothing to launch. */
            printf("blocks of %u threads do not fit an SM (registers)\n", blockSizes[i]);
            continue;
        }
        assert_true(perSm > 0 && (size_t)perSm * sms <= maxBlocks);
        const unsigned blocks = (unsigned)(perSm * sms);
        assert_cu_ok(cuMemsetD32(slots, 0xdeadbeef, blocks));
        assert_cu_ok(cuMemsetD32(errors, 0, 1));
        CUlaunchAttribute a;
        memset(&a, 0, sizeof a);
        a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        a.value.cooperative = 1;
        CUlaunchConfig c;
        memset(&c, 0, sizeof c);
        c.gridDimX = blocks;
        c.gridDimY = c.gridDimZ = 1;
        c.blockDimX = blockSizes[i];
        c.blockDimY = c.blockDimZ = 1;
        c.attrs = &a;
        c.numAttrs = 1;
        assert_cu_ok(cuLaunchKernelEx(&c, f, params, NULL));
        assert_cu_ok(cuCtxSynchronize());
        unsigned bad = 1;
        assert_cu_ok(cuMemcpyDtoH(&bad, errors, sizeof bad));
        if (bad) fail_msg("%u blocks of %u threads (%d per SM), %u rounds: errors %u", blocks, blockSizes[i], perSm, rounds, bad);
        printf("cooperative grid of %u blocks x %u threads (%d per SM): %u rounds of grid sync\n", blocks, blockSizes[i],
               perSm, rounds);
        /* One block more than the GPU holds at once is refused. */
        c.gridDimX = blocks + 1;
        assert_cu(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, cuLaunchKernelEx(&c, f, params, NULL));
    }
    ts_watchdog_disarm();
    assert_cu_ok(cuMemFree(slots));
    assert_cu_ok(cuMemFree(errors));
    assert_cu_ok(cuLibraryUnload(lib));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_constant_generic_pointers),
        TEST(test_printf_format_in_constant_memory),
        TEST(test_cooperative_groups_through_cudadevrt),
    };
    return cmocka_run_group_tests_name("hw_numba", tests, NULL, NULL);
}
