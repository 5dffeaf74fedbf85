// NVIDIA's JIT runs in a worker process (lib/loader/jit_process.h): its
// crashes, stalls and hunger end the worker and fail the call, never the
// program. A stand-in libnvJitLink (tests/support/fake_nvjitlink.c)
// misbehaves on request; the real one checks that good work still works,
// through the nvlite-jit program and through the fork fallback.
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "loader/image.h"
#include "loader/jit.h"
#include "loader/jit_options.h"
#include "loader/jit_process.h"
#include "loader/linker.h"
#include "support/test_support.h"
#include "support/ts_kernels.h"

using namespace nvl;
using namespace nvl::loader;

namespace {

std::string buildDir() {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return "";
    std::string p(self, static_cast<size_t>(n));
    p = p.substr(0, p.rfind('/'));      // build/tests/unit
    return p.substr(0, p.rfind('/'));   // build/tests
}
std::string fakeLibrary() { return buildDir() + "/support/libfake_nvjitlink.so"; }
std::string helperProgram() { return buildDir() + "/../lib/nvlite-jit"; }

// The stand-in library for the workers started while it lives.
struct Fake {
    Fake() {
        if (access(fakeLibrary().c_str(), R_OK) != 0) fail_msg("%s is missing (make builds it)", fakeLibrary().c_str());
        jitproc::setLibraryPathForTesting(fakeLibrary().c_str());
    }
    ~Fake() { jitproc::setLibraryPathForTesting(nullptr); }
};

// An environment variable for the life of the object.
struct Env {
    Env(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
    ~Env() { unsetenv(name); }
    const char* name;
};

std::string ptxWith(const char* word) {
    return std::string(".version 7.0\n.target sm_80\n.address_size 64\n// ") + word +
           "\n.visible .entry k()\n{\n    ret;\n}\n";
}

double seconds() { return static_cast<double>(monotonicNs()) / 1e9; }

Result<std::vector<uint8_t>> compile(const char* word) {
    JitOptions jit;
    return compilePtx(ptxWith(word), 90, jit);
}

void expectFailure(const char* word, CUresult expected, double maxSeconds) {
    const double t0 = seconds();
    auto r = compile(word);
    const double took = seconds() - t0;
    if (r.status().code() != expected)
        fail_msg("%s: got %d, expected %d", word, r.status().code(), expected);
    if (took > maxSeconds) fail_msg("%s: took %.1f s (limit %.1f s)", word, took, maxSeconds);
}

void expectFine() {
    auto r = compile("fine");
    assert_true(r.ok());
    assert_int_equal(r->size(), 16);
    assert_int_equal((*r)[7], 0x5a);
}

bool sanitized() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
}

void test_crashes_fail_the_call(void**) {
    Fake fake;
    for (const char* word : {"CRASH", "FPE", "EXIT"}) {
        expectFailure(word, CUDA_ERROR_INVALID_PTX, 10);
        expectFine();  // and the next compile works
    }
}

void test_stalls_end_at_the_time_limit(void**) {
    Fake fake;
    Env limit("NVLITE_JIT_TIME_LIMIT", "1");
    for (const char* word : {"STALL", "SPIN"}) {
        expectFailure(word, CUDA_ERROR_INVALID_PTX, 6);
        expectFine();
    }
}

void test_memory_hog_ends_at_the_limit(void**) {
    if (sanitized()) ts_skip("sanitizer runtimes need more address space than the limit allows: no limit there");
    Fake fake;
    Env limit("NVLITE_JIT_MEMORY_LIMIT", "512");
    expectFailure("HOG", CUDA_ERROR_INVALID_PTX, 30);
    expectFine();
}

void test_linker_session_that_crashes(void**) {
    Fake fake;
    JitOptions jit;
    auto l = Linker::create(9, 0, jit);
    assert_true(l.ok());
    const std::string fine = ptxWith("fine"), crash = ptxWith("CRASH");
    assert_int_equal((*l)->add(CU_JIT_INPUT_PTX, fine.c_str(), fine.size() + 1, "a").code(), CUDA_SUCCESS);
    assert_int_equal((*l)->add(CU_JIT_INPUT_PTX, crash.c_str(), crash.size() + 1, "b").code(), CUDA_ERROR_INVALID_PTX);
    // The session's worker is gone: the link fails, the program goes on.
    assert_false((*l)->complete().ok());
    auto again = Linker::create(9, 0, jit);
    assert_true(again.ok());
    assert_int_equal((*again)->add(CU_JIT_INPUT_PTX, fine.c_str(), fine.size() + 1, "a").code(), CUDA_SUCCESS);
    auto out = (*again)->complete();
    assert_true(out.ok());
    assert_int_equal((*out)->size(), 16);
}

void test_many_threads(void**) {
    Fake fake;
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 6; ++i) {
                const bool crash = (t + i) % 5 == 0;
                auto r = compile(crash ? "CRASH" : "fine");
                if (crash ? r.status().code() != CUDA_ERROR_INVALID_PTX : !r.ok()) ++wrong;
            }
        });
    }
    for (auto& th : threads) th.join();
    assert_int_equal(wrong.load(), 0);
}

// The real nvJitLink, through the nvlite-jit program and through a fork of
// this process (the fallback when the program is missing).
void test_real_jit_both_ways(void**) {
    const char* why = nullptr;
    if (!ts_nvrtc_available(&why)) ts_skip("no CUDA toolkit here (%s)", why);
    static const char kPtx[] =
        ".version 7.0\n.target sm_80\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n{\n    .reg .b64 %rd<3>;\n    ld.param.u64 %rd1, [p];\n"
        "    cvta.to.global.u64 %rd2, %rd1;\n    st.global.u32 [%rd2], 7;\n    ret;\n}\n";
    for (int way = 0; way < 2; ++way) {
        jitproc::stopServerForTesting();
        if (way == 0) {
            if (access(helperProgram().c_str(), X_OK) != 0) fail_msg("%s is missing", helperProgram().c_str());
            setenv("NVLITE_JIT_HELPER", helperProgram().c_str(), 1);
        } else {
            unsetenv("NVLITE_JIT_HELPER");  // this test program has none next to it: the fork fallback
        }
        JitOptions jit;
        auto r = compilePtx(kPtx, 90, jit);
        assert_true(r.ok());
        assert_true(r->size() > 64);
        assert_memory_equal(r->data(), "\x7f" "ELF", 4);
        {
            Fake fake;
            expectFailure("CRASH", CUDA_ERROR_INVALID_PTX, 10);
        }
        auto again = compilePtx(kPtx, 90, jit);
        assert_true(again.ok());
    }
    unsetenv("NVLITE_JIT_HELPER");
    jitproc::stopServerForTesting();
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crashes_fail_the_call),
        cmocka_unit_test(test_stalls_end_at_the_time_limit),
        cmocka_unit_test(test_memory_hog_ends_at_the_limit),
        cmocka_unit_test(test_linker_session_that_crashes),
        cmocka_unit_test(test_many_threads),
        cmocka_unit_test(test_real_jit_both_ways),
    };
    return cmocka_run_group_tests_name("jit_isolation", tests, nullptr, nullptr);
}
