/*
 * printf and assert in the kernels of a runtime-API program (issue 13), built
 * like runtime_basics.cu (static and shared cudart, nvlite as the driver
 * through RPATH). The device runtime nvlite links into modules that call
 * vprintf / __assertfail makes the program's fat binary load and its kernels
 * launch.
 *
 * On a GPU the text a kernel prints appears on the program's stdout at the
 * synchronising call: the test sends stdout to a file around the call and
 * compares the lines; a failed assert makes the context fail with
 * cudaErrorAssert. On the simulated driver kernels are not run: the tests
 * check that the kernels load and their launches complete.
 */
#include <cuda_runtime.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cudart_check.h"

namespace {

// stdout into a file for the length of a call, then its text.
class CapturedStdout {
public:
    CapturedStdout() {
        std::fflush(stdout);
        file_ = std::tmpfile();
        saved_ = dup(1);
        if (file_ && saved_ >= 0) dup2(fileno(file_), 1);
    }
    std::string finish() {
        std::fflush(stdout);
        if (saved_ >= 0) {
            dup2(saved_, 1);
            close(saved_);
            saved_ = -1;
        }
        std::string text;
        if (!file_) return text;
        std::rewind(file_);
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, file_)) > 0) text.append(buf, n);
        std::fclose(file_);
        file_ = nullptr;
        return text;
    }
    ~CapturedStdout() { (void)finish(); }

private:
    FILE* file_ = nullptr;
    int saved_ = -1;
};

__global__ void greet(int tag, float x, const char* word) {
    printf("block %d thread %d: tag %d, x %.2f, %s %c %lld\n", blockIdx.x, threadIdx.x, tag, x, word, 'A' + threadIdx.x,
           -1234567890123ll * (threadIdx.x + 1));
}

__global__ void checkPositive(const int* v, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) assert(v[i] > 0);
}

__device__ char deviceWord[16];

void test_printf_lines(void**) {
    const char word[] = "kernel";
    assert_rt_ok(cudaMemcpyToSymbol(deviceWord, word, sizeof word));
    void* w = nullptr;
    assert_rt_ok(cudaGetSymbolAddress(&w, deviceWord));
    CapturedStdout out;
    greet<<<2, 3>>>(77, 2.5f, static_cast<const char*>(w));
    assert_rt_ok(cudaGetLastError());
    assert_rt_ok(cudaDeviceSynchronize());
    std::string text = out.finish();
    if (onSimulator()) {
        print_message("simulated driver: kernels are not run; nothing printed (checked on a GPU)\n");
        assert_true(text.empty());
        return;
    }
    std::vector<std::string> lines;
    for (size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) lines.push_back(text.substr(at, nl - at));
    std::sort(lines.begin(), lines.end());
    std::vector<std::string> want;
    for (int b = 0; b < 2; ++b)
        for (int t = 0; t < 3; ++t) {
            char line[160];
            std::snprintf(line, sizeof line, "block %d thread %d: tag 77, x 2.50, kernel %c %lld", b, t, 'A' + t,
                          -1234567890123ll * (t + 1));
            want.push_back(line);
        }
    std::sort(want.begin(), want.end());
    if (lines != want) fail_msg("the kernels printed:\n%s", text.c_str());
}

// A failed device assert: cudaErrorAssert at the next synchronisation, sticky
// until cudaDeviceReset.
void test_assert(void**) {
    int* v = nullptr;
    const int n = 300;
    std::vector<int> host(n, 5);
    host[217] = -1;
    assert_rt_ok(cudaMalloc(&v, n * sizeof(int)));
    assert_rt_ok(cudaMemcpy(v, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    checkPositive<<<3, 128>>>(v, n);
    assert_rt_ok(cudaGetLastError());
    if (onSimulator()) {
        assert_rt_ok(cudaDeviceSynchronize());
        assert_rt_ok(cudaFree(v));
        print_message("simulated driver: kernels are not run; the assert does not fire (checked on a GPU)\n");
        return;
    }
    assert_rt(cudaErrorAssert, cudaDeviceSynchronize());
    assert_rt(cudaErrorAssert, cudaMalloc(&v, 16));
    assert_rt_ok(cudaDeviceReset());
    assert_rt_ok(cudaMalloc(&v, 16));
    assert_rt_ok(cudaFree(v));
}

int clearLastError(void**) {
    (void)cudaGetLastError();
    return 0;
}

}  // namespace

static void onHang(int) {
    static const char msg[] = "runtime_printf: a hang (watchdog expired)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

int main(int, char** argv) {
    signal(SIGALRM, onHang);
    alarm(240);
    const char* name = std::strrchr(argv[0], '/') ? std::strrchr(argv[0], '/') + 1 : argv[0];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_printf_lines, clearLastError),
        cmocka_unit_test_setup(test_assert, clearLastError),
    };
    return cmocka_run_group_tests_name(name, tests, nullptr, nullptr);
}
