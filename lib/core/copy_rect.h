// A pitched rectangle to copy: the unit every 1-D, 2-D and 3-D copy is cut
// into (a 1-D copy is one line, a 3-D copy one rectangle per slice or, when
// the slices are packed, one rectangle of all their lines).
#pragma once

#include <cstdint>

namespace nvl::core {

struct Rect {
    uint64_t dst = 0, dstPitch = 0;  // the first line's first byte; bytes from one line to the next
    uint64_t src = 0, srcPitch = 0;
    uint64_t width = 0;              // bytes per line
    uint64_t lines = 0;

    uint64_t bytes() const { return width * lines; }
    // A 1-D copy of 'bytes'.
    static Rect linear(uint64_t dst, uint64_t src, uint64_t bytes) { return {dst, bytes, src, bytes, bytes, 1}; }
};

}  // namespace nvl::core
