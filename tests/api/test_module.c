/*
 * Modules and functions: cuModuleLoad/LoadData/LoadDataEx/LoadFatBinary,
 * cuModuleUnload, cuModuleGetFunction, cuModuleGetGlobal, cuModuleGet-
 * LoadingMode, cuFuncGetAttribute/SetAttribute/SetCacheConfig/GetName, the
 * occupancy calculator (cuOccupancy*) and linking (cuLink*); handles from
 * several threads at once.
 *
 * Kernels are compiled at test time: cubins and PTX with NVRTC (dlopen'ed),
 * fatbins with nvcc (ts_kernels.h); without them the tests that need them
 * skip, saying why. Runs on the simulator (make test) and on the GPU
 * (make test-hw); only the thread test launches a kernel, to race it with
 * unloading (tests/unit/test_launch_sim.cpp and tests/hw/test_hw_kernels.c
 * check launches).
 *
 * Expected codes: libcuda 580 on an H200, as tests/compat/module_probe.c
 * recorded them (tests/compat/expected/libcuda_modules.txt); where libcuda
 * crashes (corrupt images, handles of unloaded modules), nvlite's own
 * answer, said where it is used.
 * Occupancy values: an H200's SM (2048 threads, 32 blocks, 64K registers,
 * 228 KiB of shared memory of which 1 KiB per block is reserved).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_ctx_setup, ts_ctx_teardown)

/* ------------------------------------------------------------------ kernels */

static const char kSource[] =
    "extern \"C\" {\n"
    "__device__ int g_dev[256] = {1, 2, 3, 4, 5, 6, 7, 8};\n"
    "__device__ double g_zero[1000];\n"
    "__device__ unsigned long long g_scalar = 0x1122334455667788ull;\n"
    "__constant__ float c_vals[32] = {0.5f, 1.5f, 2.5f, 3.5f};\n"
    "__global__ void k_simple(float* out, const float* in, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = in[i] * 2.0f + c_vals[i & 31] + (float)g_dev[i & 255] + (float)g_zero[i % 1000]\n"
    "                        + (float)g_scalar;\n"
    "}\n"
    "__global__ void k_tiny(int* out) { out[threadIdx.x] = threadIdx.x; }\n"
    "__global__ void k_shared2k(int* out) {\n"
    "    __shared__ int s[512];\n"
    "    s[threadIdx.x % 512] = threadIdx.x;\n"
    "    __syncthreads();\n"
    "    out[threadIdx.x] = s[(threadIdx.x + 1) % 512];\n"
    "}\n"
    "__global__ void k_local(int* out, int n) {\n"
    "    int a[1024];\n"
    "    for (int i = 0; i < 1024; ++i) a[(i * n) & 1023] = out[i];\n"
    "    out[threadIdx.x] = a[(threadIdx.x * 7 + n) & 1023];\n"
    "}\n"
    "__global__ void __launch_bounds__(256) k_bounded(int* out) { out[threadIdx.x] = 1; }\n"
    "__global__ void k_dyn(int* out) {\n"
    "    extern __shared__ int d[];\n"
    "    d[threadIdx.x] = threadIdx.x;\n"
    "    __syncthreads();\n"
    "    out[threadIdx.x] = d[blockDim.x - 1 - threadIdx.x];\n"
    "}\n"
    "}\n";

/* As many registers as it may have (TS_REGS_KERNEL_BODY). */
static const char kRegsSource[] =
    "extern \"C\" __global__ void k_regs(float* out, const float* in, int n) {\n"
    TS_REGS_KERNEL_BODY
    "}\n";

typedef struct {
    void *data;
    size_t size;
    int tried;
} blob;

static struct {
    int arch;
    blob cubin, ptx, regs, regs32, regs64, sm80;
    blob fatbin_sass, fatbin_ptx, fatbin_sm80;
} K;

static int device_arch(void) {
    if (!K.arch) K.arch = ts_device_arch();
    return K.arch;
}

static void require_nvrtc(void) {
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) ts_skip("%s", why);
}

static void require_nvcc(void) {
    const char *why = NULL;
    if (!ts_nvcc_available(&why)) ts_skip("%s", why);
}

/* Compiled once per process; a compiler that is there but fails is a failure. */
static const blob *cubin_of(blob *b, const char *src, const char *name, int arch, const char *option) {
    require_nvrtc();
    if (!b->tried) {
        b->tried = 1;
        const char *opts[1] = {option};
        b->data = ts_compile_cubin_opts(src, name, arch, opts, option ? 1 : 0, &b->size);
    }
    if (!b->data) fail_msg("NVRTC could not compile %s", name);
    return b;
}

static const blob *main_cubin(void) { return cubin_of(&K.cubin, kSource, "module.cu", device_arch(), NULL); }
static const blob *regs_cubin(void) { return cubin_of(&K.regs, kRegsSource, "regs.cu", device_arch(), NULL); }
static const blob *regs32_cubin(void) {
    return cubin_of(&K.regs32, kRegsSource, "regs32.cu", device_arch(), "-maxrregcount=32");
}
static const blob *regs64_cubin(void) {
    return cubin_of(&K.regs64, kRegsSource, "regs64.cu", device_arch(), "-maxrregcount=64");
}

static const char *main_ptx(void) {
    require_nvrtc();
    if (!K.ptx.tried) {
        K.ptx.tried = 1;
        K.ptx.data = ts_compile_ptx(kSource, "module.cu", device_arch(), &K.ptx.size);
    }
    if (!K.ptx.data) fail_msg("NVRTC could not compile module.cu to PTX");
    return K.ptx.data;
}

static const blob *fatbin_of(blob *b, const char *gencode, int compress) {
    require_nvcc();
    if (!b->tried) {
        b->tried = 1;
        const char *gencodes[1] = {gencode};
        const char *extra[1] = {"-compress-mode=size"};
        b->data = ts_compile_fatbin(kSource, gencodes, 1, extra, compress ? 1 : 0, &b->size);
    }
    if (!b->data) fail_msg("nvcc -fatbin -gencode %s failed", gencode);
    return b;
}

static const blob *fatbin_sass(void) {
    char g[64];
    snprintf(g, sizeof g, "arch=compute_%d,code=sm_%d", device_arch(), device_arch());
    return fatbin_of(&K.fatbin_sass, g, 0);
}

/* PTX only, zstd-compressed (what nvcc 13 does to PTX; -compress-mode=size to be sure). */
static const blob *fatbin_ptx(void) {
    char g[64];
    snprintf(g, sizeof g, "arch=compute_%d,code=compute_%d", device_arch(), device_arch());
    const blob *b = fatbin_of(&K.fatbin_ptx, g, 1);
    /* The test means a compressed entry: the zstd frame magic 28 b5 2f fd. */
    static const unsigned char zstd[4] = {0x28, 0xb5, 0x2f, 0xfd};
    int found = 0;
    for (size_t i = 0; i + 4 <= b->size && !found; ++i) found = memcmp((const char *)b->data + i, zstd, 4) == 0;
    if (!found) fail_msg("nvcc's PTX-only fatbin holds no zstd frame: the test would not test decompression");
    return b;
}

/* ------------------------------------------------------------------ helpers */

static CUmodule load_cubin(const blob *b) {
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoadData(&m, b->data));
    assert_non_null(m);
    return m;
}

static int fattr(CUfunction f, CUfunction_attribute a) {
    int v = -12345;
    assert_cu_ok(cuFuncGetAttribute(&v, a, f));
    return v;
}

static int dattr(CUdevice_attribute a) {
    int v = 0;
    assert_cu_ok(cuDeviceGetAttribute(&v, a, 0));
    return v;
}

/* The module has the kernels and globals of kSource, with their initial values. */
static void check_main_module(CUmodule m) {
    static const char *const names[] = {"k_simple", "k_tiny", "k_shared2k", "k_local", "k_bounded", "k_dyn"};
    for (size_t i = 0; i < TS_ARRAY_SIZE(names); ++i) {
        CUfunction f = ts_get_function(m, names[i]);
        const char *name = NULL;
        assert_cu_ok(cuFuncGetName(&name, f));
        assert_string_equal(name, names[i]);
    }
    CUdeviceptr p = 0;
    size_t n = 0;
    assert_cu_ok(cuModuleGetGlobal(&p, &n, m, "g_dev"));
    assert_int_equal(n, 256 * sizeof(int));
    int v[8];
    assert_cu_ok(cuMemcpyDtoH(v, p, sizeof v));
    for (int i = 0; i < 8; ++i) assert_int_equal(v[i], i + 1);
}

/* ------------------------------------------------------------------ loading */

static void test_load_cubin(void **state) {
    (void)state;
    const blob *b = main_cubin();
    CUmodule m = load_cubin(b);
    check_main_module(m);
    CUfunction f = ts_get_function(m, "k_simple");
    assert_int_equal(fattr(f, CU_FUNC_ATTRIBUTE_BINARY_VERSION), device_arch());
    assert_int_equal(fattr(f, CU_FUNC_ATTRIBUTE_PTX_VERSION), device_arch());
    /* The same image twice: two independent modules. */
    CUmodule m2 = load_cubin(b);
    assert_ptr_not_equal(m, m2);
    CUdeviceptr a = 0, a2 = 0;
    assert_cu_ok(cuModuleGetGlobal(&a, NULL, m, "g_scalar"));
    assert_cu_ok(cuModuleGetGlobal(&a2, NULL, m2, "g_scalar"));
    assert_true(a != a2);
    const unsigned long long x = 42;
    assert_cu_ok(cuMemcpyHtoD(a, &x, sizeof x));
    unsigned long long y = 0;
    assert_cu_ok(cuMemcpyDtoH(&y, a2, sizeof y));
    assert_true(y == 0x1122334455667788ull);
    assert_cu_ok(cuModuleUnload(m2));
    assert_cu_ok(cuModuleUnload(m));
}

static void test_load_ptx_jit(void **state) {
    (void)state;
    const char *ptx = main_ptx();
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoadData(&m, ptx));
    check_main_module(m);
    CUfunction f = ts_get_function(m, "k_simple");
    assert_int_equal(fattr(f, CU_FUNC_ATTRIBUTE_BINARY_VERSION), device_arch());
    assert_int_equal(fattr(f, CU_FUNC_ATTRIBUTE_PTX_VERSION), device_arch());
    assert_true(fattr(f, CU_FUNC_ATTRIBUTE_NUM_REGS) > 0);
    assert_cu_ok(cuModuleUnload(m));

    /* cuModuleLoadDataEx with an info log, CU_JIT_MAX_REGISTERS and the wall time. */
    char info[8192];
    memset(info, 0x7f, sizeof info);
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE,
                           CU_JIT_MAX_REGISTERS, CU_JIT_WALL_TIME};
    /* CU_JIT_WALL_TIME comes back as a float in the option's value slot: start
     * it at -1 so that a value never written shows. */
    const float unset = -1.0f;
    void *vals[] = {info, (void *)(uintptr_t)sizeof info, (void *)(uintptr_t)1, (void *)(uintptr_t)32, NULL};
    memcpy(&vals[4], &unset, sizeof unset);
    m = NULL;
    assert_cu_ok(cuModuleLoadDataEx(&m, ptx, TS_ARRAY_SIZE(opts), opts, vals));
    const size_t written = (size_t)(uintptr_t)vals[1];
    assert_true(memchr(info, 0, sizeof info) != NULL);
    assert_true(written <= sizeof info);
    print_message("JIT info log (%zu bytes): %.200s\n", written, info);
    if (written > 0) assert_true(strlen(info) + 1 >= written && strlen(info) <= written);
    assert_true(fattr(ts_get_function(m, "k_simple"), CU_FUNC_ATTRIBUTE_NUM_REGS) <= 32);
    float wall;
    memcpy(&wall, &vals[4], sizeof wall);
    if (!(wall > 0.0f)) fail_msg("CU_JIT_WALL_TIME: %g ms", (double)wall);
    assert_cu_ok(cuModuleUnload(m));
}

/* A register-hungry kernel as PTX, JIT-compiled with a register limit. */
static void test_load_ptx_max_registers(void **state) {
    (void)state;
    require_nvrtc();
    size_t n = 0;
    char *ptx = ts_compile_ptx(kRegsSource, "regs.cu", device_arch(), &n);
    if (!ptx) fail_msg("NVRTC could not compile regs.cu to PTX");
    CUjit_option opts[] = {CU_JIT_MAX_REGISTERS};
    void *vals[] = {(void *)(uintptr_t)40};
    CUmodule m = NULL;
    CUresult r = cuModuleLoadDataEx(&m, ptx, 1, opts, vals);
    if (r == CUDA_SUCCESS) {
        const int regs = fattr(ts_get_function(m, "k_regs"), CU_FUNC_ATTRIBUTE_NUM_REGS);
        if (regs > 40) fail_msg("CU_JIT_MAX_REGISTERS 40: k_regs uses %d registers", regs);
        assert_cu_ok(cuModuleUnload(m));
    }
    CUmodule m2 = NULL;
    CUresult r2 = cuModuleLoadData(&m2, ptx);
    free(ptx);
    assert_cu_ok(r);
    assert_cu_ok(r2);
    assert_true(fattr(ts_get_function(m2, "k_regs"), CU_FUNC_ATTRIBUTE_NUM_REGS) > 40);
    assert_cu_ok(cuModuleUnload(m2));
}

/* The PTX with one instruction misspelled. */
static char *broken_ptx(void) {
    const char *ptx = main_ptx();
    size_t n = strlen(ptx);
    char *bad = malloc(n + 64);
    assert_non_null(bad);
    const char *ret = strstr(ptx, "ret;");
    assert_non_null(ret);
    size_t at = (size_t)(ret - ptx);
    memcpy(bad, ptx, at);
    strcpy(bad + at, "retx_not_an_instruction;");
    strcat(bad, ret + 4);
    return bad;
}

static void test_load_ptx_syntax_error_logs(void **state) {
    (void)state;
    char *bad = broken_ptx();
    char err[4096], info[4096];
    memset(err, 0x7f, sizeof err);
    memset(info, 0x7f, sizeof info);
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {err, (void *)(uintptr_t)sizeof err, info, (void *)(uintptr_t)sizeof info};
    CUmodule m = (CUmodule)(uintptr_t)0x1;
    assert_cu(CUDA_ERROR_INVALID_PTX, cuModuleLoadDataEx(&m, bad, TS_ARRAY_SIZE(opts), opts, vals));
    /* The error log: non-empty, NUL-terminated, its size written back. */
    const char *nul = memchr(err, 0, sizeof err);
    assert_non_null(nul);
    const size_t len = (size_t)(nul - err);
    print_message("JIT error log: %s\n", err);
    assert_true(len > 0);
    assert_non_null(strstr(err, "error"));
    const size_t written = (size_t)(uintptr_t)vals[1];
    if (written != len && written != len + 1)
        fail_msg("error log of %zu characters, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES became %zu", len, written);
    /* The info log is NUL-terminated too (maybe empty). */
    assert_non_null(memchr(info, 0, sizeof info));
    assert_true((size_t)(uintptr_t)vals[3] <= sizeof info);

    /* A small error buffer: truncated, NUL-terminated, nothing written past it. */
    char small[24 + 8];
    memset(small, 0x7f, sizeof small);
    CUjit_option o2[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *v2[] = {small, (void *)(uintptr_t)24};
    assert_cu(CUDA_ERROR_INVALID_PTX, cuModuleLoadDataEx(&m, bad, 2, o2, v2));
    assert_non_null(memchr(small, 0, 24));
    assert_true(strlen(small) <= 23);
    assert_memory_equal(small, err, strlen(small)); /* a prefix of the same log */
    for (size_t i = 24; i < sizeof small; ++i) assert_int_equal((unsigned char)small[i], 0x7f);
    assert_true((size_t)(uintptr_t)v2[1] <= 24);

    /* Without options: the same code. */
    assert_cu(CUDA_ERROR_INVALID_PTX, cuModuleLoadData(&m, bad));
    free(bad);
}

static void test_load_ex_bad_options(void **state) {
    (void)state;
    const blob *b = main_cubin();
    CUmodule m = NULL;
    CUjit_option bad[] = {(CUjit_option)9999};
    void *vals[] = {NULL};
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleLoadDataEx(&m, b->data, 1, bad, vals));
    CUjit_option opts[] = {CU_JIT_MAX_REGISTERS};
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleLoadDataEx(&m, b->data, 1, opts, NULL));
    /* No options at all, arrays or not. */
    assert_cu_ok(cuModuleLoadDataEx(&m, b->data, 0, NULL, NULL));
    assert_cu_ok(cuModuleUnload(m));
}

static void test_load_files(void **state) {
    (void)state;
    const blob *cubin = main_cubin();
    const char *ptx = main_ptx();
    char *cubin_path = ts_temp_write("module.cubin", cubin->data, cubin->size);
    char *ptx_path = ts_temp_write("module.ptx", ptx, strlen(ptx));
    assert_non_null(cubin_path);
    assert_non_null(ptx_path);
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoad(&m, cubin_path));
    check_main_module(m);
    assert_cu_ok(cuModuleUnload(m));
    assert_cu_ok(cuModuleLoad(&m, ptx_path));
    check_main_module(m);
    assert_cu_ok(cuModuleUnload(m));
    free(cubin_path);
    free(ptx_path);

    const char *why = NULL;
    if (ts_nvcc_available(&why)) {
        const blob *fb = fatbin_sass();
        char *fb_path = ts_temp_write("module.fatbin", fb->data, fb->size);
        assert_cu_ok(cuModuleLoad(&m, fb_path));
        check_main_module(m);
        assert_cu_ok(cuModuleUnload(m));
        free(fb_path);
        const blob *fp = fatbin_ptx();
        char *fp_path = ts_temp_write("module_ptx.fatbin", fp->data, fp->size);
        assert_cu_ok(cuModuleLoad(&m, fp_path));
        check_main_module(m);
        assert_cu_ok(cuModuleUnload(m));
        free(fp_path);
    } else {
        print_message("fatbin files not tested: %s\n", why);
    }

    /* Missing file, a directory, NULL. */
    m = NULL;
    assert_cu(CUDA_ERROR_FILE_NOT_FOUND, cuModuleLoad(&m, "/nonexistent/nvlite/module.cubin"));
    char missing[512];
    snprintf(missing, sizeof missing, "%s/not-there.cubin", ts_temp_dir());
    assert_cu(CUDA_ERROR_FILE_NOT_FOUND, cuModuleLoad(&m, missing));
    assert_null(m);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleLoad(&m, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleLoad(NULL, "/nonexistent/nvlite/module.cubin"));
}

static void test_load_fatbin(void **state) {
    (void)state;
    const blob *fb = fatbin_sass();
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoadFatBinary(&m, fb->data));
    check_main_module(m);
    assert_int_equal(fattr(ts_get_function(m, "k_simple"), CU_FUNC_ATTRIBUTE_BINARY_VERSION), device_arch());
    assert_cu_ok(cuModuleUnload(m));
    /* cuModuleLoadData takes a fatbin too. */
    assert_cu_ok(cuModuleLoadData(&m, fb->data));
    check_main_module(m);
    assert_cu_ok(cuModuleUnload(m));

    /* PTX only, compressed: decompressed and JIT-compiled. */
    const blob *fp = fatbin_ptx();
    assert_cu_ok(cuModuleLoadFatBinary(&m, fp->data));
    check_main_module(m);
    assert_int_equal(fattr(ts_get_function(m, "k_simple"), CU_FUNC_ATTRIBUTE_BINARY_VERSION), device_arch());
    assert_cu_ok(cuModuleUnload(m));

    /* (libcuda refuses the __fatBinC_Wrapper_t that nvcc emits for the
     * runtime with CUDA_ERROR_INVALID_IMAGE; nvlite accepts it: not tested.) */

    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleLoadFatBinary(&m, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleLoadFatBinary(NULL, fb->data));
}

/* Code for another GPU: sm_80 SASS does not run on sm_90. */
static void test_load_wrong_architecture(void **state) {
    (void)state;
    if (device_arch() / 10 == 8) ts_skip("the device is sm_8x");
    const blob *b = cubin_of(&K.sm80, kSource, "sm80.cu", 80, NULL);
    CUmodule m = NULL;
    assert_cu(CUDA_ERROR_NO_BINARY_FOR_GPU, cuModuleLoadData(&m, b->data));
    const char *why = NULL;
    if (ts_nvcc_available(&why)) {
        const blob *fb = fatbin_of(&K.fatbin_sm80, "arch=compute_80,code=sm_80", 0);
        assert_cu(CUDA_ERROR_NO_BINARY_FOR_GPU, cuModuleLoadFatBinary(&m, fb->data));
        assert_cu(CUDA_ERROR_NO_BINARY_FOR_GPU, cuModuleLoadData(&m, fb->data));
    }
}

static void test_load_bad_arguments(void **state) {
    (void)state;
    const blob *b = main_cubin();
    CUmodule m = NULL;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleLoadData(&m, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleLoadData(NULL, b->data));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleLoadDataEx(NULL, b->data, 0, NULL, NULL));
    /* No current context. */
    CUcontext ctx = NULL;
    assert_cu_ok(cuCtxPopCurrent(&ctx));
    CUresult r = cuModuleLoadData(&m, b->data);
    assert_cu_ok(cuCtxPushCurrent(ctx));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, r);
}

/* ------------------------------------------------------------------ corrupt images */

/* Loads 'n' bytes from a file: the size is known, so nothing can be read
 * past the data (cuModuleLoadData takes a bare pointer and trusts the
 * image's own sizes). */
static CUresult load_bytes_as_file(const void *data, size_t n) {
    char *path = ts_temp_write("corrupt.bin", data, n);
    assert_non_null(path);
    CUmodule m = NULL;
    CUresult r = cuModuleLoad(&m, path);
    free(path);
    if (r == CUDA_SUCCESS) assert_cu_ok(cuModuleUnload(m));
    return r;
}

static void check_truncations(const void *image, size_t size, const char *what) {
    size_t lengths[200];
    size_t count = 0;
    const size_t fixed[] = {4, 5, 8, 15, 16, 17, 52, 63, 64, 65, 80, 100, 128, 200, 256};
    for (size_t i = 0; i < TS_ARRAY_SIZE(fixed); ++i)
        if (fixed[i] < size) lengths[count++] = fixed[i];
    for (size_t k = 1; k < 64 && count < 190; ++k) lengths[count++] = size * k / 64;
    lengths[count++] = size - 1;
    for (size_t i = 0; i < count; ++i) {
        if (lengths[i] < 4 || lengths[i] >= size) continue;
        CUresult r = load_bytes_as_file(image, lengths[i]);
        if (r != CUDA_ERROR_INVALID_IMAGE)
            fail_msg("%s truncated to %zu of %zu bytes: %s, expected CUDA_ERROR_INVALID_IMAGE", what, lengths[i],
                     size, ts_cu_name(r));
    }
}

static void test_corrupt_truncated(void **state) {
    (void)state;
    const blob *b = main_cubin();
    check_truncations(b->data, b->size, "cubin");
    /* An empty file. */
    assert_cu(CUDA_ERROR_INVALID_IMAGE, load_bytes_as_file("", 0));
    const char *why = NULL;
    if (ts_nvcc_available(&why)) {
        const blob *fb = fatbin_sass();
        check_truncations(fb->data, fb->size, "fatbin (SASS)");
        const blob *fp = fatbin_ptx();
        check_truncations(fp->data, fp->size, "fatbin (compressed PTX)");
    } else {
        print_message("fatbins not tested: %s\n", why);
    }
}

static void test_corrupt_truncated_ptx(void **state) {
    (void)state;
    const char *ptx = main_ptx();
    const size_t n = strlen(ptx);
    const size_t cuts[] = {n / 3, n / 2, n - 3};
    for (size_t i = 0; i < TS_ARRAY_SIZE(cuts); ++i) {
        char *p = malloc(cuts[i] + 1);
        memcpy(p, ptx, cuts[i]);
        p[cuts[i]] = 0;
        CUmodule m = NULL;
        CUresult r = cuModuleLoadData(&m, p);
        free(p);
        if (r != CUDA_ERROR_INVALID_PTX)
            fail_msg("PTX cut at %zu of %zu bytes: %s, expected CUDA_ERROR_INVALID_PTX", cuts[i], n, ts_cu_name(r));
    }
}

static void test_corrupt_garbage(void **state) {
    (void)state;
    const size_t n = 64 * TS_KiB;
    unsigned char *g = ts_malloc(n + 1);
    /* Random bytes: neither ELF, fatbin nor text. In memory (NUL-ended). */
    for (uint64_t seed = 1; seed <= 8; ++seed) {
        ts_fill_random(g, n, seed);
        g[0] |= 0x80; /* not a magic number */
        g[n] = 0;
        CUmodule m = NULL;
        assert_cu(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&m, g));
        assert_cu(CUDA_ERROR_INVALID_IMAGE, load_bytes_as_file(g, n));
    }
    /* A magic number and garbage after it (from a file: the size is known). */
    static const unsigned char elf[] = {0x7f, 'E', 'L', 'F'};
    static const unsigned char fatbin[] = {0x50, 0xed, 0x55, 0xba};
    for (uint64_t seed = 11; seed <= 42; ++seed) {
        ts_fill_random(g, n, seed);
        memcpy(g, seed & 1 ? elf : fatbin, 4);
        CUresult r = load_bytes_as_file(g, (size_t)(seed * 997) % n + 16);
        if (r != CUDA_ERROR_INVALID_IMAGE)
            fail_msg("%s magic + garbage (seed %llu): %s", seed & 1 ? "ELF" : "fatbin", (unsigned long long)seed,
                     ts_cu_name(r));
    }
    /* The cubin's ELF header with garbage after it. */
    const blob *b = main_cubin();
    for (uint64_t seed = 50; seed < 58; ++seed) {
        ts_fill_random(g, b->size, seed);
        memcpy(g, b->data, 64);
        assert_cu(CUDA_ERROR_INVALID_IMAGE, load_bytes_as_file(g, b->size));
    }
    ts_free(g);
}

/* Text that is not PTX is not an image (libcuda: INVALID_IMAGE; PTX with an
 * error in it is INVALID_PTX), nor are the first bytes of an ELF magic. */
static void test_corrupt_text_not_ptx(void **state) {
    (void)state;
    CUmodule m = NULL;
    assert_cu(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&m, "hello, this is not PTX\n"));
    assert_cu(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&m, ""));
    assert_cu(CUDA_ERROR_INVALID_IMAGE, load_bytes_as_file("\x7f" "EL", 3));
    assert_cu(CUDA_ERROR_INVALID_IMAGE, load_bytes_as_file("hello, this is not PTX\n", 23));
}

typedef struct {
    uint32_t sh_name, sh_type;
    uint64_t sh_flags, sh_addr, sh_offset, sh_size;
    uint32_t sh_link, sh_info;
    uint64_t sh_addralign, sh_entsize;
} shdr64;

/* Flips bits in every field of every section header. A cubin has no
 * checksum: many flips leave an image a loader cannot tell from a good one
 * (a flag, an address, an alignment, a code offset inside the file), and
 * libcuda accepts those too. None may crash; each result is SUCCESS,
 * INVALID_IMAGE or (a huge zero-filled section) OUT_OF_MEMORY. Flips that
 * break the structure must be INVALID_IMAGE: a section with file data moved
 * or grown past the end of the file, a section name past the end of the
 * name table, and the type or link of the string and symbol tables every
 * lookup goes through. */
static void test_corrupt_section_header_bit_flips(void **state) {
    (void)state;
    const blob *b = main_cubin();
    const unsigned char *img = b->data;
    uint64_t shoff;
    uint16_t shnum, shentsize, shstrndx;
    memcpy(&shoff, img + 0x28, 8);
    memcpy(&shentsize, img + 0x3a, 2);
    memcpy(&shnum, img + 0x3c, 2);
    memcpy(&shstrndx, img + 0x3e, 2);
    assert_int_equal(shentsize, sizeof(shdr64));
    assert_true(shoff + (uint64_t)shnum * shentsize <= b->size);
    /* In memory with 1 MiB of zeros after the image: a flipped low bit of a
     * size or offset cannot make the loader read outside this buffer. */
    const size_t slack = TS_MiB;
    unsigned char *buf = ts_malloc(b->size + slack);
    /* Field offsets and widths inside a section header. */
    static const struct {
        size_t off, width;
        const char *name;
    } fields[] = {{0, 4, "sh_name"},   {4, 4, "sh_type"},   {8, 8, "sh_flags"},     {16, 8, "sh_addr"},
                  {24, 8, "sh_offset"}, {32, 8, "sh_size"},  {40, 4, "sh_link"},     {44, 4, "sh_info"},
                  {48, 8, "sh_addralign"}, {56, 8, "sh_entsize"}};
    static const unsigned bits[] = {0, 1, 2, 4, 7, 12, 19, 31, 40, 63};
    /* The symbol table and its string table. */
    uint16_t symtab = 0, strtab = 0;
    for (uint16_t s = 1; s < shnum; ++s) {
        shdr64 sh;
        memcpy(&sh, img + shoff + (uint64_t)s * shentsize, sizeof sh);
        if (sh.sh_type == 2 /* SHT_SYMTAB */) {
            symtab = s;
            strtab = (uint16_t)sh.sh_link;
        }
    }
    assert_true(symtab != 0 && strtab != 0);
    unsigned tried = 0, refused = 0, accepted = 0, oom = 0;
    for (uint16_t s = 1; s < shnum; ++s) {
        shdr64 sh;
        memcpy(&sh, img + shoff + (uint64_t)s * shentsize, sizeof sh);
        const int table = s == symtab || s == strtab || s == shstrndx;
        for (size_t f = 0; f < TS_ARRAY_SIZE(fields); ++f) {
            for (size_t k = 0; k < TS_ARRAY_SIZE(bits); ++k) {
                if (bits[k] >= fields[f].width * 8) continue;
                memcpy(buf, img, b->size);
                memset(buf + b->size, 0, slack);
                unsigned char *field = buf + shoff + (uint64_t)s * shentsize + fields[f].off;
                field[bits[k] / 8] ^= (unsigned char)(1u << (bits[k] % 8));
                CUresult r;
                CUmodule m = NULL;
                /* Offsets and sizes far out: only from a file (known size). */
                const int far = (fields[f].off == 24 || fields[f].off == 32) && bits[k] >= 19;
                if (far) {
                    r = load_bytes_as_file(buf, b->size);
                } else {
                    r = cuModuleLoadData(&m, buf);
                    if (r == CUDA_SUCCESS) assert_cu_ok(cuModuleUnload(m));
                }
                ++tried;
                if (r == CUDA_SUCCESS)
                    ++accepted;
                else if (r == CUDA_ERROR_INVALID_IMAGE)
                    ++refused;
                else if (r == CUDA_ERROR_OUT_OF_MEMORY && fields[f].off == 32 && sh.sh_type == 8 /* SHT_NOBITS */)
                    ++oom;
                else
                    fail_msg("section %u, %s bit %u flipped: %s", s, fields[f].name, bits[k], ts_cu_name(r));
                int must_refuse = 0;
                /* A section with file data moved or grown past the end of the file. */
                if (far && sh.sh_type != 8 && sh.sh_size > 0) must_refuse = 1;
                /* A name offset far past the end of the section name table. */
                if (fields[f].off == 0 && bits[k] >= 19) must_refuse = 1;
                /* The string and symbol tables' type; the symbol table's link. */
                if (table && fields[f].off == 4) must_refuse = 1;
                if (s == symtab && fields[f].off == 40) must_refuse = 1;
                if (must_refuse && r != CUDA_ERROR_INVALID_IMAGE)
                    fail_msg("section %u, %s bit %u flipped: %s, expected CUDA_ERROR_INVALID_IMAGE", s,
                             fields[f].name, bits[k], ts_cu_name(r));
            }
        }
    }
    print_message("%u section-header bit flips: %u refused, %u accepted, %u out of memory\n", tried, refused,
                  accepted, oom);
    /* The ELF header's section table fields, from a file. */
    memcpy(buf, img, b->size);
    buf[0x3e] ^= 0x40; /* e_shstrndx past the table */
    assert_cu(CUDA_ERROR_INVALID_IMAGE, load_bytes_as_file(buf, b->size));
    memcpy(buf, img, b->size);
    buf[0x2d] ^= 0x10; /* e_shoff far out */
    assert_cu(CUDA_ERROR_INVALID_IMAGE, load_bytes_as_file(buf, b->size));
    memcpy(buf, img, b->size);
    buf[0x3a] ^= 0x01; /* e_shentsize 65 */
    assert_cu(CUDA_ERROR_INVALID_IMAGE, load_bytes_as_file(buf, b->size));
    memcpy(buf, img, b->size);
    buf[0x3c] ^= 0x80; /* e_shnum + 128: the table runs past the end */
    assert_cu(CUDA_ERROR_INVALID_IMAGE, load_bytes_as_file(buf, b->size));
    ts_free(buf);
    /* The untouched image still loads. */
    CUmodule m = load_cubin(b);
    assert_cu_ok(cuModuleUnload(m));
}

/* ------------------------------------------------------------------ functions, globals, unload */

static void test_get_function(void **state) {
    (void)state;
    CUmodule m = load_cubin(main_cubin());
    CUfunction f = (CUfunction)(uintptr_t)0x1;
    assert_cu(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, m, "no_such_kernel"));
    assert_cu(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, m, "k_simpl"));
    assert_cu(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, m, "k_simplex"));
    /* A variable is not a function. */
    assert_cu(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, m, "g_dev"));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleGetFunction(NULL, m, "k_simple"));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleGetFunction(&f, m, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleGetFunction(&f, NULL, "k_simple"));
    int not_a_module = 0;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleGetFunction(&f, (CUmodule)&not_a_module, "k_simple"));
    /* The same function twice: the same handle. */
    CUfunction a = ts_get_function(m, "k_simple"), b = ts_get_function(m, "k_simple");
    assert_ptr_equal(a, b);
    assert_ptr_not_equal(a, ts_get_function(m, "k_tiny"));
    /* An empty name is invalid (libcuda). */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleGetFunction(&f, m, ""));
    assert_cu_ok(cuModuleUnload(m));
}

static void test_get_global(void **state) {
    (void)state;
    CUmodule m = load_cubin(main_cubin());
    /* __device__ with an initialiser. */
    CUdeviceptr p = 0;
    size_t n = 0;
    assert_cu_ok(cuModuleGetGlobal(&p, &n, m, "g_dev"));
    assert_int_equal(n, 1024);
    assert_true(p != 0);
    int dev[256];
    assert_cu_ok(cuMemcpyDtoH(dev, p, sizeof dev));
    for (int i = 0; i < 256; ++i) assert_int_equal(dev[i], i < 8 ? i + 1 : 0);
    for (int i = 0; i < 256; ++i) dev[i] = i * 3 - 100;
    assert_cu_ok(cuMemcpyHtoD(p, dev, sizeof dev));
    int back[256];
    assert_cu_ok(cuMemcpyDtoH(back, p, sizeof back));
    assert_memory_equal(dev, back, sizeof dev);
    /* Without an initialiser: zeros. */
    CUdeviceptr z = 0;
    assert_cu_ok(cuModuleGetGlobal(&z, &n, m, "g_zero"));
    assert_int_equal(n, 8000);
    unsigned char *zeros = ts_malloc(8000);
    memset(zeros, 0xee, 8000);
    assert_cu_ok(cuMemcpyDtoH(zeros, z, 8000));
    assert_bytes_all(zeros, 0, 8000);
    /* A 64-bit scalar, its address 8-byte aligned. */
    CUdeviceptr s = 0;
    assert_cu_ok(cuModuleGetGlobal(&s, &n, m, "g_scalar"));
    assert_int_equal(n, 8);
    assert_int_equal(s % 8, 0);
    unsigned long long sv = 0;
    assert_cu_ok(cuMemcpyDtoH(&sv, s, 8));
    assert_true(sv == 0x1122334455667788ull);
    /* __constant__: readable and writable through the same calls. */
    CUdeviceptr c = 0;
    assert_cu_ok(cuModuleGetGlobal(&c, &n, m, "c_vals"));
    assert_int_equal(n, 32 * sizeof(float));
    float cv[32];
    assert_cu_ok(cuMemcpyDtoH(cv, c, sizeof cv));
    for (int i = 0; i < 32; ++i) assert_true(cv[i] == (i < 4 ? 0.5f + (float)i : 0.0f));
    for (int i = 0; i < 32; ++i) cv[i] = (float)i * 0.25f;
    assert_cu_ok(cuMemcpyHtoD(c, cv, sizeof cv));
    float cb[32];
    assert_cu_ok(cuMemcpyDtoH(cb, c, sizeof cb));
    assert_memory_equal(cv, cb, sizeof cv);
    /* Globals do not overlap. */
    const CUdeviceptr starts[] = {p, z, s, c};
    const size_t sizes[] = {1024, 8000, 8, 128};
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
            if (i != j) assert_true(starts[i] + sizes[i] <= starts[j] || starts[j] + sizes[j] <= starts[i]);
    /* NULL out-pointers are allowed. */
    CUdeviceptr only = 0;
    size_t only_n = 0;
    assert_cu_ok(cuModuleGetGlobal(&only, NULL, m, "g_dev"));
    assert_true(only == p);
    assert_cu_ok(cuModuleGetGlobal(NULL, &only_n, m, "g_dev"));
    assert_int_equal(only_n, 1024);
    /* Missing names, bad arguments. */
    assert_cu(CUDA_ERROR_NOT_FOUND, cuModuleGetGlobal(&only, &only_n, m, "g_missing"));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleGetGlobal(&only, &only_n, m, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleGetGlobal(&only, &only_n, NULL, "g_dev"));
    /* Both out-pointers NULL is INVALID_VALUE, and so is the name of a
     * function (libcuda). */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleGetGlobal(NULL, NULL, m, "g_dev"));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleGetGlobal(&only, &only_n, m, "k_simple"));
    assert_cu_ok(cuModuleUnload(m));
    /* An unloaded module: libcuda 580 answered NOT_FOUND (its stale handle
     * still looks like a module), nvlite INVALID_HANDLE; either is fine. */
    assert_cu_either(CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_NOT_FOUND, cuModuleGetGlobal(&only, &only_n, m, "g_dev"));
}

static void test_unload(void **state) {
    (void)state;
    CUmodule m = load_cubin(main_cubin());
    CUfunction f = ts_get_function(m, "k_simple");
    assert_cu_ok(cuModuleUnload(m));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleUnload(m));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleUnload(NULL));
    CUfunction g = NULL;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleGetFunction(&g, m, "k_simple"));
    /* Functions of the unloaded module. */
    int v = 0;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1));
    const char *name = NULL;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetName(&name, f));
    int blocks = 0;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, 0));
    void *params[] = {NULL, NULL, NULL};
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));

    /* Load and unload many times: memory comes back. */
    size_t free0 = 0, free1 = 0, total = 0;
    assert_cu_ok(cuMemGetInfo(&free0, &total));
    for (int i = 0; i < 200; ++i) {
        CUmodule k = load_cubin(main_cubin());
        assert_cu_ok(cuModuleUnload(k));
    }
    assert_cu_ok(cuMemGetInfo(&free1, &total));
    if (free1 + 4 * TS_MiB < free0) fail_msg("200 load/unload cycles lost %zu bytes", free0 - free1);
}

/* A module's handles die with its context. */
static void test_unload_after_context_destroyed(void **state) {
    ts_fixture *fx = ts_fx(state);
    CUcontext other = NULL;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev));
    CUmodule m = load_cubin(main_cubin());
    CUfunction f = ts_get_function(m, "k_tiny");
    assert_cu_ok(cuCtxDestroy(other)); /* pops it: fx->ctx is current again */
    CUcontext cur = NULL;
    assert_cu_ok(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, fx->ctx);
    int v = 0;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    /* libcuda 580 answered CONTEXT_IS_DESTROYED in one run and INVALID_HANDLE
     * in another (module_probe) for the same sequence. */
    assert_cu_either(CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_CONTEXT_IS_DESTROYED, cuModuleUnload(m));
}

/* A handle of one kind passed as another, or a context as a module: one of
 * ours, but not what the call takes. */
static void test_handles_of_the_wrong_kind(void **state) {
    ts_fixture *fx = ts_fx(state);
    CUmodule m = load_cubin(main_cubin());
    CUfunction f = ts_get_function(m, "k_tiny");
    int v = 0;
    const char *name = NULL;
    CUfunction g = NULL;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, (CUfunction)m));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetName(&name, (CUfunction)m));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel((CUfunction)m, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleUnload((CUmodule)f));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleGetFunction(&g, (CUmodule)f, "k_tiny"));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuModuleGetFunction(&g, (CUmodule)fx->ctx, "k_tiny"));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLinkDestroy((CUlinkState)m));
    /* Both still work as what they are. */
    assert_cu_ok(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    assert_cu_ok(cuModuleUnload(m));
}

/* A module lives in the primary context's activation it was loaded in:
 * after the last release and a new retain, its handles are dead. */
static void test_module_dies_with_primary_release(void **state) {
    ts_fixture *fx = ts_fx(state);
    unsigned flags = 0;
    int active = 1;
    assert_cu_ok(cuDevicePrimaryCtxGetState(fx->dev, &flags, &active));
    if (active) ts_skip("the primary context is already in use in this process");
    CUcontext primary = NULL;
    assert_cu_ok(cuDevicePrimaryCtxRetain(&primary, fx->dev));
    assert_cu_ok(cuCtxPushCurrent(primary));
    CUmodule m = load_cubin(main_cubin());
    CUfunction f = ts_get_function(m, "k_tiny");
    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, primary);
    assert_cu_ok(cuDevicePrimaryCtxRelease(fx->dev));

    assert_cu_ok(cuDevicePrimaryCtxRetain(&primary, fx->dev));
    assert_cu_ok(cuCtxPushCurrent(primary));
    int v = 0;
    CUfunction g = NULL;
    const CUresult attr = cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    const CUresult get = cuModuleGetFunction(&g, m, "k_tiny");
    const CUresult launch = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    const CUresult unload = cuModuleUnload(m);
    /* The new activation works. */
    CUmodule again = load_cubin(main_cubin());
    check_main_module(again);
    assert_cu_ok(cuModuleUnload(again));
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_cu_ok(cuDevicePrimaryCtxRelease(fx->dev));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, attr);
    assert_cu(CUDA_ERROR_INVALID_HANDLE, get);
    assert_cu(CUDA_ERROR_INVALID_HANDLE, launch);
    assert_cu(CUDA_ERROR_INVALID_HANDLE, unload);
}

/* A module's variables are its own: cuMemFree refuses them (at their start
 * and inside), and they stay usable. */
static void test_globals_are_not_allocations(void **state) {
    (void)state;
    CUmodule m = load_cubin(main_cubin());
    CUdeviceptr p = 0, base = 0;
    size_t n = 0, size = 0;
    assert_cu_ok(cuModuleGetGlobal(&p, &n, m, "g_dev"));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(p));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuMemFree(p + 4));
    /* Its range is the variable's (libcuda). */
    assert_cu_ok(cuMemGetAddressRange(&base, &size, p + 8));
    assert_true(base == p);
    assert_int_equal(size, n);
    int v[4] = {0};
    assert_cu_ok(cuMemcpyDtoH(v, p, sizeof v));
    for (int i = 0; i < 4; ++i) assert_int_equal(v[i], i + 1);
    assert_cu_ok(cuModuleUnload(m));
    /* Gone with the module. */
    assert_cu(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, p));
}

/* ------------------------------------------------------------------ threads */

#define MODULE_THREADS 4
#define MODULE_ROUNDS 25

typedef struct {
    CUcontext ctx;
    const void *cubin;
    CUdeviceptr out;
    CUmodule shared;        /* unloaded by one thread while others use it */
    CUresult first_error;   /* the first unexpected result, if any */
    const char *what;
} module_race;

static void race_note(module_race *r, CUresult got, const char *what) {
    if (got != CUDA_SUCCESS && r->first_error == CUDA_SUCCESS) {
        r->first_error = got;
        r->what = what;
    }
}

/* Loads, looks up, launches and unloads its own modules, and uses the shared
 * one, which may vanish under it: then only INVALID_HANDLE is acceptable. */
static void *module_worker(void *arg) {
    module_race *r = arg;
    if (cuCtxSetCurrent(r->ctx) != CUDA_SUCCESS) {
        race_note(r, CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent");
        return NULL;
    }
    for (int i = 0; i < MODULE_ROUNDS; ++i) {
        CUmodule m = NULL;
        CUfunction f = NULL;
        race_note(r, cuModuleLoadData(&m, r->cubin), "cuModuleLoadData");
        if (!m) break;
        race_note(r, cuModuleGetFunction(&f, m, "k_tiny"), "cuModuleGetFunction");
        void *params[] = {&r->out};
        if (f) race_note(r, cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL), "cuLaunchKernel");
        race_note(r, cuModuleUnload(m), "cuModuleUnload");
        CUfunction g = NULL;
        CUresult s = cuModuleGetFunction(&g, r->shared, "k_tiny");
        if (s == CUDA_SUCCESS) s = cuLaunchKernel(g, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
        if (s != CUDA_SUCCESS && s != CUDA_ERROR_INVALID_HANDLE) race_note(r, s, "the shared module");
    }
    return NULL;
}

static void test_modules_from_several_threads(void **state) {
    ts_fixture *fx = ts_fx(state);
    module_race race[MODULE_THREADS];
    pthread_t threads[MODULE_THREADS];
    CUdeviceptr out = 0;
    assert_cu_ok(cuMemAlloc(&out, 4096));
    CUmodule shared = load_cubin(main_cubin());
    for (int t = 0; t < MODULE_THREADS; ++t) {
        race[t] = (module_race){fx->ctx, main_cubin()->data, out, shared, CUDA_SUCCESS, NULL};
        assert_int_equal(pthread_create(&threads[t], NULL, module_worker, &race[t]), 0);
    }
    assert_cu_ok(cuModuleUnload(shared)); /* while the workers run */
    for (int t = 0; t < MODULE_THREADS; ++t) assert_int_equal(pthread_join(threads[t], NULL), 0);
    for (int t = 0; t < MODULE_THREADS; ++t)
        if (race[t].first_error != CUDA_SUCCESS)
            fail_msg("thread %d: %s returned %s", t, race[t].what, ts_cu_name(race[t].first_error));
    assert_cu_ok(cuCtxSynchronize());
    assert_cu_ok(cuMemFree(out));
}

/* ------------------------------------------------------------------ linking */

static void test_link(void **state) {
    (void)state;
    const char *ptx = main_ptx();
    CUlinkState link = NULL;
    assert_cu_ok(cuLinkCreate(0, NULL, NULL, &link));
    assert_non_null(link);
    assert_cu_ok(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, "module.ptx", 0, NULL, NULL));
    void *cubin = NULL;
    size_t size = 0;
    assert_cu_ok(cuLinkComplete(link, &cubin, &size));
    assert_non_null(cubin);
    assert_true(size > 64);
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoadData(&m, cubin));
    check_main_module(m);
    assert_cu_ok(cuModuleUnload(m));
    assert_cu_ok(cuLinkDestroy(link));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLinkDestroy(link));
}

/* A link state outlives the context it was made in (libcuda 580,
 * tests/compat/expected/libcuda_misuse.txt misuse-link): with no context
 * current it still links, and cuLinkDestroy succeeds. */
static void test_link_outlives_its_context(void **state) {
    (void)state;
    const char *ptx = main_ptx();
    CUcontext mine = NULL, other = NULL;
    assert_cu_ok(cuCtxGetCurrent(&mine));
    CUdevice dev;
    assert_cu_ok(cuCtxGetDevice(&dev));
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, dev));
    CUlinkState link = NULL;
    assert_cu_ok(cuLinkCreate(0, NULL, NULL, &link));
    assert_cu_ok(cuCtxDestroy(other)); /* it was current: the stack pops */
    CUcontext now = NULL;
    assert_cu_ok(cuCtxGetCurrent(&now));
    assert_ptr_equal(now, mine);
    assert_cu_ok(cuCtxPopCurrent(&now));
    assert_cu_ok(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, "module.ptx", 0, NULL, NULL));
    void *cubin = NULL;
    size_t size = 0;
    assert_cu_ok(cuLinkComplete(link, &cubin, &size));
    assert_true(size > 64);
    assert_cu_ok(cuCtxPushCurrent(mine));
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoadData(&m, cubin));
    check_main_module(m);
    assert_cu_ok(cuModuleUnload(m));
    assert_cu_ok(cuLinkDestroy(link));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLinkDestroy(link));
}

/* A cubin input that was refused fails the completion too (libcuda 580);
 * a refused input of another type does not. */
static void test_link_refused_cubin_fails_completion(void **state) {
    (void)state;
    unsigned char junk[333];
    ts_rng rng;
    ts_rng_init(&rng, 4242);
    for (size_t i = 0; i < sizeof junk; ++i) junk[i] = (unsigned char)ts_rng_next(&rng);
    void *cubin = NULL;
    size_t size = 0;
    CUlinkState link = NULL;
    assert_cu_ok(cuLinkCreate(0, NULL, NULL, &link));
    assert_cu(CUDA_ERROR_INVALID_IMAGE, cuLinkAddData(link, CU_JIT_INPUT_CUBIN, junk, sizeof junk, "junk", 0, NULL, NULL));
    assert_cu(CUDA_ERROR_INVALID_IMAGE, cuLinkComplete(link, &cubin, &size));
    assert_cu_ok(cuLinkDestroy(link));
    assert_cu_ok(cuLinkCreate(0, NULL, NULL, &link));
    assert_cu(CUDA_ERROR_INVALID_IMAGE, cuLinkAddData(link, CU_JIT_INPUT_FATBINARY, junk, sizeof junk, "junk", 0, NULL, NULL));
    assert_cu_ok(cuLinkComplete(link, &cubin, &size));
    assert_cu_ok(cuLinkDestroy(link));
}

static void test_link_bad_arguments(void **state) {
    (void)state;
    const char *ptx = main_ptx();
    CUlinkState link = NULL;
    void *cubin = NULL;
    size_t size = 0;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLinkCreate(0, NULL, NULL, NULL));
    CUjit_option opt = CU_JIT_MAX_REGISTERS;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLinkCreate(1, &opt, NULL, &link));
    assert_cu_ok(cuLinkCreate(0, NULL, NULL, &link));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLinkAddData(NULL, CU_JIT_INPUT_PTX, (void *)ptx, 8, "p", 0, NULL, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLinkAddData(link, CU_JIT_INPUT_PTX, NULL, 8, "p", 0, NULL, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, 0, "p", 0, NULL, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, 8, "p", 1, NULL, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLinkAddFile(NULL, CU_JIT_INPUT_PTX, "x.ptx", 0, NULL, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLinkAddFile(link, CU_JIT_INPUT_PTX, NULL, 0, NULL, NULL));
    assert_cu(CUDA_ERROR_FILE_NOT_FOUND, cuLinkAddFile(link, CU_JIT_INPUT_PTX, "/nonexistent/x.ptx", 0, NULL, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLinkComplete(NULL, &cubin, &size));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLinkComplete(link, NULL, &size));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLinkComplete(link, &cubin, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLinkDestroy(NULL));
    assert_cu_ok(cuLinkDestroy(link));
    /* No current context. */
    CUcontext ctx = NULL;
    assert_cu_ok(cuCtxPopCurrent(&ctx));
    CUresult r = cuLinkCreate(0, NULL, NULL, &link);
    assert_cu_ok(cuCtxPushCurrent(ctx));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, r);
}

#define LINK_THREADS 4

typedef struct {
    CUlinkState link;
    const char *ptx;
    CUresult result;
} link_race;

/* Adds to the shared session until it is destroyed under it. */
static void *link_adder(void *arg) {
    link_race *r = arg;
    for (int i = 0; i < 20; ++i) {
        CUresult s = cuLinkAddData(r->link, CU_JIT_INPUT_PTX, (void *)r->ptx, strlen(r->ptx) + 1, "p", 0, NULL, NULL);
        if (s != CUDA_SUCCESS && s != CUDA_ERROR_INVALID_HANDLE && r->result == CUDA_SUCCESS) r->result = s;
    }
    return NULL;
}

static void *link_destroyer(void *arg) {
    link_race *r = arg;
    r->result = cuLinkDestroy(r->link);
    return NULL;
}

/* Several threads add to one session while others destroy it: exactly one
 * destroy succeeds, the rest answer INVALID_HANDLE, nothing crashes. */
static void test_link_from_several_threads(void **state) {
    (void)state;
    /* A PTX unit with nothing in it, added again and again: the race is
     * about the handle, not the compiler. */
    static const char tiny_ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
    for (int round = 0; round < 10; ++round) {
        CUlinkState link = NULL;
        assert_cu_ok(cuLinkCreate(0, NULL, NULL, &link));
        link_race adders[LINK_THREADS], destroyers[LINK_THREADS];
        pthread_t at[LINK_THREADS], dt[LINK_THREADS];
        for (int t = 0; t < LINK_THREADS; ++t) {
            adders[t] = (link_race){link, tiny_ptx, CUDA_SUCCESS};
            destroyers[t] = (link_race){link, NULL, CUDA_SUCCESS};
            assert_int_equal(pthread_create(&at[t], NULL, link_adder, &adders[t]), 0);
        }
        for (int t = 0; t < LINK_THREADS; ++t)
            assert_int_equal(pthread_create(&dt[t], NULL, link_destroyer, &destroyers[t]), 0);
        int destroyed = 0;
        for (int t = 0; t < LINK_THREADS; ++t) {
            assert_int_equal(pthread_join(at[t], NULL), 0);
            assert_int_equal(pthread_join(dt[t], NULL), 0);
            if (adders[t].result != CUDA_SUCCESS)
                fail_msg("cuLinkAddData during destroy: %s", ts_cu_name(adders[t].result));
            if (destroyers[t].result == CUDA_SUCCESS) ++destroyed;
            else assert_cu(CUDA_ERROR_INVALID_HANDLE, destroyers[t].result);
        }
        assert_int_equal(destroyed, 1);
    }
}

/* ------------------------------------------------------------------ attributes */

static void test_func_attributes(void **state) {
    (void)state;
    CUmodule m = load_cubin(main_cubin());
    const int arch = device_arch();
    CUfunction simple = ts_get_function(m, "k_simple"), tiny = ts_get_function(m, "k_tiny"), shared = ts_get_function(m, "k_shared2k"),
               local = ts_get_function(m, "k_local"), bounded = ts_get_function(m, "k_bounded"), dyn = ts_get_function(m, "k_dyn");
    CUfunction all[] = {simple, tiny, shared, local, bounded, dyn};
    for (size_t i = 0; i < TS_ARRAY_SIZE(all); ++i) {
        const int regs = fattr(all[i], CU_FUNC_ATTRIBUTE_NUM_REGS);
        assert_true(regs > 0 && regs <= 255);
        assert_int_equal(fattr(all[i], CU_FUNC_ATTRIBUTE_PTX_VERSION), arch);
        assert_int_equal(fattr(all[i], CU_FUNC_ATTRIBUTE_BINARY_VERSION), arch);
        const int st = fattr(all[i], CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
        assert_int_equal(fattr(all[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), 48 * 1024 - st);
        assert_true(fattr(all[i], CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) >= 0);
        assert_int_equal(fattr(all[i], CU_FUNC_ATTRIBUTE_CACHE_MODE_CA), 0);
    }
    assert_int_equal(fattr(tiny, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 1024);
    assert_int_equal(fattr(bounded, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 256);
    assert_int_equal(fattr(tiny, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), 0);
    assert_int_equal(fattr(dyn, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), 0); /* dynamic only */
    assert_int_equal(fattr(shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), 2048);
    assert_int_equal(fattr(shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), 48 * 1024 - 2048);
    assert_int_equal(fattr(tiny, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES), 0);
    const int lb = fattr(local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    if (lb < 4096) fail_msg("k_local keeps int[1024] on its stack; LOCAL_SIZE_BYTES is %d", lb);
    /* Hopper attributes of an ordinary kernel. */
    assert_int_equal(fattr(tiny, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET), 0);
    assert_int_equal(fattr(tiny, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH), 0);
    assert_int_equal(fattr(tiny, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), -1);

    /* Register-limited kernels: the limit follows from 64K registers. */
    CUmodule r = load_cubin(regs_cubin());
    CUfunction kr = ts_get_function(r, "k_regs");
    const int regs = fattr(kr, CU_FUNC_ATTRIBUTE_NUM_REGS);
    const int max_threads = fattr(kr, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    print_message("k_regs: %d registers, %d threads per block at most\n", regs, max_threads);
    assert_true(regs > 128);
    assert_true(max_threads % 32 == 0 && max_threads > 0 && max_threads < 1024);
    assert_true(max_threads * regs <= 65536);
    assert_cu_ok(cuModuleUnload(r));
    CUmodule r32 = load_cubin(regs32_cubin());
    assert_int_equal(fattr(ts_get_function(r32, "k_regs"), CU_FUNC_ATTRIBUTE_NUM_REGS), 32);
    assert_int_equal(fattr(ts_get_function(r32, "k_regs"), CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 1024);
    assert_true(fattr(ts_get_function(r32, "k_regs"), CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) > 0); /* it spills */
    assert_cu_ok(cuModuleUnload(r32));

    /* Bad arguments. */
    int v = 0;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncGetAttribute(NULL, CU_FUNC_ATTRIBUTE_NUM_REGS, tiny));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncGetAttribute(&v, (CUfunction_attribute)9999, tiny));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncGetAttribute(&v, (CUfunction_attribute)-1, tiny));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, NULL));
    /* Last: the module's user __constant__ data (c_vals, 32 floats), whichever
     * kernel reads it; the compiler's own bank is not counted (libcuda: 128
     * for every kernel of such a module). */
    for (size_t i = 0; i < TS_ARRAY_SIZE(all); ++i) {
        const int cs = fattr(all[i], CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
        if (cs != 128) fail_msg("kernel %zu: CONST_SIZE_BYTES %d, expected 128 (the module's __constant__ data)", i, cs);
    }
    assert_cu_ok(cuModuleUnload(m));
}

static void test_func_set_attribute(void **state) {
    (void)state;
    CUmodule m = load_cubin(main_cubin());
    CUfunction shared = ts_get_function(m, "k_shared2k"), dyn = ts_get_function(m, "k_dyn");
    const int optin = dattr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    assert_int_equal(optin, 227 * 1024); /* H200 */
    assert_int_equal(dattr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK), 48 * 1024);
    /* Up to the opt-in limit minus the static part. */
    assert_cu_ok(cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 * 1024));
    assert_int_equal(fattr(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), 100 * 1024);
    assert_cu_ok(cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
    assert_int_equal(fattr(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), optin);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin + 1));
    assert_int_equal(fattr(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), optin); /* unchanged */
    assert_cu_ok(cuFuncSetAttribute(shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - 2048));
    assert_cu(CUDA_ERROR_INVALID_VALUE,
              cuFuncSetAttribute(shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - 2048 + 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncSetAttribute(shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1));
    /* Back down, to 0. */
    assert_cu_ok(cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0));
    assert_int_equal(fattr(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), 0);
    /* Carveout: -1 (no preference) and 0..100 percent. */
    assert_cu_ok(cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
    assert_int_equal(fattr(dyn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), 50);
    assert_cu_ok(cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101));
    /* Read-only attributes and handles. */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_NUM_REGS, 32));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncSetAttribute(NULL, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0));
    /* A second load of the module starts from the defaults. */
    CUmodule m2 = load_cubin(main_cubin());
    assert_int_equal(fattr(ts_get_function(m2, "k_dyn"), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), 48 * 1024);
    assert_cu_ok(cuModuleUnload(m2));
    assert_cu_ok(cuModuleUnload(m));
}

static void test_func_cache_config_and_name(void **state) {
    (void)state;
    CUmodule m = load_cubin(main_cubin());
    CUfunction f = ts_get_function(m, "k_simple");
    const CUfunc_cache configs[] = {CU_FUNC_CACHE_PREFER_NONE, CU_FUNC_CACHE_PREFER_SHARED, CU_FUNC_CACHE_PREFER_L1,
                                    CU_FUNC_CACHE_PREFER_EQUAL};
    for (size_t i = 0; i < TS_ARRAY_SIZE(configs); ++i) assert_cu_ok(cuFuncSetCacheConfig(f, configs[i]));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncSetCacheConfig(f, (CUfunc_cache)99));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncSetCacheConfig(NULL, CU_FUNC_CACHE_PREFER_L1));
    const char *name = NULL;
    assert_cu_ok(cuFuncGetName(&name, f));
    assert_string_equal(name, "k_simple");
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncGetName(NULL, f));
    assert_cu_ok(cuModuleUnload(m));
    /* INVALID_VALUE for a NULL function here, as libcuda answers. */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncGetName(&name, NULL));
}

static void test_loading_mode(void **state) {
    (void)state;
    CUmoduleLoadingMode mode = (CUmoduleLoadingMode)0;
    assert_cu_ok(cuModuleGetLoadingMode(&mode));
    /* LAZY by default, as libcuda 580 answers; EAGER when CUDA_MODULE_LOADING
     * says so (tests/unit/test_launch_ex_sim.cpp checks both behaviours). */
    const char *env = getenv("CUDA_MODULE_LOADING");
    const int eager = env && strcasecmp(env, "EAGER") == 0;
    assert_int_equal(mode, eager ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuModuleGetLoadingMode(NULL));
}

/* ------------------------------------------------------------------ occupancy */

static int active_blocks(CUfunction f, int block, size_t smem) {
    int n = -1;
    assert_cu_ok(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, block, smem));
    int m = -1;
    assert_cu_ok(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&m, f, block, smem,
                                                                      CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE));
    assert_int_equal(n, m);
    return n;
}

static void test_occupancy_active_blocks(void **state) {
    (void)state;
    assert_int_equal(dattr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR), 2048);
    assert_int_equal(dattr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR), 32);
    assert_int_equal(dattr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR), 65536);
    assert_int_equal(dattr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR), 228 * 1024);
    CUmodule m = load_cubin(main_cubin());
    CUfunction tiny = ts_get_function(m, "k_tiny"), dyn = ts_get_function(m, "k_dyn"), shared = ts_get_function(m, "k_shared2k");
    assert_true(fattr(tiny, CU_FUNC_ATTRIBUTE_NUM_REGS) <= 32);
    /* Threads and blocks per SM. */
    assert_int_equal(active_blocks(tiny, 1024, 0), 2);
    assert_int_equal(active_blocks(tiny, 512, 0), 4);
    assert_int_equal(active_blocks(tiny, 256, 0), 8);
    assert_int_equal(active_blocks(tiny, 64, 0), 32);
    assert_int_equal(active_blocks(tiny, 32, 0), 32); /* the 32-block limit */
    assert_int_equal(active_blocks(tiny, 1, 0), 32);
    assert_int_equal(active_blocks(tiny, 96, 0), 21); /* 2048 / 96 */
    /* Shared memory: 228 KiB per SM, 1 KiB of it reserved per block; the
     * functions allowed the opt-in maximum first (see the next test). */
    const int optin = dattr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    assert_cu_ok(cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
    assert_cu_ok(cuFuncSetAttribute(shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - 2048));
    assert_int_equal(active_blocks(dyn, 128, 100 * 1024), 2);
    assert_int_equal(active_blocks(dyn, 128, 200 * 1024), 1);
    assert_int_equal(active_blocks(dyn, 128, 227 * 1024), 1);
    assert_int_equal(active_blocks(dyn, 128, 48 * 1024), 4);
    assert_int_equal(active_blocks(dyn, 128, 10 * 1024), 16); /* 20 fit by shared memory, 16 by threads */
    assert_int_equal(active_blocks(dyn, 32, 6 * 1024), 32);   /* 7 KiB x 32 = 224 KiB */
    assert_int_equal(active_blocks(dyn, 32, 7 * 1024), 28);   /* 8 KiB each: 28 */
    assert_int_equal(active_blocks(shared, 128, 100 * 1024), 2); /* 2 KiB static + 100 KiB */
    assert_int_equal(active_blocks(shared, 128, 111 * 1024), 2); /* 114 KiB per block: exactly two */
    assert_int_equal(active_blocks(shared, 128, 112 * 1024), 1); /* 115 KiB */
    assert_int_equal(active_blocks(dyn, 128, 228 * 1024), 0);    /* does not fit at all */
    assert_int_equal(active_blocks(tiny, 2048, 0), 0);           /* more than a block may have */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveBlocksPerMultiprocessor(&(int){0}, tiny, 0, 0));
    assert_cu_ok(cuModuleUnload(m));

    /* Registers. */
    CUmodule r32 = load_cubin(regs32_cubin());
    CUfunction f32 = ts_get_function(r32, "k_regs");
    assert_int_equal(fattr(f32, CU_FUNC_ATTRIBUTE_NUM_REGS), 32);
    assert_int_equal(active_blocks(f32, 256, 0), 8); /* 32 x 256 = 8K registers per block */
    assert_int_equal(active_blocks(f32, 1024, 0), 2);
    CUmodule r64 = load_cubin(regs64_cubin());
    CUfunction f64 = ts_get_function(r64, "k_regs");
    assert_int_equal(fattr(f64, CU_FUNC_ATTRIBUTE_NUM_REGS), 64);
    assert_int_equal(active_blocks(f64, 256, 0), 4); /* 16K registers per block */
    assert_int_equal(active_blocks(f64, 1024, 0), 1);
    assert_int_equal(active_blocks(f64, 32, 0), 32);
    CUmodule rr = load_cubin(regs_cubin());
    CUfunction fr = ts_get_function(rr, "k_regs");
    if (fattr(fr, CU_FUNC_ATTRIBUTE_NUM_REGS) > 248) {
        assert_int_equal(active_blocks(fr, 128, 0), 2); /* 255 registers: 8 warps per SM */
        assert_int_equal(active_blocks(fr, 256, 0), 1);
    }

    /* Bad arguments. */
    int n = 0;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveBlocksPerMultiprocessor(NULL, f32, 128, 0));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, NULL, 128, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, f32, 128, 0, 0x100));
    assert_cu_ok(cuModuleUnload(rr));
    assert_cu_ok(cuModuleUnload(r64));
    assert_cu_ok(cuModuleUnload(r32));
}

static int b2d_calls;
static size_t smem_per_thread(int block);
static size_t smem_100k(int block);
static void potential(CUfunction f, CUoccupancyB2DSize cb, size_t smem, int limit, int *grid, int *block);

/* What the function allows limits the calculator: dynamic shared memory
 * beyond its MAX_DYNAMIC_SHARED_SIZE_BYTES (48 KiB minus the static part
 * until cuFuncSetAttribute raises it) fits no block; __launch_bounds__ does
 * not count (libcuda 580: 8 blocks of 256 threads for a kernel bounded to
 * 128). */
static void test_occupancy_function_limits(void **state) {
    (void)state;
    const int sms = dattr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    CUmodule m = load_cubin(main_cubin());
    CUfunction dyn = ts_get_function(m, "k_dyn"), shared = ts_get_function(m, "k_shared2k"), bounded = ts_get_function(m, "k_bounded");
    assert_int_equal(active_blocks(dyn, 128, 48 * 1024), 4);
    assert_int_equal(active_blocks(shared, 128, 48 * 1024 - 2048), 4);
    assert_int_equal(active_blocks(dyn, 128, 48 * 1024 + 1), 0);
    assert_int_equal(active_blocks(dyn, 128, 100 * 1024), 0);
    assert_int_equal(active_blocks(shared, 128, 48 * 1024), 0);
    int grid, block;
    potential(dyn, NULL, 100 * 1024, 0, &grid, &block);
    assert_int_equal(block, 0);
    assert_int_equal(grid, 0);
    b2d_calls = 0;
    potential(dyn, smem_100k, 0, 0, &grid, &block);
    assert_true(b2d_calls > 0);
    assert_int_equal(block, 0);
    assert_int_equal(grid, 0);
    /* 160 bytes per thread, at most 48 KiB: blocks of 224 threads, 6 per SM
     * (1344 threads resident). */
    potential(dyn, smem_per_thread, 0, 0, &grid, &block);
    assert_int_equal(block, 224);
    assert_int_equal(grid, 6 * sms);
    assert_int_equal(active_blocks(bounded, 256, 0), 8);
    assert_cu_ok(cuModuleUnload(m));
}

static size_t smem_100k(int block) {
    (void)block;
    ++b2d_calls;
    return 100 * 1024;
}
static size_t smem_per_thread(int block) {
    ++b2d_calls;
    return (size_t)block * 160;
}
static size_t smem_none(int block) {
    (void)block;
    ++b2d_calls;
    return 0;
}

static void potential(CUfunction f, CUoccupancyB2DSize cb, size_t smem, int limit, int *grid, int *block) {
    *grid = *block = -1;
    assert_cu_ok(cuOccupancyMaxPotentialBlockSize(grid, block, f, cb, smem, limit));
    int g2 = -1, b2 = -1;
    assert_cu_ok(cuOccupancyMaxPotentialBlockSizeWithFlags(&g2, &b2, f, cb, smem, limit,
                                                           CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE));
    assert_int_equal(*grid, g2);
    assert_int_equal(*block, b2);
}

static void test_occupancy_potential_block_size(void **state) {
    (void)state;
    const int sms = dattr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    CUmodule m = load_cubin(main_cubin());
    CUfunction tiny = ts_get_function(m, "k_tiny"), dyn = ts_get_function(m, "k_dyn"), bounded = ts_get_function(m, "k_bounded");
    int grid, block;
    /* Few registers, no shared memory: 1024-thread blocks, two per SM. */
    potential(tiny, NULL, 0, 0, &grid, &block);
    assert_int_equal(block, 1024);
    assert_int_equal(grid, 2 * sms);
    /* A block size limit: the best size under it (64 x 32 blocks fill an SM). */
    potential(tiny, NULL, 0, 100, &grid, &block);
    assert_int_equal(block, 64);
    assert_int_equal(grid, 32 * sms);
    potential(tiny, NULL, 0, 256, &grid, &block);
    assert_int_equal(block, 256);
    assert_int_equal(grid, 8 * sms);
    /* __launch_bounds__(256). */
    potential(bounded, NULL, 0, 0, &grid, &block);
    assert_int_equal(block, 256);
    assert_int_equal(grid, 8 * sms);
    /* Allowed the opt-in maximum (test_occupancy_function_limits covers the
     * default): 100 KiB -> 2 blocks of any size. */
    assert_cu_ok(cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    dattr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)));
    potential(dyn, NULL, 100 * 1024, 0, &grid, &block);
    assert_int_equal(block, 1024);
    assert_int_equal(grid, 2 * sms);
    /* The same through the callback (which wins over dynamicSMemSize). */
    b2d_calls = 0;
    potential(dyn, smem_100k, 0, 0, &grid, &block);
    assert_true(b2d_calls > 0);
    assert_int_equal(block, 1024);
    assert_int_equal(grid, 2 * sms);
    b2d_calls = 0;
    potential(dyn, smem_none, 200 * 1024, 0, &grid, &block);
    assert_true(b2d_calls > 0);
    assert_int_equal(block, 1024);
    assert_int_equal(grid, 2 * sms);
    /* Shared memory growing with the block: the answer maximises resident
     * threads, and the grid is its blocks per SM times the SMs. */
    b2d_calls = 0;
    potential(dyn, smem_per_thread, 0, 0, &grid, &block);
    assert_true(b2d_calls > 0);
    assert_true(block > 0 && block <= 1024);
    const int best = active_blocks(dyn, block, smem_per_thread(block));
    assert_int_equal(grid, best * sms);
    for (int b = 32; b <= 1024; b += 32) {
        const int n = active_blocks(dyn, b, smem_per_thread(b));
        if (n * b > best * block)
            fail_msg("block size %d keeps %d threads per SM resident, more than the chosen %d (%d)", b, n * b, block,
                     best * block);
    }
    print_message("shared memory of 160 bytes per thread: blocks of %d, grid %d\n", block, grid);

    /* Registers: 64 per thread -> 32 warps per SM. */
    CUmodule r64 = load_cubin(regs64_cubin());
    potential(ts_get_function(r64, "k_regs"), NULL, 0, 0, &grid, &block);
    assert_int_equal(block, 1024);
    assert_int_equal(grid, sms);
    assert_cu_ok(cuModuleUnload(r64));

    /* Bad arguments. */
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxPotentialBlockSize(NULL, &block, tiny, NULL, 0, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxPotentialBlockSize(&grid, NULL, tiny, NULL, 0, 0));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuOccupancyMaxPotentialBlockSize(&grid, &block, NULL, NULL, 0, 0));
    assert_cu_ok(cuModuleUnload(m));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_load_cubin),
        TEST(test_load_ptx_jit),
        TEST(test_load_ptx_max_registers),
        TEST(test_load_ptx_syntax_error_logs),
        TEST(test_load_ex_bad_options),
        TEST(test_load_files),
        TEST(test_load_fatbin),
        TEST(test_load_wrong_architecture),
        TEST(test_load_bad_arguments),
        TEST(test_corrupt_truncated),
        TEST(test_corrupt_truncated_ptx),
        TEST(test_corrupt_garbage),
        TEST(test_corrupt_text_not_ptx),
        TEST(test_corrupt_section_header_bit_flips),
        TEST(test_get_function),
        TEST(test_get_global),
        TEST(test_unload),
        TEST(test_unload_after_context_destroyed),
        TEST(test_handles_of_the_wrong_kind),
        TEST(test_module_dies_with_primary_release),
        TEST(test_globals_are_not_allocations),
        TEST(test_modules_from_several_threads),
        TEST(test_link),
        TEST(test_link_outlives_its_context),
        TEST(test_link_refused_cubin_fails_completion),
        TEST(test_link_bad_arguments),
        TEST(test_link_from_several_threads),
        TEST(test_func_attributes),
        TEST(test_func_set_attribute),
        TEST(test_func_cache_config_and_name),
        TEST(test_loading_mode),
        TEST(test_occupancy_active_blocks),
        TEST(test_occupancy_potential_block_size),
        TEST(test_occupancy_function_limits),
    };
    return cmocka_run_group_tests_name("module", tests, ts_group_init, NULL);
}
