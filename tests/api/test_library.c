/*
 * Libraries and kernels (cuLibrary*, cuKernel*), a CUkernel where a
 * CUfunction is expected, the CUDA 12 function and module queries
 * (cuFuncGetParamInfo/GetModule/IsLoaded/Load, cuModuleGetFunctionCount/
 * EnumerateFunctions) and cuOccupancyAvailableDynamicSMemPerBlock; the same
 * kernel used from several threads and contexts at once.
 *
 * Kernels are compiled at test time with NVRTC; without it the tests that
 * need them skip, saying why. Runs on the simulator (make test) and on the
 * GPU (make test-hw): results of kernels are checked by tests/hw/
 * test_hw_launch_ex.c, what reaches the GPU by tests/unit/test_launch_ex_sim.cpp.
 * Expected codes: libcuda 580's where tests/compat/launch_probe.c recorded
 * them; elsewhere the documented behaviour.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_ctx_setup, ts_ctx_teardown)

static const char kSource[] =
    "extern \"C\" {\n"
    "__device__ int g_dev[5] = {1, 2, 3, 4, 5};\n"
    "__device__ double g_zero[333];\n"
    "__constant__ float c_vals[7] = {0.5f};\n"
    "__managed__ int m_val = 42;\n"
    "__global__ void k_params(char c, int i, double d, short s, int* out) {\n"
    "    if (out) out[threadIdx.x] = c + i + (int)d + s + g_dev[0] + (int)c_vals[0] + m_val;\n"
    "}\n"
    "__global__ void k_tiny(int* out) { if (out) out[threadIdx.x] = threadIdx.x; }\n"
    "__global__ void k_shared(int* out) {\n"
    "    __shared__ int s[1000];\n"
    "    s[threadIdx.x] = threadIdx.x;\n"
    "    __syncthreads();\n"
    "    if (out) out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];\n"
    "}\n"
    "__global__ void k_none() {}\n"
    "}\n";

static const char *const kKernelNames[] = {"k_params", "k_tiny", "k_shared", "k_none"};

static struct {
    int tried;
    void *cubin;
    size_t size;
} K;

static const void *cubin(void) {
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) ts_skip("NVRTC is needed: %s", why);
    if (!K.tried) {
        K.tried = 1;
        K.cubin = ts_compile_cubin(kSource, "library.cu", ts_device_arch(), &K.size);
    }
    if (!K.cubin) fail_msg("NVRTC could not compile library.cu");
    return K.cubin;
}

static CUlibrary load(void) {
    CUlibrary lib = NULL;
    assert_cu_ok(cuLibraryLoadData(&lib, cubin(), NULL, NULL, 0, NULL, NULL, 0));
    assert_non_null(lib);
    return lib;
}

static CUkernel kernel(CUlibrary lib, const char *name) {
    CUkernel k = NULL;
    assert_cu_ok(cuLibraryGetKernel(&k, lib, name));
    assert_non_null(k);
    return k;
}

/* ------------------------------------------------------------------ loading */

static void test_load_and_unload(void **state) {
    (void)state;
    CUlibrary lib = NULL;
    const void *image = cubin();
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryLoadData(NULL, image, NULL, NULL, 0, NULL, NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryLoadData(&lib, NULL, NULL, NULL, 0, NULL, NULL, 0));
    unsigned char junk[4096];
    ts_fill_random(junk, sizeof junk, 1234);
    junk[0] = 0x7f; /* not a cubin's whole magic */
    assert_cu(CUDA_ERROR_INVALID_IMAGE, cuLibraryLoadData(&lib, junk, NULL, NULL, 0, NULL, NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryLoadData(&lib, image, NULL, NULL, 1, NULL, NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 1));
    CUlibraryOption unknown[] = {(CUlibraryOption)99};
    void *values[] = {NULL};
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryLoadData(&lib, image, NULL, NULL, 0, unknown, values, 1));
    /* The binary outlives the library: accepted (nvlite keeps its own copy anyway). */
    CUlibraryOption preserved[] = {CU_LIBRARY_BINARY_IS_PRESERVED};
    void *yes[] = {(void *)(uintptr_t)1};
    assert_cu_ok(cuLibraryLoadData(&lib, image, NULL, NULL, 0, preserved, yes, 1));
    assert_cu_ok(cuLibraryUnload(lib));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLibraryUnload(lib));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLibraryUnload(NULL));
    /* The code is copied: the caller's buffer may go at once. */
    unsigned char *copy = ts_malloc(K.size);
    memcpy(copy, image, K.size);
    assert_cu_ok(cuLibraryLoadData(&lib, copy, NULL, NULL, 0, NULL, NULL, 0));
    memset(copy, 0xa5, K.size);
    ts_free(copy);
    CUfunction f = NULL;
    assert_cu_ok(cuKernelGetFunction(&f, kernel(lib, "k_tiny")));
    assert_cu_ok(cuLibraryUnload(lib));
    /* From a file. */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryLoadFromFile(&lib, NULL, NULL, NULL, 0, NULL, NULL, 0));
    assert_cu(CUDA_ERROR_FILE_NOT_FOUND,
              cuLibraryLoadFromFile(&lib, "/nonexistent/x.cubin", NULL, NULL, 0, NULL, NULL, 0));
    char *path = ts_temp_write("library.cubin", image, K.size);
    assert_non_null(path);
    assert_cu_ok(cuLibraryLoadFromFile(&lib, path, NULL, NULL, 0, NULL, NULL, 0));
    free(path);
    unsigned count = 0;
    assert_cu_ok(cuLibraryGetKernelCount(&count, lib));
    assert_int_equal(count, TS_ARRAY_SIZE(kKernelNames));
    assert_cu_ok(cuLibraryUnload(lib));
}

/* A library needs no context to be loaded, inspected or unloaded. */
static void test_no_context_needed(void **state) {
    (void)state;
    CUcontext ctx = NULL;
    assert_cu_ok(cuCtxPopCurrent(&ctx));
    CUlibrary lib = load();
    CUkernel k = kernel(lib, "k_shared");
    int v = -1;
    assert_cu_ok(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k, 0));
    assert_int_equal(v, 4000);
    const char *name = NULL;
    assert_cu_ok(cuKernelGetName(&name, k));
    assert_string_equal(name, "k_shared");
    /* What lives in a context needs one. */
    CUfunction f = NULL;
    CUmodule m = NULL;
    CUdeviceptr p = 0;
    size_t n = 0;
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuKernelGetFunction(&f, k));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuLibraryGetModule(&m, lib));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuLibraryGetGlobal(&p, &n, lib, "g_dev"));
    assert_cu_ok(cuCtxPushCurrent(ctx));
    assert_cu_ok(cuKernelGetFunction(&f, k));
    assert_cu_ok(cuLibraryUnload(lib));
}

/* ------------------------------------------------------------------ kernels */

static void test_kernels(void **state) {
    (void)state;
    CUlibrary lib = load();
    unsigned count = 0;
    assert_cu_ok(cuLibraryGetKernelCount(&count, lib));
    assert_int_equal(count, TS_ARRAY_SIZE(kKernelNames));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryGetKernelCount(NULL, lib));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLibraryGetKernelCount(&count, NULL));
    CUkernel ks[8] = {NULL};
    /* More room than kernels: libcuda fills what it has. */
    assert_cu_ok(cuLibraryEnumerateKernels(ks, count + 1, lib));
    assert_null(ks[count]);
    memset(ks, 0, sizeof ks);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryEnumerateKernels(NULL, count, lib));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLibraryEnumerateKernels(ks, count, NULL));
    assert_cu_ok(cuLibraryEnumerateKernels(ks, count - 1, lib));
    assert_null(ks[count - 1]);
    assert_cu_ok(cuLibraryEnumerateKernels(ks, count, lib));
    /* Every kernel once, each what cuLibraryGetKernel gives for its name. */
    for (size_t i = 0; i < TS_ARRAY_SIZE(kKernelNames); ++i) {
        CUkernel k = kernel(lib, kKernelNames[i]);
        int seen = 0;
        for (unsigned j = 0; j < count; ++j) seen += ks[j] == k;
        if (seen != 1) fail_msg("%s appears %d times among the enumerated kernels", kKernelNames[i], seen);
        const char *name = NULL;
        assert_cu_ok(cuKernelGetName(&name, k));
        assert_string_equal(name, kKernelNames[i]);
        CUlibrary back = NULL;
        assert_cu_ok(cuKernelGetLibrary(&back, k));
        assert_ptr_equal(back, lib);
    }
    CUkernel k = NULL;
    assert_cu(CUDA_ERROR_NOT_FOUND, cuLibraryGetKernel(&k, lib, "nope"));
    assert_cu(CUDA_ERROR_NOT_FOUND, cuLibraryGetKernel(&k, lib, "g_dev"));
    assert_cu(CUDA_ERROR_NOT_FOUND, cuLibraryGetKernel(&k, lib, ""));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryGetKernel(&k, lib, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryGetKernel(NULL, lib, "k_tiny"));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLibraryGetKernel(&k, NULL, "k_tiny"));
    const char *name = NULL;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuKernelGetName(NULL, ks[0]));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuKernelGetName(&name, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuKernelGetLibrary(NULL, ks[0]));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuKernelGetLibrary(&lib, NULL));
    /* A module or function handle is not a kernel. */
    CUmodule m = NULL;
    assert_cu_ok(cuLibraryGetModule(&m, lib));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuKernelGetName(&name, (CUkernel)m));
    assert_cu_ok(cuLibraryUnload(lib));
    /* Stale handles after unloading. */
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuKernelGetName(&name, ks[0]));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLibraryGetKernelCount(&count, lib));
    CUfunction f = NULL;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuKernelGetFunction(&f, ks[0]));
}

static void test_param_info(void **state) {
    (void)state;
    CUlibrary lib = load();
    CUkernel k = kernel(lib, "k_params");
    /* (char c, int i, double d, short s, int* out): the C ABI's offsets. */
    static const size_t offsets[] = {0, 4, 8, 16, 24}, sizes[] = {1, 4, 8, 2, 8};
    CUfunction f = NULL;
    assert_cu_ok(cuKernelGetFunction(&f, k));
    for (size_t i = 0; i < 5; ++i) {
        size_t off = 999, size = 999;
        assert_cu_ok(cuKernelGetParamInfo(k, i, &off, &size));
        assert_int_equal(off, offsets[i]);
        assert_int_equal(size, sizes[i]);
        off = size = 999;
        assert_cu_ok(cuFuncGetParamInfo(f, i, &off, &size));
        assert_int_equal(off, offsets[i]);
        assert_int_equal(size, sizes[i]);
    }
    size_t off = 999, size = 999;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuKernelGetParamInfo(k, 5, &off, &size));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncGetParamInfo(f, 5, &off, &size));
    assert_int_equal(off, 999);
    /* The offset is required, the size not (libcuda 580). */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuKernelGetParamInfo(k, 3, NULL, &size));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncGetParamInfo(f, 3, NULL, &size));
    assert_cu_ok(cuKernelGetParamInfo(k, 3, &off, NULL));
    assert_int_equal(off, 16);
    assert_cu_ok(cuFuncGetParamInfo(f, 4, &off, NULL));
    assert_int_equal(off, 24);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuKernelGetParamInfo(NULL, 0, &off, &size));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncGetParamInfo(NULL, 0, &off, &size));
    /* A kernel without parameters. */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuKernelGetParamInfo(kernel(lib, "k_none"), 0, &off, &size));
    assert_cu_ok(cuLibraryUnload(lib));
}

static void test_kernel_attributes(void **state) {
    ts_fixture *fx = ts_fx(state);
    CUlibrary lib = load();
    CUkernel k = kernel(lib, "k_shared");
    int v = -1;
    assert_cu_ok(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k, fx->dev));
    assert_int_equal(v, 4000);
    assert_cu_ok(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, fx->dev));
    assert_int_equal(v, 48 * 1024 - 4000);
    assert_cu_ok(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_BINARY_VERSION, k, fx->dev));
    assert_int_equal(v, ts_device_arch());
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuKernelGetAttribute(&v, (CUfunction_attribute)9999, k, fx->dev));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuKernelGetAttribute(NULL, CU_FUNC_ATTRIBUTE_NUM_REGS, k, fx->dev));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, NULL, fx->dev));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 99));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, -1));
    /* What the kernel and its function in a context say agree. */
    CUfunction f = NULL;
    assert_cu_ok(cuKernelGetFunction(&f, k));
    int fv = -1;
    assert_cu_ok(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, fx->dev));
    assert_cu_ok(cuFuncGetAttribute(&fv, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    assert_int_equal(v, fv);
    /* Set for the device: its function here, and in a context made later. */
    assert_cu_ok(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000, k, fx->dev));
    assert_cu_ok(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, fx->dev));
    assert_int_equal(v, 100000);
    assert_cu_ok(cuFuncGetAttribute(&fv, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
    assert_int_equal(fv, 100000);
    CUcontext other = NULL;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev));
    CUfunction g = NULL;
    assert_cu_ok(cuKernelGetFunction(&g, k));
    assert_cu_ok(cuFuncGetAttribute(&fv, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, g));
    assert_int_equal(fv, 100000);
    /* ... and launches use it. */
    CUdeviceptr out = 0;
    void *p[] = {&out};
    assert_cu_ok(cuLaunchKernel((CUfunction)k, 1, 1, 1, 64, 1, 1, 90000, NULL, p, NULL));
    assert_cu_ok(cuCtxSynchronize());
    assert_cu_ok(cuCtxDestroy(other));
    int optin = 0;
    assert_cu_ok(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, fx->dev));
    assert_cu(CUDA_ERROR_INVALID_VALUE,
              cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - 4000 + 1, k, fx->dev));
    assert_cu_ok(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - 4000, k, fx->dev));
    assert_cu_ok(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50, k, fx->dev));
    assert_cu_ok(cuFuncGetAttribute(&fv, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, f));
    assert_int_equal(fv, 50);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101, k, fx->dev));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS, 32, k, fx->dev));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 5, k, 99));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 5, NULL, fx->dev));
    assert_cu_ok(cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_SHARED, fx->dev));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuKernelSetCacheConfig(k, (CUfunc_cache)99, fx->dev));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_L1, 99));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuKernelSetCacheConfig(NULL, CU_FUNC_CACHE_PREFER_L1, fx->dev));
    assert_cu_ok(cuLibraryUnload(lib));
}

/* ------------------------------------------------------------------ contexts */

static void test_one_module_per_context(void **state) {
    ts_fixture *fx = ts_fx(state);
    CUlibrary lib = load();
    CUkernel k = kernel(lib, "k_tiny");
    CUfunction f1 = NULL, f1b = NULL;
    CUmodule m1 = NULL, m1b = NULL, fm = NULL;
    assert_cu_ok(cuKernelGetFunction(&f1, k));
    assert_cu_ok(cuKernelGetFunction(&f1b, k));
    assert_ptr_equal(f1, f1b);
    assert_cu_ok(cuLibraryGetModule(&m1, lib));
    assert_cu_ok(cuLibraryGetModule(&m1b, lib));
    assert_ptr_equal(m1, m1b);
    assert_cu_ok(cuFuncGetModule(&fm, f1));
    assert_ptr_equal(fm, m1);
    /* The library's module is a module like any: its functions are the kernels'. */
    CUfunction mf = NULL;
    assert_cu_ok(cuModuleGetFunction(&mf, m1, "k_tiny"));
    assert_ptr_equal(mf, f1);
    unsigned count = 0;
    assert_cu_ok(cuModuleGetFunctionCount(&count, m1));
    assert_int_equal(count, TS_ARRAY_SIZE(kKernelNames));
    CUdeviceptr g1 = 0, gm = 0;
    size_t n = 0, nm = 0;
    assert_cu_ok(cuLibraryGetGlobal(&g1, &n, lib, "g_dev"));
    assert_int_equal(n, 5 * sizeof(int));
    assert_cu_ok(cuModuleGetGlobal(&gm, &nm, m1, "g_dev"));
    assert_int_equal(gm, g1);
    /* Another context gets its own. */
    CUcontext other = NULL;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev));
    CUfunction f2 = NULL;
    CUmodule m2 = NULL;
    CUdeviceptr g2 = 0;
    assert_cu_ok(cuKernelGetFunction(&f2, k));
    assert_cu_ok(cuLibraryGetModule(&m2, lib));
    assert_cu_ok(cuLibraryGetGlobal(&g2, &n, lib, "g_dev"));
    assert_true(f2 != f1);
    assert_true(m2 != m1);
    assert_true(g2 != g1);
    /* A function runs in its own context only; the kernel in the current one. */
    CUdeviceptr out = 0;
    void *p[] = {&out};
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(f1, 1, 1, 1, 32, 1, 1, 0, NULL, p, NULL));
    assert_cu_ok(cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, NULL, p, NULL));
    assert_cu_ok(cuCtxSynchronize());
    /* Its context destroyed, its function goes; a new context gets a new one. */
    assert_cu_ok(cuCtxDestroy(other));
    int v = 0;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f2));
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev));
    CUfunction f3 = NULL;
    assert_cu_ok(cuKernelGetFunction(&f3, k));
    assert_cu_ok(cuLaunchKernel(f3, 1, 1, 1, 32, 1, 1, 0, NULL, p, NULL));
    assert_cu_ok(cuCtxSynchronize());
    assert_cu_ok(cuCtxDestroy(other));
    /* A library's module goes with the library only. */
    assert_cu(CUDA_ERROR_NOT_PERMITTED, cuModuleUnload(m1));
    CUfunction f4 = NULL;
    assert_cu_ok(cuKernelGetFunction(&f4, k));
    assert_ptr_equal(f4, f1);
    assert_cu_ok(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f4));
    /* Unloading the library unloads its modules everywhere. */
    assert_cu_ok(cuLibraryUnload(lib));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f4));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, NULL, p, NULL));
}

/* A CUkernel where a CUfunction is expected: the launch and occupancy calls
 * take it (its function in the current context), the cuFunc* calls do not
 * (CUDA_ERROR_INVALID_HANDLE), as libcuda 580 answers. */
static void test_kernel_as_function(void **state) {
    (void)state;
    CUlibrary lib = load();
    CUkernel k = kernel(lib, "k_params");
    CUfunction kf = (CUfunction)k, f = NULL;
    int v = -1;
    const char *name = NULL;
    CUfunctionLoadingState st = CU_FUNCTION_LOADING_STATE_MAX;
    CUmodule fm = NULL;
    size_t off = 0, size = 0;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, kf));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncSetAttribute(kf, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1000));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncSetCacheConfig(kf, CU_FUNC_CACHE_PREFER_L1));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetName(&name, kf));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncIsLoaded(&st, kf));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetModule(&fm, kf));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetParamInfo(kf, 0, &off, &size));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncLoad(kf));
    /* Occupancy: the kernel's function here, with what was set on the kernel. */
    assert_cu_ok(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1000, k, 0));
    int blocks = -1;
    assert_cu_ok(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kf, 128, 0));
    assert_true(blocks > 0);
    size_t avail = 0;
    assert_cu_ok(cuOccupancyAvailableDynamicSMemPerBlock(&avail, kf, 1, 128));
    assert_int_equal(avail, 1000);
    int grid = 0, block = 0;
    assert_cu_ok(cuOccupancyMaxPotentialBlockSize(&grid, &block, kf, NULL, 0, 0));
    assert_true(block > 0);
    /* Launches. */
    char c = 3;
    int i = 40;
    double d = 500.0;
    short s = 6000;
    CUdeviceptr out = ts_dev_alloc(256 * sizeof(int));
    void *p[] = {&c, &i, &d, &s, &out};
    assert_cu_ok(cuLaunchKernel(kf, 2, 1, 1, 64, 1, 1, 0, NULL, p, NULL));
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 32;
    cfg.blockDimY = cfg.blockDimZ = 1;
    assert_cu_ok(cuLaunchKernelEx(&cfg, kf, p, NULL));
    assert_cu_ok(cuLaunchCooperativeKernel(kf, 1, 1, 1, 32, 1, 1, 0, NULL, p));
    assert_cu_ok(cuCtxSynchronize());
    /* What they ran: the function cuKernelGetFunction gives, loaded. */
    assert_cu_ok(cuKernelGetFunction(&f, k));
    assert_cu_ok(cuFuncIsLoaded(&st, f));
    assert_int_equal(st, CU_FUNCTION_LOADING_STATE_LOADED);
    assert_cu_ok(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
    assert_int_equal(v, 1000);
    assert_cu_ok(cuLibraryUnload(lib));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(kf, 1, 1, 1, 32, 1, 1, 0, NULL, p, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kf, 128, 0));
}

static void test_globals(void **state) {
    (void)state;
    CUlibrary lib = load();
    CUdeviceptr p = 0;
    size_t n = 0;
    assert_cu_ok(cuLibraryGetGlobal(&p, &n, lib, "g_zero"));
    assert_int_equal(n, 333 * sizeof(double));
    assert_cu_ok(cuLibraryGetGlobal(&p, &n, lib, "c_vals"));
    assert_int_equal(n, 7 * sizeof(float));
    assert_cu_ok(cuLibraryGetGlobal(&p, NULL, lib, "g_dev"));
    /* Its initial values, then what is written there. */
    int init[5] = {0}, data[5] = {-9, 8, -7, 6, -5};
    assert_cu_ok(cuMemcpyDtoH(init, p, sizeof init));
    for (int i = 0; i < 5; ++i) assert_int_equal(init[i], i + 1);
    assert_cu_ok(cuMemcpyHtoD(p, data, sizeof data));
    memset(init, 0, sizeof init);
    assert_cu_ok(cuMemcpyDtoH(init, p, sizeof init));
    assert_memory_equal(init, data, sizeof data);
    assert_cu(CUDA_ERROR_NOT_FOUND, cuLibraryGetGlobal(&p, &n, lib, "nope"));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryGetGlobal(&p, &n, lib, "k_tiny"));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryGetGlobal(NULL, NULL, lib, "g_dev"));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryGetGlobal(&p, &n, lib, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLibraryGetGlobal(&p, &n, NULL, "g_dev"));
    /* Managed variables: known, but nvlite has no managed memory. */
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, cuLibraryGetManaged(&p, &n, lib, "m_val"));
    assert_cu(CUDA_ERROR_NOT_FOUND, cuLibraryGetManaged(&p, &n, lib, "g_dev"));
    assert_cu(CUDA_ERROR_NOT_FOUND, cuLibraryGetManaged(&p, &n, lib, "nope"));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLibraryGetManaged(NULL, NULL, lib, "m_val"));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLibraryGetManaged(&p, &n, NULL, "m_val"));
    assert_cu_ok(cuLibraryUnload(lib));
}

/* ------------------------------------------------------------------ module queries */

static void test_module_functions(void **state) {
    (void)state;
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoadData(&m, cubin()));
    unsigned count = 0;
    assert_cu_ok(cuModuleGetFunctionCount(&count, m));
    assert_int_equal(count, TS_ARRAY_SIZE(kKernelNames));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleGetFunctionCount(NULL, m));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleGetFunctionCount(&count, NULL));
    CUfunction fs[8] = {NULL};
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleEnumerateFunctions(NULL, count, m));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleEnumerateFunctions(fs, count, NULL));
    assert_cu_ok(cuModuleEnumerateFunctions(fs, count - 1, m));
    assert_null(fs[count - 1]);
    /* More room than functions: libcuda fills what it has. */
    assert_cu_ok(cuModuleEnumerateFunctions(fs, count + 1, m));
    assert_null(fs[count]);
    /* In the source's order (libcuda 580's, for NVRTC's cubins); not loaded
     * until looked up, launched or loaded. */
    for (size_t i = 0; i < TS_ARRAY_SIZE(kKernelNames); ++i) {
        const char *name = NULL;
        assert_cu_ok(cuFuncGetName(&name, fs[i]));
        assert_string_equal(name, kKernelNames[i]);
        CUfunctionLoadingState st = CU_FUNCTION_LOADING_STATE_MAX;
        assert_cu_ok(cuFuncIsLoaded(&st, fs[i]));
        assert_int_equal(st, CU_FUNCTION_LOADING_STATE_UNLOADED);
        CUmodule back = NULL;
        assert_cu_ok(cuFuncGetModule(&back, fs[i]));
        assert_ptr_equal(back, m);
    }
    for (size_t i = 0; i < TS_ARRAY_SIZE(kKernelNames); ++i) {
        CUfunction f = ts_get_function(m, kKernelNames[i]);
        assert_ptr_equal(f, fs[i]);
        CUfunctionLoadingState st = CU_FUNCTION_LOADING_STATE_MAX;
        assert_cu_ok(cuFuncIsLoaded(&st, f));
        assert_int_equal(st, CU_FUNCTION_LOADING_STATE_LOADED);
    }
    CUmodule back = NULL;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncGetModule(NULL, fs[0]));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncGetModule(&back, NULL));
    assert_cu_ok(cuModuleUnload(m));
    CUfunctionLoadingState st;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleGetFunctionCount(&count, m));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetModule(&back, fs[0]));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncIsLoaded(&st, fs[0]));
}

/* The values libcuda 580 answers on an H200 (tests/compat/expected/
 * libcuda_launch_funcs.txt), from the device's figures: one block may have
 * the function's whole limit, n blocks share the SM's largest carveout in
 * 128-byte granules; more blocks than fit are a value error. */
static void test_available_dynamic_shared(void **state) {
    ts_fixture *fx = ts_fx(state);
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoadData(&m, cubin()));
    CUfunction t = ts_get_function(m, "k_tiny"), s = ts_get_function(m, "k_shared");
    size_t avail = 0;
    assert_cu_ok(cuOccupancyAvailableDynamicSMemPerBlock(&avail, t, 1, 128));
    assert_int_equal(avail, 48 * 1024);
    assert_cu_ok(cuOccupancyAvailableDynamicSMemPerBlock(&avail, s, 1, 128));
    assert_int_equal(avail, 48 * 1024 - 4000);
    int smem = 0, optin = 0;
    assert_cu_ok(cuDeviceGetAttribute(&smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, fx->dev));
    assert_cu_ok(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, fx->dev));
    static const int counts[] = {2, 3, 7, 16, 32};
    for (size_t i = 0; i < TS_ARRAY_SIZE(counts); ++i) {
        assert_cu_ok(cuOccupancyAvailableDynamicSMemPerBlock(&avail, t, counts[i], 32));
        size_t want = (size_t)smem / (size_t)counts[i] / 128 * 128;
        if (want > 48 * 1024) want = 48 * 1024;
        if (avail != want) fail_msg("%d blocks: %zu bytes, expected %zu", counts[i], avail, want);
    }
    /* Opted in: one block gets the opt-in limit, two half the SM. */
    assert_cu_ok(cuFuncSetAttribute(t, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
    assert_cu_ok(cuOccupancyAvailableDynamicSMemPerBlock(&avail, t, 1, 32));
    assert_int_equal(avail, optin);
    assert_cu_ok(cuOccupancyAvailableDynamicSMemPerBlock(&avail, t, 2, 32));
    assert_int_equal(avail, (size_t)smem / 2 / 128 * 128);
    /* More blocks than the threads allow. */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyAvailableDynamicSMemPerBlock(&avail, t, 3, 1024));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyAvailableDynamicSMemPerBlock(&avail, t, 33, 32));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyAvailableDynamicSMemPerBlock(&avail, t, 0, 32));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyAvailableDynamicSMemPerBlock(&avail, t, 1, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyAvailableDynamicSMemPerBlock(&avail, t, 1, 2048));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyAvailableDynamicSMemPerBlock(NULL, t, 1, 32));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuOccupancyAvailableDynamicSMemPerBlock(&avail, NULL, 1, 32));
    assert_cu_ok(cuModuleUnload(m));
}

/* ------------------------------------------------------------------ threads */

typedef struct {
    CUdevice dev;
    CUkernel k;
    CUlibrary lib;
    int launches;
    CUresult failure;
    const char *where;
} worker;

static void *work(void *arg) {
    worker *w = arg;
    CUcontext ctx = NULL;
    CUresult r = cuCtxCreate(&ctx, NULL, 0, w->dev);
    if (r != CUDA_SUCCESS) {
        w->failure = r;
        w->where = "cuCtxCreate";
        return NULL;
    }
    CUdeviceptr out = 0;
    void *p[] = {&out};
    for (int i = 0; i < w->launches && w->failure == CUDA_SUCCESS; ++i) {
        CUfunction f = NULL;
        if ((r = cuKernelGetFunction(&f, w->k)) != CUDA_SUCCESS) {
            w->where = "cuKernelGetFunction";
        } else if ((r = cuLaunchKernel(i & 1 ? f : (CUfunction)w->k, 1, 1, 1, 32, 1, 1, 0, NULL, p, NULL)) !=
                   CUDA_SUCCESS) {
            w->where = "cuLaunchKernel";
        } else {
            int v = 0;
            if ((r = cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, w->k, w->dev)) !=
                CUDA_SUCCESS)
                w->where = "cuKernelGetAttribute";
        }
        w->failure = r;
    }
    if (w->failure == CUDA_SUCCESS && (r = cuCtxSynchronize()) != CUDA_SUCCESS) {
        w->failure = r;
        w->where = "cuCtxSynchronize";
    }
    cuCtxDestroy(ctx);
    return NULL;
}

/* One kernel from several threads, each in a context of its own, while its
 * attributes change. */
static void test_threads(void **state) {
    ts_fixture *fx = ts_fx(state);
    CUlibrary lib = load();
    CUkernel k = kernel(lib, "k_tiny");
    enum { kThreads = 4 };
    worker w[kThreads];
    pthread_t t[kThreads];
    for (int i = 0; i < kThreads; ++i) {
        w[i] = (worker){fx->dev, k, lib, 40, CUDA_SUCCESS, NULL};
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 40; ++i)
        assert_cu_ok(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1000 + i, k, fx->dev));
    for (int i = 0; i < kThreads; ++i) assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < kThreads; ++i)
        if (w[i].failure != CUDA_SUCCESS) fail_msg("thread %d: %s returned %s", i, w[i].where, ts_cu_name(w[i].failure));
    assert_cu_ok(cuLibraryUnload(lib));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_load_and_unload),
        TEST(test_no_context_needed),
        TEST(test_kernels),
        TEST(test_param_info),
        TEST(test_kernel_attributes),
        TEST(test_one_module_per_context),
        TEST(test_kernel_as_function),
        TEST(test_globals),
        TEST(test_module_functions),
        TEST(test_available_dynamic_shared),
        TEST(test_threads),
    };
    return cmocka_run_group_tests_name("library", tests, ts_group_init, NULL);
}
