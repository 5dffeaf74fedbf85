/*
 * vector_add: compiles a CUDA C kernel at run time with NVRTC, loads the
 * cubin with cuModuleLoadData and adds two vectors of random floats on the
 * GPU, checking every element on the host.
 * Usage: vector_add [elements]   (default 16M)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_nvrtc.h"

static const char* kSource =
    "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

int main(int argc, char** argv) {
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 16u << 20;
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));

    char* cubin = compile_cubin(kSource, dev);
    CUmodule mod;
    CUfunction fn;
    CHECK(cuModuleLoadData(&mod, cubin));
    CHECK(cuModuleGetFunction(&fn, mod, "vector_add"));

    size_t bytes = (size_t)n * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (unsigned i = 0; i < n; ++i) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        a[i] = (float)((x * 0x2545F4914F6CDD1Dull) >> 40) / 1024.0f;
        b[i] = (float)(x >> 44) / 512.0f - 1000.0f;
    }
    CUdeviceptr da, db, dc;
    CHECK(cuMemAlloc(&da, bytes));
    CHECK(cuMemAlloc(&db, bytes));
    CHECK(cuMemAlloc(&dc, bytes));
    CHECK(cuMemcpyHtoD(da, a, bytes));
    CHECK(cuMemcpyHtoD(db, b, bytes));
    CHECK(cuMemsetD32(dc, 0x7fc00000, n)); /* NaN: an element the kernel skips shows */

    unsigned block = 256, grid = (n + block - 1) / block;
    void* args[] = {&da, &db, &dc, &n};
    CHECK(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL));
    CHECK(cuMemcpyDtoH(c, dc, bytes));

    size_t wrong = 0;
    for (unsigned i = 0; i < n; ++i)
        if (c[i] != a[i] + b[i]) {
            if (wrong < 5) printf("c[%u] = %g, expected %g\n", i, c[i], a[i] + b[i]);
            ++wrong;
        }
    printf("vector_add %u elements: %s (%zu wrong)\n", n, wrong ? "FAIL" : "PASS", wrong);
    CHECK(cuMemFree(da));
    CHECK(cuMemFree(db));
    CHECK(cuMemFree(dc));
    CHECK(cuModuleUnload(mod));
    CHECK(cuCtxDestroy(ctx));
    free(cubin);
    free(a);
    free(b);
    free(c);
    return wrong ? 1 : 0;
}
