// A copy-engine fault on the real GPU. No public call makes the copy engine
// touch an unmapped address (cuMemcpy* check their pointers first, as
// libcuda does), so this test reaches one level down: it submits a copy to
// an address nothing maps on the context's legacy stream's copy channel, the
// way the library's own copies are submitted. Then everything is public API:
// the next synchronising call reports the fault within a second, the error
// sticks to the context, and a new context copies correctly.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "core/context.h"
#include "core/stream.h"
#include "hw/copy_engine.h"
#include "support/test_support.h"

using namespace nvl;

namespace {

// Far above anything the library maps (its GPU addresses lie below 2^40).
constexpr uint64_t kUnmapped = 1ull << 47;
constexpr double kPromptSeconds = 1.0;

void copyFault(CUresult expected, bool toUnmapped) {
    const char* why = nullptr;
    if (!ts_have_real_gpu(&why)) ts_skip("no real GPU: %s", why);
    CUdevice dev = 0;
    assert_cu_ok(cuDeviceGet(&dev, 0));
    CUcontext c = nullptr;
    assert_cu_ok(cuCtxCreate(&c, nullptr, 0, dev));
    CUdeviceptr buf = 0;
    const size_t n = (1u << 20) + 37;
    assert_cu_ok(cuMemAlloc(&buf, n));
    assert_cu_ok(cuMemsetD8(buf, 0x3c, n));
    assert_cu_ok(cuCtxSynchronize());

    core::Context* ctx = core::Context::fromHandle(c);
    assert_non_null(ctx);
    core::Stream& st = ctx->nullStream();
    const uint64_t dst = toUnmapped ? kUnmapped : buf, src = toUnmapped ? buf : kUnmapped;
    const double t0 = ts_now();
    Result<uint64_t> r = st.submit(st.copyChannel(), hw::copyDwords(n),
                                   [&](hw::PushWriter& w) { hw::copy(w, dst, src, n); });
    assert_true(r.ok());
    assert_cu(expected, cuCtxSynchronize());
    const double took = ts_now() - t0;
    print_message("copy %s an unmapped address: %s after %.3f ms\n", toUnmapped ? "to" : "from", ts_cu_name(expected),
                  took * 1e3);
    if (took > kPromptSeconds) fail_msg("the fault took %.3f s to be reported", took);
    // Sticky, as in libcuda.
    CUdeviceptr p = 0;
    assert_cu(expected, cuMemAlloc(&p, 4096));
    unsigned char host[64];
    assert_cu(expected, cuMemcpyDtoH(host, buf, sizeof host));
    assert_cu(expected, cuCtxSynchronize());
    assert_cu_ok(cuCtxDestroy(c));

    // A new context works.
    assert_cu_ok(cuCtxCreate(&c, nullptr, 0, dev));
    std::vector<unsigned char> in(n), out(n);
    ts_fill_random(in.data(), n, toUnmapped ? 0xcf01 : 0xcf02);
    CUdeviceptr d = 0;
    assert_cu_ok(cuMemAlloc(&d, n));
    assert_cu_ok(cuMemcpyHtoD(d, in.data(), n));
    assert_cu_ok(cuMemcpyDtoH(out.data(), d, n));
    assert_bytes_equal(in.data(), out.data(), n);
    assert_cu_ok(cuMemFree(d));
    assert_cu_ok(cuCtxDestroy(c));
}

void test_hw_copy_to_unmapped(void**) { copyFault(CUDA_ERROR_ILLEGAL_ADDRESS, true); }
void test_hw_copy_from_unmapped(void**) { copyFault(CUDA_ERROR_ILLEGAL_ADDRESS, false); }

}  // namespace

int main() {
    if (cuInit(0) != CUDA_SUCCESS) {
        print_error("cuInit failed\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hw_copy_to_unmapped),
        cmocka_unit_test(test_hw_copy_from_unmapped),
    };
    return cmocka_run_group_tests_name("hw_copy_fault", tests, nullptr, nullptr);
}
