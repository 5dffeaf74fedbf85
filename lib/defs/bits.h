// Bit-field helpers for hardware definitions.
//
// NVIDIA's headers describe fields as "hi:lo" bit ranges. We keep that form:
// a BitField names the range once, and value()/get() place or extract a value.
#pragma once

#include <cstdint>

#include "common/assert.h"

namespace nvl::nv {

struct BitField {
    uint32_t hi;
    uint32_t lo;

    constexpr uint32_t width() const { return hi - lo + 1; }
    constexpr uint64_t mask() const {
        return (width() >= 64 ? ~0ull : ((1ull << width()) - 1)) << lo;
    }
    // The largest value the field holds.
    constexpr uint64_t max() const { return mask() >> lo; }
    // The value placed in its bit range of a word (32 bit registers and
    // methods). It must fit: checked builds stop on one that does not.
    constexpr uint32_t value(uint64_t v) const {
        NVL_ASSERT(v <= max() && hi < 32);
        return static_cast<uint32_t>((v << lo) & mask());
    }
    constexpr uint64_t get(uint64_t word) const { return (word & mask()) >> lo; }
};

// A field in a multi-word structure such as a QMD: bit positions count from
// the first bit of the structure (NVIDIA's MW(hi:lo) form).
struct MultiWordField {
    uint32_t hi;
    uint32_t lo;

    constexpr uint32_t width() const { return hi - lo + 1; }
    // The largest value the field holds.
    constexpr uint64_t max() const { return width() >= 64 ? ~0ull : (1ull << width()) - 1; }
    // Whether 'v' fits in the field.
    constexpr bool holds(uint64_t v) const { return width() >= 64 || (v >> width()) == 0; }
};

}  // namespace nvl::nv
