// cuLaunchKernelEx, cooperative and cluster launches, the legacy launch API
// and lazy loading, as the simulated GPU receives them (NVLITE_DEVICE=sim,
// set by main before cuInit). Kernels are compiled with NVRTC (the tests skip
// without it) and launched through the C API; the sim records each launch
// (QMD and constant bank 0, lib/kdrv/sim/sim_control.h) without running it.
// Checked here:
//   - the QMD of cluster launches (GRID_GPC_CGA, the cluster's shape) and of
//     plain ones; constant bank 0's driver area: %dynamic_smem_size, the
//     cluster registers (%cluster_nctaid, %nclusterid, %cluster_nctarank,
//     %is_explicit_cluster, the reciprocals %clusterid is computed with),
//     the cooperative grid workspace (envreg1/2);
//   - what is refused, with libcuda's codes, before anything reaches the
//     GPU (the sim's launch counter does not move): cluster shapes,
//     cooperative grids larger than the GPU holds, launch attributes;
//   - launch-attribute events recorded after the kernel;
//   - the legacy API's parameters, block shape and shared memory;
//   - cuCtxAttach/cuCtxDetach;
//   - lazy loading: code placed on first launch or cuFuncLoad, EAGER with
//     CUDA_MODULE_LOADING=EAGER (in a child process: the mode is read once).
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/module.h"
#include "defs/qmd_v04.h"
#include "hw/compute.h"
#include "kdrv/sim/sim_control.h"
#include "nvlite/cuda.h"
#include "support/test_support.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

extern char** environ;

namespace sim = nvl::kdrv::sim;
namespace nv = nvl::nv;
namespace hw = nvl::hw;

namespace {

const char* const kSource = R"(
extern "C" {
__device__ int g_sink;
__global__ void k_ptr(int* out) { if (out) out[threadIdx.x] = threadIdx.x; }
__global__ void k_args(int* out, int a, float f, char c) { if (out) out[threadIdx.x] = a + (int)f + c; }
__global__ void k_dyn(int* out) {
    extern __shared__ int d[];
    d[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (out) out[threadIdx.x] = d[blockDim.x - 1 - threadIdx.x];
}
__global__ void __launch_bounds__(256) k_bounded(int* out) { if (out) out[threadIdx.x] = 1; }
__global__ void __cluster_dims__(2, 1, 1) k_cluster2(int* out) { if (out) out[blockIdx.x] = 1; }
__global__ void __cluster_dims__(2, 2, 1) k_cluster22(int* out) { if (out) out[blockIdx.x] = 1; }
}
)";

// Constant bank 0's driver area on sm_90 (what the compiler reads for each
// special register; lib/hw/compute.cpp writes it).
constexpr uint32_t kCbufGridDim = 0x0c;
constexpr uint32_t kCbufDynamicShared = 0x2c;
constexpr uint32_t kCbufEnvReg1 = 0x44, kCbufEnvReg2 = 0x48;
constexpr uint32_t kCbufGridId = 0x30;
constexpr uint32_t kCbufSmCount = 0x10c;
constexpr uint32_t kCbufCooperative = 0x110;
constexpr uint32_t kCbufReservedShared = 0x114;
constexpr uint32_t kCbufBlockShared = 0x13c;
constexpr uint32_t kCbufSharedWindowBytes = 0x16c;
constexpr uint32_t kCbufParamsAddress = 0x198;
constexpr uint32_t kCbufParamsEnd = 0x1a0;
constexpr uint32_t kCbufExplicitCluster = 0x140;
constexpr uint32_t kCbufClusterDim = 0x144;
constexpr uint32_t kCbufClusterDimReciprocal = 0x150;
constexpr uint32_t kCbufClusterCount = 0x15c;
constexpr uint32_t kCbufClusterSize = 0x188;
constexpr uint32_t kParamBase = 0x210;

struct Suite {
    bool haveNvrtc = false;
    const char* why = nullptr;
    std::vector<uint8_t> cubin;
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    CUmodule mod = nullptr;
    int arch = 0;
    int sms = 0;
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

int groupSetup(void**) {
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&S.dev, 0) != CUDA_SUCCESS) return -1;
    int major = 0, minor = 0;
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, S.dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, S.dev);
    cuDeviceGetAttribute(&S.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, S.dev);
    S.arch = major * 10 + minor;
    if (cuCtxCreate(&S.ctx, nullptr, 0, S.dev) != CUDA_SUCCESS) return -1;
    S.haveNvrtc = ts_nvrtc_available(&S.why);
    if (!S.haveNvrtc) return 0;
    size_t size = 0;
    void* cubin = ts_compile_cubin(kSource, "launch_ex_sim.cu", S.arch, &size);
    if (!cubin) {
        print_error("NVRTC could not compile the test kernels\n");
        return -1;
    }
    S.cubin.assign(static_cast<uint8_t*>(cubin), static_cast<uint8_t*>(cubin) + size);
    free(cubin);
    if (cuModuleLoadData(&S.mod, S.cubin.data()) != CUDA_SUCCESS) return -1;
    return 0;
}

int groupTeardown(void**) {
    if (S.mod) cuModuleUnload(S.mod);
    if (S.ctx) cuCtxDestroy(S.ctx);
    return 0;
}

// What the sim launched while 'action' ran (after the work it queued is done).
std::vector<sim::LaunchRecord> launchedBy(const std::function<void()>& action) {
    assert_cu_ok(cuCtxSynchronize());
    sim::clearLaunches();
    action();
    assert_cu_ok(cuCtxSynchronize());
    return sim::launches();
}

// Launches through cuLaunchKernelEx and returns the one record.
sim::LaunchRecord exOne(CUfunction f, CUlaunchConfig c, void** params, const char* what) {
    auto log = launchedBy([&] {
        CUresult r = cuLaunchKernelEx(&c, f, params, nullptr);
        if (r != CUDA_SUCCESS) fail_msg("%s: cuLaunchKernelEx returned %s", what, ts_cu_name(r));
    });
    if (log.size() != 1) fail_msg("%s: the sim recorded %zu launches, expected 1", what, log.size());
    return log[0];
}

// A call refused before anything reaches the GPU.
void refused(CUresult expected, const std::function<CUresult()>& call, const char* what) {
    assert_cu_ok(cuCtxSynchronize());
    const uint64_t before = sim::counters().launches;
    CUresult r = call();
    if (r != expected) fail_msg("%s: expected %s, got %s", what, ts_cu_name(expected), ts_cu_name(r));
    assert_cu_ok(cuCtxSynchronize());
    if (sim::counters().launches != before) fail_msg("%s: refused, yet the sim launched something", what);
}

CUlaunchConfig config(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned shared, CUlaunchAttribute* attrs,
                      unsigned n) {
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = gx;
    c.gridDimY = gy;
    c.gridDimZ = gz;
    c.blockDimX = bx;
    c.blockDimY = 1;
    c.blockDimZ = 1;
    c.sharedMemBytes = shared;
    c.attrs = attrs;
    c.numAttrs = n;
    return c;
}

CUlaunchAttribute clusterAttr(unsigned x, unsigned y, unsigned z) {
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.clusterDim.x = x;
    a.value.clusterDim.y = y;
    a.value.clusterDim.z = z;
    return a;
}

uint64_t q(const sim::LaunchRecord& r, nv::MultiWordField f) { return nv::qmdGet(r.qmd.data(), f); }

uint32_t cb0(const sim::LaunchRecord& r, uint32_t offset) {
    if (r.cb0.size() < offset + 4) fail_msg("constant bank 0 holds %zu bytes, not 0x%x", r.cb0.size(), offset + 4);
    uint32_t v;
    memcpy(&v, r.cb0.data() + offset, 4);
    return v;
}

float cb0f(const sim::LaunchRecord& r, uint32_t offset) {
    uint32_t bits = cb0(r, offset);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

// The driver area's cluster registers say 'cluster' for a grid 'grid'; the
// reciprocals give every block's %clusterid the way the compiled code
// computes it (the CTA index as a float, times the reciprocal, truncated).
void expectClusterArea(const sim::LaunchRecord& r, const unsigned grid[3], const unsigned cluster[3], bool explicitly) {
    assert_int_equal(cb0(r, kCbufExplicitCluster), explicitly ? 1 : 0);
    for (uint32_t i = 0; i < 3; ++i) {
        assert_int_equal(cb0(r, kCbufClusterDim + 4 * i), cluster[i]);
        assert_int_equal(cb0(r, kCbufClusterCount + 4 * i), grid[i] / cluster[i]);
        const float rcp = cb0f(r, kCbufClusterDimReciprocal + 4 * i);
        for (unsigned ctaid = 0; ctaid < grid[i]; ++ctaid) {
            const unsigned got = static_cast<unsigned>(static_cast<float>(ctaid) * rcp);
            if (got != ctaid / cluster[i])
                fail_msg("dimension %u: CTA %u * %.9g gives cluster %u, not %u", i, ctaid, rcp, got,
                         ctaid / cluster[i]);
        }
    }
    assert_int_equal(cb0(r, kCbufClusterSize), cluster[0] * cluster[1] * cluster[2]);
}

// ------------------------------------------------------------------ plain and dynamic shared memory

void test_plain_driver_area(void**) {
    requireKernels();
    CUdeviceptr out = 0x123400;
    void* p[] = {&out};
    CUlaunchConfig c = config(5, 3, 2, 64, 1000, nullptr, 0);
    sim::LaunchRecord r = exOne(fn("k_dyn"), c, p, "plain");
    assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_QMD_TYPE), nv::NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA);
    assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GPC_CGA_WIDTH), 0);
    assert_int_equal(cb0(r, kCbufDynamicShared), 1000);
    assert_int_equal(cb0(r, kCbufGridDim), 5);
    // No workspace: cooperative groups' grid_group is not valid here.
    assert_int_equal(cb0(r, kCbufEnvReg1), 0);
    assert_int_equal(cb0(r, kCbufEnvReg2), 0);
    // Every block its own cluster of one.
    const unsigned grid[3] = {5, 3, 2}, one[3] = {1, 1, 1};
    expectClusterArea(r, grid, one, false);
    // What libcuda 580 also writes (tests/compat/expected/libcuda_launch_cbuf.txt):
    // %nsmid, the reserved shared memory, the block's shared memory, the
    // parameters' address and end, the shared window's size.
    assert_int_equal(cb0(r, kCbufSmCount), S.sms);
    assert_int_equal(cb0(r, kCbufReservedShared), 1024);
    assert_int_equal(cb0(r, kCbufBlockShared), 1024 + 1000);
    assert_int_equal(cb0(r, kCbufCooperative), 0);
    assert_int_equal(cb0(r, kCbufSharedWindowBytes), 16u << 20);
    const uint64_t paramsVa = (static_cast<uint64_t>(cb0(r, kCbufParamsAddress + 4)) << 32) | cb0(r, kCbufParamsAddress);
    const uint64_t paramsEnd = (static_cast<uint64_t>(cb0(r, kCbufParamsEnd + 4)) << 32) | cb0(r, kCbufParamsEnd);
    assert_int_equal(paramsVa, r.cb0Va + kParamBase);
    assert_int_equal(paramsEnd, r.cb0Va + kParamBase + 8);
    // %gridid: a new one for every launch.
    const uint64_t id = (static_cast<uint64_t>(cb0(r, kCbufGridId + 4)) << 32) | cb0(r, kCbufGridId);
    sim::LaunchRecord again = exOne(fn("k_dyn"), c, p, "plain again");
    const uint64_t id2 = (static_cast<uint64_t>(cb0(again, kCbufGridId + 4)) << 32) | cb0(again, kCbufGridId);
    assert_true(id != 0 && id2 > id);
    uint64_t param;
    memcpy(&param, r.cb0.data() + kParamBase, 8);
    assert_int_equal(param, out);
}

// ------------------------------------------------------------------ clusters

void test_cluster_launch_qmd_and_registers(void**) {
    requireKernels();
    CUfunction f = fn("k_ptr");
    CUdeviceptr out = 0;
    void* p[] = {&out};
    const struct {
        unsigned grid[3], cluster[3];
    } shapes[] = {{{4, 6, 2}, {2, 3, 1}}, {{9, 2, 1}, {3, 1, 1}}, {{3, 4, 6}, {1, 2, 2}}, {{35, 1, 1}, {5, 1, 1}},
                  {{1001, 1, 1}, {7, 1, 1}}, {{64, 1, 1}, {8, 1, 1}}, {{6, 6, 6}, {2, 2, 2}}, {{3, 1, 1}, {1, 1, 1}}};
    for (const auto& s : shapes) {
        CUlaunchAttribute a = clusterAttr(s.cluster[0], s.cluster[1], s.cluster[2]);
        CUlaunchConfig c = config(s.grid[0], s.grid[1], s.grid[2], 64, 0, &a, 1);
        char what[96];
        snprintf(what, sizeof what, "grid %ux%ux%u cluster %ux%ux%u", s.grid[0], s.grid[1], s.grid[2], s.cluster[0],
                 s.cluster[1], s.cluster[2]);
        sim::LaunchRecord r = exOne(f, c, p, what);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_QMD_TYPE), nv::NVCBC0_QMDV04_00_QMD_TYPE_GRID_GPC_CGA);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GPC_CGA_WIDTH), s.cluster[0]);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GPC_CGA_HEIGHT), s.cluster[1]);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GPC_CGA_DEPTH), s.cluster[2]);
        // The QMD counts the grid in clusters (the H200 runs GRID_* x
        // GPC_CGA_* blocks); the simulator's record, in blocks, is the grid.
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GRID_WIDTH), s.grid[0] / s.cluster[0]);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GRID_HEIGHT), s.grid[1] / s.cluster[1]);
        assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GRID_DEPTH), s.grid[2] / s.cluster[2]);
        assert_int_equal(r.grid[0], s.grid[0]);
        assert_int_equal(r.grid[1], s.grid[1]);
        assert_int_equal(r.grid[2], s.grid[2]);
        expectClusterArea(r, s.grid, s.cluster, true);
    }
}

void test_cluster_from_the_kernel(void**) {
    requireKernels();
    CUfunction f = fn("k_cluster2");
    int v = -1;
    assert_cu_ok(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, f));
    assert_int_equal(v, 2);
    CUdeviceptr out = 0;
    void* p[] = {&out};
    // cuLaunchKernel: the kernel's __cluster_dims__.
    auto log = launchedBy([&] { assert_cu_ok(cuLaunchKernel(f, 8, 1, 1, 32, 1, 1, 0, nullptr, p, nullptr)); });
    assert_int_equal(log.size(), 1);
    assert_int_equal(q(log[0], nv::NVCBC0_QMDV04_00_QMD_TYPE), nv::NVCBC0_QMDV04_00_QMD_TYPE_GRID_GPC_CGA);
    assert_int_equal(q(log[0], nv::NVCBC0_QMDV04_00_GPC_CGA_WIDTH), 2);
    const unsigned grid[3] = {8, 1, 1}, two[3] = {2, 1, 1};
    expectClusterArea(log[0], grid, two, true);
    // A grid that is not a whole number of clusters, a different shape given at launch.
    refused(CUDA_ERROR_INVALID_CLUSTER_SIZE,
            [&] { return cuLaunchKernel(f, 7, 1, 1, 32, 1, 1, 0, nullptr, p, nullptr); }, "k_cluster2 grid 7");
    CUlaunchAttribute a = clusterAttr(4, 1, 1);
    CUlaunchConfig c = config(8, 1, 1, 32, 0, &a, 1);
    refused(CUDA_ERROR_INVALID_CLUSTER_SIZE, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); },
            "k_cluster2 given 4x1x1");
    // The same shape given again is fine.
    a = clusterAttr(2, 1, 1);
    sim::LaunchRecord r = exOne(f, c, p, "k_cluster2 given 2x1x1");
    assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GPC_CGA_WIDTH), 2);
    CUfunction f22 = fn("k_cluster22");
    log = launchedBy([&] { assert_cu_ok(cuLaunchKernel(f22, 4, 4, 1, 32, 1, 1, 0, nullptr, p, nullptr)); });
    assert_int_equal(q(log[0], nv::NVCBC0_QMDV04_00_GPC_CGA_HEIGHT), 2);
    refused(CUDA_ERROR_INVALID_CLUSTER_SIZE,
            [&] { return cuLaunchKernel(f22, 4, 3, 1, 32, 1, 1, 0, nullptr, p, nullptr); }, "k_cluster22 grid 4x3");
}

void test_cluster_limits(void**) {
    requireKernels();
    CUfunction f = fn("k_ptr");
    CUdeviceptr out = 0;
    void* p[] = {&out};
    const struct {
        unsigned grid[3], cluster[3];
        CUresult expected;
        const char* what;
    } bad[] = {{{7, 1, 1}, {2, 1, 1}, CUDA_ERROR_INVALID_CLUSTER_SIZE, "7 blocks in clusters of 2"},
               {{2, 4, 1}, {1, 3, 1}, CUDA_ERROR_INVALID_CLUSTER_SIZE, "height 4 in clusters of 3"},
               {{9, 1, 1}, {9, 1, 1}, CUDA_ERROR_INVALID_CLUSTER_SIZE, "9 blocks: not portable"},
               {{16, 1, 1}, {16, 1, 1}, CUDA_ERROR_INVALID_CLUSTER_SIZE, "16 blocks without opting in"},
               {{4, 4, 1}, {4, 4, 1}, CUDA_ERROR_INVALID_CLUSTER_SIZE, "4x4 blocks without opting in"},
               {{4, 1, 1}, {0, 1, 1}, CUDA_ERROR_INVALID_CLUSTER_SIZE, "width 0"},
               {{4, 1, 1}, {2, 0, 1}, CUDA_ERROR_INVALID_CLUSTER_SIZE, "height 0"}};
    for (const auto& b : bad) {
        CUlaunchAttribute a = clusterAttr(b.cluster[0], b.cluster[1], b.cluster[2]);
        CUlaunchConfig c = config(b.grid[0], b.grid[1], b.grid[2], 32, 0, &a, 1);
        refused(b.expected, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); }, b.what);
    }
    // Sixteen once the kernel allows non-portable sizes; never more.
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    CUlaunchAttribute a = clusterAttr(16, 1, 1);
    CUlaunchConfig c = config(32, 1, 1, 32, 0, &a, 1);
    sim::LaunchRecord r = exOne(f, c, p, "16 blocks, non-portable");
    assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GPC_CGA_WIDTH), 16);
    a = clusterAttr(32, 1, 1);
    refused(CUDA_ERROR_INVALID_CLUSTER_SIZE, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); }, "32 blocks");
    // libcuda takes any value; nonzero allows.
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 2));
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 0));
    int v = -1;
    assert_cu_ok(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, f));
    assert_int_equal(v, 0);
    a = clusterAttr(16, 1, 1);
    refused(CUDA_ERROR_INVALID_CLUSTER_SIZE, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); },
            "16 blocks after opting out");
}

// REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH set at run time (libcuda 580: settable
// unless __cluster_dims__ fixed them; a launch must then match the set ones,
// and one without a cluster uses them, zeros being invalid).
void test_cluster_required_at_run_time(void**) {
    requireKernels();
    CUmodule m = nullptr;
    assert_cu_ok(cuModuleLoadData(&m, S.cubin.data()));
    CUfunction f = nullptr, fixed = nullptr;
    assert_cu_ok(cuModuleGetFunction(&f, m, "k_ptr"));
    assert_cu_ok(cuModuleGetFunction(&fixed, m, "k_cluster2"));
    assert_cu(CUDA_ERROR_NOT_PERMITTED, cuFuncSetAttribute(fixed, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 4));
    CUdeviceptr out = 0;
    void* p[] = {&out};
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2));
    int v = 0;
    assert_cu_ok(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, f));
    assert_int_equal(v, 2);
    refused(CUDA_ERROR_INVALID_CLUSTER_SIZE,
            [&] { return cuLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, nullptr, p, nullptr); }, "width 2 only, no cluster");
    CUlaunchAttribute a = clusterAttr(2, 1, 1);
    CUlaunchConfig c = config(4, 1, 1, 32, 0, &a, 1);
    sim::LaunchRecord r = exOne(f, c, p, "width 2 required, 2x1x1 given");
    assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GPC_CGA_WIDTH), 2);
    a = clusterAttr(4, 1, 1);
    refused(CUDA_ERROR_INVALID_CLUSTER_SIZE, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); },
            "width 2 required, 4 given");
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, 1));
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, 1));
    auto log = launchedBy([&] { assert_cu_ok(cuLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, nullptr, p, nullptr)); });
    assert_int_equal(log.size(), 1);
    assert_int_equal(q(log[0], nv::NVCBC0_QMDV04_00_QMD_TYPE), nv::NVCBC0_QMDV04_00_QMD_TYPE_GRID_GPC_CGA);
    assert_int_equal(q(log[0], nv::NVCBC0_QMDV04_00_GPC_CGA_WIDTH), 2);
    assert_cu_ok(cuModuleUnload(m));
}

// ------------------------------------------------------------------ cooperative

int residentBlocks(CUfunction f, int block, size_t shared) {
    int perSm = 0;
    assert_cu_ok(cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, f, block, shared));
    return perSm * S.sms;
}

void test_cooperative_workspace(void**) {
    requireKernels();
    int v = 0;
    assert_cu_ok(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, S.dev));
    assert_int_equal(v, 1);
    CUfunction f = fn("k_ptr");
    CUdeviceptr out = 0;
    void* p[] = {&out};
    auto log = launchedBy(
        [&] { assert_cu_ok(cuLaunchCooperativeKernel(f, 12, 1, 1, 128, 1, 1, 0, nullptr, p)); });
    assert_int_equal(log.size(), 1);
    const sim::LaunchRecord& r = log[0];
    // envreg1 (high) and envreg2 (low): the workspace right after the launch's QMD.
    const uint64_t ws = (static_cast<uint64_t>(cb0(r, kCbufEnvReg1)) << 32) | cb0(r, kCbufEnvReg2);
    assert_int_equal(ws, r.qmdVa + nv::NVCBC0_QMDV04_00_SIZE_BYTES);
    assert_int_equal(cb0(r, kCbufCooperative), 1);
    assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_QMD_TYPE), nv::NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA);
    // Each launch its own workspace.
    auto two = launchedBy([&] {
        assert_cu_ok(cuLaunchCooperativeKernel(f, 2, 1, 1, 32, 1, 1, 0, nullptr, p));
        assert_cu_ok(cuLaunchCooperativeKernel(f, 2, 1, 1, 32, 1, 1, 0, nullptr, p));
    });
    assert_int_equal(two.size(), 2);
    assert_true(cb0(two[0], kCbufEnvReg2) != cb0(two[1], kCbufEnvReg2) ||
                cb0(two[0], kCbufEnvReg1) != cb0(two[1], kCbufEnvReg1));
    // Through cuLaunchKernelEx's attribute too; 0 means a plain launch.
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    a.value.cooperative = 1;
    CUlaunchConfig c = config(3, 1, 1, 32, 0, &a, 1);
    sim::LaunchRecord e = exOne(f, c, p, "COOPERATIVE 1");
    assert_true(cb0(e, kCbufEnvReg2) != 0);
    a.value.cooperative = 0;
    e = exOne(f, c, p, "COOPERATIVE 0");
    assert_int_equal(cb0(e, kCbufEnvReg2), 0);
}

// The workspace's bytes, written by the launch path into a host buffer.
void test_cooperative_workspace_bytes(void**) {
    hw::KernelDescriptor k;
    k.programVa = 0x7f0000001000ull;
    k.programBytes = 0x400;
    k.registers = 16;
    k.paramBase = kParamBase;
    k.cbuf0Bytes = kParamBase + 8;
    hw::ComputeState s;
    hw::LaunchGeometry g{{7, 1, 1}, {64, 1, 1}, 0};
    g.cooperative = true;
    const size_t bytes = hw::Launch::dataBytes(k, s, g);
    assert_true(bytes >= hw::Launch::dataBytes(k, s) + 8);
    std::vector<uint8_t> slot(bytes, 0xee);
    hw::Launch::Image image;
    const uint64_t slotVa = 0x7f0000200000ull;
    const uint64_t qmdVa = hw::Launch::write(image, {slot.data(), slotVa}, hw::Launch::makeTemplate(k, s), k, g, s,
                                             [](uint8_t* p) { memset(p, 0x5a, 8); });
    const size_t wsOffset = qmdVa - slotVa + nv::NVCBC0_QMDV04_00_SIZE_BYTES;
    uint32_t ws[2];
    memcpy(ws, slot.data() + wsOffset, sizeof ws);
    assert_int_equal(ws[0], 16);  // wsSize: libcuda 580's 16 bytes
    assert_int_equal(ws[1], 0);  // the barrier counter starts at 0
    uint32_t hi, lo;
    memcpy(&hi, slot.data() + kCbufEnvReg1, 4);
    memcpy(&lo, slot.data() + kCbufEnvReg2, 4);
    assert_int_equal((static_cast<uint64_t>(hi) << 32) | lo, slotVa + wsOffset);
}

void test_cooperative_limits(void**) {
    requireKernels();
    CUfunction f = fn("k_dyn");
    CUdeviceptr out = 0;
    void* p[] = {&out};
    const int max = residentBlocks(f, 256, 0);
    assert_true(max > 0);
    auto log = launchedBy(
        [&] { assert_cu_ok(cuLaunchCooperativeKernel(f, (unsigned)max, 1, 1, 256, 1, 1, 0, nullptr, p)); });
    assert_int_equal(log.size(), 1);
    refused(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            [&] { return cuLaunchCooperativeKernel(f, (unsigned)max + 1, 1, 1, 256, 1, 1, 0, nullptr, p); },
            "one block more than the GPU holds");
    refused(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            [&] { return cuLaunchCooperativeKernel(f, (unsigned)max / 2 + 1, 2, 1, 256, 1, 1, 0, nullptr, p); },
            "a 2-D grid one row too many");
    // Dynamic shared memory lowers the limit.
    const int withShared = residentBlocks(f, 256, 40000);
    assert_true(withShared < max);
    log = launchedBy([&] {
        assert_cu_ok(cuLaunchCooperativeKernel(f, (unsigned)withShared, 1, 1, 256, 1, 1, 40000, nullptr, p));
    });
    assert_int_equal(log.size(), 1);
    refused(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            [&] { return cuLaunchCooperativeKernel(f, (unsigned)withShared + 1, 1, 1, 256, 1, 1, 40000, nullptr, p); },
            "one block more with 40000 bytes of shared memory each");
    // More shared memory than the function may have: too large a grid, as libcuda answers.
    refused(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            [&] { return cuLaunchCooperativeKernel(f, (unsigned)S.sms, 1, 1, 256, 1, 1, 100 * 1024, nullptr, p); },
            "100 KiB of shared memory without opting in");
    // Checked like any launch first.
    refused(CUDA_ERROR_INVALID_VALUE,
            [&] { return cuLaunchCooperativeKernel(f, 1, 1, 1, 1025, 1, 1, 0, nullptr, p); }, "block 1025");
    refused(CUDA_ERROR_INVALID_HANDLE,
            [&] { return cuLaunchCooperativeKernel(nullptr, 1, 1, 1, 32, 1, 1, 0, nullptr, p); }, "NULL function");
    refused(CUDA_ERROR_INVALID_VALUE,
            [&] { return cuLaunchCooperativeKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr); }, "no parameters");
}

// The SM's shared-memory configuration a launch asks for (QMD V04's
// MIN/TARGET_SM_CONFIG_SHARED_MEM_SIZE, KiB / 4 + 1) holds as many blocks as
// the occupancy calculator promised; a cooperative grid needs it on every SM,
// so there it is the minimum too. (A grid of 16 blocks of 128 threads per SM,
// each 1 KiB of reserved shared memory, got an 8 KiB carveout before: half
// the grid could not be resident and its grid barrier never completed.)
uint32_t carveoutKiB(uint64_t field) { return static_cast<uint32_t>((field - 1) * 4); }

void test_shared_carveout_holds_occupancy(void**) {
    requireKernels();
    CUfunction f = fn("k_dyn");
    int before = 0;
    assert_cu_ok(cuFuncGetAttribute(&before, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 200 * 1024));
    CUdeviceptr out = 0;
    void* p[] = {&out};
    const struct {
        unsigned block;
        unsigned shared;
    } cases[] = {{128, 0}, {32, 0}, {96, 0}, {256, 0}, {64, 5003}, {128, 40000}, {32, 100 * 1024}, {1024, 0}};
    for (const auto& c : cases) {
        const int perSm = residentBlocks(f, (int)c.block, c.shared) / S.sms;
        assert_true(perSm > 0);
        for (int cooperative = 0; cooperative < 2; ++cooperative) {
            const unsigned grid = cooperative ? (unsigned)(perSm * S.sms) : 7;
            auto log = launchedBy([&] {
                if (cooperative)
                    assert_cu_ok(cuLaunchCooperativeKernel(f, grid, 1, 1, c.block, 1, 1, c.shared, nullptr, p));
                else
                    assert_cu_ok(cuLaunchKernel(f, grid, 1, 1, c.block, 1, 1, c.shared, nullptr, p, nullptr));
            });
            assert_int_equal(log.size(), 1);
            const sim::LaunchRecord& r = log[0];
            const uint64_t perBlock = q(r, nv::NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE);
            assert_true(perBlock >= c.shared + 1024);  // the SM's reservation is in it
            const uint32_t target = carveoutKiB(q(r, nv::NVCBC0_QMDV04_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE));
            const uint32_t least = carveoutKiB(q(r, nv::NVCBC0_QMDV04_00_MIN_SM_CONFIG_SHARED_MEM_SIZE));
            const uint32_t most = carveoutKiB(q(r, nv::NVCBC0_QMDV04_00_MAX_SM_CONFIG_SHARED_MEM_SIZE));
            if (target * 1024ull < perBlock * (uint64_t)perSm)
                fail_msg("%u threads, %u bytes: a %u KiB carveout for %d blocks of %llu bytes", c.block, c.shared, target,
                         perSm, (unsigned long long)perBlock);
            assert_true(least * 1024ull >= perBlock);
            assert_true(least <= target && target <= most);
            assert_int_equal(most, 228);
            if (cooperative) assert_int_equal(least, target);
            // Not more than needed: the next smaller configuration would not hold them.
            if (perBlock * (uint64_t)perSm <= 228 * 1024ull) {
                const uint32_t smaller[] = {0, 8, 16, 32, 64, 100, 132, 164, 196};
                uint32_t below = 0;
                for (uint32_t kib : smaller)
                    if (kib < target) below = kib;
                assert_true(below * 1024ull < perBlock * (uint64_t)perSm);
            }
        }
    }
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, before));
}

// A launch's occupancy answer is kept per function (core/occupancy.h,
// launchBlocksPerSm): it follows the function's dynamic shared-memory limit.
// 60001 bytes over the limit give no block (a cooperative grid is then too
// large); the limit raised, the same launch runs with the carveout for the
// blocks the calculator now promises; lowered again, it is refused again.
void test_launch_occupancy_follows_attributes(void**) {
    requireKernels();
    CUfunction f = fn("k_dyn");
    int before = 0;
    assert_cu_ok(cuFuncGetAttribute(&before, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
    CUdeviceptr out = 0;
    void* p[] = {&out};
    const unsigned shared = 60001, block = 96;
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 48 * 1024));
    for (int twice = 0; twice < 2; ++twice)
        refused(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
                [&] { return cuLaunchCooperativeKernel(f, 1, 1, 1, block, 1, 1, shared, nullptr, p); },
                "60001 bytes over a 48 KiB limit");
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 * 1024));
    const int perSm = residentBlocks(f, (int)block, shared) / S.sms;
    assert_true(perSm > 0);
    for (int twice = 0; twice < 2; ++twice) {
        auto log = launchedBy([&] {
            assert_cu_ok(
                cuLaunchCooperativeKernel(f, (unsigned)(perSm * S.sms), 1, 1, block, 1, 1, shared, nullptr, p));
        });
        assert_int_equal(log.size(), 1);
        const uint64_t perBlock = q(log[0], nv::NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE);
        const uint32_t least = carveoutKiB(q(log[0], nv::NVCBC0_QMDV04_00_MIN_SM_CONFIG_SHARED_MEM_SIZE));
        assert_true(least * 1024ull >= perBlock * (uint64_t)perSm);
    }
    // Another block size with the same shared memory: its own answer.
    const int perSmWide = residentBlocks(f, 1024, shared) / S.sms;
    assert_true(perSmWide > 0);
    const unsigned wideGrid = (unsigned)(perSmWide * S.sms) + 1;
    refused(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            [&] { return cuLaunchCooperativeKernel(f, wideGrid, 1, 1, 1024, 1, 1, shared, nullptr, p); },
            "one block more of 1024 threads");
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 48 * 1024));
    refused(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            [&] { return cuLaunchCooperativeKernel(f, 1, 1, 1, block, 1, 1, shared, nullptr, p); },
            "the limit lowered again");
    assert_cu_ok(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, before));
}

// ------------------------------------------------------------------ launch attributes

void test_ex_attributes(void**) {
    requireKernels();
    CUfunction f = fn("k_ptr");
    CUdeviceptr out = 0;
    void* p[] = {&out};
    CUdeviceptr window = 0;
    assert_cu_ok(cuMemAlloc(&window, 1 << 20));
    struct Case {
        const char* what;
        CUlaunchAttribute a;
        CUresult expected;
    };
    std::vector<Case> cases;
    auto add = [&](const char* what, CUlaunchAttributeID id, CUresult expected,
                   const std::function<void(CUlaunchAttributeValue&)>& set) {
        Case c{what, {}, expected};
        memset(&c.a, 0, sizeof c.a);
        c.a.id = id;
        set(c.a.value);
        cases.push_back(c);
    };
    add("IGNORE", CU_LAUNCH_ATTRIBUTE_IGNORE, CUDA_SUCCESS, [](auto& v) { v.pad[3] = 0x5a; });
    add("ACCESS_POLICY_WINDOW", CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, CUDA_SUCCESS, [&](auto& v) {
        v.accessPolicyWindow.base_ptr = (void*)(uintptr_t)window;
        v.accessPolicyWindow.num_bytes = 1 << 20;
        v.accessPolicyWindow.hitRatio = 0.6f;
        v.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
        v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
    });
    add("ACCESS_POLICY_WINDOW hitRatio 1.5", CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, CUDA_ERROR_INVALID_VALUE,
        [&](auto& v) {
            v.accessPolicyWindow.num_bytes = 4096;
            v.accessPolicyWindow.hitRatio = 1.5f;
        });
    add("ACCESS_POLICY_WINDOW 1 TiB", CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, CUDA_ERROR_INVALID_VALUE,
        [&](auto& v) { v.accessPolicyWindow.num_bytes = size_t{1} << 40; });
    add("SYNCHRONIZATION_POLICY (streams only)", CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, CUDA_ERROR_INVALID_VALUE,
        [](auto& v) { v.syncPolicy = CU_SYNC_POLICY_SPIN; });
    add("CLUSTER_SCHEDULING_POLICY SPREAD", CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, CUDA_SUCCESS,
        [](auto& v) { v.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD; });
    add("CLUSTER_SCHEDULING_POLICY 9", CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
        CUDA_ERROR_INVALID_VALUE, [](auto& v) { v.clusterSchedulingPolicyPreference = (CUclusterSchedulingPolicy)9; });
    add("PROGRAMMATIC_STREAM_SERIALIZATION", CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, CUDA_SUCCESS,
        [](auto& v) { v.programmaticStreamSerializationAllowed = 1; });
    add("PRIORITY -3", CU_LAUNCH_ATTRIBUTE_PRIORITY, CUDA_SUCCESS, [](auto& v) { v.priority = -3; });
    add("MEM_SYNC_DOMAIN REMOTE", CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, CUDA_SUCCESS,
        [](auto& v) { v.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE; });
    add("MEM_SYNC_DOMAIN 5", CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, CUDA_ERROR_INVALID_VALUE,
        [](auto& v) { v.memSyncDomain = (CUlaunchMemSyncDomain)5; });
    add("MEM_SYNC_DOMAIN_MAP 0/1", CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, CUDA_SUCCESS,
        [](auto& v) { v.memSyncDomainMap.remote = 1; });
    add("PREFERRED_SHARED_MEMORY_CARVEOUT 50", CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, CUDA_SUCCESS,
        [](auto& v) { v.sharedMemCarveout = 50; });
    add("PREFERRED_SHARED_MEMORY_CARVEOUT 101", CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
        CUDA_ERROR_INVALID_VALUE, [](auto& v) { v.sharedMemCarveout = 101; });
    add("DEVICE_UPDATABLE_KERNEL_NODE (graphs only)", CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE,
        CUDA_ERROR_NOT_SUPPORTED, [](auto& v) { v.deviceUpdatableKernelNode.deviceUpdatable = 1; });
    add("ACCESS_POLICY_WINDOW hitProp 7 (not checked)", CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, CUDA_SUCCESS,
        [&](auto& v) {
            v.accessPolicyWindow.num_bytes = 4096;
            v.accessPolicyWindow.hitProp = (CUaccessProperty)7;
        });
    add("ACCESS_POLICY_WINDOW missProp PERSISTING", CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, CUDA_ERROR_INVALID_VALUE,
        [&](auto& v) { v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_PERSISTING; });
    add("PREFERRED_CLUSTER_DIMENSION without a cluster", CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION,
        CUDA_ERROR_INVALID_CLUSTER_SIZE, [](auto& v) {
            v.preferredClusterDim.x = 2;
            v.preferredClusterDim.y = v.preferredClusterDim.z = 1;
        });
    add("NVLINK_UTIL_CENTRIC_SCHEDULING 1", CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING, CUDA_SUCCESS,
        [](auto& v) { v.nvlinkUtilCentricScheduling = 1; });
    add("NVLINK_UTIL_CENTRIC_SCHEDULING 2", CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING,
        CUDA_ERROR_INVALID_VALUE, [](auto& v) { v.nvlinkUtilCentricScheduling = 2; });
    add("unknown id 15", (CUlaunchAttributeID)15, CUDA_ERROR_INVALID_VALUE, [](auto&) {});
    add("unknown id 99", (CUlaunchAttributeID)99, CUDA_ERROR_INVALID_VALUE, [](auto&) {});
    for (Case& k : cases) {
        CUlaunchConfig c = config(2, 1, 1, 32, 0, &k.a, 1);
        if (k.expected == CUDA_SUCCESS) {
            sim::LaunchRecord r = exOne(f, c, p, k.what);
            assert_int_equal(r.grid[0], 2);
        } else {
            refused(k.expected, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); }, k.what);
        }
    }
    // The configuration itself.
    CUlaunchConfig c = config(1, 1, 1, 32, 0, nullptr, 1);
    refused(CUDA_ERROR_INVALID_VALUE, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); }, "1 attribute, none given");
    refused(CUDA_ERROR_INVALID_VALUE, [&] { return cuLaunchKernelEx(nullptr, f, p, nullptr); }, "no configuration");
    c = config(1, 1, 1, 32, 48 * 1024 + 1, nullptr, 0);
    refused(CUDA_ERROR_INVALID_VALUE, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); }, "48 KiB + 1 shared");
    // A preferred cluster must be a multiple of the cluster.
    CUlaunchAttribute two[2] = {clusterAttr(2, 1, 1), {}};
    two[1].id = CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION;
    two[1].value.preferredClusterDim.x = 3;
    two[1].value.preferredClusterDim.y = two[1].value.preferredClusterDim.z = 1;
    c = config(12, 1, 1, 32, 0, two, 2);
    refused(CUDA_ERROR_INVALID_CLUSTER_SIZE, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); },
            "preferred 3, cluster 2");
    two[1].value.preferredClusterDim.x = 4;
    sim::LaunchRecord r = exOne(f, c, p, "preferred 4, cluster 2");
    assert_int_equal(q(r, nv::NVCBC0_QMDV04_00_GPC_CGA_WIDTH), 2);
    assert_cu_ok(cuMemFree(window));
}

void test_ex_parameters_and_streams(void**) {
    requireKernels();
    CUfunction f = fn("k_args");
    struct {
        uint64_t out;
        int a;
        float x;
        char c;
    } args = {0x00007f00aabbccd0ull, -123456, 2.5f, 'q'};
    void* p[] = {&args.out, &args.a, &args.x, &args.c};
    CUstream st = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUlaunchConfig c = config(3, 2, 1, 96, 0, nullptr, 0);
    c.hStream = st;
    sim::LaunchRecord r = exOne(f, c, p, "k_args on a stream");
    assert_int_equal(r.grid[1], 2);
    assert_int_equal(r.block[0], 96);
    uint8_t expected[17];
    memcpy(expected, &args.out, 8);
    memcpy(expected + 8, &args.a, 4);
    memcpy(expected + 12, &args.x, 4);
    expected[16] = static_cast<uint8_t>(args.c);
    assert_bytes_equal(expected, r.cb0.data() + kParamBase, sizeof expected);
    // 'extra' and both at once.
    std::vector<uint8_t> buffer(sizeof expected, 0);
    memcpy(buffer.data(), expected, sizeof expected);
    size_t size = buffer.size();
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    c.hStream = nullptr;
    auto log = launchedBy([&] { assert_cu_ok(cuLaunchKernelEx(&c, f, nullptr, extra)); });
    assert_int_equal(log.size(), 1);
    assert_bytes_equal(expected, log[0].cb0.data() + kParamBase, sizeof expected);
    refused(CUDA_ERROR_INVALID_VALUE, [&] { return cuLaunchKernelEx(&c, f, p, extra); }, "kernelParams and extra");
    c.hStream = reinterpret_cast<CUstream>(uintptr_t{0x1234});
    refused(CUDA_ERROR_INVALID_HANDLE, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); }, "a bogus stream");
    assert_cu_ok(cuStreamDestroy(st));
}

// Programmatic and launch-completion events: recorded after the kernel.
void test_attribute_events(void**) {
    requireKernels();
    CUfunction f = fn("k_ptr");
    CUdeviceptr out = 0;
    void* p[] = {&out};
    CUevent untimed = ts_event_new(CU_EVENT_DISABLE_TIMING), timed = ts_event_new(CU_EVENT_DEFAULT);
    const CUlaunchAttributeID ids[] = {CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT,
                                       CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT};
    for (CUlaunchAttributeID id : ids) {
        CUlaunchAttribute a;
        memset(&a, 0, sizeof a);
        a.id = id;
        if (id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT) a.value.programmaticEvent.event = untimed;
        else a.value.launchCompletionEvent.event = untimed;
        CUlaunchConfig c = config(1, 1, 1, 32, 0, &a, 1);
        // Busy work first: the event must follow the kernel, which follows it.
        ts_busy w = ts_busy_new();
        ts_busy_until_not_ready(&w, nullptr);
        assert_cu_ok(cuLaunchKernelEx(&c, f, p, nullptr));
        assert_cu(CUDA_ERROR_NOT_READY, cuEventQuery(untimed));
        assert_cu_ok(cuEventSynchronize(untimed));
        assert_cu_ok(cuStreamQuery(nullptr));
        ts_busy_free(&w);
        // Events must be without flags and not timed; a NULL event is no event.
        if (id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT) a.value.programmaticEvent.flags = 1;
        else a.value.launchCompletionEvent.flags = 1;
        refused(CUDA_ERROR_ILLEGAL_STATE, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); }, "event flags 1");
        if (id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT) a.value.programmaticEvent.flags = 0;
        else a.value.launchCompletionEvent.flags = 0;
        if (id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT) a.value.programmaticEvent.event = timed;
        else a.value.launchCompletionEvent.event = timed;
        refused(CUDA_ERROR_NOT_SUPPORTED, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); }, "a timed event");
        if (id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT) a.value.programmaticEvent.event = nullptr;
        else a.value.launchCompletionEvent.event = nullptr;
        refused(CUDA_ERROR_INVALID_HANDLE, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); }, "a NULL event");
    }
    // An event of another context: refused before the launch.
    CUcontext other = nullptr;
    assert_cu_ok(cuCtxCreate(&other, nullptr, 0, S.dev));
    CUevent foreign = nullptr;
    assert_cu_ok(cuEventCreate(&foreign, CU_EVENT_DISABLE_TIMING));
    CUcontext popped = nullptr;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
    a.value.launchCompletionEvent.event = foreign;
    CUlaunchConfig c = config(1, 1, 1, 32, 0, &a, 1);
    refused(CUDA_ERROR_INVALID_HANDLE, [&] { return cuLaunchKernelEx(&c, f, p, nullptr); }, "another context's event");
    assert_cu_ok(cuCtxDestroy(other));
    assert_cu_ok(cuEventDestroy(untimed));
    assert_cu_ok(cuEventDestroy(timed));
}

// ------------------------------------------------------------------ legacy launch API

void test_legacy_launch(void**) {
    requireKernels();
    CUmodule m = nullptr;
    assert_cu_ok(cuModuleLoadData(&m, S.cubin.data()));
    CUfunction f = nullptr;
    assert_cu_ok(cuModuleGetFunction(&f, m, "k_args"));
    // Nothing set yet: libcuda launches one thread with no parameter bytes.
    auto first = launchedBy([&] { assert_cu_ok(cuLaunch(f)); });
    assert_int_equal(first.size(), 1);
    assert_int_equal(first[0].block[0] * first[0].block[1] * first[0].block[2], 1);
    assert_int_equal(first[0].grid[0] * first[0].grid[1] * first[0].grid[2], 1);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncSetBlockShape(f, 0, 1, 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncSetBlockShape(f, 32, -1, 1));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncSetBlockShape(nullptr, 32, 1, 1));
    assert_cu_ok(cuFuncSetBlockShape(f, 48, 2, 1));
    // k_args(int* out, int a, float f, char c): 17 bytes, set before their size
    // (as NVIDIA's matrixMulDynlinkJIT does).
    const uint64_t out = 0x00007f0011223340ull;
    assert_cu_ok(cuParamSetv(f, 0, (void*)&out, 8));
    assert_cu_ok(cuParamSeti(f, 8, 0xfedcba98u));
    assert_cu_ok(cuParamSetf(f, 12, -7.25f));
    const char ch = 'z';
    assert_cu_ok(cuParamSetv(f, 16, (void*)&ch, 1));
    assert_cu_ok(cuParamSetSize(f, 17));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuParamSetSize(f, 40000));
    // Outside the largest parameter block, before it, without data.
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuParamSeti(f, 32764, 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuParamSeti(f, -4, 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuParamSetv(f, 0, nullptr, 8));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuParamSeti(nullptr, 0, 1));
    uint8_t expected[17];
    const uint32_t a = 0xfedcba98u;
    const float x = -7.25f;
    memcpy(expected, &out, 8);
    memcpy(expected + 8, &a, 4);
    memcpy(expected + 12, &x, 4);
    expected[16] = static_cast<uint8_t>(ch);
    auto log = launchedBy([&] { assert_cu_ok(cuLaunch(f)); });
    assert_int_equal(log.size(), 1);
    assert_int_equal(log[0].grid[0], 1);
    assert_int_equal(log[0].grid[1], 1);
    assert_int_equal(log[0].block[0], 48);
    assert_int_equal(log[0].block[1], 2);
    assert_bytes_equal(expected, log[0].cb0.data() + kParamBase, sizeof expected);
    log = launchedBy([&] { assert_cu_ok(cuLaunchGrid(f, 5, 7)); });
    assert_int_equal(log.size(), 1);
    assert_int_equal(log[0].grid[0], 5);
    assert_int_equal(log[0].grid[1], 7);
    assert_int_equal(log[0].grid[2], 1);
    assert_bytes_equal(expected, log[0].cb0.data() + kParamBase, sizeof expected);
    refused(CUDA_ERROR_INVALID_VALUE, [&] { return cuLaunchGrid(f, 0, 1); }, "cuLaunchGrid 0x1");
    refused(CUDA_ERROR_INVALID_VALUE, [&] { return cuLaunchGrid(f, 1, 65536); }, "cuLaunchGrid 1x65536");
    refused(CUDA_ERROR_INVALID_HANDLE, [&] { return cuLaunchGrid(nullptr, 1, 1); }, "cuLaunchGrid NULL");
    // Async on a stream; shared memory from cuFuncSetSharedSize.
    CUfunction d = nullptr;
    assert_cu_ok(cuModuleGetFunction(&d, m, "k_dyn"));
    assert_cu_ok(cuFuncSetBlockShape(d, 64, 1, 1));
    assert_cu_ok(cuParamSetSize(d, 8));
    assert_cu_ok(cuParamSetv(d, 0, (void*)&out, 8));
    assert_cu_ok(cuFuncSetSharedSize(d, 4000));
    CUstream st = ts_stream_new(0);
    log = launchedBy([&] {
        assert_cu_ok(cuLaunchGridAsync(d, 3, 2, st));
        assert_cu_ok(cuStreamSynchronize(st));
    });
    assert_int_equal(log.size(), 1);
    assert_int_equal(cb0(log[0], kCbufDynamicShared), 4000);
    assert_int_equal(log[0].grid[0], 3);
    refused(CUDA_ERROR_INVALID_HANDLE, [&] { return cuLaunchGridAsync(d, 1, 1, (CUstream)(uintptr_t)0x1234); },
            "cuLaunchGridAsync on a bogus stream");
    assert_cu_ok(cuFuncSetSharedSize(d, 48 * 1024 + 1));
    refused(CUDA_ERROR_INVALID_VALUE, [&] { return cuLaunch(d); }, "shared size above 48 KiB");
    // Each function keeps its own; unloading ends them.
    assert_cu_ok(cuStreamDestroy(st));
    assert_cu_ok(cuModuleUnload(m));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLaunch(f));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuParamSeti(f, 8, 1));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncSetBlockShape(f, 32, 1, 1));
}

void test_ctx_attach_detach(void**) {
    CUcontext got = nullptr;
    assert_cu_ok(cuCtxAttach(&got, 0));
    assert_ptr_equal(got, S.ctx);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxAttach(&got, 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxAttach(nullptr, 0));
    // The attachment is dropped; the context lives on.
    assert_cu_ok(cuCtxDetach(S.ctx));
    unsigned version = 0;
    assert_cu_ok(cuCtxGetApiVersion(S.ctx, &version));
    // A context with no attachment left is destroyed by cuCtxDetach.
    CUcontext c = nullptr;
    assert_cu_ok(cuCtxCreate(&c, nullptr, 0, S.dev));
    assert_cu_ok(cuCtxAttach(&got, 0));
    assert_ptr_equal(got, c);
    assert_cu_ok(cuCtxDetach(c));
    assert_cu_ok(cuCtxGetApiVersion(c, &version));
    assert_cu_ok(cuCtxDetach(c));
    assert_cu(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxDetach(c));
    CUcontext cur = nullptr;
    assert_cu_ok(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, S.ctx);
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxDetach(reinterpret_cast<CUcontext>(uintptr_t{0x1234})));
    // Without a current context there is nothing to attach to.
    assert_cu_ok(cuCtxPopCurrent(&cur));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxAttach(&got, 0));
    assert_cu_ok(cuCtxPushCurrent(cur));
}

// ------------------------------------------------------------------ lazy loading

CUfunctionLoadingState loadingState(CUfunction f) {
    CUfunctionLoadingState st = CU_FUNCTION_LOADING_STATE_MAX;
    assert_cu_ok(cuFuncIsLoaded(&st, f));
    return st;
}

void test_lazy_loading(void**) {
    requireKernels();
    CUmoduleLoadingMode mode = CU_MODULE_EAGER_LOADING;
    assert_cu_ok(cuModuleGetLoadingMode(&mode));
    assert_int_equal(mode, CU_MODULE_LAZY_LOADING);
    // Loading reads the image; nothing reaches the GPU before a kernel is used.
    const uint64_t used = sim::vidmemUsed();
    std::vector<CUmodule> mods(24);
    for (CUmodule& m : mods) assert_cu_ok(cuModuleLoadData(&m, S.cubin.data()));
    assert_int_equal(sim::vidmemUsed(), used);
    // Functions enumerated are not loaded; each is once looked up, launched or loaded.
    unsigned count = 0;
    assert_cu_ok(cuModuleGetFunctionCount(&count, mods[0]));
    std::vector<CUfunction> fs(count);
    assert_cu_ok(cuModuleEnumerateFunctions(fs.data(), count, mods[0]));
    for (CUfunction f : fs) assert_int_equal(loadingState(f), CU_FUNCTION_LOADING_STATE_UNLOADED);
    CUdeviceptr out = 0;
    void* p[] = {&out};
    CUfunction launched = nullptr;
    for (CUfunction f : fs) {
        const char* name = nullptr;
        assert_cu_ok(cuFuncGetName(&name, f));
        if (strcmp(name, "k_ptr") == 0) launched = f;
    }
    assert_non_null(launched);
    auto log = launchedBy([&] { assert_cu_ok(cuLaunchKernel(launched, 1, 1, 1, 32, 1, 1, 0, nullptr, p, nullptr)); });
    assert_int_equal(log.size(), 1);
    assert_int_equal(loadingState(launched), CU_FUNCTION_LOADING_STATE_LOADED);
    for (CUfunction f : fs)
        if (f != launched) assert_int_equal(loadingState(f), CU_FUNCTION_LOADING_STATE_UNLOADED);
    // The launch placed the code: the program address is in GPU memory now.
    assert_true(sim::vidmemUsed() > used || log[0].programAddress != 0);
    // cuModuleGetFunction and cuFuncLoad load too.
    CUfunction a = nullptr;
    assert_cu_ok(cuModuleGetFunction(&a, mods[1], "k_dyn"));
    assert_int_equal(loadingState(a), CU_FUNCTION_LOADING_STATE_LOADED);
    assert_cu_ok(cuModuleEnumerateFunctions(fs.data(), count, mods[2]));
    assert_int_equal(loadingState(fs[0]), CU_FUNCTION_LOADING_STATE_UNLOADED);
    assert_cu_ok(cuFuncLoad(fs[0]));
    assert_int_equal(loadingState(fs[0]), CU_FUNCTION_LOADING_STATE_LOADED);
    // A global's address places the module.
    CUdeviceptr base = 0;
    size_t bytes = 0;
    assert_cu_ok(cuModuleGetGlobal(&base, &bytes, mods[3], "g_sink"));
    assert_int_equal(bytes, sizeof(int));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncLoad(nullptr));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuFuncIsLoaded(nullptr, a));
    for (CUmodule m : mods) assert_cu_ok(cuModuleUnload(m));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncLoad(a));
    CUfunctionLoadingState st;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncIsLoaded(&st, a));
}

// CUDA_MODULE_LOADING=EAGER (read once per process: a child checks it).
int eagerChild(const char* cubinPath) {
    size_t size = 0;
    void* cubin = ts_read_file(cubinPath, &size);
    CUdevice dev;
    CUcontext ctx;
    CUmodule m;
    CUfunction f;
    CUmoduleLoadingMode mode = CU_MODULE_LAZY_LOADING;
    CUfunctionLoadingState st = CU_FUNCTION_LOADING_STATE_UNLOADED;
    if (!cubin || cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, nullptr, 0, dev) ||
        cuModuleGetLoadingMode(&mode) || cuModuleLoadData(&m, cubin) || cuModuleGetFunction(&f, m, "k_ptr") ||
        cuFuncIsLoaded(&st, f))
        return 2;
    std::printf("eager child: mode %d, loaded %d\n", static_cast<int>(mode), static_cast<int>(st));
    return mode == CU_MODULE_EAGER_LOADING && st == CU_FUNCTION_LOADING_STATE_LOADED ? 0 : 1;
}

void test_eager_loading(void**) {
    requireKernels();
    char* path = ts_temp_write("eager.cubin", S.cubin.data(), S.cubin.size());
    assert_non_null(path);
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(len > 0);
    self[len] = 0;
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
        if (strncmp(*e, "CUDA_MODULE_LOADING=", 20) != 0) env.emplace_back(*e);
    env.emplace_back("CUDA_MODULE_LOADING=EAGER");
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    char arg[] = "--eager-child";
    char* argv[] = {self, arg, path, nullptr};
    pid_t pid = 0;
    assert_int_equal(posix_spawn(&pid, self, nullptr, nullptr, argv, envp.data()), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    free(path);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the CUDA_MODULE_LOADING=EAGER child %s %d", WIFEXITED(status) ? "exited with" : "died of signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

}  // namespace

int main(int argc, char** argv) {
    // The simulated driver, whatever the environment says.
    setenv("NVLITE_DEVICE", "sim", 1);
    if (argc == 3 && strcmp(argv[1], "--eager-child") == 0) return eagerChild(argv[2]);
    unsetenv("CUDA_MODULE_LOADING");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_driver_area),
        cmocka_unit_test(test_cluster_launch_qmd_and_registers),
        cmocka_unit_test(test_cluster_from_the_kernel),
        cmocka_unit_test(test_cluster_limits),
        cmocka_unit_test(test_cluster_required_at_run_time),
        cmocka_unit_test(test_cooperative_workspace),
        cmocka_unit_test(test_cooperative_workspace_bytes),
        cmocka_unit_test(test_cooperative_limits),
        cmocka_unit_test(test_shared_carveout_holds_occupancy),
        cmocka_unit_test(test_launch_occupancy_follows_attributes),
        cmocka_unit_test(test_ex_attributes),
        cmocka_unit_test(test_ex_parameters_and_streams),
        cmocka_unit_test(test_attribute_events),
        cmocka_unit_test(test_legacy_launch),
        cmocka_unit_test(test_ctx_attach_detach),
        cmocka_unit_test(test_lazy_loading),
        cmocka_unit_test(test_eager_loading),
    };
    return cmocka_run_group_tests_name("launch_ex_sim", tests, groupSetup, groupTeardown);
}
