/* A small driver-API client used to prove that the header is clean and
 * drop-in compatible.  It includes <cuda.h>, so the same file is compiled
 *   - against include/nvlite/cuda.h (-I include/nvlite) as strict C99/C11 and
 *     as C++ with -Wall -Wextra -Werror -pedantic, and
 *   - unchanged against NVIDIA's header (-I /usr/local/cuda/include),
 * each with and without CUDA_API_PER_THREAD_DEFAULT_STREAM; with HV_MAIN it
 * is also linked (against NVIDIA's libcuda stub, and against libnvlite).
 * Nothing here is run. */
#include <cuda.h>

#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                        \
    do {                                                                   \
        CUresult err_ = (call);                                            \
        if (err_ != CUDA_SUCCESS) {                                        \
            const char *name_ = NULL;                                      \
            const char *msg_ = NULL;                                       \
            (void)cuGetErrorName(err_, &name_);                            \
            (void)cuGetErrorString(err_, &msg_);                           \
            fprintf(stderr, "%s failed: %s (%s)\n", #call,                 \
                    name_ ? name_ : "?", msg_ ? msg_ : "?");               \
            return 1;                                                      \
        }                                                                  \
    } while (0)

static size_t smem_per_block(int blockSize)
{
    return (size_t)blockSize * sizeof(float);
}

static void CUDA_CB host_callback(void *userData)
{
    (void)userData;
}

static const char *describe(CUresult r)
{
    switch (r) {
    case CUDA_SUCCESS: return "success";
    case CUDA_ERROR_OUT_OF_MEMORY: return "out of memory";
    case CUDA_ERROR_NOT_READY: return "not ready";
    case CUDA_ERROR_UNKNOWN: return "unknown";
    default: return "other";
    }
}

int usage_main(int argc, char **argv);

int usage_main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx, popped;
    CUmodule mod;
    CUfunction fn;
    CUstream stream;
    CUevent start, stop;
    CUdeviceptr dptr, gptr, base;
    CUuuid uuid;
    CUlinkState link;
    CUctxCreateParams params;
    CUexecAffinityParam affinity;
    CUlaunchAttribute attrs[2];
    CUlaunchConfig config;
    CUjit_option jit_opts[2];
    void *jit_vals[2];
    CUmoduleLoadingMode mode;
    CUfunc_cache cache;
    CUhostFn hostfn = host_callback;
    CUoccupancyB2DSize b2d = smem_per_block;
    char name[256], busid[32], log[1024];
    const char *fname = NULL;
    unsigned int flags = 0, api = 0, ctxflags = 0;
    unsigned long long ctxid = 0;
    int count = 0, version = 0, value = 0, active = 0, lo = 0, hi = 0;
    int blocks = 0, mingrid = 0, blocksize = 0, prio = 0, memtype = 0;
    size_t total = 0, freemem = 0, bytes = 0, limit = 0, size = 0;
    float ms = 0.0f, host[64];
    void *pinned = NULL, *cubin = NULL, *extra[5];
    void *args[2];
    char argbuf[16];
    size_t argsize = sizeof argbuf;
    CUdriverProcAddressQueryResult qres;
    void *pfn = NULL;

    (void)argc;
    (void)argv;
    (void)hostfn;
    memset(host, 0, sizeof host);
    memset(argbuf, 0, sizeof argbuf);

    CHECK(cuInit(0));
    CHECK(cuDriverGetVersion(&version));
    CHECK(cuDeviceGetCount(&count));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDeviceGetName(name, (int)sizeof name, dev));
    CHECK(cuDeviceGetUuid(&uuid, dev));
    CHECK(cuDeviceGetUuid_v2(&uuid, dev));
    CHECK(cuDeviceTotalMem(&total, dev));
    CHECK(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CHECK(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CHECK(cuDeviceGetPCIBusId(busid, (int)sizeof busid, dev));
    CHECK(cuDeviceGetByPCIBusId(&dev, busid));
    printf("%s %d %02x %zu\n", name, version, (unsigned)(unsigned char)uuid.bytes[0], total);

    CHECK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    CHECK(cuDevicePrimaryCtxSetFlags(dev, CU_CTX_SCHED_BLOCKING_SYNC));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    CHECK(cuDevicePrimaryCtxReset(dev));

    memset(&params, 0, sizeof params);
    affinity.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    affinity.param.smCount.val = 8;
    params.execAffinityParams = &affinity;
    params.numExecAffinityParams = 1;
    params.cigParams = NULL;
    CHECK(cuCtxCreate(&ctx, &params, CU_CTX_SCHED_AUTO | CU_CTX_MAP_HOST, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuCtxGetCurrent(&ctx));
    CHECK(cuCtxGetDevice(&dev));
    CHECK(cuCtxGetFlags(&ctxflags));
    CHECK(cuCtxSetFlags(ctxflags | CU_CTX_SYNC_MEMOPS));
    CHECK(cuCtxGetId(ctx, &ctxid));
    CHECK(cuCtxGetApiVersion(ctx, &api));
    CHECK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4096));
    CHECK(cuCtxGetLimit(&limit, CU_LIMIT_MALLOC_HEAP_SIZE));
    CHECK(cuCtxGetCacheConfig(&cache));
    CHECK(cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_L1));
    CHECK(cuCtxGetStreamPriorityRange(&lo, &hi));
    CHECK(cuCtxPushCurrent(ctx));
    CHECK(cuCtxPopCurrent(&popped));
    CHECK(cuCtxSynchronize());

    CHECK(cuMemGetInfo(&freemem, &total));
    CHECK(cuMemAlloc(&dptr, sizeof host));
    CHECK(cuMemGetAddressRange(&base, &size, dptr));
    CHECK(cuMemAllocHost(&pinned, 4096));
    CHECK(cuMemHostAlloc(&pinned, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    CHECK(cuMemHostGetDevicePointer(&gptr, pinned, 0));
    CHECK(cuMemHostGetFlags(&flags, pinned));
    CHECK(cuMemHostRegister(host, sizeof host, CU_MEMHOSTREGISTER_PORTABLE));
    CHECK(cuMemHostUnregister(host));
    CHECK(cuMemcpyHtoD(dptr, host, sizeof host));
    CHECK(cuMemcpyDtoH(host, dptr, sizeof host));
    CHECK(cuMemcpyDtoD(gptr, dptr, sizeof host));
    CHECK(cuMemcpy(gptr, dptr, sizeof host));
    CHECK(cuMemsetD8(dptr, 0xab, sizeof host));
    CHECK(cuMemsetD16(dptr, 0xabcd, sizeof host / 2));
    CHECK(cuMemsetD32(dptr, 0xdeadbeefu, sizeof host / 4));
    CHECK(cuPointerGetAttribute(&memtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr));
    if (memtype != CU_MEMORYTYPE_DEVICE)
        return 2;

    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuStreamCreateWithPriority(&stream, CU_STREAM_DEFAULT, hi));
    CHECK(cuStreamGetPriority(stream, &prio));
    CHECK(cuStreamGetFlags(stream, &flags));
    CHECK(cuStreamGetCtx(stream, &ctx));
    CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&stop, CU_EVENT_BLOCKING_SYNC));
    CHECK(cuEventRecord(start, stream));
    CHECK(cuMemcpyHtoDAsync(dptr, host, sizeof host, stream));
    CHECK(cuMemcpyDtoHAsync(host, dptr, sizeof host, CU_STREAM_LEGACY));
    CHECK(cuMemcpyDtoDAsync(gptr, dptr, sizeof host, CU_STREAM_PER_THREAD));
    CHECK(cuMemcpyAsync(gptr, dptr, sizeof host, stream));
    CHECK(cuMemsetD8Async(dptr, 0, sizeof host, stream));
    CHECK(cuMemsetD16Async(dptr, 0, sizeof host / 2, stream));
    CHECK(cuMemsetD32Async(dptr, 0, sizeof host / 4, stream));
    CHECK(cuEventRecordWithFlags(stop, stream, CU_EVENT_RECORD_DEFAULT));
    CHECK(cuStreamWaitEvent(stream, stop, CU_EVENT_WAIT_DEFAULT));
    printf("%s\n", describe(cuStreamQuery(stream)));
    printf("%s\n", describe(cuEventQuery(stop)));
    CHECK(cuStreamSynchronize(stream));
    CHECK(cuEventSynchronize(stop));
    CHECK(cuEventElapsedTime(&ms, start, stop));

    jit_opts[0] = CU_JIT_ERROR_LOG_BUFFER;
    jit_vals[0] = log;
    jit_opts[1] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
    jit_vals[1] = (void *)(size_t)sizeof log;
    CHECK(cuModuleLoad(&mod, "kernel.cubin"));
    CHECK(cuModuleUnload(mod));
    CHECK(cuModuleLoadData(&mod, log));
    CHECK(cuModuleUnload(mod));
    CHECK(cuModuleLoadFatBinary(&mod, log));
    CHECK(cuModuleUnload(mod));
    CHECK(cuModuleLoadDataEx(&mod, log, 2, jit_opts, jit_vals));
    CHECK(cuModuleGetLoadingMode(&mode));
    CHECK(cuModuleGetFunction(&fn, mod, "kern"));
    CHECK(cuModuleGetGlobal(&gptr, &bytes, mod, "gvar"));
    CHECK(cuLinkCreate(2, jit_opts, jit_vals, &link));
    CHECK(cuLinkAddData(link, CU_JIT_INPUT_PTX, log, sizeof log, "a.ptx", 0, NULL, NULL));
    CHECK(cuLinkAddFile(link, CU_JIT_INPUT_LIBRARY, "libdevice.a", 0, NULL, NULL));
    CHECK(cuLinkComplete(link, &cubin, &size));
    CHECK(cuLinkDestroy(link));

    CHECK(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, fn));
    CHECK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 48 * 1024));
    CHECK(cuFuncSetCacheConfig(fn, CU_FUNC_CACHE_PREFER_SHARED));
    CHECK(cuFuncGetName(&fname, fn));
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, 128, 0));
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, fn, 128, 0, CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE));
    CHECK(cuOccupancyMaxPotentialBlockSize(&mingrid, &blocksize, fn, b2d, 0, 0));
    CHECK(cuOccupancyMaxPotentialBlockSizeWithFlags(&mingrid, &blocksize, fn, NULL, 1024, 256, CU_OCCUPANCY_DEFAULT));

    args[0] = &dptr;
    args[1] = &count;
    CHECK(cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, stream, args, NULL));
    extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    extra[1] = argbuf;
    extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    extra[3] = &argsize;
    extra[4] = CU_LAUNCH_PARAM_END;
    CHECK(cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, CU_STREAM_LEGACY, NULL, extra));

    memset(attrs, 0, sizeof attrs);
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[0].value.clusterDim.x = 2;
    attrs[0].value.clusterDim.y = 1;
    attrs[0].value.clusterDim.z = 1;
    attrs[1].id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
    attrs[1].value.accessPolicyWindow.base_ptr = (void *)(size_t)dptr;
    attrs[1].value.accessPolicyWindow.num_bytes = sizeof host;
    attrs[1].value.accessPolicyWindow.hitRatio = 0.5f;
    attrs[1].value.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
    attrs[1].value.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
    memset(&config, 0, sizeof config);
    config.gridDimX = config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = 128;
    config.blockDimY = config.blockDimZ = 1;
    config.hStream = stream;
    config.attrs = attrs;
    config.numAttrs = 2;
    CHECK(cuLaunchKernelEx(&config, fn, args, NULL));

    CHECK(cuGetProcAddress("cuMemAlloc", &pfn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &qres));
    if (qres != CU_GET_PROC_ADDRESS_SUCCESS || pfn == NULL)
        return 3;

    /* a few of the types and calls beyond what nvlite implements today */
    {
        CUarray array;
        CUDA_ARRAY_DESCRIPTOR adesc;
        CUgraph graph;
        CUgraphExec exec;
        CUmemoryPool pool;
        CUmemPoolProps props;
        CUlibrary lib;
        CUkernel kernel;
        CUDA_MEMCPY2D copy2d;

        memset(&adesc, 0, sizeof adesc);
        adesc.Width = 64;
        adesc.Height = 1;
        adesc.Format = CU_AD_FORMAT_FLOAT;
        adesc.NumChannels = 1;
        CHECK(cuArrayCreate(&array, &adesc));
        memset(&copy2d, 0, sizeof copy2d);
        copy2d.srcMemoryType = CU_MEMORYTYPE_HOST;
        copy2d.srcHost = host;
        copy2d.dstMemoryType = CU_MEMORYTYPE_ARRAY;
        copy2d.dstArray = array;
        copy2d.WidthInBytes = sizeof host;
        copy2d.Height = 1;
        CHECK(cuMemcpy2D(&copy2d));
        CHECK(cuArrayDestroy(array));
        CHECK(cuGraphCreate(&graph, 0));
        CHECK(cuGraphInstantiate(&exec, graph, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
        CHECK(cuGraphLaunch(exec, stream));
        CHECK(cuGraphExecDestroy(exec));
        CHECK(cuGraphDestroy(graph));
        memset(&props, 0, sizeof props);
        props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = dev;
        CHECK(cuMemPoolCreate(&pool, &props));
        CHECK(cuMemAllocFromPoolAsync(&gptr, 256, pool, stream));
        CHECK(cuMemFreeAsync(gptr, stream));
        CHECK(cuMemPoolDestroy(pool));
        CHECK(cuLibraryLoadData(&lib, log, NULL, NULL, 0, NULL, NULL, 0));
        CHECK(cuLibraryGetKernel(&kernel, lib, "kern"));
        CHECK(cuLibraryUnload(lib));
    }

    CHECK(cuEventDestroy(start));
    CHECK(cuEventDestroy(stop));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuMemFree(dptr));
    CHECK(cuMemFreeHost(pinned));
    CHECK(cuModuleUnload(mod));
    CHECK(cuCtxDestroy(ctx));
    printf("%f %d %d %d %lu %u %llu %zu %zu %s %d %p\n", (double)ms, blocks, mingrid, prio,
           (unsigned long)limit, api, ctxid, bytes, freemem, fname ? fname : "",
           (int)cache + (int)mode, cubin);
    return CU_DEVICE_CPU == dev || CU_DEVICE_INVALID == dev;
}

#ifdef HV_MAIN
int main(int argc, char **argv)
{
    return usage_main(argc, argv);
}
#endif
