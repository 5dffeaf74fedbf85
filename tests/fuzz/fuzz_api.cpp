// libFuzzer target: the driver API on the simulated GPU, fed images.
//
// The input after its first byte is an image (cubin, fatbin, PTX): it is
// loaded with cuModuleLoad (through a memfd, so that the loader knows its
// size), and whatever loads is used as a program would: its functions (by
// the names the image holds) have their attributes read, their occupancy
// computed and are launched with geometry from the first byte, then the
// context is synchronised and the module unloaded. A context left with a
// fault (the simulator checks launches) is replaced.
//
// Mode byte: bit 0 set: also loaded by cuModuleLoadFatBinary when it is a
// fatbin (the container's own header gives its size there); bits 1-3:
// the block size; bits 4-5: the grid size.
//
// Everything runs in this process on NVLITE_DEVICE=sim; NVIDIA's JIT is
// not run (setJitDisabledForTesting).
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "loader/jit.h"
#include "nvlite/cuda.h"

namespace {

CUcontext ctx;

void freshContext() {
    if (ctx) cuCtxDestroy(ctx);
    ctx = nullptr;
    if (cuCtxCreate(&ctx, nullptr, 0, 0) != CUDA_SUCCESS) abort();
}

// Names that may be kernels or globals: the image's printable strings.
std::vector<std::string> namesIn(const uint8_t* p, size_t n) {
    std::set<std::string> out;
    size_t i = 0;
    while (i < n && out.size() < 12) {
        size_t j = i;
        while (j < n && (std::isalnum(p[j]) || p[j] == '_' || p[j] == '$')) ++j;
        if (j < n && p[j] == 0 && j - i >= 2 && j - i < 64) out.emplace(reinterpret_cast<const char*>(p + i), j - i);
        i = j + 1;
    }
    return {out.begin(), out.end()};
}

// Parameters: every kernel gets 64 pointers to zeroed 32 KiB blocks.
void* paramBlock() {
    static void* block = calloc(1, 32 * 1024);
    return block;
}

void use(CUmodule m, const uint8_t* image, size_t n, uint8_t mode) {
    void* params[64];
    for (auto& p : params) p = paramBlock();
    const unsigned block = 1u << ((mode >> 1) & 7);
    const unsigned grid = 1u + ((mode >> 4) & 3);
    for (const std::string& name : namesIn(image, n)) {
        CUfunction f = nullptr;
        if (cuModuleGetFunction(&f, m, name.c_str()) == CUDA_SUCCESS) {
            int v = 0;
            for (int a = 0; a <= CU_FUNC_ATTRIBUTE_MAX; ++a)
                (void)cuFuncGetAttribute(&v, static_cast<CUfunction_attribute>(a), f);
            int blocks = 0;
            (void)cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, static_cast<int>(block), 0);
            (void)cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, nullptr, params, nullptr);
        }
        CUdeviceptr g = 0;
        size_t bytes = 0;
        if (cuModuleGetGlobal(&g, &bytes, m, name.c_str()) == CUDA_SUCCESS && bytes) {
            unsigned char buf[64] = {};
            (void)cuMemcpyDtoH(buf, g, bytes < sizeof buf ? bytes : sizeof buf);
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    setenv("NVLITE_DEVICE", "sim", 1);
    nvl::loader::setJitDisabledForTesting(true);
    if (cuInit(0) != CUDA_SUCCESS) abort();
    freshContext();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const uint8_t mode = data[0];
    const uint8_t* image = data + 1;
    const size_t n = size - 1;
    const int fd = memfd_create("fuzz-image", MFD_CLOEXEC);
    if (fd < 0) return 0;
    if (write(fd, image, n) != static_cast<ssize_t>(n)) {
        close(fd);
        return 0;
    }
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    CUmodule m = nullptr;
    if (cuModuleLoad(&m, path.c_str()) == CUDA_SUCCESS) {
        use(m, image, n, mode);
        (void)cuModuleUnload(m);
    }
    close(fd);
    // A fatbin container states its own size: cuModuleLoadFatBinary reads
    // no further than that (a copy of exactly the input: ASan sees more).
    uint32_t magic = 0;
    if ((mode & 1) && n >= 16 && (std::memcpy(&magic, image, 4), magic == 0xBA55ED50u)) {
        uint64_t body = 0;
        uint16_t header = 0;
        std::memcpy(&header, image + 6, 2);
        std::memcpy(&body, image + 8, 8);
        if (header >= 16 && body <= n && header + body <= n) {
            std::vector<uint8_t> copy(image, image + n);
            if (cuModuleLoadFatBinary(&m, copy.data()) == CUDA_SUCCESS) {
                use(m, image, n, mode);
                (void)cuModuleUnload(m);
            }
        }
    }
    if (cuCtxSynchronize() != CUDA_SUCCESS) freshContext();  // a fault sticks to the context
    return 0;
}
