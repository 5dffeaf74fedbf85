#define _GNU_SOURCE
/*
 * compat_probe: runs the driver-API calls of nvlite's first issue with good
 * and bad arguments and prints one line per case: the CUresult name and the
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
#include <unistd.h>

#include "nvlite/cuda.h"

#include "probe.h"

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

/* One section per run (a crash inside the library under test cannot spoil
 * the others): init, devices, contexts, memory. */
int main(int argc, char** argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
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
    else return 2;
    return 0;
}
