// Rounding to a multiple.
#pragma once

#include <cstdint>

namespace nvl {

// 'v' rounded up to a multiple of 'align' (any non-zero value, not only powers of two).
constexpr uint64_t alignUp(uint64_t v, uint64_t align) { return (v + align - 1) / align * align; }

}  // namespace nvl
