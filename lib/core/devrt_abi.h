// The contract between nvlite's device runtime (devrt/devrt.cu: vprintf,
// __assertfail, malloc, free, compiled into every module that calls them)
// and the host side (core/devrt.cpp, core/printf_fifo.cpp). Included by the
// device source too: plain layouts, no host-only types.
//
// Memory (per context):
//   State      device memory; its address is written into every linked
//              module's state slot (loader/devrt_link.h). Device atomics only
//              here: the FIFO's reservation counter, the heap's free lists.
//   HostBlock  pinned host memory (the GPU reaches it at the same address),
//              followed by the FIFO ring: the device writes records, the host
//              reads them at synchronising calls and gives the space back by
//              advancing 'tail'.
//
// FIFO records, in a ring of State::ringBytes (a multiple of 8) bytes,
// 8-byte words, a record may wrap past the end:
//   word 0   position + 1: the record's position in the endless byte stream
//            (ring offset = position % ringBytes), written last with a
//            system-scope fence before it: the record is complete once this
//            word equals the host's tail + 1
//   word 1   bytes (bits 0..31, the whole record, header included, a
//            multiple of 8) | kind << 32
//   items    8-byte words:
//              number  one word (integers widened to 64 bits as the
//                      conversion reads them, doubles as their bits)
//              string  one word with the length n, then n bytes padded to 8
//   kPrintf  string(format), then one item per argument the format consumes,
//            in order ('*' widths and precisions are numbers; %s a string,
//            NULL as "(null)"; %n a number that is not printed)
//   kAssert  numbers line, blockIdx.x/y/z, threadIdx.x/y/z; strings file,
//            function, expression
// The host zeroes what it consumed before it moves 'tail' on, so a stale
// word 0 never matches.
#pragma once

#include <stdint.h>

namespace nvl::devrt {

inline constexpr uint32_t kRecordPrintf = 1;
inline constexpr uint32_t kRecordAssert = 2;
inline constexpr uint32_t kRecordHeaderBytes = 16;
// Longest format or %s string a record carries; longer ones are cut.
inline constexpr uint32_t kMaxStringBytes = 1u << 16;

// Device heap (malloc/free): blocks of 2^k bytes (k >= kHeapMinShift), a
// 16-byte header before the pointer malloc returns. Free blocks of each size
// sit on a lock-free list whose head packs the block's offset in 16-byte
// units plus one (0: empty) in the low 40 bits and an update count in the high
// 24 (against ABA). New blocks come from a bump pointer.
inline constexpr uint32_t kHeapMinShift = 5;
inline constexpr uint32_t kHeapClasses = 40;
inline constexpr uint32_t kHeapBlockMagic = 0x6e766c68;  // "hlvn"
inline constexpr uint64_t kHeapHeaderBytes = 16;
inline constexpr uint64_t kHeapOffsetBits = 40;
inline constexpr uint64_t kMaxHeapBytes = (1ull << kHeapOffsetBits) * 16;

struct State {
    uint64_t head;          // FIFO bytes reserved so far (device atomic)
    uint64_t ringAddress;   // the ring (host memory)
    uint64_t ringBytes;
    uint64_t hostBlock;     // HostBlock (host memory)
    uint64_t heapAddress;   // device heap
    uint64_t heapBytes;
    uint64_t heapTop;       // bytes of the heap handed out by the bump pointer (device atomic)
    uint64_t freeLists[kHeapClasses];
};

struct HostBlock {
    uint64_t tail;          // FIFO bytes the host consumed
    uint32_t asserted;      // 1 once a device assert failed
    uint32_t overflowed;    // 1 once a record did not fit
    uint64_t reserved[6];
};

inline constexpr uint64_t kHostBlockBytes = 256;  // the ring follows at this offset
static_assert(sizeof(HostBlock) <= kHostBlockBytes, "HostBlock grew");

}  // namespace nvl::devrt
