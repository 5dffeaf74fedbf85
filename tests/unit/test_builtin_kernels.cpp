// The built-in kernels' code (builtin/kernels.cu) run on the CPU: the file is
// compiled here as C++ with stand-ins for the CUDA built-ins, and every
// thread of a grid the library would launch (core::builtin::geometry) runs in
// turn (the kernels' threads never talk to each other, so any order is one
// the GPU could take). Checked at odd sizes, offsets and pitches, with random
// data: every destination byte inside the box is right, none outside it
// moved, and no read leaves the source (lines end at a page the process may
// not read). The simulator (test_builtin_sim.cpp) checks the launches, the
// H200 (tests/hw/test_hw_builtin.c) the same work on the GPU.
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <random>
#include <vector>

#include "core/builtin.h"
#include "support/test_support.h"

// ---- stand-ins for what the kernels use of CUDA
namespace {
struct Dim3 {
    unsigned x = 0, y = 0, z = 0;
};
Dim3 threadIdx, blockIdx, blockDim, gridDim;
struct alignas(16) uint4 {
    unsigned x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
    const uint64_t v = (uint64_t{hi} << 32) | lo;
    return static_cast<unsigned>(v >> (shift & 31));
}
inline int __ffs(int x) { return x == 0 ? 0 : __builtin_ctz(static_cast<unsigned>(x)) + 1; }
}  // namespace

#define NVL_BUILTIN_HOST 1
#define NVL_DEVICE inline
#define NVL_KERNEL static void
#define NVL_LINE_KERNEL static void
#define NVL_UNROLL
#define NVL_LOAD_STREAM(p) (*(p))
#define NVL_STORE_STREAM(p, v) (*(p) = (v))
#include "../../builtin/kernels.cu"

namespace {

using nvl::core::builtin::Box;
using nvl::core::builtin::geometry;
using nvl::core::builtin::Geometry;
namespace abi = nvl::builtin;

constexpr uint32_t kSmCounts[] = {132, 108, 46};

// Runs every thread of the grid the library would launch.
void runGrid(void (*kernel)(const abi::Args), const abi::Args& base, uint64_t lineBytes, uint32_t smCount) {
    const Geometry g = geometry(lineBytes, base.lines * base.slices, smCount);
    abi::Args a = base;
    a.magic = abi::kMagic;
    a.lineThreads = g.lineThreads;
    gridDim = Dim3{g.blocks, 1, 1};
    blockDim = Dim3{abi::kBlockThreads, 1, 1};
    for (unsigned b = 0; b < g.blocks; ++b) {
        blockIdx = Dim3{b, 0, 0};
        for (unsigned t = 0; t < abi::kBlockThreads; ++t) {
            threadIdx = Dim3{t, 0, 0};
            kernel(a);
        }
    }
}

// Runs every thread of a line kernel's grid as the library launches it for
// 'bytes' of work under variant 'v' (SMs holding 2048 threads each).
void runLine(void (*kernel)(const abi::Args), const abi::Args& base, uint64_t bytes,
             const nvl::core::builtin::Variant& v, uint32_t smCount) {
    const uint32_t blocks = nvl::core::builtin::lineBlocks(bytes, v, uint64_t{smCount} * (2048 / v.threads));
    abi::Args a = base;
    a.magic = abi::kMagic;
    a.op = a.op == abi::kOpCopy ? abi::kOpCopyLine : abi::kOpFillLine;
    if (v.stream) a.flags = abi::kFlagStream;
    gridDim = Dim3{blocks, 1, 1};
    blockDim = Dim3{v.threads, 1, 1};
    for (unsigned b = 0; b < blocks; ++b) {
        blockIdx = Dim3{b, 0, 0};
        for (unsigned t = 0; t < v.threads; ++t) {
            threadIdx = Dim3{t, 0, 0};
            kernel(a);
        }
    }
}

// Which kernel the checks run: the 2-D/3-D one, or the line one under a variant.
const nvl::core::builtin::Variant* g_line = nullptr;

// Memory whose last byte is followed by a page the process may not touch.
struct Fenced {
    uint8_t* map = nullptr;
    size_t mapBytes = 0;
    uint8_t* end = nullptr;  // first byte of the fence page
    explicit Fenced(size_t bytes) {
        const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        const size_t data = (bytes + page - 1) / page * page;
        mapBytes = data + page;
        void* p = mmap(nullptr, mapBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(p != MAP_FAILED);
        map = static_cast<uint8_t*>(p);
        end = map + data;
        assert_int_equal(mprotect(end, page, PROT_NONE), 0);
    }
    ~Fenced() { munmap(map, mapBytes); }
    Fenced(const Fenced&) = delete;
    Fenced& operator=(const Fenced&) = delete;
};

// A copy of a box: source lines placed so that the last one ends right at
// the fence; the destination in a buffer with guard bytes around.
void checkCopy(uint64_t width, uint64_t lines, uint64_t slices, uint64_t dstOff, uint64_t srcOff, uint64_t dstPad,
               uint64_t srcPad, uint64_t slicePad, uint32_t smCount, uint64_t seed) {
    const uint64_t srcPitch = width + srcPad, dstPitch = width + dstPad;
    const uint64_t srcSlice = srcPitch * lines + slicePad, dstSlice = dstPitch * lines + slicePad * 3;
    const uint64_t srcSpan = (slices - 1) * srcSlice + (lines - 1) * srcPitch + width;
    const uint64_t dstSpan = (slices - 1) * dstSlice + (lines - 1) * dstPitch + width;
    Fenced src(srcSpan + srcOff + 64);
    uint8_t* s = src.end - srcSpan;  // the last line ends at the fence
    // Source start offset modulo 16 as asked (moves the whole span down).
    s -= ((reinterpret_cast<uintptr_t>(s) - srcOff) & 15);
    ts_fill_random(src.map, static_cast<size_t>(src.end - src.map), seed);
    std::vector<uint8_t> dstBuf(dstSpan + dstOff + 128);
    ts_fill_random(dstBuf.data(), dstBuf.size(), seed ^ 0x5a5a);
    // dstBuf is 16-aligned by the allocator at least: place dst at dstOff mod 16.
    uint8_t* d = dstBuf.data() + 32;
    d += (dstOff - reinterpret_cast<uintptr_t>(d)) & 15;
    std::vector<uint8_t> want(dstBuf);
    const size_t d0 = static_cast<size_t>(d - dstBuf.data());
    for (uint64_t z = 0; z < slices; ++z)
        for (uint64_t y = 0; y < lines; ++y)
            memcpy(&want[d0 + z * dstSlice + y * dstPitch], s + z * srcSlice + y * srcPitch, width);

    abi::Args a{};
    a.op = abi::kOpCopy;
    a.dst = reinterpret_cast<uint64_t>(d);
    a.src = reinterpret_cast<uint64_t>(s);
    a.width = width;
    a.lines = lines;
    a.slices = slices;
    a.dstPitch = dstPitch;
    a.srcPitch = srcPitch;
    a.dstSlicePitch = dstSlice;
    a.srcSlicePitch = srcSlice;
    if (g_line) runLine(nvl_builtin_copy_line, a, width, *g_line, smCount);
    else runGrid(nvl_builtin_copy, a, width, smCount);
    if (memcmp(want.data(), dstBuf.data(), want.size()) != 0) {
        size_t i = 0;
        while (want[i] == dstBuf[i]) ++i;
        fail_msg("copy %llux%llux%llu dst%%16=%llu src%%16=%llu pads %llu/%llu/%llu on %u SMs: byte %zd (from dst) "
                 "is %#x, want %#x",
                 (unsigned long long)width, (unsigned long long)lines, (unsigned long long)slices,
                 (unsigned long long)(dstOff & 15), (unsigned long long)(srcOff & 15), (unsigned long long)dstPad,
                 (unsigned long long)srcPad, (unsigned long long)slicePad, smCount, (ssize_t)i - (ssize_t)d0,
                 dstBuf[i], want[i]);
    }
}

void checkFill(uint64_t count, uint32_t size, uint64_t lines, uint64_t pad, uint64_t offElems, uint32_t value,
               uint32_t smCount, uint64_t seed) {
    const uint64_t lineBytes = count * size, pitch = lineBytes + pad * size;
    const uint64_t span = (lines - 1) * pitch + lineBytes;
    std::vector<uint8_t> buf(span + 96);
    ts_fill_random(buf.data(), buf.size(), seed);
    uint8_t* d = buf.data() + 32;
    d += (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
    d += offElems * size;
    std::vector<uint8_t> want(buf);
    const size_t d0 = static_cast<size_t>(d - buf.data());
    for (uint64_t y = 0; y < lines; ++y)
        for (uint64_t i = 0; i < count; ++i)
            for (uint32_t k = 0; k < size; ++k)
                want[d0 + y * pitch + i * size + k] = static_cast<uint8_t>(value >> (8 * k));
    abi::Args a{};
    a.op = abi::kOpFill;
    a.dst = reinterpret_cast<uint64_t>(d);
    a.width = count;
    a.lines = lines;
    a.slices = 1;
    a.dstPitch = pitch;
    a.value = value;
    a.elementSize = size;
    if (g_line) runLine(nvl_builtin_fill_line, a, lineBytes, *g_line, smCount);
    else runGrid(nvl_builtin_fill, a, lineBytes, smCount);
    if (memcmp(want.data(), buf.data(), want.size()) != 0) {
        size_t i = 0;
        while (want[i] == buf[i]) ++i;
        fail_msg("fill %llu x D%u x %llu lines, pad %llu, offset %llu elements: byte %zd is %#x, want %#x",
                 (unsigned long long)count, size * 8, (unsigned long long)lines, (unsigned long long)pad,
                 (unsigned long long)offElems, (ssize_t)i - (ssize_t)d0, buf[i], want[i]);
    }
}

void test_geometry(void**) {
    for (uint32_t sms : kSmCounts) {
        for (uint64_t lineBytes : {uint64_t{1}, uint64_t{17}, uint64_t{4096}, uint64_t{1} << 20, uint64_t{1} << 30,
                                   uint64_t{1} << 40}) {
            for (uint64_t lines : {uint64_t{1}, uint64_t{3}, uint64_t{1000}, uint64_t{1} << 31}) {
                const Geometry g = geometry(lineBytes, lines, sms);
                const uint64_t threads = uint64_t{g.blocks} * abi::kBlockThreads;
                assert_true(g.blocks >= 1 && (g.blocks & (g.blocks - 1)) == 0);
                assert_true(g.blocks <= uint64_t{sms} * 8);
                assert_true(g.lineThreads >= 32 && (g.lineThreads & (g.lineThreads - 1)) == 0);
                assert_true(threads % g.lineThreads == 0);
            }
        }
    }
    // Large work fills the GPU; a tiny line gets one block.
    assert_int_equal(geometry(uint64_t{1} << 30, 1, 132).blocks, 1024);
    assert_int_equal(geometry(100, 1, 132).blocks, 1);
}

void test_copy_1d_odd_sizes_and_offsets(void**) {
    std::mt19937_64 rng(1201);
    const uint64_t sizes[] = {1, 2, 3, 15, 16, 17, 31, 33, 63, 64, 65, 255, 1000, 4093, 4099, 65537, 300007};
    uint64_t seed = 1;
    for (uint64_t n : sizes) {
        for (uint64_t dOff = 0; dOff < 16; dOff += (n > 4096 ? 5 : 1)) {
            for (uint64_t sOff = 0; sOff < 16; sOff += (n > 4096 ? 3 : 1)) {
                checkCopy(n, 1, 1, dOff, sOff, 0, 0, 0, kSmCounts[rng() % 3], ++seed);
            }
        }
    }
}

void test_copy_2d_3d_boxes(void**) {
    std::mt19937_64 rng(1202);
    for (int i = 0; i < 60; ++i) {
        const uint64_t width = 1 + rng() % 700;
        const uint64_t lines = 1 + rng() % 40;
        const uint64_t slices = 1 + rng() % 5;
        checkCopy(width, lines, slices, rng() % 16, rng() % 16, rng() % 37, rng() % 53, rng() % 29,
                  kSmCounts[rng() % 3], 5000 + i);
    }
    // Many short lines (more lines than groups) and one long line split over many groups.
    checkCopy(3, 5000, 1, 1, 2, 1, 0, 0, 132, 77);
    checkCopy(1 << 20, 2, 1, 7, 9, 3, 5, 0, 132, 78);
}

void test_fill_sizes_offsets_elements(void**) {
    std::mt19937_64 rng(1203);
    const uint32_t values[] = {0xa5u, 0xbeefu, 0xdeadbeefu, 0x80000001u};
    const uint64_t counts[] = {1, 2, 3, 7, 8, 9, 31, 257, 4097, 100003};
    int seed = 0;
    for (uint32_t size : {1u, 2u, 4u}) {
        for (uint64_t count : counts) {
            for (uint64_t off = 0; off < 16 / size; ++off) {
                checkFill(count, size, 1, 0, off, values[rng() % 4], kSmCounts[rng() % 3], ++seed);
            }
        }
    }
    // 2-D: lines with gaps between them (the gaps keep their bytes).
    for (int i = 0; i < 40; ++i) {
        const uint32_t size = 1u << (rng() % 3);
        checkFill(1 + rng() % 300, size, 1 + rng() % 30, 1 + rng() % 9, rng() % 8, values[rng() % 4],
                  kSmCounts[rng() % 3], 900 + i);
    }
}

// The line kernels under every variant's launch, at odd sizes and offsets.
void test_line_kernels_every_variant(void**) {
    std::mt19937_64 rng(1204);
    const uint64_t sizes[] = {1, 15, 16, 17, 33, 4093, 65537, 300007};
    const uint32_t values[] = {0xa5u, 0xbeefu, 0xdeadbeefu};
    uint64_t seed = 40000;
    for (const nvl::core::builtin::Variant& v : nvl::core::builtin::kVariants) {
        if (!v.line) continue;
        g_line = &v;
        for (uint64_t n : sizes) {
            for (int k = 0; k < 3; ++k) checkCopy(n, 1, 1, rng() % 16, rng() % 16, 0, 0, 0, kSmCounts[rng() % 3], ++seed);
            checkCopy(n, 1, 1, 5, 5, 0, 0, 0, kSmCounts[rng() % 3], ++seed);  // agreeing modulo 16: vector body
            for (uint32_t size : {1u, 2u, 4u})
                checkFill(n, size, 1, 0, rng() % (16 / size), values[rng() % 3], kSmCounts[rng() % 3], ++seed);
        }
        g_line = nullptr;
    }
}

// Line-kernel grids: one chunk per block, capped at the resident blocks when persistent.
void test_line_blocks(void**) {
    using nvl::core::builtin::lineBlocks;
    for (const nvl::core::builtin::Variant& v : nvl::core::builtin::kVariants) {
        const uint64_t chunk = uint64_t{v.threads} * abi::kLineUnroll * 16;
        assert_int_equal(lineBlocks(1, v, 1056), 1);
        assert_int_equal(lineBlocks(chunk * 3 + 1, v, 1056), 4);
        const uint32_t big = lineBlocks(uint64_t{1} << 30, v, 1056);
        if (v.persistent) assert_int_equal(big, 1056);
        else assert_int_equal(big, (uint64_t{1} << 30) / chunk + 1);
        assert_true(lineBlocks(uint64_t{1} << 62, v, 1056) <= INT32_MAX);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry),
        cmocka_unit_test(test_copy_1d_odd_sizes_and_offsets),
        cmocka_unit_test(test_copy_2d_3d_boxes),
        cmocka_unit_test(test_fill_sizes_offsets_elements),
        cmocka_unit_test(test_line_kernels_every_variant),
        cmocka_unit_test(test_line_blocks),
    };
    return cmocka_run_group_tests_name("builtin_kernels", tests, nullptr, nullptr);
}
