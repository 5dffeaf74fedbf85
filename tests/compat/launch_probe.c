#define _GNU_SOURCE
/*
 * launch_probe: library and kernel objects (cuLibrary*, cuKernel*), lazy
 * loading, cuLaunchKernelEx and its attributes, cooperative and cluster
 * launches, the function and module queries of CUDA 12 and the legacy launch
 * API, with good and bad arguments, one line per case, like module_probe.c.
 * Built against libnvlite (NVRTC at run time through tests/support/
 * ts_kernels.c) and run on a GPU twice: with libnvlite, and with libcuda
 * standing in for it (LD_LIBRARY_PATH=<dir with libnvlite.so.0 ->
 * libcuda.so.1>). One section per run:
 *
 *   launch_probe library    cuLibrary*, cuKernel*, CUkernel as CUfunction
 *   launch_probe funcs      cuFuncGetParamInfo/GetModule/IsLoaded/Load,
 *                           cuModuleGetFunctionCount/EnumerateFunctions,
 *                           cuOccupancyAvailableDynamicSMemPerBlock, loading mode
 *   launch_probe ex         cuLaunchKernelEx: every attribute, good and bad values
 *   launch_probe coop       cooperative launches: limits, grid-wide sync results
 *   launch_probe cluster    cluster launches: limits, cluster ids, distributed
 *                           shared memory results
 *   launch_probe legacy     cuFuncSetBlockShape, cuParamSet*, cuLaunch(Grid),
 *                           cuCtxAttach/Detach
 *   launch_probe cbuf       constant bank 0's driver area as the kernel sees it,
 *                           for plain, dynamic-shared, cooperative and cluster
 *                           launches (a kernel whose constant loads are patched
 *                           to read each word)
 *   launch_probe gc         a __grid_constant__ parameter read through its address
 *
 * Run "funcs" also with CUDA_MODULE_LOADING=EAGER and =LAZY. libcuda's outputs
 * are in tests/compat/expected/libcuda_launch_<section>.txt (run2 on the H200:
 * every section but legacy, whose first case faulted the context in that
 * version, and gc, whose reads around the parameter fault on libcuda).
 *
 *   cc -std=c11 -Iinclude -Itests tests/compat/launch_probe.c \
 *      build/obj/tests/support/ts_kernels.o -o launch_probe -Lbuild/lib -lnvlite -ldl
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

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define PROBE_WIDTH 56
#include "probe.h"

/* ------------------------------------------------------------------ kernels */

static const char kSource[] =
    "extern \"C\" {\n"
    "__device__ int g_dev[4] = {1, 2, 3, 4};\n"
    "__device__ double g_zero[100];\n"
    "__constant__ float c_vals[8] = {0.5f, 1.5f};\n"
    "__global__ void k_tiny(int* out) { if (out) out[threadIdx.x] = threadIdx.x; }\n"
    "__global__ void k_params(char c, int i, double d, short s, int* out) {\n"
    "    if (out) out[blockIdx.x * blockDim.x + threadIdx.x] = c + i + (int)d + s + g_dev[0] + (int)c_vals[0];\n"
    "}\n"
    "__global__ void k_legacy(int* out, int a, float f) {\n"
    "    unsigned b = blockIdx.y * gridDim.x + blockIdx.x;\n"
    "    out[b * blockDim.x + threadIdx.x] = a + (int)f + blockIdx.x * 1000 + blockIdx.y * 100000 + threadIdx.x * 10;\n"
    "}\n"
    "__global__ void k_dyn(int* out) {\n"
    "    extern __shared__ int d[];\n"
    "    d[threadIdx.x] = threadIdx.x;\n"
    "    __syncthreads();\n"
    "    if (out) out[threadIdx.x] = d[blockDim.x - 1 - threadIdx.x];\n"
    "}\n"
    "__global__ void __launch_bounds__(128) k_bounded(int* out) { if (out) out[threadIdx.x] = 1; }\n"
    "}\n";

/* Grid-wide sync (cooperative groups) and clusters: needs the toolkit's headers. */
static const char kCoopSource[] =
    "#include <cooperative_groups.h>\n"
    "namespace cg = cooperative_groups;\n"
    "extern \"C\" {\n"
    /* Each round, every block writes its slot, the grid syncs, and every block
     * checks its neighbour's slot: a sync that did not wait shows up. */
    "__global__ void k_grid(unsigned* slots, unsigned* errors, unsigned rounds) {\n"
    "    cg::grid_group g = cg::this_grid();\n"
    "    if (!g.is_valid()) { if (threadIdx.x == 0) atomicAdd(errors, 1000000u); return; }\n"
    "    unsigned n = gridDim.x, b = blockIdx.x;\n"
    "    for (unsigned r = 1; r <= rounds; ++r) {\n"
    "        if (threadIdx.x == 0) slots[b] = r * 100000u + b;\n"
    "        g.sync();\n"
    "        if (threadIdx.x == 0 && slots[(b + 1) % n] != r * 100000u + (b + 1) % n) atomicAdd(errors, 1u);\n"
    "        g.sync();\n"
    "    }\n"
    "}\n"
    "__global__ void k_valid(unsigned* out) { if (threadIdx.x == 0) out[blockIdx.x] = cg::this_grid().is_valid() ? 1 : 2; }\n"
    /* Cluster of 2 fixed at compile time: each block reads its partner's shared word. */
    "__global__ void __cluster_dims__(2, 1, 1) k_cluster2(unsigned* out) {\n"
    "    __shared__ unsigned s;\n"
    "    cg::cluster_group c = cg::this_cluster();\n"
    "    if (threadIdx.x == 0) s = blockIdx.x * 7u + 1u;\n"
    "    c.sync();\n"
    "    unsigned* other = c.map_shared_rank(&s, c.block_rank() ^ 1u);\n"
    "    if (threadIdx.x == 0) out[blockIdx.x] = *other;\n"
    "    c.sync();\n"
    "}\n"
    /* Cluster shape from the launch: ids and the distributed shared memory sum. */
    "__global__ void k_clusterq(unsigned* out) {\n"
    "    __shared__ unsigned s;\n"
    "    cg::cluster_group c = cg::this_cluster();\n"
    "    unsigned lin = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;\n"
    "    if (threadIdx.x == 0) s = lin + 1u;\n"
    "    c.sync();\n"
    "    unsigned sum = 0;\n"
    "    for (unsigned r = 0; r < c.num_blocks(); ++r) sum += *c.map_shared_rank(&s, r);\n"
    "    dim3 ci = c.block_index(), cd = c.dim_blocks();\n"
    "    unsigned cid[3], ncid[3];\n"
    "    asm volatile(\"mov.u32 %0, %%clusterid.x;\" : \"=r\"(cid[0]));\n"
    "    asm volatile(\"mov.u32 %0, %%clusterid.y;\" : \"=r\"(cid[1]));\n"
    "    asm volatile(\"mov.u32 %0, %%clusterid.z;\" : \"=r\"(cid[2]));\n"
    "    asm volatile(\"mov.u32 %0, %%nclusterid.x;\" : \"=r\"(ncid[0]));\n"
    "    asm volatile(\"mov.u32 %0, %%nclusterid.y;\" : \"=r\"(ncid[1]));\n"
    "    asm volatile(\"mov.u32 %0, %%nclusterid.z;\" : \"=r\"(ncid[2]));\n"
    "    if (threadIdx.x == 0) {\n"
    "        unsigned* o = out + lin * 12;\n"
    "        o[0] = c.block_rank(); o[1] = c.num_blocks(); o[2] = ci.x; o[3] = ci.y; o[4] = ci.z;\n"
    "        o[5] = cd.x; o[6] = cd.y; o[7] = cd.z; o[8] = cid[0] | (cid[1] << 10) | (cid[2] << 20);\n"
    "        o[9] = ncid[0] | (ncid[1] << 10) | (ncid[2] << 20); o[10] = sum; o[11] = 0xc0ffee;\n"
    "    }\n"
    "    c.sync();\n"
    "}\n"
    "}\n";

/* Reads %envreg0..31 (constant bank 0 at 0x40 + 4 * i on sm_90); the probe
 * patches the loads to read other words of the bank. Also the address of a
 * __grid_constant__ parameter. */
static const char kDumpSource[] =
    "struct S { unsigned v[4]; };\n"
    "extern \"C\" __global__ void k_dump(unsigned* out, const __grid_constant__ S s) {\n"
    "    if (threadIdx.x != 0 || blockIdx.x != 0 || blockIdx.y != 0 || blockIdx.z != 0) return;\n"
    "#define R(i) { unsigned v; asm volatile(\"mov.u32 %0, %%envreg\" #i \";\" : \"=r\"(v)); out[i] = v; }\n"
    "    R(0) R(1) R(2) R(3) R(4) R(5) R(6) R(7) R(8) R(9) R(10) R(11) R(12) R(13) R(14) R(15)\n"
    "    R(16) R(17) R(18) R(19) R(20) R(21) R(22) R(23) R(24) R(25) R(26) R(27) R(28) R(29) R(30) R(31)\n"
    "    unsigned long long a = (unsigned long long)(const void*)&s;\n"
    "    out[32] = (unsigned)a; out[33] = (unsigned)(a >> 32);\n"
    "    out[34] = s.v[0]; out[35] = s.v[3];\n"
    "}\n"
    /* The grid workspace a cooperative launch gets (envreg1 high, envreg2 low). */
    "extern \"C\" __global__ void k_ws(unsigned* out) {\n"
    "    unsigned hi, lo;\n"
    "    asm volatile(\"mov.u32 %0, %%envreg1;\" : \"=r\"(hi));\n"
    "    asm volatile(\"mov.u32 %0, %%envreg2;\" : \"=r\"(lo));\n"
    "    if (threadIdx.x != 0 || blockIdx.x != 0) return;\n"
    "    const volatile unsigned* ws = (const volatile unsigned*)(((unsigned long long)hi << 32) | lo);\n"
    "    out[0] = ws != 0; out[1] = ws ? ws[0] : 0; out[2] = ws ? ws[1] : 0;\n"
    "}\n"
    /* Reads constant bank 0 through the generic address of a __grid_constant__
     * parameter (offset 0x218): words 'from' .. 'from + n' of the bank. */
    "extern \"C\" __global__ void k_gc(unsigned* out, const __grid_constant__ S s, int from, int n) {\n"
    "    if (threadIdx.x != 0 || blockIdx.x != 0) return;\n"
    "    const volatile unsigned* p = (const volatile unsigned*)&s - 0x218 / 4;\n"
    "    for (int i = 0; i < n; ++i) out[i] = p[from + i];\n"
    "}\n";

/* Managed memory (cuLibraryGetManaged). */
static const char kManagedSource[] =
    "extern \"C\" {\n"
    "__managed__ int m_val = 42;\n"
    "__device__ int d_val = 7;\n"
    "__global__ void k_m(int* out) { if (out) *out = m_val + d_val; }\n"
    "}\n";

static CUdevice dev;
static int arch, sms;
static void *cubin, *coop_cubin, *dump_cubin;
static size_t cubin_size, dump_size;
static char cuda_inc[2][512];

static const void *compile_with_headers(const char *src, const char *name) {
    const char *home = getenv("CUDA_HOME");
    if (!home || !*home) home = "/usr/local/cuda";
    snprintf(cuda_inc[0], sizeof cuda_inc[0], "-I%s/include", home);
    snprintf(cuda_inc[1], sizeof cuda_inc[1], "-I%s/include/cccl", home);
    const char *opts[2] = {cuda_inc[0], cuda_inc[1]};
    return ts_compile_cubin_opts(src, name, arch, opts, 2, NULL);
}

static CUfunction fn(CUmodule m, const char *name) {
    CUfunction f = NULL;
    CUresult r = cuModuleGetFunction(&f, m, name);
    if (r != CUDA_SUCCESS) printf("setup: cuModuleGetFunction(%s) => %s\n", name, rname(r));
    return f;
}

static CUdeviceptr dalloc(size_t n) {
    CUdeviceptr p = 0;
    CUresult r = cuMemAlloc(&p, n);
    if (r != CUDA_SUCCESS) printf("setup: cuMemAlloc(%zu) => %s\n", n, rname(r));
    else cuMemsetD8(p, 0, n);
    return p;
}

static void sync_report(const char *label) {
    CUresult s = cuCtxSynchronize();
    if (s != CUDA_SUCCESS) printf("%-*s => sync %s\n", PROBE_WIDTH, label, rname(s));
}

/* ------------------------------------------------------------------ library */

static void library(void) {
    CUlibrary lib = NULL, bad = NULL;
    P("LoadData NULL library", cuLibraryLoadData(NULL, cubin, NULL, NULL, 0, NULL, NULL, 0));
    P("LoadData NULL code", cuLibraryLoadData(&bad, NULL, NULL, NULL, 0, NULL, NULL, 0));
    static unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; ++i) junk[i] = (unsigned char)(i * 131u + 7u);
    P("LoadData random bytes", cuLibraryLoadData(&bad, junk, NULL, NULL, 0, NULL, NULL, 0));
    P("LoadData 1 jit option, NULL arrays", cuLibraryLoadData(&bad, cubin, NULL, NULL, 1, NULL, NULL, 0));
    P("LoadData 1 library option, NULL arrays", cuLibraryLoadData(&bad, cubin, NULL, NULL, 0, NULL, NULL, 1));
    CUlibraryOption o99[] = {(CUlibraryOption)99};
    void *v0[] = {NULL};
    P("LoadData library option 99", cuLibraryLoadData(&bad, cubin, NULL, NULL, 0, o99, v0, 1));
    CUlibraryOption pres[] = {CU_LIBRARY_BINARY_IS_PRESERVED};
    void *v1[] = {(void *)(uintptr_t)1};
    PV("LoadData BINARY_IS_PRESERVED=1", cuLibraryLoadData(&bad, cubin, NULL, NULL, 0, pres, v1, 1), "%d", bad != NULL);
    if (bad) P("Unload (preserved)", cuLibraryUnload(bad));
    bad = NULL;
    CUlibraryOption uni[] = {CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE};
    PV("LoadData HOST_UNIVERSAL table NULL", cuLibraryLoadData(&bad, cubin, NULL, NULL, 0, uni, v0, 1), "%d",
       bad != NULL);
    if (bad) cuLibraryUnload(bad);
    bad = NULL;
    CUjit_option jo[] = {CU_JIT_MAX_REGISTERS};
    void *jv[] = {(void *)(uintptr_t)32};
    PV("LoadData cubin with CU_JIT_MAX_REGISTERS", cuLibraryLoadData(&bad, cubin, jo, jv, 1, NULL, NULL, 0), "%d",
       bad != NULL);
    if (bad) cuLibraryUnload(bad);
    bad = NULL;
    P("LoadFromFile NULL path", cuLibraryLoadFromFile(&bad, NULL, NULL, NULL, 0, NULL, NULL, 0));
    P("LoadFromFile missing", cuLibraryLoadFromFile(&bad, "/nonexistent/x.cubin", NULL, NULL, 0, NULL, NULL, 0));
    char *path = ts_temp_write("lib.cubin", cubin, cubin_size);
    PV("LoadFromFile cubin", cuLibraryLoadFromFile(&bad, path, NULL, NULL, 0, NULL, NULL, 0), "%d", bad != NULL);
    free(path);
    if (bad) cuLibraryUnload(bad);

    /* Without a current context. */
    CUcontext ctx = NULL;
    cuCtxPopCurrent(&ctx);
    PV("LoadData without a current context", cuLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0), "%d",
       lib != NULL);
    CUkernel k = NULL;
    P("GetKernel without a context", cuLibraryGetKernel(&k, lib, "k_params"));
    CUfunction kf = NULL;
    P("KernelGetFunction without a context", cuKernelGetFunction(&kf, k));
    CUmodule lm = NULL;
    P("LibraryGetModule without a context", cuLibraryGetModule(&lm, lib));
    int v = -1;
    PV("KernelGetAttribute NUM_REGS without a context", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, dev),
       "%d", v);
    CUdeviceptr gp = 0;
    size_t gsz = 0;
    P("LibraryGetGlobal without a context", cuLibraryGetGlobal(&gp, &gsz, lib, "g_dev"));
    cuCtxPushCurrent(ctx);

    unsigned count = 99;
    PV("GetKernelCount", cuLibraryGetKernelCount(&count, lib), "%u", count);
    P("GetKernelCount NULL count", cuLibraryGetKernelCount(NULL, lib));
    P("GetKernelCount NULL lib", cuLibraryGetKernelCount(&count, NULL));
    CUkernel ks[16];
    memset(ks, 0, sizeof ks);
    PV("EnumerateKernels count", cuLibraryEnumerateKernels(ks, count, lib), "filled=%d",
       (int)(ks[0] != NULL) + (int)(count > 1 && ks[count - 1] != NULL));
    memset(ks, 0, sizeof ks);
    PV("EnumerateKernels count-1", cuLibraryEnumerateKernels(ks, count - 1, lib), "last_filled=%d",
       count > 1 && ks[count - 2] != NULL);
    memset(ks, 0, sizeof ks);
    PV("EnumerateKernels count+1", cuLibraryEnumerateKernels(ks, count + 1, lib), "extra_filled=%d", ks[count] != NULL);
    P("EnumerateKernels 0", cuLibraryEnumerateKernels(ks, 0, lib));
    P("EnumerateKernels NULL array", cuLibraryEnumerateKernels(NULL, count, lib));
    P("EnumerateKernels NULL lib", cuLibraryEnumerateKernels(ks, count, NULL));
    cuLibraryEnumerateKernels(ks, count, lib);
    for (unsigned i = 0; i < count && i < 16; ++i) {
        const char *name = NULL;
        char label[64];
        snprintf(label, sizeof label, "enumerated %u name", i);
        PV(label, cuKernelGetName(&name, ks[i]), "%s", name ? name : "(null)");
    }
    CUkernel k2 = NULL;
    PV("GetKernel k_params", cuLibraryGetKernel(&k2, lib, "k_params"), "same=%d", k2 == k);
    P("GetKernel missing", cuLibraryGetKernel(&k2, lib, "nope"));
    P("GetKernel variable name", cuLibraryGetKernel(&k2, lib, "g_dev"));
    P("GetKernel \"\"", cuLibraryGetKernel(&k2, lib, ""));
    P("GetKernel NULL name", cuLibraryGetKernel(&k2, lib, NULL));
    P("GetKernel NULL out", cuLibraryGetKernel(NULL, lib, "k_tiny"));
    P("GetKernel NULL lib", cuLibraryGetKernel(&k2, NULL, "k_tiny"));
    const char *name = NULL;
    PV("KernelGetName", cuKernelGetName(&name, k), "%s", name ? name : "(null)");
    P("KernelGetName NULL out", cuKernelGetName(NULL, k));
    P("KernelGetName NULL kernel", cuKernelGetName(&name, NULL));
    for (size_t i = 0; i < 6; ++i) {
        size_t off = 999, size = 999;
        char label[64];
        snprintf(label, sizeof label, "KernelGetParamInfo %zu", i);
        PV(label, cuKernelGetParamInfo(k, i, &off, &size), "off=%zu size=%zu", off, size);
    }
    size_t off = 0, size = 0;
    P("KernelGetParamInfo NULL offset", cuKernelGetParamInfo(k, 0, NULL, &size));
    P("KernelGetParamInfo NULL size", cuKernelGetParamInfo(k, 0, &off, NULL));
    P("KernelGetParamInfo NULL kernel", cuKernelGetParamInfo(NULL, 0, &off, &size));
    CUlibrary back = NULL;
    PV("KernelGetLibrary", cuKernelGetLibrary(&back, k), "same=%d", back == lib);
    P("KernelGetLibrary NULL out", cuKernelGetLibrary(NULL, k));
    P("KernelGetLibrary NULL kernel", cuKernelGetLibrary(&back, NULL));

    /* Attributes. */
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
                 {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "MAX_DYNAMIC_SHARED_SIZE_BYTES"},
                 {CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, "PREFERRED_SHARED_MEMORY_CARVEOUT"},
                 {CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, "CLUSTER_SIZE_MUST_BE_SET"},
                 {CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, "NON_PORTABLE_CLUSTER_SIZE_ALLOWED"},
                 {CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, "CLUSTER_SCHEDULING_POLICY_PREFERENCE"}};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; ++i) {
        char label[96];
        v = -12345;
        snprintf(label, sizeof label, "KernelGetAttribute %s", attrs[i].name);
        PV(label, cuKernelGetAttribute(&v, attrs[i].a, k, dev), "%d", v);
    }
    P("KernelGetAttribute 9999", cuKernelGetAttribute(&v, (CUfunction_attribute)9999, k, dev));
    P("KernelGetAttribute NULL pi", cuKernelGetAttribute(NULL, CU_FUNC_ATTRIBUTE_NUM_REGS, k, dev));
    P("KernelGetAttribute NULL kernel", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, NULL, dev));
    P("KernelGetAttribute device 99", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 99));
    P("KernelGetAttribute device -1", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, -1));
    P("KernelSetAttribute MAX_DYN 60000", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 60000, k, dev));
    v = -1;
    PV("KernelGetAttribute MAX_DYN after set", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, dev),
       "%d", v);
    P("KernelSetAttribute MAX_DYN 1<<30", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 30, k, dev));
    P("KernelSetAttribute CARVEOUT 50", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50, k, dev));
    P("KernelSetAttribute CARVEOUT 101", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101, k, dev));
    P("KernelSetAttribute NUM_REGS", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS, 32, k, dev));
    P("KernelSetAttribute NON_PORTABLE 1", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1, k, dev));
    P("KernelSetAttribute NON_PORTABLE 2", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 2, k, dev));
    P("KernelSetAttribute SCHED_POLICY 1", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 1, k, dev));
    P("KernelSetAttribute REQUIRED_CLUSTER_WIDTH 2", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2, k, dev));
    P("KernelSetAttribute device 99", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0, k, 99));
    P("KernelSetAttribute NULL kernel", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0, NULL, dev));
    P("KernelSetCacheConfig PREFER_L1", cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_L1, dev));
    P("KernelSetCacheConfig 99", cuKernelSetCacheConfig(k, (CUfunc_cache)99, dev));
    P("KernelSetCacheConfig device 99", cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_L1, 99));
    P("KernelSetCacheConfig NULL", cuKernelSetCacheConfig(NULL, CU_FUNC_CACHE_PREFER_L1, dev));

    /* Functions and modules in the current context. */
    CUfunction f1 = NULL, f2 = NULL;
    P("KernelGetFunction", cuKernelGetFunction(&f1, k));
    PV("KernelGetFunction again", cuKernelGetFunction(&f2, k), "same=%d", f1 == f2);
    P("KernelGetFunction NULL out", cuKernelGetFunction(NULL, k));
    P("KernelGetFunction NULL kernel", cuKernelGetFunction(&f2, NULL));
    v = -1;
    PV("FuncGetAttribute MAX_DYN of kernel's function", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f1),
       "%d", v);
    CUfunctionLoadingState st = (CUfunctionLoadingState)-1;
    PV("FuncIsLoaded kernel's function", cuFuncIsLoaded(&st, f1), "%d", (int)st);
    CUmodule fm = NULL, lm2 = NULL;
    P("FuncGetModule kernel's function", cuFuncGetModule(&fm, f1));
    PV("LibraryGetModule", cuLibraryGetModule(&lm, lib), "same_as_func_module=%d", lm == fm);
    PV("LibraryGetModule again", cuLibraryGetModule(&lm2, lib), "same=%d", lm == lm2);
    P("LibraryGetModule NULL out", cuLibraryGetModule(NULL, lib));
    P("LibraryGetModule NULL lib", cuLibraryGetModule(&lm2, NULL));
    CUfunction mf = NULL;
    PV("ModuleGetFunction on library module", cuModuleGetFunction(&mf, lm, "k_params"), "same_as_kernel_func=%d",
       mf == f1);
    gp = 0;
    gsz = 0;
    PV("LibraryGetGlobal g_dev", cuLibraryGetGlobal(&gp, &gsz, lib, "g_dev"), "%zu", gsz);
    CUdeviceptr mp = 0;
    size_t msz = 0;
    PV("ModuleGetGlobal g_dev of library module", cuModuleGetGlobal(&mp, &msz, lm, "g_dev"), "same=%d", mp == gp);
    PV("LibraryGetGlobal c_vals", cuLibraryGetGlobal(&gp, &gsz, lib, "c_vals"), "%zu", gsz);
    P("LibraryGetGlobal missing", cuLibraryGetGlobal(&gp, &gsz, lib, "nope"));
    P("LibraryGetGlobal kernel name", cuLibraryGetGlobal(&gp, &gsz, lib, "k_tiny"));
    P("LibraryGetGlobal NULL NULL", cuLibraryGetGlobal(NULL, NULL, lib, "g_dev"));
    P("LibraryGetGlobal NULL name", cuLibraryGetGlobal(&gp, &gsz, lib, NULL));
    P("LibraryGetGlobal NULL lib", cuLibraryGetGlobal(&gp, &gsz, NULL, "g_dev"));
    P("LibraryGetManaged non-managed g_dev", cuLibraryGetManaged(&gp, &gsz, lib, "g_dev"));
    P("LibraryGetManaged missing", cuLibraryGetManaged(&gp, &gsz, lib, "nope"));
    P("LibraryGetManaged NULL NULL", cuLibraryGetManaged(NULL, NULL, lib, "g_dev"));
    P("LibraryGetManaged NULL lib", cuLibraryGetManaged(&gp, &gsz, NULL, "g_dev"));
    void *uf = NULL;
    P("LibraryGetUnifiedFunction k_tiny", cuLibraryGetUnifiedFunction(&uf, lib, "k_tiny"));

    /* A CUkernel where a CUfunction is expected. */
    CUfunction asf = (CUfunction)k;
    v = -1;
    PV("FuncGetAttribute(CUkernel) NUM_REGS", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, asf), "%d", v);
    P("FuncSetAttribute(CUkernel) MAX_DYN 1000", cuFuncSetAttribute(asf, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1000));
    v = -1;
    PV("KernelGetAttribute MAX_DYN after FuncSetAttribute", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, dev),
       "%d", v);
    PV("FuncGetAttribute(kernel's function) MAX_DYN", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f1), "%d", v);
    P("FuncSetCacheConfig(CUkernel)", cuFuncSetCacheConfig(asf, CU_FUNC_CACHE_PREFER_SHARED));
    name = NULL;
    PV("FuncGetName(CUkernel)", cuFuncGetName(&name, asf), "%s", name ? name : "(null)");
    st = (CUfunctionLoadingState)-1;
    PV("FuncIsLoaded(CUkernel)", cuFuncIsLoaded(&st, asf), "%d", (int)st);
    fm = NULL;
    PV("FuncGetModule(CUkernel)", cuFuncGetModule(&fm, asf), "same_as_library_module=%d", fm == lm);
    off = size = 999;
    PV("FuncGetParamInfo(CUkernel) 2", cuFuncGetParamInfo(asf, 2, &off, &size), "off=%zu size=%zu", off, size);
    P("FuncLoad(CUkernel)", cuFuncLoad(asf));
    int nb = -1;
    PV("Occupancy(CUkernel) 128", cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, asf, 128, 0), "%d", nb);
    size_t avail = 0;
    PV("OccupancyAvailableDynamicSMem(CUkernel) 1x128", cuOccupancyAvailableDynamicSMemPerBlock(&avail, asf, 1, 128), "%zu", avail);
    int grid = -1, block = -1;
    PV("OccupancyMaxPotentialBlockSize(CUkernel)", cuOccupancyMaxPotentialBlockSize(&grid, &block, asf, NULL, 0, 0), "block %d",
       block);
    CUdeviceptr out = dalloc(4096);
    char c = 3;
    int i = 40;
    double d = 500.0;
    short s = 6000;
    void *params[] = {&c, &i, &d, &s, &out};
    P("LaunchKernel(CUkernel)", cuLaunchKernel(asf, 2, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    sync_report("LaunchKernel(CUkernel)");
    int host[128] = {0};
    cuMemcpyDtoH(host, out, sizeof host);
    int bad_values = 0;
    for (int j = 0; j < 128; ++j) bad_values += host[j] != 3 + 40 + 500 + 6000 + 1 + 0;
    printf("LaunchKernel(CUkernel) results: %d of 128 wrong\n", bad_values);
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = 1;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 32;
    cfg.blockDimY = cfg.blockDimZ = 1;
    P("LaunchKernelEx(CUkernel)", cuLaunchKernelEx(&cfg, asf, params, NULL));
    sync_report("LaunchKernelEx(CUkernel)");
    P("LaunchCooperativeKernel(CUkernel)", cuLaunchCooperativeKernel(asf, 1, 1, 1, 32, 1, 1, 0, NULL, params));
    sync_report("LaunchCooperativeKernel(CUkernel)");

    /* The library's module and functions in a second context. */
    CUcontext other = NULL;
    cuCtxCreate(&other, NULL, 0, dev);
    CUfunction of = NULL;
    PV("KernelGetFunction in another context", cuKernelGetFunction(&of, k), "differs=%d", of != f1);
    CUmodule om = NULL;
    PV("LibraryGetModule in another context", cuLibraryGetModule(&om, lib), "differs=%d", om != lm);
    CUdeviceptr ogp = 0;
    PV("LibraryGetGlobal in another context", cuLibraryGetGlobal(&ogp, &gsz, lib, "g_dev"), "differs=%d", ogp != mp);
    P("LaunchKernel(function of the first context)", cuLaunchKernel(f1, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    sync_report("LaunchKernel(function of the first context)");
    void *nullp[] = {&c, &i, &d, &s, &(CUdeviceptr){0}};
    P("LaunchKernel(CUkernel) in another context", cuLaunchKernel(asf, 1, 1, 1, 1, 1, 1, 0, NULL, nullp, NULL));
    sync_report("LaunchKernel(CUkernel) in another context");
    cuCtxDestroy(other);
    CUcontext cur = NULL;
    cuCtxGetCurrent(&cur);
    printf("current after destroy is the first: %d\n", cur == ctx);
    P("FuncGetAttribute(function of destroyed context)", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, of));

    /* Unloading. */
    P("ModuleUnload(library module)", cuModuleUnload(lm));
    PV("FuncGetAttribute after ModuleUnload(library module)", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f1), "%d", v);
    CUfunction f3 = NULL;
    PV("KernelGetFunction after ModuleUnload(library module)", cuKernelGetFunction(&f3, k), "same=%d", f3 == f1);
    P("LibraryUnload", cuLibraryUnload(lib));
    P("LibraryUnload again", cuLibraryUnload(lib));
    P("LibraryUnload NULL", cuLibraryUnload(NULL));
    P("KernelGetName after unload", cuKernelGetName(&name, k));
    P("KernelGetFunction after unload", cuKernelGetFunction(&f3, k));
    P("FuncGetAttribute(kernel's function) after unload", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f1));
    P("LaunchKernel(CUkernel) after unload", cuLaunchKernel(asf, 1, 1, 1, 1, 1, 1, 0, NULL, nullp, NULL));
    sync_report("LaunchKernel(CUkernel) after unload");
    cuMemFree(out);

    /* Managed variables. */
    void *mcubin = ts_compile_cubin(kManagedSource, "managed.cu", arch, NULL);
    CUlibrary ml = NULL;
    PV("LoadData with a __managed__ variable", cuLibraryLoadData(&ml, mcubin, NULL, NULL, 0, NULL, NULL, 0), "%d", ml != NULL);
    if (ml) {
        CUdeviceptr p = 0;
        size_t n = 0;
        PV("LibraryGetManaged m_val", cuLibraryGetManaged(&p, &n, ml, "m_val"), "%zu value=%d", n,
           p ? *(volatile int *)(uintptr_t)p : -1);
        P("LibraryGetManaged d_val", cuLibraryGetManaged(&p, &n, ml, "d_val"));
        PV("LibraryGetGlobal m_val", cuLibraryGetGlobal(&p, &n, ml, "m_val"), "%zu", n);
        cuLibraryUnload(ml);
    }
    CUmodule mm = NULL;
    P("ModuleLoadData with a __managed__ variable", cuModuleLoadData(&mm, mcubin));
    if (mm) cuModuleUnload(mm);
    free(mcubin);
}

/* ------------------------------------------------------------------ funcs */

static void funcs(void) {
    CUmoduleLoadingMode mode = (CUmoduleLoadingMode)0;
    const char *env = getenv("CUDA_MODULE_LOADING");
    PV("ModuleGetLoadingMode", cuModuleGetLoadingMode(&mode), "%d (CUDA_MODULE_LOADING=%s)", (int)mode,
       env ? env : "(unset)");
    CUmodule m = NULL;
    P("ModuleLoadData", cuModuleLoadData(&m, cubin));
    unsigned count = 99;
    PV("ModuleGetFunctionCount", cuModuleGetFunctionCount(&count, m), "%u", count);
    P("ModuleGetFunctionCount NULL count", cuModuleGetFunctionCount(NULL, m));
    P("ModuleGetFunctionCount NULL module", cuModuleGetFunctionCount(&count, NULL));
    CUfunction fs[16];
    memset(fs, 0, sizeof fs);
    PV("ModuleEnumerateFunctions count", cuModuleEnumerateFunctions(fs, count, m), "last_filled=%d",
       count > 0 && fs[count - 1] != NULL);
    memset(fs, 0, sizeof fs);
    PV("ModuleEnumerateFunctions count-1", cuModuleEnumerateFunctions(fs, count - 1, m), "last_filled=%d",
       count > 1 && fs[count - 2] != NULL);
    memset(fs, 0, sizeof fs);
    PV("ModuleEnumerateFunctions count+1", cuModuleEnumerateFunctions(fs, count + 1, m), "extra_filled=%d",
       fs[count] != NULL);
    P("ModuleEnumerateFunctions 0", cuModuleEnumerateFunctions(fs, 0, m));
    P("ModuleEnumerateFunctions NULL array", cuModuleEnumerateFunctions(NULL, count, m));
    P("ModuleEnumerateFunctions NULL module", cuModuleEnumerateFunctions(fs, count, NULL));
    cuModuleEnumerateFunctions(fs, count, m);
    for (unsigned i = 0; i < count && i < 16; ++i) {
        const char *name = NULL;
        CUfunctionLoadingState st = (CUfunctionLoadingState)-1;
        cuFuncIsLoaded(&st, fs[i]);
        char label[64];
        snprintf(label, sizeof label, "enumerated %u", i);
        PV(label, cuFuncGetName(&name, fs[i]), "%s loaded=%d", name ? name : "(null)", (int)st);
    }
    CUfunction t = NULL, p = NULL;
    CUfunctionLoadingState st = (CUfunctionLoadingState)-1;
    PV("FuncIsLoaded before GetFunction (enumerated k_tiny?)", cuFuncIsLoaded(&st, fs[0]), "%d", (int)st);
    P("ModuleGetFunction k_tiny", cuModuleGetFunction(&t, m, "k_tiny"));
    st = (CUfunctionLoadingState)-1;
    PV("FuncIsLoaded after GetFunction", cuFuncIsLoaded(&st, t), "%d", (int)st);
    P("FuncLoad", cuFuncLoad(t));
    st = (CUfunctionLoadingState)-1;
    PV("FuncIsLoaded after FuncLoad", cuFuncIsLoaded(&st, t), "%d", (int)st);
    P("FuncLoad again", cuFuncLoad(t));
    P("FuncLoad NULL", cuFuncLoad(NULL));
    P("FuncIsLoaded NULL state", cuFuncIsLoaded(NULL, t));
    P("FuncIsLoaded NULL func", cuFuncIsLoaded(&st, NULL));
    cuModuleGetFunction(&p, m, "k_params");
    st = (CUfunctionLoadingState)-1;
    PV("FuncIsLoaded k_params (other function)", cuFuncIsLoaded(&st, p), "%d", (int)st);
    void *nullp = NULL;
    void *p1[] = {&nullp};
    CUfunction dyn = fn(m, "k_dyn");
    st = (CUfunctionLoadingState)-1;
    cuFuncIsLoaded(&st, dyn);
    printf("k_dyn loaded before launch: %d\n", (int)st);
    P("LaunchKernel k_dyn", cuLaunchKernel(dyn, 1, 1, 1, 32, 1, 1, 128, NULL, p1, NULL));
    sync_report("LaunchKernel k_dyn");
    st = (CUfunctionLoadingState)-1;
    PV("FuncIsLoaded k_dyn after launch", cuFuncIsLoaded(&st, dyn), "%d", (int)st);
    CUmodule back = NULL;
    PV("FuncGetModule", cuFuncGetModule(&back, t), "same=%d", back == m);
    P("FuncGetModule NULL out", cuFuncGetModule(NULL, t));
    P("FuncGetModule NULL func", cuFuncGetModule(&back, NULL));
    for (size_t i = 0; i < 6; ++i) {
        size_t off = 999, size = 999;
        char label[64];
        snprintf(label, sizeof label, "FuncGetParamInfo k_params %zu", i);
        PV(label, cuFuncGetParamInfo(p, i, &off, &size), "off=%zu size=%zu", off, size);
    }
    size_t off = 0, size = 0;
    P("FuncGetParamInfo NULL offset", cuFuncGetParamInfo(p, 0, NULL, &size));
    P("FuncGetParamInfo NULL size", cuFuncGetParamInfo(p, 0, &off, NULL));
    P("FuncGetParamInfo NULL func", cuFuncGetParamInfo(NULL, 0, &off, &size));

    /* cuOccupancyAvailableDynamicSMemPerBlock. */
    CUfunction b = fn(m, "k_bounded");
    static const int nbs[] = {0, 1, 2, 3, 7, 16, 32, 33};
    static const int bss[] = {32, 96, 128, 256, 1024};
    for (size_t i = 0; i < sizeof nbs / sizeof nbs[0]; ++i)
        for (size_t j = 0; j < sizeof bss / sizeof bss[0]; ++j) {
            size_t avail = 12345;
            char label[80];
            snprintf(label, sizeof label, "AvailDynSMem k_dyn blocks %d x %d", nbs[i], bss[j]);
            PV(label, cuOccupancyAvailableDynamicSMemPerBlock(&avail, dyn, nbs[i], bss[j]), "%zu", avail);
        }
    size_t avail = 12345;
    PV("AvailDynSMem k_bounded 1 x 256", cuOccupancyAvailableDynamicSMemPerBlock(&avail, b, 1, 256), "%zu", avail);
    avail = 12345;
    PV("AvailDynSMem k_dyn 1 x 0", cuOccupancyAvailableDynamicSMemPerBlock(&avail, dyn, 1, 0), "%zu", avail);
    avail = 12345;
    PV("AvailDynSMem k_dyn 1 x -1", cuOccupancyAvailableDynamicSMemPerBlock(&avail, dyn, 1, -1), "%zu", avail);
    avail = 12345;
    PV("AvailDynSMem k_dyn -1 x 32", cuOccupancyAvailableDynamicSMemPerBlock(&avail, dyn, -1, 32), "%zu", avail);
    avail = 12345;
    PV("AvailDynSMem k_dyn 1 x 2048", cuOccupancyAvailableDynamicSMemPerBlock(&avail, dyn, 1, 2048), "%zu", avail);
    P("AvailDynSMem NULL out", cuOccupancyAvailableDynamicSMemPerBlock(NULL, dyn, 1, 32));
    P("AvailDynSMem NULL func", cuOccupancyAvailableDynamicSMemPerBlock(&avail, NULL, 1, 32));
    int optin = 0;
    cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin);
    avail = 12345;
    PV("AvailDynSMem k_dyn 1 x 32 after opt-in", cuOccupancyAvailableDynamicSMemPerBlock(&avail, dyn, 1, 32), "%zu", avail);
    avail = 12345;
    PV("AvailDynSMem k_dyn 2 x 32 after opt-in", cuOccupancyAvailableDynamicSMemPerBlock(&avail, dyn, 2, 32), "%zu", avail);

    P("ModuleUnload", cuModuleUnload(m));
    P("FuncIsLoaded after unload", cuFuncIsLoaded(&st, t));
    P("FuncLoad after unload", cuFuncLoad(t));
    P("FuncGetModule after unload", cuFuncGetModule(&back, t));
    P("FuncGetParamInfo after unload", cuFuncGetParamInfo(p, 0, &off, &size));
    P("ModuleGetFunctionCount after unload", cuModuleGetFunctionCount(&count, m));
}

/* ------------------------------------------------------------------ cuLaunchKernelEx */

static CUlaunchConfig config(unsigned gx, unsigned gy, unsigned gz, unsigned bx, CUlaunchAttribute *attrs, unsigned n) {
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = gx;
    c.gridDimY = gy;
    c.gridDimZ = gz;
    c.blockDimX = bx;
    c.blockDimY = 1;
    c.blockDimZ = 1;
    c.attrs = attrs;
    c.numAttrs = n;
    return c;
}

/* One attribute on a launch of k_tiny (1 block of 32). */
static void ex1(CUfunction f, const char *label, CUlaunchAttribute a) {
    CUdeviceptr out = 0;
    void *params[] = {&out};
    CUlaunchConfig c = config(1, 1, 1, 32, &a, 1);
    P(label, cuLaunchKernelEx(&c, f, params, NULL));
    sync_report(label);
}

static CUlaunchAttribute attr(CUlaunchAttributeID id) {
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = id;
    return a;
}

static void ex(void) {
    CUmodule m = NULL;
    P("ModuleLoadData", cuModuleLoadData(&m, cubin));
    CUfunction t = fn(m, "k_tiny"), prm = fn(m, "k_params");
    CUdeviceptr out = 0;
    void *params[] = {&out};
    CUlaunchConfig c = config(1, 1, 1, 32, NULL, 0);
    P("Ex no attributes", cuLaunchKernelEx(&c, t, params, NULL));
    P("Ex NULL config", cuLaunchKernelEx(NULL, t, params, NULL));
    P("Ex NULL function", cuLaunchKernelEx(&c, NULL, params, NULL));
    c = config(1, 1, 1, 32, NULL, 1);
    P("Ex numAttrs 1, attrs NULL", cuLaunchKernelEx(&c, t, params, NULL));
    sync_report("Ex numAttrs 1, attrs NULL");
    c = config(0, 1, 1, 32, NULL, 0);
    P("Ex grid x 0", cuLaunchKernelEx(&c, t, params, NULL));
    c = config(1, 1, 1, 1025, NULL, 0);
    P("Ex block x 1025", cuLaunchKernelEx(&c, t, params, NULL));
    c = config(1, 1, 1, 32, NULL, 0);
    c.sharedMemBytes = 48 * 1024 + 1;
    P("Ex smem 48K+1", cuLaunchKernelEx(&c, t, params, NULL));
    c = config(1, 1, 1, 32, NULL, 0);
    c.hStream = (CUstream)(uintptr_t)0x1234;
    P("Ex bogus stream", cuLaunchKernelEx(&c, t, params, NULL));
    /* Parameters through 'extra' and both. */
    size_t sz = sizeof out;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &out, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz, CU_LAUNCH_PARAM_END};
    c = config(1, 1, 1, 32, NULL, 0);
    P("Ex extra", cuLaunchKernelEx(&c, t, NULL, extra));
    P("Ex kernelParams and extra", cuLaunchKernelEx(&c, t, params, extra));
    sync_report("Ex extra");
    /* Results of a launch with parameters. */
    CUdeviceptr res = dalloc(4096);
    char ch = 5;
    int i = 70;
    double d = 800.0;
    short s = 9000;
    void *pp[] = {&ch, &i, &d, &s, &res};
    CUlaunchAttribute pa = attr(CU_LAUNCH_ATTRIBUTE_PRIORITY);
    pa.value.priority = -1;
    c = config(3, 1, 1, 96, &pa, 1);
    P("Ex k_params 3x96 priority -1", cuLaunchKernelEx(&c, prm, pp, NULL));
    sync_report("Ex k_params");
    int host[288];
    cuMemcpyDtoH(host, res, sizeof host);
    int wrong = 0;
    for (int j = 0; j < 288; ++j) wrong += host[j] != 5 + 70 + 800 + 9000 + 1 + 0;
    printf("Ex k_params results: %d of 288 wrong\n", wrong);
    cuMemFree(res);

    CUlaunchAttribute a = attr(CU_LAUNCH_ATTRIBUTE_IGNORE);
    a.value.pad[0] = 0x55;
    ex1(t, "attr IGNORE (garbage value)", a);
    a = attr(CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW);
    CUdeviceptr win = dalloc(1 << 20);
    a.value.accessPolicyWindow.base_ptr = (void *)(uintptr_t)win;
    a.value.accessPolicyWindow.num_bytes = 1 << 20;
    a.value.accessPolicyWindow.hitRatio = 0.5f;
    a.value.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
    a.value.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
    ex1(t, "attr ACCESS_POLICY_WINDOW valid", a);
    a.value.accessPolicyWindow.hitRatio = 1.5f;
    ex1(t, "attr ACCESS_POLICY_WINDOW hitRatio 1.5", a);
    a.value.accessPolicyWindow.hitRatio = 0.5f;
    a.value.accessPolicyWindow.num_bytes = (size_t)1 << 40;
    ex1(t, "attr ACCESS_POLICY_WINDOW 1 TiB", a);
    a.value.accessPolicyWindow.num_bytes = 1 << 20;
    a.value.accessPolicyWindow.hitProp = (CUaccessProperty)7;
    ex1(t, "attr ACCESS_POLICY_WINDOW hitProp 7", a);
    a.value.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
    a.value.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_PERSISTING;
    ex1(t, "attr ACCESS_POLICY_WINDOW missProp PERSISTING", a);
    cuMemFree(win);
    a = attr(CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
    a.value.cooperative = 1;
    ex1(t, "attr COOPERATIVE 1", a);
    a.value.cooperative = 0;
    ex1(t, "attr COOPERATIVE 0", a);
    a.value.cooperative = 7;
    ex1(t, "attr COOPERATIVE 7", a);
    a = attr(CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY);
    a.value.syncPolicy = CU_SYNC_POLICY_SPIN;
    ex1(t, "attr SYNCHRONIZATION_POLICY SPIN", a);
    a = attr(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    a.value.clusterDim.x = 1;
    a.value.clusterDim.y = 1;
    a.value.clusterDim.z = 1;
    ex1(t, "attr CLUSTER_DIMENSION 1x1x1", a);
    a.value.clusterDim.x = 0;
    ex1(t, "attr CLUSTER_DIMENSION 0x1x1", a);
    a = attr(CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE);
    a.value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
    ex1(t, "attr CLUSTER_SCHEDULING_POLICY SPREAD", a);
    a.value.clusterSchedulingPolicyPreference = (CUclusterSchedulingPolicy)9;
    ex1(t, "attr CLUSTER_SCHEDULING_POLICY 9", a);
    a = attr(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
    a.value.programmaticStreamSerializationAllowed = 1;
    ex1(t, "attr PROGRAMMATIC_STREAM_SERIALIZATION 1", a);
    a.value.programmaticStreamSerializationAllowed = 2;
    ex1(t, "attr PROGRAMMATIC_STREAM_SERIALIZATION 2", a);
    CUevent timed = NULL, untimed = NULL;
    cuEventCreate(&timed, CU_EVENT_DEFAULT);
    cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING);
    a = attr(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT);
    a.value.programmaticEvent.event = untimed;
    ex1(t, "attr PROGRAMMATIC_EVENT untimed", a);
    P("EventQuery after PROGRAMMATIC_EVENT launch", cuEventQuery(untimed));
    a.value.programmaticEvent.triggerAtBlockStart = 1;
    ex1(t, "attr PROGRAMMATIC_EVENT untimed triggerAtBlockStart", a);
    a.value.programmaticEvent.triggerAtBlockStart = 0;
    a.value.programmaticEvent.flags = 1;
    ex1(t, "attr PROGRAMMATIC_EVENT flags 1", a);
    a.value.programmaticEvent.flags = 0;
    a.value.programmaticEvent.event = timed;
    ex1(t, "attr PROGRAMMATIC_EVENT timed event", a);
    a.value.programmaticEvent.event = NULL;
    ex1(t, "attr PROGRAMMATIC_EVENT NULL event", a);
    a = attr(CU_LAUNCH_ATTRIBUTE_PRIORITY);
    a.value.priority = 0;
    ex1(t, "attr PRIORITY 0", a);
    a.value.priority = -5;
    ex1(t, "attr PRIORITY -5", a);
    a.value.priority = 3;
    ex1(t, "attr PRIORITY 3", a);
    a.value.priority = -1000;
    ex1(t, "attr PRIORITY -1000", a);
    a = attr(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP);
    a.value.memSyncDomainMap.default_ = 0;
    a.value.memSyncDomainMap.remote = 1;
    ex1(t, "attr MEM_SYNC_DOMAIN_MAP 0/1", a);
    a.value.memSyncDomainMap.remote = 9;
    ex1(t, "attr MEM_SYNC_DOMAIN_MAP 0/9", a);
    a = attr(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN);
    a.value.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
    ex1(t, "attr MEM_SYNC_DOMAIN REMOTE", a);
    a.value.memSyncDomain = (CUlaunchMemSyncDomain)5;
    ex1(t, "attr MEM_SYNC_DOMAIN 5", a);
    a = attr(CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION);
    a.value.preferredClusterDim.x = 2;
    a.value.preferredClusterDim.y = 1;
    a.value.preferredClusterDim.z = 1;
    ex1(t, "attr PREFERRED_CLUSTER_DIMENSION 2 alone", a);
    a = attr(CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT);
    a.value.launchCompletionEvent.event = untimed;
    ex1(t, "attr LAUNCH_COMPLETION_EVENT untimed", a);
    a.value.launchCompletionEvent.event = timed;
    ex1(t, "attr LAUNCH_COMPLETION_EVENT timed", a);
    a.value.launchCompletionEvent.event = NULL;
    ex1(t, "attr LAUNCH_COMPLETION_EVENT NULL", a);
    a = attr(CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE);
    a.value.deviceUpdatableKernelNode.deviceUpdatable = 1;
    ex1(t, "attr DEVICE_UPDATABLE_KERNEL_NODE 1", a);
    a.value.deviceUpdatableKernelNode.deviceUpdatable = 0;
    ex1(t, "attr DEVICE_UPDATABLE_KERNEL_NODE 0", a);
    a = attr(CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
    a.value.sharedMemCarveout = 50;
    ex1(t, "attr PREFERRED_SHARED_MEMORY_CARVEOUT 50", a);
    a.value.sharedMemCarveout = 101;
    ex1(t, "attr PREFERRED_SHARED_MEMORY_CARVEOUT 101", a);
    a.value.sharedMemCarveout = (unsigned)-1;
    ex1(t, "attr PREFERRED_SHARED_MEMORY_CARVEOUT -1", a);
    a = attr((CUlaunchAttributeID)16);
    a.value.pad[0] = 1;
    ex1(t, "attr 16 (NVLINK_UTIL_CENTRIC_SCHEDULING) 1", a);
    a.value.pad[0] = 2;
    ex1(t, "attr 16 (NVLINK_UTIL_CENTRIC_SCHEDULING) 2", a);
    a = attr((CUlaunchAttributeID)15);
    ex1(t, "attr 15", a);
    a = attr((CUlaunchAttributeID)17);
    ex1(t, "attr 17", a);
    a = attr((CUlaunchAttributeID)99);
    ex1(t, "attr 99", a);
    /* Two of the same. */
    CUlaunchAttribute two[2] = {attr(CU_LAUNCH_ATTRIBUTE_PRIORITY), attr(CU_LAUNCH_ATTRIBUTE_PRIORITY)};
    two[1].value.priority = -1;
    c = config(1, 1, 1, 32, two, 2);
    P("attr PRIORITY twice", cuLaunchKernelEx(&c, t, params, NULL));
    sync_report("attr PRIORITY twice");
    /* Streams. */
    CUstream nb = NULL;
    cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING);
    c = config(1, 1, 1, 32, NULL, 0);
    c.hStream = nb;
    P("Ex on a stream", cuLaunchKernelEx(&c, t, params, NULL));
    c.hStream = CU_STREAM_PER_THREAD;
    P("Ex on CU_STREAM_PER_THREAD", cuLaunchKernelEx(&c, t, params, NULL));
    sync_report("Ex on streams");
    cuStreamDestroy(nb);
    cuEventDestroy(timed);
    cuEventDestroy(untimed);
    cuModuleUnload(m);
}

/* ------------------------------------------------------------------ cooperative */

static int max_coop_blocks(CUfunction f, int block, size_t smem) {
    int per_sm = 0;
    cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, block, smem);
    return per_sm * sms;
}

static void coop(void) {
    int attr_coop = -1;
    PV("DeviceGetAttribute COOPERATIVE_LAUNCH", cuDeviceGetAttribute(&attr_coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev),
       "%d", attr_coop);
    if (!coop_cubin) {
        printf("no cooperative kernels (NVRTC could not compile them)\n");
        return;
    }
    CUmodule m = NULL;
    P("ModuleLoadData (cooperative kernels)", cuModuleLoadData(&m, coop_cubin));
    CUfunction g = fn(m, "k_grid"), valid = fn(m, "k_valid");
    const int block = 256;
    int max = max_coop_blocks(g, block, 0);
    int per_sm = max / (sms ? sms : 1);
    printf("k_grid: %d blocks per SM at %d threads, %d in all\n", per_sm, block, max);
    CUdeviceptr slots = dalloc((size_t)max * 4 + 64), errors = dalloc(64), vout = dalloc(4096);
    unsigned rounds = 50;
    void *params[] = {&slots, &errors, &rounds};
    static const int fractions[] = {1, 2, 3};
    for (size_t i = 0; i < sizeof fractions / sizeof fractions[0]; ++i) {
        unsigned blocks = (unsigned)(max / fractions[i]);
        cuMemsetD8(errors, 0, 64);
        char label[96];
        snprintf(label, sizeof label, "Cooperative k_grid %u blocks (max/%d)", blocks, fractions[i]);
        P(label, cuLaunchCooperativeKernel(g, blocks, 1, 1, block, 1, 1, 0, NULL, params));
        sync_report(label);
        unsigned e = 12345;
        cuMemcpyDtoH(&e, errors, 4);
        printf("%-*s errors=%u\n", PROBE_WIDTH, label, e);
    }
    cuMemsetD8(errors, 0, 64);
    P("Cooperative k_grid max+1 blocks", cuLaunchCooperativeKernel(g, (unsigned)max + 1, 1, 1, block, 1, 1, 0, NULL, params));
    sync_report("Cooperative k_grid max+1");
    P("Cooperative k_grid 2D grid at max", cuLaunchCooperativeKernel(g, (unsigned)max / 2, 2, 1, block, 1, 1, 0, NULL, params));
    sync_report("Cooperative 2D");
    P("Cooperative k_grid 2D grid above max", cuLaunchCooperativeKernel(g, (unsigned)max / 2 + 1, 2, 1, block, 1, 1, 0, NULL, params));
    sync_report("Cooperative 2D above");
    P("Cooperative k_grid with 100K smem", cuLaunchCooperativeKernel(g, (unsigned)sms, 1, 1, block, 1, 1, 100 * 1024, NULL, params));
    sync_report("Cooperative smem");
    int big_per_sm = 0;
    cuFuncSetAttribute(g, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 * 1024);
    cuOccupancyMaxActiveBlocksPerMultiprocessor(&big_per_sm, g, block, 100 * 1024);
    printf("k_grid with 100K smem: %d blocks per SM\n", big_per_sm);
    cuMemsetD8(errors, 0, 64);
    P("Cooperative k_grid 100K smem, SMs*per_sm blocks",
      cuLaunchCooperativeKernel(g, (unsigned)(sms * big_per_sm), 1, 1, block, 1, 1, 100 * 1024, NULL, params));
    sync_report("Cooperative smem ok");
    unsigned e = 12345;
    cuMemcpyDtoH(&e, errors, 4);
    printf("Cooperative 100K smem errors=%u\n", e);
    P("Cooperative k_grid 100K smem, one block more",
      cuLaunchCooperativeKernel(g, (unsigned)(sms * big_per_sm) + 1, 1, 1, block, 1, 1, 100 * 1024, NULL, params));
    sync_report("Cooperative smem over");
    P("Cooperative NULL function", cuLaunchCooperativeKernel(NULL, 1, 1, 1, 32, 1, 1, 0, NULL, params));
    P("Cooperative NULL params", cuLaunchCooperativeKernel(g, 1, 1, 1, 32, 1, 1, 0, NULL, NULL));
    P("Cooperative block 1025", cuLaunchCooperativeKernel(g, 1, 1, 1, 1025, 1, 1, 0, NULL, params));
    /* Validity of the grid group: cooperative or not. */
    void *vp[] = {&vout};
    P("k_valid plain launch", cuLaunchKernel(valid, 4, 1, 1, 32, 1, 1, 0, NULL, vp, NULL));
    sync_report("k_valid plain");
    unsigned v[4] = {0};
    cuMemcpyDtoH(v, vout, sizeof v);
    printf("k_valid plain: %u %u %u %u (1 valid, 2 not)\n", v[0], v[1], v[2], v[3]);
    P("k_valid cooperative launch", cuLaunchCooperativeKernel(valid, 4, 1, 1, 32, 1, 1, 0, NULL, vp));
    sync_report("k_valid coop");
    cuMemcpyDtoH(v, vout, sizeof v);
    printf("k_valid cooperative: %u %u %u %u\n", v[0], v[1], v[2], v[3]);
    CUlaunchAttribute a = attr(CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
    a.value.cooperative = 1;
    CUlaunchConfig c = config(4, 1, 1, 32, &a, 1);
    memset(v, 0, sizeof v);
    cuMemsetD8(vout, 0, 64);
    P("k_valid cuLaunchKernelEx COOPERATIVE", cuLaunchKernelEx(&c, valid, vp, NULL));
    sync_report("k_valid ex");
    cuMemcpyDtoH(v, vout, sizeof v);
    printf("k_valid ex cooperative: %u %u %u %u\n", v[0], v[1], v[2], v[3]);
    c = config((unsigned)max + 1, 1, 1, block, &a, 1);
    P("Ex COOPERATIVE max+1 blocks", cuLaunchKernelEx(&c, g, params, NULL));
    sync_report("Ex coop too large");
    /* Cooperative and a stream. */
    CUstream s = NULL;
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    cuMemsetD8(errors, 0, 64);
    P("Cooperative on a stream", cuLaunchCooperativeKernel(g, (unsigned)max, 1, 1, block, 1, 1, 0, s, params));
    P("StreamSynchronize", cuStreamSynchronize(s));
    cuMemcpyDtoH(&e, errors, 4);
    printf("Cooperative on a stream errors=%u\n", e);
    cuStreamDestroy(s);
    cuMemFree(slots);
    cuMemFree(errors);
    cuMemFree(vout);
    cuModuleUnload(m);
}

/* ------------------------------------------------------------------ cluster */

static void cluster_ex(CUfunction f, const char *label, unsigned gx, unsigned gy, unsigned gz, unsigned cx, unsigned cy,
                       unsigned cz, CUdeviceptr out, int check) {
    CUlaunchAttribute a = attr(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    a.value.clusterDim.x = cx;
    a.value.clusterDim.y = cy;
    a.value.clusterDim.z = cz;
    CUlaunchConfig c = config(gx, gy, gz, 64, &a, cx ? 1 : 0);
    void *params[] = {&out};
    size_t n = (size_t)gx * gy * gz;
    cuMemsetD8(out, 0, n * 48);
    CUresult r = CUDA_SUCCESS;
    P(label, (r = cuLaunchKernelEx(&c, f, params, NULL)));
    sync_report(label);
    if (r != CUDA_SUCCESS || !check) return;
    unsigned *h = malloc(n * 48);
    cuMemcpyDtoH(h, out, n * 48);
    /* Expected, as the programming guide defines the cluster of a block. */
    unsigned wrong = 0;
    for (unsigned z = 0; z < gz; ++z)
        for (unsigned y = 0; y < gy; ++y)
            for (unsigned x = 0; x < gx; ++x) {
                unsigned lin = (z * gy + y) * gx + x;
                const unsigned *o = h + lin * 12;
                unsigned ix = x % cx, iy = y % cy, iz = z % cz;
                unsigned rank = (iz * cy + iy) * cx + ix;
                unsigned cid = (x / cx) | ((y / cy) << 10) | ((z / cz) << 20);
                unsigned ncid = (gx / cx) | ((gy / cy) << 10) | ((gz / cz) << 20);
                unsigned sum = 0;
                for (unsigned k = 0; k < cz; ++k)
                    for (unsigned j = 0; j < cy; ++j)
                        for (unsigned i = 0; i < cx; ++i) {
                            unsigned bx = x - ix + i, by = y - iy + j, bz = z - iz + k;
                            sum += (bz * gy + by) * gx + bx + 1;
                        }
                int bad = o[0] != rank || o[1] != cx * cy * cz || o[2] != ix || o[3] != iy || o[4] != iz ||
                          o[5] != cx || o[6] != cy || o[7] != cz || o[8] != cid || o[9] != ncid || o[10] != sum ||
                          o[11] != 0xc0ffee;
                if (bad && wrong < 3)
                    printf("  block (%u,%u,%u): rank %u n %u idx %u,%u,%u dims %u,%u,%u cid %#x ncid %#x sum %u tag %#x\n",
                           x, y, z, o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8], o[9], o[10], o[11]);
                wrong += bad;
            }
    printf("%-*s %u of %zu blocks wrong\n", PROBE_WIDTH, label, wrong, n);
    free(h);
}

static void cluster(void) {
    int v = -1;
    PV("DeviceGetAttribute CLUSTER_LAUNCH", cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, dev), "%d", v);
    if (!coop_cubin) {
        printf("no cluster kernels (NVRTC could not compile them)\n");
        return;
    }
    CUmodule m = NULL;
    P("ModuleLoadData (cluster kernels)", cuModuleLoadData(&m, coop_cubin));
    CUfunction c2 = fn(m, "k_cluster2"), q = fn(m, "k_clusterq");
    static const struct {
        CUfunction_attribute a;
        const char *name;
    } attrs[] = {{CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, "CLUSTER_SIZE_MUST_BE_SET"},
                 {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, "REQUIRED_CLUSTER_WIDTH"},
                 {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, "REQUIRED_CLUSTER_HEIGHT"},
                 {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, "REQUIRED_CLUSTER_DEPTH"},
                 {CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, "NON_PORTABLE_CLUSTER_SIZE_ALLOWED"},
                 {CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, "CLUSTER_SCHEDULING_POLICY_PREFERENCE"}};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; ++i) {
        char label[96];
        v = -12345;
        snprintf(label, sizeof label, "attr k_cluster2 %s", attrs[i].name);
        PV(label, cuFuncGetAttribute(&v, attrs[i].a, c2), "%d", v);
        v = -12345;
        snprintf(label, sizeof label, "attr k_clusterq %s", attrs[i].name);
        PV(label, cuFuncGetAttribute(&v, attrs[i].a, q), "%d", v);
    }
    CUdeviceptr out = dalloc(1 << 20);
    void *params[] = {&out};
    /* Compile-time cluster of 2. */
    P("k_cluster2 LaunchKernel grid 8", cuLaunchKernel(c2, 8, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    sync_report("k_cluster2 8");
    unsigned h[8] = {0};
    cuMemcpyDtoH(h, out, sizeof h);
    int wrong = 0;
    for (unsigned b = 0; b < 8; ++b) wrong += h[b] != (b ^ 1u) * 7u + 1u;
    printf("k_cluster2 grid 8: %d of 8 wrong\n", wrong);
    P("k_cluster2 LaunchKernel grid 7", cuLaunchKernel(c2, 7, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    sync_report("k_cluster2 7");
    cluster_ex(c2, "k_cluster2 Ex cluster 2x1x1 (same)", 8, 1, 1, 2, 1, 1, out, 0);
    cluster_ex(c2, "k_cluster2 Ex cluster 4x1x1 (differs)", 8, 1, 1, 4, 1, 1, out, 0);
    cluster_ex(c2, "k_cluster2 Ex cluster 1x1x1", 8, 1, 1, 1, 1, 1, out, 0);
    /* Cluster shapes from the launch. */
    P("k_clusterq LaunchKernel (no cluster)", cuLaunchKernel(q, 4, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    sync_report("k_clusterq no cluster");
    cluster_ex(q, "k_clusterq no cluster attr", 4, 2, 1, 0, 0, 0, out, 0);
    cluster_ex(q, "k_clusterq 2x1x1 grid 8x3x1", 8, 3, 1, 2, 1, 1, out, 1);
    cluster_ex(q, "k_clusterq 3x1x1 grid 9x2x1", 9, 2, 1, 3, 1, 1, out, 1);
    cluster_ex(q, "k_clusterq 1x2x2 grid 3x4x2", 3, 4, 2, 1, 2, 2, out, 1);
    cluster_ex(q, "k_clusterq 2x2x2 grid 4x4x4", 4, 4, 4, 2, 2, 2, out, 1);
    cluster_ex(q, "k_clusterq 8x1x1 grid 64x1x1", 64, 1, 1, 8, 1, 1, out, 1);
    cluster_ex(q, "k_clusterq 5x1x1 grid 35x1x1", 35, 1, 1, 5, 1, 1, out, 1);
    cluster_ex(q, "k_clusterq 7x1x1 grid 1001x1x1", 1001, 1, 1, 7, 1, 1, out, 1);
    cluster_ex(q, "k_clusterq 2x1x1 grid 7x1x1 (not a multiple)", 7, 1, 1, 2, 1, 1, out, 0);
    cluster_ex(q, "k_clusterq 1x3x1 grid 2x4x1 (not a multiple)", 2, 4, 1, 1, 3, 1, out, 0);
    cluster_ex(q, "k_clusterq 9x1x1 (above 8)", 9, 1, 1, 9, 1, 1, out, 0);
    cluster_ex(q, "k_clusterq 16x1x1 (above 8)", 16, 1, 1, 16, 1, 1, out, 0);
    P("set NON_PORTABLE_CLUSTER_SIZE_ALLOWED 1",
      cuFuncSetAttribute(q, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    v = -1;
    PV("get NON_PORTABLE_CLUSTER_SIZE_ALLOWED", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, q),
       "%d", v);
    cluster_ex(q, "k_clusterq 16x1x1 non-portable", 32, 1, 1, 16, 1, 1, out, 1);
    cluster_ex(q, "k_clusterq 32x1x1 non-portable", 32, 1, 1, 32, 1, 1, out, 0);
    P("set NON_PORTABLE_CLUSTER_SIZE_ALLOWED 2",
      cuFuncSetAttribute(q, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 2));
    P("set REQUIRED_CLUSTER_WIDTH 2", cuFuncSetAttribute(q, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2));
    P("set CLUSTER_SCHEDULING_POLICY_PREFERENCE SPREAD",
      cuFuncSetAttribute(q, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, CU_CLUSTER_SCHEDULING_POLICY_SPREAD));
    P("set CLUSTER_SCHEDULING_POLICY_PREFERENCE 7",
      cuFuncSetAttribute(q, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 7));
    /* Cluster and cooperative together, preferred cluster dimension. */
    CUlaunchAttribute two[2] = {attr(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION), attr(CU_LAUNCH_ATTRIBUTE_COOPERATIVE)};
    two[0].value.clusterDim.x = 2;
    two[0].value.clusterDim.y = two[0].value.clusterDim.z = 1;
    two[1].value.cooperative = 1;
    CUlaunchConfig c = config(8, 1, 1, 64, two, 2);
    P("k_clusterq cluster 2 + cooperative", cuLaunchKernelEx(&c, q, params, NULL));
    sync_report("cluster + coop");
    two[1] = attr(CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION);
    two[1].value.preferredClusterDim.x = 4;
    two[1].value.preferredClusterDim.y = two[1].value.preferredClusterDim.z = 1;
    c = config(8, 1, 1, 64, two, 2);
    P("k_clusterq cluster 2 + preferred 4", cuLaunchKernelEx(&c, q, params, NULL));
    sync_report("cluster + preferred");
    two[1].value.preferredClusterDim.x = 3;
    P("k_clusterq cluster 2 + preferred 3", cuLaunchKernelEx(&c, q, params, NULL));
    sync_report("cluster + preferred 3");
    /* Occupancy of clusters. */
    CUlaunchConfig oc = config(8, 1, 1, 64, two, 1);
    int n = -1;
    PV("OccupancyMaxActiveClusters k_clusterq 2", cuOccupancyMaxActiveClusters(&n, q, &oc), "%d", n);
    int size = -1;
    PV("OccupancyMaxPotentialClusterSize k_clusterq", cuOccupancyMaxPotentialClusterSize(&size, q, &oc), "%d", size);
    cuMemFree(out);
    cuModuleUnload(m);
}

/* ------------------------------------------------------------------ legacy */

static void legacy(void) {
    CUcontext cur = NULL, got = NULL;
    cuCtxGetCurrent(&cur);
    PV("CtxAttach", cuCtxAttach(&got, 0), "same=%d", got == cur);
    P("CtxAttach flags 1", cuCtxAttach(&got, 1));
    P("CtxAttach NULL", cuCtxAttach(NULL, 0));
    P("CtxDetach (attached)", cuCtxDetach(cur));
    P("CtxDetach NULL", cuCtxDetach(NULL));
    CUcontext tmp = NULL;
    cuCtxCreate(&tmp, NULL, 0, dev);
    PV("CtxDetach of a fresh context", cuCtxDetach(tmp), "then current is the first: %d",
       (cuCtxGetCurrent(&got), got == cur));
    P("CtxDestroy after Detach", cuCtxDestroy(tmp));
    cuCtxSetCurrent(cur);
    CUcontext popped = NULL;
    cuCtxPopCurrent(&popped);
    P("CtxAttach without a current context", cuCtxAttach(&got, 0));
    cuCtxPushCurrent(popped);

    int major = -1, minor = -1;
    PV("DeviceComputeCapability", cuDeviceComputeCapability(&major, &minor, dev), "%d.%d", major, minor);
    CUdevprop prop;
    memset(&prop, 0, sizeof prop);
    PV("DeviceGetProperties", cuDeviceGetProperties(&prop, dev), "threads %d smem %d regs %d", prop.maxThreadsPerBlock,
       prop.sharedMemPerBlock, prop.regsPerBlock);

    CUmodule m = NULL;
    P("ModuleLoadData", cuModuleLoadData(&m, cubin));
    CUfunction f = fn(m, "k_legacy"), d = fn(m, "k_dyn");
    /* Every launch here has valid parameters: a fault would spoil the rest
     * (libcuda launches with what it has, defaults included). */
    CUdeviceptr out = dalloc(1 << 20);
    /* k_legacy(int* out, int a, float f): 8 + 4 + 4 bytes. */
    P("ParamSetSize 16", cuParamSetSize(f, 16));
    P("ParamSetv out", cuParamSetv(f, 0, &out, sizeof out));
    P("ParamSeti a", cuParamSeti(f, 8, 123));
    P("ParamSetf f", cuParamSetf(f, 12, 4.0f));
    int h[32 * 12];
    cuMemsetD8(out, 0xff, 4096);
    P("Launch with parameters, no block shape", cuLaunch(f));
    sync_report("Launch no block shape");
    cuMemcpyDtoH(h, out, 4 * sizeof(int));
    printf("no block shape: out[0..3] = %d %d %d %d (127 for thread 0; -1 untouched)\n", h[0], h[1], h[2], h[3]);
    P("FuncSetBlockShape 0x1x1", cuFuncSetBlockShape(f, 0, 1, 1));
    P("FuncSetBlockShape -1x1x1", cuFuncSetBlockShape(f, -1, 1, 1));
    P("FuncSetBlockShape 2048x1x1", cuFuncSetBlockShape(f, 2048, 1, 1));
    P("FuncSetBlockShape 1x1x65", cuFuncSetBlockShape(f, 1, 1, 65));
    P("FuncSetBlockShape NULL", cuFuncSetBlockShape(NULL, 32, 1, 1));
    P("FuncSetBlockShape 33x1x1", cuFuncSetBlockShape(f, 33, 1, 1));
    P("FuncSetSharedSize 0", cuFuncSetSharedSize(f, 0));
    P("FuncSetSharedSize 1<<20", cuFuncSetSharedSize(f, 1 << 20));
    P("FuncSetSharedSize NULL", cuFuncSetSharedSize(NULL, 0));
    P("Launch with shared size 1<<20 set", cuLaunch(f));
    sync_report("Launch shared 1<<20");
    P("FuncSetSharedSize 0 again", cuFuncSetSharedSize(f, 0));
    P("ParamSetSize 0", cuParamSetSize(f, 0));
    P("ParamSetSize 4097", cuParamSetSize(f, 4097));
    P("ParamSetSize 40000", cuParamSetSize(f, 40000));
    P("ParamSetSize NULL", cuParamSetSize(NULL, 16));
    P("ParamSetSize 16 again", cuParamSetSize(f, 16));
    P("ParamSetv out again", cuParamSetv(f, 0, &out, sizeof out));
    P("ParamSeti a again", cuParamSeti(f, 8, 123));
    P("ParamSetf f again", cuParamSetf(f, 12, 4.0f));
    P("ParamSeti offset 16 (at the end)", cuParamSeti(f, 16, 1));
    P("ParamSeti offset 14 (across the end)", cuParamSeti(f, 14, 1));
    P("ParamSeti offset -4", cuParamSeti(f, -4, 1));
    P("ParamSetv past the size", cuParamSetv(f, 12, &out, 8));
    P("ParamSetv NULL ptr", cuParamSetv(f, 0, NULL, 8));
    P("ParamSetv 0 bytes", cuParamSetv(f, 0, &out, 0));
    P("ParamSeti NULL func", cuParamSeti(NULL, 0, 1));
    P("ParamSetf NULL func", cuParamSetf(NULL, 0, 1.0f));
    P("ParamSetv NULL func", cuParamSetv(NULL, 0, &out, 8));
    P("ParamSetTexRef", cuParamSetTexRef(f, CU_PARAM_TR_DEFAULT, NULL));
    P("ParamSeti offset 4097", cuParamSeti(f, 4097, 1));
    /* The parameters must still be whole: re-set them. */
    cuParamSetv(f, 0, &out, sizeof out);
    cuParamSeti(f, 8, 123);
    cuParamSetf(f, 12, 4.0f);
    P("FuncSetBlockShape 32x1x1", cuFuncSetBlockShape(f, 32, 1, 1));
    P("Launch", cuLaunch(f));
    sync_report("Launch");
    memset(h, 0, sizeof h);
    cuMemcpyDtoH(h, out, 32 * sizeof(int));
    int wrong = 0;
    for (int i = 0; i < 32; ++i) wrong += h[i] != 123 + 4 + i * 10;
    printf("Launch results: %d of 32 wrong\n", wrong);
    cuMemsetD8(out, 0, 1 << 20);
    P("LaunchGrid 4x3", cuLaunchGrid(f, 4, 3));
    sync_report("LaunchGrid");
    cuMemcpyDtoH(h, out, sizeof h);
    wrong = 0;
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 4; ++x)
            for (int i = 0; i < 32; ++i)
                wrong += h[(y * 4 + x) * 32 + i] != 123 + 4 + x * 1000 + y * 100000 + i * 10;
    printf("LaunchGrid results: %d of 384 wrong\n", wrong);
    P("LaunchGrid 0x1", cuLaunchGrid(f, 0, 1));
    P("LaunchGrid 1x65536", cuLaunchGrid(f, 1, 65536));
    P("LaunchGrid -1x1", cuLaunchGrid(f, -1, 1));
    P("LaunchGrid NULL", cuLaunchGrid(NULL, 1, 1));
    sync_report("LaunchGrid refusals");
    CUstream s = NULL;
    cuStreamCreate(&s, 0);
    cuParamSeti(f, 8, 777);
    P("LaunchGridAsync 2x2 on a stream", cuLaunchGridAsync(f, 2, 2, s));
    P("StreamSynchronize", cuStreamSynchronize(s));
    cuMemcpyDtoH(h, out, 4 * 32 * sizeof(int));
    wrong = 0;
    for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 2; ++x)
            for (int i = 0; i < 32; ++i)
                wrong += h[(y * 2 + x) * 32 + i] != 777 + 4 + x * 1000 + y * 100000 + i * 10;
    printf("LaunchGridAsync results: %d of 128 wrong\n", wrong);
    cuStreamDestroy(s);
    /* Shared memory from cuFuncSetSharedSize. */
    cuParamSetSize(d, 8);
    cuParamSetv(d, 0, &out, 8);
    cuFuncSetBlockShape(d, 64, 1, 1);
    P("FuncSetSharedSize 256", cuFuncSetSharedSize(d, 256));
    P("k_dyn Launch with shared size 256", cuLaunch(d));
    sync_report("k_dyn 256");
    cuMemcpyDtoH(h, out, 64 * sizeof(int));
    wrong = 0;
    for (int i = 0; i < 64; ++i) wrong += h[i] != 63 - i;
    printf("k_dyn legacy results: %d of 64 wrong\n", wrong);
    P("FuncSetSharedSize 48K+1", cuFuncSetSharedSize(d, 48 * 1024 + 1));
    P("k_dyn Launch with shared size 48K+1", cuLaunch(d));
    sync_report("k_dyn 48K+1");
    cuFuncSetBlockShape(f, 1025, 1, 1);
    P("Launch after FuncSetBlockShape 1025", cuLaunch(f));
    sync_report("Launch 1025");
    cuFuncSetBlockShape(f, 32, 1, 1);
    /* Parameters longer than the kernel's. */
    cuParamSetSize(f, 64);
    cuParamSetv(f, 0, &out, sizeof out);
    cuParamSeti(f, 8, 1);
    cuParamSetf(f, 12, 1.0f);
    P("Launch with 64 parameter bytes (kernel has 16)", cuLaunch(f));
    sync_report("Launch 64 bytes");
    cuMemFree(out);
    P("ModuleUnload", cuModuleUnload(m));
    P("Launch after unload", cuLaunch(f));
    P("ParamSeti after unload", cuParamSeti(f, 0, 1));
    P("FuncSetBlockShape after unload", cuFuncSetBlockShape(f, 32, 1, 1));
}

/* ------------------------------------------------------------------ cbuf */

/* The cubin of k_dump with its %envreg loads (LDC, c[0x0][0x40 + 4i])
 * rewritten to read c[0x0][base + 4i]. Returns the number patched (32 when
 * the compiler emitted what this expects). */
static int patch_dump(unsigned char *elf, size_t n, unsigned base) {
    uint64_t shoff;
    uint16_t shnum, shstrndx;
    memcpy(&shoff, elf + 0x28, 8);
    memcpy(&shnum, elf + 0x3c, 2);
    memcpy(&shstrndx, elf + 0x3e, 2);
    if (shoff + (uint64_t)shnum * 64 > n) return -1;
    uint64_t stroff;
    memcpy(&stroff, elf + shoff + (uint64_t)shstrndx * 64 + 24, 8);
    int patched = 0;
    for (uint16_t s = 0; s < shnum; ++s) {
        const unsigned char *sh = elf + shoff + (uint64_t)s * 64;
        uint32_t name;
        uint64_t off, size;
        memcpy(&name, sh, 4);
        memcpy(&off, sh + 24, 8);
        memcpy(&size, sh + 32, 8);
        if (strcmp((const char *)elf + stroff + name, ".text.k_dump") != 0) continue;
        for (uint64_t p = off; p + 16 <= off + size; p += 16) {
            uint64_t lo;
            memcpy(&lo, elf + p, 8);
            if ((lo & 0xfff) != 0xb82) continue; /* LDC */
            unsigned bank = (unsigned)((lo >> 54) & 0x1f), word = (unsigned)((lo >> 40) & 0x3fff);
            if (bank != 0 || word < 0x40 / 4 || word >= 0xc0 / 4) continue;
            uint64_t w = base / 4 + (word - 0x40 / 4);
            lo = (lo & ~(0x3fffull << 40)) | (w << 40);
            memcpy(elf + p, &lo, 8);
            ++patched;
        }
    }
    return patched;
}

typedef struct {
    const char *label;
    unsigned grid[3], block[3], smem;
    int coop;
    unsigned cluster[3];
} dump_case;

static void cbuf(void) {
    if (!dump_cubin) {
        printf("no dump kernel (NVRTC could not compile it)\n");
        return;
    }
    static const unsigned bases[] = {0x000, 0x080, 0x100, 0x180, 0x200};
    CUmodule mods[5] = {NULL};
    CUfunction fs[5] = {NULL};
    for (int b = 0; b < 5; ++b) {
        unsigned char *copy = malloc(dump_size);
        memcpy(copy, dump_cubin, dump_size);
        int n = patch_dump(copy, dump_size, bases[b]);
        if (n != 32) {
            printf("patching k_dump for base 0x%x: %d loads, expected 32\n", bases[b], n);
            free(copy);
            return;
        }
        CUresult r = cuModuleLoadData(&mods[b], copy);
        free(copy);
        if (r != CUDA_SUCCESS) {
            printf("loading patched k_dump: %s\n", rname(r));
            return;
        }
        fs[b] = fn(mods[b], "k_dump");
        cuFuncSetAttribute(fs[b], CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    }
    CUmodule wm = NULL;
    cuModuleLoadData(&wm, dump_cubin);
    CUfunction ws = fn(wm, "k_ws");
    static const dump_case cases[] = {
        {"plain 3x2x1 / 32x2x1", {3, 2, 1}, {32, 2, 1}, 0, 0, {0, 0, 0}},
        {"plain 1x1x1 / 1x1x1", {1, 1, 1}, {1, 1, 1}, 0, 0, {0, 0, 0}},
        {"dynamic smem 1000", {2, 1, 1}, {64, 1, 1}, 1000, 0, {0, 0, 0}},
        {"dynamic smem 40000", {2, 1, 1}, {64, 1, 1}, 40000, 0, {0, 0, 0}},
        {"cooperative 4x1x1 / 64", {4, 1, 1}, {64, 1, 1}, 0, 1, {0, 0, 0}},
        {"cluster 2x1x1 grid 4x2x1", {4, 2, 1}, {64, 1, 1}, 0, 0, {2, 1, 1}},
        {"cluster 3x1x1 grid 6x1x1", {6, 1, 1}, {64, 1, 1}, 0, 0, {3, 1, 1}},
        {"cluster 1x2x2 grid 2x4x6", {2, 4, 6}, {32, 1, 1}, 0, 0, {1, 2, 2}},
        {"cluster 5x1x1 grid 10x1x1", {10, 1, 1}, {32, 1, 1}, 0, 0, {5, 1, 1}},
        {"cluster 7x1x1 grid 14x1x1", {14, 1, 1}, {32, 1, 1}, 0, 0, {7, 1, 1}},
        {"cluster 16x1x1 grid 16x1x1", {16, 1, 1}, {32, 1, 1}, 0, 0, {16, 1, 1}},
        {"cluster 1x1x1 grid 3x1x1", {3, 1, 1}, {32, 1, 1}, 0, 0, {1, 1, 1}},
    };
    CUdeviceptr out = dalloc(4096);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const dump_case *k = &cases[c];
        unsigned words[0x280 / 4];
        memset(words, 0, sizeof words);
        unsigned extra[4] = {0};
        int ok = 1;
        for (int b = 0; b < 5 && ok; ++b) {
            unsigned s4[4] = {0x11111111u, 0x22222222u, 0x33333333u, 0x44444444u};
            void *params[] = {&out, s4};
            CUlaunchAttribute a[2];
            unsigned na = 0;
            memset(a, 0, sizeof a);
            if (k->coop) {
                a[na].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
                a[na++].value.cooperative = 1;
            }
            if (k->cluster[0]) {
                a[na].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
                a[na].value.clusterDim.x = k->cluster[0];
                a[na].value.clusterDim.y = k->cluster[1];
                a[na++].value.clusterDim.z = k->cluster[2];
            }
            CUlaunchConfig cfg;
            memset(&cfg, 0, sizeof cfg);
            cfg.gridDimX = k->grid[0];
            cfg.gridDimY = k->grid[1];
            cfg.gridDimZ = k->grid[2];
            cfg.blockDimX = k->block[0];
            cfg.blockDimY = k->block[1];
            cfg.blockDimZ = k->block[2];
            cfg.sharedMemBytes = k->smem;
            cfg.attrs = a;
            cfg.numAttrs = na;
            cuMemsetD8(out, 0, 4096);
            CUresult r = cuLaunchKernelEx(&cfg, fs[b], params, NULL);
            CUresult s = cuCtxSynchronize();
            if (r != CUDA_SUCCESS || s != CUDA_SUCCESS) {
                printf("cbuf %s: launch %s sync %s\n", k->label, rname(r), rname(s));
                ok = 0;
                break;
            }
            unsigned h[36];
            cuMemcpyDtoH(h, out, sizeof h);
            memcpy(words + bases[b] / 4, h, 32 * 4);
            if (b == 0) memcpy(extra, h + 32, sizeof extra);
        }
        if (!ok) continue;
        printf("cbuf %s:", k->label);
        for (unsigned w = 0; w < 0x210 / 4; ++w)
            if (words[w]) printf(" [0x%03x]=0x%08x", w * 4, words[w]);
        printf("\n");
        printf("cbuf %s: &gridconstant=0x%08x%08x (param 1 at 0x218) s.v[0]=0x%08x s.v[3]=0x%08x\n", k->label,
               extra[1], extra[0], extra[2], extra[3]);
        uint64_t gc = ((uint64_t)extra[1] << 32) | extra[0];
        uint64_t w198 = ((uint64_t)words[0x19c / 4] << 32) | words[0x198 / 4];
        printf("cbuf %s: &gridconstant - c[0x198] = %lld\n", k->label, (long long)(gc - w198));
    }
    /* The grid workspace of a cooperative launch. */
    void *wp[] = {&out};
    cuMemsetD8(out, 0, 64);
    P("k_ws plain", cuLaunchKernel(ws, 2, 1, 1, 32, 1, 1, 0, NULL, wp, NULL));
    sync_report("k_ws plain");
    unsigned w[3] = {0};
    cuMemcpyDtoH(w, out, sizeof w);
    printf("k_ws plain: workspace %u wsSize %u barrier %u\n", w[0], w[1], w[2]);
    cuMemsetD8(out, 0, 64);
    P("k_ws cooperative", cuLaunchCooperativeKernel(ws, 2, 1, 1, 32, 1, 1, 0, NULL, wp));
    sync_report("k_ws coop");
    cuMemcpyDtoH(w, out, sizeof w);
    printf("k_ws cooperative: workspace %u wsSize %u barrier %u\n", w[0], w[1], w[2]);
    P("k_ws cooperative 64 blocks", cuLaunchCooperativeKernel(ws, 64, 1, 1, 32, 1, 1, 0, NULL, wp));
    sync_report("k_ws coop 64");
    cuMemcpyDtoH(w, out, sizeof w);
    printf("k_ws cooperative 64 blocks: workspace %u wsSize %u barrier %u\n", w[0], w[1], w[2]);
    cuMemFree(out);
    for (int b = 0; b < 5; ++b) cuModuleUnload(mods[b]);
    cuModuleUnload(wm);
}

/* A __grid_constant__ parameter read through its address (what CUTLASS and
 * TMA descriptors do). Only the parameter itself: libcuda 580 faults on words
 * of the bank around it (seen on the H200). Its own run: a fault would spoil
 * the rest. */
static void gc(void) {
    CUmodule m = NULL;
    P("ModuleLoadData (dump kernels)", cuModuleLoadData(&m, dump_cubin));
    CUfunction g = fn(m, "k_gc");
    CUdeviceptr out = dalloc(4096);
    unsigned s4[4] = {0x11111111u, 0x22222222u, 0x33333333u, 0x44444444u};
    int from = 0x218 / 4, n = 4;
    void *params[] = {&out, s4, &from, &n};
    P("k_gc the parameter through its address", cuLaunchKernel(g, 3, 2, 1, 32, 1, 1, 0, NULL, params, NULL));
    sync_report("k_gc");
    unsigned h[4] = {0};
    cuMemcpyDtoH(h, out, sizeof h);
    printf("k_gc words: 0x%08x 0x%08x 0x%08x 0x%08x (0x11111111 ... 0x44444444 expected)\n", h[0], h[1], h[2], h[3]);
    cuMemFree(out);
    cuModuleUnload(m);
}

int main(int argc, char **argv) {
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);
    const char *section = argc > 1 ? argv[1] : "library";
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
    arch = major * 10 + minor;
    cubin = ts_compile_cubin(kSource, "launch_probe.cu", arch, &cubin_size);
    if (!cubin) {
        printf("compile failed\n");
        return 1;
    }
    coop_cubin = (void *)compile_with_headers(kCoopSource, "launch_probe_coop.cu");
    dump_cubin = ts_compile_cubin(kDumpSource, "launch_probe_dump.cu", arch, &dump_size);
    printf("device sm_%d, %d SMs, section %s\n", arch, sms, section);
    if (strcmp(section, "library") == 0) library();
    else if (strcmp(section, "funcs") == 0) funcs();
    else if (strcmp(section, "ex") == 0) ex();
    else if (strcmp(section, "coop") == 0) coop();
    else if (strcmp(section, "cluster") == 0) cluster();
    else if (strcmp(section, "legacy") == 0) legacy();
    else if (strcmp(section, "cbuf") == 0) cbuf();
    else if (strcmp(section, "gc") == 0) gc();
    else {
        printf("unknown section %s\n", section);
        return 2;
    }
    printf("done\n");
    return 0;
}
