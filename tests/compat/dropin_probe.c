#define _GNU_SOURCE
/*
 * dropin_probe: what a driver library answers to the calls that programs
 * loading it as libcuda.so.1 make (issue 8): cuGetProcAddress and
 * cuGetExportTable edge cases, and the context, stream, device and pointer
 * queries real clients reach first. One line per case; raw addresses are
 * never printed, only their properties (a returned function is named by
 * dladdr).
 *
 * The probe links no CUDA library: it dlopen()s "libcuda.so.1" and looks up
 * every function by its exported name, so the same binary probes whichever
 * library the dynamic linker finds:
 *
 *   build/probes/dropin_probe SECTION                     # the system's libcuda
 *   build/bin/nvlite-run build/probes/dropin_probe SECTION  # nvlite as the driver
 *
 * Sections (one per run, so that a crash cannot spoil the others): gpa,
 * exporttable, contexts, streams, devices, pointers. A function the library
 * does not export answers CUresult(4242) ("MISSING" on stderr). The library
 * that was loaded is named on stderr, so stdout compares as is.
 * Built against NVIDIA's cuda.h (types only).
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Deprecated functions are probed too. */
#define CUDA_ENABLE_DEPRECATED
#include <cuda.h>

#include "probe_dlopen.h"

/* The exported function a pointer is, by name. */
static const char* fname(void* p) {
    if (!p) return "NULL";
    Dl_info info;
    if (dladdr(p, &info) && info.dli_sname && info.dli_saddr == p) return info.dli_sname;
    return "(not a symbol)";
}

static const char* sname(CUdriverProcAddressQueryResult s) {
    switch ((int)s) {
    case CU_GET_PROC_ADDRESS_SUCCESS: return "SUCCESS";
    case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: return "SYMBOL_NOT_FOUND";
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: return "VERSION_NOT_SUFFICIENT";
    case 77: return "(not written)";
    default: return "(other)";
    }
}

/* ------------------------------------------------------------------ gpa */

typedef CUresult (*gpa_v2_fn)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
typedef CUresult (*gpa_v1_fn)(const char*, void**, int, cuuint64_t);

static void gpa_case(gpa_v2_fn gpa, const char* name, int version, cuuint64_t flags) {
    char label[128];
    snprintf(label, sizeof label, "gpa %s @%d flags %llu", name ? (*name ? name : "\"\"") : "(NULL)", version,
             (unsigned long long)flags);
    void* p = (void*)1;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
    PV(label, gpa(name, &p, version, flags, &st), "status=%s fn=%s", sname(st), p == (void*)1 ? "(not written)" : fname(p));
}

static void gpa_v1_case(gpa_v1_fn gpa, const char* name, int version, cuuint64_t flags) {
    char label[128];
    snprintf(label, sizeof label, "gpa_v1 %s @%d flags %llu", name ? (*name ? name : "\"\"") : "(NULL)", version,
             (unsigned long long)flags);
    void* p = (void*)1;
    PV(label, gpa(name, &p, version, flags), "fn=%s", p == (void*)1 ? "(not written)" : fname(p));
}

static void gpa(void) {
    gpa_v2_fn v2 = N(gpa_v2_fn, "cuGetProcAddress_v2");
    gpa_v1_fn v1 = N(gpa_v1_fn, "cuGetProcAddress");
    /* Before cuInit. */
    gpa_case(v2, "cuInit", 2000, 0);
    gpa_case(v2, "cuMemAlloc", 12000, 0);
    gpa_case(v2, "cuNoSuchFunction", 12000, 0);
    P("cuInit(0)", F(cuInit)(0));

    /* Versions. */
    static const int mem_alloc_versions[] = {-1, 0, 1999, 2000, 3000, 3020, 12000, 13000, 13010, 99999};
    for (size_t i = 0; i < sizeof mem_alloc_versions / sizeof *mem_alloc_versions; ++i)
        gpa_case(v2, "cuMemAlloc", mem_alloc_versions[i], 0);
    gpa_case(v2, "cuInit", 0, 0);
    gpa_case(v2, "cuInit", 1999, 0);
    gpa_case(v2, "cuCtxCreate", 2000, 0);
    gpa_case(v2, "cuCtxCreate", 3020, 0);
    gpa_case(v2, "cuCtxCreate", 11040, 0);
    gpa_case(v2, "cuCtxCreate", 12050, 0);
    gpa_case(v2, "cuGetProcAddress", 11030, 0);
    gpa_case(v2, "cuGetProcAddress", 12000, 0);
    gpa_case(v2, "cuGraphInstantiate", 10000, 0);
    gpa_case(v2, "cuGraphInstantiate", 11000, 0);
    gpa_case(v2, "cuGraphInstantiate", 12000, 0);
    gpa_case(v2, "cuGraphInstantiateWithFlags", 11040, 0);
    gpa_case(v2, "cuDeviceGetUuid", 9020, 0);
    gpa_case(v2, "cuDeviceGetUuid", 11040, 0);
    gpa_case(v2, "cuLogsRegisterCallback", 12080, 0);
    gpa_case(v2, "cuLogsRegisterCallback", 12090, 0);
    gpa_case(v2, "cuCheckpointProcessLock", 12080, 0);
    gpa_case(v2, "cuGetExportTable", 3000, 0);

    /* Names and arguments. */
    gpa_case(v2, "", 0, 0);
    gpa_case(v2, "", 13000, 0);
    gpa_case(v2, NULL, 13000, 0);
    gpa_case(v2, "cuNoSuchFunction", 13000, 0);
    gpa_case(v2, "cuNoSuchFunction", 13010, 0);
    gpa_case(v2, "cuMemAlloc_v2", 13000, 0);
    gpa_case(v2, "cuMemcpyHtoD_v2_ptds", 13000, 2);
    gpa_case(v2, "cuCtxCreate_v4", 13000, 0);
    gpa_case(v2, "cumemalloc", 13000, 0);
    gpa_case(v2, "cuMemAlloc ", 13000, 0);
    {
        CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
        PV("gpa cuMemAlloc pfn NULL", v2("cuMemAlloc", NULL, 13000, 0, &st), "status=%s", sname(st));
        void* p = (void*)1;
        PV("gpa cuMemAlloc status NULL", v2("cuMemAlloc", &p, 13000, 0, NULL), "fn=%s", fname(p));
        p = (void*)1;
        PV("gpa unknown status NULL", v2("cuNoSuchFunction", &p, 13000, 0, NULL), "fn=%s",
           p == (void*)1 ? "(not written)" : fname(p));
    }

    /* Flags: legacy, per-thread default stream, others. */
    static const cuuint64_t flag_values[] = {0, 1, 2, 3, 4, 8, 0x100};
    for (size_t i = 0; i < sizeof flag_values / sizeof *flag_values; ++i) {
        gpa_case(v2, "cuMemcpyHtoD", 7000, flag_values[i]);
        gpa_case(v2, "cuLaunchKernel", 7000, flag_values[i]);
    }
    gpa_case(v2, "cuMemcpyHtoD", 3020, 2);
    gpa_case(v2, "cuMemcpyHtoD", 6050, 2);
    gpa_case(v2, "cuMemcpyHtoD", 2000, 2);
    gpa_case(v2, "cuMemcpy", 4000, 2);
    gpa_case(v2, "cuMemcpy", 7000, 2);
    gpa_case(v2, "cuLaunchKernel", 4000, 2);
    gpa_case(v2, "cuStreamGetCtx", 9020, 2);
    gpa_case(v2, "cuStreamGetCtx", 12000, 2);
    gpa_case(v2, "cuStreamGetCtx", 12050, 0);
    gpa_case(v2, "cuStreamGetCtx", 12050, 2);
    gpa_case(v2, "cuStreamGetCaptureInfo", 10010, 2);
    gpa_case(v2, "cuStreamGetCaptureInfo", 11030, 2);
    gpa_case(v2, "cuStreamGetCaptureInfo", 12030, 0);
    gpa_case(v2, "cuStreamGetCaptureInfo", 12030, 2);
    gpa_case(v2, "cuStreamBeginCapture", 10000, 2);
    gpa_case(v2, "cuStreamBeginCapture", 10010, 2);
    gpa_case(v2, "cuStreamBeginCapture", 10010, 0);
    gpa_case(v2, "cuInit", 13000, 2);
    gpa_case(v2, "cuGraphInstantiateWithParams", 12000, 2);

    /* Functions of the other headers (GL, EGL, VDPAU, profiler) and
     * exports no header declares. */
    gpa_case(v2, "cuProfilerStart", 4000, 0);
    gpa_case(v2, "cuProfilerStop", 4000, 0);
    gpa_case(v2, "cuProfilerInitialize", 4000, 0);
    gpa_case(v2, "cuGLInit", 2000, 0);
    gpa_case(v2, "cuGLGetDevices", 6050, 0);
    gpa_case(v2, "cuGLMapBufferObject", 7000, 2);
    gpa_case(v2, "cuGraphicsGLRegisterBuffer", 3000, 0);
    gpa_case(v2, "cuVDPAUGetDevice", 3010, 0);
    gpa_case(v2, "cuVDPAUCtxCreate", 3020, 0);
    gpa_case(v2, "cuEGLStreamConsumerConnect", 7000, 0);
    gpa_case(v2, "cuGraphicsEGLRegisterImage", 7000, 0);
    gpa_case(v2, "cuEventCreateFromEGLSync", 9000, 0);
    gpa_case(v2, "cuEGLApiInit", 13000, 0);
    gpa_case(v2, "cuMemGetAttribute", 13000, 0);
    gpa_case(v2, "cuWGLGetDevice", 2020, 0);
    gpa_case(v2, "cudbgGetAPI", 13000, 0);

    /* The first-ABI cuGetProcAddress (CUDA 11.3). */
    gpa_v1_case(v1, "cuMemAlloc", 13000, 0);
    gpa_v1_case(v1, "cuMemAlloc", 3000, 0);
    gpa_v1_case(v1, "cuMemAlloc", 13010, 0);
    gpa_v1_case(v1, "cuMemcpyHtoD", 7000, 2);
    gpa_v1_case(v1, "cuNoSuchFunction", 13000, 0);
    gpa_v1_case(v1, "", 13000, 0);
    gpa_v1_case(v1, NULL, 13000, 0);
    gpa_v1_case(v1, "cuLogsCurrent", 12080, 0);
    gpa_v1_case(v1, "cuLogsCurrent", 12090, 0);
    P("gpa_v1 cuMemAlloc pfn NULL", v1("cuMemAlloc", NULL, 13000, 0));
}

/* ---------------------------------------------------------- export tables */

static void table_case(const char* label, const CUuuid* id) {
    const void* t = (const void*)1;
    PV(label, F(cuGetExportTable)(&t, id), "table=%s", t == (const void*)1 ? "(not written)" : t ? "set" : "NULL");
}

static void exporttable(void) {
    /* NVRTC 13's request (da9151d3-3ae6-cc41-a5c0-4f26d533e328). */
    static const CUuuid nvrtc = {{(char)0xda, (char)0x91, 0x51, (char)0xd3, 0x3a, (char)0xe6, (char)0xcc, 0x41,
                                  (char)0xa5, (char)0xc0, 0x4f, 0x26, (char)0xd5, 0x33, (char)0xe3, 0x28}};
    CUuuid unknown;
    memset(&unknown, 0x5a, sizeof unknown);
    table_case("before cuInit: NVRTC's table", &nvrtc);
    table_case("before cuInit: unknown table", &unknown);
    P("cuInit(0)", F(cuInit)(0));
    table_case("NVRTC's table", &nvrtc);
    table_case("unknown table", &unknown);
    table_case("NULL id", NULL);
    P("NULL table pointer, NVRTC's id", F(cuGetExportTable)(NULL, &nvrtc));
    P("NULL table pointer, unknown id", F(cuGetExportTable)(NULL, &unknown));
}

/* ------------------------------------------------------------------ contexts */

static void contexts(void) {
    P("cuInit(0)", F(cuInit)(0));
    CUcontext a = NULL, b = NULL, dead = NULL, cur = NULL, prim = NULL;
    CUdevice d = -7;
    unsigned v = 0;
    unsigned long long ida = 0, idb = 0, id = 0;

    /* No current context. */
    P("no-ctx cuCtxSynchronize_v2(NULL)", F(cuCtxSynchronize_v2)(NULL));
    P("no-ctx cuCtxGetDevice_v2(NULL ctx)", F(cuCtxGetDevice_v2)(&d, NULL));
    P("no-ctx cuCtxGetApiVersion(NULL)", F(cuCtxGetApiVersion)(NULL, &v));
    P("no-ctx cuCtxGetId(NULL)", F(cuCtxGetId)(NULL, &id));
    P("no-ctx cuCtxSetFlags(0)", F(cuCtxSetFlags)(0));
    size_t lim = 0;
    P("no-ctx cuCtxGetLimit(STACK_SIZE)", F(cuCtxGetLimit)(&lim, CU_LIMIT_STACK_SIZE));
    P("no-ctx cuCtxSetLimit(STACK_SIZE)", F(cuCtxSetLimit)(CU_LIMIT_STACK_SIZE, 2048));
    CUfunc_cache cc = (CUfunc_cache)77;
    P("no-ctx cuCtxGetCacheConfig", F(cuCtxGetCacheConfig)(&cc));
    P("no-ctx cuCtxSetCacheConfig", F(cuCtxSetCacheConfig)(CU_FUNC_CACHE_PREFER_L1));
    P("no-ctx cuProfilerStart", N(CUresult(*)(void), "cuProfilerStart")());
    P("no-ctx cuProfilerStop", N(CUresult(*)(void), "cuProfilerStop")());

    P("cuCtxCreate a", F(cuCtxCreate)(&a, NULL, 0, 0));
    P("cuCtxCreate b (BLOCKING_SYNC)", F(cuCtxCreate)(&b, NULL, CU_CTX_SCHED_BLOCKING_SYNC, 0));
    P("cuCtxCreate dead", F(cuCtxCreate)(&dead, NULL, 0, 0));
    P("cuCtxDestroy dead", F(cuCtxDestroy)(dead));
    P("cuCtxSetCurrent a", F(cuCtxSetCurrent)(a));

    /* cuCtxSynchronize_v2 and cuCtxGetDevice_v2. */
    P("cuCtxSynchronize_v2(NULL)", F(cuCtxSynchronize_v2)(NULL));
    P("cuCtxSynchronize_v2(a)", F(cuCtxSynchronize_v2)(a));
    P("cuCtxSynchronize_v2(b) not current", F(cuCtxSynchronize_v2)(b));
    P("cuCtxSynchronize_v2(dead)", F(cuCtxSynchronize_v2)(dead));
    d = -7;
    PV("cuCtxGetDevice_v2(NULL ctx)", F(cuCtxGetDevice_v2)(&d, NULL), "%d", d);
    d = -7;
    PV("cuCtxGetDevice_v2(b)", F(cuCtxGetDevice_v2)(&d, b), "%d", d);
    P("cuCtxGetDevice_v2(NULL out, a)", F(cuCtxGetDevice_v2)(NULL, a));
    P("cuCtxGetDevice_v2(NULL out, NULL)", F(cuCtxGetDevice_v2)(NULL, NULL));
    d = -7;
    PV("cuCtxGetDevice_v2(dead)", F(cuCtxGetDevice_v2)(&d, dead), "%d", d);

    /* API version and ids. */
    v = 0;
    PV("cuCtxGetApiVersion(a)", F(cuCtxGetApiVersion)(a, &v), "%u", v);
    v = 0;
    PV("cuCtxGetApiVersion(NULL) current", F(cuCtxGetApiVersion)(NULL, &v), "%u", v);
    P("cuCtxGetApiVersion(a, NULL)", F(cuCtxGetApiVersion)(a, NULL));
    v = 0;
    PV("cuCtxGetApiVersion(dead)", F(cuCtxGetApiVersion)(dead, &v), "%u", v);
    P("cuCtxGetId(a)", F(cuCtxGetId)(a, &ida));
    PV("cuCtxGetId(b)", F(cuCtxGetId)(b, &idb), "b-a=%lld nonzero=%d", (long long)(idb - ida), ida != 0);
    id = 0;
    PV("cuCtxGetId(NULL) current", F(cuCtxGetId)(NULL, &id), "is_a=%d", id == ida);
    P("cuCtxGetId(a, NULL)", F(cuCtxGetId)(a, NULL));
    id = 0;
    PV("cuCtxGetId(dead)", F(cuCtxGetId)(dead, &id), "zero=%d", id == 0);
    P("cuDevicePrimaryCtxRetain", F(cuDevicePrimaryCtxRetain)(&prim, 0));
    id = 0;
    PV("cuCtxGetId(primary)", F(cuCtxGetId)(prim, &id), "after_b=%d", id > idb);
    v = 0;
    PV("cuCtxGetApiVersion(primary)", F(cuCtxGetApiVersion)(prim, &v), "%u", v);

    /* Flags. */
    unsigned fl = 0;
    PV("cuCtxGetFlags a", F(cuCtxGetFlags)(&fl), "0x%x", fl);
    static const unsigned set_flags[] = {CU_CTX_SCHED_SPIN,
                                         CU_CTX_SCHED_YIELD,
                                         CU_CTX_SCHED_BLOCKING_SYNC,
                                         CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD,
                                         CU_CTX_MAP_HOST,
                                         CU_CTX_LMEM_RESIZE_TO_MAX,
                                         CU_CTX_COREDUMP_ENABLE,
                                         CU_CTX_USER_COREDUMP_ENABLE,
                                         CU_CTX_SYNC_MEMOPS,
                                         0x100,
                                         0x1000,
                                         0};
    for (size_t i = 0; i < sizeof set_flags / sizeof *set_flags; ++i) {
        char label[64];
        snprintf(label, sizeof label, "cuCtxSetFlags(0x%x)", set_flags[i]);
        fl = 0xdead;
        CUresult r = F(cuCtxSetFlags)(set_flags[i]);
        F(cuCtxGetFlags)(&fl);
        printf("%-*s => %s flags now 0x%x\n", PROBE_WIDTH, label, rname(r), fl);
    }

    /* Limits. */
    for (int l = 0; l <= 10; ++l) {
        char label[64];
        snprintf(label, sizeof label, "cuCtxGetLimit(%d)", l);
        lim = 12345;
        PV(label, F(cuCtxGetLimit)(&lim, (CUlimit)l), "%zu", lim);
    }
    P("cuCtxGetLimit(NULL, STACK_SIZE)", F(cuCtxGetLimit)(NULL, CU_LIMIT_STACK_SIZE));
    P("cuCtxGetLimit(99)", F(cuCtxGetLimit)(&lim, (CUlimit)99));
    static const struct {
        int limit;
        size_t value;
    } sets[] = {{CU_LIMIT_STACK_SIZE, 4096},
                {CU_LIMIT_STACK_SIZE, 1},
                {CU_LIMIT_STACK_SIZE, 1000},
                {CU_LIMIT_STACK_SIZE, 0},
                {CU_LIMIT_STACK_SIZE, (size_t)1 << 40},
                {CU_LIMIT_PRINTF_FIFO_SIZE, 1 << 20},
                {CU_LIMIT_PRINTF_FIFO_SIZE, 1},
                {CU_LIMIT_PRINTF_FIFO_SIZE, 0},
                {CU_LIMIT_MALLOC_HEAP_SIZE, 16 << 20},
                {CU_LIMIT_MALLOC_HEAP_SIZE, 1},
                {CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 3},
                {CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 4096},
                {CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 1},
                {CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 0},
                {CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 32},
                {CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 64},
                {CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 100},
                {CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 256},
                {CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 1 << 20},
                {CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 1000},
                {CU_LIMIT_PERSISTING_L2_CACHE_SIZE, (size_t)1 << 40},
                {CU_LIMIT_SHMEM_SIZE, 1024},
                {CU_LIMIT_CIG_ENABLED, 1},
                {CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED, 1},
                {99, 1}};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; ++i) {
        char label[80];
        snprintf(label, sizeof label, "cuCtxSetLimit(%d, %zu)", sets[i].limit, sets[i].value);
        CUresult r = F(cuCtxSetLimit)((CUlimit)sets[i].limit, sets[i].value);
        lim = 12345;
        CUresult g = F(cuCtxGetLimit)(&lim, (CUlimit)sets[i].limit);
        printf("%-*s => %s get %s %zu\n", PROBE_WIDTH, label, rname(r), rname(g), lim);
    }
    lim = 12345;
    P("cuCtxSetCurrent b", F(cuCtxSetCurrent)(b));
    PV("b: cuCtxGetLimit(STACK_SIZE) (own)", F(cuCtxGetLimit)(&lim, CU_LIMIT_STACK_SIZE), "%zu", lim);
    lim = 12345;
    PV("b: cuCtxGetLimit(MALLOC_HEAP_SIZE)", F(cuCtxGetLimit)(&lim, CU_LIMIT_MALLOC_HEAP_SIZE), "%zu", lim);
    P("cuCtxSetCurrent a", F(cuCtxSetCurrent)(a));

    /* Cache configuration. */
    cc = (CUfunc_cache)77;
    PV("cuCtxGetCacheConfig", F(cuCtxGetCacheConfig)(&cc), "%d", (int)cc);
    for (int c = 0; c <= 4; ++c) {
        char label[64];
        snprintf(label, sizeof label, "cuCtxSetCacheConfig(%d)", c);
        CUresult r = F(cuCtxSetCacheConfig)((CUfunc_cache)c);
        cc = (CUfunc_cache)77;
        F(cuCtxGetCacheConfig)(&cc);
        printf("%-*s => %s now %d\n", PROBE_WIDTH, label, rname(r), (int)cc);
    }
    P("cuCtxGetCacheConfig(NULL)", F(cuCtxGetCacheConfig)(NULL));

    /* Profiler without a profiling tool. */
    P("cuProfilerStart", N(CUresult(*)(void), "cuProfilerStart")());
    P("cuProfilerStart again", N(CUresult(*)(void), "cuProfilerStart")());
    P("cuProfilerStop", N(CUresult(*)(void), "cuProfilerStop")());
    P("cuProfilerInitialize", N(CUresult(*)(const char*, const char*, int), "cuProfilerInitialize")(NULL, NULL, 0));

    P("cuCtxDestroy a", F(cuCtxDestroy)(a));
    P("cuCtxDestroy b", F(cuCtxDestroy)(b));

    /* A destroyed context that stays current (pushed twice, destroyed once). */
    CUcontext c3 = NULL;
    P("cuCtxCreate c3", F(cuCtxCreate)(&c3, NULL, 0, 0));
    P("cuCtxPushCurrent(c3) again", F(cuCtxPushCurrent)(c3));
    P("cuCtxDestroy(c3) (on stack twice)", F(cuCtxDestroy)(c3));
    PV("  current after", F(cuCtxGetCurrent)(&cur), "is_c3=%d", cur == c3);
    P("  cuCtxSynchronize_v2(NULL)", F(cuCtxSynchronize_v2)(NULL));
    P("  cuCtxGetDevice_v2(NULL)", F(cuCtxGetDevice_v2)(&d, NULL));
    P("  cuCtxGetLimit", F(cuCtxGetLimit)(&lim, CU_LIMIT_STACK_SIZE));
    P("  cuCtxSetLimit", F(cuCtxSetLimit)(CU_LIMIT_STACK_SIZE, 2048));
    P("  cuCtxGetCacheConfig", F(cuCtxGetCacheConfig)(&cc));
    P("  cuCtxSetCacheConfig", F(cuCtxSetCacheConfig)(CU_FUNC_CACHE_PREFER_L1));
    P("  cuCtxSetFlags", F(cuCtxSetFlags)(0));
    P("  cuCtxGetId(NULL)", F(cuCtxGetId)(NULL, &id));
    P("  cuCtxGetApiVersion(NULL)", F(cuCtxGetApiVersion)(NULL, &v));
    CUstreamCaptureStatus cs = (CUstreamCaptureStatus)77;
    P("  cuStreamIsCapturing(NULL)", F(cuStreamIsCapturing)(NULL, &cs));
    P("  cuStreamGetId(NULL)", F(cuStreamGetId)(NULL, &id));
    P("  cuCtxPopCurrent", F(cuCtxPopCurrent)(&cur));
}

/* ------------------------------------------------------------------ streams */

static void streams(void) {
    P("cuInit(0)", F(cuInit)(0));
    CUcontext a = NULL, c = NULL;
    CUgreenCtx g = (CUgreenCtx)1;
    CUdevice d = -7;
    CUstream s = NULL, nb = NULL;
    unsigned long long ids = 0, idnb = 0, id = 0;
    CUstreamCaptureStatus cs = (CUstreamCaptureStatus)77;

    P("no-ctx cuStreamGetId(NULL)", F(cuStreamGetId)(NULL, &id));
    P("no-ctx cuStreamGetDevice(NULL)", F(cuStreamGetDevice)(NULL, &d));
    P("no-ctx cuStreamGetCtx_v2(NULL)", F(cuStreamGetCtx_v2)(NULL, &c, &g));
    P("no-ctx cuStreamIsCapturing(NULL)", F(cuStreamIsCapturing)(NULL, &cs));

    P("cuCtxCreate", F(cuCtxCreate)(&a, NULL, 0, 0));
    P("cuStreamCreate", F(cuStreamCreate)(&s, 0));
    P("cuStreamCreate NON_BLOCKING", F(cuStreamCreate)(&nb, CU_STREAM_NON_BLOCKING));

    /* Ids. */
    P("cuStreamGetId(s)", F(cuStreamGetId)(s, &ids));
    PV("cuStreamGetId(nb)", F(cuStreamGetId)(nb, &idnb), "nb-s=%lld", (long long)(idnb - ids));
    id = 77;
    PV("cuStreamGetId(NULL)", F(cuStreamGetId)(NULL, &id), "%llu", id);
    id = 77;
    PV("cuStreamGetId(LEGACY)", F(cuStreamGetId)(CU_STREAM_LEGACY, &id), "%llu", id);
    id = 77;
    PV("cuStreamGetId(PER_THREAD)", F(cuStreamGetId)(CU_STREAM_PER_THREAD, &id), "%llu", id);
    id = 77;
    PV("cuStreamGetId_ptsz(NULL)", N(CUresult(*)(CUstream, unsigned long long*), "cuStreamGetId_ptsz")(NULL, &id), "%llu",
       id);
    P("cuStreamGetId(s, NULL)", F(cuStreamGetId)(s, NULL));
    CUstream s2 = NULL;
    F(cuStreamCreate)(&s2, 0);
    id = 0;
    PV("cuStreamGetId(third stream)", F(cuStreamGetId)(s2, &id), "third-nb=%lld", (long long)(id - idnb));
    F(cuStreamDestroy)(s2);

    /* Device and contexts. */
    d = -7;
    PV("cuStreamGetDevice(s)", F(cuStreamGetDevice)(s, &d), "%d", d);
    d = -7;
    PV("cuStreamGetDevice(NULL)", F(cuStreamGetDevice)(NULL, &d), "%d", d);
    d = -7;
    PV("cuStreamGetDevice(PER_THREAD)", F(cuStreamGetDevice)(CU_STREAM_PER_THREAD, &d), "%d", d);
    P("cuStreamGetDevice(s, NULL)", F(cuStreamGetDevice)(s, NULL));
    c = NULL, g = (CUgreenCtx)1;
    PV("cuStreamGetCtx_v2(s)", F(cuStreamGetCtx_v2)(s, &c, &g), "ctx_is_a=%d green_null=%d", c == a, g == NULL);
    c = NULL, g = (CUgreenCtx)1;
    PV("cuStreamGetCtx_v2(NULL)", F(cuStreamGetCtx_v2)(NULL, &c, &g), "ctx_is_a=%d green_null=%d", c == a, g == NULL);
    c = NULL, g = (CUgreenCtx)1;
    PV("cuStreamGetCtx_v2(PER_THREAD)", F(cuStreamGetCtx_v2)(CU_STREAM_PER_THREAD, &c, &g), "ctx_is_a=%d green_null=%d",
       c == a, g == NULL);
    g = (CUgreenCtx)1;
    P("cuStreamGetCtx_v2(s, NULL ctx)", F(cuStreamGetCtx_v2)(s, NULL, &g));
    c = NULL;
    PV("cuStreamGetCtx_v2(s, NULL green)", F(cuStreamGetCtx_v2)(s, &c, NULL), "ctx_is_a=%d", c == a);
    P("cuStreamGetCtx_v2(s, NULL, NULL)", F(cuStreamGetCtx_v2)(s, NULL, NULL));
    c = NULL, g = (CUgreenCtx)1;
    PV("cuStreamGetCtx_v2_ptsz(NULL)",
       N(CUresult(*)(CUstream, CUcontext*, CUgreenCtx*), "cuStreamGetCtx_v2_ptsz")(NULL, &c, &g),
       "ctx_is_a=%d green_null=%d", c == a, g == NULL);

    /* Capture state (nothing is captured). */
    static const CUstream handles[] = {NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD};
    static const char* const hnames[] = {"NULL", "LEGACY", "PER_THREAD"};
    for (int i = 0; i < 5; ++i) {
        CUstream h = i < 3 ? handles[i] : i == 3 ? s : nb;
        const char* hn = i < 3 ? hnames[i] : i == 3 ? "s" : "nb";
        char label[80];
        snprintf(label, sizeof label, "cuStreamIsCapturing(%s)", hn);
        cs = (CUstreamCaptureStatus)77;
        PV(label, F(cuStreamIsCapturing)(h, &cs), "%d", (int)cs);
    }
    P("cuStreamIsCapturing(s, NULL)", F(cuStreamIsCapturing)(s, NULL));
    {
        cuuint64_t cid = 77;
        CUgraph graph = (CUgraph)1;
        const CUgraphNode* deps = (const CUgraphNode*)1;
        const CUgraphEdgeData* edges = (const CUgraphEdgeData*)1;
        size_t n = 77;
        cs = (CUstreamCaptureStatus)77;
        PV("cuStreamGetCaptureInfo_v3(s)", F(cuStreamGetCaptureInfo_v3)(s, &cs, &cid, &graph, &deps, &edges, &n),
           "status=%d id=%llu graph_null=%d deps_null=%d edges_null=%d n=%zu", (int)cs, (unsigned long long)cid,
           graph == NULL, deps == NULL, edges == NULL, n);
        cs = (CUstreamCaptureStatus)77;
        PV("cuStreamGetCaptureInfo_v3(NULL stream)",
           F(cuStreamGetCaptureInfo_v3)(NULL, &cs, NULL, NULL, NULL, NULL, NULL), "status=%d", (int)cs);
        P("cuStreamGetCaptureInfo_v3(s, all NULL)", F(cuStreamGetCaptureInfo_v3)(s, NULL, NULL, NULL, NULL, NULL, NULL));
        cs = (CUstreamCaptureStatus)77;
        cid = 77, graph = (CUgraph)1, deps = (const CUgraphNode*)1, n = 77;
        PV("cuStreamGetCaptureInfo_v2(s)",
           N(CUresult(*)(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*, const CUgraphNode**, size_t*),
             "cuStreamGetCaptureInfo_v2")(s, &cs, &cid, &graph, &deps, &n),
           "status=%d id=%llu graph_null=%d deps_null=%d n=%zu", (int)cs, (unsigned long long)cid, graph == NULL,
           deps == NULL, n);
        cs = (CUstreamCaptureStatus)77;
        cid = 77;
        PV("cuStreamGetCaptureInfo (v1)",
           N(CUresult(*)(CUstream, CUstreamCaptureStatus*, cuuint64_t*), "cuStreamGetCaptureInfo")(s, &cs, &cid),
           "status=%d id=%llu", (int)cs, (unsigned long long)cid);
        cs = (CUstreamCaptureStatus)77;
        PV("cuStreamGetCaptureInfo_v3_ptsz(NULL)",
           N(CUresult(*)(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*, const CUgraphNode**,
                         const CUgraphEdgeData**, size_t*),
             "cuStreamGetCaptureInfo_v3_ptsz")(NULL, &cs, NULL, NULL, NULL, NULL, NULL),
           "status=%d", (int)cs);
    }

    /* A stream of another context, and the stream calls with a destroyed one. */
    CUcontext b = NULL;
    CUstream sb = NULL;
    P("cuCtxCreate b", F(cuCtxCreate)(&b, NULL, 0, 0));
    P("cuStreamCreate in b", F(cuStreamCreate)(&sb, 0));
    P("cuCtxSetCurrent a", F(cuCtxSetCurrent)(a));
    c = NULL;
    PV("cuStreamGetCtx_v2(stream of b) from a", F(cuStreamGetCtx_v2)(sb, &c, &g), "ctx_is_b=%d", c == b);
    id = 0;
    PV("cuStreamGetId(stream of b) from a", F(cuStreamGetId)(sb, &id), "after_nb=%d", id > idnb);
    d = -7;
    PV("cuStreamGetDevice(stream of b) from a", F(cuStreamGetDevice)(sb, &d), "%d", d);
    P("cuCtxDestroy b", F(cuCtxDestroy)(b));
    P("after b destroyed: cuStreamGetId(NULL)", F(cuStreamGetId)(NULL, &id));
    P("cuStreamDestroy s", F(cuStreamDestroy)(s));
    P("cuStreamDestroy nb", F(cuStreamDestroy)(nb));
    P("cuCtxDestroy a (current)", F(cuCtxDestroy)(a));
    P("after destroying current: cuStreamGetId(NULL)", F(cuStreamGetId)(NULL, &id));
    P("after destroying current: cuStreamGetDevice(NULL)", F(cuStreamGetDevice)(NULL, &d));
    P("after destroying current: cuStreamIsCapturing(NULL)", F(cuStreamIsCapturing)(NULL, &cs));
}

/* ------------------------------------------------------------------ devices */

static void devices(void) {
    P("cuInit(0)", F(cuInit)(0));
    int v = -7, major = -7, minor = -7;
    PV("cuDeviceCanAccessPeer(0, 0)", F(cuDeviceCanAccessPeer)(&v, 0, 0), "%d", v);
    v = -7;
    PV("cuDeviceCanAccessPeer(0, 1)", F(cuDeviceCanAccessPeer)(&v, 0, 1), "%d", v);
    P("cuDeviceCanAccessPeer(-1, 0)", F(cuDeviceCanAccessPeer)(&v, -1, 0));
    P("cuDeviceCanAccessPeer(NULL)", F(cuDeviceCanAccessPeer)(NULL, 0, 0));
    for (int a = 0; a <= 6; ++a) {
        char label[64];
        snprintf(label, sizeof label, "cuDeviceGetP2PAttribute(%d, 0, 0)", a);
        v = -7;
        PV(label, F(cuDeviceGetP2PAttribute)(&v, (CUdevice_P2PAttribute)a, 0, 0), "%d", v);
        snprintf(label, sizeof label, "cuDeviceGetP2PAttribute(%d, 0, 1)", a);
        v = -7;
        PV(label, F(cuDeviceGetP2PAttribute)(&v, (CUdevice_P2PAttribute)a, 0, 1), "%d", v);
    }
    P("cuDeviceGetP2PAttribute(NULL, 1, 0, 0)",
      F(cuDeviceGetP2PAttribute)(NULL, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 0, 0));
    P("cuDeviceGetP2PAttribute(NULL, 1, 0, 1)",
      F(cuDeviceGetP2PAttribute)(NULL, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 0, 1));
    PV("cuDeviceComputeCapability", F(cuDeviceComputeCapability)(&major, &minor, 0), "%d.%d", major, minor);
    P("cuDeviceComputeCapability(NULL major)", F(cuDeviceComputeCapability)(NULL, &minor, 0));
    P("cuDeviceComputeCapability(NULL minor)", F(cuDeviceComputeCapability)(&major, NULL, 0));
    P("cuDeviceComputeCapability(dev 9)", F(cuDeviceComputeCapability)(&major, &minor, 9));
    CUdevprop p;
    memset(&p, 0x5a, sizeof p);
    PV("cuDeviceGetProperties", F(cuDeviceGetProperties)(&p, 0),
       "threads=%d dim=%d,%d,%d grid=%d,%d,%d shared=%d const=%d warp=%d pitch=%d regs=%d clock=%d align=%d",
       p.maxThreadsPerBlock, p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2], p.maxGridSize[0],
       p.maxGridSize[1], p.maxGridSize[2], p.sharedMemPerBlock, p.totalConstantMemory, p.SIMDWidth, p.memPitch,
       p.regsPerBlock, p.clockRate, p.textureAlign);
    P("cuDeviceGetProperties(NULL)", F(cuDeviceGetProperties)(NULL, 0));
    P("cuDeviceGetProperties(dev 9)", F(cuDeviceGetProperties)(&p, 9));
}

/* ------------------------------------------------------------------ pointers */

static CUcontext ctx_a;

/* One attribute of one pointer: the result and, for the value, what it is
 * relative to the pointer (never a raw address). */
static void attr_case(const char* what, uintptr_t ptr, int attr) {
    union {
        unsigned char bytes[64];
        unsigned int u32;
        int i32;
        unsigned long long u64;
        void* p;
        CUcontext ctx;
    } out;
    memset(&out, 0xab, sizeof out);
    char label[96];
    snprintf(label, sizeof label, "%s attr %d", what, attr);
    CUresult r = CUDA_SUCCESS;
    if (sigsetjmp(crash_jump, 1) == 0) {
        in_case = 1;
        r = F(cuPointerGetAttribute)(&out, (CUpointer_attribute)attr, (CUdeviceptr)ptr);
        in_case = 0;
    } else {
        printf("%-*s => CRASH\n", PROBE_WIDTH, label);
        return;
    }
    char value[96] = "";
    if (r == CUDA_SUCCESS) {
        switch (attr) {
        case CU_POINTER_ATTRIBUTE_CONTEXT:
            snprintf(value, sizeof value, "%s", out.ctx == ctx_a ? "ctx a" : out.ctx ? "other ctx" : "NULL");
            break;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
            snprintf(value, sizeof value, "%s%+lld", out.p ? "ptr" : "NULL", out.p ? (long long)((uintptr_t)out.p - ptr) : 0);
            break;
        case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
            snprintf(value, sizeof value, "(tokens)");
            break;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
            snprintf(value, sizeof value, "nonzero=%d", out.u64 != 0);
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
            snprintf(value, sizeof value, "%llu", out.u64);
            break;
        case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
            snprintf(value, sizeof value, "%s", out.p ? "set" : "NULL");
            break;
        default:
            snprintf(value, sizeof value, "0x%x (bytes 4-7 %02x%02x%02x%02x)", out.u32, out.bytes[4], out.bytes[5],
                     out.bytes[6], out.bytes[7]);
        }
    }
    printf("%-*s => %s %s\n", PROBE_WIDTH, label, rname(r), value);
    fflush(stdout);
}

static void attrs_case(const char* what, uintptr_t ptr) {
    static const CUpointer_attribute list[] = {CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                               CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                               CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                               CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_MAPPED};
    enum { n = sizeof list / sizeof *list };
    unsigned long long vals[n];
    void* data[n];
    for (int i = 0; i < n; ++i) {
        vals[i] = 0xababababababababull;
        data[i] = &vals[i];
    }
    char label[96];
    snprintf(label, sizeof label, "%s cuPointerGetAttributes", what);
    CUresult r = F(cuPointerGetAttributes)(n, (CUpointer_attribute*)list, data, (CUdeviceptr)ptr);
    printf("%-*s => %s ctx=%s type=%u dptr=%s hptr=%s managed=%u ordinal=%d size=%llu mapped=%u\n", PROBE_WIDTH, label,
           rname(r), (CUcontext)(uintptr_t)vals[0] == ctx_a ? "a" : vals[0] ? "other" : "NULL", (unsigned)vals[1],
           vals[2] == ptr ? "ptr" : vals[2] ? "other" : "NULL", vals[3] == ptr ? "ptr" : vals[3] ? "other" : "NULL",
           (unsigned)vals[4], (int)vals[5], vals[6] == 0xababababababababull ? 0 : vals[6], (unsigned)vals[7]);
    fflush(stdout);
}

static void pointers(void) {
    P("cuInit(0)", F(cuInit)(0));
    P("cuCtxCreate a", F(cuCtxCreate)(&ctx_a, NULL, 0, 0));
    CUdeviceptr dev = 0, freed = 0;
    void *host = NULL, *wc = NULL;
    P("cuMemAlloc 1 MiB + 3", F(cuMemAlloc)(&dev, (1 << 20) + 3));
    P("cuMemAlloc freed", F(cuMemAlloc)(&freed, 4096));
    P("cuMemFree freed", F(cuMemFree)(freed));
    P("cuMemAllocHost 65 KiB", F(cuMemAllocHost)(&host, 65 << 10));
    P("cuMemHostAlloc WRITECOMBINED|DEVICEMAP", F(cuMemHostAlloc)(&wc, 8192, CU_MEMHOSTALLOC_WRITECOMBINED | CU_MEMHOSTALLOC_DEVICEMAP));
    const size_t reg_size = 3 << 20;
    void* reg = aligned_alloc(4096, reg_size);
    P("cuMemHostRegister 3 MiB", F(cuMemHostRegister)(reg, reg_size, 0));
    void* pageable = malloc(4096);
    int on_stack = 0;
    static const struct {
        const char* name;
        int which;
    } ptrs[] = {{"device", 0}, {"device+100", 1}, {"device end", 2}, {"freed device", 3}, {"host alloc", 4},
                {"host alloc+9", 5}, {"writecombined", 6}, {"registered+4097", 7}, {"pageable", 8}, {"stack", 9},
                {"NULL", 10}};
    for (size_t i = 0; i < sizeof ptrs / sizeof *ptrs; ++i) {
        uintptr_t p = 0;
        switch (ptrs[i].which) {
        case 0: p = dev; break;
        case 1: p = dev + 100; break;
        case 2: p = dev + (1 << 20) + 3; break;
        case 3: p = freed; break;
        case 4: p = (uintptr_t)host; break;
        case 5: p = (uintptr_t)host + 9; break;
        case 6: p = (uintptr_t)wc; break;
        case 7: p = (uintptr_t)reg + 4097; break;
        case 8: p = (uintptr_t)pageable; break;
        case 9: p = (uintptr_t)&on_stack; break;
        default: p = 0;
        }
        for (int a = 1; a <= 22; ++a) attr_case(ptrs[i].name, p, a);
        attrs_case(ptrs[i].name, p);
    }
    P("cuPointerGetAttribute(NULL data)", F(cuPointerGetAttribute)(NULL, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dev));
    CUpointer_attribute one = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    unsigned mt = 77;
    void* slot = &mt;
    PV("cuPointerGetAttributes(0 attributes)", F(cuPointerGetAttributes)(0, &one, &slot, dev), "%u", mt);
    P("cuPointerGetAttributes(NULL list)", F(cuPointerGetAttributes)(1, NULL, &slot, dev));
    P("cuPointerGetAttributes(NULL data)", F(cuPointerGetAttributes)(1, &one, NULL, dev));
    void* null_slot = NULL;
    P("cuPointerGetAttributes(NULL slot)", F(cuPointerGetAttributes)(1, &one, &null_slot, dev));
    CUpointer_attribute bad = (CUpointer_attribute)99;
    P("cuPointerGetAttributes(attr 99)", F(cuPointerGetAttributes)(1, &bad, &slot, dev));

    /* Without a current context. */
    CUcontext popped = NULL;
    P("cuCtxPopCurrent", F(cuCtxPopCurrent)(&popped));
    attr_case("no-ctx device", dev, CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
    attr_case("no-ctx device", dev, CU_POINTER_ATTRIBUTE_CONTEXT);
    attr_case("no-ctx device", dev, CU_POINTER_ATTRIBUTE_DEVICE_POINTER);
    attr_case("no-ctx host alloc", (uintptr_t)host, CU_POINTER_ATTRIBUTE_HOST_POINTER);
    attrs_case("no-ctx device", dev);
    P("cuCtxPushCurrent", F(cuCtxPushCurrent)(ctx_a));
    F(cuMemHostUnregister)(reg);
    free(reg);
    free(pageable);
    P("cuCtxDestroy a", F(cuCtxDestroy)(ctx_a));
}

int main(int argc, char** argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    const char* why = probe_open_library();
    if (why) {
        printf("dlopen(libcuda.so.1) failed: %s\n", why);
        return 1;
    }
    Dl_info info;
    if (dladdr(dlsym(lib, "cuInit"), &info) && info.dli_fname) fprintf(stderr, "library: %s\n", info.dli_fname);
    const char* section = argc > 1 ? argv[1] : "gpa";
    if (strcmp(section, "gpa") == 0) gpa();
    else if (strcmp(section, "exporttable") == 0) exporttable();
    else if (strcmp(section, "contexts") == 0) contexts();
    else if (strcmp(section, "streams") == 0) streams();
    else if (strcmp(section, "devices") == 0) devices();
    else if (strcmp(section, "pointers") == 0) pointers();
    else {
        printf("unknown section %s\n", section);
        return 2;
    }
    return 0;
}
