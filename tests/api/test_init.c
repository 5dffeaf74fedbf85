/*
 * cuInit and what works before it.
 *
 * Each test binary is its own process and cmocka runs the tests in the order
 * of the table in main(): the "before_init" tests come first and must stay
 * first; the first successful cuInit happens in test_init_first_concurrent.
 * Expected codes are libcuda 580's (tests/compat/expected/libcuda_init.txt);
 * where the probe is silent, CUDA's documentation (every driver call but
 * cuDriverGetVersion, cuGetErrorName and cuGetErrorString lists
 * CUDA_ERROR_NOT_INITIALIZED).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>

#include "support/test_support.h"

/* cuda.h declares the older cuCtxCreate revisions only for the driver itself
 * (__CUDA_API_VERSION_INTERNAL), as NVIDIA's does; libcuda exports them. */
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
                                CUdevice dev);

/* Every CUresult libcuda 580 names, with its name and description, as the
 * probe read them from cuGetErrorName/cuGetErrorString on the H200. */
static const struct {
    int code;
    const char *name;
    const char *description;
} kErrors[] = {
    {0, "CUDA_SUCCESS",
     "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE",
     "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY",
     "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED",
     "driver shutting down"},
    {5, "CUDA_ERROR_PROFILER_DISABLED",
     "profiler disabled while using external profiling tool"},
    {6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED",
     "profiler not initialized: call cudaProfilerInitialize()"},
    {7, "CUDA_ERROR_PROFILER_ALREADY_STARTED",
     "profiler already started"},
    {8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED",
     "profiler already stopped"},
    {34, "CUDA_ERROR_STUB_LIBRARY",
     "CUDA driver is a stub library"},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
     "API call is not supported in the installed CUDA driver"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE",
     "CUDA-capable device(s) is/are busy or unavailable"},
    {100, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {102, "CUDA_ERROR_DEVICE_NOT_LICENSED",
     "device doesn't have valid Grid license"},
    {200, "CUDA_ERROR_INVALID_IMAGE",
     "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT",
     "context already current"},
    {205, "CUDA_ERROR_MAP_FAILED",
     "mapping of buffer object failed"},
    {206, "CUDA_ERROR_UNMAP_FAILED",
     "unmapping of buffer object failed"},
    {207, "CUDA_ERROR_ARRAY_IS_MAPPED",
     "array is mapped"},
    {208, "CUDA_ERROR_ALREADY_MAPPED",
     "resource already mapped"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {210, "CUDA_ERROR_ALREADY_ACQUIRED",
     "resource already acquired"},
    {211, "CUDA_ERROR_NOT_MAPPED",
     "resource not mapped"},
    {212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY",
     "resource not mapped as array"},
    {213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER",
     "resource not mapped as pointer"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE",
     "uncorrectable ECC error encountered"},
    {215, "CUDA_ERROR_UNSUPPORTED_LIMIT",
     "limit is not supported on this architecture"},
    {216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
     "exclusive-thread device already in use by a different thread"},
    {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
     "peer access is not supported between these two devices"},
    {218, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT",
     "invalid OpenGL or DirectX context"},
    {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE",
     "uncorrectable NVLink error detected during the execution"},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
     "PTX JIT compiler library not found"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED",
     "PTX JIT compilation was disabled"},
    {224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY",
     "the provided execution affinity is not supported"},
    {225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC",
     "the provided PTX contains unsupported call to cudaDeviceSynchronize"},
    {226, "CUDA_ERROR_CONTAINED",
     "Invalid access of peer GPU memory over nvlink or a hardware error"},
    {300, "CUDA_ERROR_INVALID_SOURCE",
     "device kernel image is invalid"},
    {301, "CUDA_ERROR_FILE_NOT_FOUND",
     "file not found"},
    {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND",
     "shared object symbol not found"},
    {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
     "shared object initialization failed"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM",
     "OS call failed or operation not supported on this OS"},
    {400, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {401, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation cannot be performed in the present state"},
    {402, "CUDA_ERROR_LOSSY_QUERY",
     "attempted introspection would be semantically lossy"},
    {500, "CUDA_ERROR_NOT_FOUND",
     "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY",
     "device not ready"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT",
     "the launch timed out and was terminated"},
    {703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING",
     "launch uses incompatible texturing mode"},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
     "peer access is already enabled"},
    {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
     "peer access has not been enabled"},
    {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
     "cannot set while device is active in this process"},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED",
     "context is destroyed"},
    {710, "CUDA_ERROR_ASSERT",
     "device-side assert triggered"},
    {711, "CUDA_ERROR_TOO_MANY_PEERS",
     "peer mapping resources exhausted"},
    {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
     "part or all of the requested memory range is already mapped"},
    {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
     "pointer does not correspond to a registered memory region"},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR",
     "hardware stack error"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION",
     "an illegal instruction was encountered"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS",
     "misaligned address"},
    {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE",
     "operation not supported on global/shared address space"},
    {718, "CUDA_ERROR_INVALID_PC",
     "invalid program counter"},
    {719, "CUDA_ERROR_LAUNCH_FAILED",
     "unspecified launch failure"},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     "too many blocks in cooperative launch"},
    {721, "CUDA_ERROR_TENSOR_MEMORY_LEAK",
     "tensor memory not completely freed"},
    {800, "CUDA_ERROR_NOT_PERMITTED",
     "operation not permitted"},
    {801, "CUDA_ERROR_NOT_SUPPORTED",
     "operation not supported"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY",
     "system not yet initialized"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "forward compatibility was attempted on non supported HW"},
    {805, "CUDA_ERROR_MPS_CONNECTION_FAILED",
     "MPS client failed to connect to the MPS control daemon or the MPS server"},
    {806, "CUDA_ERROR_MPS_RPC_FAILURE",
     "the remote procedural call between the MPS server and the MPS client failed"},
    {807, "CUDA_ERROR_MPS_SERVER_NOT_READY",
     "MPS server is not ready to accept new MPS client requests"},
    {808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED",
     "the hardware resources required to create MPS client have been exhausted"},
    {809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
     "the hardware resources required to support device connections have been exhausted"},
    {810, "CUDA_ERROR_MPS_CLIENT_TERMINATED",
     "the MPS client has been terminated by the server"},
    {811, "CUDA_ERROR_CDP_NOT_SUPPORTED",
     "is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it"},
    {812, "CUDA_ERROR_CDP_VERSION_MISMATCH",
     "unsupported interaction between different versions of CUDA Dynamic Parallelism"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {902, "CUDA_ERROR_STREAM_CAPTURE_MERGE",
     "operation would result in a merge of separate capture sequences"},
    {903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
     "capture was not ended in the same stream as it began"},
    {904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
     "capturing stream has unjoined work"},
    {905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
     "dependency created on uncaptured work in another stream"},
    {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {907, "CUDA_ERROR_CAPTURED_EVENT",
     "operation not permitted on an event last recorded in a capturing stream"},
    {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
     "attempt to terminate a thread-local capture sequence from another thread"},
    {909, "CUDA_ERROR_TIMEOUT",
     "wait operation timed out"},
    {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
     "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"},
    {911, "CUDA_ERROR_EXTERNAL_DEVICE",
     "an async error has occured in external entity outside of CUDA"},
    {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE",
     "a kernel launch error has occurred due to cluster misconfiguration"},
    {913, "CUDA_ERROR_FUNCTION_NOT_LOADED",
     "the function handle is not loaded when calling an API that requires a loaded function"},
    {914, "CUDA_ERROR_INVALID_RESOURCE_TYPE",
     "one or more resources passed in are not valid resource types for the operation"},
    {915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION",
     "one or more resources are insufficient or non-applicable for the operation"},
    {916, "CUDA_ERROR_KEY_ROTATION",
     "an error happened during the key rotation sequence"},
    {999, "CUDA_ERROR_UNKNOWN",
     "unknown error"},
};

static int initialized_by_us; /* set by the first successful cuInit below */

static const char *known_description(int code) {
    for (size_t i = 0; i < TS_ARRAY_SIZE(kErrors); ++i)
        if (kErrors[i].code == code) return kErrors[i].description;
    return NULL;
}

/* ------------------------------------------------------------ before cuInit */

static void test_before_init_driver_version(void **state) {
    (void)state;
    assert_false(initialized_by_us);
    int v = -1;
    assert_cu_ok(cuDriverGetVersion(&v));
    assert_int_equal(v, 13000);
    assert_int_equal(v, CUDA_VERSION);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDriverGetVersion(NULL));
}

/* Every name and description, exactly as libcuda gives them. */
static void test_before_init_error_names_and_strings(void **state) {
    (void)state;
    assert_false(initialized_by_us);
    for (size_t i = 0; i < TS_ARRAY_SIZE(kErrors); ++i) {
        const char *name = (const char *)1, *desc = (const char *)1;
        assert_cu_ok(cuGetErrorName((CUresult)kErrors[i].code, &name));
        assert_cu_ok(cuGetErrorString((CUresult)kErrors[i].code, &desc));
        assert_non_null(name);
        assert_non_null(desc);
        if (strcmp(name, kErrors[i].name) != 0 || strcmp(desc, kErrors[i].description) != 0)
            fail_msg("code %d: got \"%s\" | \"%s\", libcuda says \"%s\" | \"%s\"", kErrors[i].code, name, desc,
                     kErrors[i].name, kErrors[i].description);
    }
    /* A few by their enumerators, so a renumbered header is caught too. */
    const char *s = NULL;
    assert_cu_ok(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s));
    assert_string_equal(s, "CUDA_ERROR_INVALID_VALUE");
    assert_cu_ok(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s));
    assert_string_equal(s, "out of memory");
    assert_cu_ok(cuGetErrorName(CUDA_ERROR_CONTEXT_IS_DESTROYED, &s));
    assert_string_equal(s, "CUDA_ERROR_CONTEXT_IS_DESTROYED");
    assert_cu_ok(cuGetErrorString(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, &s));
    assert_string_equal(s, "part or all of the requested memory range is already mapped");
    assert_cu_ok(cuGetErrorName(CUDA_ERROR_UNKNOWN, &s));
    assert_string_equal(s, "CUDA_ERROR_UNKNOWN");
}

/* Codes libcuda does not name: CUDA_ERROR_INVALID_VALUE and a NULL string. */
static void test_before_init_unknown_codes(void **state) {
    (void)state;
    assert_false(initialized_by_us);
    int unknown = 0;
    for (int code = -2; code < 1100; ++code) {
        if (known_description(code)) continue;
        ++unknown;
        const char *s = (const char *)1;
        CUresult r = cuGetErrorName((CUresult)code, &s);
        if (r != CUDA_ERROR_INVALID_VALUE || s != NULL)
            fail_msg("cuGetErrorName(%d) returned %s with %s string", code, ts_cu_name(r), s ? "a" : "a NULL");
        s = (const char *)1;
        r = cuGetErrorString((CUresult)code, &s);
        if (r != CUDA_ERROR_INVALID_VALUE || s != NULL)
            fail_msg("cuGetErrorString(%d) returned %s with %s string", code, ts_cu_name(r), s ? "a" : "a NULL");
    }
    assert_true(unknown > 900);
    const char *s = (const char *)1;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetErrorName((CUresult)9999, &s));
    assert_null(s);
    s = (const char *)1;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetErrorString((CUresult)9999, &s));
    assert_null(s);
}

static void test_before_init_error_null_out_pointer(void **state) {
    (void)state;
    assert_false(initialized_by_us);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetErrorName(CUDA_SUCCESS, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetErrorString(CUDA_SUCCESS, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetErrorName(CUDA_ERROR_INVALID_VALUE, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetErrorName((CUresult)9999, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetErrorString((CUresult)9999, NULL));
}

/* Every other call, with arguments that would be fine after cuInit. */
static void test_before_init_not_initialized(void **state) {
    (void)state;
    assert_false(initialized_by_us);
    static unsigned char host[8192];
    const CUdeviceptr fake = (CUdeviceptr)0x7f0000000000ull;
    char text[64];

    /* Outputs stay as they were (libcuda leaves them). */
    int n = -1;
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&n));
    assert_int_equal(n, -1);
    CUdevice d = -7;
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGet(&d, 0));
    assert_int_equal(d, -7);
    CUcontext c = (CUcontext)1;
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuCtxGetCurrent(&c));
    assert_ptr_equal(c, (CUcontext)1);
    CUdeviceptr p = 0;
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemAlloc(&p, 16));
    assert_true(p == 0);

    /* Devices. */
    size_t bytes = 0;
    int v = 0;
    CUuuid uuid;
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetName(text, sizeof text, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDeviceTotalMem(&bytes, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetUuid(&uuid, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetPCIBusId(text, sizeof text, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetByPCIBusId(&d, "0000:01:00.0"));

    /* Primary contexts. */
    unsigned flags = 0;
    int active = 0;
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDevicePrimaryCtxRetain(&c, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDevicePrimaryCtxRelease(0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDevicePrimaryCtxReset(0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDevicePrimaryCtxGetState(0, &flags, &active));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDevicePrimaryCtxSetFlags(0, 0));

    /* Contexts. */
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuCtxCreate(&c, NULL, 0, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuCtxCreate_v2(&c, 0, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuCtxCreate_v3(&c, NULL, 0, 0, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuCtxSetCurrent(NULL));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuCtxPopCurrent(&c));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuCtxGetDevice(&d));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuCtxSynchronize());

    /* Memory. */
    size_t fr = 0, to = 0;
    void *h = NULL;
    CUdeviceptr base = 0;
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemGetInfo(&fr, &to));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemFree(fake));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemGetAddressRange(&base, &bytes, fake));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemAllocHost(&h, 64));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemHostAlloc(&h, 64, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemFreeHost(host));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemHostRegister(host, sizeof host, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemHostUnregister(host));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemHostGetDevicePointer(&base, host, 0));

    /* Copies and fills. */
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemcpyHtoD(fake, host, 16));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemcpyDtoH(host, fake, 16));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemcpyDtoD(fake, fake + 64, 16));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemcpy(fake, fake + 64, 16));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemcpyHtoDAsync(fake, host, 16, NULL));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemcpyDtoHAsync(host, fake, 16, NULL));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemcpyDtoDAsync(fake, fake + 64, 16, NULL));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemcpyAsync(fake, fake + 64, 16, NULL));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemsetD8(fake, 1, 16));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemsetD16(fake, 1, 8));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemsetD32(fake, 1, 4));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemsetD8Async(fake, 1, 16, NULL));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemsetD16Async(fake, 1, 8, NULL));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuMemsetD32Async(fake, 1, 4, NULL));

    /* Modules, functions, launches, occupancy, linking: handles made up
     * (nothing can be loaded before cuInit). */
    static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
    CUmodule m = NULL;
    CUfunction f = (CUfunction)(uintptr_t)0x1000;
    CUlinkState link = (CUlinkState)(uintptr_t)0x2000;
    CUmoduleLoadingMode mode;
    const char *name = NULL;
    void *cubin = NULL;
    size_t cubin_size = 0;
    int blocks = 0, grid = 0, block = 0;
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuModuleLoad(&m, "/nonexistent.cubin"));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuModuleLoadData(&m, ptx));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuModuleLoadDataEx(&m, ptx, 0, NULL, NULL));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuModuleLoadFatBinary(&m, ptx));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuModuleUnload((CUmodule)(uintptr_t)0x3000));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuModuleGetFunction(&f, (CUmodule)(uintptr_t)0x3000, "k"));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuModuleGetGlobal(&base, &bytes, (CUmodule)(uintptr_t)0x3000, "g"));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuModuleGetLoadingMode(&mode));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_NONE));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuFuncGetName(&name, f));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 32, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 0, 0));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuLinkCreate(0, NULL, NULL, &link));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, sizeof ptx, "p", 0,
                                                        NULL, NULL));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuLinkAddFile(link, CU_JIT_INPUT_PTX, "/nonexistent.ptx", 0, NULL, NULL));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuLinkComplete(link, &cubin, &cubin_size));
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuLinkDestroy(link));
}

/* ------------------------------------------------------------ cuInit */

/* Flags must be 0; a refused cuInit initialises nothing. */
static void test_init_bad_flags(void **state) {
    (void)state;
    assert_false(initialized_by_us);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuInit(1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuInit(2));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuInit(0x80000000u));
    int n = -1;
    assert_cu(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&n));
    assert_int_equal(n, -1);
}

#define INIT_THREADS 8

struct init_thread {
    pthread_barrier_t *barrier;
    CUresult init;
    CUresult count;
    int devices;
};

static void *init_thread_main(void *arg) {
    struct init_thread *t = arg;
    pthread_barrier_wait(t->barrier);
    t->init = cuInit(0);
    t->count = cuDeviceGetCount(&t->devices);
    return NULL;
}

/* The first cuInit(0), from several threads at once: every one succeeds and
 * sees the same devices. */
static void test_init_first_concurrent(void **state) {
    (void)state;
    assert_false(initialized_by_us);
    pthread_barrier_t barrier;
    assert_int_equal(pthread_barrier_init(&barrier, NULL, INIT_THREADS), 0);
    struct init_thread t[INIT_THREADS];
    pthread_t tid[INIT_THREADS];
    for (int i = 0; i < INIT_THREADS; ++i) {
        t[i] = (struct init_thread){&barrier, CUDA_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN, -1};
        assert_int_equal(pthread_create(&tid[i], NULL, init_thread_main, &t[i]), 0);
    }
    for (int i = 0; i < INIT_THREADS; ++i) pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&barrier);
    initialized_by_us = 1;
    for (int i = 0; i < INIT_THREADS; ++i) {
        assert_cu(CUDA_SUCCESS, t[i].init);
        assert_cu(CUDA_SUCCESS, t[i].count);
        assert_true(t[i].devices >= 1);
        assert_int_equal(t[i].devices, t[0].devices);
    }
}

static void test_init_again(void **state) {
    (void)state;
    assert_true(initialized_by_us);
    assert_cu_ok(cuInit(0));
    assert_cu_ok(cuInit(0));
    int n = -1;
    assert_cu_ok(cuDeviceGetCount(&n));
    assert_true(n >= 1);
}

/* What works after cuInit: the calls that failed before it. */
static void test_after_init(void **state) {
    (void)state;
    assert_true(initialized_by_us);
    int v = -1;
    assert_cu_ok(cuDriverGetVersion(&v));
    assert_int_equal(v, 13000);
    CUdevice d = -7;
    assert_cu_ok(cuDeviceGet(&d, 0));
    assert_int_equal(d, 0);
    CUcontext c = (CUcontext)1;
    assert_cu_ok(cuCtxGetCurrent(&c));
    assert_null(c);
    CUdeviceptr p = 0;
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&p, 16));
    const char *s = NULL;
    assert_cu_ok(cuGetErrorString(CUDA_ERROR_NOT_INITIALIZED, &s));
    assert_string_equal(s, "initialization error");
    s = (const char *)1;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetErrorName((CUresult)9999, &s));
    assert_null(s);
}

int main(void) {
    /* Order matters: see the top of this file. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_before_init_driver_version),
        cmocka_unit_test(test_before_init_error_names_and_strings),
        cmocka_unit_test(test_before_init_unknown_codes),
        cmocka_unit_test(test_before_init_error_null_out_pointer),
        cmocka_unit_test(test_before_init_not_initialized),
        cmocka_unit_test(test_init_bad_flags),
        cmocka_unit_test(test_init_first_concurrent),
        cmocka_unit_test(test_init_again),
        cmocka_unit_test(test_after_init),
    };
    return cmocka_run_group_tests_name("init", tests, NULL, NULL);
}
