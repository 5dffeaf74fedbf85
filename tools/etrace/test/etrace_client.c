/*
 * Runs under LD_AUDIT=libetrace.so in etrace's test: reaches the stand-in
 * driver's tables the ways real programs do (a linked call through the PLT,
 * dlsym, cuGetProcAddress_v2 and the cuGetProcAddress it returns) and checks
 * every result. Exit status 0 when all are right.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fake_tables.h"

typedef int (*get_export_table_fn)(const void**, const void*);
typedef int (*gpa_v2_fn)(const char*, void**, int, uint64_t, int*);
int cuGetExportTable(const void** table, const void* id);  /* linked: through the PLT */

static int check_tables(get_export_table_fn get, const char* route) {
    static const uint8_t sized_id[16] = FAKE_SIZED_UUID, plain_id[16] = FAKE_PLAIN_UUID,
                         integrity_id[16] = FAKE_INTEGRITY_UUID, unknown_id[16] = {1};
    const void *sized = NULL, *plain = NULL, *integrity = NULL, *none = (void*)1;
    int bad = 0;
    bad += get(&sized, sized_id) != 0 || !sized;
    bad += get(&plain, plain_id) != 0 || !plain;
    bad += get(&integrity, integrity_id) != 0 || !integrity;
    bad += get(&none, unknown_id) != 1 || none != NULL;
    if (bad) { printf("%s: lookups wrong\n", route); return bad; }
    bad += fake_exercise_sized((void* const*)sized);
    int out = 0;
    bad += ((fake_out_fn)((void* const*)plain)[0])(5, &out) != 7 || out != 16;
    bad += ((fake_ratio_fn)((void* const*)plain)[1])(1.0f, 4.0f) != 0.25f;
    bad += ((fake_out_fn)((void* const*)integrity)[1])(2, &out) != 7 || out != 7;
    bad += ((fake_ratio_fn)((void* const*)integrity)[2])(9.0f, 3.0f) != 3.0f;
    printf("%s: %s\n", route, bad ? "WRONG" : "ok");
    return bad;
}

/* A direct call (a PLT jump slot, which LD_AUDIT sees): taking the function's
 * address instead would go through a GOT data relocation, which it does not. */
static int via_plt(const void** table, const void* id) { return cuGetExportTable(table, id); }

int main(void) {
    int bad = check_tables(via_plt, "linked");
    void* h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) { printf("dlopen: %s\n", dlerror()); return 1; }
    bad += check_tables((get_export_table_fn)dlsym(h, "cuGetExportTable"), "dlsym");
    gpa_v2_fn gpa = (gpa_v2_fn)dlsym(h, "cuGetProcAddress_v2");
    void* p = NULL;
    int status = -1;
    if (!gpa || gpa("cuGetExportTable", &p, 12000, 0, &status) != 0 || !p || status != 0) {
        printf("cuGetProcAddress_v2(cuGetExportTable) failed\n");
        return 1;
    }
    bad += check_tables((get_export_table_fn)p, "cuGetProcAddress_v2");
    void* gpa2 = NULL;
    if (gpa("cuGetProcAddress", &gpa2, 12000, 0, &status) != 0 || !gpa2) return 1;
    p = NULL;
    if (((gpa_v2_fn)gpa2)("cuGetExportTable", &p, 12000, 0, &status) != 0 || !p) return 1;
    bad += check_tables((get_export_table_fn)p, "cuGetProcAddress_v2 from cuGetProcAddress");
    return bad ? 1 : 0;
}
