// The first module load in a fresh context on the simulated driver (issue 12,
// module load): with lazy loading (CUDA_MODULE_LOADING unset, libcuda's
// default) cuModuleLoadData reads and checks the image on the host only. It
// makes no ioctl (no RM allocation, no GPU memory: cuMemGetInfo and the
// sim's video memory unchanged), and neither does unloading a module whose
// code was never placed. The first cuModuleGetFunction places it, and the
// first launch runs with the kernel's code and parameters.
// Kernels are compiled with NVRTC (the tests skip without it).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kdrv/sim/sim_control.h"
#include "nvlite/cuda.h"
#include "support/test_support.h"
#include "support/ts_kernels.h"

namespace sim = nvl::kdrv::sim;

namespace {

// Three kernels, as bench_perf's module of the "first module load" figure.
const char kSource[] =
    "extern \"C\" __global__ void empty() {}\n"
    "extern \"C\" __global__ void axpy(float* y, const float* x, float a, unsigned n) {\n"
    "    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] += a * x[i];\n"
    "}\n"
    "extern \"C\" __global__ void local64(int* out, int seed) {\n"
    "    int a[64];\n"
    "    for (int i = 0; i < 64; ++i) a[(i * seed + threadIdx.x) & 63] = seed + i;\n"
    "    out[blockIdx.x * blockDim.x + threadIdx.x] = a[(seed + threadIdx.x) & 63];\n"
    "}\n";

void* cubin() {
    static void* image = nullptr;
    if (!image) {
        const char* why = nullptr;
        if (!ts_nvrtc_available(&why)) ts_skip("NVRTC is needed: %s", why);
        size_t size = 0;
        image = ts_compile_cubin(kSource, "module_load", ts_device_arch(), &size);
        if (!image) fail_msg("NVRTC could not compile the kernels");
    }
    return image;
}

struct DeviceState {
    uint64_t ioctls;
    uint64_t vidmem;
    size_t free;
};

DeviceState deviceState() {
    DeviceState s{};
    size_t total = 0;
    assert_cu_ok(cuMemGetInfo(&s.free, &total));
    // After cuMemGetInfo: its own query is not counted.
    s.ioctls = sim::counters().ioctls;
    s.vidmem = sim::vidmemUsed();
    return s;
}

// 'before' moves past the ioctl of its own cuMemGetInfo.
void expectUnchanged(DeviceState& before, const char* what) {
    const uint64_t ioctls = sim::counters().ioctls, vidmem = sim::vidmemUsed();
    if (ioctls != before.ioctls)
        fail_msg("%s made %llu ioctls", what, static_cast<unsigned long long>(ioctls - before.ioctls));
    if (vidmem != before.vidmem)
        fail_msg("%s changed the video memory in use by %lld bytes", what,
                 static_cast<long long>(vidmem) - static_cast<long long>(before.vidmem));
    size_t free = 0, total = 0;
    assert_cu_ok(cuMemGetInfo(&free, &total));
    assert_int_equal(free, before.free);
    before.ioctls = sim::counters().ioctls;
}

void test_first_lazy_load_makes_no_device_work(void** state) {
    ts_fixture* fx = ts_fx(state);
    void* image = cubin();
    // A second, fresh context: the first load in it.
    CUcontext fresh = nullptr;
    assert_cu_ok(cuCtxCreate(&fresh, nullptr, 0, fx->dev));
    CUmoduleLoadingMode mode = CU_MODULE_EAGER_LOADING;
    assert_cu_ok(cuModuleGetLoadingMode(&mode));
    assert_int_equal(mode, CU_MODULE_LAZY_LOADING);

    DeviceState before = deviceState();
    CUmodule m = nullptr;
    assert_cu_ok(cuModuleLoadData(&m, image));
    expectUnchanged(before, "the first lazy cuModuleLoadData in a fresh context");
    // Unloading code never placed has nothing to give back either.
    assert_cu_ok(cuModuleUnload(m));
    expectUnchanged(before, "unloading a module never placed");

    // Loaded again: lookups place it, and the first launch runs its code.
    assert_cu_ok(cuModuleLoadData(&m, image));
    expectUnchanged(before, "the second lazy cuModuleLoadData");
    CUfunction local64 = ts_get_function(m, "local64");
    CUfunctionLoadingState loaded = CU_FUNCTION_LOADING_STATE_UNLOADED;
    assert_cu_ok(cuFuncIsLoaded(&loaded, local64));
    assert_int_equal(loaded, CU_FUNCTION_LOADING_STATE_LOADED);
    int localBytes = 0;
    assert_cu_ok(cuFuncGetAttribute(&localBytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, local64));
    if (localBytes < 256) fail_msg("local64 reports %d bytes of local memory", localBytes);

    CUdeviceptr out = ts_dev_alloc(3 * 96 * sizeof(int));
    int seed = 37;
    void* args[] = {&out, &seed};
    assert_cu_ok(cuCtxSynchronize());
    sim::clearLaunches();
    assert_cu_ok(cuLaunchKernel(local64, 3, 1, 1, 96, 1, 1, 0, nullptr, args, nullptr));
    assert_cu_ok(cuCtxSynchronize());
    const std::vector<sim::LaunchRecord> log = sim::launches();
    assert_int_equal(log.size(), 1);
    assert_int_equal(log[0].grid[0], 3);
    assert_int_equal(log[0].block[0], 96);
    assert_true(log[0].programAddress != 0);
    assert_true(log[0].registerCount > 0);
    // The parameters in constant bank 0: the pointer, then the seed.
    bool foundOut = false, foundSeed = false;
    for (size_t off = 0; off + 12 <= log[0].cb0.size(); off += 4) {
        uint64_t p;
        int32_t s;
        memcpy(&p, log[0].cb0.data() + off, sizeof p);
        memcpy(&s, log[0].cb0.data() + off + 8, sizeof s);
        if (p == out && s == seed) foundOut = foundSeed = true;
    }
    assert_true(foundOut && foundSeed);
    assert_cu_ok(cuMemFree(out));
    assert_cu_ok(cuModuleUnload(m));
    assert_cu_ok(cuCtxDestroy(fresh));
}

// Loads of the same image in many fresh contexts: each load alone makes no
// device work, whatever the contexts before it did.
void test_every_first_load_is_host_only(void** state) {
    ts_fixture* fx = ts_fx(state);
    void* image = cubin();
    for (int i = 0; i < 5; ++i) {
        CUcontext fresh = nullptr;
        assert_cu_ok(cuCtxCreate(&fresh, nullptr, 0, fx->dev));
        DeviceState before = deviceState();
        CUmodule m = nullptr;
        assert_cu_ok(cuModuleLoadData(&m, image));
        expectUnchanged(before, "a first lazy cuModuleLoadData");
        if (i % 2) (void)ts_get_function(m, "axpy");  // placed in every other one
        assert_cu_ok(cuModuleUnload(m));
        assert_cu_ok(cuCtxDestroy(fresh));
    }
}

}  // namespace

int main() {
    setenv("NVLITE_DEVICE", "sim", 1);
    unsetenv("CUDA_MODULE_LOADING");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_first_lazy_load_makes_no_device_work, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_every_first_load_is_host_only, ts_ctx_setup, ts_ctx_teardown),
    };
    return cmocka_run_group_tests_name("module_load_sim", tests, nullptr, nullptr);
}
