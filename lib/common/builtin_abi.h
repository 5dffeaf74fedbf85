// The contract between nvlite's built-in kernels (builtin/kernels.cu:
// device-to-device copies and fills, compiled with NVRTC at build time and
// embedded in the library), the host side that launches them
// (core/builtin.cpp) and the simulated GPU, which runs them by this
// description (kdrv/sim/sim_builtin.cpp). Included by the device source too:
// plain types only, no headers.
//
// One kernel per operation, one launch per copy or fill of any shape: a box
// of 'slices' x 'lines' lines, each 'width' bytes (a copy) or elements (a
// fill) long; line y of slice z starts at base + z * slicePitch + y * pitch
// on each side. 1-D work is one line. Every line is cut the same way: the
// bytes before the first 16-byte aligned destination address (the head),
// whole 16-byte units (the body: vector loads and stores, or aligned 4-byte
// loads funnel-shifted into place when source and destination disagree
// modulo 16), the rest (the tail).
//
// Threads: the grid's threads form groups of 'lineThreads' (a power of two,
// at least 32, dividing the grid's thread count); group g takes lines g,
// g + groups, ... (counted across slices), its threads share each line's
// units.
//
// Line kernels (ops kOpCopyLine / kOpFillLine): one 1-D copy or fill
// (lines = slices = 1, pitches unused), any block size of whole warps up to
// kLineMaxThreads, any grid; the body is cut in chunks of blockDim.x *
// kLineUnroll units, block b taking chunks b, b + grid, ... (builtin/kernels.cu).
// 'flags' may ask for streaming cache hints (kFlagStream: loads and stores
// that evict first, for work larger than L2).
#pragma once

namespace nvl::builtin {

// Marks the parameter block of a built-in kernel (for the simulated GPU).
constexpr unsigned kMagic = 0x424c564eu;  // "NVLB"

enum Op : unsigned { kOpCopy = 1, kOpFill = 2, kOpCopyLine = 3, kOpFillLine = 4 };

// Args::flags.
constexpr unsigned kFlagStream = 1;

struct Args {
    unsigned magic;  // kMagic
    unsigned op;     // Op
    unsigned long long dst;
    unsigned long long src;         // copies
    unsigned long long width;       // bytes (copy) or elements (fill) per line
    unsigned long long lines;       // per slice, >= 1
    unsigned long long slices;      // >= 1
    unsigned long long dstPitch;    // bytes between lines
    unsigned long long srcPitch;
    unsigned long long dstSlicePitch;  // bytes between slices
    unsigned long long srcSlicePitch;
    unsigned value;        // fills: the element's bits
    unsigned elementSize;  // fills: 1, 2 or 4
    unsigned lineThreads;  // threads per group
    unsigned flags;        // line kernels: kFlag*
};

// The kernels' names in the embedded image.
#define NVL_BUILTIN_COPY_NAME "nvl_builtin_copy"
#define NVL_BUILTIN_FILL_NAME "nvl_builtin_fill"
#define NVL_BUILTIN_COPY_LINE_NAME "nvl_builtin_copy_line"
#define NVL_BUILTIN_FILL_LINE_NAME "nvl_builtin_fill_line"

// Threads per block of every launch.
constexpr unsigned kBlockThreads = 256;
// Line kernels: the largest block, and the 16-byte units per thread and chunk.
constexpr unsigned kLineMaxThreads = 1024;
constexpr unsigned kLineUnroll = 4;

}  // namespace nvl::builtin
