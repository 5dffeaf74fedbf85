#define _GNU_SOURCE
/*
 * module_probe: the module, function, launch and occupancy calls with good
 * and bad arguments, one line per case (the CUresult name and the values
 * that matter), like compat_probe.c. Built once against libnvlite (it needs
 * NVRTC at run time, through tests/support/ts_kernels.c) and run on a GPU
 * twice: with libnvlite, and with libcuda standing in for it
 * (LD_LIBRARY_PATH=<dir with libnvlite.so.0 -> libcuda.so.1>). The
 * differences are what to fix or what the tests must not assume.
 *
 *   cc -std=c11 -Iinclude -Itests tests/compat/module_probe.c -o module_probe \
 *      -Lbuild/lib -lnvlite -ldl
 */
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
    "__device__ int g_dev[4] = {1, 2, 3, 4};\n"
    "__device__ double g_zero[1000];\n"
    "__constant__ float c_vals[32] = {0.5f, 1.5f};\n"
    "__global__ void k_tiny(int* out) { if (out) out[threadIdx.x] = threadIdx.x; }\n"
    "__global__ void k_const(int* out) { if (out) out[threadIdx.x] = (int)c_vals[threadIdx.x & 31] + g_dev[threadIdx.x & 3]; }\n"
    "__global__ void k_shared2k(int* out) { __shared__ int s[512]; s[threadIdx.x % 512] = threadIdx.x; __syncthreads();\n"
    "    if (out) out[threadIdx.x] = s[(threadIdx.x + 1) % 512]; }\n"
    "__global__ void k_local(int* out, int n) { int a[1024]; for (int i = 0; i < 1024; ++i) a[(i * n) & 1023] = i;\n"
    "    if (out) out[threadIdx.x] = a[(threadIdx.x * 7 + n) & 1023]; }\n"
    "__global__ void __launch_bounds__(128) k_bounded(int* out) { if (out) out[threadIdx.x] = 1; }\n"
    "__global__ void k_dyn(int* out) { extern __shared__ int d[]; d[threadIdx.x] = threadIdx.x; __syncthreads();\n"
    "    if (out) out[threadIdx.x] = d[blockDim.x - 1 - threadIdx.x]; }\n"
    "__global__ void k_regs(float* out, const float* in, int n) {\n"
    "    if (!out) return;\n"
    TS_REGS_KERNEL_BODY
    "}\n"
    "}\n";

static void *cubin, *cubin32, *cubin80;
static size_t cubin_size;
static char *ptx;
static CUdevice dev;
static int sms;

static CUfunction fn(CUmodule m, const char *name) {
    CUfunction f = NULL;
    CUresult r = cuModuleGetFunction(&f, m, name);
    if (r != CUDA_SUCCESS) printf("setup: cuModuleGetFunction(%s) => %s\n", name, rname(r));
    return f;
}

static void attributes(CUmodule m) {
    static const char *const names[] = {"k_tiny", "k_const", "k_shared2k", "k_local", "k_bounded", "k_dyn", "k_regs"};
    static const struct {
        CUfunction_attribute a;
        const char *name;
    } attrs[] = {{CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK"},
                 {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES"},
                 {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, "CONST_SIZE_BYTES"},
                 {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "LOCAL_SIZE_BYTES"},
                 {CU_FUNC_ATTRIBUTE_NUM_REGS, "NUM_REGS"},
                 {CU_FUNC_ATTRIBUTE_PTX_VERSION, "PTX_VERSION"},
                 {CU_FUNC_ATTRIBUTE_BINARY_VERSION, "BINARY_VERSION"},
                 {CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, "CACHE_MODE_CA"},
                 {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "MAX_DYNAMIC_SHARED_SIZE_BYTES"},
                 {CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, "PREFERRED_SHARED_MEMORY_CARVEOUT"},
                 {CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, "CLUSTER_SIZE_MUST_BE_SET"},
                 {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, "REQUIRED_CLUSTER_WIDTH"},
                 {CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, "NON_PORTABLE_CLUSTER_SIZE_ALLOWED"},
                 {CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, "CLUSTER_SCHEDULING_POLICY_PREFERENCE"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        CUfunction f = fn(m, names[i]);
        for (size_t a = 0; a < sizeof attrs / sizeof attrs[0]; ++a) {
            int v = -12345;
            char label[96];
            snprintf(label, sizeof label, "attr %s %s", names[i], attrs[a].name);
            PV(label, cuFuncGetAttribute(&v, attrs[a].a, f), "%d", v);
        }
    }
    CUfunction t = fn(m, "k_tiny");
    int v = 0;
    P("cuFuncGetAttribute(9999)", cuFuncGetAttribute(&v, (CUfunction_attribute)9999, t));
    P("cuFuncGetAttribute(NULL pi)", cuFuncGetAttribute(NULL, CU_FUNC_ATTRIBUTE_NUM_REGS, t));
    P("cuFuncGetAttribute(NULL func)", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, NULL));
    CUmodule m32 = NULL;
    P("cuModuleLoadData(maxrregcount=32)", cuModuleLoadData(&m32, cubin32));
    if (m32) {
        CUfunction f32 = fn(m32, "k_regs");
        PV("attr k_regs(32) NUM_REGS", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f32), "%d", v);
        PV("attr k_regs(32) LOCAL_SIZE_BYTES", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f32), "%d", v);
        int n = -1;
        PV("occupancy k_regs(32) 256", cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f32, 256, 0), "%d", n);
        cuModuleUnload(m32);
    }
}

static void set_attributes(CUmodule m) {
    CUfunction s = fn(m, "k_shared2k"), d = fn(m, "k_dyn"), t = fn(m, "k_tiny");
    int optin = 0, v = -1;
    cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    printf("optin %d\n", optin);
    P("set MAX_DYN k_dyn optin", cuFuncSetAttribute(d, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
    PV("get MAX_DYN k_dyn", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, d), "%d", v);
    P("set MAX_DYN k_dyn optin+1", cuFuncSetAttribute(d, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin + 1));
    P("set MAX_DYN k_shared2k optin-2048", cuFuncSetAttribute(s, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - 2048));
    P("set MAX_DYN k_shared2k optin-2047", cuFuncSetAttribute(s, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - 2047));
    P("set MAX_DYN k_shared2k optin", cuFuncSetAttribute(s, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
    PV("get MAX_DYN k_shared2k", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, s), "%d", v);
    P("set MAX_DYN -1", cuFuncSetAttribute(t, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1));
    P("set MAX_DYN 0", cuFuncSetAttribute(t, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0));
    P("set CARVEOUT 50", cuFuncSetAttribute(t, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
    P("set CARVEOUT 101", cuFuncSetAttribute(t, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101));
    P("set CARVEOUT -1", cuFuncSetAttribute(t, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -1));
    P("set CARVEOUT -2", cuFuncSetAttribute(t, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -2));
    P("set NUM_REGS", cuFuncSetAttribute(t, CU_FUNC_ATTRIBUTE_NUM_REGS, 32));
    P("set MAX_THREADS_PER_BLOCK", cuFuncSetAttribute(t, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 128));
    P("set 9999", cuFuncSetAttribute(t, (CUfunction_attribute)9999, 1));
    P("set NULL func", cuFuncSetAttribute(NULL, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0));
    P("cuFuncSetCacheConfig(PREFER_L1)", cuFuncSetCacheConfig(t, CU_FUNC_CACHE_PREFER_L1));
    P("cuFuncSetCacheConfig(99)", cuFuncSetCacheConfig(t, (CUfunc_cache)99));
    P("cuFuncSetCacheConfig(NULL)", cuFuncSetCacheConfig(NULL, CU_FUNC_CACHE_PREFER_L1));
    const char *name = NULL;
    PV("cuFuncGetName", cuFuncGetName(&name, t), "%s", name ? name : "(null)");
    P("cuFuncGetName(NULL name)", cuFuncGetName(NULL, t));
    P("cuFuncGetName(NULL func)", cuFuncGetName(&name, NULL));
    CUmoduleLoadingMode mode = (CUmoduleLoadingMode)0;
    PV("cuModuleGetLoadingMode", cuModuleGetLoadingMode(&mode), "%d", (int)mode);
    P("cuModuleGetLoadingMode(NULL)", cuModuleGetLoadingMode(NULL));
}

static void lookups(CUmodule m) {
    CUfunction f = NULL;
    P("GetFunction missing", cuModuleGetFunction(&f, m, "nope"));
    P("GetFunction \"\"", cuModuleGetFunction(&f, m, ""));
    P("GetFunction variable name", cuModuleGetFunction(&f, m, "g_dev"));
    P("GetFunction NULL name", cuModuleGetFunction(&f, m, NULL));
    P("GetFunction NULL out", cuModuleGetFunction(NULL, m, "k_tiny"));
    P("GetFunction NULL module", cuModuleGetFunction(&f, NULL, "k_tiny"));
    CUdeviceptr p = 0;
    size_t n = 0;
    PV("GetGlobal g_dev", cuModuleGetGlobal(&p, &n, m, "g_dev"), "%zu", n);
    PV("GetGlobal g_zero", cuModuleGetGlobal(&p, &n, m, "g_zero"), "%zu", n);
    PV("GetGlobal c_vals", cuModuleGetGlobal(&p, &n, m, "c_vals"), "%zu", n);
    P("GetGlobal NULL NULL", cuModuleGetGlobal(NULL, NULL, m, "g_dev"));
    P("GetGlobal missing", cuModuleGetGlobal(&p, &n, m, "nope"));
    P("GetGlobal function name", cuModuleGetGlobal(&p, &n, m, "k_tiny"));
    P("GetGlobal NULL name", cuModuleGetGlobal(&p, &n, m, NULL));
    P("GetGlobal NULL module", cuModuleGetGlobal(&p, &n, NULL, "g_dev"));
    CUdeviceptr base = 0;
    size_t size = 0;
    cuModuleGetGlobal(&p, &n, m, "g_dev");
    PV("cuMemGetAddressRange(g_dev)", cuMemGetAddressRange(&base, &size, p), "base_is_var=%d size_is_var=%d",
       base == p, size == n);
    int h[8] = {0};
    P("DtoH g_dev + 16 bytes past its end", cuMemcpyDtoH(h, p, n + 16));
}

static int launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                  unsigned smem, void **params, void **extra, const char *label) {
    CUresult r = CUDA_SUCCESS;
    P(label, (r = cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, NULL, params, extra)));
    CUresult s = cuCtxSynchronize();
    if (s != CUDA_SUCCESS) printf("%-*s => sync %s\n", PROBE_WIDTH, label, rname(s));
    return r == CUDA_SUCCESS;
}

static void launches(CUmodule m) {
    CUfunction t = fn(m, "k_tiny"), b = fn(m, "k_bounded"), r = fn(m, "k_regs"), d = fn(m, "k_dyn");
    void *nullp = NULL;
    void *p1[] = {&nullp};
    void *p3[] = {&nullp, &nullp, &nullp};
    launch(t, 1, 1, 1, 32, 1, 1, 0, p1, NULL, "launch ok");
    launch(t, 1, 1, 1, 1025, 1, 1, 0, p1, NULL, "launch block 1025");
    launch(t, 1, 1, 1, 1, 1, 65, 0, p1, NULL, "launch block z 65");
    launch(t, 1, 1, 1, 33, 32, 1, 0, p1, NULL, "launch block 33x32");
    launch(t, 1, 1, 1, 0, 1, 1, 0, p1, NULL, "launch block x 0");
    launch(t, 0, 1, 1, 1, 1, 1, 0, p1, NULL, "launch grid x 0");
    launch(t, 1, 65536, 1, 1, 1, 1, 0, p1, NULL, "launch grid y 65536");
    launch(t, 1, 1, 65536, 1, 1, 1, 0, p1, NULL, "launch grid z 65536");
    launch(t, 2147483648u, 1, 1, 1, 1, 1, 0, p1, NULL, "launch grid x 2^31");
    launch(b, 1, 1, 1, 129, 1, 1, 0, p1, NULL, "launch k_bounded 129");
    launch(b, 1, 1, 1, 128, 1, 1, 0, p1, NULL, "launch k_bounded 128");
    int max_threads = 0, regs = 0;
    cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, r);
    cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, r);
    printf("k_regs: %d registers, %d threads\n", regs, max_threads);
    launch(r, 1, 1, 1, (unsigned)max_threads, 1, 1, 0, p3, NULL, "launch k_regs max");
    launch(r, 1, 1, 1, (unsigned)max_threads + 32, 1, 1, 0, p3, NULL, "launch k_regs max+32");
    launch(r, 1, 1, 1, 1024, 1, 1, 0, p3, NULL, "launch k_regs 1024");
    launch(d, 1, 1, 1, 32, 1, 1, 48 * 1024, p1, NULL, "launch k_dyn smem 48K");
    launch(d, 1, 1, 1, 32, 1, 1, 48 * 1024 + 1, p1, NULL, "launch k_dyn smem 48K+1");
    int optin = 0;
    cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    cuFuncSetAttribute(d, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin);
    launch(d, 1, 1, 1, 32, 1, 1, (unsigned)optin, p1, NULL, "launch k_dyn smem optin (after set)");
    launch(d, 1, 1, 1, 32, 1, 1, (unsigned)optin + 1, p1, NULL, "launch k_dyn smem optin+1");
    launch(NULL, 1, 1, 1, 1, 1, 1, 0, p1, NULL, "launch NULL func");
    size_t sz = sizeof(void *);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &nullp, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz, CU_LAUNCH_PARAM_END};
    launch(t, 1, 1, 1, 1, 1, 1, 0, NULL, extra, "launch extra ok");
    launch(t, 1, 1, 1, 1, 1, 1, 0, p1, extra, "launch kernelParams and extra");
    void *nosize[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &nullp, CU_LAUNCH_PARAM_END};
    launch(t, 1, 1, 1, 1, 1, 1, 0, NULL, nosize, "launch extra without size");
    size_t small = 4;
    void *tiny_extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &nullp, CU_LAUNCH_PARAM_BUFFER_SIZE, &small,
                          CU_LAUNCH_PARAM_END};
    launch(t, 1, 1, 1, 1, 1, 1, 0, NULL, tiny_extra, "launch extra size 4 (needs 8)");
    size_t big = 64;
    uint64_t zeros[8] = {0};
    void *big_extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, zeros, CU_LAUNCH_PARAM_BUFFER_SIZE, &big, CU_LAUNCH_PARAM_END};
    launch(t, 1, 1, 1, 1, 1, 1, 0, NULL, big_extra, "launch extra size 64 (needs 8)");
    void *unknown[] = {(void *)(uintptr_t)7, NULL, CU_LAUNCH_PARAM_END};
    launch(t, 1, 1, 1, 1, 1, 1, 0, NULL, unknown, "launch extra unknown key");
    /* Last: no parameters at all for a kernel that has one. */
    launch(t, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, "launch kernelParams NULL (kernel has 1)");
}

static size_t smem_160(int block) { return (size_t)block * 160; }
static size_t smem_100k(int block) {
    (void)block;
    return 100 * 1024;
}

static void occupancy(CUmodule m) {
    CUfunction t = fn(m, "k_tiny"), d = fn(m, "k_dyn"), s = fn(m, "k_shared2k"), r = fn(m, "k_regs"),
               b = fn(m, "k_bounded");
    static const int blocks[] = {1, 32, 64, 96, 100, 128, 256, 512, 1024};
    for (volatile size_t i = 0; i < sizeof blocks / sizeof blocks[0]; ++i) {
        int n = -1;
        char label[64];
        snprintf(label, sizeof label, "occ k_tiny %d", blocks[i]);
        PV(label, cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, t, blocks[i], 0), "%d", n);
    }
    static const size_t smems[] = {1024, 6 * 1024, 7 * 1024, 10 * 1024, 48 * 1024, 100 * 1024, 111 * 1024,
                                   112 * 1024, 200 * 1024, 227 * 1024, 228 * 1024};
    for (volatile size_t i = 0; i < sizeof smems / sizeof smems[0]; ++i) {
        int n = -1, n2 = -1;
        char label[64];
        snprintf(label, sizeof label, "occ k_dyn 128 smem %zu", smems[i]);
        PV(label, cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, d, 128, smems[i]), "%d", n);
        snprintf(label, sizeof label, "occ k_shared2k 128 smem %zu", smems[i]);
        PV(label, cuOccupancyMaxActiveBlocksPerMultiprocessor(&n2, s, 128, smems[i]), "%d", n2);
    }
    int n = -1;
    PV("occ k_dyn 32 smem 7K", cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, d, 32, 7 * 1024), "%d", n);
    PV("occ k_regs 128", cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, r, 128, 0), "%d", n);
    PV("occ k_regs 256", cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, r, 256, 0), "%d", n);
    PV("occ k_regs 512", cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, r, 512, 0), "%d", n);
    PV("occ k_bounded 256", cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, b, 256, 0), "%d", n);
    PV("occ k_tiny 2048", cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, t, 2048, 0), "%d", n);
    PV("occ k_tiny 0", cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, t, 0, 0), "%d", n);
    PV("occ k_tiny -1", cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, t, -1, 0), "%d", n);
    PV("occ flags 0x100", cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, t, 128, 0, 0x100), "%d", n);
    PV("occ flags DISABLE_CACHING_OVERRIDE",
       cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, t, 128, 0, CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE),
       "%d", n);
    P("occ NULL out", cuOccupancyMaxActiveBlocksPerMultiprocessor(NULL, t, 128, 0));
    P("occ NULL func", cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, NULL, 128, 0));
    int g = -1, bs = -1;
    PV("potential k_tiny", cuOccupancyMaxPotentialBlockSize(&g, &bs, t, NULL, 0, 0), "grid/sms %d rem %d block %d",
       g / sms, g % sms, bs);
    PV("potential k_tiny limit 100", cuOccupancyMaxPotentialBlockSize(&g, &bs, t, NULL, 0, 100),
       "grid/sms %d rem %d block %d", g / sms, g % sms, bs);
    PV("potential k_tiny limit 256", cuOccupancyMaxPotentialBlockSize(&g, &bs, t, NULL, 0, 256),
       "grid/sms %d rem %d block %d", g / sms, g % sms, bs);
    PV("potential k_bounded", cuOccupancyMaxPotentialBlockSize(&g, &bs, b, NULL, 0, 0), "grid/sms %d rem %d block %d",
       g / sms, g % sms, bs);
    PV("potential k_dyn 100K", cuOccupancyMaxPotentialBlockSize(&g, &bs, d, NULL, 100 * 1024, 0),
       "grid/sms %d rem %d block %d", g / sms, g % sms, bs);
    PV("potential k_dyn cb 100K", cuOccupancyMaxPotentialBlockSize(&g, &bs, d, smem_100k, 0, 0),
       "grid/sms %d rem %d block %d", g / sms, g % sms, bs);
    PV("potential k_dyn cb 160/thread", cuOccupancyMaxPotentialBlockSize(&g, &bs, d, smem_160, 0, 0),
       "grid/sms %d rem %d block %d", g / sms, g % sms, bs);
    PV("potential k_regs", cuOccupancyMaxPotentialBlockSize(&g, &bs, r, NULL, 0, 0), "grid/sms %d rem %d block %d",
       g / sms, g % sms, bs);
    P("potential NULL grid", cuOccupancyMaxPotentialBlockSize(NULL, &bs, t, NULL, 0, 0));
    P("potential NULL func", cuOccupancyMaxPotentialBlockSize(&g, &bs, NULL, NULL, 0, 0));
}

static CUresult load_file_bytes(const void *data, size_t n) {
    char *path = ts_temp_write("probe.bin", data, n);
    CUmodule m = NULL;
    CUresult r = cuModuleLoad(&m, path);
    free(path);
    if (r == CUDA_SUCCESS) cuModuleUnload(m);
    return r;
}

static void loading(void) {
    CUmodule m = NULL;
    P("LoadData NULL image", cuModuleLoadData(&m, NULL));
    P("LoadData NULL module", cuModuleLoadData(NULL, cubin));
    P("Load NULL path", cuModuleLoad(&m, NULL));
    P("Load missing file", cuModuleLoad(&m, "/nonexistent/x.cubin"));
    P("LoadData sm_80 cubin", cuModuleLoadData(&m, cubin80));
    /* Garbage. */
    static unsigned char g[65537];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof g - 1; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        g[i] = (unsigned char)(x >> 24);
    }
    g[0] |= 0x80;
    g[sizeof g - 1] = 0;
    P("LoadData random bytes", cuModuleLoadData(&m, g));
    P("Load random bytes file", load_file_bytes(g, sizeof g - 1));
    memcpy(g, "\x7f" "ELF", 4);
    P("Load ELF magic + random file", load_file_bytes(g, 4096));
    memcpy(g, "\x50\xed\x55\xba", 4);
    P("Load fatbin magic + random file", load_file_bytes(g, 4096));
    P("Load empty file", load_file_bytes("", 0));
    static const char text[] = "hello, this is not PTX\n";
    P("LoadData plain text", cuModuleLoadData(&m, text));
    P("LoadData \"\"", cuModuleLoadData(&m, ""));
    const size_t cuts[] = {3, 4, 16, 64, 100, cubin_size / 2, cubin_size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
        char label[64];
        snprintf(label, sizeof label, "Load cubin truncated (cut %zu)", i);
        P(label, load_file_bytes(cubin, cuts[i]));
    }
    /* Section header flips inside the file. */
    unsigned char *c = malloc(cubin_size);
    uint64_t shoff;
    uint16_t shnum;
    memcpy(&shoff, (char *)cubin + 0x28, 8);
    memcpy(&shnum, (char *)cubin + 0x3c, 2);
    for (uint16_t s = 1; s < shnum; ++s) {
        uint32_t type;
        uint64_t align;
        const unsigned char *sh = (const unsigned char *)cubin + shoff + (uint64_t)s * 64;
        memcpy(&type, sh + 4, 4);
        memcpy(&align, sh + 48, 8);
        char label[96];
        if (type == 2) { /* symtab: entsize + 1, link + 1 */
            memcpy(c, cubin, cubin_size);
            c[shoff + (uint64_t)s * 64 + 56] ^= 1;
            P("Load symtab entsize flipped", load_file_bytes(c, cubin_size));
            memcpy(c, cubin, cubin_size);
            c[shoff + (uint64_t)s * 64 + 40] ^= 1;
            P("Load symtab link flipped", load_file_bytes(c, cubin_size));
        }
        if (type == 1 && align == 128) { /* a .text: offset + 1, size + 1 */
            memcpy(c, cubin, cubin_size);
            c[shoff + (uint64_t)s * 64 + 24] ^= 1;
            snprintf(label, sizeof label, "Load text section %u offset+1", s);
            P(label, load_file_bytes(c, cubin_size));
            memcpy(c, cubin, cubin_size);
            c[shoff + (uint64_t)s * 64 + 32] ^= 1;
            snprintf(label, sizeof label, "Load text section %u size+1", s);
            P(label, load_file_bytes(c, cubin_size));
        }
    }
    free(c);
    /* JIT options and logs. */
    char err[4096], info[4096];
    size_t n = strlen(ptx);
    char *bad = malloc(n + 64);
    const char *ret = strstr(ptx, "ret;");
    memcpy(bad, ptx, (size_t)(ret - ptx));
    strcpy(bad + (ret - ptx), "retx_not_an_instruction;");
    strcat(bad, ret + 4);
    memset(err, 0x7f, sizeof err);
    memset(info, 0x7f, sizeof info);
    CUjit_option o[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                        CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void *v[] = {err, (void *)(uintptr_t)sizeof err, info, (void *)(uintptr_t)sizeof info};
    PV("LoadDataEx bad PTX with logs", cuModuleLoadDataEx(&m, bad, 4, o, v), "err_len=%zu err_slot=%zu info_len=%zu info_slot=%zu",
       strnlen(err, sizeof err), (size_t)(uintptr_t)v[1], strnlen(info, sizeof info), (size_t)(uintptr_t)v[3]);
    printf("error log: %s\n", err);
    char small[32];
    memset(small, 0x7f, sizeof small);
    void *v2[] = {small, (void *)(uintptr_t)24};
    PV("LoadDataEx bad PTX 24-byte log", cuModuleLoadDataEx(&m, bad, 2, o, v2), "len=%zu slot=%zu canary=%d",
       strnlen(small, 24), (size_t)(uintptr_t)v2[1], (unsigned char)small[24] == 0x7f);
    P("LoadData bad PTX", cuModuleLoadData(&m, bad));
    ptx[n / 2] = 0;
    P("LoadData PTX cut in half", cuModuleLoadData(&m, ptx));
    free(bad);
    CUjit_option unk[] = {(CUjit_option)9999};
    void *uv[] = {NULL};
    P("LoadDataEx option 9999", cuModuleLoadDataEx(&m, cubin, 1, unk, uv));
    CUjit_option one[] = {CU_JIT_MAX_REGISTERS};
    P("LoadDataEx 1 option, NULL values", cuModuleLoadDataEx(&m, cubin, 1, one, NULL));
    P("LoadDataEx 1 option, NULL options", cuModuleLoadDataEx(&m, cubin, 1, NULL, uv));
    P("LoadDataEx 0 options NULL NULL", cuModuleLoadDataEx(&m, cubin, 0, NULL, NULL));
    if (m) cuModuleUnload(m);
}

static void lifetimes(CUcontext ctx) {
    CUmodule m = NULL;
    cuModuleLoadData(&m, cubin);
    CUfunction f = fn(m, "k_tiny");
    P("Unload", cuModuleUnload(m));
    P("Unload again", cuModuleUnload(m));
    P("Unload NULL", cuModuleUnload(NULL));
    CUfunction g = NULL;
    P("GetFunction on unloaded", cuModuleGetFunction(&g, m, "k_tiny"));
    int v = 0;
    P("FuncGetAttribute on unloaded", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    const char *name = NULL;
    P("FuncGetName on unloaded", cuFuncGetName(&name, f));
    void *nullp = NULL;
    void *p1[] = {&nullp};
    P("Launch function of unloaded module", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, p1, NULL));
    cuCtxSynchronize();
    /* A function of another context. */
    cuModuleLoadData(&m, cubin);
    f = fn(m, "k_tiny");
    CUcontext other = NULL;
    cuCtxCreate(&other, NULL, 0, dev);
    P("Launch function of another context", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, p1, NULL));
    cuCtxSynchronize();
    P("FuncGetAttribute from another context", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    CUmodule m2 = NULL;
    cuModuleLoadData(&m2, cubin);
    CUfunction f2 = fn(m2, "k_tiny");
    P("Unload module of another context", cuModuleUnload(m));
    cuCtxDestroy(other);
    CUcontext cur = NULL;
    cuCtxGetCurrent(&cur);
    printf("current after destroy is the first: %d\n", cur == ctx);
    P("FuncGetAttribute (context destroyed)", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f2));
    P("Unload (context destroyed)", cuModuleUnload(m2));
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
    CUcontext ctx = NULL;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuCtxCreate(&ctx, NULL, 0, dev) != CUDA_SUCCESS) {
        printf("no device\n");
        return 1;
    }
    int major = 0, minor = 0;
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    const int arch = major * 10 + minor;
    const char *opt32[] = {"-maxrregcount=32"};
    cubin = ts_compile_cubin(kSource, "probe.cu", arch, &cubin_size);
    cubin32 = ts_compile_cubin_opts(kSource, "probe32.cu", arch, opt32, 1, NULL);
    cubin80 = ts_compile_cubin(kSource, "probe80.cu", 80, NULL);
    ptx = ts_compile_ptx(kSource, "probe.cu", arch, NULL);
    if (!cubin || !cubin32 || !cubin80 || !ptx) {
        printf("compile failed\n");
        return 1;
    }
    printf("device sm_%d, %d SMs\n", arch, sms);
    CUmodule m = NULL;
    P("LoadData cubin", cuModuleLoadData(&m, cubin));
    attributes(m);
    lookups(m);
    occupancy(m);
    set_attributes(m);
    CUmodule pm = NULL;
    P("LoadData PTX", cuModuleLoadData(&pm, ptx));
    int v = 0;
    PV("PTX module k_tiny BINARY_VERSION", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_BINARY_VERSION, fn(pm, "k_tiny")),
       "%d", v);
    PV("PTX module k_tiny PTX_VERSION", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_PTX_VERSION, fn(pm, "k_tiny")), "%d",
       v);
    loading(); /* cuts the PTX */
    lifetimes(ctx);
    CUmodule fresh = NULL;
    P("LoadData cubin (for launches)", cuModuleLoadData(&fresh, cubin));
    launches(fresh);
    return 0;
}
