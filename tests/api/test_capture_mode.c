/*
 * cuThreadExchangeStreamCaptureMode (lib/api/capture_mode_api.cpp): each
 * thread keeps its own stream-capture interaction mode, starting at
 * CU_STREAM_CAPTURE_MODE_GLOBAL; an exchange returns the previous one; an
 * unknown mode or a NULL pointer is CUDA_ERROR_INVALID_VALUE and changes
 * nothing. cudart's cudaThreadExchangeStreamCaptureMode and PyTorch's
 * CUDAStreamCaptureModeGuard call it.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#include "support/test_support.h"

static void *fresh_thread(void *arg) {
    CUstreamCaptureMode *seen = arg;
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    if (cuThreadExchangeStreamCaptureMode(&m) != CUDA_SUCCESS) return NULL;
    *seen = m; /* the thread's first mode */
    return NULL;
}

static void test_exchange(void **state) {
    (void)state;
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    assert_cu_ok(cuThreadExchangeStreamCaptureMode(&m));
    assert_int_equal(m, CU_STREAM_CAPTURE_MODE_GLOBAL);
    m = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    assert_cu_ok(cuThreadExchangeStreamCaptureMode(&m));
    assert_int_equal(m, CU_STREAM_CAPTURE_MODE_RELAXED);

    /* Refused: the mode stays. */
    m = (CUstreamCaptureMode)7;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuThreadExchangeStreamCaptureMode(&m));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuThreadExchangeStreamCaptureMode(NULL));

    /* Another thread starts at GLOBAL and does not change this one's. */
    CUstreamCaptureMode seen = (CUstreamCaptureMode)99;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fresh_thread, &seen), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(seen, CU_STREAM_CAPTURE_MODE_GLOBAL);

    m = CU_STREAM_CAPTURE_MODE_GLOBAL;
    assert_cu_ok(cuThreadExchangeStreamCaptureMode(&m));
    assert_int_equal(m, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exchange),
    };
    return cmocka_run_group_tests(tests, ts_group_init, NULL);
}
