/*
 * etrace's checks without a GPU:
 *  - in process: tables of made-up functions (integer, pointer, float and
 *    variadic arguments, stack arguments, struct returns in rax:rdx and
 *    through memory, float returns) are wrapped in place, writable and
 *    read-only; every call still returns exactly what the function returns,
 *    and the log holds the arguments, results and changed memory;
 *  - end to end: etrace_client runs under LD_AUDIT=libetrace.so with a
 *    stand-in libcuda.so.1 and reaches the tables through a linked call,
 *    dlsym, cuGetProcAddress_v2 and the cuGetProcAddress it hands out; the
 *    log must show each binding, each request and each call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../etrace.h"
#include "fake_tables.h"

static char g_log[256];
static char g_dir[PATH_MAX - 64];  /* folder of this binary: build/etrace */

static char* read_file(const char* path) {
    FILE* f = fopen(path, "re");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

static void expect_in(const char* text, const char* what) {
    if (!strstr(text, what)) {
        print_error("log lacks \"%s\"\n", what);
        fail();
    }
}

static void expect_not_in(const char* text, const char* what) {
    if (strstr(text, what)) {
        print_error("log has \"%s\"\n", what);
        fail();
    }
}

static void test_wrap_in_process(void** state) {
    (void)state;
    static const uint8_t sized_id[16] = FAKE_SIZED_UUID, plain_id[16] = FAKE_PLAIN_UUID;
    void* writable[] = FAKE_SIZED_TABLE;
    void* const original1 = writable[1];

    struct etrace_table* t = etrace_wrap_table(sized_id, writable);
    assert_non_null(t);
    assert_int_equal(t->slots, 8);
    assert_true(t->sized);
    assert_ptr_not_equal(writable[1], original1);        /* a stub now */
    assert_ptr_equal(writable[0], (void*)(8 * sizeof(void*)));  /* the size stays */
    assert_int_equal(fake_exercise_sized(writable), 0);

    /* idempotent: the same table is not wrapped twice */
    void* stub1 = writable[1];
    assert_ptr_equal(etrace_wrap_table(sized_id, writable), t);
    assert_ptr_equal(writable[1], stub1);

    /* a table on a read-only page (libcuda's are RELRO); not a C const object,
     * which the compiler may read at build time */
    void** ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(ro != MAP_FAILED);
    void* init[] = FAKE_SIZED_TABLE;
    memcpy(ro + 100, init, sizeof init);
    assert_int_equal(mprotect(ro, 4096, PROT_READ), 0);
    assert_non_null(etrace_wrap_table(sized_id, ro + 100));
    assert_ptr_not_equal(ro[102], (void*)fake_mix);
    assert_int_equal(fake_exercise_sized(ro + 100), 0);
    munmap(ro, 4096);

    /* a plain list ends at the first word that is not code */
    void* plain[] = FAKE_PLAIN_TABLE;
    struct etrace_table* p = etrace_wrap_table(plain_id, plain);
    assert_non_null(p);
    assert_false(p->sized);
    assert_int_equal(p->slots, 2);
    assert_null(plain[2]);
    int out = 0;
    assert_int_equal(((fake_out_fn)plain[0])(-4, &out), 7);
    assert_int_equal(out, -11);
    assert_true(((fake_ratio_fn)plain[1])(3.0f, 8.0f) == 0.375f);

    char* log = read_file(g_log);
    assert_non_null(log);
    expect_in(log, "table 01234567-89ab-cdef-1032-547698badcfe unknown_01234567 at");
    expect_in(log, "8 entries (size in slot 0): [0]=size=64");
    expect_in(log, "7 of 7 code slots wrapped");
    expect_in(log, "2 entries: [0]=");
    /* fake_out(41, &out): the arguments, the result, the memory it wrote */
    expect_in(log, "unknown_01234567[1](a0=41, a1=0x");
    expect_in(log, "unknown_01234567[1] -> 7 (0x7)");
    expect_in(log, "*a1 after = 7c000000");
    /* fake_mix(1.25, 2.5f, -3): xmm arguments shown and kept */
    expect_in(log, "xmm0=0x3ff4000000000000(1.25)");
    /* fake_many: the seventh and eighth integers went on the stack */
    expect_in(log, "unknown_01234567[3](a0=1, a1=2, a2=3, a3=4, a4=5, a5=6)");
    expect_in(log, "stack=[0x7, 0x8]");
    expect_in(log, "unknown_01234567[3] -> 212 (0xd4)");
    /* fake_pair(11) returns {55, -11} in rax:rdx */
    expect_in(log, "unknown_01234567[4] -> 55 (0x37)");
    expect_in(log, "rdx=0xfffffffffffffff5");
    /* fake_var(3, ...): three vector registers in al */
    expect_in(log, "al=3");
    free(log);
}

static void test_audit_end_to_end(void** state) {
    (void)state;
    char so[PATH_MAX], client[PATH_MAX], libdir[PATH_MAX], log[PATH_MAX];
    snprintf(so, sizeof so, "%s/libetrace.so", g_dir);
    snprintf(client, sizeof client, "%s/test/etrace_client", g_dir);
    snprintf(libdir, sizeof libdir, "%s/test", g_dir);
    snprintf(log, sizeof log, "%s.audit", g_log);
    unlink(log);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        setenv("LD_AUDIT", so, 1);
        setenv("LD_LIBRARY_PATH", libdir, 1);
        setenv("ETRACE_LOG", log, 1);
        setenv("ETRACE_GPA", "1", 1);
        execl(client, client, (char*)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    char* text = read_file(log);
    assert_non_null(text);
    expect_in(text, "test/libcuda.so.1 (watching cuGetExportTable");
    expect_in(text, "bind cuGetExportTable for etrace_client\n");     /* the linked call */
    expect_in(text, "bind cuGetExportTable for etrace_client (dlsym)");
    expect_in(text, "bind cuGetProcAddress_v2 for etrace_client (dlsym)");
    expect_in(text, "cuGetProcAddress_v2(cuGetExportTable, 12000, flags=0) -> 0 libcuda.so.1+0x");
    expect_in(text, ", wrapped from etrace_client+0x");
    expect_in(text, "cuGetProcAddress_v2(cuGetProcAddress, 12000, flags=0) -> 0");
    expect_in(text, "wrapped (_v2)");
    expect_in(text, "cuGetExportTable({01234567-89ab-cdef-1032-547698badcfe} unknown) -> 0 table=0x");
    expect_in(text, "cuGetExportTable({01000000-0000-0000-0000-000000000000} unknown) -> 1 table=(nil)");
    expect_in(text, "7 of 7 code slots wrapped");
    /* the stand-in INTEGRITY_CHECK table: slot 1 left alone, slot 2 wrapped */
    expect_in(text, "INTEGRITY_CHECK: 1 of 1 code slots wrapped, left alone (ETRACE_NOWRAP): 1");
    expect_in(text, "INTEGRITY_CHECK[2](a0=");
    expect_not_in(text, "INTEGRITY_CHECK[1] integrity_check(");
    /* calls made through each route reach the wrappers: four routes, one call of slot 3 each */
    int many = 0;
    for (const char* p = text; (p = strstr(p, "unknown_01234567[3] -> 212")); ++p) ++many;
    assert_int_equal(many, 4);
    /* the caller is named */
    expect_in(text, "from etrace_client+0x");
    free(text);
    unlink(log);
}

int main(void) {
    ssize_t n = readlink("/proc/self/exe", g_dir, sizeof g_dir - 1);
    if (n <= 0) return 1;
    g_dir[n] = 0;
    *strrchr(g_dir, '/') = 0;
    snprintf(g_log, sizeof g_log, "/tmp/etrace_test_%d.log", (int)getpid());
    unlink(g_log);
    setenv("ETRACE_LOG", g_log, 1);
    setenv("ETRACE_DUMP", "16", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrap_in_process),
        cmocka_unit_test(test_audit_end_to_end),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (!getenv("ETRACE_KEEP")) unlink(g_log);
    return rc;
}
