#include "hw/wc_copy.h"

#include <cstring>
#include <initializer_list>

#include "common/env.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nvl::hw {
namespace {

constexpr size_t kLineBytes = 64;
using CopyFn = void (*)(void*, const void*, size_t);

void copyMemcpy(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }

#if defined(__x86_64__)
// Unaligned loads and stores: on aligned addresses they are the aligned
// ones' speed, and callers with unaligned buffers (tests) stay correct.
// The compiler barrier keeps the stores of a line in address order too.
#define NVL_IN_ORDER() __asm__ volatile("" ::: "memory")
void copySse(void* dst, const void* src, size_t bytes) {
    auto* d = static_cast<char*>(dst);
    const auto* s = static_cast<const char*>(src);
    for (size_t off = 0; off < bytes; off += kLineBytes) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + off));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + off + 16));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + off + 32));
        const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + off + 48));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + off), a);
        NVL_IN_ORDER();
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + off + 16), b);
        NVL_IN_ORDER();
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + off + 32), c);
        NVL_IN_ORDER();
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + off + 48), e);
        NVL_IN_ORDER();
    }
}

__attribute__((target("avx2"))) void copyAvx2(void* dst, const void* src, size_t bytes) {
    auto* d = static_cast<char*>(dst);
    const auto* s = static_cast<const char*>(src);
    for (size_t off = 0; off < bytes; off += kLineBytes) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + off));
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + off + 32));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + off), a);
        NVL_IN_ORDER();
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + off + 32), b);
        NVL_IN_ORDER();
    }
}

__attribute__((target("avx512f"))) void copyAvx512(void* dst, const void* src, size_t bytes) {
    auto* d = static_cast<char*>(dst);
    const auto* s = static_cast<const char*>(src);
    for (size_t off = 0; off < bytes; off += kLineBytes)
        _mm512_storeu_si512(d + off, _mm512_loadu_si512(s + off));
}
#undef NVL_IN_ORDER
#endif

CopyFn copyFor(WcCopy how) {
#if defined(__x86_64__)
    switch (how) {
    case WcCopy::Memcpy: return copyMemcpy;
    case WcCopy::Sse: return copySse;
    case WcCopy::Avx2: return copyAvx2;
    case WcCopy::Avx512: return copyAvx512;
    }
#else
    (void)how;
#endif
    return copyMemcpy;
}

WcCopy choose() {
    const char* v = env::value("NVLITE_WC_COPY");
    const struct {
        const char* name;
        WcCopy how;
    } names[] = {{"memcpy", WcCopy::Memcpy}, {"sse", WcCopy::Sse}, {"avx2", WcCopy::Avx2}, {"avx512", WcCopy::Avx512}};
    if (v)
        for (const auto& n : names)
            if (!std::strcmp(v, n.name) && wcCopySupported(n.how)) return n.how;
    for (WcCopy how : {WcCopy::Avx512, WcCopy::Avx2, WcCopy::Sse})
        if (wcCopySupported(how)) return how;
    return WcCopy::Memcpy;
}

}  // namespace

bool wcCopySupported(WcCopy how) {
#if defined(__x86_64__)
    switch (how) {
    case WcCopy::Memcpy: return true;
    case WcCopy::Sse: return true;  // x86-64's baseline
    case WcCopy::Avx2: return __builtin_cpu_supports("avx2");
    case WcCopy::Avx512: return __builtin_cpu_supports("avx512f");
    }
    return false;
#else
    return how == WcCopy::Memcpy;
#endif
}

WcCopy wcCopyChosen() {
    static const WcCopy chosen = choose();
    return chosen;
}

void copyToWriteCombined(void* dst, const void* src, size_t bytes) {
    static const CopyFn fn = copyFor(wcCopyChosen());
    fn(dst, src, bytes);
}

void copyToWriteCombined(WcCopy how, void* dst, const void* src, size_t bytes) {
    copyFor(wcCopySupported(how) ? how : WcCopy::Memcpy)(dst, src, bytes);
}

}  // namespace nvl::hw
