// Device-side launches (lib/core/device_launch.h) on the simulated driver.
// The kernel is a real one (NVRTC -rdc, linked with the toolkit's
// libcudadevrt by cuLink, so that nvlite links its device runtime in and
// treats it as a kernel that launches kernels); the simulator does not run
// SASS, so a kernel body (sim_control.h) plays it: it reads its parameters
// and its launch queue from constant bank 0 (%envreg3..5) and makes its
// launches through the queue as devrt/devrt.cu does (take a slot, fill it,
// number it). Checked:
//   - the queue and the depth reach each grid; a kernel that launches
//     nothing has no queue;
//   - the launches run depth first, each grid's in launch order (not in the
//     order their slots were taken), with their parameters, geometry and
//     the launching function;
//   - a copy in the stream right after the parent sees every launched grid
//     done;
//   - CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT (rounded up to 32 slots):
//     slots beyond it are refused;
//   - a launch of something that is not a kernel of the module fails the
//     context with CUDA_ERROR_LAUNCH_FAILED;
//   - the module unloaded right after the launch: its launches still run.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <map>
#include <mutex>
#include <vector>

#include "common/envregs.h"
#include "core/devrt_abi.h"
#include "kdrv/sim/sim_control.h"
#include "nvlite/cuda.h"
#include "support/test_support.h"

namespace sim = nvl::kdrv::sim;
namespace devrt = nvl::devrt;

namespace {

constexpr uint32_t kEnvRegBase = 0x40;
constexpr uint32_t kParamBase = 0x210;

// The kernel the simulator's body plays. What it does on the GPU does not
// matter here, only that it launches kernels.
const char kSource[] =
    "extern \"C\" __global__ void node(int* log, int id) {\n"
    "    log[id] = id;\n"
    "    if (id < 4) node<<<1, 1>>>(log, 2 * id);\n"
    "}\n";

// What the body saw of each grid, in the order they ran.
struct Grid {
    int id;
    uint32_t depth;
    uint64_t queue;
    uint32_t grid0, block0;
};

struct Plan {
    // For each node id: the children it launches, in launch order; their
    // slots are taken in reverse order (launch order is not slot order).
    std::map<int, std::vector<int>> children;
    uint64_t badFunction = 0;  // launched by node 1 when set
    std::mutex mutex;
    std::vector<Grid> ran;
    int refused = 0;  // slots not given (queue full)

    // What the body recorded (it runs on the simulator's thread; the test
    // reads under the same lock: the GPU's semaphores order them, but not
    // in a way ThreadSanitizer sees).
    std::vector<Grid> grids() {
        std::lock_guard lock(mutex);
        return ran;
    }
    int refusals() {
        std::lock_guard lock(mutex);
        return refused;
    }
    void clear() {
        std::lock_guard lock(mutex);
        ran.clear();
        refused = 0;
    }
};
Plan* gPlan = nullptr;

template <class T>
bool get(sim::KernelMemory& m, uint64_t va, T* out) {
    return m.read(va, out, sizeof *out);
}
template <class T>
bool put(sim::KernelMemory& m, uint64_t va, const T& v) {
    return m.write(va, &v, sizeof v);
}

uint32_t cb0Word(const sim::LaunchRecord& r, uint32_t offset) {
    uint32_t v = 0;
    if (offset + 4 <= r.cb0.size()) memcpy(&v, r.cb0.data() + offset, 4);
    return v;
}

// The kernel body: node(int* log, int id).
bool playNode(const sim::LaunchRecord& r, sim::KernelMemory& m) {
    Plan& plan = *gPlan;
    uint64_t log = 0;
    memcpy(&log, r.cb0.data() + kParamBase, 8);
    const int id = static_cast<int>(cb0Word(r, kParamBase + 8));
    const uint64_t queue = static_cast<uint64_t>(cb0Word(r, kEnvRegBase + 4 * nvl::envreg::kLaunchQueueHigh)) << 32 |
                           cb0Word(r, kEnvRegBase + 4 * nvl::envreg::kLaunchQueueLow);
    const uint32_t depth = cb0Word(r, kEnvRegBase + 4 * nvl::envreg::kLaunchDepth);
    std::vector<int> kids;
    {
        std::lock_guard lock(plan.mutex);
        plan.ran.push_back({id, depth, queue, r.grid[0], r.block[0]});
        kids = plan.children[id];
    }
    int order = 0;
    {
        std::lock_guard lock(plan.mutex);
        order = static_cast<int>(plan.ran.size());
    }
    if (!put(m, log + 4 * static_cast<uint64_t>(id), order)) return false;
    if (!queue) return true;
    devrt::LaunchQueue q;
    if (!get(m, queue, &q)) return false;
    // Take the slots (last child first), then launch in order.
    std::vector<std::pair<int, uint64_t>> taken;
    std::vector<uint64_t> functions;
    for (size_t k = 0; k < kids.size(); ++k) functions.push_back(r.programAddress);
    if (id == 1 && plan.badFunction) {
        kids.push_back(-1);
        functions.push_back(plan.badFunction);
    }
    for (size_t k = kids.size(); k-- > 0;) {
        const uint64_t index = q.taken++;
        if (index >= q.slots) {
            std::lock_guard lock(plan.mutex);
            ++plan.refused;
            continue;
        }
        const uint64_t slot = q.slotsAddress + index * devrt::kLaunchSlotBytes;
        devrt::LaunchSlot s{};
        s.function = functions[k];
        s.grid[0] = 2 + static_cast<uint32_t>(kids[k] & 1);
        s.grid[1] = s.grid[2] = 1;
        s.block[0] = 32 + static_cast<uint32_t>(k);
        s.block[1] = s.block[2] = 1;
        if (!put(m, slot, s)) return false;
        if (!put(m, slot + devrt::kLaunchHeaderBytes, log) || !put(m, slot + devrt::kLaunchHeaderBytes + 8, kids[k]))
            return false;
        taken.emplace_back(kids[k], slot);
    }
    for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
        const uint32_t number = static_cast<uint32_t>(++q.launched);
        if (!put(m, it->second + offsetof(devrt::LaunchSlot, number), number)) return false;
    }
    return put(m, queue, q);
}

// The kernel, linked with libcudadevrt (the test is skipped without the toolkit).
CUlibrary loadNode() {
    const char* why = nullptr;
    if (!ts_nvrtc_available(&why)) ts_skip("no NVRTC: %s", why);
    const char* opts[] = {"-rdc=true"};
    size_t size = 0;
    void* object = ts_compile_cubin_opts(kSource, "device_launch_sim.cu", 90, opts, 1, &size);
    assert_non_null(object);
    CUlibrary lib = ts_load_with_cudadevrt(CU_JIT_INPUT_CUBIN, object, size, "node");
    free(object);
    return lib;
}

CUfunction nodeFunction(CUlibrary lib) {
    CUkernel k;
    assert_cu_ok(cuLibraryGetKernel(&k, lib, "node"));
    return reinterpret_cast<CUfunction>(k);
}

struct BodyScope {
    Plan plan;
    BodyScope() {
        gPlan = &plan;
        sim::setKernelBody(playNode);
    }
    ~BodyScope() {
        sim::setKernelBody({});
        gPlan = nullptr;
    }
};

void test_depth_first_in_launch_order(void** state) {
    (void)state;
    CUlibrary lib = loadNode();
    BodyScope body;
    body.plan.children = {{1, {3, 2}}, {2, {4, 5}}, {3, {6}}, {6, {7}}};
    CUstream s;
    assert_cu_ok(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr log;
    assert_cu_ok(cuMemAlloc(&log, 16 * sizeof(int)));
    assert_cu_ok(cuMemsetD32(log, 0, 16));
    int id = 1;
    void* params[] = {&log, &id};
    assert_cu_ok(cuLaunchKernel(nodeFunction(lib), 5, 1, 1, 64, 1, 1, 0, s, params, nullptr));
    int got[16];
    assert_cu_ok(cuMemcpyDtoHAsync(got, log, sizeof got, s));  // after the parent: after its launches too
    assert_cu_ok(cuStreamSynchronize(s));
    const int expected[] = {1, 3, 6, 7, 2, 4, 5};
    const uint32_t depths[] = {0, 1, 2, 3, 1, 2, 2};
    std::vector<Grid> ran = body.plan.grids();
    assert_int_equal(ran.size(), 7);
    for (int i = 0; i < 7; ++i) {
        const Grid& g = ran[i];
        assert_int_equal(g.id, expected[i]);
        assert_int_equal(g.depth, depths[i]);
        assert_true(g.queue != 0);
        assert_int_equal(g.queue, ran[0].queue);
        assert_int_equal(got[expected[i]], i + 1);
        if (i > 0) assert_int_equal(g.grid0, 2u + (g.id & 1));
    }
    assert_int_equal(ran[0].grid0, 5);
    assert_int_equal(ran[0].block0, 64);
    assert_int_equal(ran[1].block0, 32);  // node 1's first launch (3)
    assert_int_equal(ran[4].block0, 33);  // its second (2)

    // Again: the queue is reused from its start.
    body.plan.clear();
    assert_cu_ok(cuLaunchKernel(nodeFunction(lib), 1, 1, 1, 1, 1, 1, 0, s, params, nullptr));
    assert_cu_ok(cuStreamSynchronize(s));
    assert_int_equal(body.plan.grids().size(), 7);
    assert_int_equal(body.plan.refusals(), 0);
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuMemFree(log));
    assert_cu_ok(cuLibraryUnload(lib));
}

void test_pending_limit(void** state) {
    (void)state;
    CUlibrary lib = loadNode();
    BodyScope body;
    std::vector<int> kids;
    for (int i = 2; i < 42; ++i) kids.push_back(i);
    body.plan.children = {{1, kids}};
    size_t limit = 0;
    assert_cu_ok(cuCtxGetLimit(&limit, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT));
    assert_int_equal(limit, 2048);
    assert_cu_ok(cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 0));
    assert_cu_ok(cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 3));
    assert_cu_ok(cuCtxGetLimit(&limit, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT));
    assert_int_equal(limit, 3);
    CUdeviceptr log;
    assert_cu_ok(cuMemAlloc(&log, 64 * sizeof(int)));
    int id = 1;
    void* params[] = {&log, &id};
    assert_cu_ok(cuLaunchKernel(nodeFunction(lib), 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    assert_cu_ok(cuCtxSynchronize());
    // A limit of 3 holds 32 (libcuda's granule); slots are taken last child
    // first: 41 down to 10 got them.
    assert_int_equal(body.plan.refusals(), 8);
    const std::vector<Grid> ran = body.plan.grids();
    assert_int_equal(ran.size(), 33);
    assert_int_equal(ran[1].id, 10);
    assert_int_equal(ran[32].id, 41);
    assert_cu_ok(cuMemFree(log));
    assert_cu_ok(cuLibraryUnload(lib));
}

void test_not_a_kernel_fails_the_context(void** state) {
    (void)state;
    CUlibrary lib = loadNode();
    BodyScope body;
    body.plan.children = {{1, {2}}};
    body.plan.badFunction = 0x1230;
    CUdeviceptr log;
    assert_cu_ok(cuMemAlloc(&log, 16 * sizeof(int)));
    int id = 1;
    void* params[] = {&log, &id};
    assert_cu_ok(cuLaunchKernel(nodeFunction(lib), 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    assert_cu(CUDA_ERROR_LAUNCH_FAILED, cuCtxSynchronize());
    // Node 2 (launched first) ran; the bad launch stopped the rest.
    assert_int_equal(body.plan.grids().size(), 2);
    assert_cu(CUDA_ERROR_LAUNCH_FAILED, cuMemAlloc(&log, 4));
}

void test_module_unloaded_after_launch(void** state) {
    (void)state;
    CUlibrary lib = loadNode();
    BodyScope body;
    body.plan.children = {{1, {2}}, {2, {3}}};
    CUdeviceptr log;
    assert_cu_ok(cuMemAlloc(&log, 16 * sizeof(int)));
    int id = 1;
    void* params[] = {&log, &id};
    assert_cu_ok(cuLaunchKernel(nodeFunction(lib), 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    assert_cu_ok(cuLibraryUnload(lib));
    assert_cu_ok(cuCtxSynchronize());
    assert_int_equal(body.plan.grids().size(), 3);
    assert_cu_ok(cuMemFree(log));
}

void test_plain_kernel_has_no_queue(void** state) {
    (void)state;
    const char* why = nullptr;
    if (!ts_nvrtc_available(&why)) ts_skip("no NVRTC: %s", why);
    size_t size = 0;
    void* cubin = ts_compile_cubin("extern \"C\" __global__ void plain(int* p) { *p = 1; }", "plain.cu", 90, &size);
    assert_non_null(cubin);
    CUmodule m;
    assert_cu_ok(cuModuleLoadData(&m, cubin));
    free(cubin);
    CUfunction f;
    assert_cu_ok(cuModuleGetFunction(&f, m, "plain"));
    CUdeviceptr p;
    assert_cu_ok(cuMemAlloc(&p, 4));
    void* params[] = {&p};
    sim::clearLaunches();
    assert_cu_ok(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    assert_cu_ok(cuCtxSynchronize());
    const auto launches = sim::launches();
    assert_int_equal(launches.size(), 1);
    for (uint32_t reg : {nvl::envreg::kLaunchQueueHigh, nvl::envreg::kLaunchQueueLow, nvl::envreg::kLaunchDepth})
        assert_int_equal(cb0Word(launches[0], kEnvRegBase + 4 * reg), 0);
    assert_cu_ok(cuMemFree(p));
    assert_cu_ok(cuModuleUnload(m));
}

}  // namespace

int main() {
    setenv("NVLITE_DEVICE", "sim", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_depth_first_in_launch_order, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_pending_limit, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_not_a_kernel_fails_the_context, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_module_unloaded_after_launch, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_plain_kernel_has_no_queue, ts_ctx_setup, ts_ctx_teardown),
    };
    return cmocka_run_group_tests_name("device_launch_sim", tests, nullptr, nullptr);
}
