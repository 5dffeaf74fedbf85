/*
 * Compiling CUDA C++ at run time with NVRTC: the one helper the samples, the
 * benchmarks and the tests share (tests/support/ts_kernels.c).
 *
 * NVRTC is opened with dlopen, so programs need neither nvrtc.h nor -lnvrtc
 * and still start where the CUDA toolkit is missing (nvrtc_available says
 * why it is): libnvrtc.so.13 (then .so.12, libnvrtc.so) from
 * $CUDA_HOME/lib64, /usr/local/cuda/lib64, then the loader's search path.
 * Link with -ldl on C libraries older than glibc 2.34.
 *
 * Header only (static inline): include it in one file of a program.
 */
#ifndef NVLITE_SAMPLES_NVRTC_COMPILE_H
#define NVLITE_SAMPLES_NVRTC_COMPILE_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The NVRTC entry points used, declared here (nvrtc.h is not needed).
 * nvrtcResult is an int-sized enum; 0 is NVRTC_SUCCESS. */
typedef struct nvrtc_compile_program_ *nvrtc_compile_program;
typedef int (*nvrtc_create_fn)(nvrtc_compile_program *, const char *, const char *, int, const char *const *,
                               const char *const *);
typedef int (*nvrtc_destroy_fn)(nvrtc_compile_program *);
typedef int (*nvrtc_compile_fn)(nvrtc_compile_program, int, const char *const *);
typedef int (*nvrtc_size_fn)(nvrtc_compile_program, size_t *);
typedef int (*nvrtc_get_fn)(nvrtc_compile_program, char *);
typedef const char *(*nvrtc_error_string_fn)(int);

static struct {
    int tried;
    void *handle;
    char why[512];
    nvrtc_create_fn create;
    nvrtc_destroy_fn destroy;
    nvrtc_compile_fn compile;
    nvrtc_size_fn cubin_size, ptx_size, log_size;
    nvrtc_get_fn cubin, ptx, log;
    nvrtc_error_string_fn error_string;
} nvrtc_api;

static inline void *nvrtc_symbol(const char *name) {
    void *p = dlsym(nvrtc_api.handle, name);
    if (!p && !nvrtc_api.why[0]) snprintf(nvrtc_api.why, sizeof nvrtc_api.why, "NVRTC lacks %s", name);
    return p;
}

/* 1 when NVRTC could be loaded; else 0 and *why (if not NULL) says why. */
static inline int nvrtc_available(const char **why) {
    if (!nvrtc_api.tried) {
        nvrtc_api.tried = 1;
        static const char *const libs[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
        const char *home = getenv("CUDA_HOME");
        const char *dirs[3] = {home && *home ? home : NULL, "/usr/local/cuda", ""};
        char path[1024];
        for (size_t d = 0; d < 3 && !nvrtc_api.handle; ++d) {
            if (!dirs[d]) continue;
            for (size_t l = 0; l < sizeof libs / sizeof libs[0] && !nvrtc_api.handle; ++l) {
                if (dirs[d][0])
                    snprintf(path, sizeof path, "%s/lib64/%s", dirs[d], libs[l]);
                else
                    snprintf(path, sizeof path, "%s", libs[l]);
                nvrtc_api.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            }
        }
        if (!nvrtc_api.handle) {
            snprintf(nvrtc_api.why, sizeof nvrtc_api.why,
                     "NVRTC not found (libnvrtc.so.13 in $CUDA_HOME/lib64, /usr/local/cuda/lib64 or the library path)");
        } else {
            nvrtc_api.create = (nvrtc_create_fn)nvrtc_symbol("nvrtcCreateProgram");
            nvrtc_api.destroy = (nvrtc_destroy_fn)nvrtc_symbol("nvrtcDestroyProgram");
            nvrtc_api.compile = (nvrtc_compile_fn)nvrtc_symbol("nvrtcCompileProgram");
            nvrtc_api.cubin_size = (nvrtc_size_fn)nvrtc_symbol("nvrtcGetCUBINSize");
            nvrtc_api.cubin = (nvrtc_get_fn)nvrtc_symbol("nvrtcGetCUBIN");
            nvrtc_api.ptx_size = (nvrtc_size_fn)nvrtc_symbol("nvrtcGetPTXSize");
            nvrtc_api.ptx = (nvrtc_get_fn)nvrtc_symbol("nvrtcGetPTX");
            nvrtc_api.log_size = (nvrtc_size_fn)nvrtc_symbol("nvrtcGetProgramLogSize");
            nvrtc_api.log = (nvrtc_get_fn)nvrtc_symbol("nvrtcGetProgramLog");
            nvrtc_api.error_string = (nvrtc_error_string_fn)nvrtc_symbol("nvrtcGetErrorString");
            if (nvrtc_api.why[0]) {
                dlclose(nvrtc_api.handle);
                nvrtc_api.handle = NULL;
            }
        }
    }
    if (why) *why = nvrtc_api.handle ? NULL : nvrtc_api.why;
    return nvrtc_api.handle != NULL;
}

/* Compiles CUDA C++ 'source' for sm_<arch> (a cubin; ptx = 0) or
 * compute_<arch> (PTX text; ptx = 1), arch = major * 10 + minor, with
 * 'noptions' more NVRTC options (may be NULL), e.g. "-maxrregcount=32".
 * Returns NVRTC's output (malloc'ed, with a NUL after it; free() it) and its
 * size (for PTX, NVRTC's count includes the NUL), or NULL after printing why
 * and NVRTC's log to stderr. 'name' names the program in messages. */
static inline char *nvrtc_compile(const char *source, const char *name, int ptx, int arch, const char *const *options,
                                  int noptions, size_t *size) {
    const char *why = NULL;
    if (size) *size = 0;
    if (!nvrtc_available(&why)) {
        fprintf(stderr, "nvrtc: %s\n", why);
        return NULL;
    }
    char arch_option[64];
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s%d", ptx ? "compute_" : "sm_", arch);
    nvrtc_compile_program prog = NULL;
    int r = nvrtc_api.create(&prog, source, name, 0, NULL, NULL);
    if (r != 0) {
        fprintf(stderr, "nvrtc: nvrtcCreateProgram(%s): %s\n", name, nvrtc_api.error_string(r));
        return NULL;
    }
    const char *opts[40];
    int n = 0;
    opts[n++] = arch_option;
    for (int i = 0; i < noptions && n < 40; ++i) opts[n++] = options[i];
    r = nvrtc_api.compile(prog, n, opts);
    if (r != 0) {
        size_t log_size = 0;
        nvrtc_api.log_size(prog, &log_size);
        char *log = (char *)malloc(log_size + 1);
        if (log) {
            log[0] = 0;
            nvrtc_api.log(prog, log);
            log[log_size] = 0;
        }
        fprintf(stderr, "nvrtc: compiling %s (%s) failed: %s\n%s\n", name, arch_option, nvrtc_api.error_string(r),
                log ? log : "");
        free(log);
        nvrtc_api.destroy(&prog);
        return NULL;
    }
    const nvrtc_size_fn get_size = ptx ? nvrtc_api.ptx_size : nvrtc_api.cubin_size;
    const nvrtc_get_fn get = ptx ? nvrtc_api.ptx : nvrtc_api.cubin;
    size_t bytes = 0;
    char *out = NULL;
    if (get_size(prog, &bytes) == 0 && bytes > 0) out = (char *)malloc(bytes + 1);
    if (out && get(prog, out) != 0) {
        free(out);
        out = NULL;
    }
    if (out) out[bytes] = 0;
    else fprintf(stderr, "nvrtc: no %s for %s\n", ptx ? "PTX" : "cubin", name);
    nvrtc_api.destroy(&prog);
    if (size && out) *size = bytes;
    return out;
}

#endif /* NVLITE_SAMPLES_NVRTC_COMPILE_H */
