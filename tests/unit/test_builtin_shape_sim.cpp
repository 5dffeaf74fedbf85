// How the built-in kernels' work reaches the GPU, on the simulated driver
// (NVLITE_DEVICE=sim; main sets NVLITE_KERNEL_COPY_MIN / _FILL_MIN to 64 KiB):
//   - a kernel copy is submitted exactly like a kernel fill: one GPFIFO entry
//     and one launch per operation on the stream's compute channel, the same
//     methods and semaphore work, no copy-engine transfer, no other channel
//     touched (the H200 timed a 64 KiB kernel copy 4 us above a 64 KiB kernel
//     fill; this pins that the library submits nothing more for it);
//   - the kernels' code lives in a first-size heap chunk, which is also the
//     heap's cache: once every allocation is freed and the modules unloaded,
//     a context holds that one chunk and nothing more (kernels are compiled
//     with NVRTC for the module: those tests skip without it).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "core/builtin.h"
#include "core/context.h"
#include "core/memory.h"
#include "kdrv/sim/sim_control.h"
#include "nvlite/cuda.h"
#include "support/test_support.h"

namespace sim = nvl::kdrv::sim;

namespace {

constexpr size_t kMin = 64 << 10;  // main sets both thresholds to this

struct Snapshot {
    sim::Counters counters;
    std::vector<sim::ChannelInfo> channels;
};

Snapshot snapshot() {
    assert_cu_ok(cuCtxSynchronize());
    assert_true(sim::waitIdle(20000));
    return {sim::counters(), sim::channels()};
}

// What N operations added to the counters, and on how many channels.
struct Shape {
    uint64_t gpfifoEntries, methods, launches, copies, releases, acquires;
    size_t channelsTouched;
    uint32_t entriesOnBusiest;
};

Shape shapeBetween(const Snapshot& a, const Snapshot& b) {
    Shape s{b.counters.gpfifoEntries - a.counters.gpfifoEntries,
            b.counters.methods - a.counters.methods,
            b.counters.launches - a.counters.launches,
            b.counters.copies - a.counters.copies,
            b.counters.semaphoreReleases - a.counters.semaphoreReleases,
            b.counters.semaphoreAcquires - a.counters.semaphoreAcquires,
            0,
            0};
    for (const sim::ChannelInfo& now : b.channels)
        for (const sim::ChannelInfo& then : a.channels)
            if (now.hClient == then.hClient && now.hChannel == then.hChannel && now.gpPut != then.gpPut) {
                ++s.channelsTouched;
                if (now.gpPut - then.gpPut > s.entriesOnBusiest) s.entriesOnBusiest = now.gpPut - then.gpPut;
            }
    return s;
}

enum class Op { Copy, Fill };

// 'n' operations of 'bytes' back to back on 'st' (after a warm-up that loads
// the kernels and settles the stream on its compute channel).
Shape submitted(Op op, CUstream st, CUdeviceptr dst, CUdeviceptr src, size_t bytes, int n) {
    auto one = [&] {
        if (op == Op::Copy) assert_cu_ok(cuMemcpyDtoDAsync(dst, src, bytes, st));
        else assert_cu_ok(cuMemsetD32Async(dst, 0x3f800000u, bytes / 4, st));
    };
    for (int i = 0; i < 3; ++i) one();
    const Snapshot a = snapshot();
    for (int i = 0; i < n; ++i) one();
    const Snapshot b = snapshot();
    return shapeBetween(a, b);
}

void test_copy_submits_like_a_fill(void**) {
    const size_t bytes = kMin + 4096 * 3;  // above the threshold, odd pages
    CUdeviceptr x = ts_dev_alloc(bytes + 64), y = ts_dev_alloc(bytes + 64);
    std::vector<uint8_t> data(bytes);
    ts_fill_random(data.data(), bytes, 1212);
    assert_cu_ok(cuMemcpyHtoD(x, data.data(), bytes));
    CUstream st = ts_stream_new(CU_STREAM_NON_BLOCKING);
    constexpr int kN = 17;
    const Shape copy = submitted(Op::Copy, st, y, x, bytes, kN);
    const Shape fill = submitted(Op::Fill, st, y + 64, 0, bytes, kN);
    // One launch and one GPFIFO entry per operation, on one channel.
    assert_int_equal(copy.launches, kN);
    assert_int_equal(copy.copies, 0);
    assert_int_equal(copy.gpfifoEntries, kN);
    assert_int_equal(copy.channelsTouched, 1);
    assert_int_equal(copy.entriesOnBusiest, kN);
    // At most one acquire (in-stream order) and one release per operation.
    assert_true(copy.acquires <= kN);
    assert_true(copy.releases <= kN);
    // Exactly what the same number of fills costs.
    assert_int_equal(copy.methods, fill.methods);
    assert_int_equal(copy.acquires, fill.acquires);
    assert_int_equal(copy.releases, fill.releases);
    assert_int_equal(fill.launches, kN);
    assert_int_equal(fill.gpfifoEntries, kN);
    assert_int_equal(fill.channelsTouched, 1);
    // And the copies did their work (the fills went 64 bytes further on).
    std::vector<uint8_t> got(64);
    assert_cu_ok(cuMemcpyDtoH(got.data(), y, 64));
    assert_bytes_equal(data.data(), got.data(), 64);
}

// Unaligned copies are one launch each too (no second launch for a tail).
void test_unaligned_copy_is_one_launch(void**) {
    const size_t bytes = kMin * 2 + 13;
    CUdeviceptr x = ts_dev_alloc(bytes + 64), y = ts_dev_alloc(bytes + 64);
    CUstream st = ts_stream_new(CU_STREAM_NON_BLOCKING);
    const Shape s = submitted(Op::Copy, st, y + 5, x + 3, bytes, 9);
    assert_int_equal(s.launches, 9);
    assert_int_equal(s.gpfifoEntries, 9);
    assert_int_equal(s.copies, 0);
    assert_int_equal(s.channelsTouched, 1);
}

size_t usedBytes() {
    size_t free = 0, total = 0;
    assert_cu_ok(cuMemGetInfo(&free, &total));
    return total - free;
}

nvl::core::BuiltinKernels& builtins() {
    CUcontext c = nullptr;
    assert_cu_ok(cuCtxGetCurrent(&c));
    nvl::core::Context* ctx = nvl::core::Context::fromHandle(c);
    assert_non_null(ctx);
    return ctx->builtins();
}

// A user module, resident (its code placed by a launch): its unload gives
// local memory back, as in bench_perf's "memory still held" figure.
CUmodule residentModule() {
    CUmodule m = ts_source_module("extern \"C\" __global__ void empty() {}\n", "builtin_shape_empty");
    assert_cu_ok(cuLaunchKernel(ts_get_function(m, "empty"), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr));
    assert_cu_ok(cuCtxSynchronize());
    return m;
}

// After copies and fills on the kernels, freeing every allocation and
// unloading the module, the context holds one first-size chunk (the
// kernels' code in it), however the allocations were spread over chunks.
void test_memory_held_after_free(void**) {
    constexpr size_t kChunk = nvl::core::DeviceHeap::kFirstChunkSize;
    const size_t base = usedBytes();
    CUmodule m = residentModule();  // its code opens the first chunk
    // The first chunk full: the next allocations and the kernels' code go to
    // a second first-size chunk; the first goes back once emptied.
    const size_t beforeFull = usedBytes();
    CUdeviceptr full = ts_dev_alloc(kChunk - (16 << 10));
    assert_int_equal(usedBytes(), beforeFull);
    CUdeviceptr a = ts_dev_alloc(3 * kMin + 100), b = ts_dev_alloc(3 * kMin + 100);
    assert_false(builtins().loaded());
    assert_cu_ok(cuMemsetD32(a, 0x01020304, (3 * kMin) / 4));
    assert_cu_ok(cuMemcpyDtoD(b, a, 3 * kMin));
    assert_true(builtins().loaded());
    CUdeviceptr big = ts_dev_alloc(40 << 20);  // a chunk of its own
    assert_cu_ok(cuMemcpyDtoD(big + 7, b, 3 * kMin));
    std::vector<uint8_t> got(3 * kMin);
    assert_cu_ok(cuMemcpyDtoH(got.data(), big + 7, got.size()));
    for (size_t i = 0; i < got.size(); i += 4) {
        assert_int_equal(got[i], 0x04);
        assert_int_equal(got[i + 3], 0x01);
    }
    assert_true(usedBytes() >= base + 2 * kChunk + (40 << 20));
    assert_cu_ok(cuMemFree(big));
    assert_cu_ok(cuMemFree(full));
    assert_cu_ok(cuMemFree(a));
    assert_cu_ok(cuMemFree(b));
    assert_cu_ok(cuModuleUnload(m));
    assert_cu_ok(cuCtxSynchronize());
    assert_int_equal(usedBytes() - base, kChunk);
    // That chunk serves the next small allocation; the kernels stay loaded.
    CUdeviceptr again = ts_dev_alloc(kMin);
    assert_int_equal(usedBytes() - base, kChunk);
    assert_cu_ok(cuMemFree(again));
    assert_int_equal(usedBytes() - base, kChunk);
    assert_true(builtins().loaded());
}

// The kernels load into a first-size chunk with room: no video memory more.
void test_kernels_take_no_chunk_of_their_own(void**) {
    constexpr size_t kChunk = nvl::core::DeviceHeap::kFirstChunkSize;
    const size_t base = usedBytes();
    CUmodule m = residentModule();
    CUdeviceptr a = ts_dev_alloc(kMin + 512), b = ts_dev_alloc(kMin + 512);
    const size_t allocated = usedBytes();
    assert_cu_ok(cuMemsetD16(a, 0x1234, (kMin + 512) / 2));
    assert_cu_ok(cuMemcpyDtoD(b, a, kMin + 512));
    assert_cu_ok(cuCtxSynchronize());
    assert_true(builtins().loaded());
    assert_int_equal(usedBytes(), allocated);
    std::vector<uint8_t> got(kMin + 512);
    assert_cu_ok(cuMemcpyDtoH(got.data(), b, got.size()));
    for (size_t i = 0; i < got.size(); i += 2) {
        assert_int_equal(got[i], 0x34);
        assert_int_equal(got[i + 1], 0x12);
    }
    assert_cu_ok(cuMemFree(a));
    assert_cu_ok(cuMemFree(b));
    assert_cu_ok(cuModuleUnload(m));
    assert_cu_ok(cuCtxSynchronize());
    assert_int_equal(usedBytes() - base, kChunk);
}

}  // namespace

int main() {
    setenv("NVLITE_DEVICE", "sim", 1);
    setenv("NVLITE_KERNEL_COPY_MIN", "64k", 1);
    setenv("NVLITE_KERNEL_FILL_MIN", "64k", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_copy_submits_like_a_fill, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_unaligned_copy_is_one_launch, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_memory_held_after_free, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_kernels_take_no_chunk_of_their_own, ts_ctx_setup, ts_ctx_teardown),
    };
    return cmocka_run_group_tests_name("builtin_shape_sim", tests, nullptr, nullptr);
}
