#include "loader/decompress.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "common/trace.h"

namespace nvl::loader {

namespace {

constexpr uint64_t kMaxDecompressed = 1ull << 30;
constexpr uint64_t kMaxRatio = 256;
constexpr uint64_t kRatioSlack = 1ull << 20;
// ZSTD_getFrameContentSize's answers for an unknown size and an error.
constexpr unsigned long long kZstdContentSizeUnknown = ~0ull;
constexpr unsigned long long kZstdContentSizeError = ~0ull - 1;

// Prototypes from the libraries' public, stable C APIs.
using ZstdDecompressFn = size_t (*)(void* dst, size_t capacity, const void* src, size_t size);
using ZstdIsErrorFn = unsigned (*)(size_t code);
using ZstdContentSizeFn = unsigned long long (*)(const void* src, size_t size);
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
    ZstdContentSizeFn contentSize = nullptr;
};

const Zstd& zstd() {
    static const Zstd z = [] {
        Zstd r;
        r.decompress = reinterpret_cast<ZstdDecompressFn>(symbol("libzstd.so.1", "ZSTD_decompress"));
        r.isError = reinterpret_cast<ZstdIsErrorFn>(symbol("libzstd.so.1", "ZSTD_isError"));
        r.contentSize = reinterpret_cast<ZstdContentSizeFn>(symbol("libzstd.so.1", "ZSTD_getFrameContentSize"));
        return r;
    }();
    return z;
}

Lz4DecompressSafeFn lz4() {
    static const auto f = reinterpret_cast<Lz4DecompressSafeFn>(symbol("liblz4.so.1", "LZ4_decompress_safe"));
    return f;
}

// An output buffer whose pages are taken only where the decompressor writes
// (a std::vector would zero all of the claimed size first).
struct OutputBuffer {
    explicit OutputBuffer(uint64_t n) : data(static_cast<uint8_t*>(std::malloc(n ? n : 1))) {}
    ~OutputBuffer() { std::free(data); }
    OutputBuffer(const OutputBuffer&) = delete;
    OutputBuffer& operator=(const OutputBuffer&) = delete;
    uint8_t* data;
};

}  // namespace

uint64_t maxDecompressed(uint64_t compressedBytes) {
    if (compressedBytes > kMaxDecompressed / kMaxRatio) return kMaxDecompressed;
    return std::min(kMaxDecompressed, compressedBytes * kMaxRatio + kRatioSlack);
}

Result<std::vector<uint8_t>> zstdDecompress(Bytes src, uint64_t expected) {
    const Zstd& z = zstd();
    if (!z.decompress || !z.isError || !z.contentSize || expected > maxDecompressed(src.size()))
        return CUDA_ERROR_INVALID_IMAGE;
    // The frame states its size too: both must agree before memory is taken.
    const unsigned long long framed = z.contentSize(src.data(), src.size());
    if (framed == kZstdContentSizeError || (framed != kZstdContentSizeUnknown && framed != expected))
        return CUDA_ERROR_INVALID_IMAGE;
    OutputBuffer out(expected);
    if (!out.data) return CUDA_ERROR_OUT_OF_MEMORY;
    size_t n = z.decompress(out.data, expected, src.data(), src.size());
    if (z.isError(n) || n != expected) return CUDA_ERROR_INVALID_IMAGE;
    return std::vector<uint8_t>(out.data, out.data + n);
}

Result<std::vector<uint8_t>> lz4Decompress(Bytes src, uint64_t expected) {
    auto decompress = lz4();
    if (!decompress || expected > maxDecompressed(src.size()) || src.size() > INT_MAX) return CUDA_ERROR_INVALID_IMAGE;
    OutputBuffer out(expected);
    if (!out.data) return CUDA_ERROR_OUT_OF_MEMORY;
    int n = decompress(reinterpret_cast<const char*>(src.data()), reinterpret_cast<char*>(out.data),
                       static_cast<int>(src.size()), static_cast<int>(expected));
    if (n < 0 || static_cast<uint64_t>(n) != expected) return CUDA_ERROR_INVALID_IMAGE;
    return std::vector<uint8_t>(out.data, out.data + n);
}

}  // namespace nvl::loader
