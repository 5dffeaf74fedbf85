// The launch order 'auto' (the default; lib/hw/LAUNCH_ORDER.md), on the
// simulated driver: what keeps a compute channel's grids in order when its
// previous submission has not finished.
//   - a stream alone on the engine: the compute engine's WAIT_FOR_IDLE before
//     each grid, and no semaphore acquire of its own channel;
//   - while another stream's compute channel has work in flight: an acquire
//     of the previous submission, and no WAIT_FOR_IDLE (which would make the
//     grids wait for the other stream's too).
// A host function that waits for the test keeps the earlier work unfinished,
// so that every grid after it finds its predecessor running (not timing).
// The grids are the built-in fill kernel (main sets NVLITE_KERNEL_FILL_MIN).
#include <stdint.h>
#include <stdlib.h>

#include <atomic>

#include "kdrv/sim/sim_control.h"
#include "nvlite/cuda.h"
#include "support/test_support.h"

namespace sim = nvl::kdrv::sim;

namespace {

constexpr int kGrids = 9;
constexpr size_t kWords = (96 << 10) / 4 + 3;  // above the kernel-fill threshold, odd

// A host function that returns once the test opens its gate.
struct Gate {
    std::atomic<bool> open{false};
};
void CUDA_CB waitAtGate(void* p) {
    auto* g = static_cast<Gate*>(p);
    while (!g->open.load(std::memory_order_acquire)) {
    }
}

sim::Counters settled() {
    assert_true(sim::waitIdle(20000));
    return sim::counters();
}

// kGrids fills on 's' behind a closed gate; the counters they added once
// the gate opened and everything finished. 'busy', when given, is another
// stream held behind a closed gate of its own meanwhile.
sim::Counters gridsBehindGate(CUstream s, CUstream busy) {
    CUdeviceptr d;
    assert_cu_ok(cuMemAlloc(&d, kWords * 4 + 64));
    // The first grid sets up local memory on every lane: done before, and
    // nothing of it still running on another lane.
    assert_cu_ok(cuMemsetD32Async(d, 1, kWords, s));
    assert_cu_ok(cuCtxSynchronize());
    (void)settled();
    Gate gate, other;
    if (busy) assert_cu_ok(cuLaunchHostFunc(busy, waitAtGate, &other));
    assert_cu_ok(cuLaunchHostFunc(s, waitAtGate, &gate));
    const sim::Counters before = sim::counters();
    for (int i = 0; i < kGrids; ++i) assert_cu_ok(cuMemsetD32Async(d + 4 * (i % 3), 0x5eed0000u + i, kWords, s));
    gate.open.store(true, std::memory_order_release);
    other.open.store(true, std::memory_order_release);
    assert_cu_ok(cuStreamSynchronize(s));
    if (busy) assert_cu_ok(cuStreamSynchronize(busy));
    sim::Counters after = settled();
    // The fills ran, in order: the last one's value is what stays.
    uint32_t word = 0;
    assert_cu_ok(cuMemcpyDtoH(&word, d + 4 * ((kGrids - 1) % 3) + 4 * (kWords - 1), 4));
    assert_int_equal(word, 0x5eed0000u + kGrids - 1);
    assert_cu_ok(cuMemFree(d));
    after.launches -= before.launches;
    after.computeWaitForIdles -= before.computeWaitForIdles;
    after.semaphoreAcquires -= before.semaphoreAcquires;
    return after;
}

void test_alone_waits_for_idle(void** state) {
    (void)state;
    CUstream s;
    assert_cu_ok(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    const sim::Counters c = gridsBehindGate(s, nullptr);
    assert_int_equal(c.launches, kGrids);
    assert_int_equal(c.computeWaitForIdles, kGrids);
    // The host function's own acquire only: no grid acquired its predecessor.
    assert_int_equal(c.semaphoreAcquires, 1);
    assert_cu_ok(cuStreamDestroy(s));
}

void test_beside_busy_lane_acquires(void** state) {
    (void)state;
    CUstream s, busy;
    assert_cu_ok(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    assert_cu_ok(cuStreamCreate(&busy, CU_STREAM_NON_BLOCKING));
    const sim::Counters c = gridsBehindGate(s, busy);
    assert_int_equal(c.launches, kGrids);
    assert_int_equal(c.computeWaitForIdles, 0);
    assert_true(c.semaphoreAcquires >= kGrids + 2);  // and the two host functions'

    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuStreamDestroy(busy));
}

}  // namespace

int main() {
    setenv("NVLITE_DEVICE", "sim", 1);
    setenv("NVLITE_KERNEL_FILL_MIN", "64k", 1);
    unsetenv("NVLITE_LAUNCH_ORDER");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_alone_waits_for_idle, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_beside_busy_lane_acquires, ts_ctx_setup, ts_ctx_teardown),
    };
    return cmocka_run_group_tests_name("launch_order_sim", tests, nullptr, nullptr);
}
