/*
 * bench_peer: two GPUs. Peer copy bandwidth in both directions
 * (cuMemcpyPeerAsync of 256 MiB between devices 0 and 1, peer access
 * enabled both ways, median and best of interleaved repetitions), and a
 * kernel on device 0 summing a 1 GiB uint32 array that lives on device 1
 * (checked exactly; its time, and the same sum over a local array for
 * comparison). Run the libcuda and the libnvlite build on the same machine
 * and compare the lines. With fewer than two GPUs it says so and exits 0.
 *
 *   bench_peer_<driver> [tag] [MiB per copy]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../samples/nvrtc_compile.h"
#include "bench.h"

static const char kSource[] =
    "extern \"C\" __global__ void sum_u32(const unsigned* in, unsigned long long n, unsigned long long* out) {\n"
    "    unsigned long long s = 0;\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;\n"
    "         i += (unsigned long long)gridDim.x * blockDim.x) s += in[i];\n"
    "    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);\n"
    "    if ((threadIdx.x & 31) == 0) atomicAdd(out, s);\n"
    "}\n";

/* Seconds one kernel takes summing n values at 'arr' (device 0), checked. */
static double timed_sum(CUfunction f, CUdeviceptr arr, unsigned long long n, CUdeviceptr out, unsigned long long want,
                        int sms) {
    double best = 1e30;
    for (int rep = 0; rep < 7; ++rep) {
        CHECK(cuMemsetD8(out, 0, 8));
        CHECK(cuCtxSynchronize());
        void* args[] = {&arr, &n, &out};
        double a = now();
        CHECK(cuLaunchKernel(f, (unsigned)sms * 4, 1, 1, 512, 1, 1, 0, NULL, args, NULL));
        CHECK(cuCtxSynchronize());
        double t = now() - a;
        unsigned long long got = 0;
        CHECK(cuMemcpyDtoH(&got, out, 8));
        if (got != want) {
            fprintf(stderr, "sum is wrong: %llu, expected %llu\n", got, want);
            exit(1);
        }
        if (t < best) best = t;
    }
    return best;
}

int main(int argc, char** argv) {
    const char* tag = argc > 1 ? argv[1] : "lib";
    size_t mib = argc > 2 ? (size_t)atoi(argv[2]) : 256;
    size_t bytes = mib << 20;
    CHECK(cuInit(0));
    int count = 0;
    CHECK(cuDeviceGetCount(&count));
    if (count < 2) {
        printf("%s peer: skipped, needs two GPUs (this machine has %d)\n", tag, count);
        return 0;
    }
    int access01 = 0, access10 = 0;
    CHECK(cuDeviceCanAccessPeer(&access01, 0, 1));
    CHECK(cuDeviceCanAccessPeer(&access10, 1, 0));
    if (!access01 || !access10) {
        printf("%s peer: skipped, devices 0 and 1 have no peer link\n", tag);
        return 0;
    }
    CUcontext c0, c1;
    CHECK(cuCtxCreate(&c1, NULL, 0, 1));
    CHECK(cuCtxCreate(&c0, NULL, 0, 0));
    CUdeviceptr a0, a1;
    CHECK(cuMemAlloc(&a0, bytes));
    CHECK(cuMemsetD8(a0, 0x5a, bytes));
    CHECK(cuCtxEnablePeerAccess(c1, 0));
    CUstream s0;
    CHECK(cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING));
    CHECK(cuCtxSetCurrent(c1));
    CHECK(cuMemAlloc(&a1, bytes));
    CHECK(cuMemsetD8(a1, 0xa5, bytes));
    CHECK(cuCtxEnablePeerAccess(c0, 0));
    CUstream s1;
    CHECK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CHECK(cuCtxSynchronize());

    /* Each direction copies on the source device's stream (as cudaMemcpyPeer does). */
    enum { N = 15 };
    double to1[N], to0[N];
    for (int rep = -2; rep < N; ++rep) {
        double a = now();
        CHECK(cuMemcpyPeerAsync(a1, c1, a0, c0, bytes, s0));
        CHECK(cuStreamSynchronize(s0));
        double b = now();
        CHECK(cuMemcpyPeerAsync(a0, c0, a1, c1, bytes, s1));
        CHECK(cuStreamSynchronize(s1));
        double c = now();
        if (rep >= 0) {
            to1[rep] = (double)bytes / (b - a) / 1e9;
            to0[rep] = (double)bytes / (c - b) / 1e9;
        }
    }
    double best1 = 0, best0 = 0;
    for (int i = 0; i < N; ++i) {
        if (to1[i] > best1) best1 = to1[i];
        if (to0[i] > best0) best0 = to0[i];
    }
    printf("%s peer copy %zu MiB: 0->1 median %.2f best %.2f GB/s, 1->0 median %.2f best %.2f GB/s\n", tag, mib,
           median(to1, N), best1, median(to0, N), best0);

    /* A kernel on device 0 summing 1 GiB that lives on device 1. */
    const unsigned long long n = (1ull << 30) / 4;
    unsigned* host = malloc(n * 4);
    if (!host) return 1;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    unsigned long long want = 0;
    for (unsigned long long i = 0; i < n; ++i) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        host[i] = (unsigned)((x * 0x2545F4914F6CDD1Dull) >> 40);
        want += host[i];
    }
    CUdeviceptr arr1;
    CHECK(cuMemAlloc(&arr1, n * 4));
    CHECK(cuMemcpyHtoD(arr1, host, n * 4));
    CHECK(cuCtxSetCurrent(c0));
    CUdeviceptr arr0, out;
    CHECK(cuMemAlloc(&arr0, n * 4));
    CHECK(cuMemcpyHtoD(arr0, host, n * 4));
    CHECK(cuMemAlloc(&out, 8));
    int major = 0, minor = 0, sms = 0;
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
    CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0));
    CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    size_t size = 0;
    char* cubin = nvrtc_compile(kSource, "bench_peer.cu", 0, major * 10 + minor, NULL, 0, &size);
    if (!cubin) return 1;
    CUmodule m;
    CUfunction f;
    CHECK(cuModuleLoadData(&m, cubin));
    CHECK(cuModuleGetFunction(&f, m, "sum_u32"));
    double tPeer = timed_sum(f, arr1, n, out, want, sms);
    double tLocal = timed_sum(f, arr0, n, out, want, sms);
    printf("%s peer sum on device 0 of 1 GiB on device 1: exact, %.3f ms (%.1f GB/s); local array %.3f ms (%.1f GB/s)\n",
           tag, tPeer * 1e3, (double)(n * 4) / tPeer / 1e9, tLocal * 1e3, (double)(n * 4) / tLocal / 1e9);
    free(cubin);
    free(host);
    CHECK(cuModuleUnload(m));
    CHECK(cuCtxDestroy(c0));
    CHECK(cuCtxDestroy(c1));
    return 0;
}
