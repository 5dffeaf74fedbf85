// Runtime-API check (issue 13): cuBLAS float32 GEMMs from a program built by
// nvcc with static cudart, on whichever library answers to libcuda.so.1
// (build/dropin/cublas_sgemm links no driver). cuBLAS carries its own cudart
// and reaches the driver's private tables itself; this is the smallest
// program that does what CuPy's matmul does.
//
// Steps, each reported: cublasCreate, cublasSgemm on odd shapes (random data,
// fixed seeds) with and without transposes, compared with the host's float64
// product, cublasDestroy; then which driver library the process has mapped.
// Last line: "cublas_sgemm: PASS" (exit 0) or "cublas_sgemm: FAIL" (exit 1).
//
// On nvlite's simulated driver (NVLITE_DEVICE=sim; make test-cudart runs it
// so) kernels are not run: every cuBLAS and cudart call must succeed, the
// values are not compared, and last a trap the simulator injects into the
// next kernel must fail a GEMM with cudaErrorLaunchFailure (its kernel
// reached the simulated GPU).
//
//   build/dropin/cublas_sgemm                              # NVIDIA's driver
//   build/bin/nvlite-run build/dropin/cublas_sgemm         # nvlite
//   build/bin/nvlite-run --sim build/dropin/cublas_sgemm   # nvlite, simulated GPU
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <link.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

bool good = true;

bool onSimulator() {
    const char* d = std::getenv("NVLITE_DEVICE");
    return d && std::strcmp(d, "sim") == 0;
}

bool rt(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    std::printf("%s: %s (%d): %s\n", what, cudaGetErrorName(e), static_cast<int>(e), cudaGetErrorString(e));
    good = false;
    return false;
}

bool blas(cublasStatus_t s, const char* what) {
    if (s == CUBLAS_STATUS_SUCCESS) return true;
    std::printf("%s: %s (%d)\n", what, cublasGetStatusName(s), static_cast<int>(s));
    good = false;
    return false;
}

void fill(std::vector<float>& v, uint64_t seed) {
    for (float& x : v) {
        seed ^= seed >> 12, seed ^= seed << 25, seed ^= seed >> 27;
        x = static_cast<float>(static_cast<int64_t>((seed * 0x2545F4914F6CDD1Dull) >> 40) % 2001 - 1000) / 500.0f;
    }
}

// C (m x n) = op(A) * op(B), column-major as cuBLAS takes them.
void gemm(cublasHandle_t h, int m, int n, int k, bool ta, bool tb, uint64_t seed) {
    char name[96];
    std::snprintf(name, sizeof name, "sgemm %dx%dx%d%s%s", m, n, k, ta ? " A^T" : "", tb ? " B^T" : "");
    const int lda = ta ? k : m, ldb = tb ? n : k;
    std::vector<float> a(static_cast<size_t>(lda) * (ta ? m : k)), b(static_cast<size_t>(ldb) * (tb ? k : n));
    std::vector<float> c(static_cast<size_t>(m) * n, 0.0f);
    fill(a, seed);
    fill(b, seed * 31 + 7);
    float *da = nullptr, *db = nullptr, *dc = nullptr;
    if (!rt(cudaMalloc(&da, a.size() * 4), name) || !rt(cudaMalloc(&db, b.size() * 4), name) ||
        !rt(cudaMalloc(&dc, c.size() * 4), name))
        return;
    rt(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice), name);
    rt(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice), name);
    const float one = 1.0f, zero = 0.0f;
    if (blas(cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &one, da, lda,
                         db, ldb, &zero, dc, m),
             name) &&
        rt(cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost), name)) {
        if (onSimulator()) {
            std::printf("%s: ok (simulated driver: kernels are not run, values not compared)\n", name);
            cudaFree(da);
            cudaFree(db);
            cudaFree(dc);
            return;
        }
        size_t wrong = 0;
        for (int j = 0; j < n; ++j) {
            for (int i = 0; i < m; ++i) {
                double want = 0;
                for (int p = 0; p < k; ++p) {
                    const float av = ta ? a[static_cast<size_t>(i) * lda + p] : a[static_cast<size_t>(p) * lda + i];
                    const float bv = tb ? b[static_cast<size_t>(p) * ldb + j] : b[static_cast<size_t>(j) * ldb + p];
                    want += static_cast<double>(av) * bv;
                }
                const double got = c[static_cast<size_t>(j) * m + i];
                if (std::fabs(got - want) > 1e-3 * std::sqrt(static_cast<double>(k)) + 1e-4 * std::fabs(want)) ++wrong;
            }
        }
        std::printf("%s: %zu of %zu values wrong\n", name, wrong, c.size());
        if (wrong) good = false;
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
}

void mapsFact() {
    FILE* f = std::fopen("/proc/self/maps", "r");
    char line[4096], real[512] = "no", ours[512] = "no";
    while (f && std::fgets(line, sizeof line, f)) {
        const char* path = std::strchr(line, '/');
        if (!path) continue;
        const char* base = std::strrchr(path, '/') + 1;
        if (std::strncmp(base, "libcuda.so.5", 12) == 0) std::snprintf(real, sizeof real, "%s", path);
        if (std::strstr(base, "libnvlite")) std::snprintf(ours, sizeof ours, "%s", path);
    }
    if (f) std::fclose(f);
    real[std::strcspn(real, "\n")] = 0;
    ours[std::strcspn(ours, "\n")] = 0;
    std::printf("maps: NVIDIA libcuda.so.5xx mapped: %s; libnvlite mapped: %s\n", real, ours);
}

// The simulator's test hook (include/nvlite/nvlite.h), wherever nvlite's
// libraries export it.
using InjectFault = int (*)(int);
InjectFault findInjectFault() {
    InjectFault found = nullptr;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) {
            if (!info->dlpi_name || !*info->dlpi_name) return 0;
            void* lib = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
            if (!lib) return 0;
            if (void* f = dlsym(lib, "nvliteSimInjectFault")) *static_cast<InjectFault*>(out) = reinterpret_cast<InjectFault>(f);
            dlclose(lib);
            return *static_cast<InjectFault*>(out) ? 1 : 0;
        },
        &found);
    return found;
}

// A GEMM whose kernel the simulated GPU traps: the launch reached it.
void trappedGemm(cublasHandle_t h) {
    InjectFault inject = findInjectFault();
    if (!inject) {
        std::printf("simulator: nvliteSimInjectFault not found\n");
        good = false;
        return;
    }
    const int n = 96;
    float *a = nullptr, *c = nullptr;
    if (!rt(cudaMalloc(&a, n * n * 4), "trap: cudaMalloc") || !rt(cudaMalloc(&c, n * n * 4), "trap: cudaMalloc")) return;
    rt(cudaMemset(a, 0x3c, n * n * 4), "trap: cudaMemset");
    rt(cudaDeviceSynchronize(), "trap: cudaDeviceSynchronize before");
    constexpr int kLaunchTrap = 3;  // NVLITE_SIM_FAULT_LAUNCH_TRAP
    if (inject(kLaunchTrap) != 0) {
        std::printf("simulator: the trap could not be armed\n");
        good = false;
        return;
    }
    const float one = 1.0f, zero = 0.0f;
    blas(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, a, n, &zero, c, n), "trap: cublasSgemm");
    const cudaError_t e = cudaDeviceSynchronize();
    std::printf("simulator: GEMM with a trap injected into its kernel: %s\n", cudaGetErrorName(e));
    if (e != cudaErrorLaunchFailure) good = false;
}

}  // namespace

int main() {
    cublasHandle_t h = nullptr;
    if (blas(cublasCreate(&h), "cublasCreate")) {
        std::printf("cublasCreate: ok\n");
        gemm(h, 128, 128, 128, false, false, 1);
        gemm(h, 123, 301, 457, false, false, 2);
        gemm(h, 200, 77, 129, true, false, 3);
        gemm(h, 65, 190, 33, false, true, 4);
        rt(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        if (onSimulator()) {
            trappedGemm(h);  // the context is lost after it: nothing more to destroy
        } else {
            blas(cublasDestroy(h), "cublasDestroy");
        }
    }
    mapsFact();
    std::printf("cublas_sgemm: %s\n", good ? "PASS" : "FAIL");
    return good ? 0 : 1;
}
