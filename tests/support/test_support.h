/*
 * Helpers shared by the cmocka API tests (tests/api) and the hardware tests
 * (tests/hw), and by the C++ unit tests. C11; include this instead of
 * <cmocka.h> and <cuda.h>.
 *
 *   assert_cu(expected, call)       CUresult check that prints both names
 *   assert_bytes_equal(e, a, n)     byte-for-byte check, prints the first mismatch
 *   assert_bytes_named(e, a, n, w)  the same, the bytes named by the string w
 *   ts_fill_random(buf, n, seed)    deterministic xorshift64* data, never all zeros
 *   ts_ctx_setup / ts_ctx_teardown  a fresh context per test (cmocka fixtures)
 *   ts_malloc                       host buffers freed by ts_ctx_teardown
 *   ts_have_real_gpu                whether this machine has a real NVIDIA GPU
 *   ts_compile_cubin/_ptx/_fatbin   kernels built at test time (ts_kernels.h)
 *   ts_source_module                a kernel source compiled once (NVRTC), loaded
 *   ts_load_with_cudadevrt          -rdc code linked with libcudadevrt, loaded
 *   ts_stream_new / ts_event_new    created or the test fails
 *   ts_dev_alloc / ts_pinned_alloc  allocated or the test fails
 *   ts_box_* / ts_fill_*host        2-D/3-D copies and fills, and what they
 *                                   leave, done on the host
 *   ts_busy_*                       device work a stream is still running
 *   ts_watchdog_arm                 a hang ends the process with a message
 *
 * cmocka's assertions longjmp out of the test: call them (and assert_cu) from
 * the test's own thread only; worker threads record results instead.
 */
#ifndef NVLITE_TESTS_SUPPORT_TEST_SUPPORT_H
#define NVLITE_TESTS_SUPPORT_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include <cmocka.h>
#include <cuda.h>

/* ------------------------------------------------------------------ results */

/* The CUresult's name as cuGetErrorName gives it ("CUDA_ERROR_INVALID_VALUE"),
 * or "CUresult(<n>)" for a code cuGetErrorName does not know. The string stays
 * valid until the calling thread's next 4 calls. */
const char *ts_cu_name(CUresult r);

void ts_check_cu(CUresult expected, CUresult actual, const char *expr, const char *file, int line);

/* Fails the test unless 'call' returns exactly 'expected'; the message names
 * the call, the expected result and the actual one. */
#define assert_cu(expected, call) ts_check_cu((expected), (call), #call, __FILE__, __LINE__)
#define assert_cu_ok(call) assert_cu(CUDA_SUCCESS, (call))

void ts_check_cu_either(CUresult a, CUresult b, CUresult actual, const char *expr, const char *file, int line);
/* For the rare call where libcuda itself answers one of two codes from run
 * to run (say why where it is used). */
#define assert_cu_either(a, b, call) ts_check_cu_either((a), (b), (call), #call, __FILE__, __LINE__)

/* ------------------------------------------------------------------ bytes */

void ts_check_bytes(const void *expected, const void *actual, size_t n, const char *what, const char *file,
                    int line);
void ts_check_all(const void *actual, unsigned char value, size_t n, const char *what, const char *file, int line);

/* Fails the test unless the n bytes are equal; prints the first differing
 * offset, both bytes there and how many bytes differ. */
#define assert_bytes_equal(expected, actual, n) ts_check_bytes((expected), (actual), (n), #actual, __FILE__, __LINE__)
/* The same, naming the bytes 'what' (a string) in the message. */
#define assert_bytes_named(expected, actual, n, what) ts_check_bytes((expected), (actual), (n), (what), __FILE__, __LINE__)
/* Fails the test unless every one of the n bytes is 'value'. */
#define assert_bytes_all(actual, value, n) ts_check_all((actual), (value), (n), #actual, __FILE__, __LINE__)

/* ------------------------------------------------------------------ random data */

/* xorshift64* (Vigna): explicit seeds, same sequence on every machine. */
typedef struct {
    uint64_t state;
} ts_rng;

void ts_rng_init(ts_rng *rng, uint64_t seed); /* any seed, 0 included */
uint64_t ts_rng_next(ts_rng *rng);
uint64_t ts_rng_below(ts_rng *rng, uint64_t bound); /* uniform enough in [0, bound), bound > 0 */

/* Fills n bytes (any n, any alignment) from the xorshift64* stream of 'seed'.
 * The result is never all zeros. */
void ts_fill_random(void *buf, size_t n, uint64_t seed);

/* ------------------------------------------------------------------ host buffers */

/* malloc that fails the test when out of memory; the buffer is freed by
 * ts_free_all() (called by ts_ctx_teardown), also when the test failed. */
void *ts_malloc(size_t n);
/* Frees one ts_malloc buffer early (NULL is fine). */
void ts_free(void *p);
void ts_free_all(void);

/* ------------------------------------------------------------------ fixtures */

typedef struct {
    CUdevice dev;
    CUcontext ctx; /* a test that destroys it itself sets this to NULL */
} ts_fixture;

/* Group setup: cuInit(0); fails the group if it does not succeed. */
int ts_group_init(void **state);
/* Test setup: cuInit(0) and a new context on device 0, current to the calling
 * thread; *state is a ts_fixture. */
int ts_ctx_setup(void **state);
/* Test setup for hardware-only tests: ts_ctx_setup on a real GPU; elsewhere an
 * empty fixture, and the test skips saying why. */
int ts_hw_ctx_setup(void **state);
/* Test teardown: destroys the fixture's context, frees ts_malloc buffers and
 * checks that the test left no context current (a pushed context it forgot is
 * popped and reported as a failure of the teardown). */
int ts_ctx_teardown(void **state);
/* Test teardown for tests that manage contexts themselves: frees ts_malloc
 * buffers and fails if any context is still current. */
int ts_check_no_current_context(void **state);

static inline ts_fixture *ts_fx(void **state) { return (ts_fixture *)*state; }

/* ------------------------------------------------------------------ modules */

/* Device 0's compute capability as major * 10 + minor (90 for sm_90). */
int ts_device_arch(void);
/* 'source' compiled with NVRTC for device 0 (once per source text: the cubin
 * is kept for the process), loaded into the current context. Skips the test
 * without NVRTC; fails it when the source does not compile. 'name' names the
 * program in messages. */
CUmodule ts_source_module(const char *source, const char *name);
/* cuModuleGetFunction that fails the test unless it finds 'name'. */
CUfunction ts_get_function(CUmodule m, const char *name);
/* A host pointer as the CUdeviceptr that unified addressing makes of it. */
static inline CUdeviceptr ts_dptr(const void *p) { return (CUdeviceptr)(uintptr_t)p; }

/* ------------------------------------------------------------------ copy and fill shapes */

/* A box of bytes between two pitched buffers: 'depth' slices of 'height'
 * lines of 'width' bytes. The source starts at byte srcX of line srcY, the
 * destination at byte dstX of line dstY (of their first slice); lines are
 * srcPitch (dstPitch) bytes apart, slices srcHeight (dstHeight) lines. A
 * 2-D copy is a box of depth 1 (the heights then do not matter). */
typedef struct {
    size_t srcX, srcY, srcPitch, srcHeight;
    size_t dstX, dstY, dstPitch, dstHeight;
    size_t width, height, depth;
} ts_box;

/* The box as cuMemcpy2D's (depth 1) / cuMemcpy3D's argument from device
 * memory at 'src' to device memory at 'dst'; every other field zero. */
CUDA_MEMCPY2D ts_box_2d_dtod(CUdeviceptr dst, CUdeviceptr src, const ts_box *b);
CUDA_MEMCPY3D ts_box_3d_dtod(CUdeviceptr dst, CUdeviceptr src, const ts_box *b);
/* What that copy does, done on host images of the two buffers. */
void ts_box_copy_host(unsigned char *dst, const unsigned char *src, const ts_box *b);

/* What cuMemsetD8/D16/D32 (elem 1, 2, 4 bytes) of 'count' elements of
 * 'value' leaves in memory, written to 'dst': the value's low 'elem' bytes,
 * least significant first. */
void ts_fill_host(unsigned char *dst, uint32_t value, unsigned elem, size_t count);
/* The same for cuMemsetD2D8/16/32: 'height' lines of 'width' elements,
 * 'pitch' bytes apart. */
void ts_fill_2d_host(unsigned char *dst, size_t pitch, uint32_t value, unsigned elem, size_t width, size_t height);

/* ------------------------------------------------------------------ objects */

/* cuStreamCreate / cuEventCreate / cuMemAlloc / cuMemAllocHost, failing the
 * test unless they succeed (the context frees what is left). */
CUstream ts_stream_new(unsigned flags);
CUevent ts_event_new(unsigned flags);
CUdeviceptr ts_dev_alloc(size_t n);
unsigned char *ts_pinned_alloc(size_t n);

/* Busy work: 'reps' device-to-device copies of 64 MiB between two scratch
 * buffers, queued on a stream. On the simulator each is a memmove of tens of
 * ms; the H200 does one in ~50 us, so ts_busy_until_not_ready grows 'reps'
 * until the work is seen running. */
typedef struct {
    CUdeviceptr a, b;
    size_t n;
    unsigned reps;
} ts_busy;

ts_busy ts_busy_new(void);
void ts_busy_queue(const ts_busy *w, CUstream s);
/* Queues busy work on 's' until cuStreamQuery(s), right after queueing it,
 * answers CUDA_ERROR_NOT_READY: the work is then still running. Fails when
 * the stream never looks busy (cuStreamQuery claims completion too early). */
void ts_busy_until_not_ready(ts_busy *w, CUstream s);
void ts_busy_free(ts_busy *w);

/* ------------------------------------------------------------------ hangs */

/* In 'seconds', unless disarmed, the process prints "<who>: a hang (watchdog
 * expired)" and exits with status 1: a hang fails the run instead of
 * stalling it. */
void ts_watchdog_arm(const char *who, unsigned seconds);
void ts_watchdog_disarm(void);

/* ------------------------------------------------------------------ environment */

/* NVLITE_DEVICE=sim: the in-process simulated driver is in use. */
int ts_on_simulator(void);
/* 1 when this machine has a real NVIDIA GPU that the library will use:
 * /dev/nvidiactl exists and NVLITE_DEVICE is unset. Otherwise 0, and *why (if
 * not NULL) says why not. */
int ts_have_real_gpu(const char **why);
/* Physical memory of the machine, in bytes (0 if unknown). */
uint64_t ts_host_ram_bytes(void);
/* Monotonic seconds. */
double ts_now(void);

/* Skips the current test, saying why. */
#define ts_skip(...)                                   \
    do {                                               \
        print_message("[  SKIP    ] " __VA_ARGS__);    \
        print_message("\n");                           \
        skip();                                        \
    } while (0)

#define TS_KiB ((size_t)1 << 10)
#define TS_MiB ((size_t)1 << 20)
#define TS_GiB ((size_t)1 << 30)

#define TS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ kernels */

/* 'input' (-rdc code: CU_JIT_INPUT_CUBIN or CU_JIT_INPUT_PTX, 'size' bytes)
 * linked with the toolkit's libcudadevrt by cuLink, as programs calling the
 * device runtime do, and loaded as a library. Skips the test when
 * $CUDA_HOME/lib64/libcudadevrt.a (default /usr/local/cuda) is missing or
 * the library cannot link one (no nvJitLink); fails it otherwise. */
CUlibrary ts_load_with_cudadevrt(CUjitInputType type, const void *input, size_t size, const char *name);

#ifdef __cplusplus
}
#endif

#include "support/ts_kernels.h"

#endif /* NVLITE_TESTS_SUPPORT_TEST_SUPPORT_H */
