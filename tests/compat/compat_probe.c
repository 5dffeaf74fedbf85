#define _GNU_SOURCE
/*
 * compat_probe: runs the driver-API calls of nvlite's first issue (and the
 * streams and events of issue 4: section "streams") with good and bad
 * arguments and prints one line per case: the CUresult name and the
 * values that matter. `make probes` builds it twice (against libcuda and
 * against libnvlite); run on a GPU, the two outputs must be the same; the differences are
 * what to fix. Raw addresses are never printed, only their properties.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvlite/cuda.h"

#include "probe.h"

/* cuda.h declares the older cuCtxCreate revisions only for the driver itself
 * (__CUDA_API_VERSION_INTERNAL), as NVIDIA's does; libcuda exports them. */
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
                                CUdevice dev);

static void before_init(void) {
    int v = -1;
    PV("cuDriverGetVersion", cuDriverGetVersion(&v), "%d", v);
    P("cuDriverGetVersion(NULL)", cuDriverGetVersion(NULL));
    int n = -1;
    PV("pre-init cuDeviceGetCount", cuDeviceGetCount(&n), "%d", n);
    CUdevice d = -7;
    P("pre-init cuDeviceGet", cuDeviceGet(&d, 0));
    CUdeviceptr p = 0;
    P("pre-init cuMemAlloc", cuMemAlloc(&p, 16));
    CUcontext c = (CUcontext)1;
    PV("pre-init cuCtxGetCurrent", cuCtxGetCurrent(&c), "ctx_null=%d", c == NULL);
    const char* s = NULL;
    PV("cuGetErrorName(INVALID_VALUE)", cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s), "%s", s ? s : "(null)");
    s = (const char*)1;
    PV("cuGetErrorName(9999)", cuGetErrorName((CUresult)9999, &s), "null=%d", s == NULL);
    s = NULL;
    PV("cuGetErrorString(OUT_OF_MEMORY)", cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s), "%s", s ? s : "(null)");
    s = (const char*)1;
    PV("cuGetErrorString(9999)", cuGetErrorString((CUresult)9999, &s), "null=%d", s == NULL);
    P("cuInit(1)", cuInit(1));
    /* Every error's name and description. */
    for (int r = 0; r < 1100; ++r) {
        const char* nm = NULL;
        const char* ds = NULL;
        if (cuGetErrorName((CUresult)r, &nm) != CUDA_SUCCESS) continue;
        cuGetErrorString((CUresult)r, &ds);
        printf("error %d %s | %s\n", r, nm ? nm : "(null)", ds ? ds : "(null)");
    }
}

static void devices(void) {
    int n = -1;
    PV("cuDeviceGetCount", cuDeviceGetCount(&n), "%d", n);
    P("cuDeviceGetCount(NULL)", cuDeviceGetCount(NULL));
    CUdevice d = -7;
    PV("cuDeviceGet(0)", cuDeviceGet(&d, 0), "%d", d);
    P("cuDeviceGet(-1)", cuDeviceGet(&d, -1));
    P("cuDeviceGet(count)", cuDeviceGet(&d, n));
    P("cuDeviceGet(NULL,0)", cuDeviceGet(NULL, 0));
    char name[256] = {0};
    PV("cuDeviceGetName", cuDeviceGetName(name, sizeof name, 0), "%s", name);
    memset(name, 'x', sizeof name);
    PV("cuDeviceGetName(len 5)", cuDeviceGetName(name, 5, 0), "[%.8s] nul4=%d", name, name[4] == 0);
    P("cuDeviceGetName(NULL)", cuDeviceGetName(NULL, 256, 0));
    P("cuDeviceGetName(dev 99)", cuDeviceGetName(name, 256, 99));
    size_t total = 0;
    PV("cuDeviceTotalMem", cuDeviceTotalMem(&total, 0), "%zu", total);
    P("cuDeviceTotalMem(NULL)", cuDeviceTotalMem(NULL, 0));
    P("cuDeviceTotalMem(dev 99)", cuDeviceTotalMem(&total, 99));
    for (volatile int a = 0; a <= CU_DEVICE_ATTRIBUTE_MAX + 1; ++a) {
        int v = -12345;
        char label[32];
        snprintf(label, sizeof label, "attribute %d", a);
        PV(label, cuDeviceGetAttribute(&v, (CUdevice_attribute)a, 0), "%d", v);
    }
    P("cuDeviceGetAttribute(NULL)", cuDeviceGetAttribute(NULL, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
    int v = 0;
    P("cuDeviceGetAttribute(dev 99)", cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 99));
    CUuuid u;
    memset(&u, 0, sizeof u);
    CUresult r = cuDeviceGetUuid(&u, 0);
    printf("%-48s => %s ", "cuDeviceGetUuid", rname(r));
    for (int i = 0; i < 16; ++i) printf("%02x", (unsigned char)u.bytes[i]);
    printf("\n");
    P("cuDeviceGetUuid(NULL)", cuDeviceGetUuid(NULL, 0));
    P("cuDeviceGetUuid(dev 99)", cuDeviceGetUuid(&u, 99));
    typedef CUresult (*uuid_fn)(CUuuid*, CUdevice);
    uuid_fn v1 = (uuid_fn)dlsym(RTLD_DEFAULT, "cuDeviceGetUuid");
    if (v1) {
        CUuuid u1;
        memset(&u1, 0, sizeof u1);
        PV("cuDeviceGetUuid (v1 symbol)", v1(&u1, 0), "same=%d", memcmp(&u1, &u, 16) == 0);
    }
    char bus[64];
    memset(bus, 'x', sizeof bus);
    PV("cuDeviceGetPCIBusId", cuDeviceGetPCIBusId(bus, sizeof bus, 0), "%s", bus);
    char small[8];
    memset(small, 'x', sizeof small);
    PV("cuDeviceGetPCIBusId(len 8)", cuDeviceGetPCIBusId(small, sizeof small, 0), "[%.8s]", small);
    P("cuDeviceGetPCIBusId(NULL)", cuDeviceGetPCIBusId(NULL, 64, 0));
    P("cuDeviceGetPCIBusId(len 0)", cuDeviceGetPCIBusId(bus, 0, 0));
    P("cuDeviceGetPCIBusId(dev 99)", cuDeviceGetPCIBusId(bus, 64, 99));
    char canon[64];
    cuDeviceGetPCIBusId(canon, sizeof canon, 0);
    d = -7;
    PV("cuDeviceGetByPCIBusId(canonical)", cuDeviceGetByPCIBusId(&d, canon), "%d", d);
    char lower[64];
    strcpy(lower, canon);
    for (char* q = lower; *q; ++q)
        if (*q >= 'A' && *q <= 'F') *q = (char)(*q - 'A' + 'a');
    d = -7;
    PV("cuDeviceGetByPCIBusId(lowercase)", cuDeviceGetByPCIBusId(&d, lower), "%d", d);
    d = -7;
    PV("cuDeviceGetByPCIBusId(no domain)", cuDeviceGetByPCIBusId(&d, canon + 5), "%d", d);
    char shortdom[64];
    snprintf(shortdom, sizeof shortdom, "0000:%s", canon + 9);
    d = -7;
    PV("cuDeviceGetByPCIBusId(4-digit domain)", cuDeviceGetByPCIBusId(&d, shortdom), "%d", d);
    P("cuDeviceGetByPCIBusId(garbage)", cuDeviceGetByPCIBusId(&d, "hello"));
    P("cuDeviceGetByPCIBusId(absent)", cuDeviceGetByPCIBusId(&d, "0000:ff:1f.0"));
    P("cuDeviceGetByPCIBusId(NULL id)", cuDeviceGetByPCIBusId(&d, NULL));
    P("cuDeviceGetByPCIBusId(NULL dev)", cuDeviceGetByPCIBusId(NULL, canon));
}

static void contexts(void) {
    CUcontext c = (CUcontext)1, c2 = NULL, cur = NULL;
    CUdevice d = -7;
    PV("no-ctx cuCtxGetCurrent", cuCtxGetCurrent(&c), "null=%d", c == NULL);
    P("cuCtxGetCurrent(NULL)", cuCtxGetCurrent(NULL));
    P("no-ctx cuCtxGetDevice", cuCtxGetDevice(&d));
    P("no-ctx cuCtxSynchronize", cuCtxSynchronize());
    CUdeviceptr p = 0;
    P("no-ctx cuMemAlloc", cuMemAlloc(&p, 16));
    size_t fr = 0, to = 0;
    P("no-ctx cuMemGetInfo", cuMemGetInfo(&fr, &to));
    P("no-ctx cuCtxPopCurrent", cuCtxPopCurrent(&c));
    void* h = NULL;
    P("no-ctx cuMemAllocHost", cuMemAllocHost(&h, 64));
    P("cuCtxCreate(NULL pctx)", cuCtxCreate(NULL, NULL, 0, 0));
    P("cuCtxCreate(bad flags)", cuCtxCreate(&c, NULL, 0x1000, 0));
    P("cuCtxCreate(flags 5)", cuCtxCreate(&c, NULL, 5, 0));
    P("cuCtxCreate(dev 99)", cuCtxCreate(&c, NULL, 0, 99));
    P("cuCtxCreate(dev -1)", cuCtxCreate(&c, NULL, 0, -1));
    P("cuCtxCreate", cuCtxCreate(&c, NULL, 0, 0));
    PV("  current is new", cuCtxGetCurrent(&cur), "%d", cur == c);
    PV("  cuCtxGetDevice", cuCtxGetDevice(&d), "%d", d);
    P("  cuCtxGetDevice(NULL)", cuCtxGetDevice(NULL));
    P("  cuCtxSynchronize", cuCtxSynchronize());
    P("cuCtxCreate second", cuCtxCreate(&c2, NULL, CU_CTX_SCHED_BLOCKING_SYNC, 0));
    PV("  current is second", cuCtxGetCurrent(&cur), "%d", cur == c2);
    CUcontext popped = NULL;
    PV("cuCtxPopCurrent", cuCtxPopCurrent(&popped), "popped_second=%d", popped == c2);
    PV("  current after pop is first", cuCtxGetCurrent(&cur), "%d", cur == c);
    PV("cuCtxPopCurrent again", cuCtxPopCurrent(&popped), "popped_first=%d", popped == c);
    PV("  current after 2 pops", cuCtxGetCurrent(&cur), "null=%d", cur == NULL);
    P("cuCtxPopCurrent empty", cuCtxPopCurrent(&popped));
    P("cuCtxPopCurrent(NULL) empty", cuCtxPopCurrent(NULL));
    P("cuCtxPushCurrent(c)", cuCtxPushCurrent(c));
    P("cuCtxPushCurrent(c2)", cuCtxPushCurrent(c2));
    P("cuCtxPushCurrent(NULL)", cuCtxPushCurrent(NULL));
    P("cuCtxPopCurrent(NULL) nonempty", cuCtxPopCurrent(NULL));
    PV("  current is c", cuCtxGetCurrent(&cur), "%d", cur == c);
    P("cuCtxSetCurrent(c2)", cuCtxSetCurrent(c2));
    PV("  current is c2", cuCtxGetCurrent(&cur), "%d", cur == c2);
    P("cuCtxSetCurrent(NULL)", cuCtxSetCurrent(NULL));
    PV("  current after SetCurrent(NULL)", cuCtxGetCurrent(&cur), "null=%d", cur == NULL);
    P("cuCtxSetCurrent(NULL) again", cuCtxSetCurrent(NULL));
    P("cuCtxSetCurrent(c)", cuCtxSetCurrent(c));
    P("cuCtxDestroy(c2) (not current)", cuCtxDestroy(c2));
    /* Making a destroyed context current succeeds in libcuda, but leaves it
     * in a state where the next cuCtxSetCurrent crashes: not probed. */
    P("cuCtxDestroy(NULL)", cuCtxDestroy(NULL));
    P("cuCtxDestroy(c2) twice", cuCtxDestroy(c2));
    P("cuCtxDestroy(c) (current)", cuCtxDestroy(c));
    PV("  current after destroying it", cuCtxGetCurrent(&cur), "null=%d", cur == NULL);
    P("  cuCtxSynchronize", cuCtxSynchronize());
    P("  cuMemAlloc", cuMemAlloc(&p, 16));

    /* A destroyed context that stays current (pushed twice, destroyed once). */
    P("cuCtxCreate c3", cuCtxCreate(&c, NULL, 0, 0));
    P("cuCtxPushCurrent(c3) again", cuCtxPushCurrent(c));
    P("cuCtxDestroy(c3) (on stack twice)", cuCtxDestroy(c));
    PV("  current after", cuCtxGetCurrent(&cur), "null=%d is_c3=%d", cur == NULL, cur == c);
    P("  cuCtxSynchronize", cuCtxSynchronize());
    P("  cuMemAlloc", cuMemAlloc(&p, 16));
    P("  cuCtxGetDevice", cuCtxGetDevice(&d));
    P("  cuCtxPopCurrent", cuCtxPopCurrent(&popped));
    PV("  current after pop", cuCtxGetCurrent(&cur), "null=%d", cur == NULL);

    /* cuCtxCreate_v2 / _v3 and the v1 name. */
    P("cuCtxCreate_v2", cuCtxCreate_v2(&c, 0, 0));
    P("  cuCtxDestroy", cuCtxDestroy(c));
    P("cuCtxCreate_v3(NULL,0)", cuCtxCreate_v3(&c, NULL, 0, 0, 0));
    P("  cuCtxDestroy", cuCtxDestroy(c));
    typedef CUresult (*ctx_v1)(CUcontext*, unsigned, CUdevice);
    ctx_v1 create1 = (ctx_v1)dlsym(RTLD_DEFAULT, "cuCtxCreate");
    typedef CUresult (*ctxd_v1)(CUcontext);
    ctxd_v1 destroy1 = (ctxd_v1)dlsym(RTLD_DEFAULT, "cuCtxDestroy");
    if (create1 && destroy1) {
        P("cuCtxCreate (v1 symbol)", create1(&c, 0, 0));
        P("cuCtxDestroy (v1 symbol)", destroy1(c));
    }
    CUctxCreateParams params;
    memset(&params, 0, sizeof params);
    P("cuCtxCreate_v4(zero params)", cuCtxCreate(&c, &params, 0, 0));
    P("  cuCtxDestroy", cuCtxDestroy(c));

    /* Primary context. */
    unsigned flags = 77;
    int active = 77;
    PV("cuDevicePrimaryCtxGetState", cuDevicePrimaryCtxGetState(0, &flags, &active), "flags=%u active=%d", flags, active);
    P("cuDevicePrimaryCtxGetState(NULL)", cuDevicePrimaryCtxGetState(0, NULL, &active));
    P("cuDevicePrimaryCtxGetState(dev 99)", cuDevicePrimaryCtxGetState(99, &flags, &active));
    P("cuDevicePrimaryCtxRelease unretained", cuDevicePrimaryCtxRelease(0));
    P("cuDevicePrimaryCtxRetain(NULL)", cuDevicePrimaryCtxRetain(NULL, 0));
    P("cuDevicePrimaryCtxRetain(dev 99)", cuDevicePrimaryCtxRetain(&c, 99));
    P("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&c, 0));
    PV("  state", cuDevicePrimaryCtxGetState(0, &flags, &active), "flags=%u active=%d", flags, active);
    PV("  current (retain does not push)", cuCtxGetCurrent(&cur), "null=%d", cur == NULL);
    P("cuDevicePrimaryCtxRetain again", cuDevicePrimaryCtxRetain(&c2, 0));
    printf("%-48s => same=%d\n", "  same handle", c == c2);
    P("cuCtxSetCurrent(primary)", cuCtxSetCurrent(c));
    P("  cuMemAlloc", cuMemAlloc(&p, 4096));
    P("  cuMemFree", cuMemFree(p));
    P("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease(0));
    PV("  state", cuDevicePrimaryCtxGetState(0, &flags, &active), "flags=%u active=%d", flags, active);
    P("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease(0));
    PV("  state", cuDevicePrimaryCtxGetState(0, &flags, &active), "flags=%u active=%d", flags, active);
    PV("  current after last release", cuCtxGetCurrent(&cur), "is_primary=%d", cur == c);
    P("  cuMemAlloc", cuMemAlloc(&p, 4096));
    P("  cuCtxSynchronize", cuCtxSynchronize());
    P("cuDevicePrimaryCtxRelease again", cuDevicePrimaryCtxRelease(0));
    P("cuDevicePrimaryCtxReset (inactive)", cuDevicePrimaryCtxReset(0));
    P("cuDevicePrimaryCtxReset(dev 99)", cuDevicePrimaryCtxReset(99));
    P("cuDevicePrimaryCtxRetain after release", cuDevicePrimaryCtxRetain(&c2, 0));
    printf("%-48s => same=%d\n", "  same handle as before", c == c2);
    P("  cuCtxSetCurrent", cuCtxSetCurrent(c2));
    P("  cuMemAlloc", cuMemAlloc(&p, 4096));
    P("cuDevicePrimaryCtxReset (active)", cuDevicePrimaryCtxReset(0));
    PV("  state", cuDevicePrimaryCtxGetState(0, &flags, &active), "flags=%u active=%d", flags, active);
    P("  cuMemFree(after reset)", cuMemFree(p));
    P("  cuMemAlloc (after reset)", cuMemAlloc(&p, 4096));
    PV("  state", cuDevicePrimaryCtxGetState(0, &flags, &active), "flags=%u active=%d", flags, active);
    P("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease(0));
    P("cuCtxSetCurrent(NULL)", cuCtxSetCurrent(NULL));
}

static void memory(void) {
    CUcontext c;
    cuCtxCreate(&c, NULL, 0, 0);
    CUdeviceptr p = 0, q = 0;
    P("cuMemAlloc(size 0)", cuMemAlloc(&p, 0));
    P("cuMemAlloc(NULL)", cuMemAlloc(NULL, 16));
    P("cuMemAlloc(1<<50)", cuMemAlloc(&p, (size_t)1 << 50));
    size_t fr = 0, to = 0;
    P("cuMemGetInfo", cuMemGetInfo(&fr, &to));
    PV("cuMemAlloc(free+1MiB)", cuMemAlloc(&p, fr + (1 << 20)), "%s", "");
    static const size_t sizes[] = {1, 3, 256, 257, 1000, 4096, 65537, 1 << 20, (2 << 20) + 1, 64 << 20};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        CUresult r = cuMemAlloc(&p, sizes[i]);
        CUdeviceptr base = 0;
        size_t sz = 0;
        CUresult r2 = cuMemGetAddressRange(&base, &sz, p + sizes[i] / 2);
        printf("cuMemAlloc(%zu) => %s align256=%d align512=%d align4k=%d align2m=%d range=%s base_ok=%d size=%zu\n",
               sizes[i], rname(r), p % 256 == 0, p % 512 == 0, p % 4096 == 0, p % (2 << 20) == 0, rname(r2),
               base == p, sz);
        cuMemFree(p);
    }
    cuMemAlloc(&p, 1000);
    CUdeviceptr base = 0;
    size_t sz = 0;
    PV("cuMemGetAddressRange(p+999)", cuMemGetAddressRange(&base, &sz, p + 999), "ok=%d", base == p);
    P("cuMemGetAddressRange(p+1000)", cuMemGetAddressRange(&base, &sz, p + 1000));
    P("cuMemGetAddressRange(p+4096)", cuMemGetAddressRange(&base, &sz, p + 4096));
    P("cuMemGetAddressRange(NULL,NULL)", cuMemGetAddressRange(NULL, NULL, p));
    P("cuMemGetAddressRange(0)", cuMemGetAddressRange(&base, &sz, 0));
    int hostvar = 0;
    P("cuMemGetAddressRange(host)", cuMemGetAddressRange(&base, &sz, (CUdeviceptr)(uintptr_t)&hostvar));
    P("cuMemFree(p+1)", cuMemFree(p + 1));
    P("cuMemFree(p)", cuMemFree(p));
    P("cuMemFree(p) twice", cuMemFree(p));
    P("cuMemFree(0)", cuMemFree(0));
    P("cuMemFree(host)", cuMemFree((CUdeviceptr)(uintptr_t)&hostvar));
    P("cuMemGetInfo(NULL,&t)", cuMemGetInfo(NULL, &to));
    P("cuMemGetInfo(&f,NULL)", cuMemGetInfo(&fr, NULL));
    PV("cuMemGetInfo", cuMemGetInfo(&fr, &to), "total_eq_devtotal=%d", 1);

    void* h = NULL;
    P("cuMemAllocHost(size 0)", cuMemAllocHost(&h, 0));
    P("cuMemAllocHost(NULL)", cuMemAllocHost(NULL, 16));
    PV("cuMemAllocHost(100)", cuMemAllocHost(&h, 100), "align4k=%d", ((uintptr_t)h & 4095) == 0);
    CUdeviceptr dp = 0;
    PV("cuMemHostGetDevicePointer", cuMemHostGetDevicePointer(&dp, h, 0), "same=%d", dp == (CUdeviceptr)(uintptr_t)h);
    PV("cuMemHostGetDevicePointer(h+10)", cuMemHostGetDevicePointer(&dp, (char*)h + 10, 0), "same=%d",
       dp == (CUdeviceptr)(uintptr_t)h + 10);
    P("cuMemHostGetDevicePointer(flags 1)", cuMemHostGetDevicePointer(&dp, h, 1));
    P("cuMemHostGetDevicePointer(unpinned)", cuMemHostGetDevicePointer(&dp, &hostvar, 0));
    P("cuMemHostGetDevicePointer(NULL)", cuMemHostGetDevicePointer(NULL, h, 0));
    P("cuMemGetAddressRange(pinned)", cuMemGetAddressRange(&base, &sz, (CUdeviceptr)(uintptr_t)h));
    P("cuMemFreeHost(h+1)", cuMemFreeHost((char*)h + 1));
    P("cuMemFreeHost(h)", cuMemFreeHost(h));
    P("cuMemFreeHost(h) twice", cuMemFreeHost(h));
    P("cuMemFreeHost(NULL)", cuMemFreeHost(NULL));
    P("cuMemFreeHost(unpinned)", cuMemFreeHost(&hostvar));
    P("cuMemHostAlloc(0 flags)", cuMemHostAlloc(&h, 1000, 0));
    cuMemFreeHost(h);
    P("cuMemHostAlloc(all flags)", cuMemHostAlloc(&h, 1000, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED));
    cuMemFreeHost(h);
    P("cuMemHostAlloc(bad flags 0x80)", cuMemHostAlloc(&h, 1000, 0x80));
    P("cuMemHostAlloc(size 0)", cuMemHostAlloc(&h, 0, 0));

    char* buf = malloc(100000);
    P("cuMemHostRegister(unaligned)", cuMemHostRegister(buf + 3, 50000, 0));
    P("cuMemHostRegister again", cuMemHostRegister(buf + 3, 50000, 0));
    P("cuMemHostRegister overlapping", cuMemHostRegister(buf + 20000, 50000, 0));
    PV("cuMemHostGetDevicePointer(registered)", cuMemHostGetDevicePointer(&dp, buf + 3, 0), "same=%d",
       dp == (CUdeviceptr)(uintptr_t)(buf + 3));
    P("cuMemHostUnregister(interior)", cuMemHostUnregister(buf + 100));
    P("cuMemHostUnregister", cuMemHostUnregister(buf + 3));
    P("cuMemHostUnregister twice", cuMemHostUnregister(buf + 3));
    P("cuMemHostRegister(size 0)", cuMemHostRegister(buf, 0, 0));
    P("cuMemHostRegister(NULL)", cuMemHostRegister(NULL, 4096, 0));
    P("cuMemHostRegister(bad flags 0x40)", cuMemHostRegister(buf, 4096, 0x40));
    P("cuMemHostRegister(DEVICEMAP|PORTABLE)", cuMemHostRegister(buf, 4096, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE));
    P("cuMemHostUnregister", cuMemHostUnregister(buf));
    P("cuMemHostUnregister(NULL)", cuMemHostUnregister(NULL));
    free(buf);

    /* Copies and memsets: bad ranges. */
    cuMemAlloc(&p, 1000);
    cuMemAlloc(&q, 1000);
    char hb[4096];
    memset(hb, 7, sizeof hb);
    P("HtoD ok", cuMemcpyHtoD(p, hb, 1000));
    P("HtoD past end", cuMemcpyHtoD(p, hb, 1001));
    P("HtoD p+1 past end", cuMemcpyHtoD(p + 1, hb, 1000));
    P("HtoD count 0", cuMemcpyHtoD(p, hb, 0));
    P("HtoD NULL src", cuMemcpyHtoD(p, NULL, 10));
    P("HtoD dst 0", cuMemcpyHtoD(0, hb, 10));
    P("HtoD dst host", cuMemcpyHtoD((CUdeviceptr)(uintptr_t)hb, hb + 100, 10));
    P("DtoH ok", cuMemcpyDtoH(hb, p, 1000));
    P("DtoH past end", cuMemcpyDtoH(hb, p, 1001));
    P("DtoH NULL dst", cuMemcpyDtoH(NULL, p, 10));
    P("DtoD ok", cuMemcpyDtoD(q, p, 1000));
    P("DtoD past end", cuMemcpyDtoD(q, p + 1, 1000));
    P("cuMemcpy host->host", cuMemcpy((CUdeviceptr)(uintptr_t)hb, (CUdeviceptr)(uintptr_t)(hb + 2000), 100));
    P("cuMemcpy host->dev", cuMemcpy(p, (CUdeviceptr)(uintptr_t)hb, 100));
    P("cuMemcpy dev->host", cuMemcpy((CUdeviceptr)(uintptr_t)hb, p, 100));
    P("cuMemcpy dev->dev", cuMemcpy(q, p, 100));
    P("cuMemcpy past end", cuMemcpy(q, p, 1001));
    P("cuMemcpy count 0", cuMemcpy(q, p, 0));
    P("HtoDAsync ok", cuMemcpyHtoDAsync(p, hb, 1000, NULL));
    P("HtoDAsync past end", cuMemcpyHtoDAsync(p, hb, 1001, NULL));
    P("DtoHAsync ok", cuMemcpyDtoHAsync(hb, p, 1000, NULL));
    P("DtoDAsync ok", cuMemcpyDtoDAsync(q, p, 1000, NULL));
    P("cuMemcpyAsync ok", cuMemcpyAsync(q, p, 1000, NULL));
    P("cuCtxSynchronize", cuCtxSynchronize());
    P("MemsetD8 ok", cuMemsetD8(p + 1, 3, 999));
    P("MemsetD8 past end", cuMemsetD8(p + 1, 3, 1000));
    P("MemsetD8 count 0", cuMemsetD8(p, 3, 0));
    P("MemsetD16 odd addr", cuMemsetD16(p + 1, 3, 10));
    P("MemsetD16 ok", cuMemsetD16(p + 2, 3, 499));
    P("MemsetD16 past end", cuMemsetD16(p + 2, 3, 500));
    P("MemsetD32 addr+2", cuMemsetD32(p + 2, 3, 10));
    P("MemsetD32 ok", cuMemsetD32(p + 4, 3, 249));
    P("MemsetD32 past end", cuMemsetD32(p + 4, 3, 250));
    P("MemsetD32 dst 0", cuMemsetD32(0, 3, 10));
    P("MemsetD8Async ok", cuMemsetD8Async(p, 3, 1000, NULL));
    P("MemsetD32Async odd", cuMemsetD32Async(p + 1, 3, 10, NULL));
    P("cuCtxSynchronize", cuCtxSynchronize());
    cuMemFree(q);
    P("HtoD freed dst", cuMemcpyHtoD(q, hb, 10));
    P("DtoD freed src", cuMemcpyDtoD(p, q, 10));
    P("MemsetD8 freed", cuMemsetD8(q, 1, 10));
    /* Data round trip with a memset in the middle. */
    unsigned char src[1000], out[1000];
    for (int i = 0; i < 1000; ++i) src[i] = (unsigned char)(i * 7 + 1);
    cuMemcpyHtoD(p, src, 1000);
    cuMemsetD8(p + 10, 0xab, 5);
    cuMemsetD16(p + 100, 0x1234, 3);
    cuMemsetD32(p + 200, 0xdeadbeef, 2);
    cuMemcpyDtoH(out, p, 1000);
    int ok = 1;
    for (int i = 0; i < 1000; ++i) {
        unsigned char e = src[i];
        if (i >= 10 && i < 15) e = 0xab;
        if (i >= 100 && i < 106) e = (i % 2 == 0) ? 0x34 : 0x12;
        if (i >= 200 && i < 208) e = (unsigned char)(0xdeadbeefu >> (8 * (i % 4)));
        if (out[i] != e) ok = 0;
    }
    printf("%-48s => %d\n", "data round trip", ok);

    /* The legacy 32-bit cuMemAlloc. */
    typedef CUresult (*alloc_v1)(unsigned int*, unsigned int);
    alloc_v1 a1 = (alloc_v1)dlsym(RTLD_DEFAULT, "cuMemAlloc");
    if (a1) {
        unsigned int p32 = 0;
        P("cuMemAlloc (v1 symbol)", a1(&p32, 4096));
    }
    cuMemFree(p);
    P("cuCtxDestroy", cuCtxDestroy(c));
    P("after destroy: cuMemFree(old)", cuMemFree(p));
}

/* ------------------------------------------------------------------ streams */

/* A kernel that spins on %globaltimer for its parameter's nanoseconds
 * (hand-written PTX, JIT-compiled by either library): keeps a stream busy for
 * a known time, so that "not ready" cases are the same on every run. */
static const char kSpinPtx[] =
    ".version 7.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".visible .entry spin_ns(.param .u64 spin_ns_param_0)\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .b64 %rd<5>;\n"
    "    ld.param.u64 %rd1, [spin_ns_param_0];\n"
    "    mov.u64 %rd2, %globaltimer;\n"
    "$L_loop:\n"
    "    mov.u64 %rd3, %globaltimer;\n"
    "    sub.s64 %rd4, %rd3, %rd2;\n"
    "    setp.lt.u64 %p1, %rd4, %rd1;\n"
    "    @%p1 bra $L_loop;\n"
    "    ret;\n"
    "}\n";

static CUfunction spin_fn;

static CUresult spin(CUstream s, unsigned long long ms) {
    unsigned long long ns = ms * 1000000ull;
    void* args[] = {&ns};
    return cuLaunchKernel(spin_fn, 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double seconds_now(void) { return seconds(); }

static const char* sname(CUstream s) {
    return s == NULL ? "NULL" : s == CU_STREAM_LEGACY ? "LEGACY" : s == CU_STREAM_PER_THREAD ? "PER_THREAD" : "created";
}

/* Creates with 'flags' and destroys again what was created. */
static void stream_create_case(const char* label, unsigned flags, int with_priority, int priority) {
    CUstream s = NULL;
    int got = 12345;
    CUresult r = CUDA_SUCCESS;
    if (with_priority)
        PV(label, (r = cuStreamCreateWithPriority(&s, flags, priority)), "priority=%d",
           (r == CUDA_SUCCESS && cuStreamGetPriority(s, &got) == CUDA_SUCCESS) ? got : 12345);
    else
        P(label, (r = cuStreamCreate(&s, flags)));
    if (r == CUDA_SUCCESS && s) cuStreamDestroy(s);
}

static void event_create_case(const char* label, unsigned flags) {
    CUevent e = NULL;
    CUresult r = CUDA_SUCCESS;
    P(label, (r = cuEventCreate(&e, flags)));
    if (r == CUDA_SUCCESS && e) cuEventDestroy(e);
}

/* The elapsed time's validity and sign, never its value. */
static void elapsed_case(const char* label, float* where, CUevent a, CUevent b) {
    float ms = NAN;
    CUresult r = CUDA_SUCCESS;
    PV(label, (r = cuEventElapsedTime(where == (float*)1 ? &ms : where, a, b)), "%s",
       r != CUDA_SUCCESS ? "" : ms > 0 ? "positive" : ms < 0 ? "negative" : ms == 0 ? "zero" : "nan");
}
#define ELAPSED(label, a, b) elapsed_case(label, (float*)1, a, b)

static void streams(void) {
    CUcontext c1 = NULL, c2 = NULL, cur = NULL;
    cuCtxCreate(&c1, NULL, 0, 0);
    CUmodule mod = NULL;
    P("streams: load spin PTX", cuModuleLoadData(&mod, kSpinPtx));
    P("streams: spin function", cuModuleGetFunction(&spin_fn, mod, "spin_ns"));
    char label[96];
    CUdeviceptr d1 = 0;
    cuMemAlloc(&d1, 1 << 20);

    /* Priorities. */
    int least = 99, greatest = 99;
    PV("cuCtxGetStreamPriorityRange", cuCtxGetStreamPriorityRange(&least, &greatest), "least=%d greatest=%d", least,
       greatest);
    P("cuCtxGetStreamPriorityRange(NULL,NULL)", cuCtxGetStreamPriorityRange(NULL, NULL));
    int l2 = 99, g2 = 99;
    PV("cuCtxGetStreamPriorityRange(&l,NULL)", cuCtxGetStreamPriorityRange(&l2, NULL), "least=%d", l2);
    PV("cuCtxGetStreamPriorityRange(NULL,&g)", cuCtxGetStreamPriorityRange(NULL, &g2), "greatest=%d", g2);

    /* Creation. */
    P("cuStreamCreate(NULL)", cuStreamCreate(NULL, 0));
    P("cuStreamCreateWithPriority(NULL)", cuStreamCreateWithPriority(NULL, 0, 0));
    static const unsigned stream_flags[] = {0, 1, 2, 3, 4, 0x100, 0x80000000u};
    for (unsigned i = 0; i < sizeof stream_flags / sizeof stream_flags[0]; ++i) {
        snprintf(label, sizeof label, "cuStreamCreate(flags 0x%x)", stream_flags[i]);
        stream_create_case(label, stream_flags[i], 0, 0);
        snprintf(label, sizeof label, "cuStreamCreateWithPriority(flags 0x%x, -1)", stream_flags[i]);
        stream_create_case(label, stream_flags[i], 1, -1);
    }
    static const int prios[] = {1, 0, -1, -2, -5, -6, 100, -100, 2147483647, -2147483647 - 1};
    for (unsigned i = 0; i < sizeof prios / sizeof prios[0]; ++i) {
        snprintf(label, sizeof label, "cuStreamCreateWithPriority(0, %d)", prios[i]);
        stream_create_case(label, 0, 1, prios[i]);
        snprintf(label, sizeof label, "cuStreamCreateWithPriority(NON_BLOCKING, %d)", prios[i]);
        stream_create_case(label, CU_STREAM_NON_BLOCKING, 1, prios[i]);
    }
    CUstream sb = NULL, snb = NULL;
    P("cuStreamCreate(0)", cuStreamCreate(&sb, 0));
    P("cuStreamCreate(NON_BLOCKING)", cuStreamCreate(&snb, CU_STREAM_NON_BLOCKING));
    unsigned f = 77;
    int prio = 77;
    CUcontext c = NULL;
    PV("cuStreamGetFlags(blocking)", cuStreamGetFlags(sb, &f), "%u", f);
    PV("cuStreamGetFlags(non-blocking)", cuStreamGetFlags(snb, &f), "%u", f);
    PV("cuStreamGetPriority(cuStreamCreate's)", cuStreamGetPriority(sb, &prio), "%d", prio);
    PV("cuStreamGetCtx(created)", cuStreamGetCtx(sb, &c), "is_c1=%d", c == c1);
    P("cuStreamGetFlags(s, NULL)", cuStreamGetFlags(sb, NULL));
    P("cuStreamGetPriority(s, NULL)", cuStreamGetPriority(sb, NULL));
    P("cuStreamGetCtx(s, NULL)", cuStreamGetCtx(sb, NULL));
    P("cuStreamQuery(new)", cuStreamQuery(sb));
    P("cuStreamSynchronize(new)", cuStreamSynchronize(sb));
    const CUstream special[] = {NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD};
    for (unsigned i = 0; i < 3; ++i) {
        f = 77;
        prio = 77;
        c = NULL;
        snprintf(label, sizeof label, "cuStreamGetFlags(%s)", sname(special[i]));
        PV(label, cuStreamGetFlags(special[i], &f), "%u", f);
        snprintf(label, sizeof label, "cuStreamGetPriority(%s)", sname(special[i]));
        PV(label, cuStreamGetPriority(special[i], &prio), "%d", prio);
        snprintf(label, sizeof label, "cuStreamGetCtx(%s)", sname(special[i]));
        PV(label, cuStreamGetCtx(special[i], &c), "is_current=%d", c == c1);
        snprintf(label, sizeof label, "cuStreamGetFlags(%s, NULL)", sname(special[i]));
        P(label, cuStreamGetFlags(special[i], NULL));
        snprintf(label, sizeof label, "cuStreamQuery(%s)", sname(special[i]));
        P(label, cuStreamQuery(special[i]));
        snprintf(label, sizeof label, "cuStreamSynchronize(%s)", sname(special[i]));
        P(label, cuStreamSynchronize(special[i]));
    }

    /* Events: creation. */
    P("cuEventCreate(NULL)", cuEventCreate(NULL, 0));
    static const unsigned event_flags[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 0x10, 0x80000000u};
    for (unsigned i = 0; i < sizeof event_flags / sizeof event_flags[0]; ++i) {
        snprintf(label, sizeof label, "cuEventCreate(flags 0x%x)", event_flags[i]);
        event_create_case(label, event_flags[i]);
    }

    /* Never recorded. */
    CUevent u = NULL, rec = NULL, rec2 = NULL, d = NULL, d2 = NULL;
    cuEventCreate(&u, 0);
    cuEventCreate(&rec, 0);
    cuEventCreate(&rec2, CU_EVENT_BLOCKING_SYNC);
    cuEventCreate(&d, CU_EVENT_DISABLE_TIMING);
    cuEventCreate(&d2, CU_EVENT_DISABLE_TIMING);
    P("cuEventRecord(rec, s)", cuEventRecord(rec, sb));
    P("cuEventRecord(rec2, s)", cuEventRecord(rec2, sb));
    P("cuEventRecord(disabled, s)", cuEventRecord(d, sb));
    P("cuEventRecord(disabled2, s)", cuEventRecord(d2, sb));
    P("cuStreamSynchronize", cuStreamSynchronize(sb));
    P("unrecorded: cuEventQuery", cuEventQuery(u));
    P("unrecorded: cuEventSynchronize", cuEventSynchronize(u));
    ELAPSED("unrecorded: cuEventElapsedTime(u, u)", u, u);
    ELAPSED("unrecorded: cuEventElapsedTime(u, rec)", u, rec);
    ELAPSED("unrecorded: cuEventElapsedTime(rec, u)", rec, u);
    ELAPSED("unrecorded: cuEventElapsedTime(u, disabled)", u, d);
    elapsed_case("unrecorded: cuEventElapsedTime(NULL ms, u, u)", NULL, u, u);
    P("unrecorded: cuStreamWaitEvent(s, u)", cuStreamWaitEvent(sb, u, 0));
    P("unrecorded: cuStreamWaitEvent(NULL, u)", cuStreamWaitEvent(NULL, u, 0));
    P("  cuStreamSynchronize after", cuStreamSynchronize(sb));

    /* Timing disabled, complete. */
    ELAPSED("cuEventElapsedTime(rec, rec2)", rec, rec2);
    ELAPSED("cuEventElapsedTime(rec2, rec)", rec2, rec);
    ELAPSED("cuEventElapsedTime(rec, rec)", rec, rec);
    ELAPSED("cuEventElapsedTime(rec, disabled)", rec, d);
    ELAPSED("cuEventElapsedTime(disabled, rec)", d, rec);
    ELAPSED("cuEventElapsedTime(disabled, disabled2)", d, d2);
    elapsed_case("cuEventElapsedTime(NULL ms, rec, rec2)", NULL, rec, rec2);
    elapsed_case("cuEventElapsedTime(NULL ms, rec, disabled)", NULL, rec, d);
    typedef CUresult (*elapsed_fn)(float*, CUevent, CUevent);
    elapsed_fn v1 = (elapsed_fn)dlsym(RTLD_DEFAULT, "cuEventElapsedTime");
    printf("%-*s => %s\n", PROBE_WIDTH, "cuEventElapsedTime (v1 symbol)", v1 ? "present" : "absent");
    if (v1) {
        float ms = NAN;
        PV("  v1(rec, rec2)", v1(&ms, rec, rec2), "positive_or_zero=%d", ms >= 0);
        P("  v1(u, rec)", v1(&ms, u, rec));
        P("  v1(rec, disabled)", v1(&ms, rec, d));
        P("  v1(NULL ms)", v1(NULL, rec, rec2));
    }

    /* Bad handles and flags. */
    P("cuStreamWaitEvent(s, NULL)", cuStreamWaitEvent(sb, NULL, 0));
    P("cuStreamWaitEvent(s, rec, EXTERNAL)", cuStreamWaitEvent(sb, rec, CU_EVENT_WAIT_EXTERNAL));
    P("cuStreamWaitEvent(s, rec, 2)", cuStreamWaitEvent(sb, rec, 2));
    P("cuStreamWaitEvent(s, rec, 0x80000000)", cuStreamWaitEvent(sb, rec, 0x80000000u));
    P("cuEventRecord(NULL, s)", cuEventRecord(NULL, sb));
    P("cuEventRecord(NULL, NULL)", cuEventRecord(NULL, NULL));
    P("cuEventQuery(NULL)", cuEventQuery(NULL));
    P("cuEventSynchronize(NULL)", cuEventSynchronize(NULL));
    P("cuEventDestroy(NULL)", cuEventDestroy(NULL));
    ELAPSED("cuEventElapsedTime(NULL, rec)", NULL, rec);
    ELAPSED("cuEventElapsedTime(rec, NULL)", rec, NULL);
    P("cuEventRecordWithFlags(rec, s, DEFAULT)", cuEventRecordWithFlags(rec, sb, CU_EVENT_RECORD_DEFAULT));
    P("cuEventRecordWithFlags(rec, s, EXTERNAL)", cuEventRecordWithFlags(rec, sb, CU_EVENT_RECORD_EXTERNAL));
    P("cuEventRecordWithFlags(rec, s, 2)", cuEventRecordWithFlags(rec, sb, 2));
    P("cuEventRecordWithFlags(rec, s, 0x80000000)", cuEventRecordWithFlags(rec, sb, 0x80000000u));
    P("cuEventRecordWithFlags(NULL, s, 0)", cuEventRecordWithFlags(NULL, sb, 0));
    P("cuEventRecordWithFlags(rec, NULL, 0)", cuEventRecordWithFlags(rec, NULL, 0));
    P("cuEventRecordWithFlags(rec, LEGACY, 0)", cuEventRecordWithFlags(rec, CU_STREAM_LEGACY, 0));
    P("cuEventRecordWithFlags(rec, PER_THREAD, 0)", cuEventRecordWithFlags(rec, CU_STREAM_PER_THREAD, 0));
    P("cuCtxSynchronize", cuCtxSynchronize());

    /* Not reached yet: a 300 ms spin in the blocking stream. */
    CUevent start = NULL, end = NULL, dis = NULL;
    cuEventCreate(&start, 0);
    cuEventCreate(&end, 0);
    cuEventCreate(&dis, CU_EVENT_DISABLE_TIMING);
    P("cuEventRecord(start)", cuEventRecord(start, sb));
    P("  cuEventSynchronize(start)", cuEventSynchronize(start));
    P("spin 300 ms in blocking stream", spin(sb, 300));
    P("cuEventRecord(end) behind it", cuEventRecord(end, sb));
    P("cuEventRecord(disabled) behind it", cuEventRecord(dis, sb));
    P("busy: cuStreamQuery(s)", cuStreamQuery(sb));
    P("busy: cuEventQuery(end)", cuEventQuery(end));
    P("busy: cuEventQuery(disabled)", cuEventQuery(dis));
    ELAPSED("busy: cuEventElapsedTime(start, end)", start, end);
    ELAPSED("busy: cuEventElapsedTime(end, start)", end, start);
    ELAPSED("busy: cuEventElapsedTime(end, end)", end, end);
    ELAPSED("busy: cuEventElapsedTime(u, end)", u, end);
    ELAPSED("busy: cuEventElapsedTime(end, u)", end, u);
    ELAPSED("busy: cuEventElapsedTime(start, disabled)", start, dis);
    ELAPSED("busy: cuEventElapsedTime(disabled, end)", dis, end);
    elapsed_case("busy: cuEventElapsedTime(NULL ms, start, end)", NULL, start, end);
    P("busy: cuStreamQuery(non-blocking, empty)", cuStreamQuery(snb));
    P("busy: cuStreamQuery(NULL)", cuStreamQuery(NULL));
    P("busy: cuStreamQuery(PER_THREAD)", cuStreamQuery(CU_STREAM_PER_THREAD));
    P("busy: cuStreamWaitEvent(non-blocking, end)", cuStreamWaitEvent(snb, end, 0));
    P("busy: cuStreamQuery(non-blocking after wait)", cuStreamQuery(snb));
    P("cuEventSynchronize(end)", cuEventSynchronize(end));
    ELAPSED("done: cuEventElapsedTime(start, end)", start, end);
    ELAPSED("done: cuEventElapsedTime(end, start)", end, start);
    P("done: cuStreamQuery(non-blocking)", cuStreamQuery(snb));
    /* Recorded again behind more work. */
    P("spin 200 ms", spin(sb, 200));
    P("cuEventRecord(end) again", cuEventRecord(end, sb));
    P("  cuEventQuery(end)", cuEventQuery(end));
    ELAPSED("  cuEventElapsedTime(start, end)", start, end);
    P("  cuEventSynchronize(end)", cuEventSynchronize(end));
    /* The legacy stream and a blocking stream. */
    P("spin 200 ms in blocking stream", spin(sb, 200));
    P("  cuStreamQuery(NULL) (legacy idle)", cuStreamQuery(NULL));
    P("  cuEventRecord(end, NULL)", cuEventRecord(end, NULL));
    P("  cuEventQuery(end on NULL)", cuEventQuery(end));
    P("  cuCtxSynchronize", cuCtxSynchronize());
    P("spin 200 ms in NULL stream", spin(NULL, 200));
    P("  cuStreamQuery(blocking, empty)", cuStreamQuery(sb));
    P("  cuStreamQuery(non-blocking, empty)", cuStreamQuery(snb));
    double t0 = seconds();
    P("  cuStreamSynchronize(non-blocking, empty)", cuStreamSynchronize(snb));
    printf("%-*s => %d\n", PROBE_WIDTH, "    returned at once", seconds() - t0 < 0.1);
    P("  cuMemsetD8Async(1 byte) in blocking stream", cuMemsetD8Async(d1, 0, 1, sb));
    P("  cuStreamQuery(blocking after it)", cuStreamQuery(sb));
    P("  cuCtxSynchronize", cuCtxSynchronize());
    /* Destroyed while not reached. */
    CUevent pending = NULL;
    cuEventCreate(&pending, 0);
    P("spin 100 ms", spin(sb, 100));
    P("cuEventRecord(pending)", cuEventRecord(pending, sb));
    P("cuEventDestroy(pending)", cuEventDestroy(pending));
    CUstream sp = NULL;
    cuStreamCreate(&sp, 0);
    P("spin 100 ms in a stream", spin(sp, 100));
    P("cuStreamDestroy(busy stream)", cuStreamDestroy(sp));
    P("  cuCtxSynchronize", cuCtxSynchronize());

    /* A stream and events of another context. */
    CUdeviceptr d2p = 0;
    CUevent e1 = NULL, f1 = NULL, e2 = NULL;
    cuEventCreate(&e1, 0);
    cuEventCreate(&f1, 0);
    cuEventRecord(f1, sb);
    cuEventRecord(e1, sb);
    cuStreamSynchronize(sb);
    P("cuCtxCreate c2", cuCtxCreate(&c2, NULL, 0, 0));
    CUstream s2 = NULL;
    cuStreamCreate(&s2, 0);
    cuEventCreate(&e2, 0);
    cuEventRecord(e2, s2);
    cuMemAlloc(&d2p, 1 << 20);
    char hbuf[4096];
    memset(hbuf, 1, sizeof hbuf);
    c = NULL;
    PV("other ctx: cuStreamGetCtx(s1)", cuStreamGetCtx(sb, &c), "is_c1=%d", c == c1);
    f = 77;
    PV("other ctx: cuStreamGetFlags(s1)", cuStreamGetFlags(sb, &f), "%u", f);
    P("other ctx: cuStreamQuery(s1)", cuStreamQuery(sb));
    P("other ctx: cuStreamSynchronize(s1)", cuStreamSynchronize(sb));
    P("other ctx: cuMemcpyAsync(c1 mem, s1)", cuMemcpyAsync(d1 + 4096, d1, 4096, sb));
    P("other ctx: cuMemcpyAsync(c2 mem, s1)", cuMemcpyAsync(d2p + 4096, d2p, 4096, sb));
    P("other ctx: cuMemcpyHtoDAsync(c1 mem, s1)", cuMemcpyHtoDAsync(d1, hbuf, sizeof hbuf, sb));
    P("other ctx: cuMemsetD8Async(c1 mem, s1)", cuMemsetD8Async(d1, 3, 4096, sb));
    P("other ctx: cuMemcpyAsync(c1 mem, NULL)", cuMemcpyAsync(d1 + 4096, d1, 4096, NULL));
    P("other ctx: cuLaunchKernel(c1 function, s1)", spin(sb, 0));
    P("other ctx: cuLaunchKernel(c1 function, NULL)", spin(NULL, 0));
    P("other ctx: cuStreamSynchronize(s1)", cuStreamSynchronize(sb));
    P("other ctx: cuEventRecord(e1, s1)", cuEventRecord(e1, sb));
    P("other ctx: cuEventRecord(e1, NULL)", cuEventRecord(e1, NULL));
    P("other ctx: cuEventRecord(e1, s2)", cuEventRecord(e1, s2));
    P("other ctx: cuEventRecord(e2, s1)", cuEventRecord(e2, sb));
    P("other ctx: cuStreamWaitEvent(s2, e1)", cuStreamWaitEvent(s2, e1, 0));
    P("other ctx: cuStreamWaitEvent(NULL, e1)", cuStreamWaitEvent(NULL, e1, 0));
    P("other ctx: cuStreamWaitEvent(s1, e2)", cuStreamWaitEvent(sb, e2, 0));
    P("other ctx: cuEventQuery(e1)", cuEventQuery(e1));
    P("other ctx: cuEventSynchronize(e1)", cuEventSynchronize(e1));
    P("other ctx: cuCtxSynchronize", cuCtxSynchronize());
    ELAPSED("other ctx: cuEventElapsedTime(f1, e1)", f1, e1);
    ELAPSED("other ctx: cuEventElapsedTime(e1, e2)", e1, e2);
    ELAPSED("other ctx: cuEventElapsedTime(e2, e1)", e2, e1);
    CUstream s1b = NULL;
    CUevent e1b = NULL;
    cuCtxPopCurrent(&cur);
    cuStreamCreate(&s1b, 0);
    cuEventCreate(&e1b, 0);
    cuCtxPushCurrent(c2);
    P("other ctx: cuStreamDestroy(c1 stream)", cuStreamDestroy(s1b));
    P("other ctx: cuEventDestroy(c1 event)", cuEventDestroy(e1b));
    cuMemFree(d2p);
    P("cuCtxDestroy(c2)", cuCtxDestroy(c2));
    PV("  current is c1", cuCtxGetCurrent(&cur), "%d", cur == c1);

    /* No current context. */
    cuCtxPopCurrent(&cur);
    CUstream sn = NULL;
    CUevent en = NULL;
    int l3 = 0, g3 = 0;
    P("no ctx: cuStreamCreate", cuStreamCreate(&sn, 0));
    P("no ctx: cuStreamCreate(NULL)", cuStreamCreate(NULL, 0));
    P("no ctx: cuStreamCreate(bad flags)", cuStreamCreate(&sn, 0x100));
    P("no ctx: cuStreamCreateWithPriority", cuStreamCreateWithPriority(&sn, 0, -1));
    P("no ctx: cuEventCreate", cuEventCreate(&en, 0));
    P("no ctx: cuEventCreate(NULL)", cuEventCreate(NULL, 0));
    P("no ctx: cuCtxGetStreamPriorityRange", cuCtxGetStreamPriorityRange(&l3, &g3));
    P("no ctx: cuStreamQuery(NULL)", cuStreamQuery(NULL));
    P("no ctx: cuStreamSynchronize(NULL)", cuStreamSynchronize(NULL));
    P("no ctx: cuStreamGetCtx(NULL)", cuStreamGetCtx(NULL, &c));
    P("no ctx: cuStreamGetCtx(PER_THREAD)", cuStreamGetCtx(CU_STREAM_PER_THREAD, &c));
    P("no ctx: cuStreamGetFlags(NULL)", cuStreamGetFlags(NULL, &f));
    P("no ctx: cuStreamGetPriority(NULL)", cuStreamGetPriority(NULL, &prio));
    P("no ctx: cuStreamQuery(s1)", cuStreamQuery(sb));
    P("no ctx: cuStreamSynchronize(s1)", cuStreamSynchronize(sb));
    c = NULL;
    PV("no ctx: cuStreamGetCtx(s1)", cuStreamGetCtx(sb, &c), "is_c1=%d", c == c1);
    P("no ctx: cuStreamGetFlags(s1)", cuStreamGetFlags(sb, &f));
    P("no ctx: cuEventRecord(rec, s1)", cuEventRecord(rec, sb));
    P("no ctx: cuEventRecord(rec, NULL)", cuEventRecord(rec, NULL));
    P("no ctx: cuEventQuery(rec)", cuEventQuery(rec));
    P("no ctx: cuEventSynchronize(rec)", cuEventSynchronize(rec));
    ELAPSED("no ctx: cuEventElapsedTime(rec, rec2)", rec, rec2);
    P("no ctx: cuStreamWaitEvent(s1, rec)", cuStreamWaitEvent(sb, rec, 0));
    P("no ctx: cuMemsetD8Async(s1)", cuMemsetD8Async(d1, 5, 4096, sb));
    P("no ctx: cuLaunchKernel(s1)", spin(sb, 0));
    P("no ctx: cuStreamSynchronize(s1) again", cuStreamSynchronize(sb));
    cuCtxPushCurrent(c1);

    /* Contexts with each scheduling flag: waits work. */
    static const unsigned sched[] = {CU_CTX_SCHED_AUTO, CU_CTX_SCHED_SPIN, CU_CTX_SCHED_YIELD,
                                     CU_CTX_SCHED_BLOCKING_SYNC};
    for (unsigned i = 0; i < 4; ++i) {
        CUcontext cs = NULL;
        unsigned cf = 77;
        snprintf(label, sizeof label, "cuCtxCreate(sched 0x%x)", sched[i]);
        P(label, cuCtxCreate(&cs, NULL, sched[i], 0));
        PV("  cuCtxGetFlags", cuCtxGetFlags(&cf), "0x%x", cf);
        CUmodule m2 = NULL;
        CUfunction keep = spin_fn;
        cuModuleLoadData(&m2, kSpinPtx);
        cuModuleGetFunction(&spin_fn, m2, "spin_ns");
        CUstream ss = NULL;
        CUevent es = NULL;
        cuStreamCreate(&ss, 0);
        cuEventCreate(&es, CU_EVENT_BLOCKING_SYNC);
        P("  spin 50 ms", spin(ss, 50));
        P("  cuStreamQuery", cuStreamQuery(ss));
        P("  cuStreamSynchronize", cuStreamSynchronize(ss));
        P("  cuStreamQuery after", cuStreamQuery(ss));
        P("  spin 50 ms", spin(ss, 50));
        P("  cuEventRecord(blocking-sync event)", cuEventRecord(es, ss));
        P("  cuEventSynchronize", cuEventSynchronize(es));
        P("  cuStreamQuery after", cuStreamQuery(ss));
        P("  spin 50 ms", spin(NULL, 50));
        P("  cuCtxSynchronize", cuCtxSynchronize());
        P("  cuStreamQuery(NULL) after", cuStreamQuery(NULL));
        P("  cuCtxDestroy", cuCtxDestroy(cs));
        spin_fn = keep;
    }

    /* The special handles are not destroyable (the legacy stream still
     * works afterwards). */
    P("cuStreamDestroy(NULL)", cuStreamDestroy(NULL));
    P("cuStreamDestroy(LEGACY)", cuStreamDestroy(CU_STREAM_LEGACY));
    P("cuStreamDestroy(PER_THREAD)", cuStreamDestroy(CU_STREAM_PER_THREAD));
    P("  cuMemsetD8Async(NULL) after", cuMemsetD8Async(d1, 9, 4096, NULL));
    P("  cuStreamSynchronize(NULL) after", cuStreamSynchronize(NULL));
    P("  cuStreamSynchronize(PER_THREAD) after", cuStreamSynchronize(CU_STREAM_PER_THREAD));

    /* Destroyed handles (last: libcuda may crash on them). */
    CUstream gone = NULL;
    cuStreamCreate(&gone, 0);
    P("cuStreamDestroy(gone)", cuStreamDestroy(gone));
    P("destroyed stream: cuStreamQuery", cuStreamQuery(gone));
    P("destroyed stream: cuStreamSynchronize", cuStreamSynchronize(gone));
    P("destroyed stream: cuStreamGetFlags", cuStreamGetFlags(gone, &f));
    P("destroyed stream: cuStreamGetPriority", cuStreamGetPriority(gone, &prio));
    P("destroyed stream: cuStreamGetCtx", cuStreamGetCtx(gone, &c));
    P("destroyed stream: cuStreamWaitEvent", cuStreamWaitEvent(gone, rec, 0));
    P("destroyed stream: cuEventRecord", cuEventRecord(rec, gone));
    P("destroyed stream: cuMemsetD8Async", cuMemsetD8Async(d1, 1, 4096, gone));
    P("destroyed stream: cuMemcpyHtoDAsync", cuMemcpyHtoDAsync(d1, hbuf, sizeof hbuf, gone));
    P("destroyed stream: cuLaunchKernel", spin(gone, 0));
    P("destroyed stream: cuStreamDestroy again", cuStreamDestroy(gone));
    CUevent egone = NULL;
    cuEventCreate(&egone, 0);
    cuEventRecord(egone, sb);
    cuEventSynchronize(egone);
    P("cuEventDestroy(gone)", cuEventDestroy(egone));
    P("destroyed event: cuEventQuery", cuEventQuery(egone));
    P("destroyed event: cuEventSynchronize", cuEventSynchronize(egone));
    P("destroyed event: cuEventRecord", cuEventRecord(egone, sb));
    ELAPSED("destroyed event: cuEventElapsedTime(rec, gone)", rec, egone);
    ELAPSED("destroyed event: cuEventElapsedTime(gone, rec)", egone, rec);
    P("destroyed event: cuStreamWaitEvent", cuStreamWaitEvent(sb, egone, 0));
    P("destroyed event: cuEventDestroy again", cuEventDestroy(egone));
    P("cuCtxSynchronize", cuCtxSynchronize());

    cuMemFree(d1);
    cuStreamDestroy(sb);
    cuStreamDestroy(snb);
    P("cuCtxDestroy(c1) with streams and events", cuCtxDestroy(c1));

    /* CUDA_LAUNCH_BLOCKING=1 (read at cuInit): this probe again, in a child. */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
        execl("/proc/self/exe", "compat_probe", "streams-launch-blocking", (char*)NULL);
        _exit(127);
    }
    int status = -1;
    if (pid > 0) waitpid(pid, &status, 0);
    printf("%-*s => exit %d\n", PROBE_WIDTH, "CUDA_LAUNCH_BLOCKING=1 child", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* Run with CUDA_LAUNCH_BLOCKING=1 by streams(): is work done when the call
 * that queued it returns? */
static void streams_launch_blocking(void) {
    CUcontext ctx = NULL;
    P("LB: cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, 0));
    CUmodule mod = NULL;
    P("LB: load spin PTX", cuModuleLoadData(&mod, kSpinPtx));
    cuModuleGetFunction(&spin_fn, mod, "spin_ns");
    CUstream s = NULL, nb = NULL;
    cuStreamCreate(&s, 0);
    cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING);
    const CUstream streams_[] = {NULL, s, nb};
    for (int i = 0; i < 3; ++i) {
        char label[96];
        double t0 = seconds();
        snprintf(label, sizeof label, "LB: spin 100 ms in %s stream", i == 2 ? "non-blocking" : sname(streams_[i]));
        CUresult r = CUDA_SUCCESS;
        PV(label, (r = spin(streams_[i], 100)), "call_waited=%d", seconds() - t0 >= 0.09);
        P("LB:   cuStreamQuery right after", cuStreamQuery(streams_[i]));
        CUevent e = NULL;
        cuEventCreate(&e, 0);
        t0 = seconds();
        spin(streams_[i], 100);
        PV("LB:   spin, cuEventRecord", cuEventRecord(e, streams_[i]), "spin_call_waited=%d", seconds() - t0 >= 0.09);
        P("LB:   cuEventQuery right after", cuEventQuery(e));
        cuEventDestroy(e);
    }
    const size_t n = 256u << 20;
    void *src = NULL, *out = NULL;
    CUdeviceptr dptr = 0;
    cuMemAllocHost(&src, n);
    cuMemAllocHost(&out, n);
    cuMemAlloc(&dptr, n);
    memset(src, 0x5B, n);
    memset(out, 0, n);
    P("LB: cuMemcpyHtoDAsync 256 MiB pinned", cuMemcpyHtoDAsync(dptr, src, n, s));
    P("LB:   cuStreamQuery right after", cuStreamQuery(s));
    PV("LB: cuMemcpyDtoHAsync 256 MiB pinned", cuMemcpyDtoHAsync(out, dptr, n, s), "landed=%d",
       ((unsigned char*)out)[n - 1] == 0x5B && ((unsigned char*)out)[0] == 0x5B);
    PV("LB: cuMemsetD32Async pinned", cuMemsetD32Async((CUdeviceptr)(uintptr_t)out, 0x01020304u, n / 4, s),
       "landed=%d", ((unsigned char*)out)[n - 1] == 0x01);
    P("LB: cuCtxDestroy", cuCtxDestroy(ctx));
}

/* ------------------------------------------------------------------ misuse */

/* Issue 9's misuse answers: each part runs in a child process of its own
 * (misuse-<part>) under an alarm, because libcuda may crash, stall or be left
 * unusable by them. The parent prints how each child ended. */

static void run_child(const char* section, unsigned seconds) {
    fflush(stdout);
    double t0 = seconds_now();
    pid_t pid = fork();
    if (pid == 0) {
        alarm(seconds);
        execl("/proc/self/exe", "compat_probe", section, (char*)NULL);
        _exit(127);
    }
    int status = -1;
    if (pid > 0) waitpid(pid, &status, 0);
    char label[96];
    snprintf(label, sizeof label, "%s child", section);
    if (WIFEXITED(status))
        printf("%-*s => exit %d\n", PROBE_WIDTH, label, WEXITSTATUS(status));
    else
        printf("%-*s => signal %d (after %.0f s)\n", PROBE_WIDTH, label, WIFSIGNALED(status) ? WTERMSIG(status) : -1,
               seconds_now() - t0);
}

static void misuse(void) {
    run_child("misuse-ctxcreate", 60);
    run_child("misuse-sizes", 60);
    run_child("misuse-link", 120);
    run_child("misuse-destroyed-current", 60);
    run_child("misuse-destroyed-objects", 60);
    run_child("misuse-images", 120);
    run_child("misuse-devzero", 60);
}

/* cuCtxCreate_v3/_v4 affinity and CIG arguments. */
static void misuse_ctxcreate(void) {
    CUcontext c = NULL;
    CUresult r;
    CUexecAffinityParam aff[5];
    memset(aff, 0, sizeof aff);
    aff[0].type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    aff[0].param.smCount.val = 1;
    CUctxCreateParams cp;
#define V4(label, arr, n, cig)                                              \
    do {                                                                    \
        memset(&cp, 0, sizeof cp);                                          \
        cp.execAffinityParams = (arr);                                      \
        cp.numExecAffinityParams = (n);                                     \
        cp.cigParams = (cig);                                               \
        c = NULL;                                                           \
        P(label, (r = cuCtxCreate(&c, &cp, 0, 0)));                         \
        if (r == CUDA_SUCCESS && c) cuCtxDestroy(c);                        \
    } while (0)
#define V3(label, arr, n)                                                   \
    do {                                                                    \
        c = NULL;                                                           \
        P(label, (r = cuCtxCreate_v3(&c, (arr), (n), 0, 0)));               \
        if (r == CUDA_SUCCESS && c) cuCtxDestroy(c);                        \
    } while (0)
    V4("v4 affinity NULL, count 5", NULL, 5, NULL);
    V4("v4 affinity NULL, count -1", NULL, -1, NULL);
    V4("v4 affinity array, count -1", aff, -1, NULL);
    V4("v4 affinity array, count 0", aff, 0, NULL);
    V4("v4 affinity SM_COUNT 1, count 1", aff, 1, NULL);
    aff[0].param.smCount.val = 0;
    V4("v4 affinity SM_COUNT 0, count 1", aff, 1, NULL);
    aff[0].param.smCount.val = 100000;
    V4("v4 affinity SM_COUNT 100000, count 1", aff, 1, NULL);
    aff[0].type = (CUexecAffinityType)7;
    aff[0].param.smCount.val = 1;
    V4("v4 affinity type 7, count 1", aff, 1, NULL);
    aff[0].type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    aff[1] = aff[0];
    V4("v4 affinity SM_COUNT twice, count 2", aff, 2, NULL);
    CUctxCigParam cig;
    memset(&cig, 0, sizeof cig);
    V4("v4 cig zeroed", NULL, 0, &cig);
    cig.sharedDataType = CIG_DATA_TYPE_NV_BLOB;
    V4("v4 cig NV_BLOB, NULL data", NULL, 0, &cig);
    aff[0].param.smCount.val = 1;
    V4("v4 affinity and cig", aff, 1, &cig);
    V3("v3 affinity NULL, count 5", NULL, 5);
    V3("v3 affinity NULL, count -1", NULL, -1);
    V3("v3 affinity array, count -1", aff, -1);
    V3("v3 affinity array, count 0", aff, 0);
    V3("v3 affinity SM_COUNT 1, count 1", aff, 1);
#undef V4
#undef V3
}

/* Hostile sizes. */
static void misuse_sizes(void) {
    CUcontext c = NULL;
    cuCtxCreate(&c, NULL, 0, 0);
    void* h = (void*)1;
    CUdeviceptr p = 1;
    static const struct {
        const char* name;
        size_t n;
    } sizes[] = {{"SIZE_MAX", SIZE_MAX}, {"SIZE_MAX-4095", SIZE_MAX - 4095}, {"1<<62", (size_t)1 << 62},
                 {"1<<47", (size_t)1 << 47}, {"1<<44", (size_t)1 << 44}};
    char label[96];
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        CUresult r;
        h = (void*)1;
        snprintf(label, sizeof label, "cuMemAllocHost(%s)", sizes[i].name);
        PV(label, (r = cuMemAllocHost(&h, sizes[i].n)), "ptr_null=%d", h == NULL);
        if (r == CUDA_SUCCESS) cuMemFreeHost(h);
        h = (void*)1;
        snprintf(label, sizeof label, "cuMemHostAlloc(%s, DEVICEMAP)", sizes[i].name);
        P(label, (r = cuMemHostAlloc(&h, sizes[i].n, CU_MEMHOSTALLOC_DEVICEMAP)));
        if (r == CUDA_SUCCESS) cuMemFreeHost(h);
        p = 1;
        snprintf(label, sizeof label, "cuMemAlloc(%s)", sizes[i].name);
        PV(label, (r = cuMemAlloc(&p, sizes[i].n)), "ptr_zero=%d", p == 0);
        if (r == CUDA_SUCCESS) cuMemFree(p);
    }
    char* buf = malloc(8192);
    P("cuMemHostRegister(buf, SIZE_MAX)", cuMemHostRegister(buf, SIZE_MAX, 0));
    P("cuMemHostRegister(buf, SIZE_MAX-4095)", cuMemHostRegister(buf, SIZE_MAX - 4095, 0));
    P("cuMemHostRegister(buf, 1<<47)", cuMemHostRegister(buf, (size_t)1 << 47, 0));
    free(buf);
    cuMemAlloc(&p, 4096);
    char hb[64];
    P("cuMemcpyHtoD(count SIZE_MAX)", cuMemcpyHtoD(p, hb, SIZE_MAX));
    P("cuMemcpyDtoH(count SIZE_MAX)", cuMemcpyDtoH(hb, p, SIZE_MAX));
    P("cuMemsetD8(count SIZE_MAX)", cuMemsetD8(p, 1, SIZE_MAX));
    P("cuMemsetD32(count SIZE_MAX/2)", cuMemsetD32(p, 1, SIZE_MAX / 2));
    P("cuMemcpyDtoD(p, p+4095, SIZE_MAX)", cuMemcpyDtoD(p, p + 4095, SIZE_MAX));
    cuMemFree(p);
    P("cuCtxDestroy", cuCtxDestroy(c));
}

/* A kernel with an unused parameter: JIT-compiled by either library to give
 * the image mutations below a real cubin to start from. */
static const char kNopPtx[] =
    ".version 7.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".visible .entry nop_p(.param .u64 nop_p_param_0)\n"
    "{\n"
    "    ret;\n"
    "}\n";

/* cuLink* oddities: empty links, links outliving their context, bad inputs. */
static void misuse_link(void) {
    CUcontext c1 = NULL, c2 = NULL;
    cuCtxCreate(&c1, NULL, 0, 0);
    CUlinkState ls = NULL;
    void* out = NULL;
    size_t n = 12345;
    CUresult r;
    P("cuLinkCreate", cuLinkCreate(0, NULL, NULL, &ls));
    PV("cuLinkComplete (no inputs)", (r = cuLinkComplete(ls, &out, &n)), "out_null=%d size=%zu", out == NULL,
       r == CUDA_SUCCESS ? n : 0);
    P("  cuLinkComplete again", cuLinkComplete(ls, &out, &n));
    P("  cuLinkAddData(PTX) after complete", cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void*)kNopPtx, sizeof kNopPtx, "nop", 0, NULL, NULL));
    P("  cuLinkDestroy", cuLinkDestroy(ls));

    /* Two completes with an input. */
    cuLinkCreate(0, NULL, NULL, &ls);
    P("cuLinkAddData(PTX)", cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void*)kNopPtx, sizeof kNopPtx, "nop", 0, NULL, NULL));
    PV("cuLinkComplete", (r = cuLinkComplete(ls, &out, &n)), "size_nonzero=%d", r == CUDA_SUCCESS && n > 0);
    void* out2 = NULL;
    size_t n2 = 0;
    PV("  cuLinkComplete again", (r = cuLinkComplete(ls, &out2, &n2)), "same_ptr=%d", out2 == out);
    P("  cuLinkAddData(PTX) after complete", cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void*)kNopPtx, sizeof kNopPtx, "nop2", 0, NULL, NULL));
    cuLinkDestroy(ls);

    /* Bad inputs. */
    static unsigned char g[4096];
    uint64_t x = 0x2545F4914F6CDD1Dull;
    for (size_t i = 0; i < sizeof g; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        g[i] = (unsigned char)(x >> 24) | 1;
    }
    static const struct {
        const char* name;
        CUjitInputType type;
    } kinds[] = {{"CUBIN", CU_JIT_INPUT_CUBIN},   {"PTX", CU_JIT_INPUT_PTX},     {"FATBINARY", CU_JIT_INPUT_FATBINARY},
                 {"OBJECT", CU_JIT_INPUT_OBJECT}, {"LIBRARY", CU_JIT_INPUT_LIBRARY}, {"type 99", (CUjitInputType)99}};
    char label[96];
    for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        cuLinkCreate(0, NULL, NULL, &ls);
        g[sizeof g - 1] = 0;
        snprintf(label, sizeof label, "cuLinkAddData(%s, random bytes)", kinds[i].name);
        P(label, cuLinkAddData(ls, kinds[i].type, g, sizeof g, "garbage", 0, NULL, NULL));
        P("  cuLinkComplete", cuLinkComplete(ls, &out, &n));
        cuLinkDestroy(ls);
    }
    /* ELF header of a relocatable CUDA object over random bytes. */
    memset(g, 0, 64);
    memcpy(g, "\x7f" "ELF\x02\x01\x01", 7);
    g[16] = 1;   /* ET_REL */
    g[18] = 190; /* EM_CUDA */
    g[20] = 1;
    cuLinkCreate(0, NULL, NULL, &ls);
    P("cuLinkAddData(CUBIN, ET_REL header + zeros)", cuLinkAddData(ls, CU_JIT_INPUT_CUBIN, g, sizeof g, "rel", 0, NULL, NULL));
    P("  cuLinkComplete", cuLinkComplete(ls, &out, &n));
    cuLinkDestroy(ls);
    CUmodule m = NULL;
    P("cuModuleLoadData(ET_REL header + zeros)", cuModuleLoadData(&m, g));

    /* A link state outliving its context. */
    cuCtxCreate(&c2, NULL, 0, 0);
    P("c2: cuLinkCreate", cuLinkCreate(0, NULL, NULL, &ls));
    P("c2: cuLinkAddData(PTX)", cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void*)kNopPtx, sizeof kNopPtx, "nop", 0, NULL, NULL));
    P("cuCtxDestroy(c2)", cuCtxDestroy(c2));
    P("  (c1 current) cuLinkAddData(PTX)", cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void*)kNopPtx, sizeof kNopPtx, "nop2", 0, NULL, NULL));
    PV("  (c1 current) cuLinkComplete", (r = cuLinkComplete(ls, &out, &n)), "size_nonzero=%d", r == CUDA_SUCCESS && n > 0);
    P("  (c1 current) cuLinkDestroy", cuLinkDestroy(ls));
    cuCtxCreate(&c2, NULL, 0, 0);
    P("c2': cuLinkCreate", cuLinkCreate(0, NULL, NULL, &ls));
    P("cuCtxDestroy(c2')", cuCtxDestroy(c2));
    CUcontext cur = NULL;
    while (cuCtxPopCurrent(&cur) == CUDA_SUCCESS) {
    }
    P("  (no context) cuLinkAddData(PTX)", cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void*)kNopPtx, sizeof kNopPtx, "nop", 0, NULL, NULL));
    P("  (no context) cuLinkComplete", cuLinkComplete(ls, &out, &n));
    P("  (no context) cuLinkDestroy", cuLinkDestroy(ls));
    P("(no context) cuLinkCreate", cuLinkCreate(0, NULL, NULL, &ls));
    cuCtxPushCurrent(c1);
    /* Destroyed with the context still current. */
    cuCtxCreate(&c2, NULL, 0, 0);
    cuLinkCreate(0, NULL, NULL, &ls);
    cuCtxPushCurrent(c2);
    P("cuCtxDestroy(c2'') (also below on the stack)", cuCtxDestroy(c2));
    P("  (destroyed current) cuLinkCreate", cuLinkCreate(0, NULL, NULL, &ls));
    P("  (destroyed current) cuLinkAddData(PTX)", cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void*)kNopPtx, sizeof kNopPtx, "nop", 0, NULL, NULL));
    P("  (destroyed current) cuLinkComplete", cuLinkComplete(ls, &out, &n));
    P("  (destroyed current) cuLinkDestroy", cuLinkDestroy(ls));
    cuCtxPopCurrent(&cur);
    P("cuCtxDestroy(c1)", cuCtxDestroy(c1));
    /* Last: libcuda 580 corrupts its heap on a second cuLinkDestroy (the
     * first H200 run aborted there, before the cases above). */
    cuCtxCreate(&c1, NULL, 0, 0);
    cuLinkCreate(0, NULL, NULL, &ls);
    P("cuLinkDestroy", cuLinkDestroy(ls));
    P("  cuLinkDestroy again", cuLinkDestroy(ls));
    P("  cuLinkComplete(destroyed)", cuLinkComplete(ls, &out, &n));
    cuCtxDestroy(c1);
}

/* Making a destroyed context current (libcuda accepts it; what follows). */
static void misuse_destroyed_current(void) {
    CUcontext c = NULL, c2 = NULL, cur = NULL;
    CUdevice d = -1;
    CUdeviceptr p = 0;
    unsigned flags = 0;
    cuCtxCreate(&c, NULL, 0, 0);
    cuCtxCreate(&c2, NULL, 0, 0);
    P("cuCtxDestroy(c)", cuCtxDestroy(c));
    PV("  current is c2", cuCtxGetCurrent(&cur), "%d", cur == c2);
    P("cuCtxSetCurrent(destroyed c)", cuCtxSetCurrent(c));
    PV("  cuCtxGetCurrent", cuCtxGetCurrent(&cur), "is_c=%d null=%d", cur == c, cur == NULL);
    P("  cuCtxSynchronize", cuCtxSynchronize());
    P("  cuMemAlloc", cuMemAlloc(&p, 16));
    PV("  cuCtxGetDevice", cuCtxGetDevice(&d), "%d", d);
    P("  cuCtxGetFlags", cuCtxGetFlags(&flags));
    CUstream s = NULL;
    P("  cuStreamCreate", cuStreamCreate(&s, 0));
    P("  cuStreamSynchronize(NULL)", cuStreamSynchronize(NULL));
    P("cuCtxPushCurrent(destroyed c)", cuCtxPushCurrent(c));
    PV("  cuCtxGetCurrent", cuCtxGetCurrent(&cur), "is_c=%d", cur == c);
    PV("cuCtxPopCurrent", cuCtxPopCurrent(&cur), "is_c=%d", cur == c);
    PV("cuCtxPopCurrent", cuCtxPopCurrent(&cur), "is_c=%d", cur == c);
    PV("  cuCtxGetCurrent", cuCtxGetCurrent(&cur), "null=%d", cur == NULL);
    P("cuCtxSetCurrent(c2)", cuCtxSetCurrent(c2));
    P("  cuMemAlloc", cuMemAlloc(&p, 16));
    P("  cuMemFree", cuMemFree(p));
    P("cuCtxSetCurrent(destroyed c) again", cuCtxSetCurrent(c));
    P("cuCtxSetCurrent(c2) again", cuCtxSetCurrent(c2));
    P("cuCtxDestroy(destroyed c)", cuCtxDestroy(c));
    P("cuCtxDestroy(c2)", cuCtxDestroy(c2));
    P("cuCtxSetCurrent(destroyed c2, was current)", cuCtxSetCurrent(c2));
    P("cuCtxPushCurrent(destroyed c2)", cuCtxPushCurrent(c2));
    P("  cuCtxSynchronize", cuCtxSynchronize());
    P("cuCtxSetCurrent(NULL)", cuCtxSetCurrent(NULL));
    CUcontext c3 = NULL;
    P("cuCtxCreate afterwards", cuCtxCreate(&c3, NULL, 0, 0));
    P("  cuMemAlloc", cuMemAlloc(&p, 16));
    P("  cuCtxDestroy", cuCtxDestroy(c3));
}

/* Objects whose context was destroyed. */
static void misuse_destroyed_objects(void) {
    CUcontext keep = NULL, c = NULL;
    cuCtxCreate(&keep, NULL, 0, 0);
    cuCtxCreate(&c, NULL, 0, 0);
    CUstream s = NULL;
    CUevent e = NULL, e2 = NULL;
    CUmodule m = NULL;
    CUfunction f = NULL;
    CUdeviceptr p = 0;
    void* h = NULL;
    cuStreamCreate(&s, 0);
    cuEventCreate(&e, 0);
    cuEventCreate(&e2, 0);
    cuEventRecord(e2, s);
    P("load nop PTX", cuModuleLoadData(&m, kNopPtx));
    cuModuleGetFunction(&f, m, "nop_p");
    cuMemAlloc(&p, 4096);
    cuMemAllocHost(&h, 4096);
    P("cuCtxDestroy(c) (keep current below)", cuCtxDestroy(c));
    CUcontext cur = NULL;
    PV("  current is keep", cuCtxGetCurrent(&cur), "%d", cur == keep);
    unsigned fl = 0;
    int v = 0;
    float ms = 0;
    char hb[64];
    void* nullp = NULL;
    void* args[] = {&nullp};
    CUfunction g = NULL;
    P("stream of destroyed ctx: cuStreamQuery", cuStreamQuery(s));
    P("stream of destroyed ctx: cuStreamSynchronize", cuStreamSynchronize(s));
    P("stream of destroyed ctx: cuStreamGetFlags", cuStreamGetFlags(s, &fl));
    P("stream of destroyed ctx: cuMemsetD8Async", cuMemsetD8Async(p, 1, 16, s));
    P("event of destroyed ctx: cuEventQuery", cuEventQuery(e2));
    P("event of destroyed ctx: cuEventSynchronize", cuEventSynchronize(e2));
    P("event of destroyed ctx: cuEventRecord(NULL)", cuEventRecord(e, NULL));
    P("event of destroyed ctx: cuEventElapsedTime", cuEventElapsedTime(&ms, e2, e2));
    P("module of destroyed ctx: cuModuleGetFunction", cuModuleGetFunction(&g, m, "nop_p"));
    P("function of destroyed ctx: cuFuncGetAttribute", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    P("function of destroyed ctx: cuLaunchKernel(NULL)", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    P("memory of destroyed ctx: cuMemcpyHtoD", cuMemcpyHtoD(p, hb, sizeof hb));
    P("memory of destroyed ctx: cuMemsetD8", cuMemsetD8(p, 1, 16));
    P("memory of destroyed ctx: cuMemGetAddressRange", cuMemGetAddressRange(NULL, NULL, p));
    P("memory of destroyed ctx: cuMemFree", cuMemFree(p));
    P("host memory of destroyed ctx: cuMemFreeHost", cuMemFreeHost(h));
    P("stream of destroyed ctx: cuStreamDestroy", cuStreamDestroy(s));
    P("event of destroyed ctx: cuEventDestroy", cuEventDestroy(e));
    P("module of destroyed ctx: cuModuleUnload", cuModuleUnload(m));
    P("cuCtxSynchronize(keep)", cuCtxSynchronize());
    P("cuCtxDestroy(keep)", cuCtxDestroy(keep));
}

static double seconds_class(double t) { return t < 1 ? 0 : t < 10 ? 1 : 2; }

/* Section header of 'name' in an ELF64 image, or NULL. */
static unsigned char* elf_section(unsigned char* img, size_t n, const char* name, uint64_t* size) {
    uint64_t shoff;
    uint16_t shentsize, shnum, shstrndx;
    memcpy(&shoff, img + 0x28, 8);
    memcpy(&shentsize, img + 0x3a, 2);
    memcpy(&shnum, img + 0x3c, 2);
    memcpy(&shstrndx, img + 0x3e, 2);
    if (shentsize != 64 || shoff + (uint64_t)shnum * 64 > n || shstrndx >= shnum) return NULL;
    uint64_t stroff;
    memcpy(&stroff, img + shoff + (uint64_t)shstrndx * 64 + 24, 8);
    for (uint16_t i = 0; i < shnum; ++i) {
        unsigned char* sh = img + shoff + (uint64_t)i * 64;
        uint32_t nm;
        uint64_t off;
        memcpy(&nm, sh, 4);
        memcpy(&off, sh + 24, 8);
        if (stroff + nm < n && strcmp((const char*)img + stroff + nm, name) == 0) {
            memcpy(size, sh + 32, 8);
            return off + *size <= n ? img + off : NULL;
        }
    }
    return NULL;
}

/* The EIATTR_PARAM_CBANK record (format 4, attribute 0x0a) of .nv.info.nop_p. */
static unsigned char* param_cbank(unsigned char* img, size_t n) {
    uint64_t size = 0;
    unsigned char* s = elf_section(img, n, ".nv.info.nop_p", &size);
    for (uint64_t off = 0; s && off + 4 <= size;) {
        uint16_t len;
        memcpy(&len, s + off + 2, 2);
        if (s[off] == 4 && s[off + 1] == 0x0a) return s + off;
        off += 4 + (s[off] == 4 ? len : 0);
    }
    return NULL;
}

static void mutated_launch(const char* label, const unsigned char* img, size_t n) {
    (void)n;
    CUmodule m = NULL;
    CUfunction f = NULL;
    char l2[128];
    double t0 = seconds_now();
    CUresult r = CUDA_SUCCESS;
    PV(label, (r = cuModuleLoadData(&m, img)), "slow=%.0f", seconds_class(seconds_now() - t0));
    if (r != CUDA_SUCCESS) return;
    snprintf(l2, sizeof l2, "  %s: get+launch", label);
    unsigned long long zero = 0;
    void* args[] = {&zero};
    P(l2, (cuModuleGetFunction(&f, m, "nop_p"), cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL)));
    snprintf(l2, sizeof l2, "  %s: sync", label);
    P(l2, cuCtxSynchronize());
    cuModuleUnload(m);
}

/* Mutated copies of a valid cubin and fatbin (items 1-3 of issue 9). */
static void misuse_images(void) {
    CUcontext c = NULL;
    cuCtxCreate(&c, NULL, 0, 0);
    int major = 0, minor = 0;
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0);
    CUlinkState ls = NULL;
    void* out = NULL;
    size_t n = 0;
    cuLinkCreate(0, NULL, NULL, &ls);
    cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void*)kNopPtx, sizeof kNopPtx, "nop", 0, NULL, NULL);
    if (cuLinkComplete(ls, &out, &n) != CUDA_SUCCESS || n < 64) {
        printf("images: no cubin from cuLinkComplete\n");
        return;
    }
    unsigned char* cubin = malloc(n);
    unsigned char* img = malloc(n);
    memcpy(cubin, out, n);
    cuLinkDestroy(ls);
    mutated_launch("cubin as linked", cubin, n);
    memcpy(img, cubin, n);
    unsigned char* rec = param_cbank(img, n);
    printf("%-*s => %d\n", PROBE_WIDTH, "cubin has PARAM_CBANK", rec != NULL);
    if (rec) {
        uint16_t off, sz;
        memcpy(&off, rec + 8, 2);
        memcpy(&sz, rec + 10, 2);
        printf("%-*s => offset 0x%x size %u\n", PROBE_WIDTH, "  PARAM_CBANK", off, sz);
        static const uint16_t offsets[] = {0x0, 0x10, 0x2f, 0x208, 0x20c, 0x211, 0x8000, 0xfff8};
        for (unsigned i = 0; i < sizeof offsets / sizeof offsets[0]; ++i) {
            char label[96];
            memcpy(img, cubin, n);
            memcpy(param_cbank(img, n) + 8, &offsets[i], 2);
            snprintf(label, sizeof label, "PARAM_CBANK offset 0x%x", offsets[i]);
            mutated_launch(label, img, n);
        }
        memcpy(img, cubin, n);
        uint16_t big = 0xfff0;
        memcpy(param_cbank(img, n) + 10, &big, 2);
        mutated_launch("PARAM_CBANK size 0xfff0", img, n);
        memcpy(img, cubin, n);
        param_cbank(img, n)[1] = 0x7e; /* an attribute number no tool lists: the record is gone */
        mutated_launch("PARAM_CBANK record renamed", img, n);
    }
    /* The executable cubin declared relocatable. */
    memcpy(img, cubin, n);
    img[16] = 1;
    mutated_launch("cubin e_type ET_REL", img, n);
    cuLinkCreate(0, NULL, NULL, &ls);
    P("cuLinkAddData(CUBIN, e_type ET_REL)", cuLinkAddData(ls, CU_JIT_INPUT_CUBIN, img, n, "rel", 0, NULL, NULL));
    P("  cuLinkComplete", cuLinkComplete(ls, &out, &n));
    cuLinkDestroy(ls);
    /* A fatbin of that cubin with a compressed entry claiming 1 GiB. */
    const uint32_t arch = (uint32_t)(major * 10 + minor);
    static const struct {
        const char* name;
        uint64_t flags;
        uint64_t claimed;
    } fb[] = {{"LZ4, claims 1 GiB", 0x2000, 1ull << 30},
              {"zstd, claims 1 GiB", 0x8000, 1ull << 30},
              {"zstd, claims 2^63", 0x8000, 1ull << 63},
              {"LZ4, claims 16 bytes", 0x2000, 16}};
    for (unsigned i = 0; i < sizeof fb / sizeof fb[0]; ++i) {
        unsigned char f[16 + 64 + 32];
        memset(f, 0, sizeof f);
        uint32_t u32 = 0xBA55ED50;
        uint16_t u16;
        uint64_t u64;
        memcpy(f, &u32, 4);
        u16 = 1;
        memcpy(f + 4, &u16, 2);
        u16 = 16;
        memcpy(f + 6, &u16, 2);
        u64 = 64 + 32;
        memcpy(f + 8, &u64, 8);
        unsigned char* e = f + 16;
        u16 = 2; /* ELF */
        memcpy(e, &u16, 2);
        u16 = 0x101;
        memcpy(e + 2, &u16, 2);
        u32 = 64;
        memcpy(e + 4, &u32, 4);
        u64 = 32;
        memcpy(e + 8, &u64, 8);
        u32 = 32;
        memcpy(e + 0x10, &u32, 4);
        memcpy(e + 0x1c, &arch, 4);
        u64 = 0x11 | fb[i].flags;
        memcpy(e + 0x28, &u64, 8);
        memcpy(e + 0x38, &fb[i].claimed, 8);
        for (int k = 0; k < 32; ++k) e[64 + k] = (unsigned char)(k * 37 + 11);
        if (fb[i].flags == 0x8000) memcpy(e + 64, "\x28\xb5\x2f\xfd", 4);
        char label[96];
        CUmodule m = NULL;
        double t0 = seconds_now();
        snprintf(label, sizeof label, "fatbin %s", fb[i].name);
        PV(label, cuModuleLoadData(&m, f), "slow=%.0f", seconds_class(seconds_now() - t0));
        snprintf(label, sizeof label, "cuModuleLoadFatBinary %s", fb[i].name);
        P(label, cuModuleLoadFatBinary(&m, f));
    }
    free(img);
    free(cubin);
    cuCtxDestroy(c);
}

/* Files that never end or are not files. */
static void misuse_devzero(void) {
    CUcontext c = NULL;
    cuCtxCreate(&c, NULL, 0, 0);
    CUmodule m = NULL;
    double t0 = seconds_now();
    PV("cuModuleLoad(/dev/zero)", cuModuleLoad(&m, "/dev/zero"), "slow=%.0f", seconds_class(seconds_now() - t0));
    P("cuModuleLoad(/dev/null)", cuModuleLoad(&m, "/dev/null"));
    P("cuModuleLoad(/)", cuModuleLoad(&m, "/"));
    P("cuModuleLoad(\"\")", cuModuleLoad(&m, ""));
    t0 = seconds_now();
    PV("cuModuleLoad(/dev/urandom)", cuModuleLoad(&m, "/dev/urandom"), "slow=%.0f", seconds_class(seconds_now() - t0));
    CUlinkState ls = NULL;
    cuLinkCreate(0, NULL, NULL, &ls);
    t0 = seconds_now();
    PV("cuLinkAddFile(CUBIN, /dev/zero)", cuLinkAddFile(ls, CU_JIT_INPUT_CUBIN, "/dev/zero", 0, NULL, NULL), "slow=%.0f",
       seconds_class(seconds_now() - t0));
    P("cuLinkAddFile(PTX, /dev/null)", cuLinkAddFile(ls, CU_JIT_INPUT_PTX, "/dev/null", 0, NULL, NULL));
    P("cuLinkAddFile(PTX, /)", cuLinkAddFile(ls, CU_JIT_INPUT_PTX, "/", 0, NULL, NULL));
    cuLinkDestroy(ls);
    cuCtxDestroy(c);
}

/* One section per run (a crash inside the library under test cannot spoil
 * the others): init, devices, contexts, memory, streams (which runs
 * streams-launch-blocking in a child with CUDA_LAUNCH_BLOCKING=1), misuse
 * (which runs each misuse-* part in a child). */
int main(int argc, char** argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);
    signal(SIGILL, on_crash);
    const char* section = argc > 1 ? argv[1] : "init";
    if (strcmp(section, "init") == 0) {
        before_init();
        P("cuInit(0)", cuInit(0));
        P("cuInit(0) again", cuInit(0));
        return 0;
    }
    if (cuInit(0) != CUDA_SUCCESS) {
        printf("cuInit failed\n");
        return 1;
    }
    if (strcmp(section, "devices") == 0) devices();
    else if (strcmp(section, "contexts") == 0) contexts();
    else if (strcmp(section, "memory") == 0) memory();
    else if (strcmp(section, "streams") == 0) streams();
    else if (strcmp(section, "streams-launch-blocking") == 0) streams_launch_blocking();
    else if (strcmp(section, "misuse") == 0) misuse();
    else if (strcmp(section, "misuse-ctxcreate") == 0) misuse_ctxcreate();
    else if (strcmp(section, "misuse-sizes") == 0) misuse_sizes();
    else if (strcmp(section, "misuse-link") == 0) misuse_link();
    else if (strcmp(section, "misuse-destroyed-current") == 0) misuse_destroyed_current();
    else if (strcmp(section, "misuse-destroyed-objects") == 0) misuse_destroyed_objects();
    else if (strcmp(section, "misuse-images") == 0) misuse_images();
    else if (strcmp(section, "misuse-devzero") == 0) misuse_devzero();
    else return 2;
    return 0;
}
