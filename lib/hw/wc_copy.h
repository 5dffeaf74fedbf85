// Copies into write-combined memory (the BAR1 mappings of the channels' data
// rings): whole 64-byte lines, in address order, each byte once.
#pragma once

#include <cstddef>

namespace nvl::hw {

// Copies 'bytes' (a multiple of 64) from 'src' to 'dst'; the result is
// memcpy's. Lines go in address order, each in four 16-byte stores (a
// 64-byte aligned 'dst': each a whole line). On the H200's host the wider
// stores of AVX2 and AVX-512 and a library memcpy measured the same within
// noise (20,000 launches, 2026-12-02: 1.24-1.34 us per launch), so there is
// one way.
void copyToWriteCombined(void* dst, const void* src, size_t bytes);

}  // namespace nvl::hw
