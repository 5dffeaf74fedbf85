/*
 * NVRTC in a process where nvlite is libcuda.so.1.
 *
 * NVRTC 13 opens libcuda.so.1 itself, calls cuInit and then cuGetExportTable;
 * before nvlite had cuGetExportTable, nvrtcCompileProgram dereferenced NULL
 * there (issue 8). The test runs itself through build/bin/nvlite-run, as a
 * user would, so that the dynamic linker finds nvlite as libcuda.so.1 for
 * NVRTC too; then NVRTC compiles kernels after cuInit, and the driver API
 * loads and runs what it made.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_support.h"
#include "support/ts_kernels.h"

static const char kSource[] =
    "extern \"C\" __global__ void axpy(float a, const float* x, float* y, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

/* libcuda.so.1, as the dynamic linker finds it, is this library. */
static void test_libcuda_is_nvlite(void **state) {
    (void)state;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    assert_ptr_equal(dlsym(h, "cuInit"), (void *)cuInit);
    assert_ptr_equal(dlsym(h, "cuGetExportTable"), (void *)cuGetExportTable);
    dlclose(h);
    /* No other driver library is mapped. */
    FILE *maps = fopen("/proc/self/maps", "r");
    assert_non_null(maps);
    char line[1024];
    int others = 0;
    while (fgets(line, sizeof line, maps))
        if (strstr(line, "/libcuda.so.") && !strstr(line, "/driver/libcuda.so.1")) {
            print_message("mapped: %s", line);
            ++others;
        }
    fclose(maps);
    assert_int_equal(others, 0);
}

static void test_nvrtc_compiles_after_init(void **state) {
    (void)state;
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) ts_skip("%s", why);
    assert_cu_ok(cuInit(0));
    size_t cubin_size = 0, ptx_size = 0;
    void *cubin = ts_compile_cubin(kSource, "axpy.cu", 90, &cubin_size);
    assert_non_null(cubin);
    assert_true(cubin_size > 1000);
    char *ptx = ts_compile_ptx(kSource, "axpy.cu", 90, &ptx_size);
    assert_non_null(ptx);
    assert_non_null(strstr(ptx, ".entry axpy"));
    /* NVRTC went through nvlite: it opened libcuda.so.1, which is loaded once. */
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    dlclose(h);
    free(cubin);
    free(ptx);
}

/* What NVRTC made loads and launches; on a GPU the results are checked. */
static void test_compiled_kernel_runs(void **state) {
    (void)state;
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) ts_skip("%s", why);
    assert_cu_ok(cuInit(0));
    CUcontext ctx = NULL;
    assert_cu_ok(cuCtxCreate(&ctx, NULL, 0, 0));
    size_t size = 0;
    void *cubin = ts_compile_cubin(kSource, "axpy.cu", ts_device_arch(), &size);
    assert_non_null(cubin);
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    assert_cu_ok(cuModuleLoadData(&mod, cubin));
    free(cubin);
    assert_cu_ok(cuModuleGetFunction(&fn, mod, "axpy"));
    const int n = 100003;
    float *x = ts_malloc(n * sizeof(float)), *y = ts_malloc(n * sizeof(float)), *out = ts_malloc(n * sizeof(float));
    ts_rng rng;
    ts_rng_init(&rng, 0x5eed0101);
    for (int i = 0; i < n; ++i) {
        x[i] = (float)(ts_rng_below(&rng, 2001)) - 1000.f;
        y[i] = (float)(ts_rng_below(&rng, 2001)) / 8.f;
    }
    CUdeviceptr dx = ts_dev_alloc(n * sizeof(float)), dy = ts_dev_alloc(n * sizeof(float));
    assert_cu_ok(cuMemcpyHtoD(dx, x, n * sizeof(float)));
    assert_cu_ok(cuMemcpyHtoD(dy, y, n * sizeof(float)));
    float a = 0.75f;
    int count = n;
    void *params[] = {&a, &dx, &dy, &count};
    assert_cu_ok(cuLaunchKernel(fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
    assert_cu_ok(cuCtxSynchronize());
    assert_cu_ok(cuMemcpyDtoH(out, dy, n * sizeof(float)));
    if (!ts_on_simulator()) {
        for (int i = 0; i < n; ++i)
            if (out[i] != a * x[i] + y[i]) fail_msg("y[%d] = %g, want %g", i, out[i], a * x[i] + y[i]);
    }
    assert_cu_ok(cuModuleUnload(mod));
    assert_cu_ok(cuCtxDestroy(ctx));
    ts_free_all();
}

/* Runs this binary again through nvlite-run (build/bin, next to build/tests). */
static void run_under_launcher(char **argv) {
    if (getenv("NVLITE_TEST_UNDER_RUN")) return;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        perror("readlink /proc/self/exe");
        exit(1);
    }
    exe[n] = 0;
    char run[PATH_MAX + 32];
    snprintf(run, sizeof run, "%.*s/../../bin/nvlite-run", (int)(strrchr(exe, '/') - exe), exe);
    setenv("NVLITE_TEST_UNDER_RUN", "1", 1);
    /* The driver folder beside the library this test linked (build/lib or
     * the checked build's), so that NVRTC's libcuda.so.1 is that library. */
    Dl_info info;
    if (dladdr((void *)cuInit, &info) && info.dli_fname && strrchr(info.dli_fname, '/')) {
        char lib[PATH_MAX], driver[PATH_MAX + 16];
        if (realpath(info.dli_fname, lib)) {
            *strrchr(lib, '/') = 0;
            snprintf(driver, sizeof driver, "%s/../driver", lib);
            setenv("NVLITE_DRIVER_DIR", driver, 1);
        }
    }
    char *args[] = {run, exe, NULL};
    (void)argv;
    execv(run, args);
    fprintf(stderr, "cannot run %s: the launcher is built by make (make driver)\n", run);
    exit(1);
}

int main(int argc, char **argv) {
    (void)argc;
    run_under_launcher(argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_libcuda_is_nvlite),
        cmocka_unit_test(test_nvrtc_compiles_after_init),
        cmocka_unit_test(test_compiled_kernel_runs),
    };
    return cmocka_run_group_tests_name("nvrtc_driver", tests, NULL, NULL);
}
