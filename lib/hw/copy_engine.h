// Copy-engine work (HOPPER_DMA_COPY_A and the Ampere class it extends):
// 1-D and pitched (multi-line) copies and fills between GPU virtual addresses.
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

// A rectangle: 'lines' lines of 'width' bytes, each 'pitch' bytes after the
// previous one on either side. The engine walks the lines itself
// (MULTI_LINE_ENABLE): one launch per up to kMaxLines lines. 'width' and
// the pitches must be at most kMaxPitch (callers split wider rectangles).
inline constexpr uint64_t kMaxPitch = 0xffffffffull;
inline constexpr uint64_t kMaxLines = 1ull << 31;
size_t copy2DDwords(uint64_t lines);
void copy2D(PushWriter& w, uint64_t dst, uint64_t dstPitch, uint64_t src, uint64_t srcPitch, uint64_t width,
            uint64_t lines);
// 'lines' lines of 'count' elements of 'elementSize' bytes equal to 'value', 'pitch' bytes apart.
size_t fill2DDwords(uint64_t lines);
void fill2D(PushWriter& w, uint64_t dst, uint64_t pitch, uint32_t value, uint32_t elementSize, uint64_t count,
            uint64_t lines);

}  // namespace nvl::hw
