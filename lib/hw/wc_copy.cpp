#include "hw/wc_copy.h"

#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace nvl::hw {

void copyToWriteCombined(void* dst, const void* src, size_t bytes) {
#if defined(__x86_64__)
    constexpr size_t kLineBytes = 64;
    auto* d = static_cast<char*>(dst);
    const auto* s = static_cast<const char*>(src);
    for (size_t off = 0; off < bytes; off += kLineBytes) {
        for (size_t part = 0; part < kLineBytes; part += 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + off + part));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + off + part), v);
            __asm__ volatile("" ::: "memory");  // the stores stay in address order
        }
    }
#else
    std::memcpy(dst, src, bytes);
#endif
}

}  // namespace nvl::hw
