/*
 * soak: create-everything / destroy-everything cycles (issue 9 item 6).
 *
 * Every cycle makes a context, device and pinned memory with copies between
 * them, a stream and timed events, loads the prebuilt cubin, launches a
 * kernel, and destroys all of it again (in the order a program would, and
 * every fourth cycle by cuCtxDestroy alone, leaving the rest to it). After
 * a warm-up the process's resources are measured, and again after the
 * cycles: the resident set may grow by at most 16 bytes per cycle on
 * average, the malloc heap likewise, and the open files, memory mappings
 * and threads must be back where they were. Any cycle that fails, or any
 * bound exceeded, fails the run (exit status 1).
 *
 *   soak [cycles]        (default 10000; make soak)
 *
 * Runs from the repository root (it reads tests/data/), on the GPU or with
 * NVLITE_DEVICE=sim.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_support.h"

#define WARMUP_CYCLES 300
#define MAX_GROWTH_PER_CYCLE 16.0 /* bytes, RSS and heap */

static unsigned char *cubin;

#define CK(call)                                                                                \
    do {                                                                                        \
        CUresult r_ = (call);                                                                   \
        if (r_ != CUDA_SUCCESS) {                                                               \
            fprintf(stderr, "soak: cycle %ld: %s returned %s\n", cycle, #call, ts_cu_name(r_)); \
            return 0;                                                                           \
        }                                                                                       \
    } while (0)

/* One full cycle; 0 on the first failure. */
static int cycle_once(long cycle) {
    const size_t odd = 1000 + (size_t)(cycle % 7) * 333;
    CUcontext ctx = NULL;
    CK(cuCtxCreate(&ctx, NULL, (cycle % 3 == 0) ? CU_CTX_SCHED_BLOCKING_SYNC : 0, 0));
    CUdeviceptr a = 0, b = 0;
    void *pinned = NULL;
    CK(cuMemAlloc(&a, odd));
    CK(cuMemAlloc(&b, 3 * odd + 1));
    CK(cuMemAllocHost(&pinned, odd));
    memset(pinned, (int)(cycle & 0xff) | 1, odd);
    CUstream s = NULL;
    CUevent e0 = NULL, e1 = NULL;
    CK(cuStreamCreate(&s, cycle % 2 ? CU_STREAM_NON_BLOCKING : 0));
    CK(cuEventCreate(&e0, 0));
    CK(cuEventCreate(&e1, cycle % 5 == 0 ? CU_EVENT_BLOCKING_SYNC : 0));
    CK(cuEventRecord(e0, s));
    CK(cuMemcpyHtoDAsync(a, pinned, odd, s));
    CK(cuMemcpyDtoDAsync(b + 1, a, odd, s));
    CK(cuMemsetD8Async(b, 7, 1, s));
    CUmodule m = NULL;
    CUfunction f = NULL;
    CK(cuModuleLoadData(&m, cubin));
    CK(cuModuleGetFunction(&f, m, "k_noparams"));
    CK(cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, s, NULL, NULL));
    CK(cuEventRecord(e1, s));
    CK(cuEventSynchronize(e1));
    float ms = 0;
    CK(cuEventElapsedTime(&ms, e0, e1));
    unsigned char back[64];
    CK(cuMemcpyDtoH(back, b + 1, sizeof back));
    if (back[0] != ((unsigned char)(cycle & 0xff) | 1)) {
        fprintf(stderr, "soak: cycle %ld: data came back wrong\n", cycle);
        return 0;
    }
    if (cycle % 4 != 3) {
        CK(cuModuleUnload(m));
        CK(cuEventDestroy(e0));
        CK(cuEventDestroy(e1));
        CK(cuStreamDestroy(s));
        CK(cuMemFreeHost(pinned));
        CK(cuMemFree(a));
        CK(cuMemFree(b));
    }
    CK(cuCtxDestroy(ctx));
    return 1;
}

/* The simulated driver keeps its last 4096 launch records for the tests
 * to inspect: the warm-up fills that log, so that what it holds does not
 * count as growth. (On a GPU these are just more launches.) */
static int fill_launch_log(void) {
    const long cycle = -1;
    CUcontext ctx = NULL;
    CUmodule m = NULL;
    CUfunction f = NULL;
    CK(cuCtxCreate(&ctx, NULL, 0, 0));
    CK(cuModuleLoadData(&m, cubin));
    CK(cuModuleGetFunction(&f, m, "k_noparams"));
    for (int i = 0; i < 4200; ++i) CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    CK(cuCtxSynchronize());
    CK(cuCtxDestroy(ctx));
    return 1;
}

typedef struct {
    long rss;        /* bytes */
    long heap;       /* bytes in use (mallinfo2) */
    long fds, maps, threads;
} usage;

static long count_lines(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long n = 0;
    int c;
    while ((c = fgetc(f)) != EOF)
        if (c == '\n') ++n;
    fclose(f);
    return n;
}

static long count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    long n = 0;
    while (readdir(d)) ++n;
    closedir(d);
    return n;
}

static long status_field(const char *name) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, name, strlen(name)) == 0) v = atol(line + strlen(name));
    fclose(f);
    return v;
}

static usage measure(void) {
    usage u;
    malloc_trim(0);
    struct mallinfo2 mi = mallinfo2();
    u.heap = (long)mi.uordblks + (long)mi.hblkhd;
    u.rss = status_field("VmRSS:") * 1024;
    u.fds = count_fds();
    u.maps = count_lines("/proc/self/maps");
    u.threads = status_field("Threads:");
    return u;
}

int main(int argc, char **argv) {
    const long cycles = argc > 1 ? atol(argv[1]) : 10000;
    cubin = ts_read_file("tests/data/loader_kernels.sm_90.cubin", NULL);
    if (!cubin || cycles <= 0) {
        fprintf(stderr, "soak: tests/data/loader_kernels.sm_90.cubin cannot be read (run from the repository root)\n");
        return 2;
    }
    if (cuInit(0) != CUDA_SUCCESS) {
        fprintf(stderr, "soak: cuInit failed\n");
        return 2;
    }
    long cycle = 0;
    for (; cycle < WARMUP_CYCLES; ++cycle)
        if (!cycle_once(cycle)) return 1;
    if (!fill_launch_log()) return 1;
    const usage before = measure();
    const double t0 = ts_now();
    for (long i = 0; i < cycles; ++i, ++cycle) {
        if (!cycle_once(cycle)) return 1;
        if ((i + 1) % 1000 == 0) {
            usage u = measure();
            printf("soak: %6ld cycles  rss %+8ld B  heap %+8ld B  fds %+ld  maps %+ld  threads %+ld  (%.1f ms/cycle)\n",
                   i + 1, u.rss - before.rss, u.heap - before.heap, u.fds - before.fds, u.maps - before.maps,
                   u.threads - before.threads, (ts_now() - t0) * 1e3 / (double)(i + 1));
            fflush(stdout);
        }
    }
    const usage after = measure();
    const double rss = (double)(after.rss - before.rss) / (double)cycles;
    const double heap = (double)(after.heap - before.heap) / (double)cycles;
    printf("soak: %ld cycles after %d warm-up: RSS %+.2f B/cycle, heap %+.2f B/cycle, fds %+ld, maps %+ld, "
           "threads %+ld (limits: %.0f B/cycle, 0)\n",
           cycles, WARMUP_CYCLES, rss, heap, after.fds - before.fds, after.maps - before.maps,
           after.threads - before.threads, MAX_GROWTH_PER_CYCLE);
    int ok = rss <= MAX_GROWTH_PER_CYCLE && heap <= MAX_GROWTH_PER_CYCLE && after.fds == before.fds &&
             after.maps == before.maps && after.threads == before.threads;
    printf("soak: %s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
