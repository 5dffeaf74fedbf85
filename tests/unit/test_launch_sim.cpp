// Kernel launches as the simulated GPU receives them (NVLITE_DEVICE=sim,
// set by main before cuInit).
//
// Kernels are compiled with NVRTC (dlopen'ed; the tests skip without it),
// loaded and launched through the C API; the sim records every launch (the
// QMD bytes, constant buffer 0 ...: lib/kdrv/sim/sim_control.h) without
// running it. Checked here:
//   - parameters of many signatures land in constant bank 0 at paramBase +
//     their C ABI offsets (natural alignment, which is how CUDA lays them
//     out), byte for byte, through kernelParams and through 'extra';
//   - the driver area of bank 0 (blockDim, gridDim) and the QMD V04 fields
//     (version, type, SASS version, grid, block, registers, program address,
//     shared memory, constant buffers);
//   - launch limits answered with libcuda's codes before anything reaches
//     the GPU (the sim's launch counter does not move).
#include <elf.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>
#include <set>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "core/module.h"
#include "defs/qmd_v04.h"
#include "kdrv/sim/sim_control.h"
#include "nvlite/cuda.h"
#include "support/test_support.h"

// Exported by the library; cuda.h declares it only under
// CUDA_API_PER_THREAD_DEFAULT_STREAM (as the cuLaunchKernel it maps to).
extern "C" CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                       unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                       unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                       void** kernelParams, void** extra);

namespace sim = nvl::kdrv::sim;
namespace nv = nvl::nv;

namespace {

// ------------------------------------------------------------------ kernels

// Parameter types, mirrored on the host with the same alignment as the
// device's (CUDA's vector_types.h: float2 8-byte, float4 16-byte aligned).
struct F2 {
    alignas(8) float x;
    float y;
};
struct alignas(16) F4 {
    float x, y, z, w;
};
struct Padded {  // 24 bytes: c@0, d@8, s@16, i@20
    char c;
    double d;
    short s;
    int i;
};
struct Big {
    unsigned char b[4096];
};
static_assert(sizeof(F2) == 8 && alignof(F2) == 8);
static_assert(sizeof(F4) == 16 && alignof(F4) == 16);
static_assert(sizeof(Padded) == 24 && offsetof(Padded, d) == 8 && offsetof(Padded, i) == 20);

const char* const kSource = R"(
struct Padded { char c; double d; short s; int i; };
struct Big { unsigned char b[4096]; };

extern "C" {
__device__ int g_sink;
__device__ int g_data[16] = {1, 2, 3};
__constant__ int c_table[64] = {11, 22, 33, 44, 55, 66, 77, 88};

__global__ void k_noparams() { g_sink = 1; }

__global__ void k_ptrs(int* a, const float* b, void* c, double* d) {
    a[threadIdx.x] = (int)b[threadIdx.x];
    ((char*)c)[threadIdx.x] = 1;
    d[threadIdx.x] = 2.0;
}

__global__ void k_scalars(char c, short s, int i, long long l, float f, double d, unsigned char u, int* out) {
    out[threadIdx.x] = c + s + i + (int)l + (int)f + (int)d + u;
}

__global__ void k_vectors(float2 a, char c, float4 b, short s, float2 d, double e, float* out) {
    out[threadIdx.x] = a.x + a.y + c + b.x + b.y + b.z + b.w + s + d.x + d.y + (float)e;
}

__global__ void k_struct(char c, Padded p, int tail, double* out) {
    out[threadIdx.x] = c + p.c + p.d + p.s + p.i + tail;
}

__global__ void k_many(char a0, int a1, double a2, short a3, float* a4, float2 a5, char a6, long long a7, float a8,
                       int* a9, unsigned char a10, float4 a11, short a12, double a13, int a14, char a15,
                       unsigned long long a16, Padded a17, float a18, char a19) {
    double s = a0 + a1 + a2 + a3 + a5.x + a5.y + a6 + a7 + a8 + a10 + a11.x + a11.y + a11.z + a11.w + a12 + a13 +
               a14 + a15 + a16 + a17.c + a17.d + a17.s + a17.i + a18 + a19;
    a4[threadIdx.x] = (float)s;
    a9[threadIdx.x] = (int)s;
}

__global__ void k_big(int first, Big b, int after, int* out) {
    out[threadIdx.x] = first + b.b[threadIdx.x % 4096] + after;
}

__global__ void k_big4k(Big b) { g_sink = b.b[threadIdx.x % 4096]; }

// CUDA's largest parameter block (Volta and later, CUDA 12.1+): 32764 bytes.
struct Huge { unsigned char b[32760]; };
__global__ void k_huge(Huge h, int last) { g_sink = h.b[threadIdx.x] + last; }

// 16 KiB of stack per thread, indexed with data the compiler cannot know.
__global__ void k_local(int* out, int n) {
    int a[4096];
    for (int i = 0; i < 4096; ++i) a[(i * n) & 4095] = out[i];
    out[threadIdx.x] = a[(threadIdx.x * 7 + n) & 4095];
}

__global__ void k_const(int* out) { out[threadIdx.x] = c_table[threadIdx.x % 64] + g_data[threadIdx.x % 16]; }

__global__ void k_shared(int* out) {
    __shared__ int s[512];
    s[threadIdx.x % 512] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[511 - threadIdx.x % 512];
}

__global__ void k_dynshared(int* out) {
    extern __shared__ int d[];
    d[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = d[blockDim.x - 1 - threadIdx.x];
}

__global__ void __launch_bounds__(128) k_bounded(int* out) { out[threadIdx.x] = 1; }

// Named barrier 5 (bar.sync id, threads): barriers 0..5 in the QMD.
__global__ void k_named_barrier(int* out) {
    out[threadIdx.x] = 1;
    asm volatile("bar.sync 5, 64;");
    out[threadIdx.x + 64] = 2;
}

// All the registers it may have (TS_REGS_KERNEL_BODY).
__global__ void k_regs(float* out, const float* in, int n) {
)" TS_REGS_KERNEL_BODY R"(}
}
)";

constexpr uint32_t kParamBase = 0x210;  // sm_90: parameters start here in constant bank 0
constexpr uint32_t kCbufBlockDim = 0x0;
constexpr uint32_t kCbufGridDim = 0xc;

struct Suite {
    bool haveNvrtc = false;
    const char* why = nullptr;
    std::vector<uint8_t> cubin;
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    CUmodule mod = nullptr;
    int arch = 0;
};
Suite S;

void requireKernels() {
    if (!S.haveNvrtc) ts_skip("%s", S.why);
}

CUfunction fn(const char* name) {
    CUfunction f = nullptr;
    assert_cu_ok(cuModuleGetFunction(&f, S.mod, name));
    return f;
}

int attr(CUfunction f, CUfunction_attribute a) {
    int v = -1;
    assert_cu_ok(cuFuncGetAttribute(&v, a, f));
    return v;
}

int groupSetup(void**) {
    if (cuInit(0) != CUDA_SUCCESS) return -1;
    if (cuDeviceGet(&S.dev, 0) != CUDA_SUCCESS) return -1;
    int major = 0, minor = 0;
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, S.dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, S.dev);
    S.arch = major * 10 + minor;
    if (cuCtxCreate(&S.ctx, nullptr, 0, S.dev) != CUDA_SUCCESS) return -1;
    S.haveNvrtc = ts_nvrtc_available(&S.why);
    if (!S.haveNvrtc) return 0;
    size_t size = 0;
    void* cubin = ts_compile_cubin(kSource, "launch_sim.cu", S.arch, &size);
    if (!cubin) {
        print_error("NVRTC could not compile the test kernels\n");
        return -1;
    }
    S.cubin.assign(static_cast<uint8_t*>(cubin), static_cast<uint8_t*>(cubin) + size);
    free(cubin);
    CUresult r = cuModuleLoadData(&S.mod, S.cubin.data());
    if (r != CUDA_SUCCESS) {
        print_error("cuModuleLoadData of the test cubin returned %s\n", ts_cu_name(r));
        return -1;
    }
    return 0;
}

int groupTeardown(void**) {
    if (S.mod) cuModuleUnload(S.mod);
    if (S.ctx) cuCtxDestroy(S.ctx);
    return 0;
}

// ------------------------------------------------------------------ launching

struct Dims {
    unsigned x, y, z;
};

// Launches once and returns what the sim recorded for it.
sim::LaunchRecord launchOne(CUfunction f, Dims grid, Dims block, unsigned shared, void** params, void** extra = nullptr,
                            const char* what = "launch") {
    assert_cu_ok(cuCtxSynchronize());
    sim::clearLaunches();
    const uint64_t before = sim::counters().launches;
    CUresult r = cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared, nullptr, params, extra);
    if (r != CUDA_SUCCESS) fail_msg("%s: cuLaunchKernel returned %s", what, ts_cu_name(r));
    assert_cu_ok(cuCtxSynchronize());
    auto log = sim::launches();
    if (log.size() != 1) fail_msg("%s: the sim recorded %zu launches, expected 1", what, log.size());
    assert_int_equal(sim::counters().launches, before + 1);
    return log[0];
}

uint64_t q(const sim::LaunchRecord& r, nv::MultiWordField f) { return nv::qmdGet(r.qmd.data(), f); }

uint32_t cb0Word(const sim::LaunchRecord& r, uint32_t offset) {
    assert_true(r.cb0.size() >= offset + 4);
    uint32_t v;
    memcpy(&v, r.cb0.data() + offset, 4);
    return v;
}

// Constant bank 0 holds the parameters at paramBase, byte for byte.
void expectParams(const sim::LaunchRecord& r, const void* expected, size_t n, const char* what) {
    if (r.cb0.size() < kParamBase + n)
        fail_msg("%s: constant bank 0 holds %zu bytes, the parameters end at 0x%zx", what, r.cb0.size(),
                 kParamBase + n);
    assert_true(r.cb0Size >= kParamBase + n);
    assert_bytes_named(expected, r.cb0.data() + kParamBase, n, what);
}

// A kernel parameter's bytes within the host struct that mirrors the list.
struct Param {
    size_t offset, size;
};
#define PARAM(T, m) Param{offsetof(T, m), sizeof(static_cast<T*>(nullptr)->m)}

// The parameter offsets the loader took from the cubin equal the ABI's.
void expectLayout(CUfunction f, const std::vector<Param>& params) {
    nvl::core::Function* fun = nvl::core::Function::fromHandle(f);
    assert_non_null(fun);
    const auto& k = fun->kernel();
    assert_int_equal(k.paramBase, kParamBase);
    assert_int_equal(k.params.size(), params.size());
    for (size_t i = 0; i < params.size(); ++i) {
        if (k.params[i].offset != params[i].offset || k.params[i].size != params[i].size)
            fail_msg("%s parameter %zu: the cubin says offset %u size %u, the ABI offset %zu size %zu",
                     fun->name().c_str(), i, k.params[i].offset, k.params[i].size, params[i].offset, params[i].size);
    }
}

// A copy of the n bytes of 'args' with every byte between parameters set to
// 'gap'; a parameter's own bytes (a struct's inner padding too) stay as they are.
std::vector<uint8_t> withGaps(const void* args, size_t n, const std::vector<Param>& params, uint8_t gap) {
    std::vector<uint8_t> out(n, gap);
    for (const Param& p : params)
        memcpy(out.data() + p.offset, static_cast<const uint8_t*>(args) + p.offset, p.size);
    return out;
}

// Launches 'kernel' with 'args' both ways and checks constant bank 0. Through
// kernelParams each parameter is copied whole and the gaps between them are
// zero; through 'extra' the buffer goes whole, gaps (set to 0xa5) included,
// as libcuda copies it.
void checkParams(const char* kernel, void* args, const std::vector<Param>& params) {
    CUfunction f = fn(kernel);
    expectLayout(f, params);
    const size_t n = params.back().offset + params.back().size;
    std::vector<void*> pointers;
    for (const Param& p : params) pointers.push_back(static_cast<uint8_t*>(args) + p.offset);

    std::string what = std::string(kernel) + " (kernelParams)";
    sim::LaunchRecord a = launchOne(f, {1, 1, 1}, {32, 1, 1}, 0, pointers.data(), nullptr, what.c_str());
    expectParams(a, withGaps(args, n, params, 0).data(), n, what.c_str());

    std::vector<uint8_t> buffer = withGaps(args, n, params, 0xa5);
    size_t size = n;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    what = std::string(kernel) + " (extra)";
    sim::LaunchRecord b = launchOne(f, {1, 1, 1}, {32, 1, 1}, 0, nullptr, extra, what.c_str());
    expectParams(b, buffer.data(), n, what.c_str());
}

// ------------------------------------------------------------------ parameters

void test_params_pointers(void**) {
    requireKernels();
    struct A {
        uint64_t a, b, c, d;
    } args;
    args = {0x00007f0012345678ull, 0x1122334455667788ull, 0xffffffffffffffffull, 0x0000000100000000ull};
    checkParams("k_ptrs", &args, {PARAM(A, a), PARAM(A, b), PARAM(A, c), PARAM(A, d)});
}

void test_params_scalars(void**) {
    requireKernels();
    struct A {
        char c;
        short s;
        int i;
        long long l;
        float f;
        double d;
        unsigned char u;
        uint64_t out;
    } args;
    ts_fill_random(&args, sizeof args, 101);  // gaps and inner padding too
    args.c = -3;
    args.s = -12345;
    args.i = 0x7eadbeef;
    args.l = -0x123456789abcdefll;
    args.f = 3.25f;
    args.d = -1.0e300;
    args.u = 0xfe;
    args.out = 0xdeadbeefcafef00dull;
    checkParams("k_scalars", &args, {PARAM(A, c), PARAM(A, s), PARAM(A, i), PARAM(A, l), PARAM(A, f), PARAM(A, d), PARAM(A, u), PARAM(A, out)});
}

void test_params_vectors(void**) {
    requireKernels();
    struct A {
        F2 a;
        char c;
        F4 b;
        short s;
        F2 d;
        double e;
        uint64_t out;
    } args;
    ts_fill_random(&args, sizeof args, 102);  // gaps and inner padding too
    args.a = {1.5f, -2.5f};
    args.c = 'x';
    args.b = {1.f, 2.f, 3.f, 4.f};
    args.s = 77;
    args.d = {-8.f, 9.f};
    args.e = 6.02e23;
    args.out = 0x1000;
    static_assert(offsetof(A, b) == 16 && offsetof(A, d) == 40);
    checkParams("k_vectors", &args, {PARAM(A, a), PARAM(A, c), PARAM(A, b), PARAM(A, s), PARAM(A, d), PARAM(A, e), PARAM(A, out)});
}

void test_params_struct_with_padding(void**) {
    requireKernels();
    struct A {
        char c;
        Padded p;
        int tail;
        uint64_t out;
    } args;
    ts_fill_random(&args, sizeof args, 103);  // gaps and inner padding too
    args.c = 1;
    args.p.c = 2;
    args.p.d = 3.0;
    args.p.s = 4;
    args.p.i = 5;
    args.tail = 6;
    args.out = 7;
    // The struct goes whole, its own (random) padding included: through
    // kernelParams libcuda copies sizeof(Padded) bytes from the pointer.
    static_assert(sizeof(Padded) == 24);
    checkParams("k_struct", &args, {PARAM(A, c), PARAM(A, p), PARAM(A, tail), PARAM(A, out)});
}

void test_params_twenty_mixed(void**) {
    requireKernels();
    struct A {
        char a0;
        int a1;
        double a2;
        short a3;
        uint64_t a4;
        F2 a5;
        char a6;
        long long a7;
        float a8;
        uint64_t a9;
        unsigned char a10;
        F4 a11;
        short a12;
        double a13;
        int a14;
        char a15;
        unsigned long long a16;
        Padded a17;
        float a18;
        char a19;
    } args;
    ts_fill_random(&args, sizeof args, 104);  // gaps and inner padding too
    std::mt19937_64 rng(20);
    args.a0 = 1;
    args.a1 = static_cast<int>(rng());
    args.a2 = 2.5;
    args.a3 = static_cast<short>(rng());
    args.a4 = rng();
    args.a5 = {1.f, 2.f};
    args.a6 = 6;
    args.a7 = static_cast<long long>(rng());
    args.a8 = 8.5f;
    args.a9 = rng();
    args.a10 = 10;
    args.a11 = {11.f, 12.f, 13.f, 14.f};
    args.a12 = 12;
    args.a13 = -13.0;
    args.a14 = 14;
    args.a15 = 15;
    args.a16 = rng();
    args.a17.c = 17;
    args.a17.d = 17.5;
    args.a17.s = 170;
    args.a17.i = 1700;
    args.a18 = 18.f;
    args.a19 = 19;
    checkParams("k_many", &args, {PARAM(A, a0), PARAM(A, a1), PARAM(A, a2), PARAM(A, a3), PARAM(A, a4), PARAM(A, a5), PARAM(A, a6), PARAM(A, a7), PARAM(A, a8), PARAM(A, a9), PARAM(A, a10), PARAM(A, a11), PARAM(A, a12), PARAM(A, a13), PARAM(A, a14), PARAM(A, a15), PARAM(A, a16), PARAM(A, a17), PARAM(A, a18), PARAM(A, a19)});
}

void test_params_4k_struct(void**) {
    requireKernels();
    struct A {
        int first;
        Big b;
        int after;
        uint64_t out;
    } args;
    ts_fill_random(&args, sizeof args, 105);  // gaps and inner padding too
    args.first = 0x01020304;
    ts_fill_random(&args.b, sizeof args.b, 4096);
    args.after = 0x0a0b0c0d;
    args.out = 0x2000;
    static_assert(offsetof(A, after) == 4100);
    checkParams("k_big", &args, {PARAM(A, first), PARAM(A, b), PARAM(A, after), PARAM(A, out)});

    Big only;
    ts_fill_random(&only, sizeof only, 4097);
    checkParams("k_big4k", &only, {{0, sizeof only}});
}

void test_params_largest_block(void**) {
    requireKernels();
    struct A {
        unsigned char b[32760];
        int last;
    };
    static A args;
    ts_fill_random(&args, sizeof args, 32764);
    static_assert(sizeof(A) == 32764);
    checkParams("k_huge", &args, {PARAM(A, b), PARAM(A, last)});
}

void test_params_none(void**) {
    requireKernels();
    CUfunction f = fn("k_noparams");
    sim::LaunchRecord r = launchOne(f, {1, 1, 1}, {1, 1, 1}, 0, nullptr);
    assert_true(r.cb0Size >= kParamBase);
    // An empty kernelParams array and an empty 'extra' are fine too.
    void* none[1] = {nullptr};
    launchOne(f, {1, 1, 1}, {1, 1, 1}, 0, none);
    void* extra[] = {CU_LAUNCH_PARAM_END};
    launchOne(f, {1, 1, 1}, {1, 1, 1}, 0, nullptr, extra);
}

// The same parameter block lands again when the caller's memory changes after
// the launch call returned (libcuda copies parameters at the call).
void test_params_copied_at_call(void**) {
    requireKernels();
    CUfunction f = fn("k_ptrs");
    uint64_t v[4] = {1, 2, 3, 4};
    void* params[] = {&v[0], &v[1], &v[2], &v[3]};
    assert_cu_ok(cuCtxSynchronize());
    sim::clearLaunches();
    assert_cu_ok(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    v[0] = v[1] = v[2] = v[3] = 0xbad;
    assert_cu_ok(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    assert_cu_ok(cuCtxSynchronize());
    auto log = sim::launches();
    assert_int_equal(log.size(), 2);
    const uint64_t first[4] = {1, 2, 3, 4}, second[4] = {0xbad, 0xbad, 0xbad, 0xbad};
    expectParams(log[0], first, sizeof first, "first launch");
    expectParams(log[1], second, sizeof second, "second launch");
}

// ------------------------------------------------------------------ driver area and QMD

void test_driver_area_and_qmd_geometry(void**) {
    requireKernels();
    CUfunction f = fn("k_ptrs");
    uint64_t v[4] = {0x1000, 0x2000, 0x3000, 0x4000};
    void* params[] = {&v[0], &v[1], &v[2], &v[3]};
    const struct {
        Dims grid, block;
    } cases[] = {
        {{1, 1, 1}, {1, 1, 1}},
        {{7, 5, 3}, {8, 4, 2}},
        {{2147483647u, 65535, 65535}, {1024, 1, 1}},
        {{2147483647u, 1, 1}, {1, 1, 64}},
        {{1, 65535, 1}, {1, 1024, 1}},
        {{1, 1, 65535}, {32, 32, 1}},
        {{65536, 2, 3}, {4, 16, 16}},
        {{3, 1, 2}, {1, 2, 64}},
    };
    const int regs = attr(f, CU_FUNC_ATTRIBUTE_NUM_REGS);
    for (const auto& c : cases) {
        char what[128];
        snprintf(what, sizeof what, "grid %ux%ux%u block %ux%ux%u", c.grid.x, c.grid.y, c.grid.z, c.block.x,
                 c.block.y, c.block.z);
        sim::LaunchRecord r = launchOne(f, c.grid, c.block, 0, params, nullptr, what);
        // Constant bank 0 driver area.
        assert_int_equal(cb0Word(r, kCbufBlockDim + 0), c.block.x);
        assert_int_equal(cb0Word(r, kCbufBlockDim + 4), c.block.y);
        assert_int_equal(cb0Word(r, kCbufBlockDim + 8), c.block.z);
        assert_int_equal(cb0Word(r, kCbufGridDim + 0), c.grid.x);
        assert_int_equal(cb0Word(r, kCbufGridDim + 4), c.grid.y);
        assert_int_equal(cb0Word(r, kCbufGridDim + 8), c.grid.z);
        expectParams(r, v, sizeof v, what);
        // QMD.
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_QMD_MAJOR_VERSION), 4);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_QMD_TYPE), nv::NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_SASS_VERSION), 0x90);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GRID_WIDTH), c.grid.x);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GRID_HEIGHT), c.grid.y);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GRID_DEPTH), c.grid.z);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0), c.block.x);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION1), c.block.y);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION2), c.block.z);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_REGISTER_COUNT), regs);
        // What the sim decoded agrees.
        assert_int_equal(r.qmdMajorVersion, 4);
        assert_int_equal(r.grid[0], c.grid.x);
        assert_int_equal(r.block[2], c.block.z);
        assert_int_equal(r.registerCount, regs);
        // QMD 256-byte aligned (SEND_PCAS_A takes it >> 8), bank 0 64-byte aligned.
        assert_int_equal(r.qmdVa % 256, 0);
        assert_int_not_equal(r.cb0Va, 0);
        assert_int_equal(r.cb0Va % 64, 0);
        assert_true(q(r, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID(0)) == 1);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_SIZE_SHIFTED4(0)) << 4, r.cb0Size);
        assert_true(r.cb0Size >= kParamBase + sizeof v);
        assert_true(r.cb0Size <= 64 * 1024);
        // The QMD and bank 0 do not overlap.
        assert_true(r.cb0Va + r.cb0Size <= r.qmdVa || r.qmdVa + 384 <= r.cb0Va);
    }
}

// Finds section 'name' of an ELF64 image: offset and size, or false.
bool elfSection(const std::vector<uint8_t>& elf, const std::string& name, size_t* offset, size_t* size) {
    if (elf.size() < sizeof(Elf64_Ehdr)) return false;
    Elf64_Ehdr eh;
    memcpy(&eh, elf.data(), sizeof eh);
    if (eh.e_shoff + static_cast<uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr) > elf.size()) return false;
    auto sh = [&](size_t i) {
        Elf64_Shdr s;
        memcpy(&s, elf.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof s);
        return s;
    };
    const Elf64_Shdr strtab = sh(eh.e_shstrndx);
    for (size_t i = 0; i < eh.e_shnum; ++i) {
        const Elf64_Shdr s = sh(i);
        const char* n = reinterpret_cast<const char*>(elf.data() + strtab.sh_offset + s.sh_name);
        if (name == n) {
            *offset = s.sh_offset;
            *size = s.sh_size;
            return true;
        }
    }
    return false;
}

void test_qmd_program_address_in_module(void**) {
    requireKernels();
    // The module's base, from a global: its address minus its image offset.
    CUdeviceptr g = 0;
    size_t gBytes = 0;
    assert_cu_ok(cuModuleGetGlobal(&g, &gBytes, S.mod, "g_data"));
    assert_int_equal(gBytes, 64);
    // The same image laid out again by the loader (the layout does not
    // depend on where it goes).
    nvl::loader::JitOptions jit;
    nvl::Result<nvl::loader::Image> loaded =
        nvl::loader::load(S.cubin.data(), S.cubin.size(), S.arch / 10, S.arch % 10, jit);
    assert_true(loaded.ok());
    const nvl::loader::Image& image = loaded.value();
    const nvl::loader::Global* gi = image.findGlobal("g_data");
    assert_non_null(gi);
    const uint64_t base = g - gi->imageOffset;
    const char* kernels[] = {"k_noparams", "k_ptrs", "k_many", "k_big", "k_const", "k_shared", "k_regs", "k_local"};
    std::set<uint64_t> seen;
    for (const char* name : kernels) {
        CUfunction f = fn(name);
        // The parameter block exactly as large as the kernel's.
        size_t zsize = nvl::core::Function::fromHandle(f)->kernel().paramBytes;
        std::vector<uint8_t> zeros(zsize + 1, 0);
        void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, zeros.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &zsize,
                         CU_LAUNCH_PARAM_END};
        sim::LaunchRecord r = launchOne(f, {1, 1, 1}, {32, 1, 1}, 0, nullptr, extra, name);
        const uint64_t pc = (q(r, nv::NVCBC0_QMDV04_00_PROGRAM_ADDRESS_UPPER) << 32) |
                            q(r, nv::NVCBC0_QMDV04_00_PROGRAM_ADDRESS_LOWER);
        assert_int_equal(pc, r.programAddress);
        const nvl::loader::Kernel* k = image.findKernel(name);
        assert_non_null(k);
        if (pc < base || pc + k->textSize > base + image.allocationBytes())
            fail_msg("%s: program address 0x%llx outside the module [0x%llx, +0x%llx)", name,
                     static_cast<unsigned long long>(pc), static_cast<unsigned long long>(base),
                     static_cast<unsigned long long>(image.allocationBytes()));
        assert_int_equal(pc, base + k->textOffset);
        assert_int_equal(pc % 128, 0);
        assert_true(seen.insert(pc).second);  // each kernel its own code
        // The code there is the cubin's .text.<kernel> (none of these has relocations in its text).
        size_t off = 0, size = 0;
        assert_true(elfSection(S.cubin, std::string(".text.") + name, &off, &size));
        assert_int_equal(size, k->textSize);
        assert_bytes_named(S.cubin.data() + off, image.bytes.data() + k->textOffset, size, name);
        assert_bytes_named(S.cubin.data() + off, reinterpret_cast<const void*>(pc), size, name);
        // Bank 0 is at least as large as the cubin's .nv.constant0.<kernel>.
        assert_true(elfSection(S.cubin, std::string(".nv.constant0.") + name, &off, &size));
        if (r.cb0Size < size) fail_msg("%s: bank 0 is %u bytes, .nv.constant0 %zu", name, r.cb0Size, size);
    }
}

void test_qmd_shared_memory_grows_with_dynamic(void**) {
    requireKernels();
    CUfunction f = fn("k_dynshared");
    const int staticShared = attr(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    assert_int_equal(staticShared, 0);
    uint64_t p = 0x1000;
    void* params[] = {&p};
    const unsigned sizes[] = {0, 4, 1000, 4096, 16384, 49152};
    uint32_t previous = 0;
    for (unsigned dyn : sizes) {
        sim::LaunchRecord r = launchOne(f, {1, 1, 1}, {128, 1, 1}, dyn, params, nullptr, "dynamic shared");
        const uint32_t shared = static_cast<uint32_t>(q(r, nv::NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE));
        assert_int_equal(shared, r.sharedMemoryBytes);
        if (shared < dyn) fail_msg("dynamic %u bytes: the QMD gives the block %u bytes of shared memory", dyn, shared);
        assert_true(shared >= previous);
        if (dyn) assert_true(shared - previous <= dyn + 128);
        previous = shared;
        // The SM's carveout for the launch holds the block's shared memory.
        const uint64_t minCfg = q(r, nv::NVCBC0_QMDV04_00_MIN_SM_CONFIG_SHARED_MEM_SIZE);
        const uint64_t maxCfg = q(r, nv::NVCBC0_QMDV04_00_MAX_SM_CONFIG_SHARED_MEM_SIZE);
        assert_true(minCfg >= 1 && (minCfg - 1) * 4096 >= shared);
        assert_true(minCfg <= maxCfg);
    }
    // A static 2 KiB array is counted too.
    CUfunction s = fn("k_shared");
    assert_int_equal(attr(s, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), 2048);
    sim::LaunchRecord r0 = launchOne(s, {1, 1, 1}, {128, 1, 1}, 0, params, nullptr, "static shared");
    sim::LaunchRecord r1 = launchOne(s, {1, 1, 1}, {128, 1, 1}, 4096, params, nullptr, "static + dynamic");
    const uint64_t s0 = q(r0, nv::NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE);
    const uint64_t s1 = q(r1, nv::NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE);
    assert_true(s0 >= 2048);
    assert_true(s1 >= 2048 + 4096);
    assert_true(s1 - s0 >= 4096 - 127 && s1 - s0 <= 4096 + 127);
}

void test_qmd_module_constant_bank(void**) {
    requireKernels();
    CUdeviceptr c = 0;
    size_t cBytes = 0;
    assert_cu_ok(cuModuleGetGlobal(&c, &cBytes, S.mod, "c_table"));
    assert_int_equal(cBytes, 64 * sizeof(int));
    // The initialiser is in device memory.
    int table[64];
    assert_cu_ok(cuMemcpyDtoH(table, c, sizeof table));
    const int first[8] = {11, 22, 33, 44, 55, 66, 77, 88};
    assert_bytes_named(first, table, sizeof first, "c_table");
    for (int i = 8; i < 64; ++i) assert_int_equal(table[i], 0);

    uint64_t p = 0x1000;
    void* params[] = {&p};
    sim::LaunchRecord r = launchOne(fn("k_const"), {1, 1, 1}, {64, 1, 1}, 0, params, nullptr, "k_const");
    // Some bank other than 0 is valid and covers c_table.
    bool found = false;
    for (uint32_t b = 1; b < 8; ++b) {
        if (!q(r, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID(b))) continue;
        const uint64_t va = ((q(r, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(b)) << 32) |
                             q(r, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(b)))
                            << 6;
        const uint64_t size = q(r, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_SIZE_SHIFTED4(b)) << 4;
        assert_true(size > 0 && size <= 64 * 1024);
        if (va <= c && c + cBytes <= va + size) found = true;
    }
    if (!found) fail_msg("no valid constant bank of the QMD covers c_table at 0x%llx", static_cast<unsigned long long>(c));
    assert_true(attr(fn("k_const"), CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES) >= 256);

    // A kernel that reads no __constant__ data has no module bank... except
    // what the compiler put there itself; at least bank 0 is valid.
    sim::LaunchRecord n = launchOne(fn("k_noparams"), {1, 1, 1}, {1, 1, 1}, 0, nullptr, nullptr, "k_noparams");
    assert_true(q(n, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID(0)) == 1);
}

// A kernel with a 16 KiB stack: the QMD gives each thread at least that much
// local memory (CUDA's LOCAL_SIZE_BYTES).
void test_qmd_local_memory(void**) {
    requireKernels();
    CUfunction f = fn("k_local");
    const int local = attr(f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    if (local < 16384) fail_msg("k_local: LOCAL_SIZE_BYTES %d, expected at least 16384", local);
    uint64_t p = 0x1000;
    int n = 3;
    void* params[] = {&p, &n};
    sim::LaunchRecord r = launchOne(f, {132, 1, 1}, {1024, 1, 1}, 0, params, nullptr, "k_local");
    const uint64_t lowSize = q(r, nv::NVCBC0_QMDV04_00_SHADER_LOCAL_MEMORY_LOW_SIZE);
    const uint64_t highSize = q(r, nv::NVCBC0_QMDV04_00_SHADER_LOCAL_MEMORY_HIGH_SIZE);
    if (lowSize + highSize < static_cast<uint64_t>(local))
        fail_msg("k_local needs %d bytes of local memory per thread; the QMD gives %llu + %llu", local,
                 static_cast<unsigned long long>(lowSize), static_cast<unsigned long long>(highSize));
    // A later kernel with a small stack still gets a valid QMD.
    sim::LaunchRecord s2 = launchOne(fn("k_noparams"), {1, 1, 1}, {1, 1, 1}, 0, nullptr, nullptr, "after k_local");
    assert_int_equal(q(s2, nv::NVCBC0_QMDV04_00_QMD_MAJOR_VERSION), 4);
}

void test_consecutive_launches_distinct(void**) {
    requireKernels();
    CUfunction f = fn("k_scalars");
    struct A {
        char c;
        short s;
        int i;
        long long l;
        float fl;
        double d;
        unsigned char u;
        uint64_t out;
    } args;
    memset(&args, 0, sizeof args);
    void* params[] = {&args.c, &args.s, &args.i, &args.l, &args.fl, &args.d, &args.u, &args.out};
    assert_cu_ok(cuCtxSynchronize());
    sim::clearLaunches();
    const sim::Counters before = sim::counters();
    constexpr int kN = 64;
    for (int i = 0; i < kN; ++i) {
        args.i = i;
        assert_cu_ok(cuLaunchKernel(f, static_cast<unsigned>(i + 1), 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
    }
    assert_cu_ok(cuCtxSynchronize());
    const sim::Counters after = sim::counters();
    assert_int_equal(after.launches - before.launches, kN);
    auto log = sim::launches();
    assert_int_equal(log.size(), kN);
    std::set<uint64_t> qmds, cbufs;
    for (int i = 0; i < kN; ++i) {
        const sim::LaunchRecord& r = log[i];
        if (i) assert_int_equal(r.sequence, log[i - 1].sequence + 1);
        assert_int_equal(r.grid[0], i + 1);  // in order
        int got;
        memcpy(&got, r.cb0.data() + kParamBase + offsetof(A, i), 4);
        assert_int_equal(got, i);  // each launch its own parameters
        qmds.insert(r.qmdVa);
        cbufs.insert(r.cb0Va);
    }
    assert_int_equal(qmds.size(), kN);
    assert_int_equal(cbufs.size(), kN);
    assert_true(after.gpfifoEntries > before.gpfifoEntries);

    // The per-thread-default-stream entry point launches the same way.
    sim::clearLaunches();
    assert_cu_ok(cuLaunchKernel_ptsz(f, 3, 2, 1, 16, 2, 1, 0, nullptr, params, nullptr));
    assert_cu_ok(cuCtxSynchronize());
    auto pt = sim::launches();
    // The per-thread stream may run on a channel of its own; it was launched once.
    assert_int_equal(pt.size(), 1);
    assert_int_equal(pt[0].grid[1], 2);
}

// Many launches: more than the channel's data ring holds at once, so its
// space is reused; the recorded parameters still match each launch.
void test_many_launches_reuse_ring(void**) {
    requireKernels();
    CUfunction f = fn("k_big");
    struct A {
        int first;
        Big b;
        int after;
        uint64_t out;
    };
    static A args;
    memset(&args, 0, sizeof args);
    void* params[] = {&args.first, &args.b, &args.after, &args.out};
    assert_cu_ok(cuCtxSynchronize());
    sim::clearLaunches();
    constexpr int kN = 3000;  // 3000 x ~4.6 KiB of bank 0 + QMD: ~14 MiB
    for (int i = 0; i < kN; ++i) {
        args.first = i;
        args.b.b[i % 4096] = static_cast<unsigned char>(i);
        args.after = ~i;
        assert_cu_ok(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    }
    assert_cu_ok(cuCtxSynchronize());
    auto log = sim::launches();
    assert_int_equal(log.size(), kN);
    for (int i = 0; i < kN; ++i) {
        int first, after;
        memcpy(&first, log[i].cb0.data() + kParamBase + offsetof(A, first), 4);
        memcpy(&after, log[i].cb0.data() + kParamBase + offsetof(A, after), 4);
        if (first != i || after != ~i) fail_msg("launch %d: bank 0 holds first=%d after=%d", i, first, after);
        assert_int_equal(log[i].cb0[kParamBase + offsetof(A, b) + i % 4096], static_cast<unsigned char>(i));
    }
}

// ------------------------------------------------------------------ limits (nothing reaches the GPU)

struct NoLaunch {
    uint64_t launches, gpfifo;
    NoLaunch() {
        cuCtxSynchronize();
        launches = sim::counters().launches;
        gpfifo = sim::counters().gpfifoEntries;
    }
    void check(const char* what) {
        cuCtxSynchronize();
        const sim::Counters c = sim::counters();
        if (c.launches != launches) fail_msg("%s: the sim saw %llu launches", what, static_cast<unsigned long long>(c.launches - launches));
        if (c.gpfifoEntries != gpfifo) fail_msg("%s: %llu GPFIFO entries were submitted", what, static_cast<unsigned long long>(c.gpfifoEntries - gpfifo));
    }
};

void test_limits_geometry(void**) {
    requireKernels();
    CUfunction f = fn("k_ptrs");
    uint64_t v[4] = {0, 0, 0, 0};
    void* params[] = {&v[0], &v[1], &v[2], &v[3]};
    const struct {
        Dims grid, block;
    } bad[] = {
        {{1, 1, 1}, {1025, 1, 1}},  {{1, 1, 1}, {1, 1025, 1}},  {{1, 1, 1}, {1, 1, 65}},
        {{1, 1, 1}, {33, 32, 1}},   {{1, 1, 1}, {2, 2, 257}},   {{1, 1, 1}, {1024, 2, 1}},
        {{1, 1, 1}, {0, 1, 1}},     {{1, 1, 1}, {1, 0, 1}},     {{1, 1, 1}, {1, 1, 0}},
        {{0, 1, 1}, {1, 1, 1}},     {{1, 0, 1}, {1, 1, 1}},     {{1, 1, 0}, {1, 1, 1}},
        {{2147483648u, 1, 1}, {1, 1, 1}}, {{1, 65536, 1}, {1, 1, 1}}, {{1, 1, 65536}, {1, 1, 1}},
        {{0xffffffffu, 0xffffffffu, 0xffffffffu}, {1, 1, 1}}, {{1, 1, 1}, {0xffffffffu, 1, 1}},
        {{1, 1, 1}, {65536, 65536, 1}},  // 2^32 threads: must not wrap to 0
    };
    NoLaunch guard;
    for (const auto& b : bad) {
        CUresult r = cuLaunchKernel(f, b.grid.x, b.grid.y, b.grid.z, b.block.x, b.block.y, b.block.z, 0, nullptr,
                                    params, nullptr);
        if (r != CUDA_ERROR_INVALID_VALUE)
            fail_msg("grid %ux%ux%u block %ux%ux%u: %s, expected CUDA_ERROR_INVALID_VALUE", b.grid.x, b.grid.y,
                     b.grid.z, b.block.x, b.block.y, b.block.z, ts_cu_name(r));
    }
    guard.check("bad geometry");
    // The stream still works.
    launchOne(f, {1, 1, 1}, {1024, 1, 1}, 0, params, nullptr, "after the refusals");
}

// More threads than the kernel's registers allow: LAUNCH_OUT_OF_RESOURCES;
// more than its __launch_bounds__: INVALID_VALUE (libcuda 580 on an H200,
// tests/compat/expected/libcuda_modules.txt).
// The QMD's barrier count is the kernel's: one for __syncthreads alone,
// more for named barriers (EIATTR_NUM_BARRIERS).
void test_qmd_barrier_count(void**) {
    requireKernels();
    uint64_t p = 0x1000;
    void* params[] = {&p};
    sim::LaunchRecord plain = launchOne(fn("k_dynshared"), {1, 1, 1}, {64, 1, 1}, 0, params, nullptr, "k_dynshared");
    assert_int_equal(q(plain, nv::NVCBC0_QMDV04_00_BARRIER_COUNT), 1);
    CUfunction f = fn("k_named_barrier");
    const uint32_t barriers = nvl::core::Function::fromHandle(f)->kernel().numBarriers;
    print_message("k_named_barrier: EIATTR_NUM_BARRIERS %u\n", barriers);
    assert_true(barriers >= 6);
    sim::LaunchRecord named = launchOne(f, {1, 1, 1}, {64, 1, 1}, 0, params, nullptr, "k_named_barrier");
    assert_int_equal(q(named, nv::NVCBC0_QMDV04_00_BARRIER_COUNT), barriers);
}

void test_limits_registers_and_launch_bounds(void**) {
    requireKernels();
    // Registers: a kernel holding 128 values live.
    CUfunction r = fn("k_regs");
    const int regs = attr(r, CU_FUNC_ATTRIBUTE_NUM_REGS);
    const int maxThreads = attr(r, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    print_message("k_regs: %d registers, at most %d threads per block\n", regs, maxThreads);
    if (regs <= 64) fail_msg("k_regs uses only %d registers: the test kernel does not do what it should", regs);
    // 64K registers per SM: at most 65536 / regs threads, whole warps.
    assert_true(maxThreads < 1024);
    assert_true(maxThreads % 32 == 0);
    assert_true(static_cast<long>(maxThreads) * regs <= 65536);
    uint64_t a = 0x1000, bb = 0x2000;
    int n = 32;
    void* rp[] = {&a, &bb, &n};
    {
        NoLaunch guard;
        assert_cu(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, cuLaunchKernel(r, 1, 1, 1, 1024, 1, 1, 0, nullptr, rp, nullptr));
        assert_cu(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                  cuLaunchKernel(r, 1, 1, 1, static_cast<unsigned>(maxThreads) + 1, 1, 1, 0, nullptr, rp, nullptr));
        guard.check("too many registers");
    }
    sim::LaunchRecord rec = launchOne(r, {1, 1, 1}, {static_cast<unsigned>(maxThreads), 1, 1}, 0, rp, nullptr, "k_regs max");
    assert_int_equal(q(rec, nv::NVCBC0_QMDV04_00_REGISTER_COUNT), regs);

    // __launch_bounds__(128).
    CUfunction b = fn("k_bounded");
    assert_int_equal(attr(b, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 128);
    uint64_t p = 0x1000;
    void* params[] = {&p};
    launchOne(b, {4, 1, 1}, {128, 1, 1}, 0, params, nullptr, "k_bounded 128");
    launchOne(b, {4, 1, 1}, {8, 4, 4}, 0, params, nullptr, "k_bounded 8x4x4");
    NoLaunch guard;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(b, 1, 1, 1, 129, 1, 1, 0, nullptr, params, nullptr));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(b, 1, 1, 1, 16, 16, 1, 0, nullptr, params, nullptr));
    guard.check("launch bounds");
}

void test_limits_dynamic_shared(void**) {
    requireKernels();
    // A fresh module: the attribute set below stays with its functions.
    CUmodule m = nullptr;
    assert_cu_ok(cuModuleLoadData(&m, S.cubin.data()));
    CUfunction f = nullptr;
    assert_cu_ok(cuModuleGetFunction(&f, m, "k_shared"));
    const int staticShared = attr(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    assert_int_equal(staticShared, 2048);
    const int maxDyn = attr(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    assert_int_equal(maxDyn, 48 * 1024 - staticShared);
    int optin = 0;
    assert_cu_ok(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, S.dev));
    assert_int_equal(optin, 227 * 1024);
    uint64_t p = 0x1000;
    void* params[] = {&p};
    {
        NoLaunch guard;
        assert_cu(CUDA_ERROR_INVALID_VALUE,
                  cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, static_cast<unsigned>(maxDyn) + 1, nullptr, params, nullptr));
        assert_cu(CUDA_ERROR_INVALID_VALUE,
                  cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, static_cast<unsigned>(optin), nullptr, params, nullptr));
        guard.check("dynamic shared memory above the default");
    }
    launchOne(f, {1, 1, 1}, {32, 1, 1}, static_cast<unsigned>(maxDyn), params, nullptr, "48 KiB - static");

    // Opt in to the device's maximum.
    const int room = optin - staticShared;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, room + 1));
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, room));
    assert_int_equal(attr(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), room);
    sim::LaunchRecord r = launchOne(f, {1, 1, 1}, {32, 1, 1}, static_cast<unsigned>(room), params, nullptr, "opt-in maximum");
    const uint64_t shared = q(r, nv::NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE);
    assert_true(shared >= static_cast<uint64_t>(optin));
    assert_true(shared <= 228 * 1024);  // the SM's largest carveout (1 KiB of it reserved)
    {
        NoLaunch guard;
        assert_cu(CUDA_ERROR_INVALID_VALUE,
                  cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, static_cast<unsigned>(room) + 1, nullptr, params, nullptr));
        guard.check("dynamic shared memory above the opt-in");
    }
    // The attribute belongs to that function only: the group module's copy keeps 48 KiB.
    assert_int_equal(attr(fn("k_shared"), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), 48 * 1024 - staticShared);
    assert_cu_ok(cuModuleUnload(m));
}

void test_limits_handles_and_params(void**) {
    requireKernels();
    uint64_t v[4] = {0, 0, 0, 0};
    void* params[] = {&v[0], &v[1], &v[2], &v[3]};
    CUfunction f = fn("k_ptrs");
    size_t size = sizeof v;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, v, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};

    // A function of an unloaded module.
    CUmodule m = nullptr;
    assert_cu_ok(cuModuleLoadData(&m, S.cubin.data()));
    CUfunction stale = nullptr;
    assert_cu_ok(cuModuleGetFunction(&stale, m, "k_ptrs"));
    launchOne(stale, {1, 1, 1}, {1, 1, 1}, 0, params, nullptr, "before unloading");
    assert_cu_ok(cuModuleUnload(m));

    NoLaunch guard;
    CUresult r;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(stale, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    // Parameters missing, or given twice.
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, extra));
    // 'extra' without a size, or with a key that is not one.
    void* noSize[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, v, CU_LAUNCH_PARAM_END};
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, noSize));
    void* unknown[] = {reinterpret_cast<void*>(7), nullptr, CU_LAUNCH_PARAM_END};
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, unknown));
    guard.check("bad handles and parameters");

    // A function of another context (creating a context submits work of its own).
    const uint64_t launchesBefore = sim::counters().launches;
    CUcontext other = nullptr;
    assert_cu_ok(cuCtxCreate(&other, nullptr, 0, S.dev));
    r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr);
    assert_cu_ok(cuCtxDestroy(other));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, r);
    assert_int_equal(sim::counters().launches, launchesBefore);
    guard = NoLaunch();

    // No context current.
    CUcontext popped = nullptr;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr);
    assert_cu_ok(cuCtxPushCurrent(popped));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, r);
    guard.check("no context");
    launchOne(f, {1, 1, 1}, {1, 1, 1}, 0, params, nullptr, "after the refusals");
}

// An 'extra' buffer larger than the kernel's parameters: libcuda 580 answers
// CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (tests/compat/expected/
// libcuda_modules.txt: 64 bytes for an 8-byte parameter list). (A smaller
// one it accepts; not tested.)
void test_limits_extra_buffer_too_large(void**) {
    requireKernels();
    CUfunction f = fn("k_ptrs");
    uint64_t v[8] = {};
    size_t size = 64;  // k_ptrs takes 32 bytes
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, v, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    NoLaunch guard;
    assert_cu(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra));
    guard.check("oversized extra buffer");
}

// An image may claim more than any launch descriptor can say: static shared
// memory beyond the SM's, local memory beyond CUDA's 512 KiB per thread. Such
// a kernel loads, but its launches fail with an error value (the QMD fields
// are never handed a value they would cut; the checked build the tests link
// would stop on one).
// The section header of 'name' in an ELF64 image, by file offset, or 0.
size_t elfSectionHeaderAt(const std::vector<uint8_t>& elf, const std::string& name) {
    Elf64_Ehdr eh;
    memcpy(&eh, elf.data(), sizeof eh);
    Elf64_Shdr strtab;
    memcpy(&strtab, elf.data() + eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr), sizeof strtab);
    for (size_t i = 0; i < eh.e_shnum; ++i) {
        Elf64_Shdr sh;
        const size_t at = eh.e_shoff + i * sizeof(Elf64_Shdr);
        memcpy(&sh, elf.data() + at, sizeof sh);
        if (name == reinterpret_cast<const char*>(elf.data() + strtab.sh_offset + sh.sh_name)) return at;
    }
    return 0;
}

void test_launch_refuses_what_the_qmd_cannot_hold(void**) {
    requireKernels();
    // k_shared with a 300 KiB static shared window (the SM has 228 KiB).
    std::vector<uint8_t> img = S.cubin;
    const size_t shAt = elfSectionHeaderAt(img, ".nv.shared.k_shared");
    assert_int_not_equal(shAt, 0);
    const uint64_t bigShared = 300 * 1024 + 64;
    memcpy(img.data() + shAt + offsetof(Elf64_Shdr, sh_size), &bigShared, sizeof bigShared);
    CUmodule m = nullptr;
    assert_cu_ok(cuModuleLoadData(&m, img.data()));
    CUfunction f = nullptr;
    assert_cu_ok(cuModuleGetFunction(&f, m, "k_shared"));
    uint64_t p = 0x1000;
    void* params[] = {&p};
    {
        NoLaunch guard;
        assert_cu(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
        guard.check("static shared memory beyond the SM's");
    }
    assert_cu_ok(cuModuleUnload(m));

    // k_noparams asking for 1 MiB + 4 of local memory per thread (the module's
    // MIN_STACK_SIZE and FRAME_SIZE records of every kernel).
    img = S.cubin;
    size_t off = 0, size = 0;
    assert_true(elfSection(img, ".nv.info", &off, &size));
    int patched = 0;
    for (size_t at = off; at + 4 <= off + size;) {
        const uint8_t format = img[at], attribute = img[at + 1];
        uint16_t value;
        memcpy(&value, &img[at + 2], 2);
        at += 4;
        if (format != 4) continue;  // only SVAL records have a payload
        if ((attribute == 0x11 || attribute == 0x12) && value == 8) {  // FRAME_SIZE, MIN_STACK_SIZE: u32 sym, u32 bytes
            const uint32_t bytes = (1u << 20) + 4;
            memcpy(&img[at + 4], &bytes, 4);
            ++patched;
        }
        at += value;
    }
    assert_true(patched >= 2);
    assert_cu_ok(cuModuleLoadData(&m, img.data()));
    assert_cu_ok(cuModuleGetFunction(&f, m, "k_noparams"));
    {
        NoLaunch guard;
        assert_cu(CUDA_ERROR_OUT_OF_MEMORY, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
        guard.check("local memory beyond 512 KiB per thread");
    }
    assert_cu_ok(cuModuleUnload(m));
    // The context is fine afterwards.
    launchOne(fn("k_noparams"), {1, 1, 1}, {1, 1, 1}, 0, nullptr, nullptr, "after the refused launches");
}

// ------------------------------------------------------------------ a flood of launches

// More launches in a row than the channel's GPFIFO has entries (2048), with
// no synchronisation: the library must wait for ring space without ever
// filling the ring completely (GP_PUT == GP_GET reads as an empty ring, and
// the GPU would stop with work queued while the CPU waits for it).
// Runs in a child process (this binary, --launch-flood <cubin>): a hang
// there is reported instead of hanging the suite.
constexpr int kFloodLaunches = 30000;

int floodChild(const char* cubinPath) {
    setenv("NVLITE_DEVICE", "sim", 1);
    CUcontext ctx = nullptr;
    CUmodule m = nullptr;
    CUfunction f = nullptr;
    if (cuInit(0) || cuCtxCreate(&ctx, nullptr, 0, 0) || cuModuleLoad(&m, cubinPath) ||
        cuModuleGetFunction(&f, m, "k_noparams")) {
        fprintf(stderr, "flood: setup failed\n");
        return 2;
    }
    std::atomic<int> launched{0};
    std::atomic<bool> finished{false};
    std::thread watchdog([&] {
        int last = -1;
        auto since = std::chrono::steady_clock::now();
        while (!finished.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            const int now = launched.load();
            if (now != last) {
                last = now;
                since = std::chrono::steady_clock::now();
                continue;
            }
            if (std::chrono::steady_clock::now() - since < std::chrono::seconds(5)) continue;
            fprintf(stderr, "flood: no progress for 5 s after %d launches (the sim ran %llu)\n", now,
                    static_cast<unsigned long long>(sim::counters().launches));
            for (const sim::ChannelInfo& c : sim::channels())
                fprintf(stderr, "flood: channel 0x%x: GP_GET %u GP_PUT %u waiting=%d faulted=%d\n", c.hChannel,
                        c.gpGet, c.gpPut, c.waiting, c.faulted);
            fflush(stderr);
            _exit(3);
        }
    });
    for (int i = 0; i < kFloodLaunches; ++i) {
        CUresult r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "flood: launch %d returned %s\n", i, ts_cu_name(r));
            _exit(4);
        }
        launched.store(i + 1);
    }
    CUresult r = cuCtxSynchronize();
    launched.store(kFloodLaunches + 1);
    finished.store(true);
    watchdog.join();
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "flood: cuCtxSynchronize returned %s\n", ts_cu_name(r));
        return 5;
    }
    const uint64_t ran = sim::counters().launches;
    if (ran != static_cast<uint64_t>(kFloodLaunches)) {
        fprintf(stderr, "flood: the sim ran %llu launches\n", static_cast<unsigned long long>(ran));
        return 6;
    }
    return 0;
}

void test_launch_flood_beyond_gpfifo(void**) {
    requireKernels();
    char* path = ts_temp_write("flood.cubin", S.cubin.data(), S.cubin.size());
    assert_non_null(path);
    char self[4096];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(len > 0);
    self[len] = 0;
    char arg[] = "--launch-flood";
    char* argv[] = {self, arg, path, nullptr};
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, self, nullptr, nullptr, argv, environ);
    assert_int_equal(rc, 0);
    int status = 0;
    bool exited = false;
    for (int i = 0; i < 600 && !exited; ++i) {  // 60 s: it takes about 2 s
        exited = waitpid(pid, &status, WNOHANG) == pid;
        if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    free(path);
    if (!exited) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fail_msg("%d launches without synchronisation: the child did not finish in 60 s", kFloodLaunches);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("%d launches without synchronisation: the child %s %d (3: the launches stopped making progress: "
                 "see its output above)",
                 kFloodLaunches, WIFEXITED(status) ? "exited with" : "died of signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && strcmp(argv[1], "--launch-flood") == 0) return floodChild(argv[2]);
    // The simulated driver, whatever the environment says.
    setenv("NVLITE_DEVICE", "sim", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qmd_barrier_count),
        cmocka_unit_test(test_params_pointers),
        cmocka_unit_test(test_params_scalars),
        cmocka_unit_test(test_params_vectors),
        cmocka_unit_test(test_params_struct_with_padding),
        cmocka_unit_test(test_params_twenty_mixed),
        cmocka_unit_test(test_params_4k_struct),
        cmocka_unit_test(test_params_largest_block),
        cmocka_unit_test(test_params_none),
        cmocka_unit_test(test_params_copied_at_call),
        cmocka_unit_test(test_driver_area_and_qmd_geometry),
        cmocka_unit_test(test_qmd_program_address_in_module),
        cmocka_unit_test(test_qmd_shared_memory_grows_with_dynamic),
        cmocka_unit_test(test_qmd_module_constant_bank),
        cmocka_unit_test(test_qmd_local_memory),
        cmocka_unit_test(test_consecutive_launches_distinct),
        cmocka_unit_test(test_many_launches_reuse_ring),
        cmocka_unit_test(test_limits_geometry),
        cmocka_unit_test(test_limits_registers_and_launch_bounds),
        cmocka_unit_test(test_limits_dynamic_shared),
        cmocka_unit_test(test_limits_handles_and_params),
        cmocka_unit_test(test_limits_extra_buffer_too_large),
        cmocka_unit_test(test_launch_refuses_what_the_qmd_cannot_hold),
        cmocka_unit_test(test_launch_flood_beyond_gpfifo),
    };
    return cmocka_run_group_tests_name("launch_sim", tests, groupSetup, groupTeardown);
}
