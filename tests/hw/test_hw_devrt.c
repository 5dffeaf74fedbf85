/*
 * Hardware-only tests of device printf, assert and malloc/free (make test-hw,
 * on a machine with an NVIDIA GPU; built in CI, skipped there). Kernels are
 * compiled with NVRTC at run time; the library itself needs no toolkit for
 * any of this (its device runtime is compiled in). Each test checks exact
 * output, captured from stdout (file descriptor 1) around the launch and
 * the synchronising call:
 *   - printf from many threads: every line, exactly, at the synchronising
 *     call (the order between threads is the GPU's: compared sorted);
 *   - every conversion the issue names, widths, precisions, '*', %s of
 *     local memory and NULL, %%: exactly what the C library prints for the
 *     same values; printf's return value (the arguments it consumed);
 *   - more output than one FIFO lap over several launches (the ring wraps),
 *     more than the whole FIFO in one launch (lines are lost, none is
 *     garbled or repeated; the next launch prints in full);
 *   - a 1024-thread block with __launch_bounds__(1024) calling printf;
 *   - a failed assert: libcuda's message for each failing thread (all 24
 *     failing lanes of one warp, each once),
 *     CUDA_ERROR_ASSERT from the synchronising call and after (sticky), a
 *     new context works;
 *   - malloc/free in kernels: 8192 threads allocate odd sizes, fill them,
 *     a second kernel checks and frees them, memory is reused; the heap
 *     runs out (NULL) and comes back after free;
 *   - the limits through cuCtxGetLimit/cuCtxSetLimit (when the library
 *     exports them: they come with the drop-in work; skipped before).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_support.h"

static const unsigned kWatchdogSeconds = 120;
static const char kProgram[] = "hw_devrt.cu"; /* NVRTC's __FILE__ */

static const char kSource[] =
    "extern \"C\" {\n"
    "__global__ void k_hello(int base) {\n"
    "    printf(\"hello from block %d thread %d: %d %5.2f %s %c %x %lld %%\\n\", (int)blockIdx.x, (int)threadIdx.x,\n"
    "           base + (int)threadIdx.x, 1.5 * threadIdx.x, \"str\", 'A' + (int)threadIdx.x, 0xabcu, -123456789012LL);\n"
    "}\n"
    "__global__ void k_formats(const int* iv, const double* dv, const char* s, unsigned long long u, void* p, int* ret) {\n"
    "    ret[0] = printf(\"[%d|%i|%u|%x|%X|%o|%c]\\n\", iv[0], iv[1], (unsigned)iv[2], iv[3], iv[4], iv[5], iv[6]);\n"
    "    ret[1] = printf(\"[%8.3f|%-12e|%g|%G|%.0f|%+.2e]\\n\", dv[0], dv[1], dv[2], dv[3], dv[4], dv[5]);\n"
    "    ret[2] = printf(\"[%s|%10s|%-10s|%.3s|%p]\\n\", s, s, s, s, p);\n"
    "    ret[3] = printf(\"[%ld|%lld|%llu|%lx|%05d|%-5d|%*d|%.*f]\\n\", (long)iv[7] * 100000, (long long)iv[8] * 1000000007LL,\n"
    "                    u, (long)u, iv[9], iv[10], iv[11], iv[12], 3, dv[6]);\n"
    "    ret[4] = printf(\"no arguments, 100%%\\n\");\n"
    "    char local[24];\n"
    "    for (int i = 0; i < 23; ++i) local[i] = 'a' + (i + iv[0]) % 26;\n"
    "    local[23] = 0;\n"
    "    ret[5] = printf(\"local [%s] null [%s]\\n\", local, (const char*)0);\n"
    "    ret[6] = printf(\"[%hd|%hhu|%#x|%#o|% d|%+i|%c%c]\\n\", iv[13], iv[14], iv[15], iv[16], iv[17], iv[18], 'o', 'k');\n"
    "}\n"
    "__global__ void k_many(int n, int tag) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) printf(\"line %d %06d\\n\", tag, i);\n"
    "}\n"
    "__global__ void __launch_bounds__(1024) k_wide(int tag) { printf(\"wide %d %d\\n\", tag, (int)threadIdx.x); }\n"
    "__global__ void k_assert(int n) {\n"
    "    int g = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    assert(g < n);\n"
    "}\n"
    "__global__ void k_malloc(int** ptrs, int words) {\n"
    "    int g = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    int n = words + g % 5;\n"
    "    int* p = (int*)malloc(n * sizeof(int));\n"
    "    ptrs[g] = p;\n"
    "    if (p) for (int i = 0; i < n; ++i) p[i] = g * 7919 + i;\n"
    "}\n"
    "__global__ void k_check_free(int** ptrs, int words, int* bad) {\n"
    "    int g = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    int n = words + g % 5;\n"
    "    int* p = ptrs[g];\n"
    "    if (!p) { atomicAdd(bad, 1); return; }\n"
    "    if (((unsigned long long)p & 15) != 0) atomicAdd(bad + 2, 1);\n"
    "    for (int i = 0; i < n; ++i) if (p[i] != g * 7919 + i) { atomicAdd(bad + 1, 1); break; }\n"
    "    free(p);\n"
    "}\n"
    "__global__ void k_exhaust(unsigned long long chunk, unsigned long long* got, int* count) {\n"
    "    void* ps[62];\n"
    "    int n = 0;\n"
    "    while (n < 62) { void* p = malloc(chunk); if (!p) break; ps[n++] = p; }\n"
    "    *count = n;\n"
    "    for (int i = 0; i < n; ++i) got[i] = (unsigned long long)ps[i];\n"
    "    for (int i = 0; i < n; ++i) free(ps[i]);\n"
    "    void* again = malloc(chunk);\n"
    "    got[62] = (unsigned long long)again;\n"
    "    free(again);\n"
    "    free(0);\n"
    "    got[63] = (unsigned long long)malloc(0);\n"
    "}\n"
    "}\n";

/* ------------------------------------------------------------------ capture */

typedef struct {
    int fd, saved;
} capture;

static capture capture_begin(void) {
    capture c;
    fflush(stdout);
    char path[] = "/tmp/nvlite_hw_devrt_XXXXXX";
    c.fd = mkstemp(path);
    assert_true(c.fd >= 0);
    unlink(path);
    c.saved = dup(1);
    assert_true(c.saved >= 0);
    assert_true(dup2(c.fd, 1) == 1);
    return c;
}

/* Restores stdout; returns what was written (ts_malloc'ed, NUL-terminated). */
static char *capture_end(capture *c) {
    fflush(stdout);
    dup2(c->saved, 1);
    close(c->saved);
    off_t n = lseek(c->fd, 0, SEEK_END);
    char *text = ts_malloc((size_t)n + 1);
    ssize_t got = pread(c->fd, text, (size_t)n, 0);
    close(c->fd);
    text[got > 0 ? got : 0] = '\0';
    return text;
}

/* ------------------------------------------------------------------ lines */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int cmp_u64(const void *a, const void *b) {
    const unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

/* Splits text into its lines (in place), sorted; *count lines. */
static char **sorted_lines(char *text, size_t *count) {
    size_t n = 0;
    for (char *p = text; *p; ++p) n += *p == '\n';
    char **lines = ts_malloc((n + 1) * sizeof *lines);
    size_t i = 0;
    for (char *p = text; *p && i < n;) {
        char *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = '\0';
        lines[i++] = p;
        p = nl + 1;
    }
    qsort(lines, i, sizeof *lines, cmp_str);
    *count = i;
    return lines;
}

/* ------------------------------------------------------------------ fixture */

static int setup(void **state) {
    ts_watchdog_arm("test_hw_devrt: a hang", kWatchdogSeconds);
    return ts_hw_ctx_setup(state);
}

static int teardown(void **state) {
    int rc = ts_ctx_teardown(state);
    ts_watchdog_disarm();
    return rc;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

static CUmodule load_module(void) {
    const char *why = NULL;
    if (!ts_have_real_gpu(&why)) ts_skip("no real GPU: %s", why);
    return ts_source_module(kSource, kProgram);
}

/* cuCtxGetLimit / cuCtxSetLimit, when the library exports them. */
typedef CUresult (*get_limit_fn)(size_t *, CUlimit);
typedef CUresult (*set_limit_fn)(CUlimit, size_t);
static int limits_api(get_limit_fn *get, set_limit_fn *set) {
    *get = (get_limit_fn)dlsym(RTLD_DEFAULT, "cuCtxGetLimit");
    *set = (set_limit_fn)dlsym(RTLD_DEFAULT, "cuCtxSetLimit");
    if (!*get || !*set) return 0;
    size_t v = 0;
    return (*get)(&v, CU_LIMIT_PRINTF_FIFO_SIZE) == CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ printf */

static void test_hw_printf_threads(void **state) {
    (void)state;
    CUmodule m = load_module();
    CUfunction f = ts_get_function(m, "k_hello");
    int base = 1000;
    void *params[] = {&base};
    capture c = capture_begin();
    CUresult launched = cuLaunchKernel(f, 3, 1, 1, 7, 1, 1, 0, NULL, params, NULL);
    CUresult synced = cuCtxSynchronize();
    char *text = capture_end(&c);
    assert_cu_ok(launched);
    assert_cu_ok(synced);
    size_t n = 0;
    char **lines = sorted_lines(text, &n);
    char *want[21];
    for (int b = 0; b < 3; ++b) {
        for (int t = 0; t < 7; ++t) {
            char buf[160];
            snprintf(buf, sizeof buf, "hello from block %d thread %d: %d %5.2f %s %c %x %lld %%", b, t, base + t, 1.5 * t,
                     "str", 'A' + t, 0xabcu, -123456789012LL);
            want[b * 7 + t] = strcpy(ts_malloc(strlen(buf) + 1), buf);
        }
    }
    qsort(want, 21, sizeof *want, cmp_str);
    if (n != 21) fail_msg("%zu lines printed, expected 21:\n%s", n, text);
    for (size_t i = 0; i < n; ++i)
        if (strcmp(lines[i], want[i]) != 0) fail_msg("line '%s', expected '%s'", lines[i], want[i]);
    /* Printed once: the next synchronising call prints nothing more. */
    c = capture_begin();
    synced = cuCtxSynchronize();
    text = capture_end(&c);
    assert_cu_ok(synced);
    assert_string_equal(text, "");
    assert_cu_ok(cuModuleUnload(m));
}

static void test_hw_printf_formats(void **state) {
    (void)state;
    CUmodule m = load_module();
    const int iv[19] = {-42, 7, -5, 0xbeef, 0xcafe, 8, 'Z', 12345, -77, 42, -9, 6, -321, 70000, 300, 255, 8, 5, 3};
    const double dv[7] = {3.14159265, -0.000123456, 1e-5, 6.02e23, 2.5, 12345.678, 2.0 / 3.0};
    const char s[] = "a string";
    const unsigned long long u = 0xfedcba9876543210ull;
    CUdeviceptr div = ts_dev_alloc(sizeof iv), ddv = ts_dev_alloc(sizeof dv), ds = ts_dev_alloc(sizeof s);
    CUdeviceptr dret = ts_dev_alloc(16 * sizeof(int));
    assert_cu_ok(cuMemcpyHtoD(div, iv, sizeof iv));
    assert_cu_ok(cuMemcpyHtoD(ddv, dv, sizeof dv));
    assert_cu_ok(cuMemcpyHtoD(ds, s, sizeof s));
    assert_cu_ok(cuMemsetD32(dret, 0xdeadbeef, 16));
    CUdeviceptr p = div; /* any device pointer */
    void *params[] = {&div, &ddv, &ds, (void *)&u, &p, &dret};
    CUfunction f = ts_get_function(m, "k_formats");
    capture c = capture_begin();
    CUresult launched = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
    CUresult synced = cuCtxSynchronize();
    char *text = capture_end(&c);
    assert_cu_ok(launched);
    assert_cu_ok(synced);

    /* The kernel's local string: C's truncating %, the same on both sides. */
    char local[24];
    for (int i = 0; i < 23; ++i) local[i] = (char)('a' + (i + iv[0]) % 26);
    local[23] = 0;
    char want[2048];
    int at = 0;
    at += snprintf(want + at, sizeof want - at, "[%d|%i|%u|%x|%X|%o|%c]\n", iv[0], iv[1], (unsigned)iv[2], iv[3], iv[4],
                   iv[5], iv[6]);
    at += snprintf(want + at, sizeof want - at, "[%8.3f|%-12e|%g|%G|%.0f|%+.2e]\n", dv[0], dv[1], dv[2], dv[3], dv[4],
                   dv[5]);
    at += snprintf(want + at, sizeof want - at, "[%s|%10s|%-10s|%.3s|%p]\n", s, s, s, s, (void *)(uintptr_t)p);
    at += snprintf(want + at, sizeof want - at, "[%ld|%lld|%llu|%lx|%05d|%-5d|%*d|%.*f]\n", (long)iv[7] * 100000,
                   (long long)iv[8] * 1000000007LL, u, (long)u, iv[9], iv[10], iv[11], iv[12], 3, dv[6]);
    at += snprintf(want + at, sizeof want - at, "no arguments, 100%%\n");
    at += snprintf(want + at, sizeof want - at, "local [%s] null [(null)]\n", local);
    at += snprintf(want + at, sizeof want - at, "[%hd|%hhu|%#x|%#o|% d|%+i|%c%c]\n", (short)iv[13],
                   (unsigned char)iv[14], iv[15], iv[16], iv[17], iv[18], 'o', 'k');
    assert_string_equal(text, want);
    /* printf returns the number of arguments it consumed ('*' included). */
    int ret[16];
    assert_cu_ok(cuMemcpyDtoH(ret, dret, sizeof ret));
    const int want_ret[7] = {7, 6, 5, 10, 0, 2, 8};
    for (int i = 0; i < 7; ++i)
        if (ret[i] != want_ret[i]) fail_msg("printf #%d returned %d, expected %d", i, ret[i], want_ret[i]);
    assert_cu_ok(cuModuleUnload(m));
}

/* 'launches' launches of 'per' lines each, synchronised one by one:
 * together more than the FIFO (1 MiB) holds, each alone less. */
static void test_hw_printf_fifo_wraps(void **state) {
    (void)state;
    CUmodule m = load_module();
    CUfunction f = ts_get_function(m, "k_many");
    const int per = 15000, launches = 4; /* ~48 bytes a record: ~720 KB a launch */
    capture c = capture_begin();
    CUresult r = CUDA_SUCCESS;
    for (int tag = 0; tag < launches && r == CUDA_SUCCESS; ++tag) {
        int n = per, t = tag;
        void *params[] = {&n, &t};
        r = cuLaunchKernel(f, (per + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
        if (r == CUDA_SUCCESS) r = cuCtxSynchronize();
    }
    char *text = capture_end(&c);
    assert_cu_ok(r);
    size_t n = 0;
    char **lines = sorted_lines(text, &n);
    if (n != (size_t)per * launches) fail_msg("%zu lines, expected %d", n, per * launches);
    size_t i = 0;
    for (int tag = 0; tag < launches; ++tag) {
        for (int k = 0; k < per; ++k, ++i) {
            char buf[64];
            snprintf(buf, sizeof buf, "line %d %06d", tag, k);
            if (strcmp(lines[i], buf) != 0) fail_msg("line '%s', expected '%s'", lines[i], buf);
        }
    }
    assert_cu_ok(cuModuleUnload(m));
}

/* One launch printing far more than the FIFO holds: what does not fit is
 * lost (libcuda overwrites instead), what is printed is whole and once. */
static void test_hw_printf_fifo_overflow(void **state) {
    (void)state;
    CUmodule m = load_module();
    CUfunction f = ts_get_function(m, "k_many");
    int n = 100000, tag = 9;
    void *params[] = {&n, &tag};
    capture c = capture_begin();
    CUresult launched = cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
    CUresult synced = cuCtxSynchronize();
    char *text = capture_end(&c);
    assert_cu_ok(launched);
    assert_cu_ok(synced);
    size_t count = 0;
    char **lines = sorted_lines(text, &count);
    print_message("[          ] %zu of %d lines fit the FIFO\n", count, n);
    if (count < 1000 || count > (size_t)n) fail_msg("%zu lines", count);
    for (size_t i = 0; i < count; ++i) {
        int t = -1, k = -1;
        char extra;
        if (sscanf(lines[i], "line %d %d%c", &t, &k, &extra) != 2 || t != tag || k < 0 || k >= n || strlen(lines[i]) != 13)
            fail_msg("garbled line '%s'", lines[i]);
        if (i && strcmp(lines[i], lines[i - 1]) == 0) fail_msg("line '%s' printed twice", lines[i]);
    }
    /* The FIFO is usable again. */
    n = 300;
    tag = 10;
    c = capture_begin();
    launched = cuLaunchKernel(f, 2, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
    synced = cuCtxSynchronize();
    text = capture_end(&c);
    assert_cu_ok(launched);
    assert_cu_ok(synced);
    sorted_lines(text, &count);
    assert_int_equal(count, 300);
    assert_cu_ok(cuModuleUnload(m));
}

/* printf in a kernel that may run 1024 threads a block: the runtime's
 * registers fit; on a stream, printed at cuStreamSynchronize. */
static void test_hw_printf_wide_block_on_stream(void **state) {
    (void)state;
    CUmodule m = load_module();
    CUfunction f = ts_get_function(m, "k_wide");
    int max = 0;
    assert_cu_ok(cuFuncGetAttribute(&max, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
    assert_int_equal(max, 1024);
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    int tag = 3;
    void *params[] = {&tag};
    capture c = capture_begin();
    CUresult launched = cuLaunchKernel(f, 1, 1, 1, 1024, 1, 1, 0, s, params, NULL);
    CUresult synced = cuStreamSynchronize(s);
    char *text = capture_end(&c);
    assert_cu_ok(launched);
    assert_cu_ok(synced);
    size_t n = 0;
    char **lines = sorted_lines(text, &n);
    assert_int_equal(n, 1024);
    for (size_t i = 0; i < n; ++i) {
        int t = -1, k = -1;
        if (sscanf(lines[i], "wide %d %d", &t, &k) != 2 || t != 3 || k < 0 || k >= 1024) fail_msg("line '%s'", lines[i]);
        if (i && strcmp(lines[i], lines[i - 1]) == 0) fail_msg("line '%s' twice", lines[i]);
    }
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuModuleUnload(m));
}

/* ------------------------------------------------------------------ assert */

static int assert_line(void) {
    const char *at = strstr(kSource, "assert(g < n)");
    int line = 1;
    for (const char *p = kSource; p < at; ++p) line += *p == '\n';
    return line;
}

static void test_hw_assert(void **state) {
    ts_fixture *fx = ts_fx(state);
    CUmodule m = load_module();
    CUfunction f = ts_get_function(m, "k_assert");
    int n = 40; /* block 1, threads 8..31 fail */
    void *params[] = {&n};
    capture c = capture_begin();
    CUresult launched = cuLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
    CUresult synced = cuCtxSynchronize();
    char *text = capture_end(&c);
    assert_cu_ok(launched);
    assert_cu(CUDA_ERROR_ASSERT, synced);
    size_t count = 0;
    char **lines = sorted_lines(text, &count);
    print_message("[          ] %zu assert messages\n", count);
    /* One message per failing thread, as libcuda prints (the failing lanes
     * of one warp all report before the trap). */
    if (count != 24) fail_msg("%zu assert messages, expected 24:\n%s", count, text);
    int seen[32] = {0};
    for (size_t i = 0; i < count; ++i) {
        int ok = 0;
        for (int t = 8; t < 32 && !ok; ++t) {
            char buf[256];
            snprintf(buf, sizeof buf,
                     "%s:%d: void k_assert(int): block: [1,0,0], thread: [%d,0,0] Assertion `g < n` failed.", kProgram,
                     assert_line(), t);
            ok = strcmp(lines[i], buf) == 0;
            if (ok && seen[t]++) fail_msg("thread %d reported twice", t);
        }
        if (!ok) fail_msg("unexpected line '%s'", lines[i]);
    }
    /* Sticky. */
    CUdeviceptr p = 0;
    assert_cu(CUDA_ERROR_ASSERT, cuMemAlloc(&p, 64));
    assert_cu(CUDA_ERROR_ASSERT, cuCtxSynchronize());
    /* A new context prints again. */
    assert_cu_ok(cuCtxDestroy(fx->ctx));
    fx->ctx = NULL;
    assert_cu_ok(cuCtxCreate(&fx->ctx, NULL, 0, fx->dev));
    m = load_module();
    f = ts_get_function(m, "k_many");
    int k = 5, tag = 1;
    void *p2[] = {&k, &tag};
    c = capture_begin();
    launched = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, p2, NULL);
    synced = cuCtxSynchronize();
    text = capture_end(&c);
    assert_cu_ok(launched);
    assert_cu_ok(synced);
    sorted_lines(text, &count);
    assert_int_equal(count, 5);
    assert_cu_ok(cuModuleUnload(m));
}

/* ------------------------------------------------------------------ malloc */

static void test_hw_malloc_free(void **state) {
    (void)state;
    CUmodule m = load_module();
    CUfunction fm = ts_get_function(m, "k_malloc"), fc = ts_get_function(m, "k_check_free");
    const int blocks = 64, threads = 128, total = blocks * threads, words = 37;
    CUdeviceptr ptrs = ts_dev_alloc(total * sizeof(CUdeviceptr)), bad = ts_dev_alloc(3 * sizeof(int));
    unsigned long long *host = ts_malloc(total * sizeof *host);
    for (int round = 0; round < 3; ++round) {
        int w = words + round;
        void *pm[] = {&ptrs, &w};
        void *pc[] = {&ptrs, &w, &bad};
        assert_cu_ok(cuMemsetD32(bad, 0, 3));
        assert_cu_ok(cuLaunchKernel(fm, blocks, 1, 1, threads, 1, 1, 0, NULL, pm, NULL));
        assert_cu_ok(cuMemcpyDtoH(host, ptrs, total * sizeof *host));
        /* Every allocation there, 16-byte aligned, none overlapping (sorted, compared with the next). */
        qsort(host, total, sizeof *host, cmp_u64);
        for (int i = 0; i < total; ++i) {
            if (!host[i]) fail_msg("round %d: malloc returned NULL (%d threads, %d bytes each)", round, total, (w + 4) * 4);
            if (host[i] & 15) fail_msg("round %d: 0x%llx is not 16-byte aligned", round, host[i]);
            if (i && host[i] - host[i - 1] < (unsigned long long)(w + 4) * 4) fail_msg("round %d: allocations overlap", round);
        }
        assert_cu_ok(cuLaunchKernel(fc, blocks, 1, 1, threads, 1, 1, 0, NULL, pc, NULL));
        int b[3];
        assert_cu_ok(cuMemcpyDtoH(b, bad, sizeof b));
        if (b[0] || b[1] || b[2]) fail_msg("round %d: %d missing, %d with wrong contents, %d misaligned", round, b[0], b[1], b[2]);
    }
    assert_cu_ok(cuModuleUnload(m));
}

static void test_hw_malloc_exhausts_heap(void **state) {
    (void)state;
    CUmodule m = load_module();
    CUfunction f = ts_get_function(m, "k_exhaust");
    const unsigned long long chunk = 1u << 20;
    size_t heap = 8u << 20; /* libcuda's default */
    get_limit_fn get;
    set_limit_fn set;
    if (limits_api(&get, &set)) assert_cu_ok(get(&heap, CU_LIMIT_MALLOC_HEAP_SIZE));
    CUdeviceptr got = ts_dev_alloc(64 * 8), count = ts_dev_alloc(4);
    void *params[] = {(void *)&chunk, &got, &count};
    assert_cu_ok(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    unsigned long long ptr[64];
    int n = 0;
    assert_cu_ok(cuMemcpyDtoH(ptr, got, sizeof ptr));
    assert_cu_ok(cuMemcpyDtoH(&n, count, sizeof n));
    print_message("[          ] %d blocks of 1 MiB from a %zu-byte heap\n", n, heap);
    if (n < 1 || (unsigned long long)n * chunk > heap) fail_msg("%d blocks of 1 MiB from a %zu-byte heap", n, heap);
    if (!ptr[62]) fail_msg("malloc after free returned NULL: freed memory was not reused");
    if (ptr[63]) fail_msg("malloc(0) returned 0x%llx, expected NULL", ptr[63]);
    /* Again: the heap is whole once more. */
    assert_cu_ok(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    int again = 0;
    assert_cu_ok(cuMemcpyDtoH(&again, count, sizeof again));
    assert_int_equal(again, n);
    assert_cu_ok(cuModuleUnload(m));
}

/* ------------------------------------------------------------------ limits */

static void test_hw_limits(void **state) {
    (void)state;
    const char *why = NULL;
    if (!ts_have_real_gpu(&why)) ts_skip("no real GPU: %s", why);
    get_limit_fn get;
    set_limit_fn set;
    if (!limits_api(&get, &set)) ts_skip("cuCtxGetLimit(CU_LIMIT_PRINTF_FIFO_SIZE) is not available in this build");
    size_t v = 0;
    assert_cu_ok(get(&v, CU_LIMIT_PRINTF_FIFO_SIZE));
    assert_int_equal(v, 8650752);
    assert_cu_ok(get(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
    assert_int_equal(v, 8u << 20);
    /* A small FIFO: most of a big launch's lines are lost, the rest whole. */
    assert_cu_ok(set(CU_LIMIT_PRINTF_FIFO_SIZE, 512 * 1024));
    assert_cu_ok(set(CU_LIMIT_MALLOC_HEAP_SIZE, 5u << 20));
    assert_cu_ok(get(&v, CU_LIMIT_PRINTF_FIFO_SIZE));
    assert_int_equal(v, 512 * 1024);
    CUmodule m = ts_source_module(kSource, kProgram);
    CUfunction f = ts_get_function(m, "k_many");
    int n = 60000, tag = 4;
    void *params[] = {&n, &tag};
    capture c = capture_begin();
    CUresult launched = cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
    CUresult synced = cuCtxSynchronize();
    char *text = capture_end(&c);
    assert_cu_ok(launched);
    assert_cu_ok(synced);
    size_t count = 0;
    sorted_lines(text, &count);
    print_message("[          ] %zu of %d lines fit a 512 KiB FIFO\n", count, n);
    if (count == 0 || count > 512 * 1024 / 40) fail_msg("%zu lines through a 512 KiB FIFO", count);
    /* Fixed once a kernel used it (libcuda: CUDA_ERROR_INVALID_VALUE). */
    assert_cu(CUDA_ERROR_INVALID_VALUE, set(CU_LIMIT_PRINTF_FIFO_SIZE, 1u << 20));
    /* The heap is still free to change: no kernel used it yet. */
    assert_cu_ok(set(CU_LIMIT_MALLOC_HEAP_SIZE, 6u << 20));
    assert_cu_ok(get(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
    assert_int_equal(v, 6u << 20);
    assert_cu_ok(cuModuleUnload(m));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_hw_printf_threads),
        TEST(test_hw_printf_formats),
        TEST(test_hw_printf_fifo_wraps),
        TEST(test_hw_printf_fifo_overflow),
        TEST(test_hw_printf_wide_block_on_stream),
        TEST(test_hw_assert),
        TEST(test_hw_malloc_free),
        TEST(test_hw_malloc_exhausts_heap),
        TEST(test_hw_limits),
    };
    return cmocka_run_group_tests_name("hw_devrt", tests, NULL, NULL);
}
