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

/* The NVRTC helper the samples and benchmarks use too. */
#include "../../samples/nvrtc_compile.h"

int ts_nvrtc_available(const char **why) { return nvrtc_available(why); }

void *ts_compile_cubin_opts(const char *source, const char *name, int arch, const char *const *options, int noptions,
                            size_t *size) {
    return nvrtc_compile(source, name, 0, arch, options, noptions, size);
}

void *ts_compile_cubin(const char *source, const char *name, int arch, size_t *size) {
    return ts_compile_cubin_opts(source, name, arch, NULL, 0, size);
}

char *ts_compile_ptx(const char *source, const char *name, int arch, size_t *size) {
    return ts_compile_ptx_opts(source, name, arch, NULL, 0, size);
}

char *ts_compile_ptx_opts(const char *source, const char *name, int arch, const char *const *options, int noptions,
                          size_t *size) {
    return nvrtc_compile(source, name, 1, arch, options, noptions, size);
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
