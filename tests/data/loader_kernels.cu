// Kernels for the loader tests (tests/unit/test_loader*.cpp). The tests
// compile this file with nvcc and NVRTC at run time; loader_kernels.sm_90.cubin
// is the same built once (nvcc 13.0: nvcc -cubin -arch=sm_90), so that the
// parser and fuzz tests also run where no CUDA toolkit is installed.
struct Small { int a; double b; char c; };  // 24 bytes, 8-aligned
struct Page { char data[4096]; };
struct Huge { int v[8000]; };                // 32000 bytes: EIATTR_KPARAM_INFO_V2

__device__ int gdev[16];                     // .nv.global (zero-filled)
__device__ float ginit = 3.5f;               // .nv.global.init
__constant__ float cvals[8] = {1, 2, 3, 4, 5, 6, 7, 8};  // constant bank 3
__constant__ int czero[4];
__device__ int* gptr = &gdev[3];             // R_CUDA_G64 in .nv.global.init

__device__ __noinline__ int helper(int x) { return x * gdev[x & 15] + 1; }
typedef int (*fn_t)(int);
__device__ int f1(int x) { return x + 1; }
__device__ int f2(int x) { return x * 2; }
__device__ fn_t table[2] = {f1, f2};

extern "C" __global__ void k_ptrs(float* a, const float* b, int n) {
    int i = threadIdx.x;
    if (i < n) a[i] = b[i] * cvals[i & 7] + ginit;
}
extern "C" __global__ void k_mixed(char c, short s, int i, long long l, double d, float* p, Small st) {
    p[0] = c + s + i + l + d + st.a + st.b + st.c;
}
extern "C" __global__ void k_page(Page b, int* out) { out[threadIdx.x] = b.data[threadIdx.x]; }
extern "C" __global__ void k_huge(Huge h, int* out) { out[threadIdx.x] = h.v[threadIdx.x * 31]; }
extern "C" __global__ void k_shared(float* out) {
    __shared__ float sm[1000];
    sm[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = sm[999 - threadIdx.x];
}
extern "C" __global__ void k_local(int* out, int n) {
    volatile int arr[2048];
    for (int i = 0; i < 2048; ++i) arr[i] = i * n;
    out[threadIdx.x] = arr[(threadIdx.x * 7) & 2047];
}
extern "C" __global__ void k_call(int* out) { out[threadIdx.x] = helper(threadIdx.x); }
extern "C" __global__ void k_indirect(int* out, int w) { out[threadIdx.x] = table[w & 1](threadIdx.x) + *gptr + czero[w & 3]; }
extern "C" __global__ void __launch_bounds__(128) k_bounds(int* out) { atomicAdd(out, 1); }
extern "C" __global__ void k_noparams() { gdev[0] = 1; }
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
extern "C" __global__ void __cluster_dims__(2, 1, 1) k_cluster(int* out) { out[0] = *gptr; }
#endif
