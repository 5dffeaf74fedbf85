/*
 * bench_pinned: pinned host <-> device copy bandwidth, many repetitions with
 * the two directions interleaved, median and best. Run the libcuda and the
 * libnvlite build alternately (several rounds) to see a gap of 1-2 %.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

int main(int argc, char** argv) {
    const char* tag = argc > 1 ? argv[1] : "lib";
    size_t mib = argc > 2 ? (size_t)atoi(argv[2]) : 256;
    size_t bytes = mib << 20;
    CHECK(cuInit(0));
    CUcontext ctx;
    CHECK(cuCtxCreate(&ctx, NULL, 0, 0));
    CUdeviceptr dev;
    CHECK(cuMemAlloc(&dev, bytes));
    void* host;
    CHECK(cuMemAllocHost(&host, bytes));
    memset(host, 0x5a, bytes);
    enum { N = 15 };
    double h2d[N], d2h[N];
    for (int rep = -2; rep < N; ++rep) {
        double a = now();
        CHECK(cuMemcpyHtoD(dev, host, bytes));
        CHECK(cuCtxSynchronize());
        double b = now();
        CHECK(cuMemcpyDtoH(host, dev, bytes));
        CHECK(cuCtxSynchronize());
        double c = now();
        if (rep >= 0) {
            h2d[rep] = (double)bytes / (b - a) / 1e9;
            d2h[rep] = (double)bytes / (c - b) / 1e9;
        }
    }
    double bh = 0, bd = 0;
    for (int i = 0; i < N; ++i) {
        if (h2d[i] > bh) bh = h2d[i];
        if (d2h[i] > bd) bd = d2h[i];
    }
    printf("%s pinned %zu MiB: H2D median %.2f best %.2f GB/s, D2H median %.2f best %.2f GB/s\n", tag, mib,
           median(h2d, N), bh, median(d2h, N), bd);
    CHECK(cuMemFreeHost(host));
    CHECK(cuMemFree(dev));
    CHECK(cuCtxDestroy(ctx));
    return 0;
}
