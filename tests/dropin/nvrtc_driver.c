/*
 * nvrtc_driver: what a user's C program does with NVRTC and the driver API,
 * to show that nvlite can stand in for libcuda.so.1 (issue 8). Built against
 * NVIDIA's cuda.h and the toolkit's stub libcuda (soname libcuda.so.1), so the
 * same binary runs on NVIDIA's driver or, with a folder mapping libcuda.so.1 to
 * nvlite first on LD_LIBRARY_PATH (nvlite-run), on nvlite.
 *
 * Compiles two kernels with NVRTC (NVRTC itself opens libcuda.so.1 and asks
 * it for a private table), loads one as a cubin and one as PTX (JIT), launches
 * them on random data of odd size at odd offsets, checks every element exactly,
 * and prints which driver library the process has mapped.
 *
 *   make dropin-checks && build/dropin/nvrtc_driver
 * Last line: "nvrtc_driver: PASS (...)" and exit status 0, else FAIL and 1.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <nvrtc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CU(call)                                                                     \
    do {                                                                             \
        CUresult rc_ = (call);                                                       \
        if (rc_ != CUDA_SUCCESS) {                                                   \
            const char* name_ = NULL;                                                \
            cuGetErrorName(rc_, &name_);                                             \
            printf("%s:%d: %s -> %d %s\n", __FILE__, __LINE__, #call, (int)rc_,      \
                   name_ ? name_ : "?");                                             \
            return 0;                                                                \
        }                                                                            \
    } while (0)

#define NVRTC(call)                                                                  \
    do {                                                                             \
        nvrtcResult rc_ = (call);                                                    \
        if (rc_ != NVRTC_SUCCESS) {                                                  \
            printf("%s:%d: %s -> %s\n", __FILE__, __LINE__, #call,                   \
                   nvrtcGetErrorString(rc_));                                        \
            return 0;                                                                \
        }                                                                            \
    } while (0)

static const char kSource[] =
    "extern \"C\" __global__ void mix(const unsigned* a, const unsigned* b, unsigned* out,\n"
    "                                 unsigned k, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = a[i] * k + (b[i] ^ (unsigned)i);\n"
    "}\n"
    "extern \"C\" __global__ void scale(double* x, double f, int n) {\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "        x[i] = x[i] * f + 0.5;\n"
    "}\n";

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;  /* fixed seed */
static uint32_t next_u32(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}

/* Compile kSource for the device; cubin != 0: SASS, else PTX. */
static char* compile(int arch, int cubin, size_t* size) {
    nvrtcProgram prog;
    NVRTC(nvrtcCreateProgram(&prog, kSource, "dropin.cu", 0, NULL, NULL));
    char opt[64];
    snprintf(opt, sizeof opt, "--gpu-architecture=%s_%d", cubin ? "sm" : "compute", arch);
    const char* opts[] = {opt};
    nvrtcResult rc = nvrtcCompileProgram(prog, 1, opts);
    if (rc != NVRTC_SUCCESS) {
        size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        char* log = malloc(n + 1);
        nvrtcGetProgramLog(prog, log);
        printf("nvrtcCompileProgram: %s\n%s\n", nvrtcGetErrorString(rc), log);
        free(log);
        return NULL;
    }
    char* out = NULL;
    if (cubin) {
        NVRTC(nvrtcGetCUBINSize(prog, size));
        out = malloc(*size);
        NVRTC(nvrtcGetCUBIN(prog, out));
    } else {
        NVRTC(nvrtcGetPTXSize(prog, size));
        out = malloc(*size);
        NVRTC(nvrtcGetPTX(prog, out));
    }
    nvrtcDestroyProgram(&prog);
    return out;
}

/* The driver libraries this process has mapped: NVIDIA's libcuda.so.5xx, nvlite. */
static void print_maps(void) {
    FILE* f = fopen("/proc/self/maps", "re");
    char line[1024], real[512] = "", ours[512] = "";
    while (f && fgets(line, sizeof line, f)) {
        char* file = strchr(line, '/');
        if (!file) continue;
        file[strcspn(file, "\n")] = 0;
        const char* base = strrchr(file, '/') + 1;
        if (!real[0] && strncmp(base, "libcuda.so.5", 12) == 0) snprintf(real, sizeof real, "%s", file);
        if (!ours[0] && strstr(base, "libnvlite")) snprintf(ours, sizeof ours, "%s", file);
    }
    if (f) fclose(f);
    printf("maps: NVIDIA libcuda.so.5xx mapped: %s; libnvlite mapped: %s\n", real[0] ? real : "no",
           ours[0] ? ours : "no");
}

static int run(void) {
    int version = 0, count = 0;
    CU(cuInit(0));
    CU(cuDriverGetVersion(&version));
    CU(cuDeviceGetCount(&count));
    CUdevice dev;
    CU(cuDeviceGet(&dev, 0));
    char name[128];
    CU(cuDeviceGetName(name, sizeof name, dev));
    int major = 0, minor = 0, sms = 0;
    CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    printf("driver %d, %d device(s); device 0: %s, sm_%d%d, %d SMs\n", version, count, name, major, minor, sms);
    int arch = major * 10 + minor;

    size_t cubin_size = 0, ptx_size = 0;
    char* cubin = compile(arch, 1, &cubin_size);
    char* ptx = compile(arch, 0, &ptx_size);
    if (!cubin || !ptx) return 0;
    printf("nvrtc: cubin %zu bytes, ptx %zu bytes\n", cubin_size, ptx_size);

    CUcontext ctx;
    CU(cuCtxCreate(&ctx, NULL, 0, dev));
    CUmodule mod_cubin, mod_ptx;
    CUfunction mix, scale;
    CU(cuModuleLoadData(&mod_cubin, cubin));
    CU(cuModuleLoadData(&mod_ptx, ptx));
    CU(cuModuleGetFunction(&mix, mod_cubin, "mix"));
    CU(cuModuleGetFunction(&scale, mod_ptx, "scale"));

    /* mix: odd count, the arrays at odd word offsets inside their allocations */
    const int n = 100003;
    const size_t off = 3 * sizeof(unsigned);
    const size_t bytes = n * sizeof(unsigned);
    unsigned *ha = malloc(bytes), *hb = malloc(bytes), *hout = malloc(bytes);
    for (int i = 0; i < n; ++i) { ha[i] = next_u32(); hb[i] = next_u32(); hout[i] = next_u32(); }
    CUdeviceptr da, db, dout;
    CU(cuMemAlloc(&da, bytes + off));
    CU(cuMemAlloc(&db, bytes + off));
    CU(cuMemAlloc(&dout, bytes + off));
    da += off; db += off; dout += off;
    CU(cuMemcpyHtoD(da, ha, bytes));
    CU(cuMemcpyHtoD(db, hb, bytes));
    CU(cuMemsetD32(dout, 0xdeadbeefu, n));
    unsigned k = next_u32() | 1u;
    int nn = n;
    void* margs[] = {&da, &db, &dout, &k, &nn};
    CU(cuLaunchKernel(mix, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, margs, NULL));
    CU(cuCtxSynchronize());
    CU(cuMemcpyDtoH(hout, dout, bytes));
    int wrong = 0;
    for (int i = 0; i < n; ++i)
        if (hout[i] != ha[i] * k + (hb[i] ^ (unsigned)i)) ++wrong;
    printf("mix (cubin): %d of %d elements wrong\n", wrong, n);

    /* scale (PTX through the driver's JIT): doubles, a grid-stride loop, a stream */
    const int m = 77777;
    double *hx = malloc(m * sizeof(double)), *hy = malloc(m * sizeof(double));
    for (int i = 0; i < m; ++i) hx[i] = (double)(int32_t)next_u32() / 1024.0;
    CUdeviceptr dx;
    CU(cuMemAlloc(&dx, m * sizeof(double) + 8));
    dx += 8;
    CUstream stream;
    CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CU(cuMemcpyHtoDAsync(dx, hx, m * sizeof(double), stream));
    double f = -1.75;
    int mm = m;
    void* sargs[] = {&dx, &f, &mm};
    CU(cuLaunchKernel(scale, 2 * sms, 1, 1, 128, 1, 1, 0, stream, sargs, NULL));
    CU(cuMemcpyDtoHAsync(hy, dx, m * sizeof(double), stream));
    CU(cuStreamSynchronize(stream));
    int wrong2 = 0;
    for (int i = 0; i < m; ++i)
        if (hy[i] != hx[i] * f + 0.5) ++wrong2;
    printf("scale (PTX): %d of %d elements wrong\n", wrong2, m);

    CU(cuStreamDestroy(stream));
    CU(cuMemFree(dx - 8));
    CU(cuMemFree(da - off));
    CU(cuMemFree(db - off));
    CU(cuMemFree(dout - off));
    CU(cuModuleUnload(mod_cubin));
    CU(cuModuleUnload(mod_ptx));
    CU(cuCtxDestroy(ctx));
    free(ha); free(hb); free(hout); free(hx); free(hy); free(cubin); free(ptx);
    return wrong == 0 && wrong2 == 0;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int ok = run();
    print_maps();
    printf("nvrtc_driver: %s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
