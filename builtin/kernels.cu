// nvlite's built-in kernels: device-to-device copies and fills (cuMemcpy*,
// cuMemset* between or on device memory) run at memory speed, the way
// libcuda runs them, instead of on the copy engine. Compiled with NVRTC at
// build time for every architecture nvlite drives (tools/nvrtc_cubin.c),
// embedded in libnvlite.so (lib/loader/builtin_image.cpp) and loaded into a
// context the first time it needs one (lib/core/builtin.cpp).
//
// The parameter block and the way the threads share the work are described
// in lib/common/builtin_abi.h. tests/unit/test_builtin_kernels.cpp compiles
// this file for the CPU (NVL_BUILTIN_HOST, with stand-ins for the CUDA
// built-ins) and runs every thread of a grid, at odd sizes and offsets.
#include "common/builtin_abi.h"

#ifndef NVL_BUILTIN_HOST
#define NVL_DEVICE __device__ __forceinline__
#define NVL_KERNEL extern "C" __global__ void __launch_bounds__(nvl::builtin::kBlockThreads)
// The line kernels take any block size the library picks (up to 1024
// threads) and stay at 32 registers, so that 2048 threads fit on an SM.
#define NVL_LINE_KERNEL extern "C" __global__ void __launch_bounds__(nvl::builtin::kLineMaxThreads, 2)
#define NVL_UNROLL _Pragma("unroll")
#define NVL_LOAD_STREAM(p) __ldcs(p)
#define NVL_STORE_STREAM(p, v) __stcs(p, v)
#endif

namespace {

typedef unsigned long long u64;
typedef unsigned int u32;

// Unrolled body loops: this many 16-byte units per thread in flight.
constexpr u64 kUnroll = nvl::builtin::kLineUnroll;

// The 32 bits of hi:lo starting 'shift' bits up (shift < 32).
NVL_DEVICE u32 funnel(u32 lo, u32 hi, u32 shift) { return __funnelshift_r(lo, hi, shift); }

// 'units' 16-byte units to the aligned 'out' from 'from', which is not
// 16-byte aligned: aligned 4-byte source words, shifted into place. The
// fifth word is read only when the source is not 4-byte aligned, and then
// holds a byte the unit needs: no word read lies wholly outside the source
// (so none can fault). Unit i + k * count is this thread's ('lane' its
// place among 'count' threads).
NVL_DEVICE void copyShifted(uint4* out, u64 from, u64 units, u64 lane, u64 count) {
    const u32* words = reinterpret_cast<const u32*>(from & ~3ull);
    const u32 shift = static_cast<u32>(from & 3) * 8;
    u64 i = lane;
    for (; i + count < units; i += 2 * count) {
        const u32* w = words + 4 * i;
        const u32* x = words + 4 * (i + count);
        const u32 w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = shift ? w[4] : 0;
        const u32 x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3], x4 = shift ? x[4] : 0;
        out[i] = make_uint4(funnel(w0, w1, shift), funnel(w1, w2, shift), funnel(w2, w3, shift), funnel(w3, w4, shift));
        out[i + count] =
            make_uint4(funnel(x0, x1, shift), funnel(x1, x2, shift), funnel(x2, x3, shift), funnel(x3, x4, shift));
    }
    if (i < units) {
        const u32* w = words + 4 * i;
        const u32 w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = shift ? w[4] : 0;
        out[i] = make_uint4(funnel(w0, w1, shift), funnel(w1, w2, shift), funnel(w2, w3, shift), funnel(w3, w4, shift));
    }
}

// One line of 'n' bytes from 's' to 'd', shared by the 'count' threads of a
// group ('lane' is this thread's place in it).
NVL_DEVICE void copyLine(u64 d, u64 s, u64 n, u64 lane, u64 count) {
    u64 head = (16 - (d & 15)) & 15;
    if (head > n) head = n;
    const u64 units = (n - head) >> 4;
    const u64 tail = head + (units << 4);
    unsigned char* db = reinterpret_cast<unsigned char*>(d);
    const unsigned char* sb = reinterpret_cast<const unsigned char*>(s);
    for (u64 i = lane; i < head; i += count) db[i] = sb[i];
    for (u64 i = tail + lane; i < n; i += count) db[i] = sb[i];
    if (units == 0) return;
    uint4* out = reinterpret_cast<uint4*>(d + head);
    const u64 from = s + head;
    if ((from & 15) == 0) {
        // Source and destination agree modulo 16: vector loads and stores.
        const uint4* in = reinterpret_cast<const uint4*>(from);
        u64 i = lane;
        for (; i + (kUnroll - 1) * count < units; i += kUnroll * count) {
            uint4 v[kUnroll];
NVL_UNROLL
            for (u64 k = 0; k < kUnroll; ++k) v[k] = in[i + k * count];
NVL_UNROLL
            for (u64 k = 0; k < kUnroll; ++k) out[i + k * count] = v[k];
        }
        for (; i < units; i += count) out[i] = in[i];
        return;
    }
    copyShifted(out, from, units, lane, count);
}

// One element of 'size' bytes at 'a' (aligned to its size).
NVL_DEVICE void storeElement(u64 a, u32 value, u32 size) {
    if (size == 1) *reinterpret_cast<unsigned char*>(a) = static_cast<unsigned char>(value);
    else if (size == 2) *reinterpret_cast<unsigned short*>(a) = static_cast<unsigned short>(value);
    else *reinterpret_cast<u32*>(a) = value;
}

// One line of 'n' elements of 'size' bytes at 'd' (aligned to 'size', which
// divides 16: every 16-byte aligned unit starts with a whole element).
NVL_DEVICE void fillLine(u64 d, u64 n, u32 value, u32 size, u32 pattern, u64 lane, u64 count) {
    const u64 bytes = n * size;
    u64 head = (16 - (d & 15)) & 15;
    if (head > bytes) head = bytes;
    const u64 units = (bytes - head) >> 4;
    const u64 tail = head + (units << 4);
    for (u64 i = lane * size; i < head; i += count * size) storeElement(d + i, value, size);
    for (u64 i = tail + lane * size; i < bytes; i += count * size) storeElement(d + i, value, size);
    uint4* out = reinterpret_cast<uint4*>(d + head);
    const uint4 v = make_uint4(pattern, pattern, pattern, pattern);
    u64 i = lane;
    for (; i + (kUnroll - 1) * count < units; i += kUnroll * count) {
NVL_UNROLL
        for (u64 k = 0; k < kUnroll; ++k) out[i + k * count] = v;
    }
    for (; i < units; i += count) out[i] = v;
}

// This thread's group and place in it, and the number of groups (group
// sizes are powers of two: no division).
struct Share {
    u32 group, groups;
    u64 lane, count;
};

NVL_DEVICE Share share(const nvl::builtin::Args& a) {
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 total = gridDim.x * blockDim.x;
    const u32 shift = static_cast<u32>(__ffs(static_cast<int>(a.lineThreads)) - 1);
    return Share{t >> shift, total >> shift, t & (a.lineThreads - 1), a.lineThreads};
}

// Slice and line of a group's lines, stepped without dividing (the library
// keeps 'lines' and 'slices' below 2^32).
struct Walk {
    u64 z, y;
    u32 lines, dz, dy;
    NVL_DEVICE Walk(u32 lines_, u32 first, u32 step)
        : z(first / lines_), y(first % lines_), lines(lines_), dz(step / lines_), dy(step % lines_) {}
    NVL_DEVICE void next() {
        z += dz;
        y += dy;
        if (y >= lines) {
            y -= lines;
            ++z;
        }
    }
};

}  // namespace

NVL_KERNEL nvl_builtin_copy(const nvl::builtin::Args a) {
    const Share s = share(a);
    const u64 lines = a.lines * a.slices;
    Walk w(static_cast<u32>(a.lines), s.group, s.groups);
    for (u64 k = s.group; k < lines; k += s.groups, w.next())
        copyLine(a.dst + w.z * a.dstSlicePitch + w.y * a.dstPitch, a.src + w.z * a.srcSlicePitch + w.y * a.srcPitch,
                 a.width, s.lane, s.count);
}

NVL_KERNEL nvl_builtin_fill(const nvl::builtin::Args a) {
    const Share s = share(a);
    const u32 size = a.elementSize;
    const u32 pattern = size == 1 ? (a.value & 0xffu) * 0x01010101u
                        : size == 2 ? (a.value & 0xffffu) * 0x00010001u
                                    : a.value;
    const u64 lines = a.lines * a.slices;
    Walk w(static_cast<u32>(a.lines), s.group, s.groups);
    for (u64 k = s.group; k < lines; k += s.groups, w.next())
        fillLine(a.dst + w.z * a.dstSlicePitch + w.y * a.dstPitch, a.width, a.value, size, pattern, s.lane, s.count);
}

// ---- Line kernels: one 1-D copy or fill (lines = slices = 1), any block
// size. The body is cut in chunks of blockDim.x * kUnroll units, one per
// block and step: a block's loads and stores cover one contiguous chunk
// (each warp 512 contiguous bytes per access), kUnroll of them in flight
// per thread; blocks step over the chunks by the grid's size (a grid the
// size of the GPU walks the whole line; a grid as large as the work takes
// one chunk per block). The head and tail bytes go to the first threads.

namespace {

// The 'units' units to 'out' from 'in' (both 16-byte aligned).
template <bool Stream>
NVL_DEVICE void copyUnits(uint4* out, const uint4* in, u64 units) {
    const u64 t = blockDim.x;
    u64 i = u64{blockIdx.x} * t * kUnroll + threadIdx.x;
    const u64 step = u64{gridDim.x} * t * kUnroll;
    for (; i + (kUnroll - 1) * t < units; i += step) {
        uint4 v[kUnroll];
NVL_UNROLL
        for (u64 k = 0; k < kUnroll; ++k) v[k] = Stream ? NVL_LOAD_STREAM(in + i + k * t) : in[i + k * t];
NVL_UNROLL
        for (u64 k = 0; k < kUnroll; ++k) {
            if (Stream) NVL_STORE_STREAM(out + i + k * t, v[k]);
            else out[i + k * t] = v[k];
        }
    }
    // The last, partial chunk (later steps lie past the end).
    for (u64 k = 0; k < kUnroll; ++k)
        if (i + k * t < units) out[i + k * t] = in[i + k * t];
}

template <bool Stream>
NVL_DEVICE void fillUnits(uint4* out, uint4 v, u64 units) {
    const u64 t = blockDim.x;
    u64 i = u64{blockIdx.x} * t * kUnroll + threadIdx.x;
    const u64 step = u64{gridDim.x} * t * kUnroll;
    for (; i + (kUnroll - 1) * t < units; i += step) {
NVL_UNROLL
        for (u64 k = 0; k < kUnroll; ++k) {
            if (Stream) NVL_STORE_STREAM(out + i + k * t, v);
            else out[i + k * t] = v;
        }
    }
    for (u64 k = 0; k < kUnroll; ++k)
        if (i + k * t < units) out[i + k * t] = v;
}

}  // namespace

NVL_LINE_KERNEL nvl_builtin_copy_line(const nvl::builtin::Args a) {
    const u64 d = a.dst, s = a.src, n = a.width;
    u64 head = (16 - (d & 15)) & 15;
    if (head > n) head = n;
    const u64 units = (n - head) >> 4;
    const u64 tail = head + (units << 4);
    const u64 lane = u64{blockIdx.x} * blockDim.x + threadIdx.x;
    const u64 count = u64{gridDim.x} * blockDim.x;
    unsigned char* db = reinterpret_cast<unsigned char*>(d);
    const unsigned char* sb = reinterpret_cast<const unsigned char*>(s);
    if (lane < head) db[lane] = sb[lane];
    if (tail + lane < n) db[tail + lane] = sb[tail + lane];
    if (units == 0) return;
    uint4* out = reinterpret_cast<uint4*>(d + head);
    const u64 from = s + head;
    if (from & 15) copyShifted(out, from, units, lane, count);
    else if (a.flags & nvl::builtin::kFlagStream) copyUnits<true>(out, reinterpret_cast<const uint4*>(from), units);
    else copyUnits<false>(out, reinterpret_cast<const uint4*>(from), units);
}

NVL_LINE_KERNEL nvl_builtin_fill_line(const nvl::builtin::Args a) {
    const u32 size = a.elementSize;
    const u32 pattern = size == 1 ? (a.value & 0xffu) * 0x01010101u
                        : size == 2 ? (a.value & 0xffffu) * 0x00010001u
                                    : a.value;
    const u64 d = a.dst, bytes = a.width * size;
    u64 head = (16 - (d & 15)) & 15;
    if (head > bytes) head = bytes;
    const u64 units = (bytes - head) >> 4;
    const u64 tail = head + (units << 4);
    const u64 lane = u64{blockIdx.x} * blockDim.x + threadIdx.x;
    // Head and tail: at most 15 bytes each, one element per thread.
    if (lane * size < head) storeElement(d + lane * size, a.value, size);
    if (tail + lane * size < bytes) storeElement(d + tail + lane * size, a.value, size);
    uint4* out = reinterpret_cast<uint4*>(d + head);
    const uint4 v = make_uint4(pattern, pattern, pattern, pattern);
    if (a.flags & nvl::builtin::kFlagStream) fillUnits<true>(out, v, units);
    else fillUnits<false>(out, v, units);
}
