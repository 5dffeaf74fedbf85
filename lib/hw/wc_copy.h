// Copies into write-combined memory (the BAR1 mappings of the channels' data
// rings): whole 64-byte lines, in address order, each byte once, with the
// widest stores the CPU has (where the mapping behaves like uncached memory,
// as in a VM, every store is its own bus write: fewer, wider ones win).
#pragma once

#include <cstddef>

namespace nvl::hw {

// How the copy stores: a library memcpy, or 16-, 32- or 64-byte stores.
enum class WcCopy { Memcpy, Sse, Avx2, Avx512 };

// Whether this CPU can store that way.
bool wcCopySupported(WcCopy how);
// The way copyToWriteCombined uses, chosen once: NVLITE_WC_COPY=memcpy|sse|
// avx2|avx512 when the CPU supports it, else the widest supported.
WcCopy wcCopyChosen();

// Copies 'bytes' (a multiple of 64) from 'src' to 'dst'; the result is
// memcpy's. Lines go in address order (64-byte aligned 'dst': each a whole
// line).
void copyToWriteCombined(void* dst, const void* src, size_t bytes);
void copyToWriteCombined(WcCopy how, void* dst, const void* src, size_t bytes);

}  // namespace nvl::hw
