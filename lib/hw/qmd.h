// A Hopper launch descriptor (QMD V04) built in host memory, field by field
// with the hardware's names, then copied whole to where the GPU reads it.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "defs/qmd_v04.h"

namespace nvl::hw {

class QmdV04 {
public:
    static constexpr size_t kBytes = nv::NVCBC0_QMDV04_00_SIZE_BYTES;
    static constexpr size_t kWords = kBytes / 4;

    // Sets a field (up to 64 bits wide, possibly spanning words).
    void set(nv::MultiWordField f, uint64_t value) {
        uint32_t bit = f.lo;
        uint32_t left = f.width();
        while (left > 0) {
            const uint32_t word = bit / 32, shift = bit % 32;
            const uint32_t n = left < 32 - shift ? left : 32 - shift;
            const uint32_t mask = (n == 32 ? ~0u : ((1u << n) - 1)) << shift;
            w_[word] = (w_[word] & ~mask) | ((static_cast<uint32_t>(value) << shift) & mask);
            value = n == 64 ? 0 : value >> n;
            bit += n;
            left -= n;
        }
    }
    uint64_t get(nv::MultiWordField f) const {
        uint64_t out = 0;
        for (uint32_t i = 0; i < f.width(); ++i) {
            const uint32_t b = f.lo + i;
            out |= static_cast<uint64_t>((w_[b / 32] >> (b % 32)) & 1u) << i;
        }
        return out;
    }
    const uint32_t* words() const { return w_.data(); }
    void copyTo(void* dst) const { std::memcpy(dst, w_.data(), kBytes); }

private:
    std::array<uint32_t, kWords> w_{};
};

}  // namespace nvl::hw
