/*
 * matmul: C = A x B for N x N single-precision matrices with a tiled
 * shared-memory kernel compiled by NVRTC; checks every element against a
 * double-precision product on the host.
 * Usage: matmul [N]   (default 1024, a multiple of 16)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sample_nvrtc.h"

static const char* kSource =
    "#define TILE 16\n"
    "extern \"C\" __global__ void matmul(const float* A, const float* B, float* C, int n) {\n"
    "    __shared__ float a[TILE][TILE], b[TILE][TILE];\n"
    "    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;\n"
    "    float sum = 0.0f;\n"
    "    for (int t = 0; t < n; t += TILE) {\n"
    "        a[threadIdx.y][threadIdx.x] = A[row * n + t + threadIdx.x];\n"
    "        b[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * n + col];\n"
    "        __syncthreads();\n"
    "        for (int k = 0; k < TILE; ++k) sum += a[threadIdx.y][k] * b[k][threadIdx.x];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    C[row * n + col] = sum;\n"
    "}\n";

int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    if (n <= 0 || n % 16) {
        fprintf(stderr, "N must be a positive multiple of 16\n");
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));

    char* cubin = compile_cubin(kSource, dev);

    CUmodule mod;
    CUfunction fn;
    CHECK(cuModuleLoadData(&mod, cubin));
    CHECK(cuModuleGetFunction(&fn, mod, "matmul"));

    size_t count = (size_t)n * n, bytes = count * sizeof(float);
    float *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes);
    uint64_t x = 0x243F6A8885A308D3ull;
    for (size_t i = 0; i < count; ++i) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        A[i] = (float)((int)((x * 0x2545F4914F6CDD1Dull) >> 54) - 512) / 256.0f;
        B[i] = (float)((int)(x >> 54) - 512) / 256.0f;
    }
    CUdeviceptr dA, dB, dC;
    CHECK(cuMemAlloc(&dA, bytes));
    CHECK(cuMemAlloc(&dB, bytes));
    CHECK(cuMemAlloc(&dC, bytes));
    CHECK(cuMemcpyHtoD(dA, A, bytes));
    CHECK(cuMemcpyHtoD(dB, B, bytes));
    void* args[] = {&dA, &dB, &dC, &n};
    double t0 = now();
    CHECK(cuLaunchKernel(fn, (unsigned)n / 16, (unsigned)n / 16, 1, 16, 16, 1, 0, NULL, args, NULL));
    CHECK(cuCtxSynchronize());
    double t1 = now();
    CHECK(cuMemcpyDtoH(C, dC, bytes));

    size_t wrong = 0;
    double worst = 0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double ref = 0, mag = 0;
            for (int k = 0; k < n; ++k) {
                ref += (double)A[(size_t)i * n + k] * B[(size_t)k * n + j];
                mag += fabs((double)A[(size_t)i * n + k] * B[(size_t)k * n + j]);
            }
            double err = fabs(C[(size_t)i * n + j] - ref) / (mag + 1e-30);
            if (err > worst) worst = err;
            if (err > 1e-5) ++wrong;
        }
    printf("matmul %dx%d: %.3f ms, %.1f GFLOP/s, worst relative error %.2e: %s\n", n, n, (t1 - t0) * 1e3,
           2.0 * n * n * (double)n / (t1 - t0) / 1e9, worst, wrong ? "FAIL" : "PASS");
    CHECK(cuModuleUnload(mod));
    CHECK(cuCtxDestroy(ctx));
    free(A);
    free(B);
    free(C);
    free(cubin);
    return wrong ? 1 : 0;
}
