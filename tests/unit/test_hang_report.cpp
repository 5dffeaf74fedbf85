// NVLITE_HANG_REPORT on the simulated driver: a wait on the GPU that lasts
// longer than the setting says, once, on stderr, where its channel stands
// and what the first unfinished submission acquires, naming the awaited
// channel of the same fault scope and its progress. The awaited channel is
// held back by an acquire of a host semaphore the test releases later, so
// the wait ends normally after the report.
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "defs/rm_classes.h"
#include "hw/channel.h"
#include "hw/channel_group.h"
#include "hw/copy_engine.h"
#include "hw/driver.h"
#include "hw/gpu.h"
#include "support/test_support.h"
#include "hw_gpu_env.h"

using namespace nvl;

namespace {

using hwtest::E;

// Runs 'body' with stderr going to a temporary file; returns what was written.
template <class Body>
std::string capturingStderr(Body&& body) {
    char path[] = "/tmp/nvlite-hang-report-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    fflush(stderr);
    const int saved = dup(2);
    assert_true(saved >= 0);
    dup2(fd, 2);
    body();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::string text;
    char buf[4096];
    lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    close(fd);
    return text;
}

// Copy channel A waits (on the GPU) for copy channel B, which waits for a
// host semaphore; the host waits for A. After the report, the host
// releases the semaphore and everything completes.
void test_stuck_wait_is_reported(void**) {
    hw::FaultScope scope;
    assert_false(E.gpu->info().asyncCopyEngines.empty());
    auto g = hw::ChannelGroup::create(*E.gpu, E.gpu->info().asyncCopyEngines.front());
    assert_true(g.ok());
    std::unique_ptr<hw::ChannelGroup> group = std::move(*g);
    auto a = group->addChannel(hw::EngineKind::Copy);
    auto b = group->addChannel(hw::EngineKind::Copy);
    assert_true(a.ok() && b.ok());
    assert_cu_ok(group->schedule().code());
    hw::Channel& chA = **a;
    hw::Channel& chB = **b;
    assert_true(chA.joinFaultScope(scope));
    assert_true(chB.joinFaultScope(scope));

    auto gate = E.gpu->allocHost(4096);
    assert_true(gate.ok());
    auto* gateWord = static_cast<uint64_t*>((*gate)->cpu());
    __atomic_store_n(gateWord, 0, __ATOMIC_RELEASE);
    const uint64_t opened = 0x5eed0000deadull;  // the value B waits for (never all zeros)

    auto vb = chB.submit(hw::Channel::kWaitDwords, [&](hw::PushWriter& w) { hw::writeAcquire(w, (*gate)->va(), opened); });
    assert_true(vb.ok());
    auto va = chA.submit(hw::Channel::kWaitDwords, [&](hw::PushWriter& w) { chB.writeWait(w, *vb); });
    assert_true(va.ok());

    Status waited;
    const std::string report = capturingStderr([&] {
        std::thread opener([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // past the 1 s report
            __atomic_store_n(gateWord, opened, __ATOMIC_RELEASE);
        });
        waited = chA.wait(*va);
        opener.join();
    });
    print_message("[          ] the report:\n%s", report.c_str());
    assert_cu_ok(waited.code());
    assert_cu_ok(chB.wait(*vb).code());

    char line[256];
    // The waiting channel, what it waits for and how far it is.
    snprintf(line, sizeof line, "channel 0x%x (copy) waited for ", chA.handle());
    assert_non_null(strstr(report.c_str(), line));
    snprintf(line, sizeof line, "for timeline value %llu: reached %llu, submitted %llu",
             static_cast<unsigned long long>(*va), static_cast<unsigned long long>(*va - 1),
             static_cast<unsigned long long>(*va));
    assert_non_null(strstr(report.c_str(), line));
    // Its stuck submission acquires B's value, and B is one short of it.
    snprintf(line, sizeof line, "submission %llu acquires %llu (operation %u) of channel 0x%x (copy): reached %llu, submitted %llu",
             static_cast<unsigned long long>(*va), static_cast<unsigned long long>(*vb),
             nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ, chB.handle(), static_cast<unsigned long long>(*vb - 1),
             static_cast<unsigned long long>(*vb));
    assert_non_null(strstr(report.c_str(), line));
    // Once per wait.
    const char* first = strstr(report.c_str(), "waited for ");
    assert_null(strstr(first + 1, "waited for "));
}

// A wait shorter than the setting says nothing.
void test_short_wait_is_quiet(void**) {
    auto g = hw::ChannelGroup::create(*E.gpu, E.gpu->info().asyncCopyEngines.front());
    assert_true(g.ok());
    std::unique_ptr<hw::ChannelGroup> group = std::move(*g);
    auto a = group->addChannel(hw::EngineKind::Copy);
    assert_true(a.ok());
    assert_cu_ok(group->schedule().code());
    auto src = E.gpu->allocHost(8192), dst = E.gpu->allocHost(8192);
    assert_true(src.ok() && dst.ok());
    ts_fill_random((*src)->cpu(), 8192, 91);
    const std::string report = capturingStderr([&] {
        auto v = (*a)->submit(hw::copyDwords(5000),
                              [&](hw::PushWriter& w) { hw::copy(w, (*dst)->va() + 3, (*src)->va() + 7, 5000); });
        assert_true(v.ok());
        assert_cu_ok((*a)->wait(*v).code());
    });
    assert_null(strstr(report.c_str(), "hang report"));
    assert_memory_equal(static_cast<uint8_t*>((*dst)->cpu()) + 3, static_cast<uint8_t*>((*src)->cpu()) + 7, 5000);
}

}  // namespace

int main() {
    // The simulated driver, whatever the environment says, and reports after 1 s
    // (read at the first long wait of the process).
    setenv("NVLITE_DEVICE", "sim", 1);
    setenv("NVLITE_HANG_REPORT", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_wait_is_quiet),
        cmocka_unit_test(test_stuck_wait_is_reported),
    };
    return cmocka_run_group_tests(tests, hwtest::setupDriver, hwtest::teardownDriver);
}
