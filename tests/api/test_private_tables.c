/*
 * The private tables cudart 13 needs (lib/api/private_tables.h), called the
 * way cudart calls them: CUDART_INTERFACE, TOOLS_RUNTIME_CALLBACK_HOOKS,
 * TOOLS_TLS, CONTEXT_LOCAL_STORAGE_INTERFACE_V0301 (with its destructors),
 * CONTEXT_CHECKS and INTEGRITY_CHECK, and cuBLAS's 21318c60. tests/cudart
 * runs cudart itself on them (and cuBLAS, tests/dropin/cublas_sgemm.cu);
 * tests/unit/test_integrity_check.cpp checks the hash.
 *
 * Expected values: what libcuda 580 answered cudart, CuPy and PyTorch on
 * the H200 (tools/etrace, coordinator's run1 logs): table sizes in slot 0,
 * CUDA_ERROR_INVALID_CONTEXT from a storage lookup without a current
 * context, CUDA_ERROR_INVALID_HANDLE for a key without a value, 0 from the
 * two context checks, the fixed answers of the integrity check to versions
 * ending in 0 and 1, the current context from TOOLS_TLS[2], 1 and 7 from
 * cuBLAS's [4] and [39].
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "support/test_support.h"

/* ------------------------------------------------------------------ tables */

typedef struct {
    const char *name;
    unsigned char id[16];
    size_t slots;
    int sized; /* slot 0 holds the table's size in bytes */
} table_id;

static const table_id kCudart = {"CUDART_INTERFACE",
                                 {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd,
                                   0x9d, 0xf9},
                                 13, 1};
static const table_id kHooks = {"TOOLS_RUNTIME_CALLBACK_HOOKS",
                                {0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93,
                                  0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66},
                                7, 1};
static const table_id kTls = {"TOOLS_TLS",
                              {0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82,
                                0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc},
                              3, 1};
static const table_id kStorage = {"CONTEXT_LOCAL_STORAGE_INTERFACE_V0301",
                                  {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8,
                                    0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93},
                                  3, 0};
static const table_id kChecks = {"CONTEXT_CHECKS",
                                 {0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6,
                                   0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e},
                                 15, 1};
static const table_id kIntegrity = {"INTEGRITY_CHECK",
                                    {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d,
                                      0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2},
                                    3, 1};
static const table_id kCublas = {"CUBLAS_21318c60",
                                 {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24,
                                   0xc8, 0xf2},
                                 93, 1};

static void *const *table(const table_id *t) {
    const void *p = NULL;
    CUuuid id;
    memcpy(id.bytes, t->id, sizeof id.bytes);
    assert_cu_ok(cuGetExportTable(&p, &id));
    assert_non_null(p);
    return (void *const *)p;
}

/* Slot signatures, as cudart calls them. */
typedef CUresult (*module_from_wrapper_fn)(CUmodule *, const void *);
typedef CUresult (*primary_context_fn)(CUcontext *, CUdevice);
typedef CUresult (*module_from_wrapper_ex_fn)(CUmodule *, const void *, void *, void *, unsigned);
typedef CUresult (*module_from_fatbin_fn)(const void *, CUmodule *, void *, void *, unsigned);
typedef CUresult (*load_compilers_fn)(void);
typedef void (*hook_area_fn)(void **, size_t *);
typedef void (*storage_destructor)(CUcontext, void *, void *);
typedef CUresult (*storage_put_fn)(CUcontext, void *, void *, storage_destructor);
typedef CUresult (*storage_delete_fn)(CUcontext, void *);
typedef CUresult (*storage_get_fn)(void **, CUcontext, void *);
typedef CUresult (*context_check_fn)(CUcontext, uint32_t *, const void **);
typedef uint32_t (*check_fn)(void);
typedef CUresult (*integrity_fn)(unsigned, unsigned long long, uint64_t *);
typedef CUresult (*unknown_fn)(void);
typedef CUresult (*current_context_fn)(CUcontext *);
typedef CUresult (*cublas_flag_fn)(CUcontext, uint64_t *);
typedef CUresult (*cublas_object_fn)(CUcontext, void *, const void **);
typedef CUresult (*cublas_query_fn)(CUcontext, const void *, uint64_t *);

#define SLOT(type, t, i) ((type)table(&(t))[i])

/* ------------------------------------------------------------------ tests */

static void test_tables_and_sizes(void **state) {
    (void)state;
    const table_id *all[] = {&kCudart, &kHooks, &kTls, &kStorage, &kChecks, &kIntegrity, &kCublas};
    for (size_t i = 0; i < TS_ARRAY_SIZE(all); ++i) {
        void *const *t = table(all[i]);
        if (all[i]->sized) assert_int_equal((uintptr_t)t[0], all[i]->slots * sizeof(void *));
        for (size_t s = all[i]->sized ? 1 : 0; s < all[i]->slots; ++s) {
            if (all[i] == &kCudart && s == 10) {
                assert_null(t[s]); /* empty in libcuda 580 too */
                continue;
            }
            if (!t[s]) fail_msg("%s[%zu] is empty", all[i]->name, s);
        }
        /* The same table every time. */
        assert_ptr_equal(t, table(all[i]));
    }
    /* Asked for and not served: cudart's optional f8cff951. */
    const unsigned char optionalId[16] = {0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e,
                                          0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9};
    CUuuid optional;
    memcpy(optional.bytes, optionalId, sizeof optional.bytes);
    const void *p = (const void *)1;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetExportTable(&p, &optional));
    assert_null(p);
}

/* Slots whose meaning nobody knows answer an error, never a fake success. */
static void test_unknown_slots(void **state) {
    (void)state;
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, SLOT(unknown_fn, kCudart, 3)());
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, SLOT(unknown_fn, kCudart, 11)());
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, SLOT(unknown_fn, kHooks, 1)());
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, SLOT(unknown_fn, kTls, 1)());
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, SLOT(unknown_fn, kChecks, 14)());
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, SLOT(unknown_fn, kIntegrity, 2)());
    for (size_t i = 1; i < kCublas.slots; ++i)
        if (i != 4 && i != 39 && i != 51) assert_cu(CUDA_ERROR_NOT_SUPPORTED, SLOT(unknown_fn, kCublas, i)());
}

/* TOOLS_TLS[2]: the calling thread's current context (NULL for none). */
static void *current_in_thread(void *arg) {
    CUcontext *out = arg;
    if (SLOT(current_context_fn, kTls, 2)(out) != CUDA_SUCCESS) *out = (CUcontext)1;
    return NULL;
}

static void test_tools_tls_current_context(void **state) {
    ts_fixture *fx = ts_fx(state);
    current_context_fn current = SLOT(current_context_fn, kTls, 2);
    CUcontext c = NULL;
    assert_cu_ok(current(&c));
    assert_ptr_equal(c, fx->ctx);
    CUcontext other = NULL;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev));
    assert_cu_ok(current(&c));
    assert_ptr_equal(c, other);
    assert_cu_ok(cuCtxDestroy(other));
    assert_cu_ok(current(&c));
    assert_ptr_equal(c, fx->ctx);
    /* Another thread has none current. */
    CUcontext seen = (CUcontext)2;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, current_in_thread, &seen), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_null(seen);
    assert_cu(CUDA_ERROR_INVALID_VALUE, current(NULL));
}

/* cuBLAS's table: the three slots cuBLAS calls, answered as libcuda 580 did,
 * for the current context or a named one; none current is an error. */
static void test_cublas_table(void **state) {
    ts_fixture *fx = ts_fx(state);
    uint64_t v = 0xdeadbeefcafef00dull;
    assert_cu_ok(SLOT(cublas_flag_fn, kCublas, 4)(fx->ctx, &v));
    assert_true(v == 1);
    v = 0;
    assert_cu_ok(SLOT(cublas_flag_fn, kCublas, 4)(NULL, &v));
    assert_true(v == 1);
    assert_cu(CUDA_ERROR_INVALID_VALUE, SLOT(cublas_flag_fn, kCublas, 4)(fx->ctx, NULL));

    const void *obj = NULL;
    assert_cu_ok(SLOT(cublas_object_fn, kCublas, 51)(fx->ctx, NULL, &obj));
    assert_non_null(obj);
    assert_true(*(const uint64_t *)obj == 1);
    v = 0;
    assert_cu_ok(SLOT(cublas_query_fn, kCublas, 39)(fx->ctx, obj, &v));
    assert_true(v == 7);
    /* Not its object, or nowhere to write: a value error. */
    assert_cu(CUDA_ERROR_INVALID_VALUE, SLOT(cublas_query_fn, kCublas, 39)(fx->ctx, &v, &v));
    assert_cu(CUDA_ERROR_INVALID_VALUE, SLOT(cublas_query_fn, kCublas, 39)(fx->ctx, obj, NULL));

    /* No context current, none named. */
    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, SLOT(cublas_flag_fn, kCublas, 4)(NULL, &v));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, SLOT(cublas_object_fn, kCublas, 51)(NULL, NULL, &obj));
    assert_cu_ok(cuCtxPushCurrent(popped));
}

/* CUDART_INTERFACE[2]: the primary context's handle, made but not retained
 * or activated; cuDevicePrimaryCtxRetain then gives the same handle. */
static void test_primary_context_slot(void **state) {
    (void)state;
    primary_context_fn primary = SLOT(primary_context_fn, kCudart, 2);
    CUcontext ctx = NULL, again = NULL, retained = NULL;
    assert_cu(CUDA_ERROR_INVALID_VALUE, primary(NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, primary(&ctx, 99));
    assert_cu_ok(primary(&ctx, 0));
    assert_non_null(ctx);
    assert_cu_ok(primary(&again, 0));
    assert_ptr_equal(ctx, again);
    unsigned flags = 0;
    int active = 1;
    assert_cu_ok(cuDevicePrimaryCtxGetState(0, &flags, &active));
    assert_int_equal(active, 0);
    assert_cu_ok(cuDevicePrimaryCtxRetain(&retained, 0));
    assert_ptr_equal(ctx, retained);
    assert_cu_ok(cuDevicePrimaryCtxRelease(0));
}

static const char kKernel[] = "extern \"C\" __global__ void k_one(int* p) { p[threadIdx.x] = 1; }\n";

/* CUDART_INTERFACE[1], [6] and [8]: modules from the fat-binary wrapper nvcc
 * embeds ({magic 0x466243B1, version, image, NULL}) and from an image. */
static void test_module_slots(void **state) {
    (void)state;
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) ts_skip("%s", why);
    size_t size = 0;
    void *cubin = ts_compile_cubin(kKernel, "private_tables.cu", ts_device_arch(), &size);
    assert_non_null(cubin);
    struct {
        uint32_t magic, version;
        const void *data, *prelinked;
    } wrapper = {0x466243B1u, 1, cubin, NULL}, bad = {0x12345678u, 1, cubin, NULL};

    CUmodule m = NULL;
    CUfunction f = NULL;
    assert_cu_ok(SLOT(module_from_wrapper_fn, kCudart, 1)(&m, &wrapper));
    assert_cu_ok(cuModuleGetFunction(&f, m, "k_one"));
    assert_cu_ok(cuModuleUnload(m));
    assert_cu(CUDA_ERROR_INVALID_IMAGE, SLOT(module_from_wrapper_fn, kCudart, 1)(&m, &bad));
    assert_cu(CUDA_ERROR_INVALID_VALUE, SLOT(module_from_wrapper_fn, kCudart, 1)(NULL, &wrapper));
    assert_cu(CUDA_ERROR_INVALID_VALUE, SLOT(module_from_wrapper_fn, kCudart, 1)(&m, NULL));

    assert_cu_ok(SLOT(module_from_wrapper_ex_fn, kCudart, 6)(&m, &wrapper, NULL, NULL, 0));
    assert_cu_ok(cuModuleUnload(m));
    int unknown = 0;
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, SLOT(module_from_wrapper_ex_fn, kCudart, 6)(&m, &wrapper, &unknown, NULL, 0));

    assert_cu_ok(SLOT(module_from_fatbin_fn, kCudart, 8)(cubin, &m, NULL, NULL, 0));
    assert_cu_ok(cuModuleGetFunction(&f, m, "k_one"));
    assert_cu_ok(cuModuleUnload(m));
    assert_cu(CUDA_ERROR_NOT_SUPPORTED, SLOT(module_from_fatbin_fn, kCudart, 8)(cubin, &m, NULL, NULL, 7));

    assert_cu_ok(SLOT(load_compilers_fn, kCudart, 12)());
    free(cubin);
}

/* TOOLS_RUNTIME_CALLBACK_HOOKS[2]/[6]: the tools' hook areas, 1024 and 14
 * entries as in libcuda 580, empty while no tool is attached. */
static void test_tool_hook_areas(void **state) {
    (void)state;
    void *area = NULL;
    size_t entries = 0;
    SLOT(hook_area_fn, kHooks, 2)(&area, &entries);
    assert_non_null(area);
    assert_int_equal(entries, 1024);
    const uint64_t *a = area;
    for (size_t i = 0; i < entries; ++i) assert_int_equal(a[i], 0);
    void *area2 = NULL;
    SLOT(hook_area_fn, kHooks, 6)(&area2, &entries);
    assert_non_null(area2);
    assert_ptr_not_equal(area, area2);
    assert_int_equal(entries, 14);
}

/* ---- context-local storage */

typedef struct {
    int calls;
    CUcontext ctx;
    void *key, *value;
    CUresult state; /* cuDevicePrimaryCtxGetState from inside the destructor */
    int active;
} destructor_log;

static destructor_log g_log;

static void record_destructor(CUcontext ctx, void *key, void *value) {
    g_log.calls++;
    g_log.ctx = ctx;
    g_log.key = key;
    g_log.value = value;
    /* The driver may be called, the primary-context functions included, and
     * the context is still active. */
    unsigned flags = 0;
    g_log.active = -1;
    g_log.state = cuDevicePrimaryCtxGetState(0, &flags, &g_log.active);
    void *v = NULL;
    storage_get_fn get = SLOT(storage_get_fn, kStorage, 2);
    (void)get(&v, ctx, key); /* taken out before: no value */
}

static void test_storage_without_context(void **state) {
    (void)state;
    int key;
    void *v = (void *)1;
    storage_get_fn get = SLOT(storage_get_fn, kStorage, 2);
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, get(&v, NULL, &key));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, SLOT(storage_put_fn, kStorage, 0)(NULL, &key, &key, NULL));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, SLOT(storage_delete_fn, kStorage, 1)(NULL, &key));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, get(&v, (CUcontext)&key, &key)); /* not a context */
}

static void test_storage_put_get_delete(void **state) {
    ts_fixture *fx = ts_fx(state);
    storage_put_fn put = SLOT(storage_put_fn, kStorage, 0);
    storage_delete_fn del = SLOT(storage_delete_fn, kStorage, 1);
    storage_get_fn get = SLOT(storage_get_fn, kStorage, 2);
    int key1, key2, value1, value2, value3;
    void *v = NULL;
    assert_cu(CUDA_ERROR_INVALID_HANDLE, get(&v, NULL, &key1));
    assert_cu_ok(put(NULL, &key1, &value1, NULL)); /* NULL: the current context */
    assert_cu_ok(put(fx->ctx, &key2, &value2, NULL));
    assert_cu_ok(get(&v, fx->ctx, &key1));
    assert_ptr_equal(v, &value1);
    assert_cu_ok(get(&v, NULL, &key2));
    assert_ptr_equal(v, &value2);
    assert_cu_ok(put(NULL, &key1, &value3, NULL)); /* replaces */
    assert_cu_ok(get(&v, NULL, &key1));
    assert_ptr_equal(v, &value3);
    assert_cu(CUDA_ERROR_INVALID_VALUE, get(NULL, NULL, &key1));

    /* Per context: another context does not see them. */
    CUcontext other = NULL;
    assert_cu_ok(cuCtxCreate(&other, NULL, 0, fx->dev));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, get(&v, NULL, &key1));
    assert_cu_ok(get(&v, fx->ctx, &key1));
    assert_ptr_equal(v, &value3);
    assert_cu_ok(cuCtxDestroy(other));

    assert_cu_ok(del(NULL, &key1));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, get(&v, NULL, &key1));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, del(NULL, &key1));
    assert_cu_ok(get(&v, NULL, &key2));
    assert_ptr_equal(v, &value2);
}

/* The destructor runs once when the context is destroyed, with (context,
 * key, value); deleted keys' destructors never run. */
static void test_storage_destructor_on_destroy(void **state) {
    ts_fixture *fx = ts_fx(state);
    storage_put_fn put = SLOT(storage_put_fn, kStorage, 0);
    storage_delete_fn del = SLOT(storage_delete_fn, kStorage, 1);
    int key, gone, value, other;
    memset(&g_log, 0, sizeof g_log);
    assert_cu_ok(put(fx->ctx, &key, &value, record_destructor));
    assert_cu_ok(put(fx->ctx, &gone, &other, record_destructor));
    assert_cu_ok(del(fx->ctx, &gone));
    assert_int_equal(g_log.calls, 0);
    assert_cu_ok(cuCtxDestroy(fx->ctx));
    CUcontext destroyed = fx->ctx;
    fx->ctx = NULL;
    assert_int_equal(g_log.calls, 1);
    assert_ptr_equal(g_log.ctx, destroyed);
    assert_ptr_equal(g_log.key, &key);
    assert_ptr_equal(g_log.value, &value);
}

/* Primary contexts: the destructors run on the last cuDevicePrimaryCtxRelease
 * (not on one that leaves it retained) and on cuDevicePrimaryCtxReset (what
 * cudaDeviceReset calls). */
static void test_storage_destructor_on_primary_release_and_reset(void **state) {
    (void)state;
    storage_put_fn put = SLOT(storage_put_fn, kStorage, 0);
    storage_get_fn get = SLOT(storage_get_fn, kStorage, 2);
    CUcontext p = NULL;
    int key, value, value2;
    void *v = NULL;
    memset(&g_log, 0, sizeof g_log);
    ts_watchdog_arm("a destructor calling the driver", 60); /* a destructor run under a lock it takes would hang */
    assert_cu_ok(cuDevicePrimaryCtxRetain(&p, 0));
    assert_cu_ok(cuDevicePrimaryCtxRetain(&p, 0));
    assert_cu_ok(put(p, &key, &value, record_destructor));
    assert_cu_ok(cuDevicePrimaryCtxRelease(0));
    assert_int_equal(g_log.calls, 0);
    assert_cu_ok(get(&v, p, &key));
    assert_cu_ok(cuDevicePrimaryCtxRelease(0));
    assert_int_equal(g_log.calls, 1);
    assert_ptr_equal(g_log.ctx, p);
    assert_ptr_equal(g_log.value, &value);
    assert_cu_ok(g_log.state);
    assert_int_equal(g_log.active, 1);

    assert_cu_ok(cuDevicePrimaryCtxRetain(&p, 0));
    assert_cu_ok(cuCtxPushCurrent(p));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, get(&v, NULL, &key)); /* gone with the old activation */
    assert_cu_ok(put(NULL, &key, &value2, record_destructor));
    assert_cu_ok(cuDevicePrimaryCtxReset(0));
    assert_int_equal(g_log.calls, 2);
    assert_ptr_equal(g_log.ctx, p);
    assert_ptr_equal(g_log.key, &key);
    assert_ptr_equal(g_log.value, &value2);
    assert_cu_ok(g_log.state);
    assert_int_equal(g_log.active, 1);
    assert_cu(CUDA_ERROR_INVALID_HANDLE, get(&v, p, &key));
    assert_cu_ok(cuCtxPopCurrent(NULL));
    ts_watchdog_disarm();
}

/* Threads putting, reading and deleting keys of one context at once, while
 * others read the integrity check and the primary-context slot. */
enum { kThreads = 4, kRounds = 300 };

typedef struct {
    CUcontext ctx;
    int index;
    int keys[8];
    int failures;
} storage_worker;

static void *storage_thread(void *arg) {
    storage_worker *w = arg;
    storage_put_fn put = SLOT(storage_put_fn, kStorage, 0);
    storage_delete_fn del = SLOT(storage_delete_fn, kStorage, 1);
    storage_get_fn get = SLOT(storage_get_fn, kStorage, 2);
    primary_context_fn primary = SLOT(primary_context_fn, kCudart, 2);
    integrity_fn check = SLOT(integrity_fn, kIntegrity, 1);
    for (int r = 0; r < kRounds; ++r) {
        int *key = &w->keys[r % 8];
        void *v = NULL;
        if (put(w->ctx, key, (void *)(uintptr_t)(r + 1), NULL) != CUDA_SUCCESS) w->failures++;
        if (get(&v, w->ctx, key) != CUDA_SUCCESS || v != (void *)(uintptr_t)(r + 1)) w->failures++;
        if (r % 3 == 0 && del(w->ctx, key) != CUDA_SUCCESS) w->failures++;
        if (r % 50 == 0) {
            CUcontext p = NULL;
            uint64_t answer[2];
            if (primary(&p, 0) != CUDA_SUCCESS || !p) w->failures++;
            if (check(13002, 1796000000ull + (unsigned)r, answer) != CUDA_SUCCESS) w->failures++;
        }
    }
    return NULL;
}

static void test_storage_threads(void **state) {
    ts_fixture *fx = ts_fx(state);
    storage_worker workers[kThreads];
    pthread_t threads[kThreads];
    memset(workers, 0, sizeof workers);
    for (int i = 0; i < kThreads; ++i) {
        workers[i].ctx = fx->ctx;
        workers[i].index = i;
        assert_int_equal(pthread_create(&threads[i], NULL, storage_thread, &workers[i]), 0);
    }
    for (int i = 0; i < kThreads; ++i) assert_int_equal(pthread_join(threads[i], NULL), 0);
    storage_get_fn get = SLOT(storage_get_fn, kStorage, 2);
    for (int i = 0; i < kThreads; ++i) {
        assert_int_equal(workers[i].failures, 0);
        /* Each thread's last round for each key: deleted when the round was a multiple of 3. */
        for (int k = 0; k < 8; ++k) {
            int last = kRounds - 8 + ((k - (kRounds - 8) % 8) + 8) % 8;
            void *v = NULL;
            CUresult r = get(&v, fx->ctx, &workers[i].keys[k]);
            if (last % 3 == 0) {
                assert_cu(CUDA_ERROR_INVALID_HANDLE, r);
            } else {
                assert_cu_ok(r);
                assert_ptr_equal(v, (void *)(uintptr_t)(last + 1));
            }
        }
    }
}

/* CONTEXT_CHECKS[2] writes 0 and leaves the pointer alone; [3] answers 0. */
static void test_context_checks(void **state) {
    ts_fixture *fx = ts_fx(state);
    context_check_fn check = SLOT(context_check_fn, kChecks, 2);
    uint32_t result = 0xdeadbeef;
    const void *untouched = &result;
    assert_cu_ok(check(fx->ctx, &result, &untouched));
    assert_int_equal(result, 0);
    assert_ptr_equal(untouched, &result);
    result = 7;
    assert_cu_ok(check(NULL, &result, &untouched));
    assert_int_equal(result, 0);
    assert_cu(CUDA_ERROR_INVALID_VALUE, check(fx->ctx, NULL, &untouched));
    assert_int_equal(SLOT(check_fn, kChecks, 3)(), 0);
}

/* INTEGRITY_CHECK[1]: libcuda's fixed answers to versions ending in 0 and 1;
 * for the others a hash that depends on the version, the time and the
 * calling thread, and is the same for the same inputs. */
typedef struct {
    unsigned version;
    unsigned long long seconds;
    uint64_t answer[2];
    CUresult r;
} integrity_call;

static void *integrity_in_thread(void *arg) {
    integrity_call *c = arg;
    c->r = SLOT(integrity_fn, kIntegrity, 1)(c->version, c->seconds, c->answer);
    return NULL;
}

static void test_integrity_check(void **state) {
    (void)state;
    integrity_fn check = SLOT(integrity_fn, kIntegrity, 1);
    uint64_t a[2] = {0, 0}, b[2] = {0, 0};
    assert_cu_ok(check(13000, 1796000000ull, a));
    assert_true(a[0] == 0x3341181C03CB675Cull && a[1] == 0x8ED383AA1F4CD1E8ull);
    assert_cu_ok(check(13001, 1796000000ull, a));
    assert_true(a[0] == 0x1841181C03CB675Cull && a[1] == 0x8ED383AA1F4CD1E8ull);

    assert_cu_ok(check(13002, 1796000000ull, a));
    assert_cu_ok(check(13002, 1796000000ull, b));
    assert_memory_equal(a, b, sizeof a);
    assert_cu_ok(check(13002, 1796000001ull, b));
    assert_memory_not_equal(a, b, sizeof a);
    assert_cu_ok(check(12082, 1796000000ull, b));
    assert_memory_not_equal(a, b, sizeof a);
    assert_cu(CUDA_ERROR_INVALID_VALUE, check(13002, 1796000000ull, NULL));

    integrity_call other = {13002, 1796000000ull, {0, 0}, CUDA_ERROR_UNKNOWN};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, integrity_in_thread, &other), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_cu_ok(other.r);
    assert_memory_not_equal(a, other.answer, sizeof a);
}

#define CTX_TEST(f) cmocka_unit_test_setup_teardown(f, ts_ctx_setup, ts_ctx_teardown)
#define NO_CTX_TEST(f) cmocka_unit_test_teardown(f, ts_check_no_current_context)

int main(void) {
    const struct CMUnitTest tests[] = {
        NO_CTX_TEST(test_tables_and_sizes),
        NO_CTX_TEST(test_unknown_slots),
        NO_CTX_TEST(test_primary_context_slot),
        CTX_TEST(test_module_slots),
        NO_CTX_TEST(test_tool_hook_areas),
        NO_CTX_TEST(test_storage_without_context),
        CTX_TEST(test_storage_put_get_delete),
        CTX_TEST(test_storage_destructor_on_destroy),
        NO_CTX_TEST(test_storage_destructor_on_primary_release_and_reset),
        CTX_TEST(test_storage_threads),
        CTX_TEST(test_context_checks),
        CTX_TEST(test_tools_tls_current_context),
        CTX_TEST(test_cublas_table),
        NO_CTX_TEST(test_integrity_check),
    };
    return cmocka_run_group_tests(tests, ts_group_init, NULL);
}
