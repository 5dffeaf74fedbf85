// The packed format of the embedded images (lib/loader/unpack.h): what
// tools/pack_images packs unpacks to the same bytes; corrupt, truncated or
// mis-sized streams are refused without reading or writing outside the
// buffers (run under SAN=-fsanitize=address to check the latter: the output
// buffers here are exactly the size asked, so a byte past them is caught);
// the images embedded in the library unpack.
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "../../tools/pack_images.h"
#include "loader/builtin_image.h"
#include "loader/devrt_image.h"
#include "loader/elf_file.h"
#include "loader/unpack.h"
#include "support/test_support.h"

using namespace nvl;
using namespace nvl::loader;

namespace {

std::vector<uint8_t> packed(const std::vector<uint8_t>& in) {
    uint8_t* out = nullptr;
    const size_t n = packImages(in.data(), in.size(), &out);
    std::vector<uint8_t> v(out, out + n);
    std::free(out);
    return v;
}

// Unpacks into a buffer of exactly 'size' bytes (its own allocation, so that
// ASan sees a write past it); the bytes when it worked.
bool tryUnpack(const std::vector<uint8_t>& p, size_t size, std::vector<uint8_t>* result = nullptr) {
    std::unique_ptr<uint8_t[]> out(new uint8_t[size > 0 ? size : 1]);
    const bool ok = unpack(Bytes(p.data(), p.size()), std::span<uint8_t>(out.get(), size));
    if (ok && result) result->assign(out.get(), out.get() + size);
    return ok;
}

void roundTrip(const std::vector<uint8_t>& in) {
    const std::vector<uint8_t> p = packed(in);
    std::vector<uint8_t> back;
    assert_true(tryUnpack(p, in.size(), &back));
    assert_true(back == in);
    // The size is part of the contract: one byte more or less is refused.
    if (!in.empty()) assert_false(tryUnpack(p, in.size() - 1));
    assert_false(tryUnpack(p, in.size() + 1));
}

// Bytes that look like a cubin's: runs of zeros (ELF padding), repeats of
// earlier stretches at odd distances, and random bytes between.
std::vector<uint8_t> structured(std::mt19937& rng, size_t size) {
    std::vector<uint8_t> v;
    v.reserve(size);
    while (v.size() < size) {
        const size_t n = std::min<size_t>(size - v.size(), 1 + rng() % 700);
        switch (rng() % 3) {
        case 0: v.insert(v.end(), n, 0); break;
        case 1:
            if (!v.empty()) {
                const size_t from = rng() % v.size();
                for (size_t i = 0; i < n; i++) v.push_back(v[from + i]);  // may overlap what it appends
                break;
            }
            [[fallthrough]];
        default:
            for (size_t i = 0; i < n; i++) v.push_back(static_cast<uint8_t>(rng()));
        }
    }
    return v;
}

void test_round_trip_sizes(void**) {
    std::mt19937 rng(1101);
    for (size_t size : {0ul, 1ul, 2ul, 3ul, 4ul, 5ul, 127ul, 128ul, 129ul, 130ul, 131ul, 1023ul, 4097ul, 65537ul}) {
        std::vector<uint8_t> random(size);
        for (uint8_t& b : random) b = static_cast<uint8_t>(rng());
        roundTrip(random);
        roundTrip(structured(rng, size));
        roundTrip(std::vector<uint8_t>(size, 0xa7));  // one long copy at distance 1
    }
    for (int i = 0; i < 40; i++) roundTrip(structured(rng, 1 + rng() % 50000));
}

void test_incompressible(void**) {
    std::mt19937 rng(1103);
    std::vector<uint8_t> random(100003);
    for (uint8_t& b : random) b = static_cast<uint8_t>(rng());
    const std::vector<uint8_t> p = packed(random);
    // Literal runs cost a few bytes of framing, nothing more.
    assert_true(p.size() <= random.size() + random.size() / 64 + 8);
    roundTrip(random);
}

void test_packs_repeats(void**) {
    std::mt19937 rng(1109);
    const std::vector<uint8_t> in = structured(rng, 200001);
    assert_true(packed(in).size() < in.size() / 2);
}

void test_truncated_refused(void**) {
    std::mt19937 rng(1117);
    for (int i = 0; i < 20; i++) {
        const std::vector<uint8_t> in = structured(rng, 1 + rng() % 9000);
        const std::vector<uint8_t> p = packed(in);
        for (size_t cut = 0; cut < p.size(); cut += 1 + rng() % 7) {
            const std::vector<uint8_t> t(p.begin(), p.begin() + static_cast<long>(cut));
            assert_false(tryUnpack(t, in.size()));
        }
        // Trailing bytes after a full output are refused too.
        std::vector<uint8_t> longer = p;
        longer.push_back(0);
        longer.push_back(static_cast<uint8_t>(rng()));
        assert_false(tryUnpack(longer, in.size()));
    }
}

void test_corrupt_refused_or_contained(void**) {
    std::mt19937 rng(1123);
    const std::vector<uint8_t> in = structured(rng, 12345);
    const std::vector<uint8_t> p = packed(in);
    size_t refused = 0;
    for (int i = 0; i < 3000; i++) {
        std::vector<uint8_t> t = p;
        for (int k = 0, flips = 1 + static_cast<int>(rng() % 4); k < flips; k++)
            t[rng() % t.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        // Either refused or exactly the asked size: ASan checks the rest.
        if (!tryUnpack(t, in.size())) refused++;
    }
    assert_true(refused > 0);
    // Random streams of every length up to 64 bytes, into small outputs.
    for (int i = 0; i < 20000; i++) {
        std::vector<uint8_t> t(rng() % 65);
        for (uint8_t& b : t) b = static_cast<uint8_t>(rng());
        tryUnpack(t, rng() % 300);
    }
}

void test_hand_made_streams(void**) {
    std::vector<uint8_t> out;
    // Literals "ab", then a copy of 5 at distance 2: "abababa".
    assert_true(tryUnpack({0x01, 'a', 'b', 0x82, 0x02}, 7, &out));
    assert_true(out == std::vector<uint8_t>({'a', 'b', 'a', 'b', 'a', 'b', 'a'}));
    // A copy before any output, at distance 0, or from before the start.
    assert_false(tryUnpack({0x80, 0x01}, 3));
    assert_false(tryUnpack({0x00, 'x', 0x80, 0x00}, 4));
    assert_false(tryUnpack({0x00, 'x', 0x80, 0x02}, 4));
    // A length varint longer than 5 bytes, and one cut short.
    assert_false(tryUnpack({0x7f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 200));
    assert_false(tryUnpack({0xff, 0x80}, 200));
    // A copy past the end of the output; literals past it.
    assert_false(tryUnpack({0x00, 'x', 0x85, 0x01}, 5));
    assert_false(tryUnpack({0x02, 'x', 'y', 'z'}, 2));
    // An empty stream is exactly an empty output.
    assert_true(tryUnpack({}, 0));
    assert_false(tryUnpack({}, 1));
}

// The images the library embeds unpack to ELF files (the built-in kernels'
// for every architecture nvlite drives, the device runtime's per family).
void test_embedded_images(void**) {
    for (uint32_t sm : {80u, 86u, 87u, 89u, 90u}) {
        const Bytes cubin = builtin::embeddedCubin(sm);
        assert_true(cubin.size() > 64);
        assert_true(ElfFile::open(cubin).ok());
    }
    for (uint32_t sm : {80u, 86u, 89u, 90u}) {
        const Bytes cubin = devrt::embeddedCubin(sm);
        assert_true(cubin.size() > 64);
        assert_true(ElfFile::open(cubin).ok());
        assert_true(cubin.data() == devrt::embeddedCubin(sm).data());  // unpacked once, kept
    }
    assert_true(builtin::embeddedCubin(75).empty());
    assert_true(devrt::embeddedCubin(100).empty());
    assert_true(builtin::embeddedCubin(86).data() == builtin::embeddedCubin(86).data());
    assert_true(builtin::embeddedCubin(86).data() != builtin::embeddedCubin(80).data());
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_sizes),
        cmocka_unit_test(test_incompressible),
        cmocka_unit_test(test_packs_repeats),
        cmocka_unit_test(test_truncated_refused),
        cmocka_unit_test(test_corrupt_refused_or_contained),
        cmocka_unit_test(test_hand_made_streams),
        cmocka_unit_test(test_embedded_images),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
