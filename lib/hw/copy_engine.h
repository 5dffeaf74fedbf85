// Copy-engine work (HOPPER_DMA_COPY_A and the Ampere class it extends):
// 1-D copies and fills between GPU virtual addresses.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hw/push_buffer.h"

namespace nvl::hw {

// Push-buffer dwords needed by copy()/fill() for 'bytes'.
size_t copyDwords(uint64_t bytes);
size_t fillDwords(uint64_t bytes, uint32_t elementSize);

// Copies 'bytes' from src to dst. The first transfer waits for earlier work
// on the channel (non-pipelined); the pieces of one copy may overlap.
void copy(PushWriter& w, uint64_t dst, uint64_t src, uint64_t bytes);

// Writes 'count' elements of 'elementSize' bytes (1, 2 or 4) equal to 'value'.
void fill(PushWriter& w, uint64_t dst, uint32_t value, uint32_t elementSize, uint64_t count);

}  // namespace nvl::hw
