// Built-in kernels: device-to-device copies and fills of any shape run as
// kernels (builtin/kernels.cu, embedded in the library) instead of on the
// copy engine, which moves device memory an order of magnitude slower.
// Loaded into a context the first time it needs one; launched in the
// stream like any kernel (same order, same events).
//
// Which work goes there: copies whose both sides are device memory, and
// fills of device memory, of at least NVLITE_KERNEL_COPY_MIN /
// NVLITE_KERNEL_FILL_MIN bytes (defaults kDefaultCopyMinBytes /
// kDefaultFillMinBytes; 0: all of them; "off": none). Smaller work stays on
// the copy engine.
//
// 1-D work (and 2-D/3-D work whose lines lie back to back) goes to the line
// kernels, launched as NVLITE_BUILTIN_VARIANT says (kVariants: block size,
// a grid the size of the GPU or of the work, streaming cache hints above
// the L2's size); "box" sends it to the 2-D/3-D kernel instead.
#pragma once

#include <cstdint>
#include <mutex>

#include "common/status.h"

namespace nvl::core {

class Context;
class Function;
class Module;
class Stream;

namespace builtin {

// Work from these sizes on goes to a kernel; below them the copy engine is
// faster. From bench_perf copy's crossover rows (H200, 2026-12-02 04:00,
// launch order 'auto', 'flat' kernels, 200 operations back to back on one
// stream, us per operation, medians of 3 rounds; the kernel rows with both
// thresholds at 0):
//   size              4K    64K   128K  256K  1M    4M
//   D2D, copy engine  1.61  2.42  3.20  4.80  (13.1  46.3 on 2026-12-01)
//   D2D, kernel       1.97  2.21  2.28  2.29  2.38  2.97
//   D32, copy engine  1.36  1.91  2.56  3.85  (11.6  42.5)
//   D32, kernel       1.86  1.95  1.97  1.99  2.06  2.63
// The copy lines cross near 40 KiB (the kernel wins at 64 KiB), the fill
// lines at about 68 KiB (64 KiB is a tie, 128 KiB the kernel's): 64 KiB and
// 96 KiB. (Before the launch order 'auto' every kernel paid ~8 us here, and
// the thresholds were 640 KiB and 384 KiB.) A kernel between kernels also
// spares a change of channel: an empty kernel and a 64 KiB copy alternating
// took 7.31 us per pair with the copy on the copy engine, 3.48 as a kernel.
inline constexpr uint64_t kDefaultCopyMinBytes = uint64_t{64} << 10;
inline constexpr uint64_t kDefaultFillMinBytes = uint64_t{96} << 10;

// How 1-D work is launched (NVLITE_BUILTIN_VARIANT=<name>).
struct Variant {
    const char* name;
    uint32_t threads;  // per block
    bool persistent;   // grid: SMs x resident blocks (else: one chunk per block)
    bool stream;       // streaming cache hints for work larger than the L2
    bool line;         // the line kernels (else the 2-D/3-D kernel)
};
// The first is the default: "flat" was the fastest on the H200 (2026-12-02,
// bench_perf copy, 3 rounds, medians; libcuda = 1.00): D2D 1 GiB 0.97 (vec
// 0.90), 64 MiB 1.03 (vec 1.01, both with the launch order 'auto'), memset
// 1 GiB 1.02 (vec 0.94).
inline constexpr Variant kVariants[] = {
    {"flat", 256, false, false, true},
    {"vec", 256, true, false, true},
    {"stream", 256, true, true, true},
    {"vec512", 512, true, false, true},
    {"vec1024", 1024, true, false, true},
    {"stream512", 512, true, true, true},
    {"flatstream", 256, false, true, true},
    {"box", 256, true, false, false},
};
// The variant NVLITE_BUILTIN_VARIANT names (read once; unknown names: the default).
const Variant& variant();

// A box of bytes on both sides of a copy (a fill uses the destination side;
// 'width' counts its elements).
struct Box {
    uint64_t dst = 0, dstPitch = 0, dstSlicePitch = 0;
    uint64_t src = 0, srcPitch = 0, srcSlicePitch = 0;
    uint64_t width = 0;  // bytes (copies) or elements (fills) per line
    uint64_t lines = 1, slices = 1;
};

// Whether work of 'bytes' between device memory goes to a kernel: from the
// threshold on, when the stream's context has the kernels (or can load them:
// a context out of device memory keeps using the copy engine).
bool wantCopy(Stream& st, uint64_t bytes);
bool wantFill(Stream& st, uint64_t bytes);
// Whether the kernels can take the box's shape (line and slice counts below 2^32).
bool fits(const Box& b);
// Bytes from the first to the last byte of a side of the box, with its pitches.
uint64_t span(uint64_t pitch, uint64_t slicePitch, const Box& b);
// Whether [a, a + an) and [b, b + bn) share a byte.
inline bool overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) { return a < b + bn && b < a + an; }

// Launches the copy kernel on the stream's compute channel.
Status copy(Stream& st, const Box& b);
// Launches the fill kernel: 'width' elements of 'elementSize' bytes per line
// ('dst' and the pitches multiples of the element size).
Status fill(Stream& st, const Box& b, uint32_t value, uint32_t elementSize);

// Threads of one launch: the block count and the threads sharing a line.
struct Geometry {
    uint32_t blocks;
    uint32_t lineThreads;
};
// For lines of 'lineBytes' bytes, 'lines' of them in all, on a GPU of 'smCount' SMs.
// 'maxBlocks' caps the grid (the 2-D/3-D kernel's resident blocks; a power of two is taken below it).
Geometry geometry(uint64_t lineBytes, uint64_t lines, uint32_t smCount, uint64_t maxBlocks = UINT64_MAX);
// Blocks of a line kernel's launch for 'bytes' of work: one chunk per block,
// at most 'residentBlocks' when the variant is persistent.
uint32_t lineBlocks(uint64_t bytes, const Variant& v, uint64_t residentBlocks);

}  // namespace builtin

// A context's built-in kernels: loaded on first use, gone with the context's
// activation.
class BuiltinKernels {
public:
    explicit BuiltinKernels(Context& ctx) : ctx_(ctx) {}
    BuiltinKernels(const BuiltinKernels&) = delete;
    BuiltinKernels& operator=(const BuiltinKernels&) = delete;

    // A loaded kernel and the blocks of it the GPU holds at once (worked out
    // once per load, not per operation): kBlockThreads per block for the
    // 2-D/3-D kernels, variant().threads for the line kernels.
    struct Kernel {
        Function* function = nullptr;
        uint64_t residentBlocks = 1;
    };
    struct Set {
        Kernel copy, fill, copyLine, fillLine;
    };
    // Loads them first if needed.
    Result<Set> kernels();
    // The module is gone (the context's memory is released): the next use loads it again.
    void forget();
    // Loaded in this activation.
    bool loaded();
    // Loaded, or loaded now.
    bool usable();

private:
    Status loadLocked();

    Context& ctx_;
    std::mutex mutex_;
    Module* module_ = nullptr;
    Set set_;
};

}  // namespace nvl::core
