#include "loader/decompress.h"

#include <dlfcn.h>

#include <climits>

#include "common/trace.h"

namespace nvl::loader {

namespace {

constexpr uint64_t kMaxDecompressed = 1ull << 30;

// Prototypes from the libraries' public, stable C APIs.
using ZstdDecompressFn = size_t (*)(void* dst, size_t capacity, const void* src, size_t size);
using ZstdIsErrorFn = unsigned (*)(size_t code);
using Lz4DecompressSafeFn = int (*)(const char* src, char* dst, int srcSize, int capacity);

void* symbol(const char* library, const char* name) {
    void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        if (trace::driver()) trace::print("loader: %s not found: %s", library, dlerror());
        return nullptr;
    }
    return dlsym(handle, name);  // the handle stays open for the process
}

struct Zstd {
    ZstdDecompressFn decompress = nullptr;
    ZstdIsErrorFn isError = nullptr;
};

const Zstd& zstd() {
    static const Zstd z = [] {
        Zstd r;
        r.decompress = reinterpret_cast<ZstdDecompressFn>(symbol("libzstd.so.1", "ZSTD_decompress"));
        r.isError = reinterpret_cast<ZstdIsErrorFn>(symbol("libzstd.so.1", "ZSTD_isError"));
        return r;
    }();
    return z;
}

Lz4DecompressSafeFn lz4() {
    static const auto f = reinterpret_cast<Lz4DecompressSafeFn>(symbol("liblz4.so.1", "LZ4_decompress_safe"));
    return f;
}

}  // namespace

Result<std::vector<uint8_t>> zstdDecompress(Bytes src, uint64_t expected) {
    const Zstd& z = zstd();
    if (!z.decompress || !z.isError || expected > kMaxDecompressed) return CUDA_ERROR_INVALID_IMAGE;
    std::vector<uint8_t> out(expected);
    size_t n = z.decompress(out.data(), out.size(), src.data(), src.size());
    if (z.isError(n) || n != expected) return CUDA_ERROR_INVALID_IMAGE;
    return out;
}

Result<std::vector<uint8_t>> lz4Decompress(Bytes src, uint64_t expected) {
    auto decompress = lz4();
    if (!decompress || expected > kMaxDecompressed || src.size() > INT_MAX) return CUDA_ERROR_INVALID_IMAGE;
    std::vector<uint8_t> out(expected);
    int n = decompress(reinterpret_cast<const char*>(src.data()), reinterpret_cast<char*>(out.data()),
                       static_cast<int>(src.size()), static_cast<int>(out.size()));
    if (n < 0 || static_cast<uint64_t>(n) != expected) return CUDA_ERROR_INVALID_IMAGE;
    return out;
}

}  // namespace nvl::loader
