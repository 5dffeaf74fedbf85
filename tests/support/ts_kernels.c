/*
 * ts_kernels.h: NVRTC (through dlopen), nvcc and temporary files. Its own
 * object, linked into every test binary with test_support.o.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "support/ts_kernels.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------ NVRTC */

/* The few NVRTC entry points used, declared here (nvrtc.h is not on the
 * include path of the tests). nvrtcResult is an int-sized enum. */
typedef struct ts_nvrtc_program_ *ts_nvrtc_program;
typedef int (*ts_nvrtc_create_fn)(ts_nvrtc_program *, const char *, const char *, int, const char *const *,
                                  const char *const *);
typedef int (*ts_nvrtc_destroy_fn)(ts_nvrtc_program *);
typedef int (*ts_nvrtc_compile_fn)(ts_nvrtc_program, int, const char *const *);
typedef int (*ts_nvrtc_size_fn)(ts_nvrtc_program, size_t *);
typedef int (*ts_nvrtc_get_fn)(ts_nvrtc_program, char *);
typedef const char *(*ts_nvrtc_error_string_fn)(int);

/* In an AddressSanitizer build, what NVRTC allocates for itself (its
 * libstdc++'s exception pool, kept for the process) is not ours to report:
 * LeakSanitizer ignores allocations made while it is disabled. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TS_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(TS_LSAN)
void __lsan_disable(void);
void __lsan_enable(void);
#define TS_NOT_OURS(call) (__lsan_disable(), (call), __lsan_enable())
#else
#define TS_NOT_OURS(call) (call)
#endif

static struct {
    int tried;
    void *handle;
    char why[512];
    ts_nvrtc_create_fn create;
    ts_nvrtc_destroy_fn destroy;
    ts_nvrtc_compile_fn compile;
    ts_nvrtc_size_fn cubin_size, ptx_size, log_size;
    ts_nvrtc_get_fn cubin, ptx, log;
    ts_nvrtc_error_string_fn error_string;
} ts_nvrtc;

static void *ts_nvrtc_sym(const char *name) {
    void *p = dlsym(ts_nvrtc.handle, name);
    if (!p && !ts_nvrtc.why[0]) snprintf(ts_nvrtc.why, sizeof ts_nvrtc.why, "NVRTC lacks %s", name);
    return p;
}

int ts_nvrtc_available(const char **why) {
    if (!ts_nvrtc.tried) {
        ts_nvrtc.tried = 1;
        static const char *const libs[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
        const char *dirs[3] = {NULL, "/usr/local/cuda/lib64", ""};
        const char *home = getenv("CUDA_HOME");
        if (home && *home) dirs[0] = home;
        char path[1024];
        for (size_t d = 0; d < 3 && !ts_nvrtc.handle; ++d) {
            if (!dirs[d]) continue;
            for (size_t l = 0; l < sizeof libs / sizeof libs[0] && !ts_nvrtc.handle; ++l) {
                if (d == 0)
                    snprintf(path, sizeof path, "%s/lib64/%s", dirs[d], libs[l]);
                else if (dirs[d][0])
                    snprintf(path, sizeof path, "%s/%s", dirs[d], libs[l]);
                else
                    snprintf(path, sizeof path, "%s", libs[l]);
                TS_NOT_OURS(ts_nvrtc.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL));
            }
        }
        if (!ts_nvrtc.handle) {
            snprintf(ts_nvrtc.why, sizeof ts_nvrtc.why,
                     "NVRTC not found (libnvrtc.so.13 in $CUDA_HOME/lib64, /usr/local/cuda/lib64 or the library path)");
        } else {
            ts_nvrtc.create = (ts_nvrtc_create_fn)ts_nvrtc_sym("nvrtcCreateProgram");
            ts_nvrtc.destroy = (ts_nvrtc_destroy_fn)ts_nvrtc_sym("nvrtcDestroyProgram");
            ts_nvrtc.compile = (ts_nvrtc_compile_fn)ts_nvrtc_sym("nvrtcCompileProgram");
            ts_nvrtc.cubin_size = (ts_nvrtc_size_fn)ts_nvrtc_sym("nvrtcGetCUBINSize");
            ts_nvrtc.cubin = (ts_nvrtc_get_fn)ts_nvrtc_sym("nvrtcGetCUBIN");
            ts_nvrtc.ptx_size = (ts_nvrtc_size_fn)ts_nvrtc_sym("nvrtcGetPTXSize");
            ts_nvrtc.ptx = (ts_nvrtc_get_fn)ts_nvrtc_sym("nvrtcGetPTX");
            ts_nvrtc.log_size = (ts_nvrtc_size_fn)ts_nvrtc_sym("nvrtcGetProgramLogSize");
            ts_nvrtc.log = (ts_nvrtc_get_fn)ts_nvrtc_sym("nvrtcGetProgramLog");
            ts_nvrtc.error_string = (ts_nvrtc_error_string_fn)ts_nvrtc_sym("nvrtcGetErrorString");
            if (ts_nvrtc.why[0]) {
                dlclose(ts_nvrtc.handle);
                ts_nvrtc.handle = NULL;
            }
        }
    }
    if (why) *why = ts_nvrtc.handle ? NULL : ts_nvrtc.why;
    return ts_nvrtc.handle != NULL;
}

static const char *ts_nvrtc_err(int r) { return ts_nvrtc.error_string ? ts_nvrtc.error_string(r) : "?"; }

/* Compiles for "--gpu-architecture=<prefix><arch>"; returns the program or NULL. */
static ts_nvrtc_program ts_nvrtc_build(const char *source, const char *name, const char *arch_option,
                                       const char *const *options, int noptions) {
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) {
        fprintf(stderr, "ts_kernels: %s\n", why);
        return NULL;
    }
    ts_nvrtc_program prog = NULL;
    int r = 0;
    TS_NOT_OURS(r = ts_nvrtc.create(&prog, source, name, 0, NULL, NULL));
    if (r != 0) {
        fprintf(stderr, "ts_kernels: nvrtcCreateProgram(%s): %s\n", name, ts_nvrtc_err(r));
        return NULL;
    }
    const char *opts[40];
    int n = 0;
    opts[n++] = arch_option;
    for (int i = 0; i < noptions && n < 40; ++i) opts[n++] = options[i];
    TS_NOT_OURS(r = ts_nvrtc.compile(prog, n, opts));
    if (r != 0) {
        size_t log_size = 0;
        ts_nvrtc.log_size(prog, &log_size);
        char *log = (char *)malloc(log_size + 1);
        if (log) {
            log[0] = 0;
            ts_nvrtc.log(prog, log);
            log[log_size] = 0;
        }
        fprintf(stderr, "ts_kernels: compiling %s (%s) failed: %s\n%s\n", name, arch_option, ts_nvrtc_err(r),
                log ? log : "");
        free(log);
        ts_nvrtc.destroy(&prog);
        return NULL;
    }
    return prog;
}

/* Compiles for sm_<arch> (a cubin) or compute_<arch> (PTX) and takes NVRTC's
 * output, with a NUL after it. */
static char *ts_nvrtc_output(const char *source, const char *name, int ptx, int arch, const char *const *options,
                             int noptions, size_t *size) {
    char arch_option[64];
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s%d", ptx ? "compute_" : "sm_", arch);
    ts_nvrtc_program prog = ts_nvrtc_build(source, name, arch_option, options, noptions);
    if (!prog) return NULL; /* NVRTC is loaded from here on */
    const ts_nvrtc_size_fn get_size = ptx ? ts_nvrtc.ptx_size : ts_nvrtc.cubin_size;
    const ts_nvrtc_get_fn get = ptx ? ts_nvrtc.ptx : ts_nvrtc.cubin;
    const char *what = ptx ? "PTX" : "cubin";
    size_t n = 0;
    char *out = NULL;
    if (get_size(prog, &n) == 0 && n > 0) out = (char *)malloc(n + 1);
    if (out && get(prog, out) != 0) {
        free(out);
        out = NULL;
    }
    if (out) out[n] = 0; /* for PTX, n already counts NVRTC's NUL */
    if (!out) fprintf(stderr, "ts_kernels: no %s for %s\n", what, name);
    ts_nvrtc.destroy(&prog);
    if (size) *size = out ? n : 0;
    return out;
}

void *ts_compile_cubin_opts(const char *source, const char *name, int arch, const char *const *options, int noptions,
                            size_t *size) {
    return ts_nvrtc_output(source, name, 0, arch, options, noptions, size);
}

void *ts_compile_cubin(const char *source, const char *name, int arch, size_t *size) {
    return ts_compile_cubin_opts(source, name, arch, NULL, 0, size);
}

char *ts_compile_ptx(const char *source, const char *name, int arch, size_t *size) {
    return ts_compile_ptx_opts(source, name, arch, NULL, 0, size);
}

char *ts_compile_ptx_opts(const char *source, const char *name, int arch, const char *const *options, int noptions,
                          size_t *size) {
    return ts_nvrtc_output(source, name, 1, arch, options, noptions, size);
}

/* ------------------------------------------------------------------ temporary files */

#define TS_MAX_TEMP_FILES 256
static struct {
    char dir[256];
    int made;
    char *files[TS_MAX_TEMP_FILES];
    int nfiles;
} ts_tmp;

static void ts_temp_cleanup(void) {
    for (int i = 0; i < ts_tmp.nfiles; ++i) {
        unlink(ts_tmp.files[i]);
        free(ts_tmp.files[i]);
    }
    ts_tmp.nfiles = 0;
    if (ts_tmp.made == 1) rmdir(ts_tmp.dir);
}

const char *ts_temp_dir(void) {
    if (!ts_tmp.made) {
        const char *base = getenv("TMPDIR");
        if (!base || !*base) base = "/tmp";
        snprintf(ts_tmp.dir, sizeof ts_tmp.dir, "%s/nvlite-test-XXXXXX", base);
        if (mkdtemp(ts_tmp.dir)) {
            ts_tmp.made = 1;
            atexit(ts_temp_cleanup);
        } else {
            ts_tmp.made = -1;
        }
    }
    return ts_tmp.made == 1 ? ts_tmp.dir : NULL;
}

/* <temp dir>/<name>, remembered for removal at exit. */
static char *ts_temp_path(const char *name) {
    const char *dir = ts_temp_dir();
    if (!dir) return NULL;
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = (char *)malloc(n);
    if (!path) return NULL;
    snprintf(path, n, "%s/%s", dir, name);
    int known = 0;
    for (int i = 0; i < ts_tmp.nfiles; ++i) known |= strcmp(ts_tmp.files[i], path) == 0;
    if (!known && ts_tmp.nfiles < TS_MAX_TEMP_FILES) {
        ts_tmp.files[ts_tmp.nfiles] = (char *)malloc(n);
        if (ts_tmp.files[ts_tmp.nfiles]) memcpy(ts_tmp.files[ts_tmp.nfiles++], path, n);
    }
    return path;
}

char *ts_temp_write(const char *name, const void *data, size_t n) {
    char *path = ts_temp_path(name);
    if (!path) return NULL;
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
        fprintf(stderr, "ts_kernels: cannot write %s: %s\n", path, strerror(errno));
        free(path);
        return NULL;
    }
    return path;
}

void *ts_read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = (char *)malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        cap *= 2;
        char *bigger = (char *)realloc(buf, cap + 1);
        if (!bigger) free(buf);
        buf = bigger;
    }
    fclose(f);
    if (!buf) return NULL;
    buf[n] = 0;
    if (size) *size = n;
    return buf;
}

/* ------------------------------------------------------------------ nvcc */

static const char *ts_nvcc_path(void) {
    static char path[512];
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        snprintf(path, sizeof path, "%s/bin/nvcc", home);
        if (access(path, X_OK) == 0) return path;
    }
    snprintf(path, sizeof path, "/usr/local/cuda/bin/nvcc");
    if (access(path, X_OK) == 0) return path;
    return NULL;
}

int ts_nvcc_available(const char **why) {
    const char *p = ts_nvcc_path();
    if (why) *why = p ? NULL : "nvcc not found ($CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc)";
    return p != NULL;
}

void *ts_compile_fatbin(const char *source, const char *const *gencodes, int ngencodes, const char *const *extra,
                        int nextra, size_t *size) {
    static int serial;
    const char *nvcc = ts_nvcc_path();
    if (!nvcc) {
        fprintf(stderr, "ts_kernels: nvcc not found\n");
        return NULL;
    }
    char name[64];
    snprintf(name, sizeof name, "fatbin%d.cu", ++serial);
    char *src = ts_temp_write(name, source, strlen(source));
    snprintf(name, sizeof name, "fatbin%d.fatbin", serial);
    char *out = ts_temp_path(name);
    if (!src || !out) {
        free(src);
        free(out);
        return NULL;
    }
    const char *argv[64];
    int n = 0;
    argv[n++] = nvcc;
    argv[n++] = "-fatbin";
    for (int i = 0; i < ngencodes && n < 56; ++i) {
        argv[n++] = "-gencode";
        argv[n++] = gencodes[i];
    }
    for (int i = 0; i < nextra && n < 60; ++i) argv[n++] = extra[i];
    argv[n++] = "-o";
    argv[n++] = out;
    argv[n++] = src;
    argv[n] = NULL;
    void *result = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        execv(nvcc, (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        result = ts_read_file(out, size);
    else
        fprintf(stderr, "ts_kernels: %s -fatbin %s failed (status 0x%x)\n", nvcc, src, status);
    free(src);
    free(out);
    return result;
}
