/*
 * A stand-in for libnvJitLink that misbehaves on request, for the tests of
 * the JIT's isolation (tests/unit/test_jit_isolation.cpp): an input holding
 * one of these words makes nvJitLinkAddData
 *   CRASH  write through a null pointer (SIGSEGV)
 *   FPE    raise SIGFPE (the other crash seen in NVIDIA's JIT)
 *   STALL  block forever          SPIN   loop forever
 *   HOG    take memory until it fails, then abort
 *   EXIT   exit the process
 * and anything else succeeds, as does nvJitLinkComplete, with a 16-byte
 * "cubin" of 0x5a bytes. Only the C API nvlite uses is provided.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static int has(const void *data, size_t size, const char *word) { return memmem(data, size, word, strlen(word)) != NULL; }

EXPORT int nvJitLinkCreate(void **handle, unsigned n, const char **options) {
    (void)n;
    (void)options;
    *handle = malloc(16);
    return *handle ? 0 : 6;
}

EXPORT int nvJitLinkDestroy(void **handle) {
    free(*handle);
    *handle = NULL;
    return 0;
}

EXPORT int nvJitLinkAddData(void *handle, int type, const void *data, size_t size, const char *name) {
    (void)handle;
    (void)type;
    (void)name;
    if (has(data, size, "CRASH")) *(volatile int *)(uintptr_t)0 = 1;
    if (has(data, size, "FPE")) raise(SIGFPE);
    if (has(data, size, "STALL"))
        for (;;) pause();
    if (has(data, size, "SPIN"))
        for (volatile unsigned long i = 0;; ++i) {
        }
    if (has(data, size, "HOG")) {
        for (;;) {
            char *p = malloc(64u << 20);
            if (!p) abort();
            memset(p, 1, 64u << 20);
        }
    }
    if (has(data, size, "EXIT")) _exit(3);
    return 0;
}

EXPORT int nvJitLinkAddFile(void *handle, int type, const char *path) {
    (void)handle;
    (void)type;
    (void)path;
    return 3;
}

EXPORT int nvJitLinkComplete(void *handle) {
    (void)handle;
    return 0;
}

EXPORT int nvJitLinkGetLinkedCubinSize(void *handle, size_t *size) {
    (void)handle;
    *size = 16;
    return 0;
}

EXPORT int nvJitLinkGetLinkedCubin(void *handle, void *out) {
    (void)handle;
    memset(out, 0x5a, 16);
    return 0;
}

static int log_size(void *handle, size_t *size) {
    (void)handle;
    *size = 1;
    return 0;
}
static int log_text(void *handle, char *out) {
    (void)handle;
    out[0] = 0;
    return 0;
}
EXPORT int nvJitLinkGetErrorLogSize(void *h, size_t *s) { return log_size(h, s); }
EXPORT int nvJitLinkGetErrorLog(void *h, char *o) { return log_text(h, o); }
EXPORT int nvJitLinkGetInfoLogSize(void *h, size_t *s) { return log_size(h, s); }
EXPORT int nvJitLinkGetInfoLog(void *h, char *o) { return log_text(h, o); }
