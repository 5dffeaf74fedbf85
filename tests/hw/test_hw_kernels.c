/*
 * Hardware-only kernel tests (make test-hw, on a machine with an NVIDIA GPU;
 * built in CI, never run there: they skip without a real GPU). Kernels are
 * compiled at test time with NVRTC (and nvcc for the fatbin forms), launched
 * with cuLaunchKernel and every result is checked on the host:
 * vector add, 3-D index maps, shared-memory reductions (48 KiB and 200 KiB of
 * dynamic shared memory), __device__ and __constant__ data through
 * cuModuleGetGlobal, struct and 20+ parameter kernels, a 16 KiB stack per
 * thread, atomics, double sin/exp against the host, the same kernel from a
 * cubin, two fatbins and PTX, 10,000 back-to-back launches, and kernels
 * interleaved with copies on the NULL stream.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_hw_ctx_setup, ts_ctx_teardown)

/* ------------------------------------------------------------------ kernels */

static const char kSource[] =
    "struct Padded { char c; double d; short s; int i; };\n"
    "extern \"C\" {\n"
    "__device__ int g_in[1024];\n"
    "__device__ int g_out[1024];\n"
    "__device__ int g_init[4] = {7, 11, 13, 17};\n"
    "__constant__ int c_tab[256];\n"
    "__constant__ float c_init[4] = {1.5f, 2.5f, 3.5f, 4.5f};\n"
    "\n"
    "__global__ void vadd(const float* a, const float* b, float* c, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n"
    "\n"
    "// Every thread writes its linear id + 1 and its coordinates.\n"
    "__global__ void index_map(unsigned* ids, uint4* coords) {\n"
    "    unsigned long long block = blockIdx.x + (unsigned long long)gridDim.x *\n"
    "                               (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);\n"
    "    unsigned threads = blockDim.x * blockDim.y * blockDim.z;\n"
    "    unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n"
    "    unsigned long long id = block * threads + t;\n"
    "    ids[id] = (unsigned)id + 1;\n"
    "    coords[id] = make_uint4(blockIdx.x, blockIdx.y, blockIdx.z,\n"
    "                            threadIdx.x | (threadIdx.y << 10) | (threadIdx.z << 20));\n"
    "}\n"
    "\n"
    "// Counts blocks; the last block records gridDim.\n"
    "__global__ void grid_marks(unsigned* marks) {\n"
    "    if (threadIdx.x == 0) atomicAdd(&marks[0], 1u);\n"
    "    if (threadIdx.x == 0 && blockIdx.x == gridDim.x - 1 && blockIdx.y == gridDim.y - 1 &&\n"
    "        blockIdx.z == gridDim.z - 1) {\n"
    "        marks[1] = gridDim.x; marks[2] = gridDim.y; marks[3] = gridDim.z; marks[4] = blockDim.x;\n"
    "    }\n"
    "}\n"
    "\n"
    "// Each block copies per_block values into dynamic shared memory, then\n"
    "// sums them in reverse order.\n"
    "__global__ void reduce_shared(const unsigned* in, unsigned long long* out, unsigned per_block) {\n"
    "    extern __shared__ unsigned s[];\n"
    "    const unsigned* src = in + (size_t)blockIdx.x * per_block;\n"
    "    for (unsigned i = threadIdx.x; i < per_block; i += blockDim.x) s[i] = src[i];\n"
    "    __syncthreads();\n"
    "    unsigned long long sum = 0;\n"
    "    for (unsigned i = threadIdx.x; i < per_block; i += blockDim.x) sum += s[per_block - 1 - i];\n"
    "    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);\n"
    "    if ((threadIdx.x & 31) == 0) atomicAdd(&out[blockIdx.x], sum);\n"
    "}\n"
    "\n"
    "__global__ void globals_rw(int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) g_out[i] = g_in[i] * 2 + g_init[i & 3];\n"
    "}\n"
    "\n"
    "__global__ void const_read(int* out, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = c_tab[i & 255] + (int)(c_init[i & 3] * 2.0f);\n"
    "}\n"
    "\n"
    "__global__ void struct_param(Padded p, char c, Padded q, double* out) {\n"
    "    if (threadIdx.x == 0 && blockIdx.x == 0) {\n"
    "        out[0] = p.c; out[1] = p.d; out[2] = p.s; out[3] = p.i; out[4] = c;\n"
    "        out[5] = q.c; out[6] = q.d; out[7] = q.s; out[8] = q.i;\n"
    "    }\n"
    "}\n"
    "\n"
    "__global__ void many_params(char a0, int a1, double a2, short a3, float a4, float2 a5, char a6,\n"
    "                            long long a7, unsigned char a8, float4 a9, short a10, double a11, int a12,\n"
    "                            char a13, unsigned long long a14, Padded a15, float a16, char a17,\n"
    "                            int a18, double a19, const int* a20, int a21, double* out) {\n"
    "    if (threadIdx.x != 0 || blockIdx.x != 0) return;\n"
    "    out[0] = a0; out[1] = a1; out[2] = a2; out[3] = a3; out[4] = a4; out[5] = a5.x; out[6] = a5.y;\n"
    "    out[7] = a6; out[8] = (double)a7; out[9] = a8; out[10] = a9.x; out[11] = a9.y; out[12] = a9.z;\n"
    "    out[13] = a9.w; out[14] = a10; out[15] = a11; out[16] = a12; out[17] = a13;\n"
    "    out[18] = (double)(a14 >> 12); out[19] = a15.c; out[20] = a15.d; out[21] = a15.s; out[22] = a15.i;\n"
    "    out[23] = a16; out[24] = a17; out[25] = a18; out[26] = a19; out[27] = a20[0]; out[28] = a21;\n"
    "}\n"
    "\n"
    "// 16 KiB of stack per thread, indexed by data.\n"
    "__global__ void big_local(int* out, int seed) {\n"
    "    int a[4096];\n"
    "    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    for (int i = 0; i < 4096; ++i) a[(i * 1031 + seed) & 4095] = i ^ (int)tid;\n"
    "    unsigned s = 0;\n"
    "    for (int i = 0; i < 4096; ++i) s += (unsigned)(a[(i * 7 + tid) & 4095] * (i & 7));\n"
    "    out[tid] = (int)s;\n"
    "}\n"
    "\n"
    "__global__ void atomics(unsigned* counter, int* maxv, unsigned* slots, unsigned n) {\n"
    "    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (tid >= n) return;\n"
    "    atomicAdd(counter, 1u);\n"
    "    atomicMax(maxv, (int)((tid * 2654435761u) >> 1));\n"
    "    unsigned* s = &slots[tid & 63];\n"
    "    unsigned old = *s, assumed;\n"
    "    do { assumed = old; old = atomicCAS(s, assumed, assumed + 1); } while (old != assumed);\n"
    "}\n"
    "\n"
    "__global__ void dmath(const double* x, double* s, double* e, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) { s[i] = sin(x[i]); e[i] = exp(x[i]); }\n"
    "}\n"
    "\n"
    "__global__ void counter_inc(unsigned long long* c) { *c += 1; }\n"
    "\n"
    "// Integer hash and exact float arithmetic: identical from any compiler.\n"
    "__global__ void mix(const unsigned* in, unsigned* out, float* fout, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= n) return;\n"
    "    unsigned h = in[i] * 2654435761u;\n"
    "    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;\n"
    "    out[i] = h + c_tab[i & 255];\n"
    "    fout[i] = __fadd_rn(__fmul_rn((float)(h & 0xffff), 0.0078125f), 0.5f);\n"
    "}\n"
    "\n"
    "__global__ void scale_add(unsigned* buf, unsigned mul, unsigned add, unsigned n) {\n"
    "    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "        buf[i] = buf[i] * mul + add;\n"
    "}\n"
    "\n"
    "// 128 values live at once: as many registers as allowed.\n"
    "__global__ void regs_heavy(float* out, const float* in, int n) {\n"
    TS_REGS_KERNEL_BODY
    "}\n"
    "}\n";

/* Skips without a GPU or NVRTC; returns the module (a fresh load). */
static CUmodule hw_module(void) {
    const char *why = NULL;
    if (!ts_have_real_gpu(&why)) ts_skip("no real GPU: %s", why);
    return ts_source_module(kSource, "hw_kernels.cu");
}

#define LAUNCH(f, gx, gy, gz, bx, by, bz, smem, ...)                                                           \
    do {                                                                                                       \
        void *params_[] = {__VA_ARGS__};                                                                       \
        assert_cu_ok(cuLaunchKernel((f), (gx), (gy), (gz), (bx), (by), (bz), (smem), NULL, params_, NULL)); \
    } while (0)

/* ------------------------------------------------------------------ tests */

static void test_hw_vector_add_16m(void **state) {
    (void)state;
    CUmodule m = hw_module();
    CUfunction f = ts_get_function(m, "vadd");
    const unsigned n = 16u << 20;
    const size_t bytes = (size_t)n * sizeof(float);
    float *a = ts_malloc(bytes), *b = ts_malloc(bytes), *c = ts_malloc(bytes);
    ts_rng rng;
    ts_rng_init(&rng, 0xadd);
    for (unsigned i = 0; i < n; ++i) {
        a[i] = (float)(int)ts_rng_below(&rng, 2000001) / 8.0f - 125000.0f;
        b[i] = (float)(int)ts_rng_below(&rng, 2000001) / 3.0f;
    }
    CUdeviceptr da = ts_dev_alloc(bytes), db = ts_dev_alloc(bytes), dc = ts_dev_alloc(bytes);
    assert_cu_ok(cuMemcpyHtoD(da, a, bytes));
    assert_cu_ok(cuMemcpyHtoD(db, b, bytes));
    assert_cu_ok(cuMemsetD32(dc, 0xffffffffu, n));
    unsigned nn = n;
    double t = ts_now();
    LAUNCH(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, &da, &db, &dc, &nn);
    assert_cu_ok(cuCtxSynchronize());
    print_message("vector add of 16M floats: %.3f ms\n", (ts_now() - t) * 1e3);
    assert_cu_ok(cuMemcpyDtoH(c, dc, bytes));
    for (unsigned i = 0; i < n; ++i) {
        const float want = a[i] + b[i];
        if (memcmp(&c[i], &want, sizeof want) != 0) fail_msg("c[%u] = %a, expected %a", i, (double)c[i], (double)want);
    }
    assert_cu_ok(cuModuleUnload(m));
}

static void index_map(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz) {
    const size_t blocks = (size_t)gx * gy * gz, threads = (size_t)bx * by * bz, n = blocks * threads;
    CUdeviceptr ids = ts_dev_alloc(n * 4), coords = ts_dev_alloc(n * 16);
    assert_cu_ok(cuMemsetD32(ids, 0, n));
    LAUNCH(f, gx, gy, gz, bx, by, bz, 0, &ids, &coords);
    assert_cu_ok(cuCtxSynchronize());
    unsigned *hid = ts_malloc(n * 4), *hc = ts_malloc(n * 16);
    assert_cu_ok(cuMemcpyDtoH(hid, ids, n * 4));
    assert_cu_ok(cuMemcpyDtoH(hc, coords, n * 16));
    for (size_t id = 0; id < n; ++id) {
        if (hid[id] != (unsigned)id + 1)
            fail_msg("grid %ux%ux%u block %ux%ux%u: thread %zu wrote %u", gx, gy, gz, bx, by, bz, id, hid[id]);
        const size_t block = id / threads, t = id % threads;
        const unsigned want[4] = {(unsigned)(block % gx), (unsigned)(block / gx % gy), (unsigned)(block / gx / gy),
                                  (unsigned)(t % bx) | (unsigned)(t / bx % by) << 10 | (unsigned)(t / bx / by) << 20};
        if (memcmp(&hc[id * 4], want, sizeof want) != 0)
            fail_msg("grid %ux%ux%u block %ux%ux%u: thread %zu saw block (%u,%u,%u) thread 0x%x", gx, gy, gz, bx, by,
                     bz, id, hc[id * 4], hc[id * 4 + 1], hc[id * 4 + 2], hc[id * 4 + 3]);
    }
    ts_free(hid);
    ts_free(hc);
    assert_cu_ok(cuMemFree(ids));
    assert_cu_ok(cuMemFree(coords));
}

static void test_hw_index_map_3d(void **state) {
    (void)state;
    CUmodule m = hw_module();
    CUfunction f = ts_get_function(m, "index_map");
    index_map(f, 37, 19, 5, 16, 8, 4);
    index_map(f, 3, 2, 7, 1024, 1, 1);
    index_map(f, 5, 3, 2, 1, 1, 64);
    index_map(f, 2, 1, 1, 1, 1024, 1);
    index_map(f, 1, 1, 1, 7, 3, 5);
    index_map(f, 100000, 1, 1, 32, 1, 1); /* gridDim.x beyond 16 bits */

    /* Grid extremes: block counts and the last block's view. */
    CUfunction g = ts_get_function(m, "grid_marks");
    const unsigned grids[][3] = {{1, 65535, 1}, {1, 1, 65535}, {70000, 3, 2}, {1u << 24, 1, 1}, {2, 65535, 3}};
    CUdeviceptr marks = ts_dev_alloc(64);
    for (size_t i = 0; i < TS_ARRAY_SIZE(grids); ++i) {
        assert_cu_ok(cuMemsetD32(marks, 0, 16));
        LAUNCH(g, grids[i][0], grids[i][1], grids[i][2], 32, 1, 1, 0, &marks);
        assert_cu_ok(cuCtxSynchronize());
        unsigned h[5];
        assert_cu_ok(cuMemcpyDtoH(h, marks, sizeof h));
        const unsigned long long blocks = (unsigned long long)grids[i][0] * grids[i][1] * grids[i][2];
        if (h[0] != blocks || h[1] != grids[i][0] || h[2] != grids[i][1] || h[3] != grids[i][2] || h[4] != 32)
            fail_msg("grid %ux%ux%u: %u blocks ran (expected %llu), last block saw %ux%ux%u, blockDim %u", grids[i][0],
                     grids[i][1], grids[i][2], h[0], blocks, h[1], h[2], h[3], h[4]);
    }
    assert_cu_ok(cuMemFree(marks));
    assert_cu_ok(cuModuleUnload(m));
}

static void reduce(CUmodule m, unsigned smem, unsigned blocks, uint64_t seed) {
    CUfunction f = ts_get_function(m, "reduce_shared");
    if (smem > 48 * 1024)
        assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem));
    unsigned per_block = smem / 4;
    const size_t n = (size_t)per_block * blocks;
    unsigned *in = ts_malloc(n * 4);
    ts_rng rng;
    ts_rng_init(&rng, seed);
    for (size_t i = 0; i < n; ++i) in[i] = (unsigned)ts_rng_next(&rng);
    CUdeviceptr din = ts_dev_alloc(n * 4), dout = ts_dev_alloc(blocks * 8);
    assert_cu_ok(cuMemcpyHtoD(din, in, n * 4));
    assert_cu_ok(cuMemsetD32(dout, 0, blocks * 2));
    LAUNCH(f, blocks, 1, 1, 1024, 1, 1, smem, &din, &dout, &per_block);
    assert_cu_ok(cuCtxSynchronize());
    unsigned long long *out = ts_malloc(blocks * 8);
    assert_cu_ok(cuMemcpyDtoH(out, dout, blocks * 8));
    for (unsigned b = 0; b < blocks; ++b) {
        unsigned long long want = 0;
        for (unsigned i = 0; i < per_block; ++i) want += in[(size_t)b * per_block + i];
        if (out[b] != want) fail_msg("%u bytes of shared memory: block %u summed %llu, expected %llu", smem, b, out[b], want);
    }
    assert_cu_ok(cuMemFree(din));
    assert_cu_ok(cuMemFree(dout));
}

static void test_hw_shared_reduction_48k(void **state) {
    (void)state;
    CUmodule m = hw_module();
    reduce(m, 48 * 1024, 264, 48);
    reduce(m, 1024, 1000, 1);
    assert_cu_ok(cuModuleUnload(m));
}

static void test_hw_shared_reduction_200k(void **state) {
    (void)state;
    CUmodule m = hw_module();
    reduce(m, 200 * 1024, 264, 200);
    /* And the opt-in maximum. */
    int optin = 0;
    assert_cu_ok(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0));
    reduce(m, (unsigned)optin, 132, 227);
    assert_cu_ok(cuModuleUnload(m));
}

static void test_hw_device_globals(void **state) {
    (void)state;
    CUmodule m = hw_module();
    CUdeviceptr in = 0, out = 0, init = 0;
    size_t n = 0;
    assert_cu_ok(cuModuleGetGlobal(&in, &n, m, "g_in"));
    assert_int_equal(n, 4096);
    assert_cu_ok(cuModuleGetGlobal(&out, &n, m, "g_out"));
    assert_cu_ok(cuModuleGetGlobal(&init, &n, m, "g_init"));
    int h[1024], back[1024];
    for (int i = 0; i < 1024; ++i) h[i] = i * 5 - 1000;
    assert_cu_ok(cuMemcpyHtoD(in, h, sizeof h));
    int count = 1024;
    LAUNCH(ts_get_function(m, "globals_rw"), 4, 1, 1, 256, 1, 1, 0, &count);
    assert_cu_ok(cuCtxSynchronize());
    assert_cu_ok(cuMemcpyDtoH(back, out, sizeof back));
    static const int inits[4] = {7, 11, 13, 17};
    for (int i = 0; i < 1024; ++i)
        if (back[i] != h[i] * 2 + inits[i & 3]) fail_msg("g_out[%d] = %d, expected %d", i, back[i], h[i] * 2 + inits[i & 3]);
    /* The initialiser changed from the host, read by the next launch. */
    const int other[4] = {100, 200, 300, 400};
    assert_cu_ok(cuMemcpyHtoD(init, other, sizeof other));
    LAUNCH(ts_get_function(m, "globals_rw"), 4, 1, 1, 256, 1, 1, 0, &count);
    assert_cu_ok(cuMemcpyDtoH(back, out, sizeof back));
    for (int i = 0; i < 1024; ++i)
        if (back[i] != h[i] * 2 + other[i & 3]) fail_msg("second launch: g_out[%d] = %d", i, back[i]);
    assert_cu_ok(cuModuleUnload(m));
}

static void test_hw_constant_data(void **state) {
    (void)state;
    CUmodule m = hw_module();
    CUdeviceptr tab = 0;
    size_t n = 0;
    assert_cu_ok(cuModuleGetGlobal(&tab, &n, m, "c_tab"));
    assert_int_equal(n, 1024);
    CUfunction f = ts_get_function(m, "const_read");
    const int count = 4096;
    CUdeviceptr out = ts_dev_alloc(count * 4);
    int h[256], back[4096];
    static const int inits[4] = {3, 5, 7, 9}; /* c_init x 2 */
    /* Twice with different constants: the second launch must not see the
     * first one's values from the constant cache. */
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 256; ++i) h[i] = i * 1000 + round * 7 - 500;
        assert_cu_ok(cuMemcpyHtoD(tab, h, sizeof h));
        int cnt = count;
        LAUNCH(f, count / 256, 1, 1, 256, 1, 1, 0, &out, &cnt);
        assert_cu_ok(cuMemcpyDtoH(back, out, sizeof back));
        for (int i = 0; i < count; ++i)
            if (back[i] != h[i & 255] + inits[i & 3])
                fail_msg("round %d: out[%d] = %d, expected %d", round, i, back[i], h[i & 255] + inits[i & 3]);
    }
    assert_cu_ok(cuMemFree(out));
    assert_cu_ok(cuModuleUnload(m));
}

struct padded {
    char c;
    double d;
    short s;
    int i;
};
typedef struct {
    _Alignas(8) float x;
    float y;
} f2;
typedef struct {
    _Alignas(16) float x;
    float y, z, w;
} f4;

static void test_hw_struct_and_many_params(void **state) {
    (void)state;
    CUmodule m = hw_module();
    CUdeviceptr out = ts_dev_alloc(64 * sizeof(double));
    double h[64];
    /* struct_param(Padded p, char c, Padded q, double* out) */
    struct padded p = {-5, 3.25, -1234, 987654321}, q = {42, -1e300, 32767, -7};
    char c = 99;
    assert_cu_ok(cuMemsetD32(out, 0, 128));
    LAUNCH(ts_get_function(m, "struct_param"), 1, 1, 1, 32, 1, 1, 0, &p, &c, &q, &out);
    assert_cu_ok(cuMemcpyDtoH(h, out, 9 * sizeof(double)));
    const double want1[9] = {-5, 3.25, -1234, 987654321, 99, 42, -1e300, 32767, -7};
    for (int i = 0; i < 9; ++i)
        if (h[i] != want1[i]) fail_msg("struct_param: out[%d] = %g, expected %g", i, h[i], want1[i]);

    /* 22 parameters and the output pointer. */
    char a0 = -1;
    int a1 = -2000000000;
    double a2 = 1.0 / 3.0;
    short a3 = -32768;
    float a4 = 0.1f;
    f2 a5 = {1.25f, -2.5f};
    char a6 = 127;
    long long a7 = -(1ll << 50);
    unsigned char a8 = 255;
    f4 a9 = {9.0f, 10.5f, -11.0f, 12.75f};
    short a10 = 1234;
    double a11 = 6.02214076e23;
    int a12 = 2147483647;
    char a13 = 'z';
    unsigned long long a14 = 0xfedcba9876543210ull;
    struct padded a15 = {1, 2.5, 3, 4};
    float a16 = -1e30f;
    char a17 = 0;
    int a18 = 18;
    double a19 = -0.0;
    CUdeviceptr a20 = ts_dev_alloc(4);
    const int forty_two = 42;
    assert_cu_ok(cuMemcpyHtoD(a20, &forty_two, 4));
    int a21 = -21;
    LAUNCH(ts_get_function(m, "many_params"), 1, 1, 1, 1, 1, 1, 0, &a0, &a1, &a2, &a3, &a4, &a5, &a6, &a7, &a8, &a9, &a10,
           &a11, &a12, &a13, &a14, &a15, &a16, &a17, &a18, &a19, &a20, &a21, &out);
    assert_cu_ok(cuMemcpyDtoH(h, out, 29 * sizeof(double)));
    const double want2[29] = {-1, -2000000000, 1.0 / 3.0, -32768, (double)0.1f, 1.25, -2.5, 127,
                              (double)-(1ll << 50), 255, 9.0, 10.5, -11.0, 12.75, 1234, 6.02214076e23,
                              2147483647, 'z', (double)(0xfedcba9876543210ull >> 12), 1, 2.5, 3, 4,
                              (double)-1e30f, 0, 18, -0.0, 42, -21};
    for (int i = 0; i < 29; ++i)
        if (memcmp(&h[i], &want2[i], sizeof(double)) != 0)
            fail_msg("many_params: out[%d] = %.17g, expected %.17g", i, h[i], want2[i]);
    assert_cu_ok(cuMemFree(a20));
    assert_cu_ok(cuMemFree(out));
    assert_cu_ok(cuModuleUnload(m));
}

static void test_hw_large_local_array(void **state) {
    (void)state;
    CUmodule m = hw_module();
    CUfunction f = ts_get_function(m, "big_local");
    int local = 0;
    assert_cu_ok(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f));
    if (local < 16384) fail_msg("big_local: LOCAL_SIZE_BYTES %d", local);
    const unsigned blocks = 264, threads = 256, n = blocks * threads;
    CUdeviceptr out = ts_dev_alloc(n * 4);
    int seed = 12345;
    LAUNCH(f, blocks, 1, 1, threads, 1, 1, 0, &out, &seed);
    assert_cu_ok(cuCtxSynchronize());
    int *h = ts_malloc(n * 4);
    assert_cu_ok(cuMemcpyDtoH(h, out, n * 4));
    static int a[4096];
    for (unsigned tid = 0; tid < n; tid += (tid < 4096 ? 1 : 61)) {
        for (int i = 0; i < 4096; ++i) a[(i * 1031 + seed) & 4095] = i ^ (int)tid;
        unsigned s = 0;
        for (int i = 0; i < 4096; ++i) s += (unsigned)(a[(i * 7 + tid) & 4095] * (i & 7));
        if (h[tid] != (int)s) fail_msg("big_local: thread %u computed %d, expected %d", tid, h[tid], (int)s);
    }
    assert_cu_ok(cuMemFree(out));
    assert_cu_ok(cuModuleUnload(m));
}

static void test_hw_atomics(void **state) {
    (void)state;
    CUmodule m = hw_module();
    const unsigned n = 1u << 20;
    CUdeviceptr counter = ts_dev_alloc(4), maxv = ts_dev_alloc(4), slots = ts_dev_alloc(64 * 4);
    assert_cu_ok(cuMemsetD32(counter, 0, 1));
    assert_cu_ok(cuMemsetD32(maxv, 0x80000000u, 1));
    assert_cu_ok(cuMemsetD32(slots, 0, 64));
    unsigned nn = n;
    LAUNCH(ts_get_function(m, "atomics"), n / 256, 1, 1, 256, 1, 1, 0, &counter, &maxv, &slots, &nn);
    assert_cu_ok(cuCtxSynchronize());
    unsigned c = 0, s[64];
    int mx = 0;
    assert_cu_ok(cuMemcpyDtoH(&c, counter, 4));
    assert_cu_ok(cuMemcpyDtoH(&mx, maxv, 4));
    assert_cu_ok(cuMemcpyDtoH(s, slots, sizeof s));
    assert_int_equal(c, n);
    int want = (int)0x80000000u;
    for (unsigned t = 0; t < n; ++t) {
        const int v = (int)((t * 2654435761u) >> 1);
        if (v > want) want = v;
    }
    assert_int_equal(mx, want);
    for (int i = 0; i < 64; ++i)
        if (s[i] != n / 64) fail_msg("CAS slot %d = %u, expected %u", i, s[i], n / 64);
    assert_cu_ok(cuModuleUnload(m));
}

/* Distance in units in the last place between two finite doubles. */
static uint64_t ulps(double a, double b) {
    int64_t x, y;
    memcpy(&x, &a, 8);
    memcpy(&y, &b, 8);
    if (x < 0) x = INT64_MIN - x;
    if (y < 0) y = INT64_MIN - y;
    return x > y ? (uint64_t)(x - y) : (uint64_t)(y - x);
}

static void test_hw_double_sin_exp(void **state) {
    (void)state;
    CUmodule m = hw_module();
    const int n = 1 << 20;
    double *x = ts_malloc(n * 8), *s = ts_malloc(n * 8), *e = ts_malloc(n * 8);
    ts_rng rng;
    ts_rng_init(&rng, 0x51e);
    for (int i = 0; i < n; ++i) {
        const double u = (double)(ts_rng_next(&rng) >> 11) / 9007199254740992.0; /* [0, 1) */
        x[i] = i % 4 == 0 ? (u - 0.5) * 1400.0 : (u - 0.5) * 40.0;                /* exp stays finite */
    }
    CUdeviceptr dx = ts_dev_alloc(n * 8), ds = ts_dev_alloc(n * 8), de = ts_dev_alloc(n * 8);
    assert_cu_ok(cuMemcpyHtoD(dx, x, n * 8));
    int nn = n;
    LAUNCH(ts_get_function(m, "dmath"), n / 256, 1, 1, 256, 1, 1, 0, &dx, &ds, &de, &nn);
    assert_cu_ok(cuMemcpyDtoH(s, ds, n * 8));
    assert_cu_ok(cuMemcpyDtoH(e, de, n * 8));
    uint64_t worst_s = 0, worst_e = 0;
    for (int i = 0; i < n; ++i) {
        const double hs = sin(x[i]), he = exp(x[i]);
        /* sin near a zero: compare absolutely (a few ulp of 1). */
        const uint64_t us = fabs(hs) < 1e-3 ? (fabs(s[i] - hs) <= 4 * 2.220446049250313e-16 ? 0 : 99) : ulps(s[i], hs);
        const uint64_t ue = he == 0.0 || isinf(he) ? (e[i] == he ? 0 : 99) : ulps(e[i], he);
        if (us > worst_s) worst_s = us;
        if (ue > worst_e) worst_e = ue;
        if (us > 4 || ue > 4)
            fail_msg("x = %.17g: GPU sin %.17g exp %.17g, host %.17g %.17g (%llu, %llu ulp)", x[i], s[i], e[i], hs, he,
                     (unsigned long long)us, (unsigned long long)ue);
    }
    print_message("double sin/exp on 1M values: at most %llu / %llu ulp from the host's libm\n",
                  (unsigned long long)worst_s, (unsigned long long)worst_e);
    assert_cu_ok(cuModuleUnload(m));
}

/* Runs mix() from a module and returns the outputs (ts_malloc'ed). */
static void run_mix(CUmodule m, const unsigned *in, int n, unsigned *out, float *fout) {
    CUdeviceptr tab = 0;
    assert_cu_ok(cuModuleGetGlobal(&tab, NULL, m, "c_tab"));
    int t[256];
    for (int i = 0; i < 256; ++i) t[i] = i * 3;
    assert_cu_ok(cuMemcpyHtoD(tab, t, sizeof t));
    CUdeviceptr din = ts_dev_alloc((size_t)n * 4), dout = ts_dev_alloc((size_t)n * 4), dfout = ts_dev_alloc((size_t)n * 4);
    assert_cu_ok(cuMemcpyHtoD(din, in, (size_t)n * 4));
    LAUNCH(ts_get_function(m, "mix"), (unsigned)(n + 255) / 256, 1, 1, 256, 1, 1, 0, &din, &dout, &dfout, &n);
    assert_cu_ok(cuMemcpyDtoH(out, dout, (size_t)n * 4));
    assert_cu_ok(cuMemcpyDtoH(fout, dfout, (size_t)n * 4));
    assert_cu_ok(cuMemFree(din));
    assert_cu_ok(cuMemFree(dout));
    assert_cu_ok(cuMemFree(dfout));
}

static void test_hw_same_kernel_every_format(void **state) {
    (void)state;
    CUmodule cubin = hw_module();
    const int arch = ts_device_arch(), n = 1 << 20;
    unsigned *in = ts_malloc((size_t)n * 4);
    ts_fill_random(in, (size_t)n * 4, 0xf0);
    unsigned *ref = ts_malloc((size_t)n * 4), *out = ts_malloc((size_t)n * 4);
    float *fref = ts_malloc((size_t)n * 4), *fout = ts_malloc((size_t)n * 4);
    run_mix(cubin, in, n, ref, fref);
    for (int i = 0; i < n; ++i) {
        unsigned h = in[i] * 2654435761u;
        h ^= h >> 13;
        h *= 0x5bd1e995u;
        h ^= h >> 15;
        const float f = (float)(h & 0xffff) * 0.0078125f + 0.5f;
        if (ref[i] != h + (unsigned)(i & 255) * 3 || memcmp(&fref[i], &f, 4) != 0)
            fail_msg("cubin: mix[%d] = %u / %a, expected %u / %a", i, ref[i], (double)fref[i], h + (i & 255) * 3,
                     (double)f);
    }
    assert_cu_ok(cuModuleUnload(cubin));

    /* PTX text (JIT). */
    size_t size = 0;
    char *ptx = ts_compile_ptx(kSource, "hw_kernels.cu", arch, &size);
    if (!ptx) fail_msg("NVRTC could not compile the kernels to PTX");
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoadData(&m, ptx));
    free(ptx);
    run_mix(m, in, n, out, fout);
    assert_bytes_equal(ref, out, (size_t)n * 4);
    assert_bytes_equal(fref, fout, (size_t)n * 4);
    assert_cu_ok(cuModuleUnload(m));

    const char *why = NULL;
    if (!ts_nvcc_available(&why)) ts_skip("fatbins: %s", why);
    char sass[64], virt[64];
    snprintf(sass, sizeof sass, "arch=compute_%d,code=sm_%d", arch, arch);
    snprintf(virt, sizeof virt, "arch=compute_%d,code=compute_%d", arch, arch);
    const char *g1[] = {sass}, *g2[] = {virt}, *compress[] = {"-compress-mode=size"};
    void *fatbins[2];
    fatbins[0] = ts_compile_fatbin(kSource, g1, 1, NULL, 0, &size);
    fatbins[1] = ts_compile_fatbin(kSource, g2, 1, compress, 1, &size);
    for (int k = 0; k < 2; ++k) {
        if (!fatbins[k]) fail_msg("nvcc -fatbin failed");
        assert_cu_ok(cuModuleLoadFatBinary(&m, fatbins[k]));
        memset(out, 0, (size_t)n * 4);
        run_mix(m, in, n, out, fout);
        assert_bytes_equal(ref, out, (size_t)n * 4);
        assert_bytes_equal(fref, fout, (size_t)n * 4);
        assert_cu_ok(cuModuleUnload(m));
        free(fatbins[k]);
    }
}

static void test_hw_10000_launches(void **state) {
    (void)state;
    CUmodule m = hw_module();
    CUfunction f = ts_get_function(m, "counter_inc");
    CUdeviceptr c = ts_dev_alloc(8);
    assert_cu_ok(cuMemsetD32(c, 0, 2));
    assert_cu_ok(cuCtxSynchronize());
    void *params[] = {&c};
    const int n = 10000;
    /* Warm up (first launch sets up local memory, caches). */
    assert_cu_ok(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    assert_cu_ok(cuCtxSynchronize());
    double t = ts_now();
    for (int i = 0; i < n; ++i) assert_cu_ok(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    const double submitted = ts_now() - t;
    assert_cu_ok(cuCtxSynchronize());
    const double done = ts_now() - t;
    unsigned long long v = 0;
    assert_cu_ok(cuMemcpyDtoH(&v, c, 8));
    print_message("10,000 launches: submitted in %.2f ms (%.2f us each), done in %.2f ms (%.2f us each)\n",
                  submitted * 1e3, submitted * 1e6 / n, done * 1e3, done * 1e6 / n);
    assert_int_equal(v, (unsigned long long)n + 1);
    assert_cu_ok(cuModuleUnload(m));
}

/* HtoD -> kernel -> DtoH -> kernel -> DtoH on the NULL stream: each step
 * sees the one before it, across the copy engine and the compute engine. */
static void test_hw_kernels_and_copies_interleaved(void **state) {
    (void)state;
    CUmodule m = hw_module();
    CUfunction f = ts_get_function(m, "scale_add");
    const unsigned n = 16u << 20; /* 64 MiB: copies take a while */
    const size_t bytes = (size_t)n * 4;
    unsigned *src = NULL, *out1 = NULL, *out2 = NULL;
    assert_cu_ok(cuMemAllocHost((void **)&src, bytes));
    assert_cu_ok(cuMemAllocHost((void **)&out1, bytes));
    assert_cu_ok(cuMemAllocHost((void **)&out2, bytes));
    ts_fill_random(src, bytes, 0x1e);
    CUdeviceptr d = ts_dev_alloc(bytes);
    unsigned mul1 = 3, add1 = 7, mul2 = 1, add2 = 0x01000001, nn = n;
    for (int async = 0; async < 2; ++async) {
        memset(out1, 0, bytes);
        memset(out2, 0, bytes);
        if (async) {
            assert_cu_ok(cuMemcpyHtoDAsync(d, src, bytes, NULL));
            LAUNCH(f, 528, 1, 1, 256, 1, 1, 0, &d, &mul1, &add1, &nn);
            assert_cu_ok(cuMemcpyDtoHAsync(out1, d, bytes, NULL));
            LAUNCH(f, 528, 1, 1, 256, 1, 1, 0, &d, &mul2, &add2, &nn);
            assert_cu_ok(cuMemcpyDtoHAsync(out2, d, bytes, NULL));
            assert_cu_ok(cuCtxSynchronize());
        } else {
            assert_cu_ok(cuMemcpyHtoD(d, src, bytes));
            LAUNCH(f, 528, 1, 1, 256, 1, 1, 0, &d, &mul1, &add1, &nn);
            assert_cu_ok(cuMemcpyDtoH(out1, d, bytes));
            LAUNCH(f, 528, 1, 1, 256, 1, 1, 0, &d, &mul2, &add2, &nn);
            assert_cu_ok(cuMemcpyDtoH(out2, d, bytes));
        }
        for (unsigned i = 0; i < n; ++i) {
            const unsigned a = src[i] * 3 + 7, b = a + 0x01000001;
            if (out1[i] != a || out2[i] != b)
                fail_msg("%s: element %u: after kernel 1 %u (expected %u), after kernel 2 %u (expected %u)",
                         async ? "async" : "sync", i, out1[i], a, out2[i], b);
        }
    }
    assert_cu_ok(cuMemFree(d));
    assert_cu_ok(cuMemFreeHost(src));
    assert_cu_ok(cuMemFreeHost(out1));
    assert_cu_ok(cuMemFreeHost(out2));
    assert_cu_ok(cuModuleUnload(m));
}

/* A register-bound kernel runs with MAX_THREADS_PER_BLOCK threads (the
 * attribute is not too generous) and is refused one warp more. */
static void test_hw_register_bound_kernel(void **state) {
    (void)state;
    CUmodule m = hw_module();
    CUfunction f = ts_get_function(m, "regs_heavy");
    int regs = 0, max_threads = 0;
    assert_cu_ok(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    assert_cu_ok(cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
    print_message("regs_heavy: %d registers, %d threads per block\n", regs, max_threads);
    const int n = max_threads;
    float *in = ts_malloc((size_t)128 * n * 4), *out = ts_malloc((size_t)128 * n * 4);
    for (int i = 0; i < 128 * n; ++i) in[i] = (float)((i * 7 + i / 5) & 3);
    CUdeviceptr din = ts_dev_alloc((size_t)128 * n * 4), dout = ts_dev_alloc((size_t)128 * n * 4);
    assert_cu_ok(cuMemcpyHtoD(din, in, (size_t)128 * n * 4));
    int nn = n;
    LAUNCH(f, 1, 1, 1, (unsigned)n, 1, 1, 0, &dout, &din, &nn);
    assert_cu_ok(cuCtxSynchronize());
    assert_cu_ok(cuMemcpyDtoH(out, dout, (size_t)128 * n * 4));
    for (int t = 0; t < n; ++t) {
        float s = 0.f;
        for (int i = 0; i < 128; ++i) s += in[i * n + t] * in[((i * 7) % 128) * n + t];
        for (int i = 0; i < 128; ++i)
            if (out[i * n + t] != in[i * n + t] * s) fail_msg("regs_heavy: thread %d value %d wrong", t, i);
    }
    if (max_threads < 1024) {
        void *params[] = {&dout, &din, &nn};
        assert_cu(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                  cuLaunchKernel(f, 1, 1, 1, (unsigned)max_threads + 32, 1, 1, 0, NULL, params, NULL));
    }
    assert_cu_ok(cuCtxSynchronize());
    assert_cu_ok(cuModuleUnload(m));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_hw_vector_add_16m),
        TEST(test_hw_index_map_3d),
        TEST(test_hw_shared_reduction_48k),
        TEST(test_hw_shared_reduction_200k),
        TEST(test_hw_device_globals),
        TEST(test_hw_constant_data),
        TEST(test_hw_struct_and_many_params),
        TEST(test_hw_large_local_array),
        TEST(test_hw_atomics),
        TEST(test_hw_double_sin_exp),
        TEST(test_hw_same_kernel_every_format),
        TEST(test_hw_kernels_and_copies_interleaved),
        TEST(test_hw_register_bound_kernel),
        /* Last: more launches than the GPFIFO has entries (see test_launch_sim's flood test). */
        TEST(test_hw_10000_launches),
    };
    return cmocka_run_group_tests_name("hw_kernels", tests, NULL, NULL);
}
