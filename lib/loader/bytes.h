// Bounds-checked little-endian access to untrusted bytes.
//
// Every offset and size in an image comes from the image itself, so all
// arithmetic on them goes through these helpers: a corrupt value makes the
// check fail instead of wrapping around or reading past the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "common/align.h"

namespace nvl::loader {

using Bytes = std::span<const uint8_t>;

// a + b without wrapping; false when it would.
inline bool addOk(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_add_overflow(a, b, out); }

// [offset, offset + size) lies inside a buffer of 'total' bytes.
inline bool inBounds(uint64_t offset, uint64_t size, uint64_t total) {
    return offset <= total && size <= total - offset;
}

// Reads a little-endian integer; the caller has checked the bounds.
template <class T>
inline T readLe(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;  // hosts are little-endian (x86-64, aarch64), like the images
}

template <class T>
inline void writeLe(uint8_t* p, T v) {
    std::memcpy(p, &v, sizeof v);
}

// Reads a T at 'offset' if it fits; false otherwise.
template <class T>
inline bool readAt(Bytes b, uint64_t offset, T* out) {
    if (!inBounds(offset, sizeof(T), b.size())) return false;
    *out = readLe<T>(b.data() + offset);
    return true;
}

}  // namespace nvl::loader
