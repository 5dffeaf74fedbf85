// The built-in copy and fill kernels on the simulated driver (NVLITE_DEVICE=sim;
// NVLITE_KERNEL_COPY_MIN / NVLITE_KERNEL_FILL_MIN set by main to 4096 bytes).
// The simulator validates each launch of them (their code mapped, 256-thread
// blocks, a thread split the kernels can take: sim_builtin.cpp) and does
// their work, so the results are checked byte for byte. Checked here:
//   - device-to-device copies and fills below the threshold stay on the copy
//     engine, from it on they are one kernel launch each; 1-D, 2-D and 3-D,
//     D8/D16/D32 and their 2-D forms, odd sizes, offsets and pitches;
//   - the kernels are loaded lazily (not at context creation), once per
//     context, and again after a primary context reset;
//   - copies that touch host memory never go to a kernel;
//   - stream order with events across streams and engines.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <random>
#include <vector>

#include "common/builtin_abi.h"
#include "core/builtin.h"
#include "core/context.h"
#include "kdrv/sim/sim_control.h"
#include "nvlite/cuda.h"
#include "support/test_support.h"

namespace sim = nvl::kdrv::sim;

namespace {

constexpr uint64_t kMin = 4096;  // main sets the thresholds to this

nvl::core::BuiltinKernels& builtins() {
    CUcontext c = nullptr;
    assert_cu_ok(cuCtxGetCurrent(&c));
    nvl::core::Context* ctx = nvl::core::Context::fromHandle(c);
    assert_non_null(ctx);
    return ctx->builtins();
}

struct Delta {
    uint64_t launches, copies;
};
Delta counted() {
    assert_cu_ok(cuCtxSynchronize());
    const sim::Counters c = sim::counters();
    return {c.launches, c.copies};
}

// Each recorded launch since clearLaunches() is a built-in one.
void expectBuiltinLaunches(size_t n) {
    const auto log = sim::launches();
    assert_int_equal(log.size(), n);
    for (const auto& r : log) {
        nvl::builtin::Args a;
        assert_true(r.cb0.size() >= 0x210 + sizeof a);
        memcpy(&a, r.cb0.data() + 0x210, sizeof a);
        assert_int_equal(a.magic, nvl::builtin::kMagic);
        assert_int_equal(r.block[0], nvl::builtin::kBlockThreads);
    }
}

std::vector<uint8_t> readBack(CUdeviceptr p, size_t n) {
    std::vector<uint8_t> v(n);
    assert_cu_ok(cuMemcpyDtoH(v.data(), p, n));
    return v;
}

void test_loaded_lazily_and_once(void**) {
    assert_false(builtins().loaded());
    const size_t n = 3 * kMin + 5;
    CUdeviceptr a = ts_dev_alloc(n), b = ts_dev_alloc(n);
    std::vector<uint8_t> src(n);
    ts_fill_random(src.data(), n, 11);
    assert_cu_ok(cuMemcpyHtoD(a, src.data(), n));
    assert_false(builtins().loaded());  // host to device: the copy engine
    assert_cu_ok(cuCtxSynchronize());
    sim::clearLaunches();
    assert_cu_ok(cuMemcpyDtoD(b, a, n));
    assert_true(builtins().loaded());
    assert_cu_ok(cuMemcpyDtoD(a + 1, b, n - 1));
    assert_cu_ok(cuCtxSynchronize());
    expectBuiltinLaunches(2);
    std::vector<uint8_t> want(src);
    memmove(want.data() + 1, src.data(), n - 1);
    const auto got = readBack(a, n);
    assert_bytes_equal(want.data(), got.data(), n);
}

void test_threshold_decides_the_engine(void**) {
    const size_t n = 2 * kMin;
    CUdeviceptr a = ts_dev_alloc(n), b = ts_dev_alloc(n);
    assert_cu_ok(cuMemsetD8(a, 0x5c, n));  // a kernel
    const Delta d0 = counted();
    assert_cu_ok(cuMemcpyDtoD(b, a, kMin - 1));  // below: copy engine
    assert_cu_ok(cuMemsetD32(b, 0x12345678, (kMin - 4) / 4));
    const Delta d1 = counted();
    assert_int_equal(d1.launches - d0.launches, 0);
    assert_int_equal(d1.copies - d0.copies, 2);
    assert_cu_ok(cuMemcpyDtoD(b, a, kMin));  // at the threshold: a kernel
    assert_cu_ok(cuMemsetD16(b, 0x1234, kMin / 2));
    const Delta d2 = counted();
    assert_int_equal(d2.launches - d1.launches, 2);
    assert_int_equal(d2.copies - d1.copies, 0);
    // Overlapping ranges stay on the copy engine (memmove's result, test_copy.c).
    assert_cu_ok(cuMemcpyDtoD(a + 1, a, kMin));
    const Delta d3 = counted();
    assert_int_equal(d3.launches - d2.launches, 0);
    assert_int_equal(d3.copies - d2.copies, 1);
    const auto got = readBack(b, kMin);
    for (size_t i = 0; i < kMin; i += 2) {
        assert_int_equal(got[i], 0x34);
        assert_int_equal(got[i + 1], 0x12);
    }
}

void test_copies_odd_sizes_offsets(void**) {
    const size_t cap = 1 << 20;
    CUdeviceptr a = ts_dev_alloc(cap + 64), b = ts_dev_alloc(cap + 64);
    std::vector<uint8_t> src(cap + 64), dst(cap + 64);
    std::mt19937_64 rng(1204);
    const size_t sizes[] = {kMin, kMin + 1, kMin + 15, 65537, 300007, cap - 3};
    int seed = 100;
    sim::clearLaunches();
    size_t launches = 0;
    for (size_t n : sizes) {
        for (int k = 0; k < 3; ++k) {
            const size_t so = rng() % 32, dof = rng() % 32;
            ts_fill_random(src.data(), src.size(), ++seed);
            ts_fill_random(dst.data(), dst.size(), ++seed);
            assert_cu_ok(cuMemcpyHtoD(a, src.data(), src.size()));
            assert_cu_ok(cuMemcpyHtoD(b, dst.data(), dst.size()));
            CUstream s = k == 1 ? ts_stream_new(CU_STREAM_NON_BLOCKING) : nullptr;
            assert_cu_ok(cuMemcpyDtoDAsync(b + dof, a + so, n, s));
            ++launches;
            if (s) assert_cu_ok(cuStreamSynchronize(s));
            memcpy(dst.data() + dof, src.data() + so, n);
            const auto got = readBack(b, dst.size());
            assert_bytes_equal(dst.data(), got.data(), dst.size());
        }
    }
    expectBuiltinLaunches(launches);
}

void test_fills_odd_sizes_offsets(void**) {
    const size_t cap = 300000;
    CUdeviceptr a = ts_dev_alloc(cap + 64);
    std::vector<uint8_t> mem(cap + 64);
    std::mt19937_64 rng(1205);
    int seed = 200;
    sim::clearLaunches();
    size_t launches = 0;
    for (unsigned size : {1u, 2u, 4u}) {
        for (size_t count : {kMin / size, kMin / size + 1, size_t{77777} / size, (cap - 8) / size}) {
            const size_t off = (rng() % 16) / size * size;
            ts_fill_random(mem.data(), mem.size(), ++seed);
            assert_cu_ok(cuMemcpyHtoD(a, mem.data(), mem.size()));
            const uint32_t value = static_cast<uint32_t>(rng());
            CUresult r = size == 1   ? cuMemsetD8(a + off, static_cast<unsigned char>(value), count)
                         : size == 2 ? cuMemsetD16(a + off, static_cast<unsigned short>(value), count)
                                     : cuMemsetD32(a + off, value, count);
            if (r != CUDA_SUCCESS) fail_msg("D%u fill of %zu at +%zu: %s", size * 8, count, off, ts_cu_name(r));
            ++launches;
            ts_fill_host(mem.data() + off, value, size, count);
            const auto got = readBack(a, mem.size());
            assert_bytes_equal(mem.data(), got.data(), mem.size());
        }
    }
    expectBuiltinLaunches(launches);
}

void test_2d_and_3d_between_device_memory(void**) {
    std::mt19937_64 rng(1206);
    const size_t width = 1237, height = 19, depth = 3;
    const size_t sp = 1300, dp = 1500;  // pitches
    const size_t srcBytes = sp * height * depth + 64, dstBytes = dp * height * depth + 64;
    CUdeviceptr s = ts_dev_alloc(srcBytes), d = ts_dev_alloc(dstBytes);
    std::vector<uint8_t> src(srcBytes), dst(dstBytes);
    ts_fill_random(src.data(), srcBytes, 301);
    ts_fill_random(dst.data(), dstBytes, 302);
    assert_cu_ok(cuMemcpyHtoD(s, src.data(), srcBytes));
    assert_cu_ok(cuMemcpyHtoD(d, dst.data(), dstBytes));
    sim::clearLaunches();

    // (C++ wants every field named; the heights do not matter to a 2-D copy.)
    const ts_box b2 = {.srcX = 3, .srcY = 1, .srcPitch = sp, .srcHeight = height, .dstX = 7, .dstY = 2, .dstPitch = dp,
                       .dstHeight = height, .width = width, .height = height - 3, .depth = 1};
    const CUDA_MEMCPY2D c2 = ts_box_2d_dtod(d, s, &b2);
    assert_cu_ok(cuMemcpy2D(&c2));
    ts_box_copy_host(dst.data(), src.data(), &b2);

    const ts_box b3 = {.srcX = 1, .srcY = 0, .srcPitch = sp, .srcHeight = height, .dstX = 5, .dstY = 0, .dstPitch = dp,
                       .dstHeight = height, .width = width - 9, .height = height, .depth = depth};
    const CUDA_MEMCPY3D c3 = ts_box_3d_dtod(d, s, &b3);
    assert_cu_ok(cuMemcpy3D(&c3));
    ts_box_copy_host(dst.data(), src.data(), &b3);

    // A 2-D fill with gaps between the lines, on 2-byte elements.
    assert_cu_ok(cuMemsetD2D16(d + 2 * dp + 4, dp, 0xbeef, 600, 7));
    ts_fill_2d_host(&dst[2 * dp + 4], dp, 0xbeef, 2, 600, 7);
    assert_cu_ok(cuCtxSynchronize());
    expectBuiltinLaunches(3);
    const auto got = readBack(d, dstBytes);
    assert_bytes_equal(dst.data(), got.data(), dstBytes);
    (void)rng;
}

// Which kernel takes which shape: 1-D copies and fills, and 2-D copies whose
// lines lie back to back, the line kernels; 2-D copies with gaps between
// lines, the box kernel.
std::vector<unsigned> launchedOps() {
    std::vector<unsigned> ops;
    for (const auto& r : sim::launches()) {
        nvl::builtin::Args a;
        assert_true(r.cb0.size() >= 0x210 + sizeof a);
        memcpy(&a, r.cb0.data() + 0x210, sizeof a);
        assert_int_equal(a.magic, nvl::builtin::kMagic);
        ops.push_back(a.op);
    }
    return ops;
}

void test_shapes_pick_their_kernel(void**) {
    const size_t n = 5 * kMin + 3, lines = 7, pitch = 5 * kMin + 64;
    CUdeviceptr a = ts_dev_alloc(pitch * lines), b = ts_dev_alloc(pitch * lines);
    std::vector<uint8_t> src(pitch * lines);
    ts_fill_random(src.data(), src.size(), 1210);
    assert_cu_ok(cuMemcpyHtoD(a, src.data(), src.size()));
    assert_cu_ok(cuCtxSynchronize());
    sim::clearLaunches();
    assert_cu_ok(cuMemcpyDtoD(b + 1, a + 2, n));
    assert_cu_ok(cuMemsetD32(b, 0x01020304u, n / 4));
    CUDA_MEMCPY2D c{};
    c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = a;
    c.dstDevice = b;
    c.WidthInBytes = n;
    c.Height = lines;
    c.srcPitch = c.dstPitch = pitch;  // gaps: the box kernel
    assert_cu_ok(cuMemcpy2D(&c));
    std::vector<uint8_t> got(n);
    assert_cu_ok(cuMemcpyDtoH(got.data(), b + (lines - 1) * pitch, n));
    assert_bytes_equal(&src[(lines - 1) * pitch], got.data(), n);
    c.srcPitch = c.dstPitch = n;  // back to back: one line
    assert_cu_ok(cuMemcpy2D(&c));
    assert_cu_ok(cuMemcpyDtoH(got.data(), b + (lines - 1) * n, n));
    assert_bytes_equal(&src[(lines - 1) * n], got.data(), n);
    const std::vector<unsigned> want = {nvl::builtin::kOpCopyLine, nvl::builtin::kOpFillLine, nvl::builtin::kOpCopy,
                                        nvl::builtin::kOpCopyLine};
    assert_true(launchedOps() == want);
}

void test_host_memory_never_goes_to_a_kernel(void**) {
    const size_t n = 5 * kMin + 3;
    unsigned char* pinned = ts_pinned_alloc(n);
    CUdeviceptr d = ts_dev_alloc(n);
    ts_fill_random(pinned, n, 401);
    const Delta d0 = counted();
    assert_cu_ok(cuMemcpyHtoD(d, pinned, n));
    assert_cu_ok(cuMemcpyDtoD(ts_dptr(pinned), d, n));  // unified addressing: a pinned side
    assert_cu_ok(cuMemsetD8(ts_dptr(pinned), 0x11, n));
    const Delta d1 = counted();
    assert_int_equal(d1.launches - d0.launches, 0);
    assert_bytes_all(pinned, 0x11, n);
}

void test_order_across_streams_and_engines(void**) {
    const size_t n = 64 * kMin + 9;
    CUdeviceptr a = ts_dev_alloc(n), b = ts_dev_alloc(n), c = ts_dev_alloc(n);
    unsigned char* out = ts_pinned_alloc(n);
    std::vector<uint8_t> src(n);
    ts_fill_random(src.data(), n, 501);
    CUstream s1 = ts_stream_new(CU_STREAM_NON_BLOCKING), s2 = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent e1 = ts_event_new(CU_EVENT_DISABLE_TIMING), e2 = ts_event_new(0);
    for (int round = 0; round < 5; ++round) {
        src[round] ^= 0xff;
        assert_cu_ok(cuMemcpyHtoDAsync(a, src.data(), n, s1));   // copy engine (pageable, staged)
        assert_cu_ok(cuMemcpyDtoDAsync(b, a, n, s1));            // kernel, after it
        assert_cu_ok(cuEventRecord(e1, s1));
        assert_cu_ok(cuStreamWaitEvent(s2, e1, 0));
        assert_cu_ok(cuMemcpyDtoDAsync(c, b, n, s2));            // kernel on another lane
        assert_cu_ok(cuMemcpyDtoHAsync(out, c, n, s2));          // copy engine after it
        assert_cu_ok(cuEventRecord(e2, s2));
        assert_cu_ok(cuEventSynchronize(e2));
        assert_bytes_equal(src.data(), out, n);
    }
}

void test_reloaded_after_primary_reset(void**) {
    CUdevice dev = 0;
    assert_cu_ok(cuDeviceGet(&dev, 0));
    const size_t n = kMin * 3 + 1;
    for (int round = 0; round < 2; ++round) {
        CUcontext p = nullptr;
        assert_cu_ok(cuDevicePrimaryCtxRetain(&p, dev));
        assert_cu_ok(cuCtxPushCurrent(p));
        assert_false(builtins().loaded());
        CUdeviceptr a = 0;
        assert_cu_ok(cuMemAlloc(&a, n));
        assert_cu_ok(cuMemsetD8(a, static_cast<unsigned char>(0x40 + round), n));
        assert_true(builtins().loaded());
        const auto got = readBack(a, n);
        assert_bytes_all(got.data(), 0x40 + round, n);
        assert_cu_ok(cuMemFree(a));
        CUcontext popped = nullptr;
        assert_cu_ok(cuCtxPopCurrent(&popped));
        assert_cu_ok(cuDevicePrimaryCtxReset(dev));
        assert_cu_ok(cuDevicePrimaryCtxRelease(dev));
    }
}

// The kernels' code gives its memory back with the context: what the
// context takes from video memory returns to where it was.
void test_memory_returns_after_context_destroy(void**) {
    CUdevice dev = 0;
    assert_cu_ok(cuInit(0));
    assert_cu_ok(cuDeviceGet(&dev, 0));
    const uint64_t before = sim::vidmemUsed();
    CUcontext ctx = nullptr;
    assert_cu_ok(cuCtxCreate(&ctx, nullptr, 0, dev));
    CUdeviceptr a = 0;
    assert_cu_ok(cuMemAlloc(&a, kMin * 2));
    assert_cu_ok(cuMemsetD32(a, 7, kMin / 2));
    assert_cu_ok(cuCtxSynchronize());
    assert_true(builtins().loaded());
    assert_cu_ok(cuMemFree(a));
    assert_cu_ok(cuCtxDestroy(ctx));
    assert_int_equal(sim::vidmemUsed(), before);
}

}  // namespace

int main() {
    setenv("NVLITE_DEVICE", "sim", 1);
    setenv("NVLITE_KERNEL_COPY_MIN", "4096", 1);
    setenv("NVLITE_KERNEL_FILL_MIN", "4k", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_loaded_lazily_and_once, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_threshold_decides_the_engine, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_copies_odd_sizes_offsets, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_fills_odd_sizes_offsets, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_2d_and_3d_between_device_memory, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_shapes_pick_their_kernel, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_host_memory_never_goes_to_a_kernel, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_order_across_streams_and_engines, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_teardown(test_reloaded_after_primary_reset, ts_check_no_current_context),
        cmocka_unit_test_teardown(test_memory_returns_after_context_destroy, ts_check_no_current_context),
    };
    return cmocka_run_group_tests_name("builtin_sim", tests, nullptr, nullptr);
}
