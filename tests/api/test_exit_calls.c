/*
 * Driver calls made while a thread or the process ends (issue 13: cudart
 * programs died of heap corruption at exit on the H200).
 *
 * cudart tears its state down from an atexit handler: it deletes its
 * context-local storage, unloads its libraries and releases the primary
 * context. glibc's exit() runs the main thread's C++ thread_local destructors
 * before the atexit handlers, and a thread that ends runs them before the
 * pthread key destructors, so the library's per-thread state (what an API
 * call holds, the current-context stack) must outlive both. Here:
 *  - an atexit handler registered before the library's first call does what
 *    cudart's does (and more calls that use the per-thread state), then
 *    checks every answer; a wrong one ends the process with exit code 3;
 *  - a thread's pthread key destructor (its key made after the library's
 *    first call, so it runs after the library's own) calls the driver after
 *    the thread's thread_local destructors ran.
 * Under AddressSanitizer (make test-asan) a use of freed per-thread state is
 * reported; without it glibc's heap checks usually abort the process.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_support.h"

/* ------------------------------------------------------------------ CONTEXT_LOCAL_STORAGE */

typedef void (*storage_destructor)(CUcontext, void *, void *);
typedef CUresult (*storage_put_fn)(CUcontext, void *, void *, storage_destructor);
typedef CUresult (*storage_delete_fn)(CUcontext, void *);
typedef CUresult (*storage_get_fn)(void **, CUcontext, void *);

static const unsigned char kStorageId[16] = {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
                                             0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93};

static void *const *storage_table(void) {
    const void *p = NULL;
    CUuuid id;
    memcpy(id.bytes, kStorageId, sizeof id.bytes);
    if (cuGetExportTable(&p, &id) != CUDA_SUCCESS) return NULL;
    return (void *const *)p;
}

/* ------------------------------------------------------------------ state the handlers use */

static CUdevice g_dev;
static CUcontext g_primary;
static CUdeviceptr g_exit_buffer; /* freed by the atexit handler */
static int g_key_word;            /* its address is the storage key */
static int g_value_word;
static int g_destructor_calls;

static void count_destructor(CUcontext ctx, void *key, void *value) {
    (void)ctx;
    if (key == &g_key_word && value == &g_value_word) ++g_destructor_calls;
}

/* A failed check in a handler: cmocka is done by then. */
static int g_exit_failures;
static void exit_check(CUresult expected, CUresult actual, const char *what) {
    if (expected == actual) return;
    fprintf(stderr, "test_exit_calls: at exit, %s: expected %s, got %s\n", what, ts_cu_name(expected),
            ts_cu_name(actual));
    ++g_exit_failures;
}

/* Calls that go through the library's per-thread state (the kept
 * references of a call, the current-context stack), many times over, with
 * allocations between them. */
static void churn(const char *where) {
    for (int i = 0; i < 64; ++i) {
        CUcontext cur = NULL;
        exit_check(CUDA_SUCCESS, cuCtxGetCurrent(&cur), where);
        if (cur != g_primary) {
            fprintf(stderr, "test_exit_calls: %s: the current context is %p, not the primary context %p\n", where,
                    (void *)cur, (void *)g_primary);
            ++g_exit_failures;
        }
        exit_check(CUDA_SUCCESS, cuCtxPushCurrent(g_primary), where);
        CUdeviceptr p = 0;
        exit_check(CUDA_SUCCESS, cuMemAlloc(&p, 4096 + 61 * (size_t)i), where);
        exit_check(CUDA_SUCCESS, cuMemsetD8(p, (unsigned char)(0x5a ^ i), 4096), where);
        unsigned char back[16];
        exit_check(CUDA_SUCCESS, cuMemcpyDtoH(back, p + 3, sizeof back), where);
        if (back[0] != (unsigned char)(0x5a ^ i)) {
            fprintf(stderr, "test_exit_calls: %s: read %#x back, wrote %#x\n", where, back[0], 0x5a ^ i);
            ++g_exit_failures;
        }
        exit_check(CUDA_SUCCESS, cuMemFree(p), where);
        CUcontext popped = NULL;
        exit_check(CUDA_SUCCESS, cuCtxPopCurrent(&popped), where);
        void *value = NULL;
        void *const *t = storage_table();
        if (t) (void)((storage_get_fn)t[2])(&value, NULL, &g_key_word);
    }
}

/* What cudart's teardown does, after the main thread's thread_local
 * destructors ran. */
static void at_exit(void) {
    void *const *t = storage_table();
    if (!t) {
        fprintf(stderr, "test_exit_calls: at exit, cuGetExportTable failed\n");
        _exit(3);
    }
    churn("atexit handler");
    void *value = NULL;
    exit_check(CUDA_SUCCESS, ((storage_get_fn)t[2])(&value, NULL, &g_key_word), "storage get");
    exit_check(CUDA_SUCCESS, cuMemFree(g_exit_buffer), "cuMemFree");
    exit_check(CUDA_SUCCESS, ((storage_delete_fn)t[1])(g_primary, &g_key_word), "storage delete");
    exit_check(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(g_dev), "cuDevicePrimaryCtxRelease");
    exit_check(CUDA_SUCCESS, cuCtxSetCurrent(NULL), "cuCtxSetCurrent(NULL)");
    CUcontext cur = g_primary;
    exit_check(CUDA_SUCCESS, cuCtxGetCurrent(&cur), "cuCtxGetCurrent");
    if (cur) {
        fprintf(stderr, "test_exit_calls: at exit, a context is still current\n");
        ++g_exit_failures;
    }
    if (g_destructor_calls != 0) {
        fprintf(stderr, "test_exit_calls: a deleted storage value's destructor was called\n");
        ++g_exit_failures;
    }
    if (g_exit_failures) _exit(3);
    fprintf(stderr, "test_exit_calls: the atexit handler's driver calls all succeeded\n");
}

/* ------------------------------------------------------------------ tests */

/* The primary context retained and current, a buffer and a storage value
 * in it, as cudart leaves them for its teardown. */
static void test_state_for_exit(void **state) {
    (void)state;
    assert_cu_ok(cuDeviceGet(&g_dev, 0));
    assert_cu_ok(cuDevicePrimaryCtxRetain(&g_primary, g_dev));
    assert_cu_ok(cuCtxSetCurrent(g_primary));
    assert_cu_ok(cuMemAlloc(&g_exit_buffer, 3 * 4096 + 17));
    void *const *t = storage_table();
    assert_non_null(t);
    assert_cu_ok(((storage_put_fn)t[0])(NULL, &g_key_word, &g_value_word, count_destructor));
    churn("main thread");
    assert_int_equal(g_exit_failures, 0);
}

/* A thread's pthread key destructor calling the driver. */
static pthread_key_t g_thread_key;
static int g_thread_key_made;
static int g_key_destructor_ran;

static void thread_key_destructor(void *p) {
    (void)p;
    exit_check(CUDA_SUCCESS, cuCtxSetCurrent(g_primary), "key destructor: cuCtxSetCurrent");
    churn("pthread key destructor");
    exit_check(CUDA_SUCCESS, cuCtxSetCurrent(NULL), "key destructor: cuCtxSetCurrent(NULL)");
    g_key_destructor_ran = 1;
}

static void *thread_body(void *arg) {
    (void)arg;
    /* The library's per-thread state is made by these calls... */
    exit_check(CUDA_SUCCESS, cuCtxSetCurrent(g_primary), "thread: cuCtxSetCurrent");
    churn("thread");
    /* ...and used again by the key's destructor when the thread ends. */
    (void)pthread_setspecific(g_thread_key, &g_value_word);
    return NULL;
}

static void test_thread_end(void **state) {
    (void)state;
    if (!g_thread_key_made) {
        assert_int_equal(pthread_key_create(&g_thread_key, thread_key_destructor), 0);
        g_thread_key_made = 1;
    }
    for (int round = 0; round < 3; ++round) {
        g_key_destructor_ran = 0;
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, thread_body, NULL), 0);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_int_equal(g_key_destructor_ran, 1);
        assert_int_equal(g_exit_failures, 0);
    }
}

int main(void) {
    /* Before the library's first call: runs after its per-thread state of
     * the main thread would have been destroyed. */
    if (atexit(at_exit) != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_for_exit),
        cmocka_unit_test(test_thread_end),
    };
    return cmocka_run_group_tests(tests, ts_group_init, NULL);
}
