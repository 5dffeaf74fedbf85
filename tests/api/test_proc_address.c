/*
 * cuGetProcAddress and cuGetExportTable against what libcuda 580 answered.
 *
 * tests/data/libcuda/gpa_*.tsv are every cuGetProcAddress_v2 request that
 * cuda.bindings, numba-cuda, CuPy and a static-cudart program made of
 * libcuda 580 on the H200 (name, CUDA version, flags, result code). Each row
 * is replayed here: the result code must be libcuda's, and the function
 * given must be the variant NVIDIA's typedef headers name for that request:
 * cudaTypedefs.h (and the GL, EGL, VDPAU and profiler ones) declare
 * PFN_cuX_vVERSION for every ABI variant; the answer is the newest variant not
 * newer than the requested version (the oldest is exported as cuX, the next
 * as cuX_v2, ...) and, with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
 * its _ptds/_ptsz form where one exists by then. That rule, read here from
 * NVIDIA's headers, is independent of nvlite's table (lib/api/entry_points.txt).
 * The edge cases come from the probe of libcuda (shared/data README, and
 * tests/compat/dropin_probe.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

/* The CUDA 11.3 form, exported as cuGetProcAddress. */
typedef CUresult (*gpa_v1_fn)(const char *, void **, int, cuuint64_t);

/* ------------------------------------------------------- NVIDIA's variants */

#define MAX_FUNCTIONS 1024
#define MAX_VERSIONS 8

typedef struct {
    char name[96];
    int versions[MAX_VERSIONS]; /* default forms, ascending */
    int n;
    int pt_versions[MAX_VERSIONS]; /* _ptds/_ptsz forms, ascending */
    int npt;
    char pt_suffix[8];
} nv_function;

static nv_function nv_functions[MAX_FUNCTIONS];
static int nv_count;

static void insert_sorted(int *v, int *n, int x) {
    for (int i = 0; i < *n; ++i)
        if (v[i] == x) return;
    assert_true(*n < MAX_VERSIONS);
    int i = *n;
    while (i > 0 && v[i - 1] > x) {
        v[i] = v[i - 1];
        --i;
    }
    v[i] = x;
    ++*n;
}

static nv_function *nv_find(const char *name) {
    for (int i = 0; i < nv_count; ++i)
        if (strcmp(nv_functions[i].name, name) == 0) return &nv_functions[i];
    return NULL;
}

/* Reads every "PFN_cuX_vNNNN[_ptds|_ptsz])" of one header. */
static int read_typedefs(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        for (char *p = strstr(line, "PFN_cu"); p; p = strstr(p + 4, "PFN_cu")) {
            char ident[160];
            int k = 0;
            const char *q = p + 4;
            while (k < (int)sizeof ident - 1 && (q[k] == '_' || (q[k] >= '0' && q[k] <= '9') ||
                                                 (q[k] >= 'a' && q[k] <= 'z') || (q[k] >= 'A' && q[k] <= 'Z'))) {
                ident[k] = q[k];
                ++k;
            }
            ident[k] = 0;
            if (q[k] != ')') continue; /* a use, not the typedef */
            char suffix[8] = "";
            size_t len = strlen(ident);
            if (len > 5 && (strcmp(ident + len - 5, "_ptds") == 0 || strcmp(ident + len - 5, "_ptsz") == 0)) {
                strcpy(suffix, ident + len - 5);
                ident[len - 5] = 0;
            }
            char *v = strrchr(ident, '_');
            if (!v || v[1] != 'v') continue;
            int version = atoi(v + 2);
            *v = 0;
            /* Not exported by libcuda 580 on Linux. */
            if (strcmp(ident, "cuWGLGetDevice") == 0 || strcmp(ident, "cuEventCreateFromEGLSync") == 0) continue;
            nv_function *fn = nv_find(ident);
            if (!fn) {
                assert_true(nv_count < MAX_FUNCTIONS);
                fn = &nv_functions[nv_count++];
                snprintf(fn->name, sizeof fn->name, "%s", ident);
            }
            if (suffix[0]) {
                strcpy(fn->pt_suffix, suffix);
                insert_sorted(fn->pt_versions, &fn->npt, version);
            } else {
                insert_sorted(fn->versions, &fn->n, version);
            }
        }
    }
    fclose(f);
    return 1;
}

/* NVIDIA's typedef headers, or why they are missing. */
static const char *load_typedefs(void) {
    static char why[640];
    if (nv_count > 0) return NULL;
    const char *home = getenv("CUDA_HOME");
    char dir[400];
    snprintf(dir, sizeof dir, "%s/include", home && *home ? home : "/usr/local/cuda");
    static const char *const names[] = {"cudaTypedefs.h", "cudaGLTypedefs.h", "cudaEGLTypedefs.h",
                                        "cudaVDPAUTypedefs.h", "cudaProfilerTypedefs.h"};
    for (size_t i = 0; i < TS_ARRAY_SIZE(names); ++i) {
        char path[480];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (!read_typedefs(path)) {
            snprintf(why, sizeof why, "NVIDIA's %s is missing (CUDA toolkit at $CUDA_HOME or /usr/local/cuda)", path);
            nv_count = 0;
            return why;
        }
    }
    return NULL;
}

/* The exported name of the variant that answers (name, version, flags), by
 * NVIDIA's typedefs; "" when the function is too new for the version; NULL
 * when NVIDIA declares no such function. */
static const char *expected_symbol(const char *name, int version, cuuint64_t flags, char *buf, size_t size) {
    const nv_function *fn = nv_find(name);
    if (!fn) return NULL;
    int i = -1;
    for (int k = 0; k < fn->n; ++k)
        if (fn->versions[k] <= version) i = k;
    if (i < 0) return "";
    if (i == 0)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "%s_v%d", name, i + 1);
    if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
        int pt = -1;
        for (int k = 0; k < fn->npt; ++k)
            if (fn->pt_versions[k] <= version) pt = fn->pt_versions[k];
        /* The per-thread form of the same variant. */
        int base = -1;
        for (int k = 0; k < fn->n; ++k)
            if (fn->versions[k] <= pt) base = k;
        if (pt >= 0 && base == i) {
            size_t n = strlen(buf);
            snprintf(buf + n, size - n, "%s", fn->pt_suffix);
        }
    }
    return buf;
}

/* ------------------------------------------------------- recorded tables */

typedef struct {
    char name[128];
    int version;
    unsigned long long flags;
    int result;
} request;

/* Reads one table; returns the number of rows. */
static int read_table(const char *path, request *rows, int max) {
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s (the tests run from the repository root)", path);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char *field[5] = {0};
        int k = 0;
        for (char *save = NULL, *t = strtok_r(line, "\t\n", &save); t && k < 5; t = strtok_r(NULL, "\t\n", &save))
            field[k++] = t;
        if (k < 3) continue;
        assert_true(n < max);
        request *r = &rows[n++];
        /* A request for the empty name was recorded without it. */
        int shift = strncmp(field[0], "cu", 2) != 0 ? 1 : 0;
        if (shift) {
            r->name[0] = 0;
        } else {
            snprintf(r->name, sizeof r->name, "%s", field[0]);
        }
        r->version = atoi(field[1 - shift]);
        r->flags = strtoull(field[2 - shift], NULL, 10);
        const char *res = field[3 - shift];
        assert_non_null(res);
        assert_int_equal(strncmp(res, "r=", 2), 0);
        r->result = atoi(res + 2);
    }
    fclose(f);
    return n;
}

static const char *const kTables[] = {"tests/data/libcuda/gpa_bindings_cuInit.tsv",
                                      "tests/data/libcuda/gpa_numba_vecadd.tsv", "tests/data/libcuda/gpa_cupy.tsv",
                                      "tests/data/libcuda/gpa_cudart_static.tsv"};

static const char *symbol_name(void *p) {
    Dl_info info;
    if (p && dladdr(p, &info) && info.dli_sname && info.dli_saddr == p) return info.dli_sname;
    return p ? "(not an exported function)" : "NULL";
}

/* Replays every row of one table; with 'variants', also checks the function
 * given against NVIDIA's typedefs. */
static void replay(const char *path, int variants) {
    static request rows[2048];
    const int n = read_table(path, rows, (int)TS_ARRAY_SIZE(rows));
    assert_true(n > 100);
    int found = 0, bad = 0;
    for (int i = 0; i < n; ++i) {
        const request *r = &rows[i];
        void *p = (void *)0x1;
        CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
        CUresult res = cuGetProcAddress_v2(r->name, &p, r->version, r->flags, &st);
        if ((int)res != r->result) {
            print_message("%s row %d: %s @%d flags %llu: %s, libcuda %d\n", path, i + 1, r->name, r->version, r->flags,
                          ts_cu_name(res), r->result);
            ++bad;
            continue;
        }
        if (res != CUDA_SUCCESS) {
            if (p != NULL || st != 77) {
                print_message("%s row %d: %s @%d: failed but wrote fn or status\n", path, i + 1, r->name, r->version);
                ++bad;
            }
            continue;
        }
        if (!variants) continue;
        char buf[160];
        const char *want = expected_symbol(r->name, r->version, r->flags, buf, sizeof buf);
        CUdriverProcAddressQueryResult want_st = !want    ? CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
                                                 : !*want ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                                                          : CU_GET_PROC_ADDRESS_SUCCESS;
        void *want_p = want && *want ? dlsym(RTLD_DEFAULT, want) : NULL;
        if (want && *want && !want_p) {
            print_message("%s row %d: %s @%d flags %llu: nvlite does not export %s\n", path, i + 1, r->name,
                          r->version, r->flags, want);
            ++bad;
        } else if (st != want_st || p != want_p) {
            print_message("%s row %d: %s @%d flags %llu: status %d fn %s, want status %d fn %s\n", path, i + 1,
                          r->name, r->version, r->flags, (int)st, symbol_name(p), (int)want_st, want ? want : "NULL");
            ++bad;
        }
        found += p != NULL;
    }
    print_message("%s: %d requests replayed, %d functions given, %d differences\n", path, n, found, bad);
    assert_int_equal(bad, 0);
}

static int init_group(void **state) {
    (void)state;
    return cuInit(0) == CUDA_SUCCESS ? 0 : -1;
}

static void test_recorded_result_codes(void **state) {
    (void)state;
    for (size_t i = 0; i < TS_ARRAY_SIZE(kTables); ++i) replay(kTables[i], 0);
}

static void test_recorded_variants(void **state) {
    (void)state;
    const char *why = load_typedefs();
    if (why) ts_skip("%s: the variants cannot be derived", why);
    for (size_t i = 0; i < TS_ARRAY_SIZE(kTables); ++i) replay(kTables[i], 1);
}

/* Every function NVIDIA's typedefs name, at every version it has, in both
 * stream modes: nvlite exports the variant and gives it. */
static void test_every_variant_of_every_function(void **state) {
    (void)state;
    const char *why = load_typedefs();
    if (why) ts_skip("%s", why);
    int checked = 0, bad = 0;
    for (int i = 0; i < nv_count; ++i) {
        const nv_function *fn = &nv_functions[i];
        for (int k = -1; k < fn->n + fn->npt; ++k) {
            /* One before the first version, then each version of each form. */
            int version = k < 0 ? fn->versions[0] - 10 : k < fn->n ? fn->versions[k] : fn->pt_versions[k - fn->n];
            for (cuuint64_t flags = 0; flags <= 2; ++flags) {
                char buf[160];
                const char *want = expected_symbol(fn->name, version, flags, buf, sizeof buf);
                void *p = (void *)1;
                CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
                CUresult r = cuGetProcAddress_v2(fn->name, &p, version, flags, &st);
                void *want_p = want && *want ? dlsym(RTLD_DEFAULT, want) : NULL;
                ++checked;
                if (r != CUDA_SUCCESS || p != want_p || (want && *want && !want_p) ||
                    st != (want && *want ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)) {
                    if (bad++ < 20)
                        print_message("%s @%d flags %llu: %s status %d fn %s, want %s\n", fn->name, version,
                                      (unsigned long long)flags, ts_cu_name(r), (int)st, symbol_name(p),
                                      want && *want ? want : "none");
                }
            }
        }
    }
    print_message("%d functions, %d requests, %d differences\n", nv_count, checked, bad);
    assert_true(nv_count > 450);
    assert_int_equal(bad, 0);
}

/* What the H200's libcuda answered directly (shared/data/libcuda/README.md). */
static void expect(const char *name, int version, cuuint64_t flags, CUresult r, int status, const char *fn) {
    void *p = (void *)1;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
    CUresult got = cuGetProcAddress_v2(name, &p, version, flags, &st);
    if (got != r || (int)st != status || strcmp(symbol_name(p), fn) != 0)
        fail_msg("cuGetProcAddress_v2(\"%s\", %d, %llu): %s status %d fn %s; libcuda: %s status %d fn %s", name,
                 version, (unsigned long long)flags, ts_cu_name(got), (int)st, symbol_name(p), ts_cu_name(r), status,
                 fn);
}

static void test_probed_answers(void **state) {
    (void)state;
    const int unwritten = 77;
    expect("", 0, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "NULL");
    expect("", 13000, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "NULL");
    expect("cuNoSuchFunction", 13000, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "NULL");
    expect("cuMemAlloc", 3000, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuMemAlloc");
    expect("cuMemAlloc", 3020, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuMemAlloc_v2");
    expect("cuMemAlloc", 13000, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuMemAlloc_v2");
    expect("cuMemAlloc", 13010, 0, CUDA_ERROR_INVALID_VALUE, unwritten, "NULL");
    expect("cuMemAlloc", 99999, 0, CUDA_ERROR_INVALID_VALUE, unwritten, "NULL");
    expect("cuLogsRegisterCallback", 12080, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, "NULL");
    expect("cuLogsRegisterCallback", 12090, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuLogsRegisterCallback");
    expect("cuMemcpyHtoD", 7000, 2, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuMemcpyHtoD_v2_ptds");
    expect("cuMemcpyHtoD", 7000, 1, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuMemcpyHtoD_v2");
    expect("cuLaunchKernel", 7000, 2, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuLaunchKernel_ptsz");
    expect("cuCtxCreate", 12050, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuCtxCreate_v4");
    expect("cuCtxCreate", 12000, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuCtxCreate_v3");
    expect("cuGetProcAddress", 12000, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuGetProcAddress_v2");
    expect("cuGetProcAddress", 11030, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuGetProcAddress");
    expect("cuStreamGetCtx", 12050, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuStreamGetCtx_v2");
    expect("cuStreamGetCtx", 12050, 2, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuStreamGetCtx_v2_ptsz");
    expect("cuGraphInstantiate", 12000, 0, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, "cuGraphInstantiate_v2");
}

/* A function given is the exported symbol itself, and the status is optional. */
static void test_function_given_is_the_export(void **state) {
    (void)state;
    void *p = NULL;
    assert_cu_ok(cuGetProcAddress_v2("cuDeviceGetCount", &p, 13000, 0, NULL));
    assert_ptr_equal(p, dlsym(RTLD_DEFAULT, "cuDeviceGetCount"));
    int n = -1;
    assert_cu_ok(((CUresult(*)(int *))p)(&n));
    assert_int_equal(n, 1);
    p = (void *)1;
    assert_cu_ok(cuGetProcAddress_v2("cuNoSuchFunction", &p, 13000, 0, NULL));
    assert_null(p);
    void *mem_get_info = NULL;
    assert_cu_ok(cuGetProcAddress_v2("cuMemGetInfo", &mem_get_info, 12000, CU_GET_PROC_ADDRESS_DEFAULT, NULL));
    assert_ptr_equal(mem_get_info, dlsym(RTLD_DEFAULT, "cuMemGetInfo_v2"));
}

static void test_bad_arguments(void **state) {
    (void)state;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
    void *p = (void *)1;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetProcAddress_v2(NULL, &p, 13000, 0, &st));
    assert_null(p);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetProcAddress_v2("cuInit", NULL, 13000, 0, &st));
    assert_int_equal(st, 77);
    p = (void *)1;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetProcAddress_v2("cuInit", &p, 13000, 4, &st));
    assert_null(p);
}

/* The CUDA 11.3 form: no status; a function it cannot give is NOT_FOUND. */
static void test_first_abi_lookup(void **state) {
    (void)state;
    gpa_v1_fn v1 = (gpa_v1_fn)dlsym(RTLD_DEFAULT, "cuGetProcAddress");
    assert_non_null(v1);
    void *p = NULL;
    assert_cu_ok(v1("cuMemAlloc", &p, 12000, 0));
    assert_ptr_equal(p, dlsym(RTLD_DEFAULT, "cuMemAlloc_v2"));
    assert_cu_ok(v1("cuMemcpyHtoD", &p, 11030, 2));
    assert_ptr_equal(p, dlsym(RTLD_DEFAULT, "cuMemcpyHtoD_v2_ptds"));
    p = (void *)1;
    assert_cu(CUDA_ERROR_NOT_FOUND, v1("cuNoSuchFunction", &p, 12000, 0));
    assert_null(p);
    p = (void *)1;
    assert_cu(CUDA_ERROR_NOT_FOUND, v1("cuLogsCurrent", &p, 12080, 0));
    assert_null(p);
    assert_cu(CUDA_ERROR_INVALID_VALUE, v1("cuMemAlloc", &p, 13010, 0));
}

/* The per-thread forms run on the thread's default stream: a copy through
 * cuMemcpyHtoD_v2_ptds and cuMemcpyDtoHAsync_v2_ptsz with the NULL stream. */
static void test_per_thread_forms_work(void **state) {
    (void)state;
    CUcontext ctx = NULL;
    assert_cu_ok(cuCtxCreate(&ctx, NULL, 0, 0));
    typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
    typedef CUresult (*dtoh_async_fn)(void *, CUdeviceptr, size_t, CUstream);
    typedef CUresult (*sync_fn)(CUstream);
    htod_fn htod = NULL;
    dtoh_async_fn dtoh = NULL;
    sync_fn sync = NULL;
    assert_cu_ok(cuGetProcAddress_v2("cuMemcpyHtoD", (void **)&htod, 13000, 2, NULL));
    assert_cu_ok(cuGetProcAddress_v2("cuMemcpyDtoHAsync", (void **)&dtoh, 13000, 2, NULL));
    assert_cu_ok(cuGetProcAddress_v2("cuStreamSynchronize", (void **)&sync, 13000, 2, NULL));
    assert_string_equal(symbol_name((void *)sync), "cuStreamSynchronize_ptsz");
    const size_t n = 100003;
    unsigned char *src = ts_malloc(n), *dst = ts_malloc(n);
    ts_fill_random(src, n, 0x5eed0008);
    memset(dst, 0, n);
    CUdeviceptr d = ts_dev_alloc(n + 64);
    assert_cu_ok(htod(d + 17, src, n));
    assert_cu_ok(dtoh(dst, d + 17, n, NULL));
    assert_cu_ok(sync(NULL));
    assert_bytes_equal(src, dst, n);
    assert_cu_ok(cuMemFree(d));
    assert_cu_ok(cuCtxDestroy(ctx));
    ts_free_all();
}

/* cuGetExportTable: NVRTC's table is answered with an error (NVRTC compiles
 * without it: tests/api/test_nvrtc_driver.c); unknown and NULL ids get
 * libcuda's answer, INVALID_VALUE and a NULL table. */
static void test_export_tables(void **state) {
    (void)state;
    static const CUuuid nvrtc = {{(char)0xda, (char)0x91, 0x51, (char)0xd3, 0x3a, (char)0xe6, (char)0xcc, 0x41,
                                  (char)0xa5, (char)0xc0, 0x4f, 0x26, (char)0xd5, 0x33, (char)0xe3, 0x28}};
    CUuuid unknown;
    ts_fill_random(&unknown, sizeof unknown, 0x5eed0007);
    const void *t = (const void *)1;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetExportTable(&t, &unknown));
    assert_null(t);
    t = (const void *)1;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetExportTable(&t, NULL));
    assert_null(t);
    t = (const void *)1;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetExportTable(&t, &nvrtc));
    assert_null(t);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuGetExportTable(NULL, &nvrtc));
    /* Reachable through cuGetProcAddress too, as NVRTC and cudart find it. */
    void *p = NULL;
    assert_cu_ok(cuGetProcAddress_v2("cuGetExportTable", &p, 3000, 0, NULL));
    assert_ptr_equal(p, dlsym(RTLD_DEFAULT, "cuGetExportTable"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorded_result_codes),
        cmocka_unit_test(test_recorded_variants),
        cmocka_unit_test(test_every_variant_of_every_function),
        cmocka_unit_test(test_probed_answers),
        cmocka_unit_test(test_function_given_is_the_export),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_first_abi_lookup),
        cmocka_unit_test(test_per_thread_forms_work),
        cmocka_unit_test(test_export_tables),
    };
    return cmocka_run_group_tests_name("proc_address", tests, init_group, NULL);
}
