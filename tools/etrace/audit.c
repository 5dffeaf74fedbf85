/*
 * etrace's LD_AUDIT side: sees every binding of a symbol of the driver
 * library (libcuda.so*), whether through the PLT or dlsym (glibc >= 2.35
 * reports dlsym bindings too), and hands out wrappers for
 *   cuGetExportTable           logs the request, wraps the returned table
 *   cuGetProcAddress(_v2)      rewrites the answers for cuGetExportTable and
 *                              cuGetProcAddress itself, so a program that
 *                              finds the driver's functions through it (cudart,
 *                              cuda.bindings) still reaches our wrappers
 *
 *   LD_AUDIT=build/etrace/libetrace.so ETRACE_LOG=/tmp/log ./program
 *
 * Environment: ETRACE_LOG (file, appended; default stderr), ETRACE_DUMP (bytes
 * shown behind pointer arguments, default 16, at most 32), ETRACE_XMM (1: show
 * xmm0/xmm1 and two stack words for every call; default: only for slots of
 * unknown signature), ETRACE_NOWRAP (slots left alone, "uuid8:slot" or
 * "uuid8:*", comma-separated, or "all" to log the requests only; default
 * "d4082055:1": cudart's integrity check hashes that function's address), ETRACE_MAX_LINES (call lines per process,
 * default 200000), ETRACE_GPA=1 (log every cuGetProcAddress request).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etrace.h"

typedef int CUresult_t;
typedef CUresult_t (*get_export_table_fn)(const void** table, const void* uuid);
typedef CUresult_t (*gpa_v1_fn)(const char* name, void** pfn, int version, uint64_t flags);
typedef CUresult_t (*gpa_v2_fn)(const char* name, void** pfn, int version, uint64_t flags, int* status);

enum { kCudaErrorNotInitialized = 3 };

static get_export_table_fn g_real_get_export_table;
static gpa_v1_fn g_real_gpa_v1;
static gpa_v2_fn g_real_gpa_v2;
static struct link_map* g_driver;     /* the driver library's link map (a dlopen handle) */
static int g_log_gpa;

static const char* base_name(const char* path) {
    const char* s = strrchr(path ? path : "", '/');
    return s ? s + 1 : (path ? path : "");
}

/* The main program's link map has an empty name. */
static const char* object_name(const struct link_map* map) {
    static char exe[256];
    if (map && map->l_name && *map->l_name) return base_name(map->l_name);
    if (!exe[0]) {
        char path[4096];
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        path[n > 0 ? n : 0] = 0;
        snprintf(exe, sizeof exe, "%.255s", n > 0 ? base_name(path) : "exe");
    }
    return exe;
}

static int is_driver_name(const char* path) {
    const char* b = base_name(path);
    return strncmp(b, "libcuda.so", 10) == 0;
}

/* ---- wrappers ------------------------------------------------------------------ */

static CUresult_t wrap_get_export_table(const void** table, const void* uuid) {
    if (!g_real_get_export_table) return kCudaErrorNotInitialized;
    CUresult_t rc = g_real_get_export_table(table, uuid);
    char caller[128], u[37] = "(null)";
    etrace_describe_addr((uint64_t)(uintptr_t)__builtin_return_address(0), caller, sizeof caller);
    uint8_t id[16];
    int have_id = uuid != NULL;
    if (have_id) {
        memcpy(id, uuid, 16);
        etrace_format_uuid(id, u);
    }
    const void* t = (rc == 0 && table) ? *table : NULL;
    etrace_log("cuGetExportTable({%s} %s) -> %d table=%p from %s", u, have_id ? etrace_table_name(id) : "-", rc,
               t, caller);
    if (t && have_id) etrace_wrap_table(id, (void**)t);
    return rc;
}

static CUresult_t wrap_gpa_v1(const char* name, void** pfn, int version, uint64_t flags);
static CUresult_t wrap_gpa_v2(const char* name, void** pfn, int version, uint64_t flags, int* status);

static void resolve_gpa(void) {
    if (!g_driver) return;
    if (!g_real_gpa_v1) g_real_gpa_v1 = (gpa_v1_fn)dlsym(g_driver, "cuGetProcAddress");
    if (!g_real_gpa_v2) g_real_gpa_v2 = (gpa_v2_fn)dlsym(g_driver, "cuGetProcAddress_v2");
}

/* After a successful lookup: hand out our wrappers for the functions we watch. */
static void rewrite(const char* name, void** pfn, const char* via, int version, uint64_t flags, CUresult_t rc,
                    void* caller_addr) {
    if (!name || !pfn) return;
    void* p = rc == 0 ? *pfn : NULL;
    const char* swapped = NULL;
    if (p && strcmp(name, "cuGetExportTable") == 0) {
        if (!g_real_get_export_table) g_real_get_export_table = (get_export_table_fn)p;
        if (p == (void*)g_real_get_export_table) {
            *pfn = (void*)wrap_get_export_table;
            swapped = "wrapped";
        }
    } else if (p && strcmp(name, "cuGetProcAddress") == 0) {
        resolve_gpa();
        if (p == (void*)g_real_gpa_v2) {
            *pfn = (void*)wrap_gpa_v2;
            swapped = "wrapped (_v2)";
        } else if (p == (void*)g_real_gpa_v1) {
            *pfn = (void*)wrap_gpa_v1;
            swapped = "wrapped";
        }
    }
    if (swapped || g_log_gpa) {
        char caller[128], target[128];
        etrace_describe_addr((uint64_t)(uintptr_t)caller_addr, caller, sizeof caller);
        etrace_describe_addr((uint64_t)(uintptr_t)p, target, sizeof target);
        etrace_log("%s(%s, %d, flags=%llu) -> %d %s%s%s from %s", via, name, version, (unsigned long long)flags, rc,
                   target, swapped ? ", " : "", swapped ? swapped : "", caller);
    }
}

static CUresult_t wrap_gpa_v1(const char* name, void** pfn, int version, uint64_t flags) {
    if (!g_real_gpa_v1) return kCudaErrorNotInitialized;
    CUresult_t rc = g_real_gpa_v1(name, pfn, version, flags);
    rewrite(name, pfn, "cuGetProcAddress", version, flags, rc, __builtin_return_address(0));
    return rc;
}

static CUresult_t wrap_gpa_v2(const char* name, void** pfn, int version, uint64_t flags, int* status) {
    if (!g_real_gpa_v2) return kCudaErrorNotInitialized;
    CUresult_t rc = g_real_gpa_v2(name, pfn, version, flags, status);
    rewrite(name, pfn, "cuGetProcAddress_v2", version, flags, rc, __builtin_return_address(0));
    return rc;
}

/* ---- the audit interface ------------------------------------------------------- */

unsigned int la_version(unsigned int version) {
    return version < LAV_CURRENT ? version : LAV_CURRENT;
}

unsigned int la_objopen(struct link_map* map, Lmid_t lmid, uintptr_t* cookie) {
    if (lmid != LM_ID_BASE) return 0;     /* our own namespace */
    *cookie = (uintptr_t)map;
    if (!is_driver_name(map->l_name)) return LA_FLG_BINDFROM;
    if (!g_driver) {
        g_driver = map;
        const char* s = getenv("ETRACE_GPA");
        g_log_gpa = s && *s && *s != '0';
        etrace_log("driver library %s (watching cuGetExportTable, cuGetProcAddress, cuGetProcAddress_v2)",
                   map->l_name);
    }
    return LA_FLG_BINDTO | LA_FLG_BINDFROM;
}

uintptr_t la_symbind64(Elf64_Sym* sym, unsigned int ndx, uintptr_t* refcook, uintptr_t* defcook,
                       unsigned int* flags, const char* symname) {
    (void)ndx;
    uintptr_t addr = sym->st_value;
    if (!g_driver || *defcook != (uintptr_t)g_driver || !symname) return addr;
    uintptr_t ours = 0;
    if (strcmp(symname, "cuGetExportTable") == 0) {
        g_real_get_export_table = (get_export_table_fn)addr;
        ours = (uintptr_t)wrap_get_export_table;
    } else if (strcmp(symname, "cuGetProcAddress") == 0) {
        g_real_gpa_v1 = (gpa_v1_fn)addr;
        ours = (uintptr_t)wrap_gpa_v1;
    } else if (strcmp(symname, "cuGetProcAddress_v2") == 0) {
        g_real_gpa_v2 = (gpa_v2_fn)addr;
        ours = (uintptr_t)wrap_gpa_v2;
    }
    if (!ours) return addr;
    etrace_log("bind %s for %s%s", symname, object_name((const struct link_map*)*refcook),
               (*flags & LA_SYMB_DLSYM) ? " (dlsym)" : "");
    return ours;
}
