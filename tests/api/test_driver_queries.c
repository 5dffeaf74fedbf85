/*
 * The queries real clients reach first (issue 8, item 7): cuCtxSynchronize_v2,
 * cuCtxGetDevice_v2, cuCtxGet/SetLimit, cuCtxGet/SetCacheConfig,
 * cuCtxGetApiVersion, cuCtxGetId, cuCtxSetFlags, cuStreamGetId,
 * cuStreamGetDevice, cuStreamGetCtx_v2, cuStreamIsCapturing,
 * cuStreamGetCaptureInfo, cuDeviceCanAccessPeer, cuDeviceGetP2PAttribute,
 * cuDeviceComputeCapability, cuDeviceGetProperties, cuPointerGetAttribute(s);
 * and the stub rule of the functions nvlite does not provide, with the
 * device attributes that say so.
 */
#define CUDA_ENABLE_DEPRECATED /* cuDeviceComputeCapability, cuDeviceGetProperties */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

/* Declared by cuda.h for the library only (__CUDA_API_VERSION_INTERNAL). */
typedef CUresult (*capture_info_v1_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *);
typedef CUresult (*capture_info_v2_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                       const CUgraphNode **, size_t *);

/* ------------------------------------------------------------------ contexts */

static void test_ctx_synchronize_and_device_v2(void **state) {
    ts_fixture *fx = ts_fx(state);
    assert_cu_ok(cuCtxSynchronize_v2(NULL));
    assert_cu_ok(cuCtxSynchronize_v2(fx->ctx));
    CUdevice d = -7;
    assert_cu_ok(cuCtxGetDevice_v2(&d, NULL));
    assert_int_equal(d, fx->dev);
    d = -7;
    assert_cu_ok(cuCtxGetDevice_v2(&d, fx->ctx));
    assert_int_equal(d, fx->dev);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxGetDevice_v2(NULL, fx->ctx));

    /* Another context, not current: synchronised and asked by handle. */
    CUcontext other = NULL, popped = NULL;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev));
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, other);
    assert_cu_ok(cuCtxSynchronize_v2(other));
    d = -7;
    assert_cu_ok(cuCtxGetDevice_v2(&d, other));
    assert_int_equal(d, fx->dev);
    /* Destroyed, and never a context. */
    assert_cu_ok(cuCtxDestroy(other));
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxSynchronize_v2(other));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxSynchronize_v2((CUcontext)&d));

    /* No current context. */
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxSynchronize_v2(NULL));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetDevice_v2(&d, NULL));
    assert_cu_ok(cuCtxPushCurrent(fx->ctx));
}

static void test_ctx_ids_and_api_version(void **state) {
    ts_fixture *fx = ts_fx(state);
    unsigned long long a = 0, b = 0, cur = 0;
    assert_cu_ok(cuCtxGetId(fx->ctx, &a));
    assert_true(a != 0);
    assert_cu_ok(cuCtxGetId(NULL, &cur));
    assert_true(cur == a);
    CUcontext other = NULL, popped = NULL;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev));
    assert_cu_ok(cuCtxGetId(other, &b));
    assert_true(b > a);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxGetId(other, NULL));
    unsigned v = 0;
    assert_cu_ok(cuCtxGetApiVersion(other, &v));
    assert_int_equal(v, 3020);
    v = 0;
    assert_cu_ok(cuCtxGetApiVersion(NULL, &v));
    assert_int_equal(v, 3020);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxGetApiVersion(other, NULL));
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_cu_ok(cuCtxDestroy(other));
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxGetId(other, &b));
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxGetApiVersion(other, &v));
    /* The primary context has its own id too. */
    CUcontext primary = NULL;
    unsigned long long p = 0;
    assert_cu_ok(cuDevicePrimaryCtxRetain(&primary, fx->dev));
    assert_cu_ok(cuCtxGetId(primary, &p));
    assert_true(p > b);
    assert_cu_ok(cuDevicePrimaryCtxRelease(fx->dev));
}

static void test_ctx_set_flags(void **state) {
    (void)state;
    static const unsigned flags[] = {CU_CTX_SCHED_SPIN, CU_CTX_SCHED_YIELD,
                                     CU_CTX_SCHED_BLOCKING_SYNC | CU_CTX_LMEM_RESIZE_TO_MAX, CU_CTX_SCHED_AUTO};
    CUdeviceptr d = ts_dev_alloc(4099);
    for (size_t i = 0; i < TS_ARRAY_SIZE(flags); ++i) {
        assert_cu_ok(cuCtxSetFlags(flags[i]));
        unsigned got = 0xdead;
        assert_cu_ok(cuCtxGetFlags(&got));
        assert_int_equal(got, flags[i]);
        /* Waiting in the new mode works. */
        assert_cu_ok(cuMemsetD8(d, (unsigned char)(0x31 + i), 4099));
        assert_cu_ok(cuCtxSynchronize());
    }
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxSetFlags(CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxSetFlags(0x100000));
    unsigned got = 0xdead;
    assert_cu_ok(cuCtxGetFlags(&got));
    assert_int_equal(got, CU_CTX_SCHED_AUTO);
}

/* cuCtxSetFlags while another thread waits in the context (make test-tsan). */
typedef struct {
    CUcontext ctx;
    CUdeviceptr d;
    atomic_int stop;
    CUresult failed;
} flags_race;

static void *waiter(void *arg) {
    flags_race *r = arg;
    CUresult e = cuCtxSetCurrent(r->ctx);
    for (int i = 0; e == CUDA_SUCCESS && i < 200; ++i) {
        e = cuMemsetD32Async(r->d, 0x01020304u + (unsigned)i, 1 << 16, NULL);
        if (e == CUDA_SUCCESS) e = cuCtxSynchronize();
    }
    if (e != CUDA_SUCCESS) r->failed = e;
    atomic_store(&r->stop, 1);
    return NULL;
}

static void test_ctx_set_flags_while_waiting(void **state) {
    ts_fixture *fx = ts_fx(state);
    flags_race r = {fx->ctx, ts_dev_alloc((1 << 18) + 4), 0, CUDA_SUCCESS};
    atomic_init(&r.stop, 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, waiter, &r), 0);
    static const unsigned modes[] = {CU_CTX_SCHED_SPIN, CU_CTX_SCHED_YIELD, CU_CTX_SCHED_BLOCKING_SYNC,
                                     CU_CTX_SCHED_AUTO};
    for (unsigned i = 0; !atomic_load(&r.stop); ++i) assert_cu_ok(cuCtxSetFlags(modes[i % 4]));
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_cu_ok(r.failed);
}

static void test_ctx_limits(void **state) {
    (void)state;
    size_t v = 0;
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    assert_int_equal(v, 1024);
    assert_cu_ok(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 6000));
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    assert_int_equal(v, 6000);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxSetLimit(CU_LIMIT_STACK_SIZE, (size_t)1 << 40));
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    assert_int_equal(v, 6000);
    /* Hints, clamped. */
    assert_cu_ok(cuCtxSetLimit(CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 100));
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_MAX_L2_FETCH_GRANULARITY));
    assert_int_equal(v, 64);
    int most = 0;
    assert_cu_ok(cuDeviceGetAttribute(&most, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, 0));
    assert_cu_ok(cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, (size_t)1 << 40));
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_PERSISTING_L2_CACHE_SIZE));
    assert_int_equal(v, (size_t)most);
    /* printf's FIFO and the device heap: libcuda 580's defaults and smallest values. */
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_PRINTF_FIFO_SIZE));
    assert_int_equal(v, 8650752);
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
    assert_int_equal(v, 8u << 20);
    assert_cu_ok(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, 1));
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_PRINTF_FIFO_SIZE));
    assert_int_equal(v, 512u << 10);
    assert_cu_ok(cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, (16u << 20) + 3));
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
    assert_int_equal(v, (16u << 20) + 3);
    /* Device-side launches waiting at once: libcuda's default, then what is set. */
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT));
    assert_int_equal(v, 2048);
    assert_cu_ok(cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 4093));
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT));
    assert_int_equal(v, 4093);
    assert_cu_ok(cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 0)); /* libcuda 580 takes 0 too */
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT));
    assert_int_equal(v, 0);
    /* CDP1's synchronisation depth: a limit nvlite does not have. */
    assert_cu(CUDA_ERROR_UNSUPPORTED_LIMIT, cuCtxGetLimit(&v, CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH));
    assert_cu(CUDA_ERROR_UNSUPPORTED_LIMIT, cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 4096));
    /* Read-only (libcuda 580): the opt-in shared memory per block; not a CIG context. */
    int optin = 0;
    assert_cu_ok(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0));
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_SHMEM_SIZE));
    assert_int_equal(v, (size_t)optin);
    assert_cu(CUDA_ERROR_NOT_PERMITTED, cuCtxSetLimit(CU_LIMIT_SHMEM_SIZE, 1024));
    v = 7;
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_CIG_ENABLED));
    assert_int_equal(v, 0);
    assert_cu(CUDA_ERROR_NOT_PERMITTED, cuCtxSetLimit(CU_LIMIT_CIG_ENABLED, 1));
    assert_cu(CUDA_ERROR_UNSUPPORTED_LIMIT, cuCtxGetLimit(&v, CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED));
    assert_cu(CUDA_ERROR_UNSUPPORTED_LIMIT, cuCtxSetLimit(CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED, 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxGetLimit(&v, (CUlimit)0x77));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxSetLimit((CUlimit)0x77, 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxGetLimit(NULL, CU_LIMIT_STACK_SIZE));
    /* Another context keeps its own. */
    CUcontext other = NULL, popped = NULL;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, 0));
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    assert_int_equal(v, 1024);
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_cu_ok(cuCtxDestroy(other));
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    assert_int_equal(v, 6000);
}

/* A recursive kernel (no stack size known) runs with a stack set large. */
static void test_stack_limit_covers_recursion(void **state) {
    (void)state;
    static const char src[] =
        "__device__ int depth(int n, volatile int* scratch) {\n"
        "    volatile int local[8];\n"
        "    for (int i = 0; i < 8; ++i) local[i] = n + i;\n"
        "    return n <= 0 ? local[7] : depth(n - 1, scratch) + local[3];\n"
        "}\n"
        "extern \"C\" __global__ void recurse(int n, int* out) { out[threadIdx.x] = depth(n, out); }\n";
    CUmodule m = ts_source_module(src, "recurse.cu");
    CUfunction f = ts_get_function(m, "recurse");
    int local = -1;
    assert_cu_ok(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f));
    assert_cu_ok(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 16384));
    CUdeviceptr out = ts_dev_alloc(32 * sizeof(int));
    int n = 100;
    void *params[] = {&n, &out};
    assert_cu_ok(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    assert_cu_ok(cuCtxSynchronize());
    if (!ts_on_simulator()) {
        int host[32];
        assert_cu_ok(cuMemcpyDtoH(host, out, sizeof host));
        /* depth(n) = depth(n - 1) + n + 3, depth(0) = 7 */
        for (int i = 0; i < 32; ++i) assert_int_equal(host[i], 7 + 100 * 101 / 2 + 3 * 100);
    }
    size_t v = 0;
    assert_cu_ok(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    assert_true(v >= 16384);
    assert_true(v >= (size_t)local);
    assert_cu_ok(cuModuleUnload(m));
}

static void test_ctx_cache_config(void **state) {
    (void)state;
    CUfunc_cache c = (CUfunc_cache)77;
    assert_cu_ok(cuCtxGetCacheConfig(&c));
    assert_int_equal(c, CU_FUNC_CACHE_PREFER_NONE);
    static const CUfunc_cache all[] = {CU_FUNC_CACHE_PREFER_SHARED, CU_FUNC_CACHE_PREFER_L1, CU_FUNC_CACHE_PREFER_EQUAL,
                                       CU_FUNC_CACHE_PREFER_NONE};
    for (size_t i = 0; i < TS_ARRAY_SIZE(all); ++i) {
        assert_cu_ok(cuCtxSetCacheConfig(all[i]));
        assert_cu_ok(cuCtxGetCacheConfig(&c));
        assert_int_equal(c, all[i]);
    }
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxSetCacheConfig((CUfunc_cache)4));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxGetCacheConfig(NULL));
}

static void test_ctx_queries_without_context(void **state) {
    (void)state;
    size_t v = 0;
    CUfunc_cache c;
    unsigned long long id = 0;
    unsigned ver = 0;
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 2048));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetCacheConfig(&c));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_L1));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxSetFlags(0));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetId(NULL, &id));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetApiVersion(NULL, &ver));
}

/* ------------------------------------------------------------------ streams */

static void test_stream_ids_device_and_context(void **state) {
    ts_fixture *fx = ts_fx(state);
    CUstream s = ts_stream_new(0), nb = ts_stream_new(CU_STREAM_NON_BLOCKING);
    unsigned long long is = 0, inb = 0, legacy = 0, legacy2 = 0, pt = 0;
    assert_cu_ok(cuStreamGetId(s, &is));
    assert_cu_ok(cuStreamGetId(nb, &inb));
    assert_true(is != inb);
    assert_true(inb > is);
    assert_cu_ok(cuStreamGetId(NULL, &legacy));
    assert_cu_ok(cuStreamGetId(CU_STREAM_LEGACY, &legacy2));
    assert_true(legacy == legacy2);
    assert_true(legacy != is && legacy != inb);
    /* The per-thread default stream is the legacy stream in nvlite (README). */
    assert_cu_ok(cuStreamGetId(CU_STREAM_PER_THREAD, &pt));
    assert_true(pt == legacy);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamGetId(s, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamGetId((CUstream)&is, &pt));

    CUdevice d = -7;
    assert_cu_ok(cuStreamGetDevice(s, &d));
    assert_int_equal(d, fx->dev);
    d = -7;
    assert_cu_ok(cuStreamGetDevice(NULL, &d));
    assert_int_equal(d, fx->dev);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamGetDevice(s, NULL));

    CUcontext c = NULL;
    CUgreenCtx g = (CUgreenCtx)1;
    assert_cu_ok(cuStreamGetCtx_v2(nb, &c, &g));
    assert_ptr_equal(c, fx->ctx);
    assert_null(g);
    c = NULL, g = (CUgreenCtx)1;
    assert_cu_ok(cuStreamGetCtx_v2(CU_STREAM_PER_THREAD, &c, &g));
    assert_ptr_equal(c, fx->ctx);
    assert_null(g);

    /* A stream of another context answers for its own, from any context. */
    CUcontext other = NULL, popped = NULL;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev));
    CUstream so = ts_stream_new(0);
    unsigned long long iso = 0;
    assert_cu_ok(cuStreamGetId(so, &iso));
    assert_true(iso > inb);
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_cu_ok(cuStreamGetCtx_v2(so, &c, &g));
    assert_ptr_equal(c, other);
    assert_cu_ok(cuCtxDestroy(other));
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuStreamDestroy(nb));
}

static void test_stream_capture_state(void **state) {
    (void)state;
    CUstream s = ts_stream_new(0);
    const CUstream handles[] = {NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, s};
    for (size_t i = 0; i < TS_ARRAY_SIZE(handles); ++i) {
        CUstreamCaptureStatus st = (CUstreamCaptureStatus)77;
        assert_cu_ok(cuStreamIsCapturing(handles[i], &st));
        assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_NONE);
        st = (CUstreamCaptureStatus)77;
        cuuint64_t id = 0x5a5a;
        CUgraph graph = (CUgraph)1;
        size_t n = 99;
        assert_cu_ok(cuStreamGetCaptureInfo(handles[i], &st, &id, &graph, NULL, NULL, &n));
        assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_NONE);
        /* Only an active capture has the other results. */
        assert_int_equal(id, 0x5a5a);
        assert_int_equal(n, 99);
    }
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamIsCapturing(s, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamGetCaptureInfo(s, NULL, NULL, NULL, NULL, NULL, NULL));
    const CUgraphEdgeData *edges = NULL;
    CUstreamCaptureStatus st;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuStreamGetCaptureInfo(s, &st, NULL, NULL, NULL, &edges, NULL));
    /* The older forms, and the per-thread one. */
    capture_info_v1_fn v1 = (capture_info_v1_fn)dlsym(RTLD_DEFAULT, "cuStreamGetCaptureInfo");
    capture_info_v2_fn v2 = (capture_info_v2_fn)dlsym(RTLD_DEFAULT, "cuStreamGetCaptureInfo_v2");
    capture_info_v1_fn v1pt = (capture_info_v1_fn)dlsym(RTLD_DEFAULT, "cuStreamGetCaptureInfo_ptsz");
    assert_non_null(v1);
    assert_non_null(v2);
    assert_non_null(v1pt);
    st = (CUstreamCaptureStatus)77;
    assert_cu_ok(v1(s, &st, NULL));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_NONE);
    st = (CUstreamCaptureStatus)77;
    assert_cu_ok(v2(s, &st, NULL, NULL, NULL, NULL));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_NONE);
    st = (CUstreamCaptureStatus)77;
    assert_cu_ok(v1pt(NULL, &st, NULL));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_NONE);
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamIsCapturing((CUstream)&st, &st));
}

static void test_stream_queries_without_context(void **state) {
    (void)state;
    unsigned long long id = 0;
    CUdevice d;
    CUstreamCaptureStatus st;
    CUcontext c;
    CUgreenCtx g;
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuStreamGetId(NULL, &id));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuStreamGetDevice(NULL, &d));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuStreamIsCapturing(NULL, &st));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuStreamGetCtx_v2(NULL, &c, &g));
}

/* ------------------------------------------------------------------ devices */

static void test_device_queries(void **state) {
    (void)state;
    int can = -7;
    assert_cu_ok(cuDeviceCanAccessPeer(&can, 0, 0));
    assert_int_equal(can, 0);
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceCanAccessPeer(&can, 0, 1));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceCanAccessPeer(&can, -1, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceCanAccessPeer(NULL, 0, 0));
    int v = -7;
    for (int a = CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK;
         a <= CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED; ++a) {
        assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetP2PAttribute(&v, (CUdevice_P2PAttribute)a, 0, 0));
        assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetP2PAttribute(&v, (CUdevice_P2PAttribute)a, 0, 1));
    }
    /* libcuda 580 (H200 run of dropin_probe devices): the devices are checked before the attribute. */
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetP2PAttribute(&v, (CUdevice_P2PAttribute)0, 0, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetP2PAttribute(NULL, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 0));

    int major = -1, minor = -1, amaj = -2, amin = -2;
    assert_cu_ok(cuDeviceComputeCapability(&major, &minor, 0));
    assert_cu_ok(cuDeviceGetAttribute(&amaj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
    assert_cu_ok(cuDeviceGetAttribute(&amin, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0));
    assert_int_equal(major, amaj);
    assert_int_equal(minor, amin);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceComputeCapability(NULL, &minor, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceComputeCapability(&major, &minor, 9));

    CUdevprop p;
    memset(&p, 0x5a, sizeof p);
    assert_cu_ok(cuDeviceGetProperties(&p, 0));
    const struct {
        int value;
        CUdevice_attribute attribute;
    } fields[] = {{p.maxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
                  {p.maxThreadsDim[0], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X},
                  {p.maxThreadsDim[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z},
                  {p.maxGridSize[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X},
                  {p.maxGridSize[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y},
                  {p.sharedMemPerBlock, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
                  {p.totalConstantMemory, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY},
                  {p.SIMDWidth, CU_DEVICE_ATTRIBUTE_WARP_SIZE},
                  {p.memPitch, CU_DEVICE_ATTRIBUTE_MAX_PITCH},
                  {p.regsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
                  {p.clockRate, CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
                  {p.textureAlign, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT}};
    for (size_t i = 0; i < TS_ARRAY_SIZE(fields); ++i) {
        int want = -1;
        assert_cu_ok(cuDeviceGetAttribute(&want, fields[i].attribute, 0));
        assert_int_equal(fields[i].value, want);
    }
    assert_int_equal(p.SIMDWidth, 32);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetProperties(NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetProperties(&p, 9));
}

/* ------------------------------------------------------------------ pointers */

static unsigned get_u32(CUpointer_attribute a, CUdeviceptr p, CUresult want) {
    unsigned char buf[16];
    memset(buf, 0xab, sizeof buf);
    assert_cu(want, cuPointerGetAttribute(buf, a, p));
    /* Four bytes written, the next ones untouched. */
    if (want == CUDA_SUCCESS) assert_int_equal(buf[4], 0xab);
    unsigned v;
    memcpy(&v, buf, sizeof v);
    return v;
}

static unsigned long long get_u64(CUpointer_attribute a, CUdeviceptr p) {
    unsigned long long v = 0xababababababababull;
    assert_cu_ok(cuPointerGetAttribute(&v, a, p));
    return v;
}

static void test_pointer_attributes(void **state) {
    ts_fixture *fx = ts_fx(state);
    const size_t n = (1 << 20) + 37;
    CUdeviceptr dev = ts_dev_alloc(n), dev2 = ts_dev_alloc(4099);
    unsigned char *host = ts_pinned_alloc(65536 + 9);
    const size_t reg_n = 3 << 20;
    unsigned char *reg = aligned_alloc(4096, reg_n);
    assert_non_null(reg);
    ts_fill_random(reg, reg_n, 0x5eed0110);
    assert_cu_ok(cuMemHostRegister(reg, reg_n, 0));
    const CUdeviceptr inner = dev + 4097;

    /* Device memory. */
    CUcontext c = NULL;
    assert_cu_ok(cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, inner));
    assert_ptr_equal(c, fx->ctx);
    assert_int_equal(get_u32(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, inner, CUDA_SUCCESS), CU_MEMORYTYPE_DEVICE);
    assert_true(get_u64(CU_POINTER_ATTRIBUTE_DEVICE_POINTER, inner) == inner);
    get_u32(CU_POINTER_ATTRIBUTE_HOST_POINTER, inner, CUDA_ERROR_INVALID_VALUE);
    assert_true(get_u64(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, inner) == dev);
    assert_true(get_u64(CU_POINTER_ATTRIBUTE_RANGE_SIZE, inner) == n);
    assert_int_equal(get_u32(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, inner, CUDA_SUCCESS), 0);
    assert_int_equal(get_u32(CU_POINTER_ATTRIBUTE_IS_MANAGED, inner, CUDA_SUCCESS), 0);
    assert_int_equal(get_u32(CU_POINTER_ATTRIBUTE_MAPPED, inner, CUDA_SUCCESS), 1);
    assert_int_equal(get_u32(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, inner, CUDA_SUCCESS),
                     CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
    /* Buffer ids: one per allocation, never reused. */
    const unsigned long long id1 = get_u64(CU_POINTER_ATTRIBUTE_BUFFER_ID, dev);
    assert_true(get_u64(CU_POINTER_ATTRIBUTE_BUFFER_ID, inner) == id1);
    const unsigned long long id2 = get_u64(CU_POINTER_ATTRIBUTE_BUFFER_ID, dev2);
    assert_true(id1 != id2);
    assert_cu_ok(cuMemFree(dev2));
    CUdeviceptr again = ts_dev_alloc(4099);
    const unsigned long long id3 = get_u64(CU_POINTER_ATTRIBUTE_BUFFER_ID, again);
    assert_true(id3 != id1 && id3 != id2);
    /* Past the end, freed. */
    get_u32(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dev + n, CUDA_ERROR_INVALID_VALUE);

    /* Pinned and registered host memory: the same address everywhere. */
    const CUdeviceptr h = ts_dptr(host + 9), r = ts_dptr(reg + 4097);
    assert_int_equal(get_u32(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, h, CUDA_SUCCESS), CU_MEMORYTYPE_HOST);
    assert_int_equal(get_u32(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, r, CUDA_SUCCESS), CU_MEMORYTYPE_HOST);
    assert_true(get_u64(CU_POINTER_ATTRIBUTE_HOST_POINTER, h) == h);
    assert_true(get_u64(CU_POINTER_ATTRIBUTE_DEVICE_POINTER, r) == r);
    assert_true(get_u64(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, r) == ts_dptr(reg));
    assert_true(get_u64(CU_POINTER_ATTRIBUTE_RANGE_SIZE, r) == reg_n);

    /* Memory nvlite knows nothing of. */
    unsigned char *pageable = ts_malloc(4096);
    get_u32(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ts_dptr(pageable), CUDA_ERROR_INVALID_VALUE);
    get_u32(CU_POINTER_ATTRIBUTE_CONTEXT, 0, CUDA_ERROR_INVALID_VALUE);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuPointerGetAttribute(NULL, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dev));
    get_u32((CUpointer_attribute)99, dev, CUDA_ERROR_INVALID_VALUE);

    /* Several at once; an unknown address is not an error there. */
    CUpointer_attribute list[] = {CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                  CU_POINTER_ATTRIBUTE_HOST_POINTER};
    CUcontext ctx = (CUcontext)1;
    unsigned type = 77;
    int ordinal = 77, managed = 77;
    void *hp = (void *)1;
    void *data[] = {&ctx, &type, &ordinal, &managed, &hp};
    assert_cu_ok(cuPointerGetAttributes(5, list, data, inner));
    assert_ptr_equal(ctx, fx->ctx);
    assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
    assert_int_equal(ordinal, 0);
    assert_int_equal(managed, 0);
    assert_null(hp);
    assert_cu_ok(cuPointerGetAttributes(5, list, data, ts_dptr(pageable)));
    assert_null(ctx);
    assert_int_equal(type, 0);
    assert_int_equal(managed, 0);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuPointerGetAttributes(5, NULL, data, inner));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuPointerGetAttributes(5, list, NULL, inner));

    /* Without a current context, only the device pointer needs one. */
    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_int_equal(get_u32(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, inner, CUDA_SUCCESS), CU_MEMORYTYPE_DEVICE);
    unsigned long long dp = 0;
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, inner));
    assert_cu_ok(cuCtxPushCurrent(popped));
    assert_cu_ok(cuMemHostUnregister(reg));
    free(reg);
}

/* ------------------------------------------------------------------ stubs */

/* The stub rule (README): after cuInit, a NULL output is INVALID_VALUE,
 * anything else CUDA_ERROR_NOT_SUPPORTED; and the device attributes of those
 * features say they are absent. */
static void test_features_not_provided(void **state) {
    (void)state;
    CUarray arr = NULL;
    CUDA_ARRAY_DESCRIPTOR desc = {1023, 17, CU_AD_FORMAT_FLOAT, 1};
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuArrayCreate(NULL, &desc));
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, cuArrayCreate(&arr, &desc));
    CUgraph graph = NULL;
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, cuGraphCreate(&graph, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGraphCreate(NULL, 0));
    CUstreamCaptureStatus st;
    cuuint64_t id;
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL));
    assert_cu_ok(cuStreamGetCaptureInfo(NULL, &st, &id, NULL, NULL, NULL, NULL));

    const struct {
        CUdevice_attribute attribute;
        const char *feature;
    } absent[] = {{CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, "cuMemAllocManaged"},
                  {CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, "cuMemPrefetchAsync"},
                  {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, "cuMemAddressReserve"},
                  {CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, "cuStreamWriteValue64"},
                  {CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, "cuIpcGetEventHandle"},
                  {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, "cuMemExportToShareableHandle"},
                  {CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, "cuMemGetHandleForAddressRange"},
                  {CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, "cuMulticastCreate"}};
    for (size_t i = 0; i < TS_ARRAY_SIZE(absent); ++i) {
        int v = -1;
        assert_cu_ok(cuDeviceGetAttribute(&v, absent[i].attribute, 0));
        if (v != 0)
            fail_msg("attribute %d is %d, but %s is not provided", (int)absent[i].attribute, v, absent[i].feature);
        /* The feature's entry point exists (a stub is still a symbol). */
        void *fn = NULL;
        CUdriverProcAddressQueryResult q;
        assert_cu_ok(cuGetProcAddress(absent[i].feature, &fn, CUDA_VERSION, 0, &q));
        assert_non_null(fn);
    }
    /* Sharing a memory pool with other processes: every pointer given, still not supported. */
    CUmemoryPool pool = NULL;
    assert_cu_ok(cuDeviceGetDefaultMemPool(&pool, 0));
    int fd = -1;
    assert_cu(CUDA_ERROR_NOT_SUPPORTED,
              cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CUdeviceptr p = 0;
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, cuMemAllocManaged(&p, 4096, CU_MEM_ATTACH_GLOBAL));
}

/* Before cuInit a stub answers NOT_INITIALIZED (its own process: the
 * test runs first, before any cuInit). */
static void test_stub_before_init(void **state) {
    (void)state;
    CUgraph graph = NULL;
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuGraphCreate(&graph, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuGraphCreate(NULL, 0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stub_before_init),
        cmocka_unit_test_setup_teardown(test_ctx_synchronize_and_device_v2, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_ctx_ids_and_api_version, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_ctx_set_flags, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_ctx_set_flags_while_waiting, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_ctx_limits, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_stack_limit_covers_recursion, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_ctx_cache_config, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_ctx_queries_without_context, ts_group_init, ts_check_no_current_context),
        cmocka_unit_test_setup_teardown(test_stream_ids_device_and_context, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_stream_capture_state, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_stream_queries_without_context, ts_group_init,
                                        ts_check_no_current_context),
        cmocka_unit_test_setup_teardown(test_device_queries, ts_group_init, ts_check_no_current_context),
        cmocka_unit_test_setup_teardown(test_pointer_attributes, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_features_not_provided, ts_ctx_setup, ts_ctx_teardown),
    };
    return cmocka_run_group_tests_name("driver_queries", tests, NULL, NULL);
}
