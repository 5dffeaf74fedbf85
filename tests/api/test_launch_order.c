/*
 * Stream order under every NVLITE_LAUNCH_ORDER (how a compute channel keeps
 * consecutive grids in order; lib/hw/LAUNCH_ORDER.md). Each order runs in a
 * process of its own (the library reads the setting once), with the built-in
 * copy and fill kernels taking every device-to-device copy and fill from 4 KiB
 * up, so that consecutive operations of a stream are consecutive grids:
 *
 *   chain     per round: random bytes up (copy engine), a kernel copy of
 *             them at an odd offset, a kernel fill over the source (it must
 *             come after the copy read it), a second kernel copy, down again
 *             (copy engine): what comes down must be the random bytes
 *   events    kernels between timed events, cuEventSynchronize on the end
 *             event, then another stream waits for it (cuStreamWaitEvent)
 *             and copies on: the data, the events' state and times
 *   timeline  many kernels and records back to back, then every event and
 *             the context must be reached (a timeline that went backwards
 *             leaves a waiter hanging: the child's watchdog ends it)
 *
 * On the simulator grids run beside the methods after them and finish newest
 * first unless something orders them (sim_gpu.h), so a missing order shows:
 * NVLITE_LAUNCH_ORDER=unordered must fail there (the test can fail). On a GPU
 * the same checks run for every order but 'unordered' (which may pass by luck).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../support/test_support.h"

#define CHILD_FLAG "--launch-order-child"

/* ------------------------------------------------------------------ child */

static int child_failed;

#define CHILD_CHECK(cond, ...)                              \
    do {                                                    \
        if (!(cond)) {                                      \
            fprintf(stderr, "launch order child: " __VA_ARGS__); \
            fprintf(stderr, "\n");                          \
            child_failed = 1;                               \
        }                                                   \
    } while (0)

#define CU(call)                                                                    \
    do {                                                                            \
        CUresult r_ = (call);                                                       \
        if (r_ != CUDA_SUCCESS) {                                                   \
            fprintf(stderr, "launch order child: %s = %s\n", #call, ts_cu_name(r_)); \
            exit(3);                                                                \
        }                                                                           \
    } while (0)

/* The first byte where a and b differ, or -1. */
static long first_mismatch(const unsigned char* a, const unsigned char* b, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (a[i] != b[i]) return (long)i;
    return -1;
}

/* Three device buffers of n + 64 bytes (room for odd offsets) and two
 * pinned host buffers of n, for one part of the child. */
typedef struct {
    CUdeviceptr a, b, c;
    unsigned char *up, *down;
} buffers;

static void buffers_alloc(buffers* m, size_t n) {
    CU(cuMemAlloc(&m->a, n + 64));
    CU(cuMemAlloc(&m->b, n + 64));
    CU(cuMemAlloc(&m->c, n + 64));
    CU(cuMemAllocHost((void**)&m->up, n));
    CU(cuMemAllocHost((void**)&m->down, n));
}

static void buffers_free(buffers* m) {
    CU(cuMemFreeHost(m->up));
    CU(cuMemFreeHost(m->down));
    CU(cuMemFree(m->a));
    CU(cuMemFree(m->b));
    CU(cuMemFree(m->c));
}

static void chain(CUstream s, unsigned rounds) {
    const size_t n = 3 * 65536 + 7;
    buffers m;
    buffers_alloc(&m, n);
    const CUdeviceptr a = m.a, b = m.b, c = m.c;
    unsigned char *up = m.up, *down = m.down;
    unsigned char* want = malloc(n);
    for (unsigned r = 0; r < rounds && !child_failed; ++r) {
        ts_fill_random(want, n, 0x1a0c4e + r);
        memcpy(up, want, n);
        memset(down, 0xee, n);
        CU(cuMemcpyHtoDAsync(a, up, n, s));
        CU(cuMemcpyDtoDAsync(b + 1, a, n, s));
        CU(cuMemsetD8Async(a, (unsigned char)(0x5a ^ r), n, s));  // after the copy read a
        CU(cuMemcpyDtoDAsync(c + 3, b + 1, n, s));
        CU(cuMemcpyDtoHAsync(down, c + 3, n, s));
        CU(cuStreamSynchronize(s));
        const long at = first_mismatch(want, down, n);
        CHILD_CHECK(at < 0, "chain round %u: byte %ld came down as 0x%02x, not 0x%02x", r, at, at < 0 ? 0 : down[at],
                    at < 0 ? 0 : want[at]);
    }
    free(want);
    buffers_free(&m);
}

static void events(CUstream s1, CUstream s2, unsigned rounds) {
    const size_t n = 2 * 65536 + 13;
    buffers m;
    buffers_alloc(&m, n);
    const CUdeviceptr a = m.a, b = m.b, c = m.c;
    unsigned char *up = m.up, *down = m.down;
    CUevent start, end, other;
    CU(cuEventCreate(&start, 0));
    CU(cuEventCreate(&end, CU_EVENT_BLOCKING_SYNC));
    CU(cuEventCreate(&other, 0));
    for (unsigned r = 0; r < rounds && !child_failed; ++r) {
        ts_fill_random(up, n, 0xe7e475 + r);
        CU(cuMemcpyHtoDAsync(a, up, n, s1));
        CU(cuEventRecord(start, s1));
        CU(cuMemcpyDtoDAsync(b + 5, a, n, s1));
        CU(cuMemsetD8Async(a, 0, n, s1));
        CU(cuEventRecord(end, s1));
        CU(cuEventSynchronize(end));
        // The kernels before 'end' are done: its stream has nothing running.
        CHILD_CHECK(cuStreamQuery(s1) == CUDA_SUCCESS, "events round %u: stream busy after its last event", r);
        float ms = -1;
        CU(cuEventElapsedTime(&ms, start, end));
        CHILD_CHECK(ms >= 0, "events round %u: elapsed %f ms", r, (double)ms);
        // Another stream (another lane) follows through the event.
        CU(cuStreamWaitEvent(s2, end, 0));
        CU(cuMemcpyDtoDAsync(c + 1, b + 5, n, s2));
        CU(cuEventRecord(other, s2));
        CU(cuMemcpyDtoHAsync(down, c + 1, n, s2));
        CU(cuStreamSynchronize(s2));
        CHILD_CHECK(cuEventQuery(other) == CUDA_SUCCESS, "events round %u: event of the other stream not reached", r);
        const long at = first_mismatch(up, down, n);
        CHILD_CHECK(at < 0, "events round %u: byte %ld wrong through the other stream", r, at);
    }
    CU(cuEventDestroy(start));
    CU(cuEventDestroy(end));
    CU(cuEventDestroy(other));
    buffers_free(&m);
}

static void timeline(CUstream s, unsigned rounds) {
    const size_t n = 65536 + 9;
    CUdeviceptr a, b;
    CU(cuMemAlloc(&a, n));
    CU(cuMemAlloc(&b, n));
    enum { EVENTS = 4 };
    CUevent ev[EVENTS];
    for (int i = 0; i < EVENTS; ++i) CU(cuEventCreate(&ev[i], 0));
    CU(cuMemsetD8Async(a, 0x3c, n, s));
    for (unsigned r = 0; r < rounds; ++r) {
        CU(cuMemcpyDtoDAsync(b, a, n, s));
        CU(cuEventRecord(ev[r % EVENTS], s));
        CU(cuMemcpyDtoDAsync(a, b, n, s));
    }
    CU(cuCtxSynchronize());
    for (int i = 0; i < EVENTS; ++i)
        CHILD_CHECK(cuEventQuery(ev[i]) == CUDA_SUCCESS, "timeline: event %d not reached after cuCtxSynchronize", i);
    CHILD_CHECK(cuStreamQuery(s) == CUDA_SUCCESS, "timeline: stream busy after cuCtxSynchronize");
    for (int i = 0; i < EVENTS; ++i) CU(cuEventDestroy(ev[i]));
    CU(cuMemFree(a));
    CU(cuMemFree(b));
}

static int child_main(void) {
    const char* limit = getenv("LAUNCH_ORDER_CHILD_SECONDS");
    ts_watchdog_arm("launch order child", limit ? (unsigned)atoi(limit) : 60);
    CUdevice dev;
    CUcontext ctx;
    CU(cuInit(0));
    CU(cuDeviceGet(&dev, 0));
    CU(cuCtxCreate(&ctx, NULL, 0, dev));
    CUstream s1, s2;
    CU(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CU(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    chain(s1, 12);
    if (!child_failed) chain(NULL, 4);  // the legacy stream's lane
    if (!child_failed) events(s1, s2, 10);
    if (!child_failed) timeline(s1, 200);
    CU(cuStreamDestroy(s1));
    CU(cuStreamDestroy(s2));
    CU(cuCtxDestroy(ctx));
    ts_watchdog_disarm();
    return child_failed ? 2 : 0;
}

/* ------------------------------------------------------------------ parent */

static char self_path[4096];

/* Runs the child with NVLITE_LAUNCH_ORDER=order ('seconds': its watchdog);
 * its exit status, or 128 + the signal that ended it. */
static int run_child(const char* order, unsigned seconds) {
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("NVLITE_LAUNCH_ORDER", order, 1);
        setenv("NVLITE_KERNEL_COPY_MIN", "4096", 1);
        setenv("NVLITE_KERNEL_FILL_MIN", "4096", 1);
        char limit[16];
        snprintf(limit, sizeof limit, "%u", seconds);
        setenv("LAUNCH_ORDER_CHILD_SECONDS", limit, 1);
        char* argv[] = {self_path, (char*)CHILD_FLAG, NULL};
        execv(self_path, argv);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void check_order(const char* order) {
    const int rc = run_child(order, 60);
    if (rc != 0) fail_msg("NVLITE_LAUNCH_ORDER=%s: the child failed (exit %d, messages above)", order, rc);
}

/* One order per test; cmocka's prestate carries its name. */
static void test_order(void** state) {
    check_order((const char*)*state);
}

/* Without any order the simulator finishes a stream's grids out of order:
 * the checks above must see it. */
static void test_unordered_fails_on_the_simulator(void** state) {
    (void)state;
    if (!ts_on_simulator()) ts_skip("on a GPU grids launched back to back may still finish in order (timing)");
    // The first round's kernels finish newest first: the timeline ends at the
    // oldest one's value, and the copy down waits for the newest's (a hang the
    // child's watchdog ends; a round that got through would fail its bytes).
    const int rc = run_child("unordered", 5);
    if (rc == 0) fail_msg("NVLITE_LAUNCH_ORDER=unordered passed: the ordering checks cannot fail");
}

int main(int argc, char** argv) {
    if (argc > 1 && !strcmp(argv[1], CHILD_FLAG)) return child_main();
    const ssize_t len = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (len <= 0) {
        fprintf(stderr, "test_launch_order: cannot find its own executable\n");
        return 1;
    }
    self_path[len] = 0;
    const struct CMUnitTest tests[] = {
        {"test_order auto", test_order, NULL, NULL, (void*)"auto"},
        {"test_order acquire", test_order, NULL, NULL, (void*)"acquire"},
        {"test_order acquire-spin", test_order, NULL, NULL, (void*)"acquire-spin"},
        {"test_order wfi", test_order, NULL, NULL, (void*)"wfi"},
        {"test_order host-wfi", test_order, NULL, NULL, (void*)"host-wfi"},
        cmocka_unit_test(test_unordered_fails_on_the_simulator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
