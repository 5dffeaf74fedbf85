/*
 * The driver API and the runtime API in one program (issue 13), the pattern
 * of cuda-samples' simpleDrvRuntime, which died on the H200 with SIGSEGV
 * (shared cudart) or heap corruption (static cudart): a context the program
 * makes with cuCtxCreate, a module it loads from a fat binary with
 * cuModuleLoadData (driver_mix_kernel.fatbin beside the program, built from
 * tests/cudart/kernels/driver_mix_kernel.cu), pinned and device memory,
 * a stream and copies from cudart, the launch through cuLaunchKernel on
 * cudart's stream; also the primary context that cudart uses shared with a
 * driver-API module, and a thread that uses both APIs and ends. The process
 * then exits with cudart's teardown calling the driver after the library's
 * thread-local state would have been destroyed. Also cuda-samples' ptxjit
 * pattern: the kernel's PTX (driver_mix_kernel.ptx beside the program)
 * linked with cuLinkCreate / cuLinkAddData / cuLinkComplete, with a wall-time
 * slot, log buffers and verbose output, into cudart's primary context.
 *
 * Built like runtime_basics.cu (static and shared cudart), linked to
 * nvlite's libcuda.so. On the simulated driver kernels are not run: the
 * launch must complete and the copies round-trip; on a GPU the kernel's
 * results are compared.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cudart_check.h"

namespace {

void checkCu(CUresult actual, const char* expr, int line) {
    if (actual == CUDA_SUCCESS) return;
    const char* name = nullptr;
    (void)cuGetErrorName(actual, &name);
    print_error("line %d: %s\n  expected CUDA_SUCCESS, got %s (%d)\n", line, expr, name ? name : "?", (int)actual);
    fail();
}
#define assert_cu_ok(call) checkCu((call), #call, __LINE__)

// The fat binary and the PTX beside the program.
std::vector<char> g_fatbin;
std::vector<char> g_ptx;

std::vector<char> readBesideProgram(const char* name) {
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return {};
    self[n] = '\0';
    std::string path(self);
    path = path.substr(0, path.rfind('/') + 1) + name;
    std::vector<char> bytes;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
        char buf[65536];
        size_t got;
        while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + got);
        std::fclose(f);
    }
    return bytes;
}

// Fixed-seed data, never all zeros (xorshift32).
void fillRandom(float* v, int n, uint32_t seed) {
    uint32_t s = seed | 1u;
    for (int i = 0; i < n; ++i) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        v[i] = static_cast<float>(s % 20011u) / 97.0f - 100.0f;
    }
}

// x, y in, a*x + y out, through a driver-API kernel launched on a cudart
// stream; pinned buffers from cudart.
void runAxpy(CUfunction f, int n, uint32_t seed) {
    const size_t bytes = static_cast<size_t>(n) * sizeof(float);
    float *hx = nullptr, *hy = nullptr, *hout = nullptr;
    assert_rt_ok(cudaMallocHost(&hx, bytes));
    assert_rt_ok(cudaMallocHost(&hy, bytes));
    assert_rt_ok(cudaMallocHost(&hout, bytes));
    fillRandom(hx, n, seed);
    fillRandom(hy, n, seed * 7 + 3);
    std::memset(hout, 0xa5, bytes);
    float *dx = nullptr, *dy = nullptr, *dout = nullptr;
    assert_rt_ok(cudaMalloc(&dx, bytes + 12));
    assert_rt_ok(cudaMalloc(&dy, bytes + 12));
    assert_rt_ok(cudaMalloc(&dout, bytes + 12));
    cudaStream_t stream = nullptr;
    assert_rt_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    assert_rt_ok(cudaMemcpyAsync(dx, hx, bytes, cudaMemcpyHostToDevice, stream));
    assert_rt_ok(cudaMemcpyAsync(dy, hy, bytes, cudaMemcpyHostToDevice, stream));
    float a = 1.75f;
    void* args[] = {&dx, &dy, &dout, &a, &n};
    const unsigned threads = 128;
    const unsigned blocks = (static_cast<unsigned>(n) + threads - 1) / threads;
    assert_cu_ok(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, reinterpret_cast<CUstream>(stream), args, nullptr));
    if (onSimulator()) {
        // Kernels are not run: the launch completes, and the inputs come
        // back as they went.
        assert_rt_ok(cudaMemcpyAsync(hout, dy, bytes, cudaMemcpyDeviceToHost, stream));
        assert_rt_ok(cudaStreamSynchronize(stream));
        assert_int_equal(std::memcmp(hout, hy, bytes), 0);
    } else {
        assert_rt_ok(cudaMemcpyAsync(hout, dout, bytes, cudaMemcpyDeviceToHost, stream));
        assert_rt_ok(cudaStreamSynchronize(stream));
        int bad = 0;
        for (int i = 0; i < n; ++i) {
            const float want = std::fma(a, hx[i], hy[i]);
            if (std::fabs(hout[i] - want) > 1e-4f * (1.0f + std::fabs(want))) {
                if (bad++ < 4) print_error("out[%d] = %g, expected %g\n", i, hout[i], want);
            }
        }
        assert_int_equal(bad, 0);
    }
    assert_rt_ok(cudaStreamDestroy(stream));
    assert_rt_ok(cudaFree(dx));
    assert_rt_ok(cudaFree(dy));
    assert_rt_ok(cudaFree(dout));
    assert_rt_ok(cudaFreeHost(hx));
    assert_rt_ok(cudaFreeHost(hy));
    assert_rt_ok(cudaFreeHost(hout));
}

// ------------------------------------------------------------------ tests

// cudart's primary context, a driver-API module loaded into it: the module
// stays loaded when the process exits (cudart's teardown releases the
// context with it still there).
CUmodule g_primaryModule = nullptr;

void test_module_in_cudarts_primary_context(void**) {
    assert_rt_ok(cudaSetDevice(0));
    assert_rt_ok(cudaFree(nullptr));  // cudart makes the primary context current
    CUcontext cur = nullptr;
    assert_cu_ok(cuCtxGetCurrent(&cur));
    assert_non_null(cur);
    CUdevice dev = -1;
    assert_cu_ok(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    assert_cu_ok(cuDevicePrimaryCtxRetain(&primary, dev));
    assert_ptr_equal(cur, primary);
    assert_cu_ok(cuDevicePrimaryCtxRelease(dev));
    assert_cu_ok(cuModuleLoadData(&g_primaryModule, g_fatbin.data()));
    CUfunction f = nullptr;
    assert_cu_ok(cuModuleGetFunction(&f, g_primaryModule, "mixAxpy"));
    runAxpy(f, 4099, 11);
}

// A thread that uses both APIs and ends: its thread-local state in the
// library goes while cudart's per-thread state is torn down.
void test_thread_uses_both_and_ends(void**) {
    for (int round = 0; round < 3; ++round) {
        bool ok = false;
        std::thread t([&] {
            if (cudaSetDevice(0) != cudaSuccess) return;
            CUcontext cur = nullptr;
            if (cuCtxGetCurrent(&cur) != CUDA_SUCCESS) return;
            if (!cur && cudaFree(nullptr) != cudaSuccess) return;
            if (cuCtxGetCurrent(&cur) != CUDA_SUCCESS || !cur) return;
            CUfunction f = nullptr;
            if (cuModuleGetFunction(&f, g_primaryModule, "mixAxpy") != CUDA_SUCCESS) return;
            void* p = nullptr;
            if (cudaMalloc(&p, 1000 + 24 * round) != cudaSuccess) return;
            if (cudaMemset(p, 0x3c, 1000) != cudaSuccess) return;
            if (cudaDeviceSynchronize() != cudaSuccess) return;
            ok = cudaFree(p) == cudaSuccess;
        });
        t.join();
        assert_true(ok);
    }
}

// simpleDrvRuntime's pattern: a context of the program's own (current:
// cudart uses it), a module from a fat binary, cudart's memory and stream,
// the launch through the driver, then the module unloaded and the context
// destroyed before the process exits.
void test_own_context_and_module(void**) {
    CUdevice dev = -1;
    assert_cu_ok(cuDeviceGet(&dev, 0));
    CUcontext ctx = nullptr;
    CUctxCreateParams params = {};
    assert_cu_ok(cuCtxCreate(&ctx, &params, 0, dev));
    CUmodule m = nullptr;
    assert_cu_ok(cuModuleLoadData(&m, g_fatbin.data()));
    CUfunction f = nullptr;
    assert_cu_ok(cuModuleGetFunction(&f, m, "mixAxpy"));
    runAxpy(f, 50021, 5);
    CUcontext cur = nullptr;
    assert_cu_ok(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, ctx);
    assert_cu_ok(cuModuleUnload(m));
    assert_cu_ok(cuCtxDestroy(ctx));
}

// ptxjit's pattern: cudart's memory, a kernel linked from PTX by the driver
// (its options as ptxjit passes them), launched on the legacy stream.
void test_link_ptx_into_cudarts_context(void**) {
    const int n = 64 * 256 + 37;
    int* d = nullptr;
    assert_rt_ok(cudaMalloc(&d, n * sizeof(int)));
    assert_rt_ok(cudaMemset(d, 0x6b, n * sizeof(int)));
    static char infoLog[8192], errorLog[8192];
    CUjit_option options[6] = {CU_JIT_WALL_TIME,          CU_JIT_INFO_LOG_BUFFER,
                               CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                               CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
    void* values[6] = {nullptr,
                       infoLog,
                       reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof infoLog)),
                       errorLog,
                       reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof errorLog)),
                       reinterpret_cast<void*>(static_cast<uintptr_t>(1))};
    CUlinkState link = nullptr;
    assert_cu_ok(cuLinkCreate(6, options, values, &link));
    const CUresult added = cuLinkAddData(link, CU_JIT_INPUT_PTX, g_ptx.data(), g_ptx.size(), "driver_mix_kernel.ptx",
                                         0, nullptr, nullptr);
    if (added != CUDA_SUCCESS) print_error("link error log: %s\n", errorLog);
    assert_cu_ok(added);
    void* cubin = nullptr;
    size_t cubinSize = 0;
    assert_cu_ok(cuLinkComplete(link, &cubin, &cubinSize));
    assert_non_null(cubin);
    assert_true(cubinSize > 0);
    CUmodule m = nullptr;
    assert_cu_ok(cuModuleLoadData(&m, cubin));
    CUfunction f = nullptr;
    assert_cu_ok(cuModuleGetFunction(&f, m, "mixIota"));
    assert_cu_ok(cuLinkDestroy(link));
    int count = n;
    void* args[] = {&d, &count};
    assert_cu_ok(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    std::vector<int> back(n, 0);
    assert_rt_ok(cudaMemcpy(back.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const int want = onSimulator() ? 0x6b6b6b6b : 3 * i + 1;  // the simulator runs no kernel
        if (back[i] != want && bad++ < 4) print_error("out[%d] = %d, expected %d\n", i, back[i], want);
    }
    assert_int_equal(bad, 0);
    assert_rt_ok(cudaFree(d));
    assert_cu_ok(cuModuleUnload(m));
}

}  // namespace

static void onHang(int) {
    static const char msg[] = "driver_mix: a hang (watchdog expired)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

int main(int, char** argv) {
    signal(SIGALRM, onHang);
    alarm(240);
    g_fatbin = readBesideProgram("driver_mix_kernel.fatbin");
    if (g_fatbin.empty()) {
        std::fprintf(stderr, "driver_mix: driver_mix_kernel.fatbin is not beside the program\n");
        return 1;
    }
    g_ptx = readBesideProgram("driver_mix_kernel.ptx");
    g_ptx.push_back('\0');
    if (g_ptx.size() < 2) {
        std::fprintf(stderr, "driver_mix: driver_mix_kernel.ptx is not beside the program\n");
        return 1;
    }
    // As simpleDrvRuntime: the driver first, before any cudart call.
    if (cuInit(0) != CUDA_SUCCESS) {
        std::fprintf(stderr, "driver_mix: cuInit failed\n");
        return 1;
    }
    const char* name = std::strrchr(argv[0], '/') ? std::strrchr(argv[0], '/') + 1 : argv[0];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_context_and_module),
        cmocka_unit_test(test_module_in_cudarts_primary_context),
        cmocka_unit_test(test_thread_uses_both_and_ends),
        cmocka_unit_test(test_link_ptx_into_cudarts_context),
    };
    return cmocka_run_group_tests_name(name, tests, nullptr, nullptr);
}
