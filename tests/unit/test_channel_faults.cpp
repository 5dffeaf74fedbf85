// GPU faults at the hw layer, on the simulated driver (NVLITE_DEVICE=sim, set
// by main): a copy to an unmapped address and injected faulting launches (an
// MMU fault, a trap) stop the faulting channel's TSG; Channel::wait on any of
// its channels returns the CUresult libcuda gives (CUDA_ERROR_ILLEGAL_ADDRESS,
// CUDA_ERROR_LAUNCH_FAILED), promptly, with the RC error in the Status; a
// channel of another TSG waiting on the faulted work gives up through the
// FaultScope; channel groups made afterwards work and copy correctly.
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "defs/rm_classes.h"
#include "hw/channel.h"
#include "hw/channel_error.h"
#include "hw/channel_group.h"
#include "hw/compute.h"
#include "hw/copy_engine.h"
#include "hw/driver.h"
#include "hw/gpu.h"
#include "kdrv/sim/sim_control.h"
#include "support/test_support.h"
#include "hw_gpu_env.h"

using namespace nvl;
namespace sim = nvl::kdrv::sim;

namespace {

// Faults must be reported well within this (the API promises one second).
constexpr double kPromptSeconds = 1.0;

using hwtest::E;

double seconds() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// What a context has: compute and a copy channel in a graphics TSG, a copy
// channel in a TSG of an asynchronous copy engine, all in one fault scope.
// The scope is declared first: it outlives the channels.
struct Channels {
    hw::FaultScope scope;
    std::unique_ptr<hw::ChannelGroup> graphics, copies;
    hw::Channel* compute = nullptr;
    hw::Channel* grCopy = nullptr;
    hw::Channel* asyncCopy = nullptr;
};

std::unique_ptr<Channels> makeChannels() {
    auto c = std::make_unique<Channels>();
    auto g = hw::ChannelGroup::create(*E.gpu, nv::NV2080_ENGINE_TYPE_GRAPHICS);
    assert_true(g.ok());
    c->graphics = std::move(*g);
    auto compute = c->graphics->addChannel(hw::EngineKind::Compute);
    auto grCopy = c->graphics->addChannel(hw::EngineKind::Copy);
    assert_true(compute.ok() && grCopy.ok());
    c->compute = *compute;
    c->grCopy = *grCopy;
    assert_cu_ok(c->graphics->schedule().code());

    assert_false(E.gpu->info().asyncCopyEngines.empty());
    auto a = hw::ChannelGroup::create(*E.gpu, E.gpu->info().asyncCopyEngines.front());
    assert_true(a.ok());
    c->copies = std::move(*a);
    auto asyncCopy = c->copies->addChannel(hw::EngineKind::Copy);
    assert_true(asyncCopy.ok());
    c->asyncCopy = *asyncCopy;
    assert_cu_ok(c->copies->schedule().code());

    for (hw::Channel* ch : {c->compute, c->grCopy, c->asyncCopy}) assert_true(ch->joinFaultScope(c->scope));
    return c;
}

std::unique_ptr<hw::GpuMemory> hostMemory(size_t bytes) {
    auto m = E.gpu->allocHost(bytes);
    assert_true(m.ok());
    return std::move(*m);
}

uint64_t submitCopy(hw::Channel& ch, uint64_t dst, uint64_t src, uint64_t bytes) {
    auto v = ch.submit(hw::copyDwords(bytes), [&](hw::PushWriter& w) { hw::copy(w, dst, src, bytes); });
    assert_true(v.ok());
    return *v;
}

// A kernel launch through the real launch path (the sim records it; with an
// injected fault it stops the channel instead).
uint64_t submitLaunch(hw::Channel& ch, uint64_t programVa) {
    hw::KernelDescriptor k;
    k.programVa = programVa;
    k.programBytes = 256;
    k.registers = 16;
    k.paramBase = 0x210;
    k.cbuf0Bytes = 0x220;
    const hw::ComputeState s;
    const hw::Qmd tmpl = hw::Launch::makeTemplate(k, s);
    hw::Launch::Image image;
    const hw::LaunchGeometry g{{4, 1, 1}, {128, 1, 1}, 0};
    auto v = ch.submitWithData(hw::Launch::kPushDwords, hw::Launch::dataBytes(k, s),
                               [&](hw::PushWriter& w, const hw::Channel::DataSlot& slot) {
                                   const uint64_t qmdVa = hw::Launch::write(
                                       image, slot, tmpl, k, g, s, [&](uint8_t* p) { memset(p, 0, k.cbuf0Bytes - k.paramBase); });
                                   hw::Launch::push(w, qmdVa);
                               });
    assert_true(v.ok());
    return *v;
}

// Waits for 'value' on 'ch' and checks it fails with 'code' / 'rcError' in
// under a second.
void expectFault(hw::Channel& ch, uint64_t value, CUresult code, uint32_t rcError) {
    const double t0 = seconds();
    const Status s = ch.wait(value);
    const double took = seconds() - t0;
    assert_cu(code, s.code());
    assert_int_equal(s.driverStatus(), rcError);
    assert_non_null(s.where());
    assert_string_equal(s.where(), hw::rcErrorName(rcError));
    print_message("[          ] %s (RC error %u) after %.3f ms\n", s.where(), rcError, took * 1e3);
    assert_true(took < kPromptSeconds);
    assert_false(ch.isDone(value));  // its semaphore release never happened
}

// A copy in a fresh pair of TSGs moves random data correctly.
void expectFreshChannelsWork(uint64_t seed) {
    auto c = makeChannels();
    constexpr size_t kBytes = 1 << 20;
    auto src = hostMemory(kBytes), dst = hostMemory(kBytes);
    ts_fill_random(src->cpu(), kBytes, seed);
    memset(dst->cpu(), 0, kBytes);
    for (hw::Channel* ch : {c->asyncCopy, c->grCopy}) {
        memset(dst->cpu(), 0, kBytes);
        assert_cu_ok(ch->wait(submitCopy(*ch, dst->va(), src->va(), kBytes)).code());
        assert_bytes_equal(src->cpu(), dst->cpu(), kBytes);
    }
    assert_cu_ok(c->scope.error().code());
}

// ------------------------------------------------------------------ tests

void test_error_mapping(void**) {
    struct {
        uint32_t rc;
        CUresult code;
    } cases[] = {
        {nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, CUDA_ERROR_ILLEGAL_ADDRESS},
        {nv::ROBUST_CHANNEL_GR_EXCEPTION, CUDA_ERROR_LAUNCH_FAILED},
        {nv::ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR, CUDA_ERROR_LAUNCH_FAILED},
        {nv::ROBUST_CHANNEL_PREEMPTIVE_REMOVAL, CUDA_ERROR_LAUNCH_FAILED},
        {nv::ROBUST_CHANNEL_PBDMA_ERROR, CUDA_ERROR_LAUNCH_FAILED},
        {nv::ROBUST_CHANNEL_GR_CLASS_ERROR, CUDA_ERROR_LAUNCH_FAILED},
        {nv::ROBUST_CHANNEL_CE_ERROR(3), CUDA_ERROR_LAUNCH_FAILED},
        {nv::ROBUST_CHANNEL_GPU_ECC_DBE, CUDA_ERROR_ECC_UNCORRECTABLE},
        {nv::ROBUST_CHANNEL_CONTAINED_ERROR, CUDA_ERROR_ECC_UNCORRECTABLE},
        {nv::ROBUST_CHANNEL_UNCONTAINED_ERROR, CUDA_ERROR_ECC_UNCORRECTABLE},
        {nv::ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS, CUDA_ERROR_DEVICE_UNAVAILABLE},
        {nv::ROBUST_CHANNEL_LAST_ERROR + 1, CUDA_ERROR_LAUNCH_FAILED},  // one we do not know
    };
    for (const auto& c : cases) {
        const Status s = hw::channelErrorStatus(c.rc);
        assert_cu(c.code, s.code());
        assert_int_equal(s.driverStatus(), c.rc);
        assert_non_null(s.where());
    }
    assert_string_equal(hw::rcErrorName(nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT),
                        "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT");
    assert_null(hw::rcErrorName(nv::ROBUST_CHANNEL_LAST_ERROR + 1));
}

void test_copy_to_freed_memory(void**) {
    auto c = makeChannels();
    auto src = hostMemory(64 << 10);
    ts_fill_random(src->cpu(), 64 << 10, 0xfa017);
    // Memory mapped for the GPU, then freed: its pages are unmapped.
    uint64_t freed;
    {
        auto gone = hostMemory(64 << 10);
        freed = gone->va();
    }
    assert_cu_ok(c->scope.error().code());
    const uint64_t v = submitCopy(*c->grCopy, freed + 4096, src->va(), 4096);
    expectFault(*c->grCopy, v, CUDA_ERROR_ILLEGAL_ADDRESS, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT);
    // Its TSG stopped: the compute channel says so too, and work on it fails at once.
    assert_cu(CUDA_ERROR_ILLEGAL_ADDRESS, c->compute->error().code());
    const uint64_t v2 = submitCopy(*c->grCopy, src->va(), src->va() + 8192, 64);
    expectFault(*c->grCopy, v2, CUDA_ERROR_ILLEGAL_ADDRESS, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT);
    // The other TSG runs on, but the scope reports the fault.
    assert_cu_ok(c->asyncCopy->error().code());
    assert_cu(CUDA_ERROR_ILLEGAL_ADDRESS, c->scope.error().code());
    bool found = false;
    for (const auto& ci : sim::channels()) {
        if (ci.hChannel == c->grCopy->handle()) {
            found = true;
            assert_true(ci.faulted);
            assert_int_equal(ci.faultAddress, freed + 4096);
        }
        if (ci.hChannel == c->compute->handle()) assert_true(ci.faulted);
        if (ci.hChannel == c->asyncCopy->handle()) assert_false(ci.faulted);
    }
    assert_true(found);
    c.reset();  // destroying faulted channels does not wait for them
    expectFreshChannelsWork(0x5eed01);
}

void test_injected_copy_fault_async_engine(void**) {
    auto c = makeChannels();
    auto buf = hostMemory(64 << 10);
    assert_true(sim::injectFault(E.gpu->rm().handle(), c->asyncCopy->handle(), sim::InjectedFault::NextCopy));
    const uint64_t v = submitCopy(*c->asyncCopy, buf->va(), buf->va() + 8192, 1024);
    expectFault(*c->asyncCopy, v, CUDA_ERROR_ILLEGAL_ADDRESS, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT);
    // Only the copy engine's TSG stopped.
    assert_cu_ok(c->compute->error().code());
    assert_cu_ok(c->grCopy->error().code());
    c.reset();
    expectFreshChannelsWork(0x5eed02);
}

void test_injected_launch_faults(void**) {
    struct {
        sim::InjectedFault kind;
        CUresult code;
        uint32_t rc;
    } cases[] = {
        {sim::InjectedFault::NextLaunch, CUDA_ERROR_ILLEGAL_ADDRESS, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT},
        {sim::InjectedFault::NextLaunchTrap, CUDA_ERROR_LAUNCH_FAILED, nv::ROBUST_CHANNEL_GR_EXCEPTION},
    };
    auto program = hostMemory(64 << 10);
    for (const auto& k : cases) {
        auto c = makeChannels();
        // A launch that works first.
        sim::clearLaunches();
        assert_cu_ok(c->compute->wait(submitLaunch(*c->compute, program->va())).code());
        assert_int_equal(sim::launches().size(), 1);
        // Then one that faults; the channel's later work never runs.
        assert_true(sim::injectFault(E.gpu->rm().handle(), c->compute->handle(), k.kind));
        const uint64_t v = submitLaunch(*c->compute, program->va());
        const uint64_t after = submitLaunch(*c->compute, program->va());
        expectFault(*c->compute, v, k.code, k.rc);
        expectFault(*c->compute, after, k.code, k.rc);
        assert_int_equal(sim::launches().size(), 1);
        // The graphics TSG's copy channel was torn down with it.
        assert_cu(k.code, c->grCopy->error().code());
        assert_int_equal(c->grCopy->error().driverStatus(), k.rc);
        // The async copy channel (another TSG) is fine on its own, but a copy
        // ordered after the kernel (a semaphore acquire of the compute
        // timeline) can never run: the wait ends through the fault scope.
        assert_cu_ok(c->asyncCopy->error().code());
        auto ordered = c->asyncCopy->submit(hw::Channel::kWaitDwords + hw::copyDwords(64), [&](hw::PushWriter& w) {
            c->compute->writeWait(w, v);
            hw::copy(w, program->va() + 4096, program->va(), 64);
        });
        assert_true(ordered.ok());
        expectFault(*c->asyncCopy, *ordered, k.code, k.rc);
        assert_cu_ok(c->asyncCopy->error().code());
        c.reset();
    }
    expectFreshChannelsWork(0x5eed03);
}

void test_fault_scope(void**) {
    auto c = makeChannels();
    assert_cu_ok(c->scope.error().code());
    // A channel joins one scope only.
    hw::FaultScope other;
    assert_false(c->compute->joinFaultScope(other));
    assert_cu_ok(other.error().code());
    // A scope remembers a fault after the faulted members are gone: the
    // channels that waited for them must still give up.
    assert_true(sim::injectFault(E.gpu->rm().handle(), c->asyncCopy->handle(), sim::InjectedFault::NextCopy));
    auto buf = hostMemory(4096);
    const uint64_t v = submitCopy(*c->asyncCopy, buf->va(), buf->va() + 2048, 64);
    expectFault(*c->asyncCopy, v, CUDA_ERROR_ILLEGAL_ADDRESS, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT);
    assert_cu(CUDA_ERROR_ILLEGAL_ADDRESS, c->scope.error().code());
    c->copies.reset();
    assert_cu(CUDA_ERROR_ILLEGAL_ADDRESS, c->scope.error().code());
    assert_cu(CUDA_ERROR_ILLEGAL_ADDRESS, c->compute->scopeError().code());
}

}  // namespace

int main() {
    // The simulated driver, whatever the environment says.
    setenv("NVLITE_DEVICE", "sim", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_mapping),
        cmocka_unit_test(test_copy_to_freed_memory),
        cmocka_unit_test(test_injected_copy_fault_async_engine),
        cmocka_unit_test(test_injected_launch_faults),
        cmocka_unit_test(test_fault_scope),
    };
    return cmocka_run_group_tests(tests, hwtest::setupDriver, hwtest::teardownDriver);
}
