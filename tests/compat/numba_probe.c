#define _GNU_SOURCE
/*
 * numba_probe: libcuda's answers to the calls numba-cuda's suite depends on
 * that no other probe records. One line per case; run it on libcuda and on
 * nvlite and compare:
 *
 *   build/probes/numba_probe SECTION                       # the system's libcuda
 *   build/bin/nvlite-run build/probes/numba_probe SECTION    # nvlite as the driver
 *
 * Sections: zero (copies and fills of 0 bytes at NULL, unallocated and
 * misaligned device addresses), fork (what a child forked after cuInit
 * gets from each call; the parent's state afterwards).
 * Like dropin_probe it links no CUDA library: it dlopen()s libcuda.so.1.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include "probe_dlopen.h"

static CUcontext setup(void) {
    CUdevice dev;
    CUcontext ctx = NULL;
    if (F(cuInit)(0) != CUDA_SUCCESS || F(cuDeviceGet)(&dev, 0) != CUDA_SUCCESS ||
        F(cuDevicePrimaryCtxRetain)(&ctx, dev) != CUDA_SUCCESS || F(cuCtxSetCurrent)(ctx) != CUDA_SUCCESS) {
        printf("setup failed\n");
        exit(1);
    }
    return ctx;
}

static void section_zero(void) {
    setup();
    unsigned char host[64];
    memset(host, 0x5a, sizeof host);
    CUdeviceptr p = 0;
    P("cuMemAlloc 4096", F(cuMemAlloc)(&p, 4096));
    CUstream s = NULL;
    P("cuStreamCreate", F(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING));
    const struct {
        const char* name;
        CUdeviceptr d;
    } where[] = {{"NULL", 0}, {"0x10", 0x10}, {"end", p + 4096}, {"end+1GiB", p + (1ull << 30)}, {"p+1", p + 1}};
    char label[96];
    for (size_t i = 0; i < sizeof where / sizeof where[0]; ++i) {
        CUdeviceptr d = where[i].d;
#define Z(fmt, call)                                               \
    do {                                                           \
        snprintf(label, sizeof label, fmt " %s", where[i].name);   \
        P(label, call);                                            \
    } while (0)
        Z("HtoD 0 bytes", F(cuMemcpyHtoD)(d, host, 0));
        Z("HtoDAsync 0 bytes NULL stream", F(cuMemcpyHtoDAsync)(d, host, 0, NULL));
        Z("HtoDAsync 0 bytes stream", F(cuMemcpyHtoDAsync)(d, host, 0, s));
        Z("DtoH 0 bytes", F(cuMemcpyDtoH)(host, d, 0));
        Z("DtoHAsync 0 bytes", F(cuMemcpyDtoHAsync)(host, d, 0, s));
        Z("DtoD 0 bytes to", F(cuMemcpyDtoD)(d, p, 0));
        Z("DtoD 0 bytes from", F(cuMemcpyDtoD)(p, d, 0));
        Z("cuMemcpy 0 bytes", F(cuMemcpy)(d, p, 0));
        Z("cuMemcpyAsync 0 bytes", F(cuMemcpyAsync)(p, d, 0, s));
        Z("MemsetD8 0", F(cuMemsetD8)(d, 1, 0));
        Z("MemsetD16Async 0", F(cuMemsetD16Async)(d, 1, 0, s));
        Z("MemsetD32 0", F(cuMemsetD32)(d, 1, 0));
        Z("HtoD 0 bytes NULL host", F(cuMemcpyHtoD)(d, NULL, 0));
#undef Z
    }
    P("HtoDAsync 0 bytes bogus stream", F(cuMemcpyHtoDAsync)(p, host, 0, (CUstream)0x1234));
    P("cuStreamSynchronize", F(cuStreamSynchronize)(s));
}

static void section_fork(void) {
    CUcontext ctx = setup();
    CUdeviceptr p = 0;
    P("parent cuMemAlloc", F(cuMemAlloc)(&p, 4096));
    P("parent cuMemsetD32", F(cuMemsetD32)(p, 0x1f2e3d4c, 1024));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        CUcontext c = NULL;
        CUdeviceptr q = 0;
        int n = 0, v = 0;
        CUdevice d;
        P("child cuCtxGetCurrent", F(cuCtxGetCurrent)(&c));
        P("child cuCtxGetDevice", F(cuCtxGetDevice)(&d));
        P("child cuMemAlloc", F(cuMemAlloc)(&q, 8));
        P("child cuMemsetD32 parent's", F(cuMemsetD32)(p, 0, 1));
        P("child cuDeviceGetCount", F(cuDeviceGetCount)(&n));
        P("child cuDriverGetVersion", F(cuDriverGetVersion)(&v));
        P("child cuCtxSetCurrent parent's", F(cuCtxSetCurrent)(ctx));
        P("child cuInit", F(cuInit)(0));
        P("child cuInit again", F(cuInit)(0));
        P("child cuDeviceGetCount after", F(cuDeviceGetCount)(&n));
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("%-*s => %d\n", PROBE_WIDTH, "child exit status", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    uint32_t back[1024] = {0};
    P("parent cuMemcpyDtoH after", F(cuMemcpyDtoH)(back, p, sizeof back));
    int same = 1;
    for (int i = 0; i < 1024; ++i) same &= back[i] == 0x1f2e3d4c;
    printf("%-*s => %s\n", PROBE_WIDTH, "parent memory intact", same ? "yes" : "no");
}

int main(int argc, char** argv) {
    const char* why = probe_open_library();
    if (why) {
        fprintf(stderr, "numba_probe: cannot load libcuda.so.1: %s\n", why);
        return 1;
    }
    Dl_info info;
    if (dladdr(sym("cuInit"), &info) && info.dli_fname) fprintf(stderr, "numba_probe: driver %s\n", info.dli_fname);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
    const char* section = argc > 1 ? argv[1] : "";
    printf("section %s\n", section);
    if (strcmp(section, "zero") == 0) section_zero();
    else if (strcmp(section, "fork") == 0) section_fork();
    else {
        fprintf(stderr, "usage: numba_probe zero|fork\n");
        return 2;
    }
    printf("done\n");
    return 0;
}
