// The checked build (NVLITE_CHECKED, what every test links): NVL_ASSERT stops
// the process on a broken invariant of nvlite's own code — a value that does
// not fit its field (Qmd::set, BitField::value), a push past the space
// reserved for it, a Result read on an error, an error Result made from a
// success — and Result<T> works for types without a default constructor. Each broken invariant runs in a forked child, which
// must die of SIGABRT with the assertion's message.
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "common/assert.h"
#include "common/status.h"
#include "defs/bits.h"
#include "hw/push_buffer.h"
#include "hw/qmd.h"

// cmocka last: it declares its functions without extern "C".
#include <setjmp.h>
#include <stdarg.h>
extern "C" {
#include <cmocka.h>
}

using namespace nvl;

namespace {

// Runs 'body' in a child; returns what it wrote to stderr, and whether it
// died of SIGABRT.
template <class Body>
std::pair<bool, std::string> runChild(Body body) {
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    fflush(nullptr);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(pipefd[1], STDERR_FILENO);
        close(pipefd[0]);
        body();
        _exit(0);  // the body was supposed not to return
    }
    close(pipefd[1]);
    std::string err;
    char buf[512];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof buf)) > 0) err.append(buf, static_cast<size_t>(n));
    close(pipefd[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return {WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, err};
}

template <class Body>
void expectAssertion(const char* what, Body body) {
    auto [aborted, err] = runChild(body);
    if (!aborted || err.find("nvlite: assertion failed") == std::string::npos) {
        print_error("%s: expected an assertion, got %s (stderr: %s)\n", what, aborted ? "SIGABRT" : "no abort",
                    err.c_str());
        fail();
    }
}

struct NoDefault {
    explicit NoDefault(int v) : value(v) {}
    int value;
};

Result<NoDefault> makeNoDefault(bool ok) {
    if (!ok) return CUDA_ERROR_INVALID_VALUE;
    return NoDefault(42);
}

Status useNoDefault(bool ok, int* out) {
    NVL_ASSIGN_OR_RETURN(NoDefault v, makeNoDefault(ok));
    *out = v.value;
    return kOk;
}

void test_tests_are_checked(void**) {
    // Every test links the checked build; without it the tests below prove nothing.
    assert_true(kChecked);
}

void test_result_without_default_constructor(void**) {
    Result<NoDefault> good = makeNoDefault(true);
    assert_true(good.ok());
    assert_int_equal(good.value().value, 42);
    assert_int_equal(good->value, 42);
    assert_int_equal(good.status().code(), CUDA_SUCCESS);
    Result<NoDefault> bad = makeNoDefault(false);
    assert_false(bad.ok());
    assert_int_equal(bad.status().code(), CUDA_ERROR_INVALID_VALUE);
    int out = -7;
    assert_int_equal(useNoDefault(true, &out).code(), CUDA_SUCCESS);
    assert_int_equal(out, 42);
    out = -7;
    assert_int_equal(useNoDefault(false, &out).code(), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(out, -7);
}

// Counts the objects alive: Result must construct and destroy its value
// exactly once through copies, moves and assignments.
struct Counted {
    static inline int live = 0;
    std::string text;  // not trivially copyable
    explicit Counted(std::string t) : text(std::move(t)) { ++live; }
    Counted(const Counted& o) : text(o.text) { ++live; }
    Counted(Counted&& o) noexcept : text(std::move(o.text)) { ++live; }
    ~Counted() { --live; }
};

void test_result_copies_moves_and_assignments(void**) {
    {
        Result<Counted> a = Counted("first value, long enough to live on the heap");
        assert_int_equal(Counted::live, 1);
        Result<Counted> b = a;  // copy
        assert_int_equal(Counted::live, 2);
        Result<Counted> c = std::move(a);  // move
        assert_int_equal(Counted::live, 3);
        assert_string_equal(c->text.c_str(), "first value, long enough to live on the heap");
        Result<Counted> e = CUDA_ERROR_NOT_READY;
        assert_int_equal(Counted::live, 3);
        e = b;  // a value over an error
        assert_true(e.ok());
        assert_int_equal(Counted::live, 4);
        b = Result<Counted>(CUDA_ERROR_INVALID_HANDLE);  // an error over a value
        assert_false(b.ok());
        assert_int_equal(b.status().code(), CUDA_ERROR_INVALID_HANDLE);
        assert_int_equal(Counted::live, 3);
        c = Result<Counted>(Counted("second"));  // a value over a value
        assert_string_equal(c->text.c_str(), "second");
        assert_int_equal(Counted::live, 3);
    }
    assert_int_equal(Counted::live, 0);
}

void test_result_value_of_an_error_asserts(void**) {
    expectAssertion("Result::value() on an error", [] {
        Result<NoDefault> bad = makeNoDefault(false);
        volatile int v = bad.value().value;
        (void)v;
    });
    expectAssertion("Result::operator-> on an error", [] {
        Result<int> bad = CUDA_ERROR_OUT_OF_MEMORY;
        volatile int v = *bad;
        (void)v;
    });
}

void test_result_from_success_status_asserts(void**) {
    expectAssertion("Result<T> from a success Status", [] {
        Result<int> r = Status(CUDA_SUCCESS);
        (void)r;
    });
}

void test_bit_field_value_must_fit(void**) {
    constexpr nv::BitField f{13, 6};  // 8 bits
    static_assert(f.value(0xff) == 0x3fc0u);  // fits: same as before the checks
    volatile uint64_t fits = 0xa5, tooWide = 0x1a5;
    assert_int_equal(f.value(fits), 0xa5u << 6);
    expectAssertion("BitField::value too wide", [&] { (void)f.value(tooWide); });
}

void test_qmd_set_must_fit(void**) {
    hw::Qmd q;
    q.set(nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0, 0xffff);  // 16 bits: fits
    q.set(nv::NVCBC0_QMDV04_00_GRID_WIDTH, 0xffffffffu);
    const uint8_t* image = q.bytes();
    assert_int_equal(nv::qmdGet(image, nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0), 0xffff);
    assert_int_equal(nv::qmdGet(image, nv::NVCBC0_QMDV04_00_GRID_WIDTH), 0xffffffffu);
    expectAssertion("Qmd::set of a value wider than the field", [] {
        hw::Qmd q2;
        volatile uint32_t block = 0x10000;  // CTA_THREAD_DIMENSION0 is 16 bits
        q2.set(nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0, block);
    });
    expectAssertion("Qmd::set of a register count over 9 bits", [] {
        hw::Qmd q2;
        volatile uint32_t registers = 512;
        q2.set(nv::NVCBC0_QMDV04_00_REGISTER_COUNT, registers);
    });
}

void test_push_stays_in_its_budget(void**) {
    uint32_t buf[8] = {};
    hw::PushWriter w(buf, 3);
    w.inc(nv::NVC8B5_LINE_LENGTH_IN(7u), nv::NVC8B5_LINE_COUNT(1u));  // exactly the 3 dwords reserved
    assert_int_equal(w.remaining(), 0);
    assert_int_equal(buf[1], 7);
    expectAssertion("a push past the reserved end", [] {
        uint32_t small[8] = {};
        hw::PushWriter w2(small, 4);
        w2.inc(nv::NVC86F_SEM_ADDR_LO(1u), nv::NVC86F_SEM_ADDR_HI(2u), nv::NVC86F_SEM_PAYLOAD_LO(3u),
               nv::NVC86F_SEM_PAYLOAD_HI(4u));  // 5 dwords into 4
    });
    expectAssertion("an immediate value over 13 bits", [] {
        uint32_t small[2] = {};
        hw::PushWriter w2(small, 2);
        volatile uint32_t v = 0x2000;
        w2.immediate(nv::NVC86F_SET_REFERENCE(v));
    });
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tests_are_checked),
        cmocka_unit_test(test_result_without_default_constructor),
        cmocka_unit_test(test_result_copies_moves_and_assignments),
        cmocka_unit_test(test_result_value_of_an_error_asserts),
        cmocka_unit_test(test_result_from_success_status_asserts),
        cmocka_unit_test(test_bit_field_value_must_fit),
        cmocka_unit_test(test_qmd_set_must_fit),
        cmocka_unit_test(test_push_stays_in_its_budget),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
