// The kernels of bench_perf.c, compiled with NVRTC at build time (like the
// library's built-in kernels) so that the benchmark itself never opens NVRTC:
// NVRTC loads libcuda.so.1 by name, which would put a second driver into an
// nvlite run and into its memory figures. Three kernels: the module of the
// "first module load" figure.
extern "C" __global__ void empty() {}

extern "C" __global__ void axpy(float* y, const float* x, float a, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}

// 64 ints of local memory per thread (written and read at run-time indices:
// they stay in local memory, 256 bytes of frame): the "local memory at first
// launch" figure.
extern "C" __global__ void local64(int* out, int seed) {
    int a[64];
    for (int i = 0; i < 64; ++i) a[(i * seed + threadIdx.x) & 63] = seed + i;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a[(seed + threadIdx.x) & 63];
}
