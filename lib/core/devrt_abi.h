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

// ---------------------------------------------------------------------------
// Device-side launches (dynamic parallelism): libcudadevrt's
// cudaGetParameterBufferV2 and cudaLaunchDeviceV2, what `kernel<<<...>>>` in
// device code compiles to, end in two calls the driver resolves
// (cnpGetParameterBufferV2 / cnpLaunchDeviceV2; __cuda_syscall_cnpv2... for
// CDP2 code), with the arguments of the public functions unchanged.
//
// A grid of a kernel that calls them runs with a launch queue: its address
// and the grid's nesting depth are in environment registers
// (common/envregs.h). The queue
// itself (LaunchQueue) is device memory (device atomics only); its slots are
// host memory (the host reads them). A launch takes a slot, whose parameter
// area is the buffer cudaGetParameterBufferV2 returns; cudaLaunchDeviceV2
// numbers the slot in launch order. When every slot is taken, the buffer is
// the overflow slot's (after the last; shared, never launched) and the
// launch answers cudaErrorLaunchPendingCountExceeded, as libcuda's does
// (seen on the H200: its buffers never run out, its launches do). There is
// no nesting limit (libcuda's CDP2 launched 30 levels deep on the H200);
// each level holds a slot until what it launched is done. Once the grid is done the host starts
// the launches it numbered, in that order, each grid after the one before it
// (and after what that one launched) is done; they run with the same queue,
// their slots above the launcher's.
//
// Error codes are libcudadevrt's CNP codes (its cudartErrorCnpMap turns them
// into cudaError_t values).
inline constexpr uint32_t kLaunchHeaderBytes = 128;
inline constexpr uint32_t kLaunchParamBytes = 4096;  // CUDA's limit for a device-side launch
inline constexpr uint32_t kLaunchSlotBytes = kLaunchHeaderBytes + kLaunchParamBytes;

inline constexpr int kCnpSuccess = 0;
inline constexpr int kCnpInvalidValue = 1;          // cudaErrorInvalidValue
inline constexpr int kCnpInvalidConfiguration = 7;  // cudaErrorInvalidConfiguration
inline constexpr int kCnpPendingCountExceeded = 12; // cudaErrorLaunchPendingCountExceeded

// cudaGetLastError in device code: the error a thread's last failed
// device-runtime call left (what libcudadevrt records through
// cnpSetLastError), kept per thread in a small table (key: the grid's
// %gridid, block and thread; 0: free) of the queue. A thread whose entry a
// collision took reads no error.
inline constexpr uint32_t kLastErrorEntries = 256;
inline constexpr uint32_t kLastErrorProbes = 8;
struct LastError {
    uint64_t key;
    uint64_t error;
};

struct LaunchQueue {
    uint64_t taken;         // slots handed out (device atomic; may pass 'slots')
    uint64_t launched;      // launches numbered (device atomic)
    uint64_t slots;         // how many slots there are (one more follows: the overflow slot)
    uint64_t slotsAddress;  // the first slot (host memory), kLaunchSlotBytes each
    uint64_t streams;       // device-side streams made (device atomic)
    uint64_t reserved[3];
    LastError lastErrors[kLastErrorEntries];
};
// What cudaStreamCreateWithFlags gives a kernel: this bit and a number
// (never 0, nor one of CUDA's special stream handles).
inline constexpr uint64_t kDeviceStreamTag = uint64_t{1} << 48;

struct LaunchSlot {
    uint64_t function;      // the function descriptor the kernel passed
    uint64_t stream;        // the device-side stream it named (0: the block's)
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t sharedBytes;   // dynamic shared memory
    uint32_t number;        // 0: not launched; else 1 + its place in launch order
    uint64_t reserved[10];
};
static_assert(sizeof(LaunchSlot) == kLaunchHeaderBytes, "LaunchSlot is the slot's header");

}  // namespace nvl::devrt
