#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_POPULATE */
#include "support/test_support.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ results */

const char *ts_cu_name(CUresult r) {
    static _Thread_local char ring[4][48];
    static _Thread_local unsigned next;
    const char *name = NULL;
    if (cuGetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
    char *buf = ring[next++ % 4];
    snprintf(buf, sizeof ring[0], "CUresult(%d)", (int)r);
    return buf;
}

void ts_check_cu(CUresult expected, CUresult actual, const char *expr, const char *file, int line) {
    if (expected == actual) return;
    print_error("%s:%d: %s\n    returned %s (%d), expected %s (%d)\n", file, line, expr, ts_cu_name(actual),
                (int)actual, ts_cu_name(expected), (int)expected);
    _fail(file, line);
}

void ts_check_cu_either(CUresult a, CUresult b, CUresult actual, const char *expr, const char *file, int line) {
    if (actual == a || actual == b) return;
    print_error("%s:%d: %s\n    returned %s (%d), expected %s (%d) or %s (%d)\n", file, line, expr,
                ts_cu_name(actual), (int)actual, ts_cu_name(a), (int)a, ts_cu_name(b), (int)b);
    _fail(file, line);
}

/* ------------------------------------------------------------------ bytes */

void ts_check_bytes(const void *expected, const void *actual, size_t n, const char *what, const char *file,
                    int line) {
    if (n == 0 || memcmp(expected, actual, n) == 0) return;
    const unsigned char *e = expected, *a = actual;
    size_t first = 0, count = 0, last = 0;
    while (e[first] == a[first]) ++first;
    for (size_t i = first; i < n; ++i)
        if (e[i] != a[i]) {
            ++count;
            last = i;
        }
    print_error("%s:%d: %s differs from the expected %zu bytes: first at offset %zu (got 0x%02x, expected 0x%02x), "
                "last at %zu, %zu bytes differ\n",
                file, line, what, n, first, a[first], e[first], last, count);
    _fail(file, line);
}

void ts_check_all(const void *actual, unsigned char value, size_t n, const char *what, const char *file, int line) {
    const unsigned char *a = actual;
    size_t first = n, count = 0;
    for (size_t i = 0; i < n; ++i)
        if (a[i] != value) {
            if (first == n) first = i;
            ++count;
        }
    if (count == 0) return;
    print_error("%s:%d: %s: %zu of %zu bytes are not 0x%02x, the first at offset %zu (0x%02x)\n", file, line, what,
                count, n, value, first, a[first]);
    _fail(file, line);
}

/* ------------------------------------------------------------------ random data */

void ts_rng_init(ts_rng *rng, uint64_t seed) {
    /* splitmix64 of the seed: any seed (0 too) gives a non-zero state. */
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    rng->state = z ? z : 0x2545F4914F6CDD1Dull;
}

uint64_t ts_rng_next(ts_rng *rng) {
    uint64_t x = rng->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng->state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

uint64_t ts_rng_below(ts_rng *rng, uint64_t bound) { return bound ? ts_rng_next(rng) % bound : 0; }

void ts_fill_random(void *buf, size_t n, uint64_t seed) {
    ts_rng rng;
    ts_rng_init(&rng, seed);
    unsigned char *p = buf;
    size_t i = 0;
    /* Words through memcpy: any alignment of buf. */
    for (; i + 8 <= n; i += 8) {
        uint64_t v = ts_rng_next(&rng);
        memcpy(p + i, &v, 8);
    }
    if (i < n) {
        uint64_t v = ts_rng_next(&rng);
        memcpy(p + i, &v, n - i);
    }
    /* Whole words are never 0 (xorshift64* of a non-zero state); only a
     * short tail alone can be. */
    if (n > 0 && n < 8) {
        int zero = 1;
        for (size_t k = 0; k < n; ++k) zero &= p[k] == 0;
        if (zero) p[0] = 0xA5;
    }
}

/* ------------------------------------------------------------------ host buffers */

#define TS_MAX_TRACKED 4096
/* Buffers from this size on are mapped with their pages populated at once:
 * touching a fresh page costs a fault each, which is slow in some sandboxes
 * (seconds for 1 GiB). */
#define TS_POPULATE_FROM ((size_t)32 << 20)

static struct {
    void *p;
    size_t mapped; /* 0: from malloc */
} tracked[TS_MAX_TRACKED];
static size_t tracked_count;

static void release(void *p, size_t mapped) {
    if (mapped)
        munmap(p, mapped);
    else
        free(p);
}

void *ts_malloc(size_t n) {
    if (tracked_count == TS_MAX_TRACKED) {
        print_error("ts_malloc: more than %d live buffers\n", TS_MAX_TRACKED);
        fail();
    }
    void *p = NULL;
    size_t mapped = 0;
    if (n >= TS_POPULATE_FROM) {
        p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (p == MAP_FAILED)
            p = NULL;
        else
            mapped = n;
    }
    if (!p) p = malloc(n ? n : 1);
    if (!p) {
        print_error("ts_malloc(%zu): out of host memory\n", n);
        fail();
    }
    tracked[tracked_count].p = p;
    tracked[tracked_count].mapped = mapped;
    ++tracked_count;
    return p;
}

void ts_free(void *p) {
    if (!p) return;
    for (size_t i = 0; i < tracked_count; ++i)
        if (tracked[i].p == p) {
            size_t mapped = tracked[i].mapped;
            tracked[i] = tracked[--tracked_count];
            release(p, mapped);
            return;
        }
    free(p);
}

void ts_free_all(void) {
    while (tracked_count) {
        --tracked_count;
        release(tracked[tracked_count].p, tracked[tracked_count].mapped);
    }
}

/* ------------------------------------------------------------------ fixtures */

int ts_group_init(void **state) {
    (void)state;
    CUresult r = cuInit(0);
    if (r != CUDA_SUCCESS) {
        print_error("cuInit(0) returned %s\n", ts_cu_name(r));
        return -1;
    }
    return 0;
}

/* Pops whatever is still current; returns how many entries there were. */
static int drain_context_stack(void) {
    int n = 0;
    CUcontext c = NULL;
    while (cuCtxGetCurrent(&c) == CUDA_SUCCESS && c != NULL && n < 64) {
        CUcontext popped = NULL;
        if (cuCtxPopCurrent(&popped) != CUDA_SUCCESS) break;
        ++n;
    }
    return n;
}

int ts_ctx_setup(void **state) {
    static ts_fixture fixture;
    CUresult r = cuInit(0);
    if (r != CUDA_SUCCESS) {
        print_error("setup: cuInit(0) returned %s\n", ts_cu_name(r));
        return -1;
    }
    CUcontext cur = NULL;
    if (cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != NULL) {
        print_error("setup: a context is already current (an earlier test leaked it)\n");
        return -1;
    }
    fixture.dev = 0;
    fixture.ctx = NULL;
    r = cuDeviceGet(&fixture.dev, 0);
    if (r == CUDA_SUCCESS) r = cuCtxCreate(&fixture.ctx, NULL, 0, fixture.dev);
    if (r != CUDA_SUCCESS) {
        print_error("setup: creating a context returned %s\n", ts_cu_name(r));
        return -1;
    }
    *state = &fixture;
    return 0;
}

int ts_hw_ctx_setup(void **state) {
    if (!ts_have_real_gpu(NULL)) {
        static ts_fixture none;
        *state = &none; /* the test skips, saying why */
        return 0;
    }
    return ts_ctx_setup(state);
}

int ts_device_arch(void) {
    CUdevice dev = 0;
    int major = 0, minor = 0;
    assert_cu_ok(cuDeviceGet(&dev, 0));
    assert_cu_ok(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    assert_cu_ok(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    return major * 10 + minor;
}

CUstream ts_stream_new(unsigned flags) {
    CUstream s = NULL;
    assert_cu_ok(cuStreamCreate(&s, flags));
    assert_non_null(s);
    return s;
}

CUevent ts_event_new(unsigned flags) {
    CUevent e = NULL;
    assert_cu_ok(cuEventCreate(&e, flags));
    assert_non_null(e);
    return e;
}

CUdeviceptr ts_dev_alloc(size_t n) {
    CUdeviceptr p = 0;
    assert_cu_ok(cuMemAlloc(&p, n));
    return p;
}

unsigned char *ts_pinned_alloc(size_t n) {
    void *p = NULL;
    assert_cu_ok(cuMemAllocHost(&p, n));
    return p;
}

ts_busy ts_busy_new(void) {
    ts_busy w = {0, 0, 64 * TS_MiB + 3, 4};
    w.a = ts_dev_alloc(w.n);
    w.b = ts_dev_alloc(w.n);
    assert_cu_ok(cuMemsetD8(w.a, 0x11, w.n));
    assert_cu_ok(cuMemsetD8(w.b, 0x22, w.n));
    assert_cu_ok(cuCtxSynchronize()); /* non-blocking streams do not wait for these */
    return w;
}

void ts_busy_queue(const ts_busy *w, CUstream s) {
    for (unsigned i = 0; i < w->reps; ++i)
        assert_cu_ok(cuMemcpyDtoDAsync(i & 1 ? w->a : w->b, i & 1 ? w->b : w->a, w->n, s));
}

void ts_busy_until_not_ready(ts_busy *w, CUstream s) {
    for (int attempt = 0; attempt < 5; ++attempt) {
        ts_busy_queue(w, s);
        const CUresult r = cuStreamQuery(s);
        if (r == CUDA_ERROR_NOT_READY) return;
        assert_cu(CUDA_SUCCESS, r);
        assert_cu_ok(cuStreamSynchronize(s));
        w->reps *= 4;
    }
    fail_msg("cuStreamQuery(%p) never answered CUDA_ERROR_NOT_READY right after %u queued copies of %zu bytes",
             (void *)s, w->reps / 4, w->n);
}

void ts_busy_free(ts_busy *w) {
    assert_cu_ok(cuMemFree(w->a));
    assert_cu_ok(cuMemFree(w->b));
}

static char watchdog_message[128];
static size_t watchdog_length;

static void on_watchdog(int sig) {
    (void)sig;
    ssize_t n = write(STDERR_FILENO, watchdog_message, watchdog_length);
    (void)n;
    _exit(1);
}

void ts_watchdog_arm(const char *who, unsigned seconds) {
    int n = snprintf(watchdog_message, sizeof watchdog_message, "%s (watchdog expired)\n", who);
    watchdog_length = n < 0 ? 0 : (size_t)n < sizeof watchdog_message ? (size_t)n : sizeof watchdog_message - 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_watchdog;
    sigaction(SIGALRM, &sa, NULL);
    alarm(seconds);
}

void ts_watchdog_disarm(void) { alarm(0); }

CUmodule ts_source_module(const char *source, const char *name) {
    static struct {
        const char *source;
        void *cubin;
    } cache[8];
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) ts_skip("NVRTC is needed: %s", why);
    size_t i = 0;
    while (i < TS_ARRAY_SIZE(cache) && cache[i].source && cache[i].source != source) ++i;
    if (i == TS_ARRAY_SIZE(cache)) fail_msg("ts_source_module: more than %zu kernel sources", TS_ARRAY_SIZE(cache));
    if (!cache[i].source) {
        size_t size = 0;
        cache[i].source = source;
        cache[i].cubin = ts_compile_cubin(source, name, ts_device_arch(), &size);
    }
    if (!cache[i].cubin) fail_msg("NVRTC could not compile %s", name);
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoadData(&m, cache[i].cubin));
    return m;
}

CUfunction ts_get_function(CUmodule m, const char *name) {
    CUfunction f = NULL;
    assert_cu_ok(cuModuleGetFunction(&f, m, name));
    assert_non_null(f);
    return f;
}

int ts_ctx_teardown(void **state) {
    ts_fixture *fx = *state;
    int rc = 0;
    if (fx && fx->ctx) {
        /* Pops it too when it is on top of this thread's stack; anything a
         * failed test left above it is drained below. */
        CUresult r = cuCtxDestroy(fx->ctx);
        if (r != CUDA_SUCCESS) {
            print_error("teardown: cuCtxDestroy returned %s\n", ts_cu_name(r));
            rc = -1;
        }
        fx->ctx = NULL;
    }
    ts_free_all();
    int left = drain_context_stack();
    if (left) {
        print_error("teardown: the test left %d context(s) on the stack\n", left);
        rc = -1;
    }
    return rc;
}

int ts_check_no_current_context(void **state) {
    (void)state;
    ts_free_all();
    int left = drain_context_stack();
    if (left) {
        print_error("teardown: the test left %d context(s) on the stack\n", left);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ copy and fill shapes */

CUDA_MEMCPY2D ts_box_2d_dtod(CUdeviceptr dst, CUdeviceptr src, const ts_box *b) {
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = src;
    c.srcXInBytes = b->srcX;
    c.srcY = b->srcY;
    c.srcPitch = b->srcPitch;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = dst;
    c.dstXInBytes = b->dstX;
    c.dstY = b->dstY;
    c.dstPitch = b->dstPitch;
    c.WidthInBytes = b->width;
    c.Height = b->height;
    return c;
}

CUDA_MEMCPY3D ts_box_3d_dtod(CUdeviceptr dst, CUdeviceptr src, const ts_box *b) {
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = src;
    c.srcXInBytes = b->srcX;
    c.srcY = b->srcY;
    c.srcPitch = b->srcPitch;
    c.srcHeight = b->srcHeight;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = dst;
    c.dstXInBytes = b->dstX;
    c.dstY = b->dstY;
    c.dstPitch = b->dstPitch;
    c.dstHeight = b->dstHeight;
    c.WidthInBytes = b->width;
    c.Height = b->height;
    c.Depth = b->depth;
    return c;
}

void ts_box_copy_host(unsigned char *dst, const unsigned char *src, const ts_box *b) {
    for (size_t z = 0; z < b->depth; ++z)
        for (size_t y = 0; y < b->height; ++y)
            memcpy(dst + (z * b->dstHeight + b->dstY + y) * b->dstPitch + b->dstX,
                   src + (z * b->srcHeight + b->srcY + y) * b->srcPitch + b->srcX, b->width);
}

void ts_fill_host(unsigned char *dst, uint32_t value, unsigned elem, size_t count) {
    for (size_t i = 0; i < count * elem; ++i) dst[i] = (unsigned char)(value >> (8 * (i % elem)));
}

void ts_fill_2d_host(unsigned char *dst, size_t pitch, uint32_t value, unsigned elem, size_t width, size_t height) {
    for (size_t y = 0; y < height; ++y) ts_fill_host(dst + y * pitch, value, elem, width);
}

/* ------------------------------------------------------------------ environment */

int ts_on_simulator(void) {
    const char *d = getenv("NVLITE_DEVICE");
    return d && strcmp(d, "sim") == 0;
}

int ts_have_real_gpu(const char **why) {
    const char *d = getenv("NVLITE_DEVICE");
    if (d) {
        if (why) *why = "NVLITE_DEVICE is set (the simulated driver or another device is selected)";
        return 0;
    }
    if (access("/dev/nvidiactl", F_OK) != 0) {
        if (why) *why = "/dev/nvidiactl is missing: no NVIDIA GPU or driver on this machine";
        return 0;
    }
    if (why) *why = NULL;
    return 1;
}

uint64_t ts_host_ram_bytes(void) {
    long pages = sysconf(_SC_PHYS_PAGES);
    long size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0) return 0;
    return (uint64_t)pages * (uint64_t)size;
}

double ts_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

CUlibrary ts_load_with_cudadevrt(CUjitInputType type, const void *input, size_t size, const char *name) {
    const char *home = getenv("CUDA_HOME");
    char devrt[512];
    snprintf(devrt, sizeof devrt, "%s/lib64/libcudadevrt.a", home ? home : "/usr/local/cuda");
    if (access(devrt, R_OK) != 0) ts_skip("no %s", devrt);
    CUlinkState link;
    assert_cu_ok(cuLinkCreate(0, NULL, NULL, &link));
    assert_cu_ok(cuLinkAddData(link, type, (void *)input, size, name, 0, NULL, NULL));
    CUresult added = cuLinkAddFile(link, CU_JIT_INPUT_LIBRARY, devrt, 0, NULL, NULL);
    if (added == CUDA_ERROR_NOT_SUPPORTED) {
        (void)cuLinkDestroy(link);
        ts_skip("no nvJitLink to link %s", devrt);
    }
    assert_cu_ok(added);
    void *image = NULL;
    size_t imageBytes = 0;
    assert_cu_ok(cuLinkComplete(link, &image, &imageBytes));
    CUlibrary lib;
    assert_cu_ok(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    assert_cu_ok(cuLinkDestroy(link));
    return lib;
}
