/*
 * bench_basic: start-up, allocation, small-copy latency and copy bandwidth
 * of whichever driver-API library it is linked with (libcuda or libnvlite).
 * Build it twice and run both on the same machine; compare the lines.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

int main(int argc, char** argv) {
    const char* tag = argc > 1 ? argv[1] : "lib";
    double t0 = now();
    CHECK(cuInit(0));
    CUcontext ctx;
    CHECK(cuCtxCreate(&ctx, NULL, 0, 0));
    double t1 = now();
    printf("%s init: cuInit+cuCtxCreate %.2f ms\n", tag, (t1 - t0) * 1e3);

    enum { N = 200 };
    double samples[N];
    CUdeviceptr d;
    for (int i = 0; i < N; ++i) {
        double a = now();
        CHECK(cuMemAlloc(&d, 1 << 20));
        CHECK(cuMemFree(d));
        samples[i] = now() - a;
    }
    printf("%s alloc+free 1 MiB: %.2f us (median of %d)\n", tag, median(samples, N) * 1e6, N);

    CHECK(cuMemAlloc(&d, 4096));
    uint32_t in = 0x12345678, out = 0;
    for (int i = 0; i < N; ++i) {
        in = (uint32_t)i * 2654435761u;
        double a = now();
        CHECK(cuMemcpyHtoD(d, &in, 4));
        CHECK(cuMemcpyDtoH(&out, d, 4));
        samples[i] = now() - a;
        if (out != in) {
            printf("%s small round trip: WRONG DATA\n", tag);
            return 1;
        }
    }
    printf("%s 4-byte H2D+D2H round trip: %.2f us (median of %d)\n", tag, median(samples, N) * 1e6, N);
    CHECK(cuMemFree(d));

    size_t bytes = (size_t)256 << 20;
    CUdeviceptr big;
    CHECK(cuMemAlloc(&big, bytes));
    void* pinned;
    CHECK(cuMemAllocHost(&pinned, bytes));
    void* pageable = malloc(bytes);
    memset(pinned, 1, bytes);
    memset(pageable, 2, bytes);
    struct {
        const char* name;
        int h2d;
        void* host;
    } cases[] = {{"pinned H2D", 1, pinned}, {"pinned D2H", 0, pinned}, {"pageable H2D", 1, pageable}, {"pageable D2H", 0, pageable}};
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        double best = 1e9;
        for (int rep = 0; rep < 5; ++rep) {
            double a = now();
            if (cases[c].h2d) CHECK(cuMemcpyHtoD(big, cases[c].host, bytes));
            else CHECK(cuMemcpyDtoH(cases[c].host, big, bytes));
            CHECK(cuCtxSynchronize());
            double t = now() - a;
            if (t < best) best = t;
        }
        printf("%s %s 256 MiB: %.2f GB/s\n", tag, cases[c].name, (double)bytes / best / 1e9);
    }
    CHECK(cuMemFreeHost(pinned));
    CHECK(cuMemFree(big));
    free(pageable);
    CHECK(cuCtxDestroy(ctx));
    return 0;
}
