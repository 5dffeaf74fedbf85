/*
 * Handles destroyed while other threads use them (issue 9 item 4): every
 * call racing a destroy ends with an answer from a small set (the handle
 * was still there, or it is gone: CUDA_ERROR_INVALID_HANDLE,
 * CUDA_ERROR_CONTEXT_IS_DESTROYED, ...), never a crash or a hang.
 *
 *   - cuMemFree / cuMemAlloc / copies racing cuCtxDestroy of their context
 *     (the finding: Context::synchronize after the channels were gone);
 *   - streams, events and modules destroyed while threads submit to them,
 *     query them and launch from them;
 *   - cuCtxDestroy racing all of it at once, and primary contexts released
 *     under running threads.
 *
 * Kernels come from the prebuilt cubin in tests/data (no toolkit needed).
 * Workers only record what they saw; the test's thread asserts after
 * joining them. A watchdog ends a hung test and says which call each thread
 * was in (TS_WATCHDOG_SECONDS overrides its 240 s); NVLITE_HANG_REPORT
 * (30 s here unless set) makes the library say what a wait on the GPU is
 * stuck on before that.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "support/test_support.h"

#define NWORKERS 6
#define WATCHDOG_SECONDS 240
#define HANG_REPORT_SECONDS "30"

/* Sanitizer builds run several times slower: fewer rounds there. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ROUNDS(n) ((n) / 4)
#else
#define ROUNDS(n) (n)
#endif

static unsigned char *cubin;
static size_t cubin_size;

static int group_setup(void **state) {
    setenv("NVLITE_HANG_REPORT", HANG_REPORT_SECONDS, 0); /* read at the first long wait */
    if (ts_group_init(state) != 0) return -1;
    cubin = ts_read_file("tests/data/loader_kernels.sm_90.cubin", &cubin_size);
    if (!cubin) fprintf(stderr, "tests/data/loader_kernels.sm_90.cubin cannot be read (run from the repository root)\n");
    return cubin ? 0 : -1;
}

/* ------------------------------------------------------------- harness */

/* Answers a racing call may give: a bit per CUresult below 1024. */
typedef struct {
    uint64_t bits[16];
} answers;

static answers allow(int n, const CUresult *codes) {
    answers a;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < n; ++i) a.bits[codes[i] / 64] |= 1ull << (codes[i] % 64);
    return a;
}
#define ALLOW(...) allow((int)(sizeof((CUresult[]){__VA_ARGS__}) / sizeof(CUresult)), (CUresult[]){__VA_ARGS__})

static int allowed(const answers *a, CUresult r) { return r < 1024 && (a->bits[r / 64] >> (r % 64)) & 1; }

/* What went wrong in a worker (the first one is kept). */
static atomic_int bad_count;
static char bad_what[256];
static pthread_mutex_t bad_mutex = PTHREAD_MUTEX_INITIALIZER;

/* What each thread is doing, for the watchdog: the call it is in (NULL
 * between calls) and how many calls it made. Slots 0..NWORKERS-1 are the
 * workers, slot NWORKERS the test's thread. */
typedef struct {
    _Atomic(const char *) call;
    atomic_uint calls;
} progress;
static progress progress_of[NWORKERS + 1];
static _Thread_local int my_slot = -1;
static const char *watched_test;

static void set_slot(int slot) { my_slot = slot; }

static void enter_call(const char *call) {
    if (my_slot < 0) return;
    atomic_store(&progress_of[my_slot].call, call);
    atomic_fetch_add(&progress_of[my_slot].calls, 1);
}

static CUresult left_call(CUresult r) {
    if (my_slot >= 0) atomic_store(&progress_of[my_slot].call, NULL);
    return r;
}

/* Runs 'call', marked as the thread's current call. */
#define TRACKED(call) (enter_call(#call), left_call(call))

/* Async-signal-safe output for the watchdog. */
static void say(const char *s) {
    ssize_t n = write(STDERR_FILENO, s, strlen(s));
    (void)n;
}

static void say_number(unsigned v) {
    char buf[16];
    int i = (int)sizeof buf - 1;
    buf[i] = 0;
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v && i > 0);
    say(buf + i);
}

static void on_race_watchdog(int sig) {
    (void)sig;
    say(watched_test ? watched_test : "?");
    say(" (watchdog expired); where each thread was:\n");
    for (int i = 0; i <= NWORKERS; ++i) {
        const char *call = atomic_load(&progress_of[i].call);
        say(i == NWORKERS ? "  test thread: " : "  worker ");
        if (i < NWORKERS) {
            say_number((unsigned)i);
            say(": ");
        }
        say_number(atomic_load(&progress_of[i].calls));
        say(" calls, ");
        if (call) {
            say("in ");
            say(call);
        } else {
            say("between calls");
        }
        say("\n");
    }
    _exit(1);
}

static void race_watchdog_arm(const char *who) {
    for (int i = 0; i <= NWORKERS; ++i) {
        atomic_store(&progress_of[i].call, NULL);
        atomic_store(&progress_of[i].calls, 0);
    }
    watched_test = who;
    set_slot(NWORKERS);
    unsigned seconds = WATCHDOG_SECONDS;
    const char *v = getenv("TS_WATCHDOG_SECONDS");
    if (v && atoi(v) > 0) seconds = (unsigned)atoi(v);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_race_watchdog;
    sigaction(SIGALRM, &sa, NULL);
    alarm(seconds);
}

static void race_watchdog_disarm(void) {
    alarm(0);
    set_slot(-1);
}

/* The context fixture's teardown (cuCtxDestroy waits for the work) under the test's watchdog. */
static int race_teardown(void **state) {
    enter_call("cuCtxDestroy (teardown)");
    int r = ts_ctx_teardown(state);
    left_call(CUDA_SUCCESS);
    race_watchdog_disarm();
    return r;
}

static void check(const answers *a, CUresult r, const char *call) {
    if (allowed(a, r)) return;
    if (atomic_fetch_add(&bad_count, 1) == 0) {
        pthread_mutex_lock(&bad_mutex);
        snprintf(bad_what, sizeof bad_what, "%s returned %s", call, ts_cu_name(r));
        pthread_mutex_unlock(&bad_mutex);
    }
}
#define CHECK(a, call) check(&(a), TRACKED(call), #call)

static void expect_no_bad(void) {
    if (atomic_load(&bad_count)) fail_msg("%d unexpected answer(s); first: %s", atomic_load(&bad_count), bad_what);
}

static atomic_int stop;

static void pause_a_little(ts_rng *rng) {
    struct timespec ts = {0, (long)(ts_rng_below(rng, 300) * 1000)};
    nanosleep(&ts, NULL);
}

static void start_workers(pthread_t *t, int n, void *(*fn)(void *), void *args, size_t arg_size) {
    atomic_store(&stop, 0);
    for (int i = 0; i < n; ++i)
        if (pthread_create(&t[i], NULL, fn, (char *)args + (size_t)i * arg_size) != 0) fail_msg("pthread_create");
}

static void join_workers(pthread_t *t, int n) {
    enter_call("join_workers");
    atomic_store(&stop, 1);
    for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
    left_call(CUDA_SUCCESS);
}

/* ------------------------------------------------------------- memory vs cuCtxDestroy */

typedef struct {
    CUcontext ctx;
    int index;
} ctx_worker;

static void *memory_worker(void *p) {
    ctx_worker *w = p;
    set_slot(w->index);
    answers alloc_ok = ALLOW(CUDA_SUCCESS, CUDA_ERROR_CONTEXT_IS_DESTROYED);
    answers free_ok = ALLOW(CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_CONTEXT_IS_DESTROYED);
    answers copy_ok = ALLOW(CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CHECK(alloc_ok, cuCtxSetCurrent(w->ctx));
    ts_rng rng;
    ts_rng_init(&rng, 0x51ull + (uint64_t)w->index);
    unsigned char host[777];
    ts_fill_random(host, sizeof host, 7 + (uint64_t)w->index);
    CUdeviceptr p8[8] = {0};
    while (!atomic_load(&stop)) {
        for (int i = 0; i < 8; ++i) {
            CUresult r = cuMemAlloc(&p8[i], 1 + ts_rng_below(&rng, 5000));
            CHECK(alloc_ok, r);
            if (r != CUDA_SUCCESS) p8[i] = 0;
        }
        for (int i = 0; i < 8; ++i) {
            if (!p8[i]) continue;
            if (i & 1) CHECK(copy_ok, cuMemcpyHtoD(p8[i], host, 1));
            if (i % 3 == 0) CHECK(copy_ok, cuMemsetD8(p8[i], (unsigned char)i, 1));
            CHECK(free_ok, cuMemFree(p8[i]));
        }
        if (ts_rng_below(&rng, 4) == 0) sched_yield();
    }
    return NULL;
}

/* The finding of issue 9: cuMemFree racing cuCtxDestroy crashed every time. */
static void test_memory_racing_ctx_destroy(void **state) {
    (void)state;
    race_watchdog_arm("test_memory_racing_ctx_destroy");
    ts_rng rng;
    ts_rng_init(&rng, 0x1234);
    for (int round = 0; round < ROUNDS(25); ++round) {
        CUcontext c = NULL;
        assert_cu_ok(TRACKED(cuCtxCreate(&c, NULL, 0, 0)));
        assert_cu_ok(TRACKED(cuCtxPopCurrent(NULL)));
        ctx_worker w[NWORKERS];
        pthread_t t[NWORKERS];
        for (int i = 0; i < NWORKERS; ++i) w[i] = (ctx_worker){c, i};
        start_workers(t, NWORKERS, memory_worker, w, sizeof w[0]);
        pause_a_little(&rng);
        assert_cu_ok(TRACKED(cuCtxDestroy(c)));
        join_workers(t, NWORKERS);
    }
    race_watchdog_disarm();
    expect_no_bad();
}

/* ------------------------------------------------------------- streams */

static _Atomic(CUstream) shared_stream;
static _Atomic(CUevent) shared_event;
static _Atomic(CUmodule) shared_module;
static _Atomic(CUfunction) shared_function;
static CUdeviceptr race_buf;

static void *stream_worker(void *p) {
    ctx_worker *w = p;
    set_slot(w->index);
    answers ok = ALLOW(CUDA_SUCCESS, CUDA_ERROR_NOT_READY, CUDA_ERROR_INVALID_HANDLE);
    CHECK(ok, cuCtxSetCurrent(w->ctx));
    CUevent mine = NULL;
    CHECK(ok, cuEventCreate(&mine, CU_EVENT_DISABLE_TIMING));
    unsigned n = 0;
    while (!atomic_load(&stop)) {
        CUstream s = atomic_load(&shared_stream);
        switch ((n++ + (unsigned)w->index) % 7) {
        case 0: CHECK(ok, cuStreamQuery(s)); break;
        case 1: CHECK(ok, cuStreamSynchronize(s)); break;
        case 2: CHECK(ok, cuMemsetD8Async(race_buf, (unsigned char)n, 4096, s)); break;
        case 3: CHECK(ok, cuLaunchKernel(atomic_load(&shared_function), 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL)); break;
        case 4: CHECK(ok, cuEventRecord(mine, s)); break;
        case 5: CHECK(ok, cuStreamWaitEvent(s, mine, 0)); break;
        case 6: {
            unsigned flags = 0;
            CHECK(ok, cuStreamGetFlags(s, &flags));
            break;
        }
        }
    }
    CHECK(ok, cuEventDestroy(mine));
    return NULL;
}

static CUmodule load_prebuilt(void) {
    CUmodule m = NULL;
    assert_cu_ok(TRACKED(cuModuleLoadData(&m, cubin)));
    return m;
}

static void test_stream_destroyed_while_used(void **state) {
    race_watchdog_arm("test_stream_destroyed_while_used");
    CUcontext ctx = ts_fx(state)->ctx;
    CUmodule m = load_prebuilt();
    atomic_store(&shared_function, ts_get_function(m, "k_noparams"));
    race_buf = ts_dev_alloc(4096);
    CUstream s = NULL;
    assert_cu_ok(TRACKED(cuStreamCreate(&s, 0)));
    atomic_store(&shared_stream, s);
    ctx_worker w[NWORKERS];
    pthread_t t[NWORKERS];
    for (int i = 0; i < NWORKERS; ++i) w[i] = (ctx_worker){ctx, i};
    start_workers(t, NWORKERS, stream_worker, w, sizeof w[0]);
    ts_rng rng;
    ts_rng_init(&rng, 99);
    for (int i = 0; i < ROUNDS(300); ++i) {
        pause_a_little(&rng);
        CUstream fresh = NULL;
        assert_cu_ok(TRACKED(cuStreamCreate(&fresh, i % 3 == 0 ? CU_STREAM_NON_BLOCKING : 0)));
        CUstream old = atomic_exchange(&shared_stream, fresh);
        assert_cu_ok(TRACKED(cuStreamDestroy(old)));
    }
    join_workers(t, NWORKERS);
    assert_cu_ok(TRACKED(cuStreamDestroy(atomic_load(&shared_stream))));
    assert_cu_ok(TRACKED(cuCtxSynchronize()));
    assert_cu_ok(TRACKED(cuModuleUnload(m)));
    /* disarmed by race_teardown, after cuCtxDestroy */
    expect_no_bad();
}

/* ------------------------------------------------------------- events */

static void *event_worker(void *p) {
    ctx_worker *w = p;
    set_slot(w->index);
    /* A destroyed event's handle: CUDA_ERROR_CONTEXT_IS_DESTROYED (libcuda's
     * answer, for recently destroyed ones) or CUDA_ERROR_INVALID_HANDLE. */
    answers ok = ALLOW(CUDA_SUCCESS, CUDA_ERROR_NOT_READY, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CHECK(ok, cuCtxSetCurrent(w->ctx));
    CUstream mine = NULL;
    CUevent start = NULL;
    CHECK(ok, cuStreamCreate(&mine, CU_STREAM_NON_BLOCKING));
    CHECK(ok, cuEventCreate(&start, 0));
    CHECK(ok, cuEventRecord(start, mine));
    unsigned n = 0;
    while (!atomic_load(&stop)) {
        CUevent e = atomic_load(&shared_event);
        float ms;
        switch ((n++ + (unsigned)w->index) % 6) {
        case 0: CHECK(ok, cuEventRecord(e, mine)); break;
        case 1: CHECK(ok, cuEventQuery(e)); break;
        case 2: CHECK(ok, cuEventSynchronize(e)); break;
        case 3: CHECK(ok, cuEventElapsedTime(&ms, start, e)); break;
        case 4: CHECK(ok, cuStreamWaitEvent(mine, e, 0)); break;
        case 5: CHECK(ok, cuMemsetD8Async(race_buf + (CUdeviceptr)w->index * 64, 1, 64, mine)); break;
        }
    }
    CHECK(ok, cuStreamSynchronize(mine));
    CHECK(ok, cuStreamDestroy(mine));
    CHECK(ok, cuEventDestroy(start));
    return NULL;
}

static void test_event_destroyed_while_used(void **state) {
    race_watchdog_arm("test_event_destroyed_while_used");
    CUcontext ctx = ts_fx(state)->ctx;
    race_buf = ts_dev_alloc(4096);
    CUevent e = NULL;
    assert_cu_ok(TRACKED(cuEventCreate(&e, 0)));
    atomic_store(&shared_event, e);
    ctx_worker w[NWORKERS];
    pthread_t t[NWORKERS];
    for (int i = 0; i < NWORKERS; ++i) w[i] = (ctx_worker){ctx, i};
    start_workers(t, NWORKERS, event_worker, w, sizeof w[0]);
    ts_rng rng;
    ts_rng_init(&rng, 77);
    for (int i = 0; i < ROUNDS(400); ++i) {
        pause_a_little(&rng);
        CUevent fresh = NULL;
        assert_cu_ok(TRACKED(cuEventCreate(&fresh, i % 4 == 0 ? CU_EVENT_DISABLE_TIMING : 0)));
        CUevent old = atomic_exchange(&shared_event, fresh);
        assert_cu_ok(TRACKED(cuEventDestroy(old)));
    }
    join_workers(t, NWORKERS);
    assert_cu_ok(TRACKED(cuEventDestroy(atomic_load(&shared_event))));
    assert_cu_ok(TRACKED(cuCtxSynchronize()));
    /* disarmed by race_teardown, after cuCtxDestroy */
    expect_no_bad();
}

/* ------------------------------------------------------------- modules */

static void *module_worker(void *p) {
    ctx_worker *w = p;
    set_slot(w->index);
    answers ok = ALLOW(CUDA_SUCCESS, CUDA_ERROR_INVALID_HANDLE);
    CHECK(ok, cuCtxSetCurrent(w->ctx));
    unsigned n = 0;
    while (!atomic_load(&stop)) {
        CUmodule m = atomic_load(&shared_module);
        CUfunction f = atomic_load(&shared_function);
        switch ((n++ + (unsigned)w->index) % 5) {
        case 0: {
            CUfunction g = NULL;
            CHECK(ok, cuModuleGetFunction(&g, m, "k_ptrs"));
            break;
        }
        case 1: {
            // Known gap: a function handle is its object's address, and a
            // freed function's address can come back for a function of the
            // next module (k_ptrs, which takes parameters): the stale handle
            // then names it and the launch without parameters is refused
            // with CUDA_ERROR_INVALID_VALUE. Generation-tagged handles would
            // answer CUDA_ERROR_INVALID_HANDLE instead.
            answers launch_ok = ALLOW(CUDA_SUCCESS, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_VALUE);
            CHECK(launch_ok, cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL));
            break;
        }
        case 2: {
            int v = 0;
            CHECK(ok, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
            break;
        }
        case 3: {
            CUdeviceptr g = 0;
            size_t bytes = 0;
            CHECK(ok, cuModuleGetGlobal(&g, &bytes, m, "ginit"));
            break;
        }
        case 4: {
            const char *name = NULL;
            CHECK(ok, cuFuncGetName(&name, f));
            break;
        }
        }
    }
    return NULL;
}

static void test_module_unloaded_while_used(void **state) {
    race_watchdog_arm("test_module_unloaded_while_used");
    CUcontext ctx = ts_fx(state)->ctx;
    CUmodule m = load_prebuilt();
    atomic_store(&shared_module, m);
    atomic_store(&shared_function, ts_get_function(m, "k_noparams"));
    ctx_worker w[NWORKERS];
    pthread_t t[NWORKERS];
    for (int i = 0; i < NWORKERS; ++i) w[i] = (ctx_worker){ctx, i};
    start_workers(t, NWORKERS, module_worker, w, sizeof w[0]);
    ts_rng rng;
    ts_rng_init(&rng, 55);
    for (int i = 0; i < ROUNDS(60); ++i) {
        pause_a_little(&rng);
        CUmodule fresh = load_prebuilt();
        CUmodule old = atomic_exchange(&shared_module, fresh);
        atomic_store(&shared_function, ts_get_function(fresh, "k_noparams"));
        assert_cu_ok(TRACKED(cuModuleUnload(old)));
    }
    join_workers(t, NWORKERS);
    assert_cu_ok(TRACKED(cuCtxSynchronize()));
    assert_cu_ok(TRACKED(cuModuleUnload(atomic_load(&shared_module))));
    /* disarmed by race_teardown, after cuCtxDestroy */
    expect_no_bad();
}

/* ------------------------------------------------------------- everything vs cuCtxDestroy */

typedef struct {
    CUcontext ctx;
    CUstream stream;
    CUevent event;
    CUmodule module;
    CUfunction function;
    CUdeviceptr mem;
    void *pinned;
    int index;
} everything;

static void *everything_worker(void *p) {
    everything *w = p;
    set_slot(w->index);
    answers ok = ALLOW(CUDA_SUCCESS, CUDA_ERROR_NOT_READY, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_CONTEXT_IS_DESTROYED,
                       CUDA_ERROR_INVALID_VALUE);
    CHECK(ok, cuCtxSetCurrent(w->ctx));
    unsigned char host[300];
    ts_fill_random(host, sizeof host, 3 + (uint64_t)w->index);
    unsigned n = 0;
    while (!atomic_load(&stop)) {
        switch ((n++ * 7 + (unsigned)w->index) % 12) {
        case 0: CHECK(ok, cuStreamQuery(w->stream)); break;
        case 1: CHECK(ok, cuMemcpyHtoDAsync(w->mem, host, sizeof host, w->stream)); break;
        case 2: CHECK(ok, cuEventRecord(w->event, w->stream)); break;
        case 3: CHECK(ok, cuEventSynchronize(w->event)); break;
        case 4: CHECK(ok, cuLaunchKernel(w->function, 1, 1, 1, 32, 1, 1, 0, w->stream, NULL, NULL)); break;
        case 5: CHECK(ok, cuCtxSynchronize()); break;
        case 6: CHECK(ok, cuMemcpyDtoH(host, w->mem, 17)); break;
        case 7: {
            CUfunction g = NULL;
            CHECK(ok, cuModuleGetFunction(&g, w->module, "k_call"));
            break;
        }
        case 8: {
            CUdeviceptr q = 0;
            CUresult r = cuMemAlloc(&q, 999);
            CHECK(ok, r);
            if (r == CUDA_SUCCESS) CHECK(ok, cuMemFree(q));
            break;
        }
        case 9: CHECK(ok, cuMemsetD32Async(w->mem, 0x5a5a5a5a, 64, NULL)); break;
        case 10:  // each worker its own 64 bytes of the shared pinned page: same bytes from two threads would race in the program
            CHECK(ok, cuMemcpyHtoD((CUdeviceptr)(uintptr_t)((unsigned char *)w->pinned + 64 * w->index), host, 64));
            break;
        case 11: {
            CUstream s2 = NULL;
            CUresult r = cuStreamCreate(&s2, 0);
            CHECK(ok, r);
            if (r == CUDA_SUCCESS) CHECK(ok, cuStreamDestroy(s2));
            break;
        }
        }
    }
    return NULL;
}

static void test_ctx_destroyed_under_everything(void **state) {
    (void)state;
    race_watchdog_arm("test_ctx_destroyed_under_everything");
    ts_rng rng;
    ts_rng_init(&rng, 4321);
    for (int round = 0; round < ROUNDS(20); ++round) {
        everything base;
        memset(&base, 0, sizeof base);
        assert_cu_ok(TRACKED(cuCtxCreate(&base.ctx, NULL, 0, 0)));
        assert_cu_ok(TRACKED(cuStreamCreate(&base.stream, 0)));
        assert_cu_ok(TRACKED(cuEventCreate(&base.event, 0)));
        base.module = load_prebuilt();
        base.function = ts_get_function(base.module, "k_noparams");
        assert_cu_ok(TRACKED(cuMemAlloc(&base.mem, 8192)));
        assert_cu_ok(TRACKED(cuMemAllocHost(&base.pinned, 4096)));
        assert_cu_ok(TRACKED(cuCtxPopCurrent(NULL)));
        everything w[NWORKERS];
        pthread_t t[NWORKERS];
        for (int i = 0; i < NWORKERS; ++i) {
            w[i] = base;
            w[i].index = i;
        }
        start_workers(t, NWORKERS, everything_worker, w, sizeof w[0]);
        pause_a_little(&rng);
        pause_a_little(&rng);
        assert_cu_ok(TRACKED(cuCtxDestroy(base.ctx)));
        join_workers(t, NWORKERS);
    }
    race_watchdog_disarm();
    expect_no_bad();
}

/* ------------------------------------------------------------- primary context */

static void *primary_worker(void *p) {
    ctx_worker *w = p;
    set_slot(w->index);
    answers ok = ALLOW(CUDA_SUCCESS, CUDA_ERROR_CONTEXT_IS_DESTROYED, CUDA_ERROR_INVALID_VALUE,
                       CUDA_ERROR_INVALID_HANDLE);
    CHECK(ok, cuCtxSetCurrent(w->ctx));
    while (!atomic_load(&stop)) {
        CUdeviceptr q = 0;
        CUresult r = cuMemAlloc(&q, 4096 + (size_t)w->index);
        CHECK(ok, r);
        if (r == CUDA_SUCCESS) {
            CHECK(ok, cuMemsetD8(q, 1, 4096));
            CHECK(ok, cuMemFree(q));
        }
        CHECK(ok, cuCtxSynchronize());
    }
    return NULL;
}

static void test_primary_released_under_threads(void **state) {
    (void)state;
    race_watchdog_arm("test_primary_released_under_threads");
    ts_rng rng;
    ts_rng_init(&rng, 8);
    for (int round = 0; round < ROUNDS(16); ++round) {
        CUcontext p = NULL;
        assert_cu_ok(TRACKED(cuDevicePrimaryCtxRetain(&p, 0)));
        ctx_worker w[NWORKERS];
        pthread_t t[NWORKERS];
        for (int i = 0; i < NWORKERS; ++i) w[i] = (ctx_worker){p, i};
        start_workers(t, NWORKERS, primary_worker, w, sizeof w[0]);
        pause_a_little(&rng);
        if (round % 2) assert_cu_ok(cuDevicePrimaryCtxRelease(0));
        else assert_cu_ok(cuDevicePrimaryCtxReset(0));
        join_workers(t, NWORKERS);
        if (round % 2 == 0) assert_cu_ok(cuDevicePrimaryCtxRelease(0));
    }
    race_watchdog_disarm();
    expect_no_bad();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_memory_racing_ctx_destroy, ts_check_no_current_context, NULL),
        cmocka_unit_test_setup_teardown(test_stream_destroyed_while_used, ts_ctx_setup, race_teardown),
        cmocka_unit_test_setup_teardown(test_event_destroyed_while_used, ts_ctx_setup, race_teardown),
        cmocka_unit_test_setup_teardown(test_module_unloaded_while_used, ts_ctx_setup, race_teardown),
        cmocka_unit_test_setup_teardown(test_ctx_destroyed_under_everything, ts_check_no_current_context, NULL),
        cmocka_unit_test_setup_teardown(test_primary_released_under_threads, ts_check_no_current_context, NULL),
    };
    return cmocka_run_group_tests_name("races", tests, group_setup, NULL);
}
