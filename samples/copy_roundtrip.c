#define _POSIX_C_SOURCE 200809L
/*
 * copy_roundtrip: 1 GiB of random data host -> device -> device -> host
 * through pinned and pageable buffers, checked byte for byte.
 * Usage: copy_roundtrip [MiB]   (default 1024)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"

static void fill_random(uint64_t* p, size_t words, uint64_t seed) {
    uint64_t x = seed;
    for (size_t i = 0; i < words; ++i) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        p[i] = x * 0x2545F4914F6CDD1Dull;
    }
}

static int verify(const char* what, const void* a, const void* b, size_t n) {
    if (memcmp(a, b, n) == 0) return 1;
    const unsigned char *x = a, *y = b;
    size_t i = 0;
    while (x[i] == y[i]) ++i;
    printf("%s: MISMATCH at byte %zu (%02x != %02x)\n", what, i, x[i], y[i]);
    return 0;
}

int main(int argc, char** argv) {
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    size_t bytes = mib << 20;
    CUcontext ctx;
    CUdeviceptr d1, d2;
    CHECK(cuInit(0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, 0));
    CHECK(cuMemAlloc(&d1, bytes));
    CHECK(cuMemAlloc(&d2, bytes));

    uint64_t* src = malloc(bytes);
    uint64_t* dst = malloc(bytes);
    void* pinned = NULL;
    CHECK(cuMemAllocHost(&pinned, bytes));
    if (!src || !dst) return 1;
    fill_random(src, bytes / 8, 0x9E3779B97F4A7C15ull);
    memset(dst, 0, bytes);
    int ok = 1;

    double t0 = now();
    CHECK(cuMemcpyHtoD(d1, src, bytes));
    double t1 = now();
    CHECK(cuMemcpyDtoD(d2, d1, bytes));
    CHECK(cuCtxSynchronize());
    double t2 = now();
    CHECK(cuMemcpyDtoH(dst, d2, bytes));
    double t3 = now();
    ok &= verify("pageable round trip", src, dst, bytes);
    printf("pageable: H2D %.2f GB/s, D2D %.2f GB/s, D2H %.2f GB/s\n", bytes / (t1 - t0) / 1e9,
           2.0 * bytes / (t2 - t1) / 1e9, bytes / (t3 - t2) / 1e9);

    memcpy(pinned, src, bytes);
    CHECK(cuMemsetD8(d1, 0, bytes));
    t0 = now();
    CHECK(cuMemcpyHtoD(d1, pinned, bytes));
    t1 = now();
    memset(pinned, 0, bytes);
    CHECK(cuMemcpyDtoH(pinned, d1, bytes));
    t2 = now();
    ok &= verify("pinned round trip", src, pinned, bytes);
    printf("pinned:   H2D %.2f GB/s, D2H %.2f GB/s\n", bytes / (t1 - t0) / 1e9, bytes / (t2 - t1) / 1e9);

    CHECK(cuMemFreeHost(pinned));
    CHECK(cuMemFree(d1));
    CHECK(cuMemFree(d2));
    CHECK(cuCtxDestroy(ctx));
    free(src);
    free(dst);
    printf("copy_roundtrip %zu MiB: %s\n", mib, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
