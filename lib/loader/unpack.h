// nvlite's packed format for the images embedded in the library (the
// built-in kernels' and the device runtime's cubins, tools/pack_images.c):
// LZ77 runs, byte-aligned, nothing to set up.
//
// A packed stream is a sequence of runs until the output is full. Each run
// starts with a control byte c; its length field n is c & 0x7f, and when
// that is 0x7f a varint (7 bits a byte, low first, at most 5 bytes) follows
// and is added to it.
//  - c < 0x80, literals: the next n + 1 bytes of the stream are output.
//  - c >= 0x80, copy: a varint distance d >= 1 follows; n + 3 bytes are
//    output, each the one d bytes before it in the output (d < n + 3
//    repeats the last d bytes).
#pragma once

#include <cstdint>
#include <span>

#include "loader/bytes.h"

namespace nvl::loader {

// Unpacks 'packed' into exactly 'out': true when the stream is well formed,
// ends where it fills 'out' and copies only from bytes already written.
// Never reads or writes outside the two buffers, whatever 'packed' holds.
bool unpack(Bytes packed, std::span<uint8_t> out);

}  // namespace nvl::loader
