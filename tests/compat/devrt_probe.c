#define _GNU_SOURCE
/*
 * devrt_probe: device printf, assert and malloc/free as a driver presents
 * them, one line per case plus what the kernels print, in a deterministic
 * order (single-thread kernels). Built once against libnvlite (it needs NVRTC
 * at run time, through tests/support/ts_kernels.c; cuCtxGetLimit/SetLimit are
 * looked up with dlsym) and run on a GPU twice: with libnvlite, and with
 * libcuda standing in for it (LD_LIBRARY_PATH=<dir with libnvlite.so.0 ->
 * libcuda.so.1>), each as `devrt_probe > out.txt 2> err.txt`. Comparing the
 * two pairs of files shows where nvlite differs from libcuda: the text of
 * every conversion, where assert messages go (stdout or stderr), printf's
 * return value, the limits' values and when they may change, what malloc
 * returns for 0 and for too much, the sticky error.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvlite/cuda.h"
#include "support/ts_kernels.h"

#define PROBE_WIDTH 52
#include "probe.h"

static const char kSource[] =
    "extern \"C\" {\n"
    "__global__ void k_formats(int* ret, const char* s, void* p) {\n"
    "    ret[0] = printf(\"ints [%d|%i|%u|%x|%X|%o|%c|%ld|%lld|%llu|%hd|%hhu]\\n\", -42, 7, 4000000000u, 0xbeef, 0xcafe, 8,\n"
    "                    'Z', -5L, 1LL << 40, ~0ull, 70000, 300);\n"
    "    ret[1] = printf(\"doubles [%f|%e|%g|%G|%8.3f|%-12e|%.0f|%+.2e|%a|%5.1f]\\n\", 1.5, 12345.678, 0.0001, 6.02e23,\n"
    "                    3.14159265, -0.000123, 2.5, 12345.678, 1.0, 2.25f);\n"
    "    ret[2] = printf(\"strings [%s|%10s|%-10s|%.3s|%s]\\n\", s, s, s, s, (const char*)0);\n"
    "    ret[3] = printf(\"pointer [%p] [%p]\\n\", p, (void*)0);\n"
    "    ret[4] = printf(\"stars [%*d|%-*d|%*d|%.*f|%.*f]\\n\", 6, 42, 6, 42, -6, 42, 2, 3.14159, -2, 3.14159);\n"
    "    ret[5] = printf(\"flags [%05d|%-5d|% d|%+d|%#x|%#o|%#.3g]\\n\", 42, 42, 42, 42, 255, 8, 1.0);\n"
    "    ret[6] = printf(\"odd [%y] [%5k] [100%%] [%\");\n"
    "    ret[7] = printf(\"\\n\");\n"
    "    ret[8] = printf(\"no newline, \");\n"
    "    ret[9] = printf(\"then this\\n\");\n"
    "    ret[10] = printf(\"33 args: %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\\n\",\n"
    "                     1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,\n"
    "                     27, 28, 29, 30, 31, 32, 33);\n"
    "    char local[40];\n"
    "    for (int i = 0; i < 39; ++i) local[i] = 'a' + i % 26;\n"
    "    local[39] = 0;\n"
    "    ret[11] = printf(\"local [%s]\\n\", local);\n"
    "    ret[12] = printf((const char*)0);\n"
    "}\n"
    "__global__ void k_line(int v) { printf(\"line %d\\n\", v); }\n"
    "__global__ void k_heap(unsigned long long* out) {\n"
    "    void* a = malloc(0);\n"
    "    void* b = malloc(1);\n"
    "    void* c = malloc(100);\n"
    "    void* huge = malloc(1ull << 40);\n"
    "    out[0] = a != 0; out[1] = b != 0; out[2] = (unsigned long long)b & 15; out[3] = (unsigned long long)c & 15;\n"
    "    out[4] = huge != 0;\n"
    "    free(0); free(a); free(c);\n"
    "    void* d = malloc(100);\n"
    "    out[5] = d == c;\n"
    "    free(b); free(d);\n"
    "}\n"
    "__global__ void k_assert(int n) { assert(threadIdx.x < n); }\n"
    "__global__ void k_trap() { __trap(); }\n"
    "}\n";
static const char kNewSource[] =
    "extern \"C\" __global__ void k_new(int* out) { int* p = new int[4]; p[0] = 42; out[0] = p[0]; delete[] p; }\n";

typedef CUresult (*get_limit_fn)(size_t *, CUlimit);
typedef CUresult (*set_limit_fn)(CUlimit, size_t);
static get_limit_fn get_limit;
static set_limit_fn set_limit;
static CUdevice dev;
static int arch;

static void limits(const char *when) {
    size_t v = 0;
    char label[96];
    if (!get_limit) {
        printf("%s: no cuCtxGetLimit\n", when);
        return;
    }
    snprintf(label, sizeof label, "%s: get PRINTF_FIFO_SIZE", when);
    PV(label, get_limit(&v, CU_LIMIT_PRINTF_FIFO_SIZE), "%zu", v);
    v = 0;
    snprintf(label, sizeof label, "%s: get MALLOC_HEAP_SIZE", when);
    PV(label, get_limit(&v, CU_LIMIT_MALLOC_HEAP_SIZE), "%zu", v);
}

static void set(const char *label, CUlimit which, size_t value) {
    if (set_limit) P(label, set_limit(which, value));
}

static CUfunction fn(CUmodule m, const char *name) {
    CUfunction f = NULL;
    CUresult r = cuModuleGetFunction(&f, m, name);
    if (r != CUDA_SUCCESS) printf("setup: cuModuleGetFunction(%s) => %s\n", name, rname(r));
    return f;
}

static CUresult launch1(CUfunction f, void **params) {
    fflush(stdout);
    return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
}

#define SYNC(label)                                     \
    do {                                                \
        fflush(stdout);                                 \
        P(label, cuCtxSynchronize());                   \
    } while (0)

static void printing(CUmodule m) {
    CUdeviceptr ret = 0, s = 0;
    cuMemAlloc(&ret, 64 * sizeof(int));
    cuMemsetD32(ret, 0x7fffffff, 64);
    cuMemAlloc(&s, 64);
    cuMemcpyHtoD(s, "a string", 9);
    CUdeviceptr p = 0x7f0012345670ull;
    void *params[] = {&ret, &s, &p};
    int v = -1;
    CUfunction f = fn(m, "k_formats");
    PV("attr k_formats NUM_REGS", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f), "%d", v);
    PV("attr k_formats LOCAL_SIZE_BYTES", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f), "%d", v);
    PV("attr k_formats MAX_THREADS_PER_BLOCK", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f), "%d", v);
    P("launch k_formats", launch1(f, params));
    SYNC("cuCtxSynchronize after k_formats");
    int r[64];
    cuMemcpyDtoH(r, ret, sizeof r);
    printf("printf returned:");
    for (int i = 0; i < 13; ++i) printf(" %d", r[i]);
    printf("\n");
    /* Output comes at the synchronising call, from a stream too. */
    CUfunction line = fn(m, "k_line");
    CUstream st = NULL;
    cuStreamCreate(&st, CU_STREAM_NON_BLOCKING);
    int k = 1;
    void *lp[] = {&k};
    P("launch k_line(1) on a stream", cuLaunchKernel(line, 1, 1, 1, 1, 1, 1, 0, st, lp, NULL));
    fflush(stdout);
    P("cuStreamSynchronize", cuStreamSynchronize(st));
    k = 2;
    P("launch k_line(2)", launch1(line, lp));
    int host = 0;
    fflush(stdout);
    P("cuMemcpyDtoH (blocking)", cuMemcpyDtoH(&host, ret, sizeof host));
    k = 3;
    P("launch k_line(3)", launch1(line, lp));
    CUevent e = NULL;
    cuEventCreate(&e, 0);
    cuEventRecord(e, NULL);
    fflush(stdout);
    P("cuEventSynchronize", cuEventSynchronize(e));
    cuEventDestroy(e);
    cuStreamDestroy(st);
    cuMemFree(ret);
    cuMemFree(s);
}

static void heap(CUmodule m) {
    CUdeviceptr out = 0;
    cuMemAlloc(&out, 16 * sizeof(unsigned long long));
    cuMemsetD32(out, 0xffffffff, 32);
    void *params[] = {&out};
    P("launch k_heap", launch1(fn(m, "k_heap"), params));
    SYNC("cuCtxSynchronize after k_heap");
    unsigned long long o[16];
    cuMemcpyDtoH(o, out, sizeof o);
    printf("malloc(0) non-null %llu, malloc(1) non-null %llu (addr%%16 %llu), malloc(100) addr%%16 %llu, "
           "malloc(1<<40) non-null %llu, reused after free %llu\n",
           o[0], o[1], o[2], o[3], o[4], o[5]);
    cuMemFree(out);
}

int main(void) {
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) {
        printf("no NVRTC: %s\n", why);
        return 1;
    }
    get_limit = (get_limit_fn)dlsym(RTLD_DEFAULT, "cuCtxGetLimit");
    set_limit = (set_limit_fn)dlsym(RTLD_DEFAULT, "cuCtxSetLimit");
    CUcontext ctx = NULL;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuCtxCreate(&ctx, NULL, 0, dev) != CUDA_SUCCESS) {
        printf("no device\n");
        return 1;
    }
    int major = 0, minor = 0;
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    arch = major * 10 + minor;
    void *cubin = ts_compile_cubin(kSource, "devrt_probe.cu", arch, NULL);
    char *ptx = ts_compile_ptx(kSource, "devrt_probe.cu", arch, NULL);
    void *cubin_new = ts_compile_cubin(kNewSource, "devrt_new.cu", arch, NULL);
    if (!cubin || !ptx || !cubin_new) {
        printf("compile failed\n");
        return 1;
    }
    printf("device sm_%d\n", arch);

    limits("fresh context");
    set("set PRINTF_FIFO_SIZE 5000 before any module", CU_LIMIT_PRINTF_FIFO_SIZE, 5000);
    set("set MALLOC_HEAP_SIZE 3 MiB + 5", CU_LIMIT_MALLOC_HEAP_SIZE, (3u << 20) + 5);
    limits("after setting");
    set("set PRINTF_FIFO_SIZE 1 MiB", CU_LIMIT_PRINTF_FIFO_SIZE, 1u << 20);
    CUmodule m = NULL;
    P("cuModuleLoadData(cubin calling printf/assert/malloc)", cuModuleLoadData(&m, cubin));
    if (!m) return 1;
    set("set PRINTF_FIFO_SIZE 2 MiB after load", CU_LIMIT_PRINTF_FIFO_SIZE, 2u << 20);
    limits("after load");
    printing(m);
    set("set PRINTF_FIFO_SIZE after a printf launch", CU_LIMIT_PRINTF_FIFO_SIZE, 1u << 20);
    set("set MALLOC_HEAP_SIZE after a printf launch", CU_LIMIT_MALLOC_HEAP_SIZE, 4u << 20);
    limits("after printf launches");
    heap(m);
    set("set MALLOC_HEAP_SIZE after a malloc launch", CU_LIMIT_MALLOC_HEAP_SIZE, 8u << 20);
    limits("after malloc launch");

    CUmodule mp = NULL;
    P("cuModuleLoadData(PTX calling printf)", cuModuleLoadData(&mp, ptx));
    if (mp) {
        int k = 7;
        void *lp[] = {&k};
        P("launch k_line(7) from PTX", launch1(fn(mp, "k_line"), lp));
        SYNC("cuCtxSynchronize");
        cuModuleUnload(mp);
    }
    CUmodule mn = NULL;
    P("cuModuleLoadData(new/delete)", cuModuleLoadData(&mn, cubin_new));
    if (mn) {
        CUdeviceptr out = 0;
        int host = 0;
        cuMemAlloc(&out, 4);
        void *np[] = {&out};
        P("launch k_new", launch1(fn(mn, "k_new"), np));
        SYNC("cuCtxSynchronize");
        cuMemcpyDtoH(&host, out, 4);
        printf("new int[4]: %d\n", host);
        cuMemFree(out);
        cuModuleUnload(mn);
    }

    /* assert: one failing thread of four, then the sticky error. */
    int n = 3;
    void *ap[] = {&n};
    fflush(stdout);
    P("launch k_assert (thread 3 fails)", cuLaunchKernel(fn(m, "k_assert"), 1, 1, 1, 4, 1, 1, 0, NULL, ap, NULL));
    SYNC("cuCtxSynchronize after the assert");
    CUdeviceptr d = 0;
    P("cuMemAlloc after the assert", cuMemAlloc(&d, 64));
    SYNC("cuCtxSynchronize again");
    CUmodule m2 = NULL;
    P("cuModuleLoadData after the assert", cuModuleLoadData(&m2, cubin));
    P("cuCtxDestroy", cuCtxDestroy(ctx));
    P("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, dev));
    limits("new context");
    P("cuModuleLoadData", cuModuleLoadData(&m, cubin));
    P("launch k_trap", launch1(fn(m, "k_trap"), NULL));
    SYNC("cuCtxSynchronize after __trap()");
    P("cuCtxDestroy", cuCtxDestroy(ctx));
    printf("done\n");
    return 0;
}
