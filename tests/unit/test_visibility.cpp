// core/visibility: libcuda's device order (CUDA_DEVICE_ORDER) and
// CUDA_VISIBLE_DEVICES, on made-up GPUs (the simulator's are all alike, so
// FASTEST_FIRST against PCI_BUS_ID is checked here).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "core/visibility.h"

using nvl::core::GpuIdentity;
using nvl::core::uuidString;
using nvl::core::visibleOrder;

namespace {

// Four GPUs in /dev/nvidia order: buses 0x40, 0x10, 0x30, 0x20; GPU 2 is the
// slowest, GPU 3 the fastest, 0 and 1 tie.
std::vector<GpuIdentity> fourGpus() {
    std::vector<GpuIdentity> g(4);
    const uint32_t buses[] = {0x40, 0x10, 0x30, 0x20};
    const uint64_t speeds[] = {100, 100, 50, 200};
    for (size_t i = 0; i < g.size(); ++i) {
        g[i].pciBus = buses[i];
        g[i].speed = speeds[i];
        for (size_t b = 0; b < 16; ++b) g[i].uuid[b] = static_cast<uint8_t>(0x10 * i + b);
    }
    return g;
}

void expectOrder(const std::vector<size_t>& got, std::vector<size_t> want) {
    assert_int_equal(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) assert_int_equal(got[i], want[i]);
}

void test_orders(void**) {
    auto g = fourGpus();
    expectOrder(visibleOrder(g, nullptr, nullptr), {3, 1, 0, 2});           // fastest first, ties by bus
    expectOrder(visibleOrder(g, "FASTEST_FIRST", nullptr), {3, 1, 0, 2});
    expectOrder(visibleOrder(g, "PCI_BUS_ID", nullptr), {1, 3, 2, 0});
    expectOrder(visibleOrder(g, "pci_bus_id", nullptr), {3, 1, 0, 2});      // not a value CUDA knows
    // Domains and functions count too.
    g[0].pciBus = 0x10;
    g[0].pciFunction = 1;
    expectOrder(visibleOrder(g, "PCI_BUS_ID", nullptr), {1, 0, 3, 2});
    g[0].pciDomain = 1;
    expectOrder(visibleOrder(g, "PCI_BUS_ID", nullptr), {1, 3, 2, 0});
}

void test_visible_lists(void**) {
    auto g = fourGpus();
    // Indices into the chosen order.
    expectOrder(visibleOrder(g, "PCI_BUS_ID", "2,0"), {2, 1});
    expectOrder(visibleOrder(g, nullptr, "2,0"), {0, 3});
    expectOrder(visibleOrder(g, nullptr, ""), {});
    expectOrder(visibleOrder(g, nullptr, "3,1,9,0"), {2, 1});   // ends at 9
    expectOrder(visibleOrder(g, nullptr, "1,1,0"), {1});        // a second mention ends it
    expectOrder(visibleOrder(g, nullptr, "1x,0"), {});
    expectOrder(visibleOrder(g, nullptr, "+1"), {});
    expectOrder(visibleOrder(g, nullptr, "0,,1"), {3});         // an empty entry ends it
    expectOrder(visibleOrder(g, nullptr, "\t0 ,  2"), {3, 0});
    expectOrder(visibleOrder(g, nullptr, "99999999999999999999"), {});
    // UUIDs, whole or a unique prefix, any case.
    const std::string u2 = uuidString(g[2].uuid);
    assert_string_equal(u2.c_str(), "GPU-20212223-2425-2627-2829-2a2b2c2d2e2f");
    expectOrder(visibleOrder(g, nullptr, u2.c_str()), {2});
    expectOrder(visibleOrder(g, nullptr, "gpu-2021"), {2});
    expectOrder(visibleOrder(g, nullptr, "GPU-2021,GPU-3031,0"), {2, 3});  // then index 0 is GPU 3 again: ends
    expectOrder(visibleOrder(g, nullptr, "GPU-"), {});
    expectOrder(visibleOrder(g, nullptr, "GPU-0"), {0});      // GPU 0: 00010203...
    expectOrder(visibleOrder(g, nullptr, "GPU-1"), {1});
    expectOrder(visibleOrder(g, nullptr, "GPU-2021-"), {});   // not a prefix of its text
    expectOrder(visibleOrder(g, nullptr, "MIG-20212223-2425-2627-2829-2a2b2c2d2e2f"), {});
    expectOrder(visibleOrder(g, nullptr, "1,MIG-GPU-2021/1/0,0"), {1});
    // Two GPUs with a common prefix: the prefix names neither.
    g[3].uuid[0] = 0x20;
    g[3].uuid[1] = 0x21;
    expectOrder(visibleOrder(g, nullptr, "GPU-2021"), {});
    expectOrder(visibleOrder(g, nullptr, "GPU-202122"), {2});
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_orders),
        cmocka_unit_test(test_visible_lists),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
