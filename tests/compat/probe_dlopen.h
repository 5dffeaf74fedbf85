/*
 * For the probes that link no CUDA library (dropin_probe, numba_probe): they
 * dlopen() "libcuda.so.1" and look up every function by its exported name,
 * so one binary probes whichever library the dynamic linker finds. A
 * function the library does not export answers CUresult(4242) ("MISSING"
 * and its name on stderr).
 *
 *   F(cuX)               the library's cuX, typed by NVIDIA's declaration; the
 *                        name is macro-expanded first (cuCtxCreate ->
 *                        cuCtxCreate_v4) as a program's call would be
 *   N(type, "name")      a symbol the header does not map to
 *   probe_open_library() dlopen()s libcuda.so.1 (into 'lib') for the cases
 *                        and probe.h's rname; dlerror()'s text when it cannot
 *
 * Includes probe.h (P, PV, rname, on_crash). Include after <dlfcn.h>,
 * <setjmp.h>, <signal.h>, <stdio.h>, <unistd.h> and NVIDIA's cuda.h, with
 * _GNU_SOURCE defined.
 */
#ifndef NVLITE_TESTS_COMPAT_PROBE_DLOPEN_H
#define NVLITE_TESTS_COMPAT_PROBE_DLOPEN_H

static void* lib;

/* The answer of a function the library does not have. */
static CUresult missing_function(void) { return (CUresult)4242; }

static void* sym(const char* name) {
    void* p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "MISSING %s\n", name);
        return (void*)missing_function;
    }
    return p;
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define F(fn) ((__typeof__(&fn))sym(STR(fn)))
#define N(type, name) ((type)sym(name))

/* probe.h names results through the library's own cuGetErrorName. */
static CUresult (*p_cuGetErrorName)(CUresult, const char**);
#define cuGetErrorName (*p_cuGetErrorName)
#include "probe.h"
#undef cuGetErrorName

static const char* probe_open_library(void) {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return dlerror();
    p_cuGetErrorName = (CUresult(*)(CUresult, const char**))sym("cuGetErrorName");
    return NULL;
}

#endif
