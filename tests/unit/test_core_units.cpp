// Unit tests of pieces of the core and hardware layers that need no driver:
// the address map, the GPU VA reservation and the parallel CPU copy.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <random>
#include <vector>

#include "core/memory.h"
#include "core/parallel_copy.h"
#include "hw/va_space.h"

// cmocka last: it declares its functions without extern "C".
#include <setjmp.h>
#include <stdarg.h>
extern "C" {
#include <cmocka.h>
}

using namespace nvl;

namespace {

void test_address_map_finds_containing_allocation(void**) {
    core::AddressMap map;
    auto* ctx = reinterpret_cast<core::Context*>(0x1);
    map.insert({0x1000, 100, core::MemoryKind::Device, ctx, 0});
    map.insert({0x2000, 1, core::MemoryKind::HostAllocated, ctx, 3});
    assert_true(map.find(0x1000).has_value());
    assert_int_equal(map.find(0x1063)->base, 0x1000);  // last byte
    assert_false(map.find(0x1064).has_value());       // one past the end
    assert_false(map.find(0xfff).has_value());
    assert_int_equal(map.find(0x2000)->flags, 3);
    assert_true(map.overlaps(0x0ff0, 0x20));
    assert_false(map.overlaps(0x1064, 0x100));
    assert_true(map.overlaps(0x1fff, 2));
    auto removed = map.remove(0x1000);
    assert_true(removed.has_value());
    assert_false(map.find(0x1010).has_value());
    assert_false(map.remove(0x1000).has_value());
    auto rest = map.removeContext(ctx);
    assert_int_equal(rest.size(), 1);
    assert_false(map.find(0x2000).has_value());
}

void test_allocation_contains_checks_overflow(void**) {
    core::AllocationInfo a{0x1000, 0x100, core::MemoryKind::Device, nullptr, 0};
    assert_true(a.contains(0x1000, 0x100));
    assert_true(a.contains(0x10ff, 1));
    assert_false(a.contains(0x10ff, 2));
    assert_false(a.contains(0x1001, ~0ull));  // would wrap around
    assert_true(a.contains(0x1100, 0));       // zero bytes at the end
    assert_false(a.contains(0xfff, 1));
}

void test_va_space_allocates_aligned_and_coalesces(void**) {
    auto vs = hw::VaSpace::reserve(0x3000000000ull, 64ull << 30);
    assert_true(vs.ok());
    hw::VaSpace& v = **vs;
    assert_true(v.base() < (1ull << 40));
    assert_true(v.sharedWindow() % (1ull << 32) == 0);
    assert_true(v.localWindow() % (1ull << 32) == 0);
    auto a = v.alloc(4096, 4096);
    auto b = v.alloc(2 << 20, 2 << 20);
    auto c = v.alloc(3 << 20, 2 << 20);
    assert_true(a.ok() && b.ok() && c.ok());
    assert_int_equal(*b % (2 << 20), 0);
    assert_int_equal(*c % (2 << 20), 0);
    assert_true(*a + 4096 <= *b || *b + (2 << 20) <= *a);
    assert_true(v.contains(*c, 3 << 20));
    // Nothing handed out overlaps the compute windows.
    assert_true(*c + (3 << 20) <= v.sharedWindow());
    v.free(*b, 2 << 20);
    v.free(*a, 4096);
    v.free(*c, 3 << 20);
    // After coalescing, one allocation as large as the whole CPU-visible range fits again.
    auto all = v.alloc(v.size(), 4096);
    assert_true(all.ok());
    assert_int_equal(*all, v.base());
    assert_false(v.alloc(4096, 4096).ok());  // exhausted: CUDA_ERROR_OUT_OF_MEMORY, no crash
    // GPU-only memory: from the same range, or (AddressSanitizer builds) from
    // a range of its own below 2^40, clear of the windows either way.
    auto g = v.alloc(2 << 20, 2 << 20, hw::VaSpace::Use::GpuOnly);
    assert_int_equal(g.ok(), v.separateGpuOnly());
    if (g.ok()) {
        assert_true(*g + (2 << 20) <= v.sharedWindow() && *g + (2 << 20) <= (1ull << 40));
        assert_true(v.contains(*g, 2 << 20));
        v.free(*g, 2 << 20);
    }
    v.free(*all, v.size());
    assert_true(v.alloc(4096, 4096).ok());
}

void test_parallel_memcpy_odd_sizes(void**) {
    std::mt19937_64 rng(0x5eed);
    const size_t sizes[] = {0, 1, 63, 4097, (1u << 20) - 1, (1u << 20) + 3, (3u << 20) + 1, (9u << 20) + 13, (8u << 20) + 7};
    for (size_t n : sizes) {
        std::vector<uint8_t> src(n + 7), dst(n + 9, 0xcc);
        for (auto& b : src) b = static_cast<uint8_t>(rng());
        core::parallelMemcpy(dst.data() + 5, src.data() + 3, n);
        assert_memory_equal(dst.data() + 5, src.data() + 3, n);
        for (size_t i = 0; i < 5; ++i) assert_int_equal(dst[i], 0xcc);
        for (size_t i = n + 5; i < dst.size(); ++i) assert_int_equal(dst[i], 0xcc);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_address_map_finds_containing_allocation),
        cmocka_unit_test(test_allocation_contains_checks_overflow),
        cmocka_unit_test(test_va_space_allocates_aligned_and_coalesces),
        cmocka_unit_test(test_parallel_memcpy_odd_sizes),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
