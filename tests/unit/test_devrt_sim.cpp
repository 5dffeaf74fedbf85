// Device printf, assert and malloc/free on the simulated driver
// (NVLITE_DEVICE=sim, set by main): the simulator records launches without
// running kernels, so these tests check what the library does around them.
//   - a module calling the runtime points at the context's State: the
//     kernel's QMD registers cover the callee, its constant bank 4 holds the
//     addresses of the runtime's code placed in the module, the module's
//     State slot holds the context's State, which describes the FIFO and heap;
//   - records written into the FIFO by hand (as the device writes them) come
//     out at each synchronising call (context, stream, event, blocking copies,
//     module load, context destruction), on stdout, and not before;
//   - a trap after a failed device assert is CUDA_ERROR_ASSERT, sticky, with
//     libcuda's message; a trap alone stays CUDA_ERROR_LAUNCH_FAILED;
//   - the limits (CU_LIMIT_PRINTF_FIFO_SIZE, CU_LIMIT_MALLOC_HEAP_SIZE, core
//     side): defaults, new buffers before a kernel used them, refusal after.
// Kernels are compiled with NVRTC (the tests skip without it).
#include <bit>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/context.h"
#include "core/devrt.h"
#include "core/module.h"
#include "defs/qmd_v04.h"
#include "devrt_records.h"
#include "kdrv/sim/sim_control.h"
#include "loader/devrt_link.h"
#include "nvlite/nvlite.h"
#include "support/test_support.h"

namespace sim = nvl::kdrv::sim;
namespace nv = nvl::nv;
using nvl::core::DeviceRuntime;
using namespace devrttest;

namespace {

const char kSource[] =
    "extern \"C\" {\n"
    "__global__ void k_printf(int a, double b) { printf(\"a=%d b=%f\\n\", a, b); }\n"
    "__global__ void k_assert(int n) { assert(threadIdx.x < n); }\n"
    "__global__ void k_heap(int n, int** out) { out[threadIdx.x] = (int*)malloc(n); free(out[threadIdx.x] + 1); }\n"
    "__global__ void k_plain(int* out) { out[threadIdx.x] = threadIdx.x; }\n"
    "}\n";
const char kOtherSource[] = "extern \"C\" __global__ void other(int* p) { p[0] = 1; }\n";
const char kPrintfOnlySource[] = "extern \"C\" __global__ void only_printf(int v) { printf(\"v=%d\\n\", v); }\n";

DeviceRuntime& runtime() {
    CUcontext c = nullptr;
    assert_cu_ok(cuCtxGetCurrent(&c));
    nvl::core::Context* ctx = nvl::core::Context::fromHandle(c);
    assert_non_null(ctx);
    return ctx->devrt();
}

uint64_t q(const sim::LaunchRecord& r, nv::MultiWordField f) { return nv::qmdGet(r.qmd.data(), f); }

sim::LaunchRecord launchOne(CUfunction f, void** params, unsigned threads = 32) {
    assert_cu_ok(cuCtxSynchronize());
    sim::clearLaunches();
    assert_cu_ok(cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr));
    assert_cu_ok(cuCtxSynchronize());
    auto log = sim::launches();
    if (log.size() != 1) fail_msg("the sim recorded %zu launches, expected 1", log.size());
    return log[0];
}

// The runtime's FIFO as the device sees it, written by hand.
RingWriter fifoWriter() {
    DeviceRuntime::Buffers b = runtime().buffers();
    assert_non_null(b.ring);
    RingWriter w;
    w.ring = b.ring;
    w.bytes = b.ringBytes;
    w.head = __atomic_load_n(&b.host->tail, __ATOMIC_ACQUIRE);
    return w;
}

// stdout into a temporary file while the object lives.
class CaptureStdout {
public:
    CaptureStdout() {
        fflush(stdout);
        char path[] = "/tmp/nvlite_devrt_XXXXXX";
        fd_ = mkstemp(path);
        assert_true(fd_ >= 0);
        unlink(path);
        saved_ = dup(1);
        assert_true(saved_ >= 0);
        assert_true(dup2(fd_, 1) == 1);
    }
    // Restores stdout and returns what was written.
    std::string finish() {
        fflush(stdout);
        dup2(saved_, 1);
        close(saved_);
        std::string text;
        char buf[4096];
        lseek(fd_, 0, SEEK_SET);
        for (ssize_t n; (n = read(fd_, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
        close(fd_);
        fd_ = -1;
        return text;
    }
    ~CaptureStdout() {
        if (fd_ >= 0) finish();
    }

private:
    int fd_ = -1, saved_ = -1;
};

CUmodule loadModule() { return ts_source_module(kSource, "devrt_sim.cu"); }

// ------------------------------------------------------------------ linking

void test_module_points_at_context_state(void**) {
    CUmodule m = loadModule();
    const DeviceRuntime::Buffers b = runtime().buffers();
    assert_true(b.state != 0 && b.ring && b.host);
    assert_int_equal(b.ringBytes, std::bit_floor(DeviceRuntime::kDefaultFifoBytes));
    assert_int_equal(b.heapBytes, DeviceRuntime::kDefaultHeapBytes);
    // The State as the device starts from.
    const nvl::devrt::State* st = b.stateCpu;
    assert_int_equal(st->head, 0);
    assert_int_equal(st->ringAddress, reinterpret_cast<uint64_t>(b.ring));
    assert_int_equal(st->ringBytes, b.ringBytes);
    assert_int_equal(st->hostBlock, reinterpret_cast<uint64_t>(b.host));
    assert_int_equal(st->heapAddress, b.heap);
    assert_int_equal(st->heapBytes, b.heapBytes);
    assert_int_equal(st->heapTop, 0);

    auto lib = nvl::loader::devrt::libraryFor(ts_device_arch());
    assert_true(lib.ok());
    const nvl::loader::devrt::Library::Function* vprintf = (*lib)->find("vprintf");
    int a = 5;
    double d = 2.5;
    void* params[] = {&a, &d};
    CUfunction kp = ts_get_function(m, "k_printf");
    const sim::LaunchRecord r = launchOne(kp, params);
    assert_true(q(r, nv::NVCBC0_QMDV04_00_REGISTER_COUNT) >= vprintf->registers);
    // Bank 4 of the launch: one of its words is the runtime's vprintf, inside the module.
    assert_true(q(r, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID(4)));
    const uint64_t bank = ((q(r, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(4)) << 32) |
                           q(r, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(4)))
                          << 6;
    const uint64_t bankBytes = q(r, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_SIZE_SHIFTED4(4)) << 4;
    // Module images are in memory the CPU sees at the same address (the
    // small-allocation chunks are mapped through BAR1, on the sim too).
    std::vector<uint64_t> words(bankBytes / 8);
    memcpy(words.data(), reinterpret_cast<const void*>(bank), words.size() * 8);
    const nvl::loader::Kernel& k = nvl::core::Function::fromHandle(kp)->kernel();
    const uint64_t imageBase = r.programAddress - k.textOffset;
    uint64_t callee = 0;
    for (uint64_t w : words)
        if (w > r.programAddress && w < r.programAddress + (1u << 20)) callee = w;
    if (!callee) fail_msg("no word of constant bank 4 points into the module's code");
    const uint64_t runtimeBase = callee - vprintf->offset;
    assert_int_equal((runtimeBase - imageBase) % 256, 0);
    // The code there is the runtime's (bytes no relocation touched), and its slot holds the State.
    std::vector<uint8_t> code(256);
    memcpy(code.data(), reinterpret_cast<const void*>(callee), code.size());
    size_t same = 0;
    for (size_t i = 0; i < code.size(); ++i) same += code[i] == (*lib)->block[vprintf->offset + i];
    assert_true(same >= code.size() - 64);
    uint64_t slot = 0;
    memcpy(&slot, reinterpret_cast<const void*>(runtimeBase + (*lib)->stateSlot), 8);
    assert_int_equal(slot, b.state);

    // A kernel that calls nothing keeps its own registers.
    CUdeviceptr out = ts_dev_alloc(4096);
    void* plainParams[] = {&out};
    CUfunction kn = ts_get_function(m, "k_plain");
    const sim::LaunchRecord rn = launchOne(kn, plainParams);
    assert_int_equal(q(rn, nv::NVCBC0_QMDV04_00_REGISTER_COUNT), nvl::core::Function::fromHandle(kn)->kernel().registers);
    assert_true(nvl::core::Function::fromHandle(kn)->kernel().registers < vprintf->registers);
    // A second module in the context shares the State.
    CUmodule m2 = loadModule();
    assert_int_equal(runtime().buffers().state, b.state);
    assert_cu_ok(cuModuleUnload(m2));
    assert_cu_ok(cuModuleUnload(m));
}

// A module without calls to the runtime allocates nothing.
void test_plain_module_needs_nothing(void**) {
    CUmodule m = ts_source_module(kOtherSource, "devrt_other.cu");
    assert_null(runtime().buffers().ring);
    assert_cu_ok(cuModuleUnload(m));
}

// The heap comes with the first module whose kernels call malloc/free; its
// State fields are written alone (a printf kernel may be running: the FIFO's
// reservation counter is left as it is).
void test_heap_made_on_first_malloc_module(void**) {
    CUmodule p = ts_source_module(kPrintfOnlySource, "devrt_printf_only.cu");
    DeviceRuntime::Buffers b = runtime().buffers();
    assert_non_null(b.ring);
    assert_int_equal(b.heap, 0);
    assert_int_equal(b.stateCpu->heapAddress, 0);
    assert_int_equal(b.stateCpu->heapBytes, 0);
    // As if a kernel had reserved FIFO space meanwhile.
    __atomic_store_n(&b.stateCpu->head, uint64_t{4242}, __ATOMIC_RELEASE);
    CUmodule m = loadModule();  // k_heap calls malloc/free
    b = runtime().buffers();
    assert_true(b.heap != 0);
    assert_int_equal(b.heapBytes, DeviceRuntime::kDefaultHeapBytes);
    assert_int_equal(b.stateCpu->heapAddress, b.heap);
    assert_int_equal(b.stateCpu->heapBytes, b.heapBytes);
    assert_int_equal(b.stateCpu->heapTop, 0);
    assert_int_equal(__atomic_load_n(&b.stateCpu->head, __ATOMIC_ACQUIRE), 4242);
    __atomic_store_n(&b.stateCpu->head, uint64_t{0}, __ATOMIC_RELEASE);
    assert_cu_ok(cuModuleUnload(m));
    assert_cu_ok(cuModuleUnload(p));
}

// ------------------------------------------------------------------ output

void test_output_at_synchronising_calls(void**) {
    CUmodule m = loadModule();
    nvl::core::fifo::StringOutput out;
    runtime().setOutput(&out);
    RingWriter w = fifoWriter();
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent e = ts_event_new(0);
    CUdeviceptr d = ts_dev_alloc(64);
    std::vector<uint8_t> host(64);
    std::string expected;

    auto step = [&](const char* what, auto call) {
        const std::string line = std::string("after ") + what + " %d\n";
        Items it;
        it.string(line);
        it.number(static_cast<int32_t>(expected.size()));
        w.put(nvl::devrt::kRecordPrintf, it);
        assert_cu_ok(call());
        expected += "after " + std::string(what) + " " + std::to_string(expected.size()) + "\n";
        if (out.text() != expected) fail_msg("%s: printed '%s', expected '%s'", what, out.text().c_str(), expected.c_str());
    };
    step("cuCtxSynchronize", [] { return cuCtxSynchronize(); });
    step("cuStreamSynchronize", [&] { return cuStreamSynchronize(s); });
    step("cuEventSynchronize", [&] {
        CUresult r = cuEventRecord(e, s);
        return r == CUDA_SUCCESS ? cuEventSynchronize(e) : r;
    });
    step("cuMemcpyDtoH", [&] { return cuMemcpyDtoH(host.data(), d, host.size()); });
    step("cuMemcpyHtoD", [&] { return cuMemcpyHtoD(d, host.data(), host.size()); });
    step("cuModuleLoadData", [&] {
        CUmodule other = ts_source_module(kOtherSource, "devrt_other.cu");
        return cuModuleUnload(other);
    });

    // Not a synchronising call: nothing comes out until one.
    w.put(nvl::devrt::kRecordPrintf, text("held back\n"));
    assert_cu_ok(cuMemcpyDtoHAsync(host.data(), d, host.size(), s));
    assert_string_equal(out.text().c_str(), expected.c_str());
    assert_cu_ok(cuStreamSynchronize(s));
    expected += "held back\n";
    assert_string_equal(out.text().c_str(), expected.c_str());
    // The host gave the space back.
    assert_int_equal(__atomic_load_n(&runtime().buffers().host->tail, __ATOMIC_ACQUIRE), w.head);

    runtime().setOutput(nullptr);
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuEventDestroy(e));
    assert_cu_ok(cuModuleUnload(m));
}

// The library's own output goes to stdout, after what the program wrote.
void test_output_goes_to_stdout(void**) {
    CUmodule m = loadModule();
    RingWriter w = fifoWriter();
    CaptureStdout capture;
    printf("program line\n");  // buffered by stdio: comes first
    Items it;
    it.string("kernel says %s %5.1f|%x\n");
    it.string("hi");
    it.number(3.25);
    it.number(uint64_t{255});
    w.put(nvl::devrt::kRecordPrintf, it);
    const CUresult r = cuCtxSynchronize();
    const std::string text = capture.finish();
    assert_cu_ok(r);
    assert_string_equal(text.c_str(), "program line\nkernel says hi   3.2|ff\n");
    assert_cu_ok(cuModuleUnload(m));
}

// Records still in the FIFO when the context goes are printed.
void test_output_at_context_destroy(void** state) {
    CUmodule m = loadModule();
    (void)m;
    nvl::core::fifo::StringOutput out;
    runtime().setOutput(&out);
    RingWriter w = fifoWriter();
    w.put(nvl::devrt::kRecordPrintf, text("last words\n"));
    CUcontext c = ts_fx(state)->ctx;
    DeviceRuntime& rt = runtime();
    assert_cu_ok(cuCtxDestroy(c));
    ts_fx(state)->ctx = nullptr;
    assert_string_equal(out.text().c_str(), "last words\n");
    rt.setOutput(nullptr);
}

// ------------------------------------------------------------------ assert

void test_assert_is_cuda_error_assert(void** state) {
    CUmodule m = loadModule();
    nvl::core::fifo::StringOutput out;
    runtime().setOutput(&out);
    RingWriter w = fifoWriter();
    // What __assertfail does before its trap: a record, the flag.
    const uint32_t block[3] = {1, 0, 0}, thread[3] = {28, 0, 0};
    w.put(nvl::devrt::kRecordAssert, assertion("simpleAssert.cu", 38, "void testKernel(int)", "gtid < N", block, thread));
    __atomic_store_n(&runtime().buffers().host->asserted, 1u, __ATOMIC_RELEASE);
    assert_cu_ok(nvliteSimInjectFault(NVLITE_SIM_FAULT_LAUNCH_TRAP));
    int n = 60;
    void* params[] = {&n};
    assert_cu_ok(cuLaunchKernel(ts_get_function(m, "k_assert"), 2, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
    assert_cu(CUDA_ERROR_ASSERT, cuCtxSynchronize());
    assert_string_equal(out.text().c_str(),
                        "simpleAssert.cu:38: void testKernel(int): block: [1,0,0], thread: [28,0,0] Assertion `gtid < "
                        "N` failed.\n");
    // Sticky, as in libcuda.
    CUdeviceptr p = 0;
    assert_cu(CUDA_ERROR_ASSERT, cuMemAlloc(&p, 64));
    assert_cu(CUDA_ERROR_ASSERT, cuCtxSynchronize());
    DeviceRuntime& rt = runtime();
    rt.setOutput(nullptr);
    // A new context works.
    assert_cu_ok(cuCtxDestroy(ts_fx(state)->ctx));
    ts_fx(state)->ctx = nullptr;
    CUcontext fresh = nullptr;
    assert_cu_ok(cuCtxCreate(&fresh, nullptr, 0, ts_fx(state)->dev));
    ts_fx(state)->ctx = fresh;
    CUmodule again = loadModule();
    int a = 1;
    double d = 0;
    void* pp[] = {&a, &d};
    assert_cu_ok(cuLaunchKernel(ts_get_function(again, "k_printf"), 1, 1, 1, 1, 1, 1, 0, nullptr, pp, nullptr));
    assert_cu_ok(cuCtxSynchronize());
    assert_int_equal(runtime().buffers().host->asserted, 0);
}

// A trap without a failed assert stays a launch failure.
void test_trap_alone_is_launch_failed(void**) {
    CUmodule m = loadModule();
    assert_cu_ok(nvliteSimInjectFault(NVLITE_SIM_FAULT_LAUNCH_TRAP));
    int n = 60;
    void* params[] = {&n};
    assert_cu_ok(cuLaunchKernel(ts_get_function(m, "k_assert"), 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
    assert_cu(CUDA_ERROR_LAUNCH_FAILED, cuCtxSynchronize());
    assert_cu(CUDA_ERROR_LAUNCH_FAILED, cuCtxSynchronize());
}

// ------------------------------------------------------------------ limits

void test_limits(void**) {
    DeviceRuntime& rt = runtime();
    assert_int_equal(rt.fifoLimit(), 8650752);  // libcuda 580's defaults
    assert_int_equal(rt.heapLimit(), 8u << 20);
    // Before any module: only remembered.
    assert_int_equal(rt.setFifoLimit((600u << 10) + 5).code(), CUDA_SUCCESS);
    assert_int_equal(rt.setHeapLimit((5u << 20) + 5).code(), CUDA_SUCCESS);
    assert_null(rt.buffers().ring);
    CUmodule m = loadModule();
    DeviceRuntime::Buffers b = rt.buffers();
    assert_int_equal(rt.fifoLimit(), (600u << 10) + 5);
    assert_int_equal(b.ringBytes, 512u << 10);  // the largest power of two the limit holds
    assert_int_equal(b.heapBytes, (5u << 20) + 5);
    assert_int_equal(b.stateCpu->ringBytes, 512u << 10);
    // Loaded, nothing launched yet: new buffers, the same State.
    assert_int_equal(rt.setFifoLimit(3u << 20).code(), CUDA_SUCCESS);
    assert_int_equal(rt.setHeapLimit(6u << 20).code(), CUDA_SUCCESS);
    DeviceRuntime::Buffers c = rt.buffers();
    assert_int_equal(c.state, b.state);
    assert_int_equal(c.ringBytes, 2u << 20);
    assert_int_equal(c.stateCpu->ringBytes, 2u << 20);
    assert_int_equal(c.stateCpu->ringAddress, reinterpret_cast<uint64_t>(c.ring));
    assert_int_equal(c.stateCpu->heapBytes, 6u << 20);
    assert_int_equal(c.stateCpu->heapAddress, c.heap);
    // Beyond what the runtime addresses.
    assert_int_equal(rt.setHeapLimit(nvl::devrt::kMaxHeapBytes + 1).code(), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(rt.heapLimit(), 6u << 20);
    // A printf kernel launched: the FIFO is fixed, the heap not yet.
    int a = 1;
    double d = 1;
    void* pp[] = {&a, &d};
    launchOne(ts_get_function(m, "k_printf"), pp);
    assert_int_equal(rt.setFifoLimit(1u << 20).code(), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(rt.fifoLimit(), 3u << 20);
    assert_int_equal(rt.setHeapLimit(7u << 20).code(), CUDA_SUCCESS);
    assert_int_equal(rt.buffers().stateCpu->heapBytes, 7u << 20);
    // A malloc kernel launched: the heap is fixed too.
    CUdeviceptr out = ts_dev_alloc(32 * 8);
    int n = 24;
    void* hp[] = {&n, &out};
    launchOne(ts_get_function(m, "k_heap"), hp);
    assert_int_equal(rt.setHeapLimit(4u << 20).code(), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(rt.heapLimit(), 7u << 20);
    assert_cu_ok(cuModuleUnload(m));
}

void test_limits_reset_with_primary_context(void**) {
    CUdevice dev = 0;
    assert_cu_ok(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    assert_cu_ok(cuDevicePrimaryCtxRetain(&primary, dev));
    assert_cu_ok(cuCtxPushCurrent(primary));
    assert_int_equal(runtime().setFifoLimit(1234567).code(), CUDA_SUCCESS);
    assert_int_equal(runtime().setHeapLimit(5u << 20).code(), CUDA_SUCCESS);
    CUmodule m = loadModule();
    assert_int_equal(runtime().buffers().stateCpu->heapBytes, 5u << 20);
    assert_cu_ok(cuModuleUnload(m));
    CUcontext popped = nullptr;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_cu_ok(cuDevicePrimaryCtxReset(dev));
    assert_cu_ok(cuDevicePrimaryCtxRetain(&primary, dev));
    assert_cu_ok(cuCtxPushCurrent(primary));
    assert_int_equal(runtime().fifoLimit(), DeviceRuntime::kDefaultFifoBytes);
    assert_int_equal(runtime().heapLimit(), DeviceRuntime::kDefaultHeapBytes);
    assert_null(runtime().buffers().ring);
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_cu_ok(cuDevicePrimaryCtxRelease(dev));
}

}  // namespace

int main() {
    setenv("NVLITE_DEVICE", "sim", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_module_points_at_context_state, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_plain_module_needs_nothing, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_heap_made_on_first_malloc_module, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_output_at_synchronising_calls, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_output_goes_to_stdout, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_output_at_context_destroy, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_assert_is_cuda_error_assert, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_trap_alone_is_launch_failed, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_limits, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_limits_reset_with_primary_context, ts_ctx_setup, ts_ctx_teardown),
    };
    return cmocka_run_group_tests_name("devrt_sim", tests, nullptr, nullptr);
}
