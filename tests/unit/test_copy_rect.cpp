// The copy engine's pitched work (hw::copy2D, hw::fill2D): the methods they
// write, decoded the way HOPPER_DMA_COPY_A reads them (open-gpu-doc
// clc8b5.h): one multi-line launch per up to 2^31 lines, pitches, line
// length and count where the engine takes them, remapping for fills.
#include <cstdint>
#include <vector>

#include "defs/copy_c8b5.h"
#include "hw/copy_engine.h"
#include "hw/push_buffer.h"
#include "support/test_support.h"

using namespace nvl;

namespace {

struct Launch {
    uint64_t src, dst;
    uint32_t pitchIn, pitchOut, length, lines, flags;
};

std::vector<Launch> decode(const uint32_t* p, size_t n, uint32_t* remapComponents = nullptr) {
    std::vector<Launch> out;
    uint32_t regs[0x800 / 4] = {};
    for (size_t i = 0; i < n;) {
        const uint32_t h = p[i++];
        const uint32_t op = h >> 29, count = (h >> 16) & 0x1fff, method = (h & 0xfff) << 2;
        assert_int_equal((h >> 13) & 7, 4);  // the copy subchannel
        assert_int_equal(op, 1);             // incrementing
        for (uint32_t k = 0; k < count; ++k) {
            const uint32_t m = method + 4 * k;
            regs[m / 4] = p[i++];
            if (m != nv::NVC8B5_LAUNCH_DMA) continue;
            Launch l;
            l.src = (uint64_t(regs[nv::NVC8B5_OFFSET_IN_UPPER / 4]) << 32) | regs[nv::NVC8B5_OFFSET_IN_LOWER / 4];
            l.dst = (uint64_t(regs[nv::NVC8B5_OFFSET_OUT_UPPER / 4]) << 32) | regs[nv::NVC8B5_OFFSET_OUT_LOWER / 4];
            l.pitchIn = regs[nv::NVC8B5_PITCH_IN / 4];
            l.pitchOut = regs[nv::NVC8B5_PITCH_OUT / 4];
            l.length = regs[nv::NVC8B5_LINE_LENGTH_IN / 4];
            l.lines = regs[nv::NVC8B5_LINE_COUNT / 4];
            l.flags = regs[m / 4];
            out.push_back(l);
        }
    }
    if (remapComponents) *remapComponents = regs[nv::NVC8B5_SET_REMAP_COMPONENTS / 4];
    return out;
}

bool multiLine(uint32_t flags) { return (flags >> 9) & 1; }
bool remap(uint32_t flags) { return (flags >> 10) & 1; }
uint32_t transfer(uint32_t flags) { return flags & 3; }

void test_copy2d_one_launch(void**) {
    std::vector<uint32_t> buf(hw::copy2DDwords(1000));
    hw::PushWriter w(buf.data(), buf.size());
    hw::copy2D(w, 0x7f0000001003ull, 8191, 0x1000000005ull, 4099, 4097, 1000);
    assert_int_equal(w.dwords(), buf.size());
    auto l = decode(buf.data(), w.dwords());
    assert_int_equal(l.size(), 1);
    assert_int_equal(l[0].src, 0x1000000005ull);
    assert_int_equal(l[0].dst, 0x7f0000001003ull);
    assert_int_equal(l[0].pitchIn, 4099);
    assert_int_equal(l[0].pitchOut, 8191);
    assert_int_equal(l[0].length, 4097);  // bytes
    assert_int_equal(l[0].lines, 1000);
    assert_true(multiLine(l[0].flags));
    assert_false(remap(l[0].flags));
    assert_int_equal(transfer(l[0].flags), 2);  // NON_PIPELINED: after earlier work
}

void test_copy2d_splits_line_counts(void**) {
    const uint64_t lines = (1ull << 32) + 5;  // two full launches and a rest
    std::vector<uint32_t> buf(hw::copy2DDwords(lines));
    hw::PushWriter w(buf.data(), buf.size());
    hw::copy2D(w, 0x100000, 3, 0x200000, 7, 2, lines);
    auto l = decode(buf.data(), w.dwords());
    assert_int_equal(l.size(), 3);
    uint64_t done = 0;
    for (size_t i = 0; i < l.size(); ++i) {
        assert_int_equal(l[i].src, 0x200000 + done * 7);
        assert_int_equal(l[i].dst, 0x100000 + done * 3);
        assert_true(multiLine(l[i].flags));
        assert_int_equal(transfer(l[i].flags), i == 0 ? 2u : 1u);
        done += l[i].lines;
    }
    assert_int_equal(done, lines);
}

void test_fill2d_remaps_constant(void**) {
    const struct {
        uint32_t size, sizeField;
    } cases[] = {{1, 0}, {2, 1}, {4, 3}};
    for (const auto& c : cases) {
        std::vector<uint32_t> buf(hw::fill2DDwords(65));
        hw::PushWriter w(buf.data(), buf.size());
        hw::fill2D(w, 0x1000000004ull, 4100, 0xdeadbeef, c.size, 1025, 65);
        assert_int_equal(w.dwords(), buf.size());
        uint32_t components = 0;
        auto l = decode(buf.data(), w.dwords(), &components);
        assert_int_equal(l.size(), 1);
        assert_int_equal(l[0].dst, 0x1000000004ull);
        assert_int_equal(l[0].pitchOut, 4100);
        assert_int_equal(l[0].length, 1025);  // elements
        assert_int_equal(l[0].lines, 65);
        assert_true(multiLine(l[0].flags));
        assert_true(remap(l[0].flags));
        assert_int_equal(components & 7, nv::NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_B);
        assert_int_equal((components >> 16) & 3, c.sizeField);
    }
}

// A 1-D copy after a 2-D one: the 1-D launch turns multi-line off, so the
// engine ignores the line count left behind.
void test_linear_after_pitched(void**) {
    std::vector<uint32_t> buf(hw::copy2DDwords(9) + hw::copyDwords(100));
    hw::PushWriter w(buf.data(), buf.size());
    hw::copy2D(w, 0x10000, 64, 0x20000, 64, 60, 9);
    hw::copy(w, 0x30000, 0x40000, 100);
    auto l = decode(buf.data(), w.dwords());
    assert_int_equal(l.size(), 2);
    assert_true(multiLine(l[0].flags));
    assert_false(multiLine(l[1].flags));
    assert_int_equal(l[1].length, 100);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy2d_one_launch),
        cmocka_unit_test(test_copy2d_splits_line_counts),
        cmocka_unit_test(test_fill2d_remaps_constant),
        cmocka_unit_test(test_linear_after_pitched),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
