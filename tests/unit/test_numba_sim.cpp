// What numba-cuda's own test suite needed from the driver, checked on the
// simulated driver (NVLITE_DEVICE=sim, set by main before cuInit). The sim
// records each launch (QMD and constant bank 0) without running it.
//   - The generic address of a module's __constant__ data in constant bank
//     0 (c[0x0][0xd0]): numba keeps print()'s format strings and constant
//     arrays in the constant space and passes them as generic pointers
//     (cvta.const), which read this slot. Zero there made vprintf see NULL
//     or fault near address 0 (test_print, test_array_methods).
//   - Cooperative groups through libcudadevrt (numba's this_grid().sync()):
//     its cudaCGGetIntrinsicHandle / cudaCGSynchronize call two functions
//     the driver provides; the image used to be refused as invalid.
//   - Copies and fills of 0 bytes succeed whatever the addresses (numba
//     copies empty arrays to a NULL device pointer: test_array_reshape).
//   - After fork() the child gets CUDA_ERROR_NOT_INITIALIZED from every call
//     (numba's "CUDA initialized before forking", test_multiprocessing).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "hw/compute.h"
#include "kdrv/sim/sim_control.h"
#include "nvlite/cuda.h"
#include "support/test_support.h"

namespace sim = nvl::kdrv::sim;
namespace hw = nvl::hw;

namespace {

constexpr uint32_t kCbufUserConstants = 0xd0;  // lib/hw/compute.cpp
constexpr uint32_t kCbufEnvReg1 = 0x44, kCbufEnvReg2 = 0x48;
constexpr uint32_t kParamBase = 0x210;

// Kernels whose __constant__ data is reached through generic pointers, as
// numba's code reaches its format strings and constant arrays.
const char* const kConstantSource = R"(
__constant__ double c_values[5] = {3.5, -2.25, 1.0, 7.75, 0.125};
__device__ __noinline__ void copy(double* d, const double* s, int n) { for (int i = 0; i < n; ++i) d[i] = s[i]; }
extern "C" __global__ void k_const(double* out, int n) { copy(out, c_values, n); }
)";
const char* const kPlainSource = R"(
extern "C" __global__ void k_plain(int* out) { if (out) out[threadIdx.x] = threadIdx.x; }
)";
// Cooperative groups the way numba reaches them: libcudadevrt's entry points.
const char* const kCgSource = R"(
extern "C" __global__ void k_cg(unsigned long long* out) {
    unsigned long long h = cudaCGGetIntrinsicHandle(cudaCGScopeGrid);
    cudaError_t e = cudaCGSynchronize(h, 0);
    if (out && threadIdx.x == 0) out[blockIdx.x] = h + (unsigned long long)e;
}
)";

struct Suite {
    bool haveNvrtc = false;
    const char* why = nullptr;
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    int arch = 0;
};
Suite S;

void requireKernels() {
    if (!S.haveNvrtc) ts_skip("%s", S.why);
}

std::vector<uint8_t> compile(const char* source, const char* name, bool rdc) {
    const char* opts[] = {"-rdc=true"};
    size_t size = 0;
    void* cubin = ts_compile_cubin_opts(source, name, S.arch, rdc ? opts : nullptr, rdc ? 1 : 0, &size);
    if (!cubin) fail_msg("NVRTC could not compile %s", name);
    std::vector<uint8_t> out(static_cast<uint8_t*>(cubin), static_cast<uint8_t*>(cubin) + size);
    free(cubin);
    return out;
}

int groupSetup(void**) {
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&S.dev, 0) != CUDA_SUCCESS) return -1;
    int major = 0, minor = 0;
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, S.dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, S.dev);
    S.arch = major * 10 + minor;
    if (cuCtxCreate(&S.ctx, nullptr, 0, S.dev) != CUDA_SUCCESS) return -1;
    S.haveNvrtc = ts_nvrtc_available(&S.why);
    return 0;
}

int groupTeardown(void**) {
    if (S.ctx) cuCtxDestroy(S.ctx);
    return 0;
}

std::vector<sim::LaunchRecord> launchedBy(const std::function<void()>& action) {
    assert_cu_ok(cuCtxSynchronize());
    sim::clearLaunches();
    action();
    assert_cu_ok(cuCtxSynchronize());
    return sim::launches();
}

uint64_t cb0u64(const sim::LaunchRecord& r, uint32_t offset) {
    if (r.cb0.size() < offset + 8) fail_msg("constant bank 0 holds %zu bytes, not 0x%x", r.cb0.size(), offset + 8);
    uint64_t v;
    memcpy(&v, r.cb0.data() + offset, 8);
    return v;
}

uint32_t cb0u32(const sim::LaunchRecord& r, uint32_t offset) {
    if (r.cb0.size() < offset + 4) fail_msg("constant bank 0 holds %zu bytes, not 0x%x", r.cb0.size(), offset + 4);
    uint32_t v;
    memcpy(&v, r.cb0.data() + offset, 4);
    return v;
}

CUlaunchConfig config(unsigned grid, unsigned block, CUlaunchAttribute* attrs, unsigned n) {
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = grid;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = block;
    c.blockDimY = c.blockDimZ = 1;
    c.attrs = attrs;
    c.numAttrs = n;
    return c;
}

// ------------------------------------------------------------------ constants

// The launch path writes the address it is given, and nothing when there is none.
void test_user_constants_slot_written(void**) {
    hw::KernelDescriptor k;
    k.programVa = 0x7f0000001000ull;
    k.programBytes = 0x400;
    k.registers = 16;
    k.paramBase = kParamBase;
    k.cbuf0Bytes = kParamBase + 8;
    k.userConstantsVa = 0x7f0123456780ull;
    hw::ComputeState s;
    hw::LaunchGeometry g{{3, 1, 1}, {33, 1, 1}, 0};
    std::vector<uint8_t> slot(hw::Launch::dataBytes(k, s, g), 0xee);
    hw::Launch::Image image;
    hw::Launch::write(image, {slot.data(), 0x7f0000200000ull}, hw::Launch::makeTemplate(k, s), k, g, s,
                      [](uint8_t* p) { memset(p, 0x5a, 8); });
    uint64_t v;
    memcpy(&v, slot.data() + kCbufUserConstants, 8);
    assert_int_equal(v, 0x7f0123456780ull);
    k.userConstantsVa = 0;
    std::fill(slot.begin(), slot.end(), 0xee);
    hw::Launch::write(image, {slot.data(), 0x7f0000200000ull}, hw::Launch::makeTemplate(k, s), k, g, s,
                      [](uint8_t* p) { memset(p, 0x5a, 8); });
    memcpy(&v, slot.data() + kCbufUserConstants, 8);
    assert_int_equal(v, 0);
}

// Through the library API (numba's path): the slot holds the address of the
// module's constant bank, where the __constant__ variable's bytes are.
void test_user_constants_through_library(void**) {
    requireKernels();
    const std::vector<uint8_t> cubin = compile(kConstantSource, "numba_const.cu", true);
    CUlibrary lib = nullptr;
    assert_cu_ok(cuLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel kern = nullptr;
    assert_cu_ok(cuLibraryGetKernel(&kern, lib, "k_const"));
    CUdeviceptr out = 0;
    assert_cu_ok(cuMemAlloc(&out, 5 * sizeof(double)));
    int n = 5;
    void* params[] = {&out, &n};
    CUlaunchConfig c = config(1, 1, nullptr, 0);
    auto log = launchedBy([&] { assert_cu_ok(cuLaunchKernelEx(&c, reinterpret_cast<CUfunction>(kern), params, nullptr)); });
    assert_int_equal(log.size(), 1);
    const uint64_t slot = cb0u64(log[0], kCbufUserConstants);

    CUdeviceptr global = 0;
    size_t bytes = 0;
    assert_cu_ok(cuLibraryGetGlobal(&global, &bytes, lib, "c_values"));
    assert_int_equal(bytes, 5 * sizeof(double));
    assert_true(slot != 0);
    assert_true(global >= slot);
    // The bank's bytes at the slot's address are the initialiser.
    const double expected[5] = {3.5, -2.25, 1.0, 7.75, 0.125};
    double seen[5];
    assert_cu_ok(cuMemcpyDtoH(seen, global, sizeof seen));
    assert_memory_equal(seen, expected, sizeof seen);
    assert_true(global - slot < 64 * 1024);  // inside the bank (64 KiB at most)
    assert_cu_ok(cuMemFree(out));
    assert_cu_ok(cuLibraryUnload(lib));
}

// A module without __constant__ data: nothing there.
void test_user_constants_absent(void**) {
    requireKernels();
    const std::vector<uint8_t> cubin = compile(kPlainSource, "numba_plain.cu", false);
    CUmodule mod = nullptr;
    assert_cu_ok(cuModuleLoadData(&mod, cubin.data()));
    CUfunction f = nullptr;
    assert_cu_ok(cuModuleGetFunction(&f, mod, "k_plain"));
    CUdeviceptr out = 0;
    void* params[] = {&out};
    auto log = launchedBy([&] { assert_cu_ok(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr)); });
    assert_int_equal(log.size(), 1);
    assert_int_equal(cb0u64(log[0], kCbufUserConstants), 0);
    assert_cu_ok(cuModuleUnload(mod));
}

// ------------------------------------------------------------------ cooperative groups

// NVRTC -rdc code calling cudaCGGetIntrinsicHandle/cudaCGSynchronize, linked
// with libcudadevrt by nvJitLink (cuLink*), loaded as a library and launched
// cooperatively, as numba does for this_grid().sync().
void test_cooperative_groups_through_cudadevrt(void**) {
    requireKernels();
    const char* cudaHome = getenv("CUDA_HOME");
    const std::string devrt = std::string(cudaHome ? cudaHome : "/usr/local/cuda") + "/lib64/libcudadevrt.a";
    if (access(devrt.c_str(), R_OK) != 0) ts_skip("no %s to link with", devrt.c_str());
    const std::vector<uint8_t> object = compile(kCgSource, "numba_cg.cu", true);
    CUlinkState link = nullptr;
    CUresult r = cuLinkCreate(0, nullptr, nullptr, &link);
    if (r == CUDA_ERROR_NOT_SUPPORTED || r == CUDA_ERROR_JIT_COMPILER_NOT_FOUND) ts_skip("no nvJitLink here");
    assert_cu_ok(r);
    assert_cu_ok(cuLinkAddData(link, CU_JIT_INPUT_CUBIN, const_cast<uint8_t*>(object.data()), object.size(), "cg",
                               0, nullptr, nullptr));
    assert_cu_ok(cuLinkAddFile(link, CU_JIT_INPUT_LIBRARY, devrt.c_str(), 0, nullptr, nullptr));
    void* linked = nullptr;
    size_t linkedBytes = 0;
    assert_cu_ok(cuLinkComplete(link, &linked, &linkedBytes));
    std::vector<uint8_t> image(static_cast<uint8_t*>(linked), static_cast<uint8_t*>(linked) + linkedBytes);
    assert_cu_ok(cuLinkDestroy(link));

    CUlibrary lib = nullptr;
    assert_cu_ok(cuLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel kern = nullptr;
    assert_cu_ok(cuLibraryGetKernel(&kern, lib, "k_cg"));
    CUdeviceptr out = 0;
    assert_cu_ok(cuMemAlloc(&out, 7 * sizeof(unsigned long long)));
    void* params[] = {&out};
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    a.value.cooperative = 1;
    CUlaunchConfig c = config(7, 96, &a, 1);
    auto log = launchedBy([&] { assert_cu_ok(cuLaunchKernelEx(&c, reinterpret_cast<CUfunction>(kern), params, nullptr)); });
    assert_int_equal(log.size(), 1);
    // The grid's workspace, what the handle is.
    const uint64_t ws = (static_cast<uint64_t>(cb0u32(log[0], kCbufEnvReg1)) << 32) | cb0u32(log[0], kCbufEnvReg2);
    assert_true(ws != 0);
    // The linked-in runtime makes the kernel take at least its registers.
    int regs = 0;
    assert_cu_ok(cuKernelGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, kern, S.dev));
    assert_true(regs > 0);
    assert_cu_ok(cuMemFree(out));
    assert_cu_ok(cuLibraryUnload(lib));
}

// ------------------------------------------------------------------ copies of nothing

void test_zero_byte_copies_and_fills(void**) {
    unsigned char host[16];
    ts_fill_random(host, sizeof host, 0x5eed0ull);
    CUdeviceptr p = 0;
    assert_cu_ok(cuMemAlloc(&p, 4096 + 3));
    CUstream s = nullptr;
    assert_cu_ok(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    // NULL, unallocated and past-the-end device addresses: nothing to copy.
    const CUdeviceptr nowhere[] = {0, 0x10, p + 4096 + 4, p + (1u << 30)};
    for (CUdeviceptr d : nowhere) {
        assert_cu_ok(cuMemcpyHtoD(d, host, 0));
        assert_cu_ok(cuMemcpyHtoDAsync(d, host, 0, nullptr));
        assert_cu_ok(cuMemcpyHtoDAsync(d, host, 0, s));
        assert_cu_ok(cuMemcpyDtoH(host, d, 0));
        assert_cu_ok(cuMemcpyDtoHAsync(host, d, 0, s));
        assert_cu_ok(cuMemcpyDtoD(d, p, 0));
        assert_cu_ok(cuMemcpyDtoD(p, d, 0));
        assert_cu_ok(cuMemcpyDtoDAsync(d, d, 0, s));
        assert_cu_ok(cuMemcpy(d, p, 0));
        assert_cu_ok(cuMemcpyAsync(p, d, 0, s));
        assert_cu_ok(cuMemsetD8(d, 0x5a, 0));
        assert_cu_ok(cuMemsetD16Async(d, 0x5a5a, 0, s));
        assert_cu_ok(cuMemsetD32(d, 0x5a5a5a5a, 0));
    }
    // Still checked with 0 bytes: the stream.
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuMemcpyHtoDAsync(p, host, 0, reinterpret_cast<CUstream>(0x1234)));
    // A real copy next to them still lands.
    assert_cu_ok(cuMemcpyHtoD(p + 3, host, sizeof host));
    unsigned char back[16];
    assert_cu_ok(cuMemcpyDtoH(back, p + 3, sizeof back));
    assert_memory_equal(back, host, sizeof host);
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuMemFree(p));
}

// ------------------------------------------------------------------ fork

// What a child sees of a driver its parent initialised: nothing works, and
// the parent's objects are not touched.
void test_fork_after_init(void**) {
    CUdeviceptr p = 0;
    assert_cu_ok(cuMemAlloc(&p, 1000));
    const uint32_t pattern = 0x1f2e3d4c;
    assert_cu_ok(cuMemsetD32(p, pattern, 250));
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        // Each answer goes into the exit code: 0 when all are as libcuda's.
        int bad = 0;
        CUcontext c = nullptr;
        CUdeviceptr q = 0;
        int n = 0, version = 0;
        if (cuCtxGetCurrent(&c) != CUDA_ERROR_NOT_INITIALIZED) bad |= 1;
        if (cuMemAlloc(&q, 8) != CUDA_ERROR_NOT_INITIALIZED) bad |= 2;
        if (cuDeviceGetCount(&n) != CUDA_ERROR_NOT_INITIALIZED) bad |= 4;
        if (cuInit(0) != CUDA_ERROR_NOT_INITIALIZED) bad |= 8;
        if (cuMemFree(p) != CUDA_ERROR_NOT_INITIALIZED) bad |= 16;
        if (cuCtxDestroy(S.ctx) != CUDA_ERROR_NOT_INITIALIZED) bad |= 32;
        if (cuDriverGetVersion(&version) != CUDA_SUCCESS || version <= 0) bad |= 64;
        _exit(bad);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) fail_msg("the forked child saw unexpected answers (mask 0x%x)", WEXITSTATUS(status));
    // The parent goes on: its memory and context are whole.
    uint32_t back[250];
    assert_cu_ok(cuMemcpyDtoH(back, p, sizeof back));
    for (uint32_t v : back) assert_int_equal(v, pattern);
    CUcontext cur = nullptr;
    assert_cu_ok(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, S.ctx);
    assert_cu_ok(cuMemFree(p));
}

}  // namespace

int main() {
    // The simulated driver, whatever the environment says.
    setenv("NVLITE_DEVICE", "sim", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_user_constants_slot_written),
        cmocka_unit_test(test_user_constants_through_library),
        cmocka_unit_test(test_user_constants_absent),
        cmocka_unit_test(test_cooperative_groups_through_cudadevrt),
        cmocka_unit_test(test_zero_byte_copies_and_fills),
        cmocka_unit_test(test_fork_after_init),
    };
    return cmocka_run_group_tests_name("numba_sim", tests, groupSetup, groupTeardown);
}
