// Unit tests of the hardware layer's encoders: push-buffer method headers
// and copy-engine work, checked against the method format written out
// independently (bit arithmetic, not our BitField helpers); and of the ring
// space bookkeeping that decides when ring memory may be reused.
#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <initializer_list>
#include <random>
#include <vector>

#include "defs/copy_c8b5.h"
#include "defs/host_c86f.h"
#include "hw/compute.h"
#include "hw/copy_engine.h"
#include "hw/push_buffer.h"
#include "hw/ring_space.h"
#include "hw/wc_copy.h"

// cmocka last: it declares its functions without extern "C", and its macros
// clash with the standard library headers.
#include <setjmp.h>
#include <stdarg.h>
extern "C" {
#include <cmocka.h>
}

using namespace nvl;

namespace {

// Method header: SEC_OP 31:29, COUNT 28:16, SUBCHANNEL 15:13, ADDRESS (method >> 2) 11:0.
constexpr uint32_t header(uint32_t secOp, uint32_t count, uint32_t sub, uint32_t method) {
    return (secOp << 29) | (count << 16) | (sub << 13) | (method >> 2);
}

void test_incrementing_header(void**) {
    std::vector<uint32_t> buf(16, 0xdeadbeef);
    hw::PushWriter w(buf.data(), buf.size());
    w.inc(nv::NVC8B5_LAUNCH_DMA(0x1234u));  // the copy class's subchannel (4)
    // Host methods on another subchannel (any subchannel takes them).
    w.incOn<hw::Subchannel::Compute>(nv::NVC86F_SEM_ADDR_LO(1u), nv::NVC86F_SEM_ADDR_HI(2u), nv::NVC86F_SEM_PAYLOAD_LO(3u),
                                     nv::NVC86F_SEM_PAYLOAD_HI(4u), nv::NVC86F_SEM_EXECUTE(5u));
    assert_int_equal(w.dwords(), 2 + 6);
    assert_int_equal(buf[0], header(1, 1, 4, 0x300));
    assert_int_equal(buf[0], 0x200180C0u);  // the same, spelled out
    assert_int_equal(buf[1], 0x1234);
    assert_int_equal(buf[2], header(1, 5, 1, 0x5c));
    for (uint32_t i = 0; i < 5; ++i) assert_int_equal(buf[3 + i], i + 1);
    assert_int_equal(buf[8], 0xdeadbeef);  // nothing written past the end
}

void test_non_incrementing_and_immediate(void**) {
    std::vector<uint32_t> buf(8, 0);
    hw::PushWriter w(buf.data(), buf.size());
    w.nonInc(nv::NVC86F_NON_STALL_INTERRUPT, 7u, 8u);
    w.immediate(nv::NVC8B5_OFFSET_IN_LOWER(0x1abcu));
    assert_int_equal(buf[0], header(3, 2, 0, 0x20));
    assert_int_equal(buf[1], 7);
    assert_int_equal(buf[2], 8);
    assert_int_equal(buf[3], (4u << 29) | (0x1abcu << 16) | (4u << 13) | (0x404u >> 2));
    assert_int_equal(w.remaining(), 4);
}

struct Launch {
    uint64_t src, dst, length;
    uint32_t flags;
};

// Decodes the copy engine methods written by hw::copy/fill.
std::vector<Launch> decode(const uint32_t* p, size_t n, uint32_t* remapValue = nullptr, uint32_t* remapComponents = nullptr) {
    std::vector<Launch> out;
    uint32_t regs[0x800 / 4] = {};
    for (size_t i = 0; i < n;) {
        uint32_t h = p[i++];
        uint32_t op = h >> 29, count = (h >> 16) & 0x1fff, method = (h & 0xfff) << 2;
        assert_int_equal((h >> 13) & 7, 4);  // copy subchannel
        assert_int_equal(op, 1);
        for (uint32_t k = 0; k < count; ++k) {
            uint32_t m = method + 4 * k;
            regs[m / 4] = p[i++];
            if (m == nv::NVC8B5_LAUNCH_DMA) {
                Launch l;
                l.src = (uint64_t(regs[nv::NVC8B5_OFFSET_IN_UPPER / 4]) << 32) | regs[nv::NVC8B5_OFFSET_IN_LOWER / 4];
                l.dst = (uint64_t(regs[nv::NVC8B5_OFFSET_OUT_UPPER / 4]) << 32) | regs[nv::NVC8B5_OFFSET_OUT_LOWER / 4];
                l.length = regs[nv::NVC8B5_LINE_LENGTH_IN / 4];
                l.flags = regs[m / 4];
                out.push_back(l);
            }
        }
    }
    if (remapValue) *remapValue = regs[nv::NVC8B5_SET_REMAP_CONST_B / 4];
    if (remapComponents) *remapComponents = regs[nv::NVC8B5_SET_REMAP_COMPONENTS / 4];
    return out;
}

void test_copy_splits_large_copies(void**) {
    const uint64_t bytes = (5ull << 30) + 77;  // 2 GiB + 2 GiB + 1 GiB + 77
    std::vector<uint32_t> buf(hw::copyDwords(bytes));
    hw::PushWriter w(buf.data(), buf.size());
    hw::copy(w, 0x7f0000001003ull, 0x1000000005ull, bytes);
    assert_int_equal(w.dwords(), buf.size());
    auto launches = decode(buf.data(), w.dwords());
    assert_int_equal(launches.size(), 3);
    uint64_t total = 0;
    for (size_t i = 0; i < launches.size(); ++i) {
        assert_int_equal(launches[i].src, 0x1000000005ull + total);
        assert_int_equal(launches[i].dst, 0x7f0000001003ull + total);
        total += launches[i].length;
        // Only the first piece waits for earlier work.
        uint32_t transfer = launches[i].flags & 3;
        assert_int_equal(transfer, i == 0 ? 2u : 1u);  // NON_PIPELINED then PIPELINED
        assert_int_equal((launches[i].flags >> 10) & 1, 0);  // no remap
    }
    assert_int_equal(total, bytes);
}

void test_fill_uses_remap_with_element_size(void**) {
    const struct {
        uint32_t size, value, sizeField;
    } cases[] = {{1, 0xab, 0}, {2, 0xbeef, 1}, {4, 0xdeadbeef, 3}};
    for (const auto& c : cases) {
        const uint64_t count = 1001;
        std::vector<uint32_t> buf(hw::fillDwords(count * c.size, c.size));
        hw::PushWriter w(buf.data(), buf.size());
        hw::fill(w, 0x1000000000ull + c.size, c.value, c.size, count);
        uint32_t value = 0, components = 0;
        auto launches = decode(buf.data(), w.dwords(), &value, &components);
        assert_int_equal(launches.size(), 1);
        assert_int_equal(launches[0].dst, 0x1000000000ull + c.size);
        assert_int_equal(launches[0].length, count);  // elements, not bytes
        assert_int_equal((launches[0].flags >> 10) & 1, 1);  // remap on
        assert_int_equal(value, c.value);
        assert_int_equal(components & 7, 5);                  // DST_X = CONST_B
        assert_int_equal((components >> 16) & 3, c.sizeField);  // COMPONENT_SIZE
    }
}

// The words every encoder of the hardware layer writes, recorded from the
// encoders before methods were typed (untyped PushWriter::inc(Subchannel,
// method, {words})): the typed writer must produce them bit for bit.
void expectWords(const char* what, const std::vector<uint32_t>& buf, size_t n, std::initializer_list<uint32_t> expected) {
    if (n != expected.size()) fail_msg("%s: %zu words written, expected %zu", what, n, expected.size());
    size_t i = 0;
    for (uint32_t e : expected) {
        if (buf[i] != e) fail_msg("%s: word %zu is 0x%08x, expected 0x%08x", what, i, buf[i], e);
        ++i;
    }
}

void test_encodings_unchanged(void**) {
    {
        std::vector<uint32_t> b(64);
        hw::PushWriter w(b.data(), b.size());
        hw::copy(w, 0x7f0000001003ull, 0x1000000005ull, (2ull << 30) + 77);
        assert_int_equal(w.dwords(), hw::copyDwords((2ull << 30) + 77));
        expectWords("copy", b, w.dwords(),
                    {0x20048100, 0x00000010, 0x00000005, 0x00007f00, 0x00001003, 0x20018106, 0x80000000, 0x200180c0,
                     0x04000182, 0x20048100, 0x00000010, 0x80000005, 0x00007f00, 0x80001003, 0x20018106, 0x0000004d,
                     0x200180c0, 0x04000181});
    }
    const std::initializer_list<uint32_t> fills[] = {
        {0x200281c1, 0x000000de, 0x00000005, 0x20028102, 0x00000010, 0x00000001, 0x20018106, 0x80000000, 0x200180c0,
         0x04000582, 0x20028102, 0x00000010, 0x80000001, 0x20018106, 0x40000005, 0x200180c0, 0x04000581},
        {0x200281c1, 0x0000dead, 0x00010005, 0x20028102, 0x00000010, 0x00000002, 0x20018106, 0x40000000, 0x200180c0,
         0x04000582, 0x20028102, 0x00000010, 0x80000002, 0x20018106, 0x20000005, 0x200180c0, 0x04000581},
        {0x200281c1, 0xdeadbeef, 0x00030005, 0x20028102, 0x00000010, 0x00000004, 0x20018106, 0x20000000, 0x200180c0,
         0x04000582, 0x20028102, 0x00000010, 0x80000004, 0x20018106, 0x10000005, 0x200180c0, 0x04000581},
    };
    const uint32_t sizes[] = {1, 2, 4};
    for (int i = 0; i < 3; ++i) {
        const uint32_t sz = sizes[i];
        const uint64_t count = (3ull << 30) / sz + 5;
        std::vector<uint32_t> b(64);
        hw::PushWriter w(b.data(), b.size());
        hw::fill(w, 0x1000000000ull + sz, 0xdeadbeefu >> (32 - 8 * sz), sz, count);
        assert_int_equal(w.dwords(), hw::fillDwords(count * sz, sz));
        expectWords("fill", b, w.dwords(), fills[i]);
    }
    {
        std::vector<uint32_t> b(64);
        hw::PushWriter w(b.data(), b.size());
        hw::Launch::push(w, 0x2345678900ull);  // QMD addresses are below 2^40
        assert_int_equal(w.dwords(), hw::Launch::kPushDwords);
        expectWords("launch", b, w.dwords(), {0x200120ad, 0x23456789, 0x200120b0, 0x00000009});
    }
    {
        std::vector<uint32_t> b(64);
        hw::PushWriter w(b.data(), b.size());
        hw::invalidateShaderCaches(w);
        assert_int_equal(w.dwords(), hw::kInvalidateCachesDwords);
        expectWords("invalidate", b, w.dwords(), {0x200125a6, 0x00001011});
    }
    {
        std::vector<uint32_t> b(64);
        hw::PushWriter w(b.data(), b.size());
        hw::setLocalMemory(w, 0x98765432100ull, 0x123456789ull);
        assert_int_equal(w.dwords(), hw::kLocalMemoryDwords);
        expectWords("local memory", b, w.dwords(),
                    {0x200221e4, 0x00000987, 0x65432100, 0x200320b9, 0x00000001, 0x23456789, 0x000000ff});
    }
}

// The budgets callers reserve (copyDwords, fillDwords) are exactly what
// copy() and fill() write, at every piece boundary (2 GiB pieces): a writer
// given just the budget never overruns it (the checked build would stop).
void test_budgets_match_what_is_written(void**) {
    const uint64_t piece = 1ull << 31;
    for (uint64_t bytes : std::initializer_list<uint64_t>{1, 77, piece - 1, piece, piece + 1, 2 * piece, (5ull << 30) + 77}) {
        std::vector<uint32_t> b(hw::copyDwords(bytes));
        hw::PushWriter w(b.data(), b.size());
        hw::copy(w, 0x200000000ull, 0x100000000ull, bytes);
        if (w.dwords() != b.size()) fail_msg("copy of %llu bytes: %zu dwords, budget %zu", (unsigned long long)bytes, w.dwords(), b.size());
    }
    for (uint32_t size : {1u, 2u, 4u}) {
        const uint64_t perPiece = piece / size;
        for (uint64_t count : std::initializer_list<uint64_t>{1, perPiece - 1, perPiece, perPiece + 1, 3 * perPiece + 5}) {
            std::vector<uint32_t> b(hw::fillDwords(count * size, size));
            hw::PushWriter w(b.data(), b.size());
            hw::fill(w, 0x100000000ull, 0x5au, size, count);
            if (w.dwords() != b.size())
                fail_msg("fill of %llu elements of %u bytes: %zu dwords, budget %zu", (unsigned long long)count, size,
                         w.dwords(), b.size());
        }
    }
}

// Reads bits hi:lo of a little-endian QMD image (independent of Qmd::get).
uint64_t bits(const std::vector<uint8_t>& q, uint32_t hi, uint32_t lo) {
    uint64_t v = 0;
    for (uint32_t b = hi + 1; b-- > lo;) v = (v << 1) | ((q[b / 8] >> (b % 8)) & 1);
    return v;
}

// One launch written for each QMD version, read back at the bit positions
// NVIDIA's class headers give (clcbc0qmd.h for V04, clc6c0qmd.h for V03).
void test_qmd_versions_place_fields(void**) {
    hw::KernelDescriptor k;
    k.programVa = 0x1234567800ull;
    k.programBytes = 0x1200;
    k.registers = 40;
    k.sharedWindowBytes = 1024 + 2048;
    k.paramBase = 0x210;
    k.cbuf0Bytes = 0x210 + 24;
    k.banks.push_back({3, 0x1000a00000ull, 200});
    const hw::LaunchGeometry g{{70000, 3, 5}, {128, 2, 4}, 4096};
    for (const hw::QmdLayout* layout : {&hw::kQmdV04, &hw::kQmdV03}) {
        hw::ComputeState s;
        s.qmd = layout;
        s.localBytesPerThread = 0x260;
        s.smVersion = layout == &hw::kQmdV04 ? 0x90 : 0x86;
        s.maxSmSharedKiB = layout == &hw::kQmdV04 ? 228 : 100;
        std::vector<uint8_t> slot(hw::Launch::dataBytes(k, s), 0xee);
        hw::Launch::Image image;
        const uint64_t slotVa = 0x1000200000ull;
        // The parameters (24 bytes of a fixed pattern) land right after the driver area.
        uint8_t params[24];
        for (size_t i = 0; i < sizeof params; ++i) params[i] = static_cast<uint8_t>(0x3b + 29 * i);
        const uint64_t qmdVa = hw::Launch::write(image, {slot.data(), slotVa}, hw::Launch::makeTemplate(k, s), k, g, s,
                                                 [&](uint8_t* p) { memcpy(p, params, sizeof params); });
        assert_memory_equal(slot.data() + 0x210, params, sizeof params);
        // The driver area's bytes no field uses are zero (written once).
        for (size_t i = 0x1a8; i < 0x210; ++i) assert_int_equal(slot[i], 0);
        assert_int_equal(qmdVa % 256, 0);
        std::vector<uint8_t> q(slot.begin() + static_cast<long>(qmdVa - slotVa), slot.end());
        assert_int_equal(q.size(), layout->bytes);
        if (layout == &hw::kQmdV04) {
            assert_int_equal(bits(q, 583, 580), 4);             // QMD_MAJOR_VERSION
            assert_int_equal(bits(q, 25, 23), 2);               // QMD_TYPE GRID_CTA
            assert_int_equal(bits(q, 1055, 1024), 70000);       // GRID_WIDTH
            assert_int_equal(bits(q, 1103, 1088), 5);           // GRID_DEPTH
            assert_int_equal(bits(q, 1183, 1168), 2);           // CTA_THREAD_DIMENSION1
            assert_int_equal(bits(q, 1208, 1200), 40);          // REGISTER_COUNT
            assert_int_equal(bits(q, 1247, 1216), 0x34567800);  // PROGRAM_ADDRESS_LOWER
            assert_int_equal(bits(q, 1567, 1536), slotVa >> 6); // CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0)
            assert_int_equal(bits(q, 416 + 3 * 4, 416 + 3 * 4), 1);  // CONSTANT_BUFFER_VALID(3)
            assert_int_equal(bits(q, 1567 + 3 * 64, 1536 + 3 * 64), 0x1000a00000ull >> 6);
            assert_int_equal(bits(q, 601, 584), 1024 + 2048 + 4096);  // SHARED_MEMORY_SIZE
            assert_int_equal(bits(q, 567, 544), 0x260);         // SHADER_LOCAL_MEMORY_HIGH_SIZE
            assert_int_equal(bits(q, 543, 536), 0x90);          // SASS_VERSION
        } else {
            assert_int_equal(bits(q, 583, 580), 3);             // QMD_MAJOR_VERSION
            assert_int_equal(bits(q, 134, 134), 1);             // SM_GLOBAL_CACHING_ENABLE
            assert_int_equal(bits(q, 415, 384), 70000);         // CTA_RASTER_WIDTH
            assert_int_equal(bits(q, 463, 448), 5);             // CTA_RASTER_DEPTH
            assert_int_equal(bits(q, 623, 608), 2);             // CTA_THREAD_DIMENSION1
            assert_int_equal(bits(q, 656, 648), 40);            // REGISTER_COUNT_V
            assert_int_equal(bits(q, 1567, 1536), 0x34567800);  // PROGRAM_ADDRESS_LOWER
            assert_int_equal(bits(q, 1055, 1024), slotVa & 0xffffffffu);  // CONSTANT_BUFFER_ADDR_LOWER(0)
            assert_int_equal(bits(q, 640 + 3, 640 + 3), 1);     // CONSTANT_BUFFER_VALID(3)
            assert_int_equal(bits(q, 1055 + 3 * 64, 1024 + 3 * 64), 0x00a00000);
            assert_int_equal(bits(q, 1072 + 3 * 64, 1056 + 3 * 64), 0x10);
            assert_int_equal(bits(q, 561, 544), 1024 + 2048 + 4096);  // SHARED_MEMORY_SIZE
            assert_int_equal(bits(q, 1623, 1600), 0x260);       // SHADER_LOCAL_MEMORY_HIGH_SIZE
            assert_int_equal(bits(q, 1663, 1656), 0x86);        // SASS_VERSION
            assert_int_equal(bits(q, 574, 569), 100 / 4 + 1);   // MAX_SM_CONFIG_SHARED_MEM_SIZE
        }
    }
}

// Reservations of random sizes against a GPU that completes work only when
// waited for, or now and then on its own: a range handed out never overlaps
// one still in flight. (A wrap used to check only the oldest use, which can
// sit in the skipped tail while newer ones occupy the start.)
// A launch image kept between launches (one per thread in the library)
// writes the bytes a fresh one writes, whatever it was last built for: the
// same kernel and geometry again (only the per-launch fields change), a
// cooperative launch, another geometry, cluster or local-memory size,
// another kernel, an sm_8x driver area the parameters overlap, a kernel
// without a serial (never reused) and a constant bank too large to stage.
void test_launch_image_reuse(void**) {
    std::mt19937 rng(0x1a0c4);
    hw::KernelDescriptor a;
    a.programVa = 0x1234567800ull;
    a.programBytes = 0x1200;
    a.registers = 40;
    a.sharedWindowBytes = 1024 + 2048;
    a.paramBase = 0x210;
    a.cbuf0Bytes = 0x210 + 28;
    a.banks.push_back({3, 0x1000a00000ull, 200});
    a.userConstantsVa = 0x1000a00000ull;
    a.serial = 11;
    hw::KernelDescriptor b = a;
    b.programVa = 0x1234599900ull;
    b.cbuf0Bytes = 0x210 + 300;
    b.serial = 12;
    hw::KernelDescriptor old = a;  // sm_8x: parameters at 0x160, inside the sm_90 driver area
    old.paramBase = 0x160;
    old.cbuf0Bytes = 0x160 + 76;
    old.serial = 13;
    hw::KernelDescriptor unnumbered = a;
    unnumbered.serial = 0;
    hw::KernelDescriptor large = a;  // constant bank 0 over the staged 4 KiB
    large.cbuf0Bytes = 0x210 + 5000;
    large.serial = 14;
    hw::ComputeState s90;
    s90.sharedWindow = 0x7f0000000000ull;
    s90.localWindow = 0x7e0000000000ull;
    s90.smCount = 132;
    s90.localBytesPerThread = 0x260;
    hw::ComputeState s86 = s90;
    s86.qmd = &hw::kQmdV03;
    s86.smVersion = 0x86;
    s86.maxSmSharedKiB = 100;
    hw::LaunchGeometry g1{{70000, 3, 5}, {128, 2, 4}, 4096};
    hw::LaunchGeometry g2{{9, 1, 1}, {96, 1, 1}, 5003};
    hw::LaunchGeometry coop = g2;
    coop.cooperative = true;
    hw::LaunchGeometry clustered{{8, 6, 1}, {64, 1, 1}, 0};
    clustered.cluster[0] = 2;
    clustered.cluster[1] = 3;
    clustered.cluster[2] = 1;
    hw::LaunchGeometry moreShared = g1;
    moreShared.dynamicSharedBytes = 4100;
    hw::LaunchGeometry packed = g1;
    packed.blocksPerSm = 4;
    struct Case {
        const hw::KernelDescriptor* k;
        const hw::LaunchGeometry* g;
        const hw::ComputeState* s;
        uint32_t local;
    } cases[] = {{&a, &g1, &s90, 0x260},  {&a, &g1, &s90, 0x260},  {&a, &moreShared, &s90, 0x260},
                 {&a, &coop, &s90, 0x260}, {&a, &coop, &s90, 0x260}, {&a, &g2, &s90, 0x260},
                 {&a, &g1, &s90, 0x260},  {&a, &g1, &s90, 0x4a0},  {&a, &packed, &s90, 0x4a0},
                 {&a, &clustered, &s90, 0x4a0}, {&b, &packed, &s90, 0x4a0}, {&b, &packed, &s90, 0x4a0},
                 {&old, &g2, &s86, 0x260},
                 {&old, &g2, &s86, 0x260}, {&a, &g2, &s90, 0x260}, {&unnumbered, &g2, &s90, 0x260},
                 {&a, &g2, &s90, 0x260},  {&large, &g1, &s90, 0x260}, {&large, &g1, &s90, 0x260},
                 {&a, &g1, &s90, 0x260}};
    hw::Launch::Image kept;
    for (const Case& c : cases) {
        hw::ComputeState s = *c.s;
        s.localBytesPerThread = c.local;
        hw::LaunchGeometry g = *c.g;
        g.gridId = rng();
        const hw::KernelDescriptor& k = *c.k;
        const hw::Qmd tmpl = hw::Launch::makeTemplate(k, s);
        const size_t bytes = hw::Launch::dataBytes(k, s, g);
        const uint64_t slotVa = 0x1000200000ull + 0x100ull * (rng() % 4096);
        const uint64_t timelineVa = 0x7f1000000000ull + 8 * (rng() % 512);
        const uint64_t timelineValue = (static_cast<uint64_t>(rng()) << 20) | rng();
        std::vector<uint8_t> params(k.cbuf0Bytes - k.paramBase);
        for (uint8_t& p : params) p = static_cast<uint8_t>(rng());
        auto fill = [&](uint8_t* out) { memcpy(out, params.data(), params.size()); };
        std::vector<uint8_t> viaKept(bytes, 0xee), viaFresh(bytes, 0xee);
        const uint64_t qmdKept = hw::Launch::write(kept, {viaKept.data(), slotVa, timelineVa, timelineValue}, tmpl, k, g,
                                                   s, fill);
        hw::Launch::Image fresh;
        const uint64_t qmdFresh = hw::Launch::write(fresh, {viaFresh.data(), slotVa, timelineVa, timelineValue}, tmpl,
                                                    k, g, s, fill);
        assert_int_equal(qmdKept, qmdFresh);
        assert_memory_equal(viaKept.data(), viaFresh.data(), bytes);
        assert_memory_equal(viaKept.data() + k.paramBase, params.data(), params.size());
    }
}

// Copying into write-combined memory gives memcpy's bytes, and nothing
// outside them: odd multiples of 64 bytes, to a line-aligned place and an
// unaligned one.
void test_write_combined_copy(void**) {
    std::mt19937 rng(0x3c0b);
    for (size_t lines : {1u, 3u, 7u, 21u, 65u}) {
        const size_t bytes = lines * 64;
        alignas(64) static uint8_t src[65 * 64 + 64], expected[65 * 64 + 256], got[65 * 64 + 256];
        for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<uint8_t>(rng());
        for (size_t at : {64u, 80u}) {  // a line boundary, and 16 bytes past one
            memset(expected, 0xa5, sizeof expected);
            memset(got, 0xa5, sizeof got);
            memcpy(expected + at, src, bytes);
            hw::copyToWriteCombined(got + at, src, bytes);
            assert_memory_equal(got, expected, sizeof got);
        }
    }
}

void test_ring_space_never_hands_out_busy_space(void**) {
    struct Busy {
        size_t begin, end;
        uint64_t value;
    };
    for (uint64_t seed : {1u, 2u, 3u}) {
        std::mt19937_64 rng(seed);
        const size_t capacity = 100;
        hw::RingSpace ring(capacity, 64);
        uint64_t completed = 0, next = 1;
        std::vector<Busy> busy;
        auto done = [&](uint64_t v) { return v <= completed; };
        auto wait = [&](uint64_t v) {
            if (v > completed) completed = v;
            return Status(kOk);
        };
        // The sequence from the bug report first, then random sizes.
        const size_t fixed[] = {35, 35, 25, 30, 35, 40};
        for (int i = 0; i < 2000; ++i) {
            const size_t n = i < 6 ? fixed[i] : 1 + rng() % (capacity / 2);
            if (i >= 6 && rng() % 8 == 0) {  // the GPU catches up, partly
                const uint64_t reached = next - 1 - std::min<uint64_t>(next - 1, rng() % 3);
                if (reached > completed) completed = reached;
            }
            Result<size_t> at = ring.reserve(n, 1, done, wait);
            assert_true(at.ok());
            assert_true(*at + n <= capacity);
            for (const Busy& b : busy)
                if (!done(b.value) && b.begin < *at + n && *at < b.end)
                    fail_msg("seed %llu step %d: [%zu, %zu) handed out while [%zu, %zu) (value %llu) is in flight",
                             static_cast<unsigned long long>(seed), i, *at, *at + n, b.begin, b.end,
                             static_cast<unsigned long long>(b.value));
            ring.commit(*at, n, next);
            busy.push_back({*at, *at + n, next});
            ++next;
        }
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_incrementing_header),
        cmocka_unit_test(test_non_incrementing_and_immediate),
        cmocka_unit_test(test_encodings_unchanged),
        cmocka_unit_test(test_budgets_match_what_is_written),
        cmocka_unit_test(test_copy_splits_large_copies),
        cmocka_unit_test(test_fill_uses_remap_with_element_size),
        cmocka_unit_test(test_qmd_versions_place_fields),
        cmocka_unit_test(test_launch_image_reuse),
        cmocka_unit_test(test_write_combined_copy),
        cmocka_unit_test(test_ring_space_never_hands_out_busy_space),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
