#define _GNU_SOURCE
/*
 * mem_probe: the calls of issue 10 part C with good and bad arguments, one
 * line per case (the CUresult name and the values that matter; raw addresses
 * are never printed, only their properties). Sections, one per run:
 *
 *   pitch     cuMemAllocPitch, cuMemcpy2D(Unaligned)(Async), cuMemcpy3D(Async),
 *             cuMemcpyPeer(Async), cuMemsetD2D8/16/32(Async)
 *   pools     memory pools, cuMemAllocAsync/cuMemFreeAsync, reuse, counters
 *   hostfunc  cuLaunchHostFunc, cuStreamAddCallback, CUDA calls from inside them
 *   hostfault host functions and callbacks after a fault (the context is lost)
 *   hostcalls each CUDA call made from inside a host function, one child
 *             process per call (a call that deadlocks prints HANG)
 *   pitch2    what a pitch or slice height of 0 copies; pitch checks with
 *             several lines
 *   pools2    pool memory after its context is destroyed, opportunistic
 *             reuse seen without a synchronising call, cuMemAllocAsync(0)
 *
 * `make probes` builds it twice: build/probes/mem_probe_libcuda (NVIDIA's
 * libcuda) and build/probes/mem_probe_nvlite. On a GPU the two outputs must
 * be the same; the differences are what to fix.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvlite/cuda.h"

#include "probe.h"

static unsigned char pattern(size_t i) { return (unsigned char)(i * 131u + (i >> 8) * 7u + 1u); }

static void fill_pattern(unsigned char* p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(pattern(i) ^ seed);
}

/* ------------------------------------------------------------------ pitch */

static CUDA_MEMCPY2D c2d(void) {
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    return c;
}

static CUDA_MEMCPY3D c3d(void) {
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    return c;
}

/* A 2D copy between two host-side images through a device image, checked:
 * returns 1 when every byte of the destination rectangle is right and no
 * byte outside it changed. */
static int roundtrip2d(CUdeviceptr dev, size_t dpitch, int pinned, int async) {
    enum { W = 37, H = 11, SP = 53, DP = 61, SX = 3, SY = 2, DX = 5, DY = 1, DEVX = 7, DEVY = 3 };
    size_t sbytes = SP * (SY + H + 1), dbytes = DP * (DY + H + 1);
    unsigned char *src, *dst;
    if (pinned) {
        cuMemAllocHost((void**)&src, sbytes);
        cuMemAllocHost((void**)&dst, dbytes);
    } else {
        src = malloc(sbytes);
        dst = malloc(dbytes);
    }
    fill_pattern(src, sbytes, 0x5a);
    memset(dst, 0xee, dbytes);
    CUDA_MEMCPY2D up = c2d();
    up.srcMemoryType = CU_MEMORYTYPE_HOST;
    up.srcHost = src;
    up.srcPitch = SP;
    up.srcXInBytes = SX;
    up.srcY = SY;
    up.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    up.dstDevice = dev;
    up.dstPitch = dpitch;
    up.dstXInBytes = DEVX;
    up.dstY = DEVY;
    up.WidthInBytes = W;
    up.Height = H;
    CUDA_MEMCPY2D down = c2d();
    down.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    down.srcDevice = dev;
    down.srcPitch = dpitch;
    down.srcXInBytes = DEVX;
    down.srcY = DEVY;
    down.dstMemoryType = CU_MEMORYTYPE_HOST;
    down.dstHost = dst;
    down.dstPitch = DP;
    down.dstXInBytes = DX;
    down.dstY = DY;
    down.WidthInBytes = W;
    down.Height = H;
    CUresult r1, r2;
    if (async) {
        r1 = cuMemcpy2DAsync(&up, NULL);
        r2 = cuMemcpy2DAsync(&down, NULL);
        cuStreamSynchronize(NULL);
    } else {
        r1 = cuMemcpy2D(&up);
        r2 = cuMemcpy2D(&down);
    }
    int ok = r1 == CUDA_SUCCESS && r2 == CUDA_SUCCESS;
    for (size_t y = 0; y < DY + H + 1; ++y)
        for (size_t x = 0; x < DP; ++x) {
            int inside = y >= DY && y < DY + H && x >= DX && x < DX + W;
            unsigned char want = inside ? src[(y - DY + SY) * SP + (x - DX + SX)] : 0xee;
            if (dst[y * DP + x] != want) ok = 0;
        }
    if (pinned) {
        cuMemFreeHost(src);
        cuMemFreeHost(dst);
    } else {
        free(src);
        free(dst);
    }
    return ok;
}

static void pitch(void) {
    CUcontext c;
    cuCtxCreate(&c, NULL, 0, 0);
    CUdeviceptr p = 0;
    size_t pt = 0;
    static const size_t widths[] = {1, 3, 100, 511, 512, 513, 1000, 4096, 65537};
    static const unsigned elems[] = {4, 8, 16};
    for (unsigned w = 0; w < sizeof widths / sizeof widths[0]; ++w)
        for (unsigned e = 0; e < 3; ++e) {
            pt = 0;
            CUresult r = cuMemAllocPitch(&p, &pt, widths[w], 7, elems[e]);
            size_t sz = 0;
            CUdeviceptr base = 0;
            CUresult r2 = cuMemGetAddressRange(&base, &sz, p);
            printf("cuMemAllocPitch(w=%zu,h=7,e=%u) => %s pitch=%zu align512=%d range=%s size=%zu\n", widths[w],
                   elems[e], rname(r), pt, p % 512 == 0, rname(r2), sz);
            if (r == CUDA_SUCCESS) cuMemFree(p);
        }
    PV("cuMemAllocPitch(w=100,h=1,e=4)", cuMemAllocPitch(&p, &pt, 100, 1, 4), "pitch=%zu", pt);
    cuMemFree(p);
    PV("cuMemAllocPitch(w=100,h=100000,e=4)", cuMemAllocPitch(&p, &pt, 100, 100000, 4), "pitch=%zu", pt);
    cuMemFree(p);
    static const unsigned bad_elems[] = {0, 1, 2, 3, 5, 32};
    for (unsigned e = 0; e < sizeof bad_elems / sizeof bad_elems[0]; ++e) {
        char label[64];
        snprintf(label, sizeof label, "cuMemAllocPitch(elem %u)", bad_elems[e]);
        pt = 12345;
        CUresult r = cuMemAllocPitch(&p, &pt, 100, 7, bad_elems[e]);
        printf("%-48s => %s pitch=%zu\n", label, rname(r), pt);
        if (r == CUDA_SUCCESS) cuMemFree(p);
    }
    P("cuMemAllocPitch(w 0)", cuMemAllocPitch(&p, &pt, 0, 7, 4));
    P("cuMemAllocPitch(h 0)", cuMemAllocPitch(&p, &pt, 100, 0, 4));
    P("cuMemAllocPitch(NULL dptr)", cuMemAllocPitch(NULL, &pt, 100, 7, 4));
    P("cuMemAllocPitch(NULL pitch)", cuMemAllocPitch(&p, NULL, 100, 7, 4));
    P("cuMemAllocPitch(w 1<<31)", cuMemAllocPitch(&p, &pt, (size_t)1 << 31, 1, 4));
    P("cuMemAllocPitch(w 1<<40)", cuMemAllocPitch(&p, &pt, (size_t)1 << 40, 1, 4));
    P("cuMemAllocPitch(h 1<<40)", cuMemAllocPitch(&p, &pt, 100, (size_t)1 << 40, 4));

    /* 2D copies that must work, checked byte for byte. */
    CUdeviceptr img = 0;
    size_t ipitch = 0;
    cuMemAllocPitch(&img, &ipitch, 64, 20, 4);
    printf("%-48s => %d\n", "2D roundtrip pageable", roundtrip2d(img, ipitch, 0, 0));
    printf("%-48s => %d\n", "2D roundtrip pinned", roundtrip2d(img, ipitch, 1, 0));
    printf("%-48s => %d\n", "2D roundtrip pageable async", roundtrip2d(img, ipitch, 0, 1));
    printf("%-48s => %d\n", "2D roundtrip pinned async", roundtrip2d(img, ipitch, 1, 1));
    printf("%-48s => %d\n", "2D roundtrip odd device pitch", roundtrip2d(img, 97, 0, 0));

    /* Argument checks: one field wrong at a time. */
    unsigned char host[8192];
    fill_pattern(host, sizeof host, 1);
    CUdeviceptr d = 0;
    cuMemAlloc(&d, 8192);
    CUDA_MEMCPY2D g = c2d(); /* good: host -> device, 100 x 10, pitches 128 */
    g.srcMemoryType = CU_MEMORYTYPE_HOST;
    g.srcHost = host;
    g.srcPitch = 128;
    g.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    g.dstDevice = d;
    g.dstPitch = 128;
    g.WidthInBytes = 100;
    g.Height = 10;
    CUDA_MEMCPY2D b;
    P("2D good", cuMemcpy2D(&g));
    P("2D NULL", cuMemcpy2D(NULL));
    P("2DUnaligned NULL", cuMemcpy2DUnaligned(NULL));
    P("2DAsync NULL", cuMemcpy2DAsync(NULL, NULL));
#define CASE2D(label, stmt)                                           \
    do {                                                              \
        b = g;                                                        \
        stmt;                                                         \
        P("2D " label, cuMemcpy2D(&b));                               \
        b = g;                                                        \
        stmt;                                                         \
        P("2DUnaligned " label, cuMemcpy2DUnaligned(&b));             \
        b = g;                                                        \
        stmt;                                                         \
        P("2DAsync " label, cuMemcpy2DAsync(&b, NULL));               \
    } while (0)
    CASE2D("width > srcPitch", b.WidthInBytes = 129);
    CASE2D("width > dstPitch", (b.dstPitch = 64, b.WidthInBytes = 100, b.Height = 2));
    CASE2D("width > pitches h=1", (b.srcPitch = 10, b.dstPitch = 10, b.Height = 1));
    CASE2D("pitches 0 h=1", (b.srcPitch = 0, b.dstPitch = 0, b.Height = 1));
    CASE2D("pitches 0 h=2", (b.srcPitch = 0, b.dstPitch = 0, b.Height = 2));
    CASE2D("srcPitch 0 h=2", (b.srcPitch = 0, b.Height = 2));
    CASE2D("width 0", b.WidthInBytes = 0);
    CASE2D("height 0", b.Height = 0);
    CASE2D("src type 0", b.srcMemoryType = (CUmemorytype)0);
    CASE2D("dst type 0", b.dstMemoryType = (CUmemorytype)0);
    CASE2D("src type 5", b.srcMemoryType = (CUmemorytype)5);
    CASE2D("src ARRAY null", b.srcMemoryType = CU_MEMORYTYPE_ARRAY);
    CASE2D("dst ARRAY null", b.dstMemoryType = CU_MEMORYTYPE_ARRAY);
    CASE2D("src ARRAY bogus", (b.srcMemoryType = CU_MEMORYTYPE_ARRAY, b.srcArray = (CUarray)(uintptr_t)0x1000));
    CASE2D("src host NULL", b.srcHost = NULL);
    CASE2D("dst device 0", b.dstDevice = 0);
    CASE2D("dst device host addr", b.dstDevice = (CUdeviceptr)(uintptr_t)host);
    CASE2D("dst past end", b.dstY = 55);
    CASE2D("dst last row fits", (b.dstY = 53, b.dstXInBytes = 0));
    CASE2D("dst x past end", (b.dstY = 54, b.dstXInBytes = 29));
    CASE2D("dst x fits", (b.dstY = 54, b.dstXInBytes = 28));
    CASE2D("dst last row short of pitch", (b.srcPitch = b.dstPitch = 200, b.dstY = 31));
    CASE2D("dst last row past end", (b.srcPitch = b.dstPitch = 200, b.dstY = 31, b.dstXInBytes = 93));
    CASE2D("src UNIFIED host", (b.srcMemoryType = CU_MEMORYTYPE_UNIFIED, b.srcDevice = (CUdeviceptr)(uintptr_t)host));
    CASE2D("dst UNIFIED dev", (b.dstMemoryType = CU_MEMORYTYPE_UNIFIED));
    CASE2D("src pitch 1<<31", (b.srcPitch = (size_t)1 << 31, b.Height = 1));
    CASE2D("dst pitch 1<<31", (b.dstPitch = (size_t)1 << 31, b.Height = 1));
    CASE2D("dst pitch 2^31-1", (b.dstPitch = ((size_t)1 << 31) - 1, b.Height = 1));
    CASE2D("width 1<<31 h=1", (b.WidthInBytes = (size_t)1 << 31, b.srcPitch = b.dstPitch = (size_t)1 << 31, b.Height = 1));
    CASE2D("src odd addr", b.srcXInBytes = 1);
    CASE2D("dst odd addr", b.dstXInBytes = 1);
    CASE2D("odd pitches", (b.srcPitch = 101, b.dstPitch = 103));
    CASE2D("dev->dev", (b.srcMemoryType = CU_MEMORYTYPE_DEVICE, b.srcDevice = d, b.dstY = 20, b.Height = 5));
    CASE2D("dev->dev overlap", (b.srcMemoryType = CU_MEMORYTYPE_DEVICE, b.srcDevice = d, b.dstXInBytes = 3));
    CASE2D("host->host", (b.dstMemoryType = CU_MEMORYTYPE_HOST, b.dstHost = host + 4096, b.Height = 3));
    CASE2D("dev->host pageable", (b.srcMemoryType = CU_MEMORYTYPE_DEVICE, b.srcDevice = d,
                                  b.dstMemoryType = CU_MEMORYTYPE_HOST, b.dstHost = host + 2048));
    {
        CUstream bad = (CUstream)(uintptr_t)0x1234;
        b = g;
        P("2DAsync bogus stream", cuMemcpy2DAsync(&b, bad));
    }
    cuCtxSynchronize();

    /* 3D copies. */
    {
        enum { W = 13, H = 5, D = 3, SP = 17, SH = 7, DP = 19, DH = 6 };
        unsigned char src[SP * SH * (D + 2)], back[DP * DH * (D + 2)];
        fill_pattern(src, sizeof src, 0x33);
        memset(back, 0xee, sizeof back);
        CUdeviceptr vol = 0;
        cuMemAlloc(&vol, 32 * 9 * 6);
        CUDA_MEMCPY3D u = c3d();
        u.srcMemoryType = CU_MEMORYTYPE_HOST;
        u.srcHost = src;
        u.srcPitch = SP;
        u.srcHeight = SH;
        u.srcXInBytes = 2;
        u.srcY = 1;
        u.srcZ = 1;
        u.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        u.dstDevice = vol;
        u.dstPitch = 32;
        u.dstHeight = 9;
        u.dstXInBytes = 4;
        u.dstY = 2;
        u.dstZ = 1;
        u.WidthInBytes = W;
        u.Height = H;
        u.Depth = D;
        P("3D HtoD", cuMemcpy3D(&u));
        CUDA_MEMCPY3D dn = c3d();
        dn.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        dn.srcDevice = vol;
        dn.srcPitch = 32;
        dn.srcHeight = 9;
        dn.srcXInBytes = 4;
        dn.srcY = 2;
        dn.srcZ = 1;
        dn.dstMemoryType = CU_MEMORYTYPE_HOST;
        dn.dstHost = back;
        dn.dstPitch = DP;
        dn.dstHeight = DH;
        dn.dstXInBytes = 1;
        dn.dstY = 0;
        dn.dstZ = 1;
        dn.WidthInBytes = W;
        dn.Height = H;
        dn.Depth = D;
        P("3D DtoH", cuMemcpy3D(&dn));
        int ok = 1;
        for (int z = 0; z < D + 2; ++z)
            for (int y = 0; y < DH; ++y)
                for (int x = 0; x < DP; ++x) {
                    int in = z >= 1 && z < 1 + D && y < H && x >= 1 && x < 1 + W;
                    unsigned char want =
                        in ? src[(size_t)(z - 1 + 1) * SP * SH + (size_t)(y + 1) * SP + (size_t)(x - 1 + 2)] : 0xee;
                    if (back[(size_t)z * DP * DH + (size_t)y * DP + (size_t)x] != want) ok = 0;
                }
        printf("%-48s => %d\n", "3D roundtrip data", ok);
        CUDA_MEMCPY3D e;
#define CASE3D(label, stmt)                                     \
    do {                                                        \
        e = u;                                                  \
        stmt;                                                   \
        P("3D " label, cuMemcpy3D(&e));                         \
        e = u;                                                  \
        stmt;                                                   \
        P("3DAsync " label, cuMemcpy3DAsync(&e, NULL));         \
    } while (0)
        P("3D NULL", cuMemcpy3D(NULL));
        P("3DAsync NULL", cuMemcpy3DAsync(NULL, NULL));
        CASE3D("good", (void)0);
        CASE3D("reserved0", e.reserved0 = (void*)1);
        CASE3D("reserved1", e.reserved1 = (void*)1);
        CASE3D("srcLOD 1", e.srcLOD = 1);
        CASE3D("dstLOD 1", e.dstLOD = 1);
        CASE3D("depth 0", e.Depth = 0);
        CASE3D("height 0", e.Height = 0);
        CASE3D("width 0", e.WidthInBytes = 0);
        CASE3D("srcHeight < Height", e.srcHeight = 4);
        CASE3D("dstHeight < Height", e.dstHeight = 4);
        CASE3D("srcHeight 0 depth 1", (e.srcHeight = 0, e.Depth = 1, e.srcZ = 0));
        CASE3D("srcHeight 0 depth 2", (e.srcHeight = 0, e.Depth = 2));
        CASE3D("dstHeight 0 depth 1", (e.dstHeight = 0, e.Depth = 1, e.dstZ = 0));
        CASE3D("srcHeight < Height depth 1", (e.srcHeight = 2, e.Depth = 1));
        CASE3D("width > srcPitch", e.WidthInBytes = 18);
        CASE3D("width > dstPitch", (e.dstPitch = 12));
        CASE3D("dst past end z", e.dstZ = 4);
        CASE3D("dst fits z", (e.dstZ = 3, e.dstY = 0));
        CASE3D("src ARRAY", e.srcMemoryType = CU_MEMORYTYPE_ARRAY);
        CASE3D("dst ARRAY", e.dstMemoryType = CU_MEMORYTYPE_ARRAY);
        CASE3D("src type 0", e.srcMemoryType = (CUmemorytype)0);
        CASE3D("src host NULL", e.srcHost = NULL);
        CASE3D("dst device 0", e.dstDevice = 0);
        CASE3D("dev->dev", (e.srcMemoryType = CU_MEMORYTYPE_DEVICE, e.srcDevice = vol, e.srcPitch = 32,
                            e.srcHeight = 9, e.dstZ = 3, e.dstY = 0, e.Depth = 2, e.srcZ = 0));
        CASE3D("host->host", (e.dstMemoryType = CU_MEMORYTYPE_HOST, e.dstHost = back, e.dstPitch = DP,
                              e.dstHeight = DH, e.dstXInBytes = 1, e.dstY = 0, e.dstZ = 1));
        cuCtxSynchronize();
        cuMemFree(vol);
    }

    /* cuMemcpyPeer inside one device. */
    {
        CUdeviceptr a = 0, q = 0;
        cuMemAlloc(&a, 4096);
        cuMemAlloc(&q, 4096);
        cuMemcpyHtoD(a, host, 4096);
        CUcontext c2;
        cuCtxCreate(&c2, NULL, 0, 0);
        CUdeviceptr r2 = 0;
        cuMemAlloc(&r2, 4096);
        cuCtxPopCurrent(NULL);
        P("cuMemcpyPeer same ctx", cuMemcpyPeer(q, c, a, c, 4096));
        unsigned char out[4096];
        cuMemcpyDtoH(out, q, 4096);
        printf("%-48s => %d\n", "cuMemcpyPeer data", memcmp(out, host, 4096) == 0);
        P("cuMemcpyPeer other ctx", cuMemcpyPeer(r2, c2, a, c, 4096));
        cuCtxPushCurrent(c2);
        memset(out, 0, sizeof out);
        cuMemcpyDtoH(out, r2, 4096);
        cuCtxPopCurrent(NULL);
        printf("%-48s => %d\n", "cuMemcpyPeer other ctx data", memcmp(out, host, 4096) == 0);
        P("cuMemcpyPeer count 0", cuMemcpyPeer(q, c, a, c, 0));
        P("cuMemcpyPeer past end", cuMemcpyPeer(q, c, a, c, 4097));
        P("cuMemcpyPeer NULL dst ctx", cuMemcpyPeer(q, NULL, a, c, 16));
        P("cuMemcpyPeer NULL src ctx", cuMemcpyPeer(q, c, a, NULL, 16));
        P("cuMemcpyPeer bogus ctx", cuMemcpyPeer(q, (CUcontext)(uintptr_t)0x1000, a, c, 16));
        P("cuMemcpyPeer host dst", cuMemcpyPeer((CUdeviceptr)(uintptr_t)host, c, a, c, 16));
        P("cuMemcpyPeer dst 0", cuMemcpyPeer(0, c, a, c, 16));
        P("cuMemcpyPeer wrong ctx for ptr", cuMemcpyPeer(q, c2, a, c, 16));
        P("cuMemcpyPeerAsync", cuMemcpyPeerAsync(q, c, a, c, 4096, NULL));
        P("cuMemcpyPeerAsync other ctx", cuMemcpyPeerAsync(r2, c2, a, c, 4096, NULL));
        P("cuMemcpyPeerAsync bogus stream", cuMemcpyPeerAsync(q, c, a, c, 16, (CUstream)(uintptr_t)0x1234));
        cuCtxSynchronize();
        CUDA_MEMCPY3D_PEER pe;
        memset(&pe, 0, sizeof pe);
        pe.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        pe.srcDevice = a;
        pe.srcContext = c;
        pe.srcPitch = 64;
        pe.srcHeight = 8;
        pe.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        pe.dstDevice = r2;
        pe.dstContext = c2;
        pe.dstPitch = 64;
        pe.dstHeight = 8;
        pe.WidthInBytes = 64;
        pe.Height = 8;
        pe.Depth = 2;
        P("cuMemcpy3DPeer", cuMemcpy3DPeer(&pe));
        P("cuMemcpy3DPeerAsync", cuMemcpy3DPeerAsync(&pe, NULL));
        cuCtxSynchronize();
        cuCtxDestroy(c2);
        cuMemFree(a);
        cuMemFree(q);
    }

    /* 2D memsets. */
    {
        CUdeviceptr m = 0;
        cuMemAlloc(&m, 4096);
        cuMemsetD8(m, 0x11, 4096);
        P("D2D8 ok", cuMemsetD2D8(m + 3, 101, 0xab, 37, 9));
        P("D2D16 ok", cuMemsetD2D16(m + 2, 102, 0xbeef, 17, 9));
        P("D2D32 ok", cuMemsetD2D32(m + 4, 104, 0xdeadbeef, 9, 9));
        unsigned char out[4096];
        cuMemcpyDtoH(out, m, 4096);
        int ok = 1;
        for (size_t i = 0; i < 4096; ++i) {
            unsigned char want = 0x11;
            size_t o;
            /* the last memset wins: apply in order */
            o = i - 3;
            if (i >= 3 && o / 101 < 9 && o % 101 < 37) want = 0xab;
            o = i - 2;
            if (i >= 2 && o / 102 < 9 && o % 102 < 34) want = (o % 2) ? 0xbe : 0xef;
            o = i - 4;
            if (i >= 4 && o / 104 < 9 && o % 104 < 36) want = (unsigned char)(0xdeadbeefu >> (8 * (o % 4)));
            if (out[i] != want) ok = 0;
        }
        printf("%-48s => %d\n", "D2D data", ok);
        P("D2D8 pitch < width", cuMemsetD2D8(m, 10, 1, 11, 2));
        P("D2D8 pitch < width h=1", cuMemsetD2D8(m, 10, 1, 11, 1));
        P("D2D8 width 0", cuMemsetD2D8(m, 10, 1, 0, 2));
        P("D2D8 height 0", cuMemsetD2D8(m, 10, 1, 5, 0));
        P("D2D8 pitch 0 h=1", cuMemsetD2D8(m, 0, 1, 5, 1));
        P("D2D8 past end", cuMemsetD2D8(m, 100, 1, 100, 41));
        P("D2D8 last row fits", cuMemsetD2D8(m + 96, 100, 1, 100, 40));
        P("D2D8 dst 0", cuMemsetD2D8(0, 100, 1, 10, 2));
        P("D2D8 host", cuMemsetD2D8((CUdeviceptr)(uintptr_t)host, 100, 1, 10, 2));
        P("D2D16 odd dst", cuMemsetD2D16(m + 1, 100, 1, 10, 2));
        P("D2D16 odd pitch", cuMemsetD2D16(m, 101, 1, 10, 2));
        P("D2D16 odd pitch h=1", cuMemsetD2D16(m, 101, 1, 10, 1));
        P("D2D16 pitch < 2*width", cuMemsetD2D16(m, 10, 1, 6, 2));
        P("D2D32 dst+2", cuMemsetD2D32(m + 2, 100, 1, 10, 2));
        P("D2D32 pitch 102", cuMemsetD2D32(m, 102, 1, 10, 2));
        P("D2D32 pitch < 4*width", cuMemsetD2D32(m, 12, 1, 4, 2));
        P("D2D8Async ok", cuMemsetD2D8Async(m, 100, 1, 10, 2, NULL));
        P("D2D16Async ok", cuMemsetD2D16Async(m, 100, 1, 10, 2, NULL));
        P("D2D32Async ok", cuMemsetD2D32Async(m, 100, 1, 10, 2, NULL));
        P("D2D32Async odd", cuMemsetD2D32Async(m + 1, 100, 1, 10, 2, NULL));
        P("D2D8Async bogus stream", cuMemsetD2D8Async(m, 100, 1, 10, 2, (CUstream)(uintptr_t)0x1234));
        P("cuCtxSynchronize", cuCtxSynchronize());
        /* pinned host memory as the destination */
        unsigned char* ph = NULL;
        cuMemAllocHost((void**)&ph, 4096);
        P("D2D8 pinned host", cuMemsetD2D8((CUdeviceptr)(uintptr_t)ph, 100, 7, 10, 2));
        printf("%-48s => %d\n", "D2D8 pinned host data", ph[0] == 7 && ph[109] == 7);
        cuMemFreeHost(ph);
        cuMemFree(m);
    }
    cuMemFree(d);
    cuMemFree(img);
    P("cuCtxDestroy", cuCtxDestroy(c));
}

/* ------------------------------------------------------------------ pools */

static const char* attr_name(int a) {
    switch (a) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: return "REUSE_FOLLOW_EVENT_DEPENDENCIES";
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: return "REUSE_ALLOW_OPPORTUNISTIC";
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: return "REUSE_ALLOW_INTERNAL_DEPENDENCIES";
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: return "RELEASE_THRESHOLD";
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: return "RESERVED_MEM_CURRENT";
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: return "RESERVED_MEM_HIGH";
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: return "USED_MEM_CURRENT";
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: return "USED_MEM_HIGH";
    default: return "?";
    }
}

/* Every attribute of a pool: the int ones as int, the sizes as cuuint64_t. */
static void pool_attrs(const char* what, CUmemoryPool pool) {
    for (int a = 1; a <= 8; ++a) {
        cuuint64_t v = 0x5555;
        CUresult r = cuMemPoolGetAttribute(pool, (CUmemPool_attribute)a, &v);
        if (a <= 3) printf("%s %-36s => %s %d\n", what, attr_name(a), rname(r), (int)(uint32_t)v);
        else printf("%s %-36s => %s %llu\n", what, attr_name(a), rname(r), (unsigned long long)v);
    }
}

static cuuint64_t pool_get(CUmemoryPool pool, int a) {
    cuuint64_t v = 0;
    cuMemPoolGetAttribute(pool, (CUmemPool_attribute)a, &v);
    return v;
}

static void pool_counters(const char* what, CUmemoryPool pool) {
    printf("%-48s => reserved=%llu reserved_high=%llu used=%llu used_high=%llu\n", what,
           (unsigned long long)pool_get(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
           (unsigned long long)pool_get(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH),
           (unsigned long long)pool_get(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT),
           (unsigned long long)pool_get(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH));
}

static CUmemPoolProps device_props(int dev) {
    CUmemPoolProps pr;
    memset(&pr, 0, sizeof pr);
    pr.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    pr.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    pr.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    pr.location.id = dev;
    return pr;
}

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
    "}\n"
    ".visible .entry trap_now()\n"
    "{\n"
    "    trap;\n"
    "    ret;\n"
    "}\n";

static CUfunction spin_fn, trap_fn;

static void load_kernels(void) {
    CUmodule m;
    CUresult r = cuModuleLoadData(&m, kSpinPtx);
    if (r != CUDA_SUCCESS) {
        printf("kernel module => %s (the timing cases below are meaningless)\n", rname(r));
        return;
    }
    cuModuleGetFunction(&spin_fn, m, "spin_ns");
    cuModuleGetFunction(&trap_fn, m, "trap_now");
}

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

static void pools(void) {
    CUcontext c;
    cuCtxCreate(&c, NULL, 0, 0);
    load_kernels();
    int v = -1;
    PV("attr MEMORY_POOLS_SUPPORTED", cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0), "%d", v);
    PV("attr MEMPOOL_SUPPORTED_HANDLE_TYPES",
       cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 0), "%d", v);
    PV("attr HOST_NUMA_MEMORY_POOLS_SUPPORTED",
       cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, 0), "%d", v);
    PV("attr HOST_MEMORY_POOLS_SUPPORTED", cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, 0),
       "%d", v);

    CUmemoryPool def = NULL, cur = NULL;
    PV("cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool(&def, 0), "nonnull=%d", def != NULL);
    P("cuDeviceGetDefaultMemPool(NULL)", cuDeviceGetDefaultMemPool(NULL, 0));
    P("cuDeviceGetDefaultMemPool(dev 99)", cuDeviceGetDefaultMemPool(&cur, 99));
    P("cuDeviceGetDefaultMemPool(dev -1)", cuDeviceGetDefaultMemPool(&cur, -1));
    PV("cuDeviceGetMemPool", cuDeviceGetMemPool(&cur, 0), "is_default=%d", cur == def);
    P("cuDeviceGetMemPool(NULL)", cuDeviceGetMemPool(NULL, 0));
    P("cuDeviceGetMemPool(dev 99)", cuDeviceGetMemPool(&cur, 99));
    pool_attrs("default", def);
    {
        cuuint64_t x = 0;
        P("GetAttribute(attr 0)", cuMemPoolGetAttribute(def, (CUmemPool_attribute)0, &x));
        P("GetAttribute(attr 9)", cuMemPoolGetAttribute(def, (CUmemPool_attribute)9, &x));
        P("GetAttribute(NULL value)", cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, NULL));
        P("GetAttribute(NULL pool)", cuMemPoolGetAttribute(NULL, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &x));
        P("GetAttribute(bogus pool)",
          cuMemPoolGetAttribute((CUmemoryPool)(uintptr_t)0x1000, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &x));
        int iv = 0;
        P("SetAttribute(FOLLOW 0)", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &iv));
        iv = 2;
        P("SetAttribute(FOLLOW 2)", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &iv));
        PV("  FOLLOW now", cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &iv), "%d", iv);
        iv = 1;
        cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &iv);
        x = 12345;
        P("SetAttribute(THRESHOLD 12345)", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &x));
        PV("  THRESHOLD now", cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &x), "%llu",
           (unsigned long long)x);
        x = 0;
        cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &x);
        x = 0;
        P("SetAttribute(RESERVED_CURRENT 0)", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &x));
        P("SetAttribute(USED_CURRENT 0)", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &x));
        P("SetAttribute(RESERVED_HIGH 0)", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &x));
        P("SetAttribute(USED_HIGH 0)", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &x));
        x = 5;
        P("SetAttribute(RESERVED_HIGH 5)", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &x));
        P("SetAttribute(USED_HIGH 5)", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &x));
        P("SetAttribute(attr 9)", cuMemPoolSetAttribute(def, (CUmemPool_attribute)9, &x));
        P("SetAttribute(NULL value)", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, NULL));
        P("SetAttribute(NULL pool)", cuMemPoolSetAttribute(NULL, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &x));
    }

    /* Pool creation. */
    CUmemoryPool pool = NULL, tmp = NULL;
    CUmemPoolProps pr = device_props(0);
    PV("cuMemPoolCreate(device 0)", cuMemPoolCreate(&pool, &pr), "nonnull=%d", pool != NULL);
    pool_attrs("created", pool);
    P("cuMemPoolCreate(NULL pool)", cuMemPoolCreate(NULL, &pr));
    P("cuMemPoolCreate(NULL props)", cuMemPoolCreate(&tmp, NULL));
#define CREATE_CASE(label, stmt)                                            \
    do {                                                                    \
        CUmemPoolProps q = device_props(0);                                 \
        stmt;                                                               \
        tmp = NULL;                                                         \
        CUresult r_ = cuMemPoolCreate(&tmp, &q);                            \
        printf("%-48s => %s\n", "cuMemPoolCreate(" label ")", rname(r_));   \
        if (r_ == CUDA_SUCCESS) cuMemPoolDestroy(tmp);                      \
    } while (0)
    CREATE_CASE("zeroed", memset(&q, 0, sizeof q));
    CREATE_CASE("allocType 0", q.allocType = CU_MEM_ALLOCATION_TYPE_INVALID);
    CREATE_CASE("allocType MANAGED", q.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED);
    CREATE_CASE("allocType 7", q.allocType = (CUmemAllocationType)7);
    CREATE_CASE("handle POSIX_FD", q.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CREATE_CASE("handle FABRIC", q.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC);
    CREATE_CASE("handle WIN32", q.handleTypes = CU_MEM_HANDLE_TYPE_WIN32);
    CREATE_CASE("handle 0x40", q.handleTypes = (CUmemAllocationHandleType)0x40);
    CREATE_CASE("location NONE", q.location.type = CU_MEM_LOCATION_TYPE_NONE);
    CREATE_CASE("location dev 99", q.location.id = 99);
    CREATE_CASE("location dev -1", q.location.id = -1);
    CREATE_CASE("location HOST", (q.location.type = CU_MEM_LOCATION_TYPE_HOST, q.location.id = 0));
    CREATE_CASE("location HOST_NUMA 0", (q.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA, q.location.id = 0));
    CREATE_CASE("location type 9", q.location.type = (CUmemLocationType)9);
    CREATE_CASE("maxSize 1 MiB", q.maxSize = 1 << 20);
    CREATE_CASE("maxSize 3", q.maxSize = 3);
    CREATE_CASE("usage 1", q.usage = 1);
    CREATE_CASE("reserved[0] 1", q.reserved[0] = 1);
    CREATE_CASE("win32 attrs set", q.win32SecurityAttributes = (void*)&q);

    /* Access. */
    {
        CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
        CUmemAccess_flags f = (CUmemAccess_flags)77;
        PV("cuMemPoolGetAccess(dev 0)", cuMemPoolGetAccess(&f, pool, &loc), "%d", (int)f);
        PV("cuMemPoolGetAccess(default, dev 0)", cuMemPoolGetAccess(&f, def, &loc), "%d", (int)f);
        CUmemLocation host = {CU_MEM_LOCATION_TYPE_HOST, 0};
        f = (CUmemAccess_flags)77;
        PV("cuMemPoolGetAccess(host)", cuMemPoolGetAccess(&f, pool, &host), "%d", (int)f);
        CUmemLocation d99 = {CU_MEM_LOCATION_TYPE_DEVICE, 99};
        P("cuMemPoolGetAccess(dev 99)", cuMemPoolGetAccess(&f, pool, &d99));
        P("cuMemPoolGetAccess(NULL flags)", cuMemPoolGetAccess(NULL, pool, &loc));
        P("cuMemPoolGetAccess(NULL loc)", cuMemPoolGetAccess(&f, pool, NULL));
        CUmemAccessDesc ad = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
        P("cuMemPoolSetAccess(dev 0 RW)", cuMemPoolSetAccess(pool, &ad, 1));
        ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
        P("cuMemPoolSetAccess(dev 0 READ)", cuMemPoolSetAccess(pool, &ad, 1));
        ad.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
        P("cuMemPoolSetAccess(dev 0 NONE)", cuMemPoolSetAccess(pool, &ad, 1));
        ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        P("cuMemPoolSetAccess(count 0)", cuMemPoolSetAccess(pool, &ad, 0));
        P("cuMemPoolSetAccess(NULL map)", cuMemPoolSetAccess(pool, NULL, 1));
        ad.location.id = 99;
        P("cuMemPoolSetAccess(dev 99)", cuMemPoolSetAccess(pool, &ad, 1));
    }

    /* CUDA 13's location-based pool getters. */
    {
        CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
        CUmemoryPool x = NULL;
        PV("cuMemGetDefaultMemPool(dev 0)", cuMemGetDefaultMemPool(&x, &loc, CU_MEM_ALLOCATION_TYPE_PINNED),
           "is_default=%d", x == def);
        PV("cuMemGetMemPool(dev 0)", cuMemGetMemPool(&x, &loc, CU_MEM_ALLOCATION_TYPE_PINNED), "is_default=%d",
           x == def);
        P("cuMemGetDefaultMemPool(MANAGED)", cuMemGetDefaultMemPool(&x, &loc, CU_MEM_ALLOCATION_TYPE_MANAGED));
        CUmemLocation host = {CU_MEM_LOCATION_TYPE_HOST, 0};
        P("cuMemGetDefaultMemPool(host)", cuMemGetDefaultMemPool(&x, &host, CU_MEM_ALLOCATION_TYPE_PINNED));
        P("cuMemGetDefaultMemPool(NULL loc)", cuMemGetDefaultMemPool(&x, NULL, CU_MEM_ALLOCATION_TYPE_PINNED));
        P("cuMemSetMemPool(dev 0, pool)", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, pool));
        PV("cuDeviceGetMemPool after", cuDeviceGetMemPool(&x, 0), "is_pool=%d", x == pool);
        P("cuMemSetMemPool(dev 0, default)", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, def));
    }

    /* Async allocation: arguments. */
    CUstream s1, s2;
    cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
    cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
    CUdeviceptr p = 0, q = 0;
    P("cuMemAllocAsync(size 0)", cuMemAllocAsync(&p, 0, s1));
    P("cuMemAllocAsync(NULL)", cuMemAllocAsync(NULL, 16, s1));
    P("cuMemAllocAsync(1<<50)", cuMemAllocAsync(&p, (size_t)1 << 50, s1));
    P("cuMemAllocAsync(bogus stream)", cuMemAllocAsync(&p, 16, (CUstream)(uintptr_t)0x1234));
    P("cuMemAllocFromPoolAsync(NULL pool)", cuMemAllocFromPoolAsync(&p, 16, NULL, s1));
    P("cuMemAllocFromPoolAsync(size 0)", cuMemAllocFromPoolAsync(&p, 0, pool, s1));
    P("cuMemAllocFromPoolAsync(NULL)", cuMemAllocFromPoolAsync(NULL, 16, pool, s1));
    P("cuMemFreeAsync(0)", cuMemFreeAsync(0, s1));
    P("cuMemFreeAsync(bogus stream)", cuMemFreeAsync(0, (CUstream)(uintptr_t)0x1234));

    /* Sizes, alignment, counters. */
    pool_counters("default before", def);
    static const size_t sizes[] = {1, 3, 512, 513, 4097, (1 << 20) + 1, (32 << 20) + 5, (100 << 20) + 3};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        p = 0;
        CUresult r = cuMemAllocAsync(&p, sizes[i], s1);
        CUdeviceptr base = 0;
        size_t sz = 0;
        CUresult r2 = cuMemGetAddressRange(&base, &sz, p);
        printf("cuMemAllocAsync(%zu) => %s align256=%d align512=%d align2m=%d range=%s size=%zu\n", sizes[i],
               rname(r), p % 256 == 0, p % 512 == 0, p % (2 << 20) == 0, rname(r2), sz);
        cuStreamSynchronize(s1);
        char label[64];
        snprintf(label, sizeof label, "  counters after %zu", sizes[i]);
        pool_counters(label, def);
        cuMemFreeAsync(p, s1);
        cuStreamSynchronize(s1);
        snprintf(label, sizeof label, "  counters after free+sync %zu", sizes[i]);
        pool_counters(label, def);
    }
    /* Pointer attributes of a pool allocation. */
    cuMemAllocAsync(&p, 1000, s1);
    {
        CUcontext pc = (CUcontext)(uintptr_t)1;
        CUmemoryPool pp = NULL;
        unsigned mt = 0;
        int ord = -5;
        PV("ptr attr CONTEXT", cuPointerGetAttribute(&pc, CU_POINTER_ATTRIBUTE_CONTEXT, p), "is_ctx=%d null=%d",
           pc == c, pc == NULL);
        PV("ptr attr MEMPOOL_HANDLE", cuPointerGetAttribute(&pp, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p),
           "is_default=%d", pp == def);
        PV("ptr attr MEMORY_TYPE", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), "%u", mt);
        PV("ptr attr DEVICE_ORDINAL", cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p), "%d", ord);
        size_t rs = 0;
        PV("ptr attr RANGE_SIZE", cuPointerGetAttribute(&rs, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p), "%zu", rs);
        CUdeviceptr m = 0;
        cuMemAlloc(&m, 100);
        pp = (CUmemoryPool)(uintptr_t)1;
        PV("ptr attr MEMPOOL_HANDLE of cuMemAlloc", cuPointerGetAttribute(&pp, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, m),
           "null=%d", pp == NULL);
        P("cuMemFreeAsync(cuMemAlloc ptr)", cuMemFreeAsync(m, s1));
        cuStreamSynchronize(s1);
        P("cuMemFree(after FreeAsync of cuMemAlloc ptr)", cuMemFree(m));
    }
    P("cuMemFreeAsync(p+1)", cuMemFreeAsync(p + 1, s1));
    P("cuMemFreeAsync(p)", cuMemFreeAsync(p, s1));
    P("cuMemFreeAsync(p) twice", cuMemFreeAsync(p, s1));
    cuStreamSynchronize(s1);
    P("cuMemFreeAsync(p) after sync", cuMemFreeAsync(p, s1));
    cuMemAllocAsync(&p, 1000, s1);
    cuStreamSynchronize(s1);
    P("cuMemFree(async ptr)", cuMemFree(p));
    P("cuMemFreeAsync(after cuMemFree)", cuMemFreeAsync(p, s1));
    cuMemAllocAsync(&p, 1000, s1);
    P("cuMemFree(async ptr, not synced)", cuMemFree(p));
    cuMemAllocAsync(&p, 1000, s1);
    P("cuMemFreeAsync(other stream)", cuMemFreeAsync(p, s2));
    cuMemAllocAsync(&p, 1000, s1);
    P("cuMemFreeAsync(NULL stream)", cuMemFreeAsync(p, NULL));
    cuCtxSynchronize();
    int host = 0;
    P("cuMemFreeAsync(host ptr)", cuMemFreeAsync((CUdeviceptr)(uintptr_t)&host, s1));

    /* Reuse in stream order. */
    {
        int one = 1, zero = 0;
        cuuint64_t big = ~(cuuint64_t)0;
        cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &big);
        CUevent ev;
        cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
        const size_t n = 1 << 20;
        /* same stream, no sync */
        cuMemAllocAsync(&p, n, s1);
        cuMemFreeAsync(p, s1);
        cuMemAllocAsync(&q, n, s1);
        printf("%-48s => same=%d\n", "reuse same stream", p == q);
        cuMemFreeAsync(q, s1);
        cuStreamSynchronize(s1);
        /* other stream while the free is pending behind a kernel */
        cuMemAllocAsync(&p, n, s1);
        spin(s1, 200);
        cuMemFreeAsync(p, s1);
        cuMemAllocAsync(&q, n, s2);
        printf("%-48s => same=%d s1_busy=%d\n", "reuse other stream, free pending", p == q,
               cuStreamQuery(s1) == CUDA_ERROR_NOT_READY);
        cuMemFreeAsync(q, s2);
        cuCtxSynchronize();
        /* other stream after the free completed (opportunistic) */
        cuMemAllocAsync(&p, n, s1);
        cuMemFreeAsync(p, s1);
        cuStreamSynchronize(s1);
        cuMemAllocAsync(&q, n, s2);
        printf("%-48s => same=%d\n", "reuse other stream, free done", p == q);
        cuMemFreeAsync(q, s2);
        cuCtxSynchronize();
        /* opportunistic off */
        cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &zero);
        cuMemAllocAsync(&p, n, s1);
        cuMemFreeAsync(p, s1);
        cuStreamSynchronize(s1);
        cuMemAllocAsync(&q, n, s2);
        printf("%-48s => same=%d\n", "reuse other stream, done, no opportunistic", p == q);
        cuMemFreeAsync(q, s2);
        cuCtxSynchronize();
        /* event dependency, with the free pending */
        cuMemAllocAsync(&p, n, s1);
        spin(s1, 200);
        cuMemFreeAsync(p, s1);
        cuEventRecord(ev, s1);
        cuStreamWaitEvent(s2, ev, 0);
        cuMemAllocAsync(&q, n, s2);
        printf("%-48s => same=%d\n", "reuse other stream after event wait", p == q);
        cuMemFreeAsync(q, s2);
        cuCtxSynchronize();
        /* event dependency, follow-events off */
        cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &zero);
        cuMemAllocAsync(&p, n, s1);
        spin(s1, 200);
        cuMemFreeAsync(p, s1);
        cuEventRecord(ev, s1);
        cuStreamWaitEvent(s2, ev, 0);
        cuMemAllocAsync(&q, n, s2);
        printf("%-48s => same=%d\n", "reuse after event wait, follow off", p == q);
        cuMemFreeAsync(q, s2);
        cuCtxSynchronize();
        cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &one);
        cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &one);
        /* legacy stream and a blocking stream */
        CUstream sb;
        cuStreamCreate(&sb, 0);
        cuMemAllocAsync(&p, n, NULL);
        spin(NULL, 200);
        cuMemFreeAsync(p, NULL);
        cuMemAllocAsync(&q, n, sb);
        printf("%-48s => same=%d\n", "reuse legacy -> blocking stream", p == q);
        cuMemFreeAsync(q, sb);
        cuCtxSynchronize();
        cuStreamDestroy(sb);
        cuEventDestroy(ev);
        cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &zero);
    }

    /* Release threshold and trimming. */
    {
        cuuint64_t zero = 0, big = ~(cuuint64_t)0;
        cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &zero);
        cuMemAllocFromPoolAsync(&p, 64 << 20, pool, s1);
        pool_counters("pool after 64 MiB", pool);
        cuMemFreeAsync(p, s1);
        pool_counters("pool after free (no sync)", pool);
        cuStreamSynchronize(s1);
        pool_counters("pool after sync, threshold 0", pool);
        cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &big);
        cuMemAllocFromPoolAsync(&p, 64 << 20, pool, s1);
        cuMemFreeAsync(p, s1);
        cuStreamSynchronize(s1);
        pool_counters("pool after sync, threshold max", pool);
        cuMemAllocFromPoolAsync(&q, 1 << 20, pool, s1);
        P("cuMemPoolTrimTo(0) with 1 MiB live", cuMemPoolTrimTo(pool, 0));
        pool_counters("pool after trim", pool);
        cuMemFreeAsync(q, s1);
        cuStreamSynchronize(s1);
        P("cuMemPoolTrimTo(0)", cuMemPoolTrimTo(pool, 0));
        pool_counters("pool after trim, all free", pool);
        P("cuMemPoolTrimTo(NULL)", cuMemPoolTrimTo(NULL, 0));
        cuuint64_t x = 0;
        P("SetAttribute(RESERVED_HIGH 0)", cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &x));
        P("SetAttribute(USED_HIGH 0)", cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &x));
        pool_counters("pool after high reset", pool);
        /* The current pool of the device. */
        P("cuDeviceSetMemPool(pool)", cuDeviceSetMemPool(0, pool));
        cuMemAllocAsync(&p, 4096, s1);
        CUmemoryPool pp = NULL;
        cuPointerGetAttribute(&pp, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p);
        printf("%-48s => from_pool=%d\n", "cuMemAllocAsync after cuDeviceSetMemPool", pp == pool);
        cuMemFreeAsync(p, s1);
        P("cuDeviceSetMemPool(NULL)", cuDeviceSetMemPool(0, NULL));
        P("cuDeviceSetMemPool(dev 99)", cuDeviceSetMemPool(99, pool));
        P("cuDeviceSetMemPool(default)", cuDeviceSetMemPool(0, def));
        /* Destroying a pool with an allocation outstanding. */
        cuMemAllocFromPoolAsync(&q, 4096, pool, s1);
        cuStreamSynchronize(s1);
        P("cuMemPoolDestroy(pool, 1 live)", cuMemPoolDestroy(pool));
        P("cuMemFreeAsync(ptr of destroyed pool)", cuMemFreeAsync(q, s1));
        cuStreamSynchronize(s1);
        P("cuMemPoolDestroy(pool) twice", cuMemPoolDestroy(pool));
        P("cuMemPoolDestroy(NULL)", cuMemPoolDestroy(NULL));
        P("cuMemPoolDestroy(default)", cuMemPoolDestroy(def));
        /* A pool that is the device's current one when destroyed. */
        CUmemPoolProps pr2 = device_props(0);
        cuMemPoolCreate(&tmp, &pr2);
        cuDeviceSetMemPool(0, tmp);
        P("cuMemPoolDestroy(current)", cuMemPoolDestroy(tmp));
        PV("cuDeviceGetMemPool after", cuDeviceGetMemPool(&cur, 0), "is_default=%d", cur == def);
    }

    /* Stream-ordered use: data written through an async allocation. */
    {
        unsigned char in[5000], out[5000];
        fill_pattern(in, sizeof in, 9);
        cuMemAllocAsync(&p, 5000, s1);
        cuMemcpyHtoDAsync(p, in, 5000, s1);
        cuMemAllocAsync(&q, 5000, s1);
        cuMemcpyDtoDAsync(q, p, 5000, s1);
        cuMemFreeAsync(p, s1);
        cuMemcpyDtoHAsync(out, q, 5000, s1);
        cuMemFreeAsync(q, s1);
        P("async alloc/copy/free chain", cuStreamSynchronize(s1));
        printf("%-48s => %d\n", "async chain data", memcmp(in, out, 5000) == 0);
    }
    /* Out of memory, and what the pool holds after. */
    {
        size_t fr = 0, to = 0;
        cuMemGetInfo(&fr, &to);
        P("cuMemAllocAsync(free + 1 GiB)", cuMemAllocAsync(&p, fr + ((size_t)1 << 30), s1));
        P("stream after OOM", cuStreamSynchronize(s1));
    }
    cuStreamDestroy(s1);
    cuStreamDestroy(s2);
    /* A pool allocation outliving the context that made it. */
    {
        CUstream s;
        cuStreamCreate(&s, 0);
        cuMemAllocAsync(&p, 4096, s);
        cuStreamSynchronize(s);
        pool_counters("default before ctx destroy", def);
        P("cuCtxDestroy", cuCtxDestroy(c));
        cuCtxCreate(&c, NULL, 0, 0);
        pool_counters("default after ctx destroy", def);
        CUdeviceptr base = 0;
        size_t sz = 0;
        P("range of the old ctx's async ptr", cuMemGetAddressRange(&base, &sz, p));
        P("cuMemFreeAsync(old ctx's ptr)", cuMemFreeAsync(p, NULL));
        P("cuCtxSynchronize", cuCtxSynchronize());
        pool_counters("default after free", def);
    }
    P("cuCtxDestroy", cuCtxDestroy(c));
}

/* ------------------------------------------------------------------ host functions */

static CUcontext probe_ctx;
static CUstream probe_stream;
static CUdeviceptr probe_buf;
static pthread_t main_thread;
static volatile int ran_on_other_thread = -1;
static volatile int nested_ran = 0;

static void CUDA_CB nested(void* data) {
    (void)data;
    nested_ran = 1;
}

typedef struct {
    int order[8];
    int n;
    double t[8];
} order_log;
static order_log olog;
static pthread_mutex_t olog_mutex = PTHREAD_MUTEX_INITIALIZER;

static void CUDA_CB note(void* data) {
    pthread_mutex_lock(&olog_mutex);
    if (olog.n < 8) {
        olog.t[olog.n] = seconds();
        olog.order[olog.n++] = (int)(intptr_t)data;
    }
    pthread_mutex_unlock(&olog_mutex);
}

static CUstream cb_stream_seen;
static CUresult cb_status_seen = (CUresult)-1;
static void CUDA_CB callback(CUstream s, CUresult status, void* data) {
    cb_stream_seen = s;
    cb_status_seen = status;
    note(data);
}

static volatile int gate_open = 0;
static void CUDA_CB wait_gate(void* data) {
    (void)data;
    double t0 = seconds();
    while (!gate_open && seconds() - t0 < 2.0) usleep(1000);
}

static void hostfunc(void) {
    cuCtxCreate(&probe_ctx, NULL, 0, 0);
    load_kernels();
    main_thread = pthread_self();
    cuStreamCreate(&probe_stream, CU_STREAM_NON_BLOCKING);
    cuMemAlloc(&probe_buf, 4096);
    P("cuLaunchHostFunc(NULL fn)", cuLaunchHostFunc(probe_stream, NULL, NULL));
    P("cuLaunchHostFunc(bogus stream)", cuLaunchHostFunc((CUstream)(uintptr_t)0x1234, note, NULL));
    P("cuStreamAddCallback(NULL cb)", cuStreamAddCallback(probe_stream, NULL, NULL, 0));
    P("cuStreamAddCallback(flags 1)", cuStreamAddCallback(probe_stream, callback, NULL, 1));
    P("cuStreamAddCallback(bogus stream)", cuStreamAddCallback((CUstream)(uintptr_t)0x1234, callback, NULL, 0));

    /* Order: after the kernel before it, before the work after it. */
    memset(&olog, 0, sizeof olog);
    double t0 = seconds();
    spin(probe_stream, 100);
    P("cuLaunchHostFunc", cuLaunchHostFunc(probe_stream, note, (void*)1));
    P("cuStreamAddCallback", cuStreamAddCallback(probe_stream, callback, (void*)2, 0));
    P("cuLaunchHostFunc(NULL stream)", cuLaunchHostFunc(NULL, note, (void*)3));
    P("cuStreamSynchronize", cuStreamSynchronize(probe_stream));
    P("cuCtxSynchronize", cuCtxSynchronize());
    printf("%-48s => n=%d order=%d%d%d after_kernel=%d\n", "host function order", olog.n, olog.order[0],
           olog.order[1], olog.order[2], olog.n > 0 && olog.t[0] - t0 > 0.09);
    printf("%-48s => status=%s stream_is_arg=%d\n", "callback arguments", rname(cb_status_seen),
           cb_stream_seen == probe_stream);
    cuStreamAddCallback(NULL, callback, (void*)4, 0);
    cuCtxSynchronize();
    printf("%-48s => null_stream_arg=%d\n", "callback on NULL stream", cb_stream_seen == NULL);

    /* A stream blocked by a host function. */
    gate_open = 0;
    cuLaunchHostFunc(probe_stream, wait_gate, NULL);
    CUevent ev;
    cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
    cuMemsetD8Async(probe_buf, 0x42, 4096, probe_stream);
    cuEventRecord(ev, probe_stream);
    usleep(20000);
    P("cuStreamQuery while host fn blocks", cuStreamQuery(probe_stream));
    P("cuEventQuery while host fn blocks", cuEventQuery(ev));
    gate_open = 1;
    P("cuEventSynchronize", cuEventSynchronize(ev));
    P("cuStreamQuery after", cuStreamQuery(probe_stream));

    /* Another stream waiting on an event behind a host function. */
    {
        CUstream other;
        cuStreamCreate(&other, CU_STREAM_NON_BLOCKING);
        memset(&olog, 0, sizeof olog);
        spin(probe_stream, 50);
        cuLaunchHostFunc(probe_stream, note, (void*)1);
        cuEventRecord(ev, probe_stream);
        cuStreamWaitEvent(other, ev, 0);
        cuLaunchHostFunc(other, note, (void*)2);
        cuCtxSynchronize();
        printf("%-48s => n=%d order=%d%d\n", "cross-stream order via event", olog.n, olog.order[0], olog.order[1]);
        cuStreamDestroy(other);
    }

    /* CUDA calls from inside a host function: section hostcalls. */
    /* Destroying a stream with a host function pending. */
    {
        CUstream s;
        cuStreamCreate(&s, 0);
        memset(&olog, 0, sizeof olog);
        spin(s, 50);
        cuLaunchHostFunc(s, note, (void*)7);
        P("cuStreamDestroy with host fn pending", cuStreamDestroy(s));
        cuCtxSynchronize();
        printf("%-48s => n=%d\n", "host fn of destroyed stream ran", olog.n);
    }
    cuEventDestroy(ev);
    P("cuCtxDestroy", cuCtxDestroy(probe_ctx));
}

/* After a fault: callbacks get the error, host functions (CUDA 10's) are skipped. */
static void hostfault(void) {
    cuCtxCreate(&probe_ctx, NULL, 0, 0);
    load_kernels();
    CUstream s;
    cuStreamCreate(&s, 0);
    memset(&olog, 0, sizeof olog);
    cb_status_seen = (CUresult)-1;
    P("trap launch", cuLaunchKernel(trap_fn, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    CUresult r1 = cuLaunchHostFunc(s, note, (void*)1);
    CUresult r2 = cuStreamAddCallback(s, callback, (void*)2, 0);
    P("cuStreamSynchronize", cuStreamSynchronize(s));
    usleep(200000);
    printf("%-48s => %s %s\n", "enqueue after trap", rname(r1), rname(r2));
    printf("%-48s => n=%d first=%d callback_status=%s\n", "after fault", olog.n, olog.order[0],
           rname(cb_status_seen));
    P("cuLaunchHostFunc after fault seen", cuLaunchHostFunc(s, note, (void*)3));
    P("cuStreamAddCallback after fault seen", cuStreamAddCallback(s, callback, (void*)4, 0));
    usleep(200000);
    printf("%-48s => n=%d\n", "after fault seen", olog.n);
    P("cuCtxDestroy", cuCtxDestroy(probe_ctx));
}

/* ------------------------------------------------------------------ hostcalls */

static int call_index;
static CUresult call_result = (CUresult)-1;
static volatile int call_returned;
static CUstream call_stream;
static CUdeviceptr call_buf;

static void CUDA_CB one_call(void* data) {
    (void)data;
    int i = call_index, v = 0;
    CUdevice d = 0;
    const char* s = NULL;
    CUcontext cc = NULL;
    CUdeviceptr p = 0;
    unsigned char b[16] = {1};
    CUstream st = NULL;
    CUevent ev = NULL;
    void* hp = NULL;
    size_t fr, to;
    unsigned u = 0;
    CUresult r = (CUresult)-1;
    ran_on_other_thread = !pthread_equal(pthread_self(), main_thread);
    switch (i) {
    case 0: r = cuDriverGetVersion(&v); break;
    case 1: r = cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s); break;
    case 2: r = cuDeviceGet(&d, 0); break;
    case 3: r = cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0); break;
    case 4: r = cuCtxGetCurrent(&cc); break;
    case 5: r = cuCtxSetCurrent(probe_ctx); break;
    case 6: r = cuCtxPushCurrent(probe_ctx); break;
    case 7: r = cuCtxGetDevice(&d); break;
    case 8: r = cuMemAlloc(&p, 16); break;
    case 9: r = cuMemcpyHtoD(call_buf, b, 16); break;
    case 10: r = cuMemcpyHtoDAsync(call_buf, b, 16, call_stream); break;
    case 11: r = cuMemsetD8Async(call_buf, 1, 16, call_stream); break;
    case 12: r = cuStreamQuery(call_stream); break;
    case 13: r = cuStreamSynchronize(call_stream); break;
    case 14: r = cuStreamCreate(&st, 0); break;
    case 15: r = cuEventCreate(&ev, 0); break;
    case 16: r = cuCtxSynchronize(); break;
    case 17: r = cuLaunchHostFunc(call_stream, nested, NULL); break;
    case 18: r = cuMemAllocAsync(&p, 16, call_stream); break;
    case 19: r = cuPointerGetAttribute(&u, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, call_buf); break;
    case 20: r = cuMemGetInfo(&fr, &to); break;
    case 21: r = cuStreamGetFlags(call_stream, &u); break;
    case 22: r = cuMemAllocHost(&hp, 16); break;
    case 23: r = cuCtxPushCurrent(probe_ctx) == CUDA_SUCCESS ? cuMemAlloc(&p, 16) : (CUresult)-2; break;
    case 24: r = cuCtxPushCurrent(probe_ctx) == CUDA_SUCCESS ? cuMemcpyHtoDAsync(call_buf, b, 16, call_stream)
                                                             : (CUresult)-2; break;
    case 25: r = cuMemFree(call_buf); break;
    case 26: r = cuMemcpyDtoH(b, call_buf, 16); break;
    case 27: r = cuModuleLoadData(NULL, kSpinPtx); break;
    default: r = (CUresult)-3; break;
    }
    call_result = r;
    call_returned = 1;
}

static const char* const kOneCallName[] = {
    "cuDriverGetVersion", "cuGetErrorName", "cuDeviceGet", "cuDeviceGetAttribute", "cuCtxGetCurrent",
    "cuCtxSetCurrent", "cuCtxPushCurrent", "cuCtxGetDevice", "cuMemAlloc (no ctx)", "cuMemcpyHtoD",
    "cuMemcpyHtoDAsync", "cuMemsetD8Async", "cuStreamQuery", "cuStreamSynchronize (own stream)", "cuStreamCreate",
    "cuEventCreate", "cuCtxSynchronize", "cuLaunchHostFunc", "cuMemAllocAsync", "cuPointerGetAttribute",
    "cuMemGetInfo", "cuStreamGetFlags", "cuMemAllocHost", "push ctx, cuMemAlloc", "push ctx, cuMemcpyHtoDAsync",
    "cuMemFree", "cuMemcpyDtoH", "cuModuleLoadData(NULL)"};

static void hostcalls(void) {
    const int n = (int)(sizeof kOneCallName / sizeof kOneCallName[0]);
    for (int i = 0; i < n; ++i) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(8);
            cuCtxCreate(&probe_ctx, NULL, 0, 0);
            cuStreamCreate(&call_stream, CU_STREAM_NON_BLOCKING);
            cuMemAlloc(&call_buf, 4096);
            call_index = i;
            main_thread = pthread_self();
            cuLaunchHostFunc(call_stream, one_call, NULL);
            CUresult sync = cuStreamSynchronize(call_stream);
            printf("inside: %-40s => %s (then sync %s)\n", kOneCallName[i],
                   call_returned ? rname(call_result) : "NOT RUN", rname(sync));
            if (i == 0) printf("%-48s => %d\n", "ran on another thread", ran_on_other_thread);
            fflush(stdout);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status))
            printf("inside: %-40s => %s\n", kOneCallName[i], WTERMSIG(status) == SIGALRM ? "HANG" : "CRASH");
        fflush(stdout);
    }
}

/* ------------------------------------------------------------------ pitch2 */

static void pitch2(void) {
    CUcontext c;
    cuCtxCreate(&c, NULL, 0, 0);
    unsigned char host[4096], out[4096];
    fill_pattern(host, sizeof host, 3);
    CUdeviceptr d = 0;
    cuMemAlloc(&d, 4096);
    cuMemsetD8(d, 0xee, 4096);
    /* srcPitch 0 with 3 lines of 10: are the source lines packed (pitch =
     * width) or all the first line (pitch 0)? */
    CUDA_MEMCPY2D m;
    memset(&m, 0, sizeof m);
    m.srcMemoryType = CU_MEMORYTYPE_HOST;
    m.srcHost = host;
    m.srcPitch = 0;
    m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    m.dstDevice = d;
    m.dstPitch = 64;
    m.WidthInBytes = 10;
    m.Height = 3;
    P("2D srcPitch 0 h=3", cuMemcpy2D(&m));
    cuMemcpyDtoH(out, d, 4096);
    int packed = 1, repeated = 1;
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 10; ++x) {
            if (out[y * 64 + x] != host[y * 10 + x]) packed = 0;
            if (out[y * 64 + x] != host[x]) repeated = 0;
        }
    printf("%-48s => packed=%d repeated=%d\n", "  source lines", packed, repeated);
    /* dstPitch 0 from device: where do the lines land? */
    cuMemsetD8(d, 0xee, 4096);
    cuMemcpyHtoD(d, host, 4096);
    memset(out, 0x77, sizeof out);
    memset(&m, 0, sizeof m);
    m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    m.srcDevice = d;
    m.srcPitch = 64;
    m.dstMemoryType = CU_MEMORYTYPE_HOST;
    m.dstHost = out;
    m.dstPitch = 0;
    m.WidthInBytes = 10;
    m.Height = 3;
    P("2D dstPitch 0 h=3", cuMemcpy2D(&m));
    packed = 1, repeated = 1;
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 10; ++x)
            if (out[y * 10 + x] != host[y * 64 + x]) packed = 0;
    for (int x = 0; x < 10; ++x)
        if (out[x] != host[2 * 64 + x]) repeated = 0;
    printf("%-48s => packed=%d last_line_wins=%d untouched_after=%d\n", "  destination lines", packed, repeated,
           out[30] == 0x77);
    /* 3-D srcHeight 0 with 2 slices of 2 lines of 8: slice pitch = srcPitch * Height? */
    cuMemsetD8(d, 0xee, 4096);
    CUDA_MEMCPY3D t;
    memset(&t, 0, sizeof t);
    t.srcMemoryType = CU_MEMORYTYPE_HOST;
    t.srcHost = host;
    t.srcPitch = 16;
    t.srcHeight = 0;
    t.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    t.dstDevice = d;
    t.dstPitch = 32;
    t.dstHeight = 4;
    t.WidthInBytes = 8;
    t.Height = 2;
    t.Depth = 2;
    P("3D srcHeight 0 depth 2", cuMemcpy3D(&t));
    cuMemcpyDtoH(out, d, 4096);
    int slice_is_height = 1;
    for (int z = 0; z < 2; ++z)
        for (int y = 0; y < 2; ++y)
            for (int x = 0; x < 8; ++x)
                if (out[z * 128 + y * 32 + x] != host[z * 32 + y * 16 + x]) slice_is_height = 0;
    printf("%-48s => slice_pitch_is_pitch_x_height=%d\n", "  source slices", slice_is_height);
    /* Pitch checks with several lines (4 GiB of pitch would need the memory). */
    memset(&m, 0, sizeof m);
    m.srcMemoryType = CU_MEMORYTYPE_HOST;
    m.srcHost = host;
    m.srcPitch = 100;
    m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    m.dstDevice = d;
    m.dstPitch = 100;
    m.WidthInBytes = 101;
    m.Height = 2;
    P("2D width > pitch h=2", cuMemcpy2D(&m));
    m.WidthInBytes = 0;
    m.srcMemoryType = (CUmemorytype)0;
    P("2D width 0, bad type", cuMemcpy2D(&m));
    m.WidthInBytes = 10;
    m.Height = 0;
    P("2D height 0, bad type", cuMemcpy2D(&m));
    /* 2-D fills with pitch 0 and several lines. */
    P("D2D8 pitch 0 h=2", cuMemsetD2D8(d, 0, 1, 5, 2));
    P("D2D8 pitch 4 h=2 w=5", cuMemsetD2D8(d, 4, 1, 5, 2));
    cuMemFree(d);
    P("cuCtxDestroy", cuCtxDestroy(c));
}

/* ------------------------------------------------------------------ pools2 */

static void pools2(void) {
    CUcontext c;
    cuCtxCreate(&c, NULL, 0, 0);
    load_kernels();
    CUmemoryPool def = NULL;
    cuDeviceGetDefaultMemPool(&def, 0);
    CUstream s1, s2;
    cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
    cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
    CUdeviceptr p = 77, q = 0;
    PV("cuMemAllocAsync(size 0)", cuMemAllocAsync(&p, 0, s1), "null=%d", p == 0);
    P("cuMemFreeAsync(that)", cuMemFreeAsync(p, s1));
    /* Opportunistic reuse seen without a synchronising call. */
    cuuint64_t big = ~(cuuint64_t)0;
    int zero = 0, one = 1;
    cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &big);
    for (int opp = 1; opp >= 0; --opp) {
        cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, opp ? &one : &zero);
        cuMemAllocAsync(&p, 1 << 20, s1);
        spin(s1, 100);
        cuMemFreeAsync(p, s1);
        while (cuStreamQuery(s1) == CUDA_ERROR_NOT_READY) usleep(1000);
        cuMemAllocAsync(&q, 1 << 20, s2);
        printf("%-48s => opportunistic=%d same=%d\n", "reuse after polling, no sync", opp, p == q);
        cuMemFreeAsync(q, s2);
        cuCtxSynchronize();
    }
    cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &one);
    /* Which ranges get reused: a smaller request after a larger free. */
    cuMemAllocAsync(&p, 3 << 20, s1);
    cuMemFreeAsync(p, s1);
    cuMemAllocAsync(&q, 1 << 20, s1);
    printf("%-48s => same=%d inside=%d\n", "1 MiB after a 3 MiB free, same stream", p == q, q >= p && q < p + (3 << 20));
    cuMemFreeAsync(q, s1);
    cuStreamSynchronize(s1);
    cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &zero);
    cuStreamSynchronize(s1);
    /* cuMemFree of a pool allocation with work still running on it. */
    cuMemAllocAsync(&p, 4096, s1);
    spin(s1, 100);
    double t0 = seconds();
    P("cuMemFree(async ptr, kernel running)", cuMemFree(p));
    printf("%-48s => waited=%d\n", "  cuMemFree waited for the kernel", seconds() - t0 > 0.05);
    /* A pool allocation outliving the context that made it. */
    CUcontext c2;
    cuCtxCreate(&c2, NULL, 0, 0);
    CUstream s;
    cuStreamCreate(&s, 0);
    unsigned char in[4096], out[4096];
    fill_pattern(in, sizeof in, 5);
    cuMemAllocAsync(&p, 4096, s);
    cuMemcpyHtoDAsync(p, in, 4096, s);
    cuStreamSynchronize(s);
    cuuint64_t used = 0;
    cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used);
    printf("%-48s => used=%llu\n", "default before ctx destroy", (unsigned long long)used);
    P("cuCtxDestroy(allocating ctx)", cuCtxDestroy(c2));
    cuCtxSetCurrent(c);
    cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used);
    printf("%-48s => used=%llu\n", "default after ctx destroy", (unsigned long long)used);
    CUdeviceptr base = 0;
    size_t sz = 0;
    PV("range of the old ctx's async ptr", cuMemGetAddressRange(&base, &sz, p), "size=%zu", sz);
    memset(out, 0, sizeof out);
    PV("cuMemcpyDtoH(old ctx's async ptr)", cuMemcpyDtoH(out, p, 4096), "data=%d", memcmp(in, out, 4096) == 0);
    P("cuMemFreeAsync(old ctx's ptr)", cuMemFreeAsync(p, NULL));
    P("cuCtxSynchronize", cuCtxSynchronize());
    cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used);
    printf("%-48s => used=%llu\n", "default after free", (unsigned long long)used);
    /* Out of memory and the stream after it. */
    size_t fr = 0, to = 0;
    cuMemGetInfo(&fr, &to);
    P("cuMemAllocAsync(free + 1 GiB)", cuMemAllocAsync(&p, fr + ((size_t)1 << 30), s1));
    P("stream after OOM", cuStreamSynchronize(s1));
    P("cuCtxDestroy", cuCtxDestroy(c));
}

int main(int argc, char** argv) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char* section = argc > 1 ? argv[1] : "pitch";
    if (cuInit(0) != CUDA_SUCCESS) {
        printf("cuInit failed\n");
        return 1;
    }
    if (strcmp(section, "pitch") == 0) pitch();
    else if (strcmp(section, "pools") == 0) pools();
    else if (strcmp(section, "hostfunc") == 0) hostfunc();
    else if (strcmp(section, "hostfault") == 0) hostfault();
    else if (strcmp(section, "hostcalls") == 0) hostcalls();
    else if (strcmp(section, "pitch2") == 0) pitch2();
    else if (strcmp(section, "pools2") == 0) pools2();
    else {
        printf("unknown section %s (pitch, pools, hostfunc, hostfault, hostcalls, pitch2, pools2)\n", section);
        return 2;
    }
    return 0;
}
