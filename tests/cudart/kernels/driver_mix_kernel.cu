// The kernel tests/cudart/driver_mix.cu loads through the driver API
// (cuModuleLoadData of this file's fat binary, built by make beside the
// program), as cuda-samples' simpleDrvRuntime loads its own.
extern "C" __global__ void mixAxpy(const float* x, const float* y, float* out, float a, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}

// Linked from PTX at run time (cuLinkCreate / cuLinkAddData / cuLinkComplete),
// as cuda-samples' ptxjit links its kernel.
extern "C" __global__ void mixIota(int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 3 * i + 1;
}
