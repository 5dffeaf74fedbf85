// The printf FIFO under concurrency, on the simulated driver (and under
// ThreadSanitizer in make test-tsan): one thread plays the device, writing
// records into the ring as fast as the host frees space, while several
// threads make synchronising calls that drain it. Every record must come
// out exactly once, in order, and limits read meanwhile stay consistent.
// Needs no compiler: the FIFO is set up through the context's runtime.
#include <stdlib.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "core/context.h"
#include "core/devrt.h"
#include "loader/image.h"
#include "devrt_records.h"
#include "support/test_support.h"

using nvl::core::DeviceRuntime;
using namespace devrttest;

namespace {

DeviceRuntime& runtime(CUcontext c) {
    nvl::core::Context* ctx = nvl::core::Context::fromHandle(c);
    assert_non_null(ctx);
    return ctx->devrt();
}

void test_concurrent_drains(void** state) {
    CUcontext c = ts_fx(state)->ctx;
    DeviceRuntime& rt = runtime(c);
    assert_int_equal(rt.setFifoLimit(4096).code(), CUDA_SUCCESS);  // a small ring: many laps
    assert_true(rt.stateAddress(nvl::loader::kDevrtFifo).ok());
    nvl::core::fifo::StringOutput out;
    rt.setOutput(&out);
    const DeviceRuntime::Buffers b = rt.buffers();
    assert_int_equal(b.ringBytes, 4096);

    constexpr int kRecords = 3000;
    std::atomic<bool> done{false};
    std::string expected;
    std::thread device([&] {
        RingWriter w{b.ring, b.ringBytes, 0};
        for (int i = 0; i < kRecords; ++i) {
            Items it;
            it.string("record %d of %s\n");
            it.number(static_cast<int32_t>(i));
            it.string(std::string(static_cast<size_t>(i % 37), 'x'));
            const uint64_t n = RingWriter::recordBytes(it);
            while (w.head - __atomic_load_n(&b.host->tail, __ATOMIC_ACQUIRE) + n > b.ringBytes) std::this_thread::yield();
            w.put(nvl::devrt::kRecordPrintf, it);
        }
        done.store(true);
    });
    for (int i = 0; i < kRecords; ++i) expected += "record " + std::to_string(i) + " of " + std::string(i % 37, 'x') + "\n";

    std::vector<std::thread> hosts;
    std::atomic<int> failures{0};
    for (int t = 0; t < 3; ++t) {
        hosts.emplace_back([&, t] {
            if (cuCtxSetCurrent(c) != CUDA_SUCCESS) {
                failures.fetch_add(1);
                return;
            }
            CUstream s = nullptr;
            if (t == 1 && cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) failures.fetch_add(1);
            while (!done.load()) {
                CUresult r = t == 1 ? cuStreamSynchronize(s) : cuCtxSynchronize();
                if (r != CUDA_SUCCESS) failures.fetch_add(1);
                if (rt.fifoLimit() != 4096 || rt.heapLimit() != DeviceRuntime::kDefaultHeapBytes) failures.fetch_add(1);
            }
            if (s) cuStreamDestroy(s);
            cuCtxSetCurrent(nullptr);
        });
    }
    device.join();
    for (auto& h : hosts) h.join();
    assert_int_equal(failures.load(), 0);
    assert_cu_ok(cuCtxSynchronize());
    rt.setOutput(nullptr);
    if (out.text() != expected) fail_msg("the records came out %zu bytes long, expected %zu (or out of order)", out.text().size(), expected.size());
}

}  // namespace

int main() {
    setenv("NVLITE_DEVICE", "sim", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_concurrent_drains, ts_ctx_setup, ts_ctx_teardown),
    };
    return cmocka_run_group_tests_name("devrt_threads", tests, nullptr, nullptr);
}
