/*
 * A runtime-API program on nvlite (issue 13): what nvcc-built programs do
 * first — count and query the device, allocate, copy, set memory, use
 * streams, events and device symbols, launch kernels of their own fat binary
 * with <<<>>>, reset the device. make builds it twice from this one source,
 * with static and with shared cudart (build/tests/cudart/runtime_basics_static
 * and _shared); neither links a driver: cudart opens libcuda.so.1, and the
 * programs' RPATH puts build/driver (nvlite's libcuda.so.1) first, so nvlite
 * is their driver wherever they run. test_nvlite_is_the_driver checks it.
 *
 * On the simulated driver (NVLITE_DEVICE=sim, make test) kernels are not
 * run: a launch is checked by the simulated GPU taking it (its completion
 * releases the semaphore the synchronisation waits for) and, last, by a
 * trap the simulator injects into the next kernel, which cudart must report
 * as cudaErrorLaunchFailure. On a GPU (make test-hw) the kernels' results
 * are compared with the host's.
 *
 * cudart 13 loads every kernel of the program with cuLibraryLoadData when it
 * starts, and launches them as CUkernels.
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <signal.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "cudart_check.h"

namespace {

// ------------------------------------------------------------------ helpers

// xorshift64*: fixed seeds, never all zeros.
void fillRandom(void* buf, size_t n, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    auto* p = static_cast<unsigned char*>(buf);
    for (size_t i = 0; i < n; ++i) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        p[i] = static_cast<unsigned char>((s * 0x2545F4914F6CDD1Dull) >> 56);
    }
    if (n) p[0] |= 1;
}

void checkBytes(const void* expected, const void* actual, size_t n, const char* what, int line) {
    const auto* e = static_cast<const unsigned char*>(expected);
    const auto* a = static_cast<const unsigned char*>(actual);
    for (size_t i = 0; i < n; ++i) {
        if (e[i] != a[i]) {
            print_error("line %d: %s differs at byte %zu of %zu: expected 0x%02x, got 0x%02x\n", line, what, i, n,
                        e[i], a[i]);
            fail();
        }
    }
}
#define assert_bytes(expected, actual, n) checkBytes((expected), (actual), (n), #actual, __LINE__)

// ------------------------------------------------------------------ kernels

__device__ int deviceTable[333];
__constant__ int constantBias[7];

__global__ void addBiased(const int* a, const int* b, int* c, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i] + deviceTable[i % 333] + constantBias[i % 7];
}

__global__ void scale(float* x, float k, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] *= k;
}

// ------------------------------------------------------------------ tests

// cudart's driver is nvlite: libcuda.so.1 in this process is nvlite's
// (its cuInit lives in libnvlite), and NVIDIA's libcuda is not mapped.
void test_nvlite_is_the_driver(void**) {
    int count = 0;
    (void)cudaGetDeviceCount(&count);  // makes cudart open the driver
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    void* init = dlsym(h, "cuInit");
    assert_non_null(init);
    Dl_info info{};
    assert_true(dladdr(init, &info) != 0);
    char real[4096] = "";
    assert_non_null(realpath(info.dli_fname, real));
    print_message("driver: %s (%s)\n", info.dli_fname, real);
    assert_non_null(std::strstr(real, "libnvlite"));
    FILE* maps = std::fopen("/proc/self/maps", "r");
    assert_non_null(maps);
    char line[4096];
    bool nvidia = false;
    while (std::fgets(line, sizeof line, maps))
        if (std::strstr(line, "libcuda.so.5")) nvidia = true;
    std::fclose(maps);
    assert_false(nvidia);
    dlclose(h);
}

// cudart takes nvlite for a driver: its private tables and the integrity
// check are accepted (else cudaErrorCallRequiresNewerDriver, 36, or
// cudaErrorSoftwareValidityNotEstablished, 103), and its first call, which
// loads the program's kernels (cuLibraryLoadData), works.
void test_cudart_accepts_the_driver(void**) {
    int count = -1;
    assert_rt_ok(cudaGetDeviceCount(&count));
    assert_true(count >= 1);
}

// Each test starts with no error left from an earlier one (cudart keeps the
// last error until cudaGetLastError reads it).
int clearLastError(void**) {
    (void)cudaGetLastError();
    return 0;
}

void test_device_count_and_properties(void**) {
    int count = 0;
    assert_rt_ok(cudaGetDeviceCount(&count));
    if (onSimulator())
        assert_int_equal(count, 1);
    else
        assert_true(count >= 1);
    int driver = 0, runtime = 0;
    assert_rt_ok(cudaDriverGetVersion(&driver));
    assert_rt_ok(cudaRuntimeGetVersion(&runtime));
    assert_int_equal(driver, 13000);
    assert_true(runtime >= 13000);

    cudaDeviceProp p;
    std::memset(&p, 0, sizeof p);
    assert_rt_ok(cudaGetDeviceProperties(&p, 0));
    print_message("device 0: %s, sm_%d%d, %d SMs, %zu MiB\n", p.name, p.major, p.minor, p.multiProcessorCount,
                  p.totalGlobalMem >> 20);
    assert_true(std::strlen(p.name) > 0);
    assert_true(p.major >= 8);
    assert_true(p.multiProcessorCount > 0);
    assert_int_equal(p.warpSize, 32);
    assert_true(p.totalGlobalMem > (size_t{1} << 30));
    assert_int_equal(p.maxThreadsPerBlock, 1024);
    int sms = 0;
    assert_rt_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    assert_int_equal(sms, p.multiProcessorCount);
    assert_rt(cudaErrorInvalidDevice, cudaGetDeviceProperties(&p, count));
    assert_rt(cudaErrorInvalidDevice, cudaSetDevice(count));
    assert_rt_ok(cudaSetDevice(0));
    int dev = -1;
    assert_rt_ok(cudaGetDevice(&dev));
    assert_int_equal(dev, 0);
    size_t freeBytes = 0, totalBytes = 0;
    assert_rt_ok(cudaMemGetInfo(&freeBytes, &totalBytes));
    assert_true(freeBytes > 0 && freeBytes <= totalBytes);
}

// Odd sizes and offsets, both directions, device to device, memset.
void test_memory_copies_and_memset(void**) {
    const size_t n = 100003, off = 13;
    std::vector<unsigned char> src(n), back(n, 0), expect(n);
    fillRandom(src.data(), n, 1301);
    unsigned char *a = nullptr, *b = nullptr;
    assert_rt_ok(cudaMalloc(&a, n + 64));
    assert_rt_ok(cudaMalloc(&b, n + 64));
    assert_rt_ok(cudaMemcpy(a + off, src.data(), n, cudaMemcpyHostToDevice));
    assert_rt_ok(cudaMemcpy(b + 3, a + off, n, cudaMemcpyDeviceToDevice));
    assert_rt_ok(cudaMemcpy(back.data(), b + 3, n, cudaMemcpyDeviceToHost));
    assert_bytes(src.data(), back.data(), n);

    // cudaMemset over an odd range inside the copy, cudaMemcpyDefault back.
    assert_rt_ok(cudaMemset(b + 3 + 777, 0x5c, 4097));
    expect = src;
    std::memset(expect.data() + 777, 0x5c, 4097);
    assert_rt_ok(cudaMemcpy(back.data(), b + 3, n, cudaMemcpyDefault));
    assert_bytes(expect.data(), back.data(), n);

    // Pinned memory, and the errors cudart gives for bad arguments.
    unsigned char* pinned = nullptr;
    assert_rt_ok(cudaMallocHost(&pinned, n));
    assert_rt_ok(cudaMemcpy(pinned, a + off, n, cudaMemcpyDeviceToHost));
    assert_bytes(src.data(), pinned, n);
    assert_rt_ok(cudaFreeHost(pinned));
    assert_rt(cudaErrorInvalidMemcpyDirection, cudaMemcpy(back.data(), a, n, static_cast<cudaMemcpyKind>(42)));
    assert_rt(cudaErrorInvalidMemcpyDirection, cudaGetLastError());  // and clears it
    assert_rt_ok(cudaFree(a));
    assert_rt_ok(cudaFree(b));
    assert_rt_ok(cudaFree(nullptr));
}

void test_streams_and_events(void**) {
    const size_t n = 65539;
    std::vector<unsigned char> src(n);
    fillRandom(src.data(), n, 1302);
    unsigned char *pinnedIn = nullptr, *pinnedOut = nullptr, *d = nullptr;
    assert_rt_ok(cudaMallocHost(&pinnedIn, n));
    assert_rt_ok(cudaMallocHost(&pinnedOut, n));
    std::memcpy(pinnedIn, src.data(), n);
    std::memset(pinnedOut, 0, n);
    assert_rt_ok(cudaMalloc(&d, n));

    cudaStream_t s1, s2;
    assert_rt_ok(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    assert_rt_ok(cudaStreamCreate(&s2));
    cudaEvent_t start, copied, end;
    assert_rt_ok(cudaEventCreate(&start));
    assert_rt_ok(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
    assert_rt_ok(cudaEventCreate(&end));

    // s1 copies in, s2 waits for it and copies out.
    assert_rt_ok(cudaEventRecord(start, s1));
    assert_rt_ok(cudaMemcpyAsync(d, pinnedIn, n, cudaMemcpyHostToDevice, s1));
    assert_rt_ok(cudaEventRecord(copied, s1));
    assert_rt_ok(cudaStreamWaitEvent(s2, copied, 0));
    assert_rt_ok(cudaMemcpyAsync(pinnedOut, d, n, cudaMemcpyDeviceToHost, s2));
    assert_rt_ok(cudaEventRecord(end, s2));
    assert_rt_ok(cudaEventSynchronize(end));
    assert_rt_ok(cudaEventQuery(end));
    assert_rt_ok(cudaStreamQuery(s2));
    assert_bytes(src.data(), pinnedOut, n);
    float ms = -1;
    assert_rt_ok(cudaEventElapsedTime(&ms, start, end));
    assert_true(ms >= 0);
    assert_rt(cudaErrorInvalidResourceHandle, cudaEventElapsedTime(&ms, start, copied));
    assert_rt(cudaErrorInvalidResourceHandle, cudaGetLastError());

    assert_rt_ok(cudaMemsetAsync(d, 0xa7, n, s1));
    assert_rt_ok(cudaMemcpyAsync(pinnedOut, d, n, cudaMemcpyDeviceToHost, s1));
    assert_rt_ok(cudaStreamSynchronize(s1));
    for (size_t i = 0; i < n; i += 4099) assert_int_equal(pinnedOut[i], 0xa7);

    assert_rt_ok(cudaEventDestroy(start));
    assert_rt_ok(cudaEventDestroy(copied));
    assert_rt_ok(cudaEventDestroy(end));
    assert_rt_ok(cudaStreamDestroy(s1));
    assert_rt_ok(cudaStreamDestroy(s2));
    assert_rt_ok(cudaFree(d));
    assert_rt_ok(cudaFreeHost(pinnedIn));
    assert_rt_ok(cudaFreeHost(pinnedOut));
}

// __device__ and __constant__ variables of the program's own fat binary.
void test_device_symbols(void**) {
    int table[333], bias[7], back[333];
    fillRandom(table, sizeof table, 1303);
    fillRandom(bias, sizeof bias, 1304);
    assert_rt_ok(cudaMemcpyToSymbol(deviceTable, table, sizeof table));
    assert_rt_ok(cudaMemcpyToSymbol(constantBias, bias, sizeof bias));
    std::memset(back, 0, sizeof back);
    assert_rt_ok(cudaMemcpyFromSymbol(back, deviceTable, sizeof table));
    assert_bytes(table, back, sizeof table);
    // With an offset, and through the symbol's address.
    assert_rt_ok(cudaMemcpyFromSymbol(back, constantBias, 3 * sizeof(int), 4 * sizeof(int)));
    assert_bytes(bias + 4, back, 3 * sizeof(int));
    void* addr = nullptr;
    size_t size = 0;
    assert_rt_ok(cudaGetSymbolAddress(&addr, deviceTable));
    assert_rt_ok(cudaGetSymbolSize(&size, deviceTable));
    assert_int_equal(size, sizeof table);
    assert_rt_ok(cudaMemcpy(back, static_cast<int*>(addr) + 100, 50 * sizeof(int), cudaMemcpyDeviceToHost));
    assert_bytes(table + 100, back, 50 * sizeof(int));
    assert_rt(cudaErrorInvalidValue, cudaMemcpyToSymbol(deviceTable, table, sizeof table + 4));
    assert_rt(cudaErrorInvalidValue, cudaGetLastError());
}

// <<<>>> launches of the program's kernels, on the legacy stream and on a
// stream of its own.
void test_kernel_launches(void**) {
    const int n = 10007;
    std::vector<int> a(n), b(n), c(n, 0);
    fillRandom(a.data(), n * sizeof(int), 1305);
    fillRandom(b.data(), n * sizeof(int), 1306);
    int table[333], bias[7];
    fillRandom(table, sizeof table, 1307);
    fillRandom(bias, sizeof bias, 1308);
    assert_rt_ok(cudaMemcpyToSymbol(deviceTable, table, sizeof table));
    assert_rt_ok(cudaMemcpyToSymbol(constantBias, bias, sizeof bias));
    int *da, *db, *dc;
    assert_rt_ok(cudaMalloc(&da, n * sizeof(int)));
    assert_rt_ok(cudaMalloc(&db, n * sizeof(int)));
    assert_rt_ok(cudaMalloc(&dc, n * sizeof(int)));
    assert_rt_ok(cudaMemcpy(da, a.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    assert_rt_ok(cudaMemcpy(db, b.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    assert_rt_ok(cudaMemset(dc, 0, n * sizeof(int)));

    addBiased<<<(n + 127) / 128, 128>>>(da, db, dc, n);
    assert_rt_ok(cudaGetLastError());
    assert_rt_ok(cudaDeviceSynchronize());

    cudaStream_t s;
    assert_rt_ok(cudaStreamCreate(&s));
    float* x;
    const int m = 4099;
    std::vector<float> hx(m), hy(m);
    for (int i = 0; i < m; ++i) hx[i] = static_cast<float>(i % 97) - 40.5f;
    assert_rt_ok(cudaMalloc(&x, m * sizeof(float)));
    assert_rt_ok(cudaMemcpyAsync(x, hx.data(), m * sizeof(float), cudaMemcpyHostToDevice, s));
    scale<<<7, 96, 0, s>>>(x, -2.5f, m);
    assert_rt_ok(cudaGetLastError());
    assert_rt_ok(cudaMemcpyAsync(hy.data(), x, m * sizeof(float), cudaMemcpyDeviceToHost, s));
    assert_rt_ok(cudaStreamSynchronize(s));
    assert_rt_ok(cudaStreamDestroy(s));
    assert_rt_ok(cudaMemcpy(c.data(), dc, n * sizeof(int), cudaMemcpyDeviceToHost));

    if (onSimulator()) {
        print_message("simulated driver: kernels are not run; results not compared (checked on a GPU)\n");
    } else {
        for (int i = 0; i < n; ++i) {
            const int want = static_cast<int>(static_cast<unsigned>(a[i]) + static_cast<unsigned>(b[i]) +
                                              static_cast<unsigned>(table[i % 333]) + static_cast<unsigned>(bias[i % 7]));
            if (c[i] != want) fail_msg("addBiased: c[%d] = %d, expected %d", i, c[i], want);
        }
        for (int i = 0; i < m; ++i)
            if (hy[i] != hx[i] * -2.5f) fail_msg("scale: y[%d] = %g, expected %g", i, hy[i], hx[i] * -2.5f);
    }

    // A block too large: cudart passes on the driver's CUDA_ERROR_INVALID_VALUE
    // (libcuda 580's answer, tests/compat/expected/libcuda_modules.txt).
    addBiased<<<1, 2048>>>(da, db, dc, n);
    assert_rt(cudaErrorInvalidValue, cudaGetLastError());
    assert_rt_ok(cudaDeviceSynchronize());

    assert_rt_ok(cudaFree(da));
    assert_rt_ok(cudaFree(db));
    assert_rt_ok(cudaFree(dc));
    assert_rt_ok(cudaFree(x));
}

void test_function_attributes(void**) {
    cudaFuncAttributes fa;
    std::memset(&fa, 0, sizeof fa);
    assert_rt_ok(cudaFuncGetAttributes(&fa, addBiased));
    assert_true(fa.numRegs > 0);
    assert_true(fa.maxThreadsPerBlock > 0 && fa.maxThreadsPerBlock <= 1024);
    assert_int_equal(fa.ptxVersion > 0 || fa.binaryVersion > 0, 1);
    int blocks = 0;
    assert_rt_ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale, 96, 0));
    assert_true(blocks > 0);
}

// Several host threads sharing the device (the primary context) through cudart.
void test_threads(void**) {
    constexpr int kThreads = 4;
    cudaError_t results[kThreads];
    bool same[kThreads] = {};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t, &results, &same] {
            const size_t n = 30011 + 17 * t;
            std::vector<unsigned char> in(n), out(n, 0);
            fillRandom(in.data(), n, 1400 + t);
            cudaStream_t s;
            unsigned char* d;
            cudaError_t e = cudaStreamCreate(&s);
            if (!e) e = cudaMalloc(&d, n);
            for (int r = 0; r < 5 && !e; ++r) {
                e = cudaMemcpyAsync(d, in.data(), n, cudaMemcpyHostToDevice, s);
                if (!e) e = cudaMemcpyAsync(out.data(), d, n, cudaMemcpyDeviceToHost, s);
                if (!e) e = cudaStreamSynchronize(s);
            }
            same[t] = std::memcmp(in.data(), out.data(), n) == 0;
            if (!e) e = cudaFree(d);
            if (!e) e = cudaStreamDestroy(s);
            results[t] = e;
        });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
        assert_rt_ok(results[t]);
        assert_true(same[t]);
    }
}

// cudaDeviceReset destroys the primary context (and cudart's state kept in
// it); the program then starts again on a new one.
void test_device_reset(void**) {
    int* d = nullptr;
    assert_rt_ok(cudaMalloc(&d, 4096));
    assert_rt_ok(cudaDeviceReset());
    int in[513], out[513];
    fillRandom(in, sizeof in, 1309);
    assert_rt_ok(cudaMalloc(&d, sizeof in));
    assert_rt_ok(cudaMemcpy(d, in, sizeof in, cudaMemcpyHostToDevice));
    assert_rt_ok(cudaMemcpy(out, d, sizeof in, cudaMemcpyDeviceToHost));
    assert_bytes(in, out, sizeof in);
    scale<<<1, 32>>>(reinterpret_cast<float*>(d), 1.0f, 0);
    assert_rt_ok(cudaGetLastError());
    assert_rt_ok(cudaDeviceSynchronize());
    assert_rt_ok(cudaFree(d));
}

// The simulator's test hook (include/nvlite/nvlite.h), wherever nvlite's
// libraries export it.
using InjectFault = int (*)(int);
InjectFault findInjectFault() {
    InjectFault found = nullptr;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) {
            if (!info->dlpi_name || !*info->dlpi_name) return 0;
            void* h = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
            if (!h) return 0;
            if (void* f = dlsym(h, "nvliteSimInjectFault")) *static_cast<InjectFault*>(out) = reinterpret_cast<InjectFault>(f);
            dlclose(h);
            return *static_cast<InjectFault*>(out) ? 1 : 0;
        },
        &found);
    return found;
}

// The launch really reaches the (simulated) GPU as a kernel: a trap the
// simulator injects into the next kernel ends in cudaErrorLaunchFailure, a
// sticky error, and cudaDeviceReset recovers.
void test_launch_reaches_the_gpu(void**) {
    if (!onSimulator()) {
        print_message("[  SKIP    ] fault injection is a hook of the simulated driver\n");
        skip();
    }
    InjectFault inject = findInjectFault();
    assert_non_null(inject);
    float* x;
    assert_rt_ok(cudaMalloc(&x, 256 * sizeof(float)));
    assert_rt_ok(cudaDeviceSynchronize());
    constexpr int kLaunchTrap = 3;  // NVLITE_SIM_FAULT_LAUNCH_TRAP
    assert_int_equal(inject(kLaunchTrap), 0);
    scale<<<2, 128>>>(x, 3.0f, 256);
    assert_rt_ok(cudaGetLastError());
    assert_rt(cudaErrorLaunchFailure, cudaDeviceSynchronize());
    assert_rt(cudaErrorLaunchFailure, cudaMalloc(&x, 16));
    assert_rt_ok(cudaDeviceReset());
    assert_rt_ok(cudaMalloc(&x, 16));
    assert_rt_ok(cudaFree(x));
}

}  // namespace

static void onHang(int) {
    static const char msg[] = "runtime_basics: a hang (watchdog expired)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

int main(int, char** argv) {
    signal(SIGALRM, onHang);
    alarm(240);
    const char* name = std::strrchr(argv[0], '/') ? std::strrchr(argv[0], '/') + 1 : argv[0];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvlite_is_the_driver),
        cmocka_unit_test(test_cudart_accepts_the_driver),
        cmocka_unit_test_setup(test_device_count_and_properties, clearLastError),
        cmocka_unit_test_setup(test_memory_copies_and_memset, clearLastError),
        cmocka_unit_test_setup(test_streams_and_events, clearLastError),
        cmocka_unit_test_setup(test_device_symbols, clearLastError),
        cmocka_unit_test_setup(test_kernel_launches, clearLastError),
        cmocka_unit_test_setup(test_function_attributes, clearLastError),
        cmocka_unit_test_setup(test_threads, clearLastError),
        cmocka_unit_test_setup(test_device_reset, clearLastError),
        cmocka_unit_test_setup(test_launch_reaches_the_gpu, clearLastError),
    };
    return cmocka_run_group_tests_name(name, tests, nullptr, nullptr);
}
