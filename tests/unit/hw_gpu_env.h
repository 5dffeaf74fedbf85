// The hw layer's driver and its first GPU, opened once per test group, for
// the unit tests that drive channels and channel groups directly
// (test_channel_faults.cpp, test_hang_report.cpp):
//   cmocka_run_group_tests(tests, hwtest::setupDriver, hwtest::teardownDriver)
// then hwtest::E.gpu in the tests. Include after support/test_support.h.
#pragma once

#include <memory>
#include <utility>

#include "hw/driver.h"
#include "hw/gpu.h"

namespace hwtest {

struct Env {
    std::unique_ptr<nvl::hw::Driver> driver;
    nvl::hw::Gpu* gpu = nullptr;
};
inline Env E;

// Group setup: the driver opened and GPU 0 opened; -1 (the group fails) otherwise.
inline int setupDriver(void**) {
    auto d = nvl::hw::Driver::open();
    if (!d) return -1;
    E.driver = std::move(*d);
    if (E.driver->gpuCount() < 1) return -1;
    E.gpu = &E.driver->gpu(0);
    return E.gpu->open().ok() ? 0 : -1;
}

inline int teardownDriver(void**) {
    E.driver.reset();
    return 0;
}

}  // namespace hwtest
