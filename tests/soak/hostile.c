/*
 * hostile: many threads sharing contexts, streams, events and modules, and
 * destroying them while the others use them (issue 9).
 *
 *   hostile [seconds] [threads]      (default 60 s, 16 threads; make hostile)
 *
 * Four slots each hold a context and its stream, event, module (the
 * prebuilt cubin), kernel and device buffer. Every thread picks a slot and an
 * action at random: mostly using the slot's objects (copies and fills in its
 * stream, launches, event records, queries and waits, synchronisation,
 * allocations), sometimes destroying one of them and putting a new one in
 * its place, now and then destroying the whole context and building the
 * slot again. Every answer must be one a racing call may give (the handle
 * was still there, or it is gone); a crash ends the run, and a watchdog
 * ends it when no thread made progress for 60 s (a deadlock). At the end:
 * the calls made, the destroys, the peak RSS.
 *
 * Runs from the repository root (tests/data/), on the GPU or with
 * NVLITE_DEVICE=sim.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "support/test_support.h"

#define SLOTS 4
#define BUF_BYTES 65536

typedef struct {
    pthread_mutex_t rebuild;  /* one rebuild of the slot at a time */
    _Atomic(CUcontext) ctx;
    _Atomic(CUstream) stream;
    _Atomic(CUevent) event;
    _Atomic(CUmodule) module;
    _Atomic(CUfunction) function;
    _Atomic(CUdeviceptr) buf;
} slot_t;

static slot_t slots[SLOTS];
static unsigned char *cubin;
static atomic_int stop;
static atomic_long calls, destroys, unexpected;
static atomic_long progress;

static int allowed(CUresult r) {
    switch (r) {
    case CUDA_SUCCESS: case CUDA_ERROR_NOT_READY: case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED: case CUDA_ERROR_INVALID_VALUE: case CUDA_ERROR_INVALID_CONTEXT:
        return 1;
    default:
        return 0;
    }
}

static CUresult note(CUresult r, const char *what) {
    atomic_fetch_add(&calls, 1);
    if (!allowed(r) && atomic_fetch_add(&unexpected, 1) < 20) fprintf(stderr, "hostile: %s returned %s\n", what, ts_cu_name(r));
    return r;
}
#define N(call) note((call), #call)

static uint64_t rnd(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Builds slot i's objects in a new context (made current on this thread). */
static void build(slot_t *sl) {
    CUcontext c = NULL;
    if (cuCtxCreate(&c, NULL, 0, 0) != CUDA_SUCCESS) {
        fprintf(stderr, "hostile: cuCtxCreate failed\n");
        exit(1);
    }
    CUstream s = NULL;
    CUevent e = NULL;
    CUmodule m = NULL;
    CUfunction f = NULL;
    CUdeviceptr b = 0;
    if (cuStreamCreate(&s, 0) || cuEventCreate(&e, 0) || cuModuleLoadData(&m, cubin) ||
        cuModuleGetFunction(&f, m, "k_noparams") || cuMemAlloc(&b, BUF_BYTES)) {
        fprintf(stderr, "hostile: building a slot failed\n");
        exit(1);
    }
    atomic_store(&sl->stream, s);
    atomic_store(&sl->event, e);
    atomic_store(&sl->module, m);
    atomic_store(&sl->function, f);
    atomic_store(&sl->buf, b);
    atomic_store(&sl->ctx, c);
}

static void *worker(void *arg) {
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)arg;
    unsigned char host[4096];
    memset(host, 0x5a, sizeof host);
    CUevent mine = NULL;
    while (!atomic_load(&stop)) {
        slot_t *sl = &slots[rnd(&seed) % SLOTS];
        CUcontext c = atomic_load(&sl->ctx);
        N(cuCtxSetCurrent(c));
        CUstream s = atomic_load(&sl->stream);
        CUevent e = atomic_load(&sl->event);
        CUdeviceptr b = atomic_load(&sl->buf);
        const unsigned action = (unsigned)(rnd(&seed) % 1000);
        const size_t off = (size_t)(rnd(&seed) % (BUF_BYTES - sizeof host));
        float ms;
        if (action < 120) N(cuMemcpyHtoDAsync(b + off, host, 1 + rnd(&seed) % sizeof host, s));
        else if (action < 220) N(cuMemsetD8Async(b + off, (unsigned char)action, 1 + rnd(&seed) % 4096, s));
        else if (action < 300) N(cuMemcpyDtoH(host, b + off, 1 + rnd(&seed) % 64));
        else if (action < 400) N(cuLaunchKernel(atomic_load(&sl->function), 1 + (unsigned)(rnd(&seed) % 4), 1, 1, 64, 1, 1, 0, s, NULL, NULL));
        else if (action < 470) N(cuEventRecord(e, s));
        else if (action < 520) N(cuEventQuery(e));
        else if (action < 560) N(cuEventSynchronize(e));
        else if (action < 590) N(cuStreamWaitEvent(s, e, 0));
        else if (action < 630) N(cuStreamQuery(s));
        else if (action < 660) N(cuStreamSynchronize(s));
        else if (action < 680) N(cuCtxSynchronize());
        else if (action < 700) N(cuEventElapsedTime(&ms, e, e));
        else if (action < 760) {
            CUdeviceptr q = 0;
            if (N(cuMemAlloc(&q, 1 + rnd(&seed) % 100000)) == CUDA_SUCCESS) N(cuMemFree(q));
        } else if (action < 800) {
            CUfunction g = NULL;
            N(cuModuleGetFunction(&g, atomic_load(&sl->module), "k_ptrs"));
        } else if (action < 830) {
            if (!mine && N(cuEventCreate(&mine, CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS) mine = NULL;
            if (mine) {
                N(cuEventRecord(mine, s));
                N(cuEventDestroy(mine));
                mine = NULL;
            }
        } else if (action < 870) {  /* a new stream in the slot */
            CUstream fresh = NULL;
            if (N(cuStreamCreate(&fresh, action & 1 ? CU_STREAM_NON_BLOCKING : 0)) == CUDA_SUCCESS) {
                CUstream old = atomic_exchange(&sl->stream, fresh);
                N(cuStreamDestroy(old));
                atomic_fetch_add(&destroys, 1);
            }
        } else if (action < 910) {  /* a new event */
            CUevent fresh = NULL;
            if (N(cuEventCreate(&fresh, 0)) == CUDA_SUCCESS) {
                CUevent old = atomic_exchange(&sl->event, fresh);
                N(cuEventDestroy(old));
                atomic_fetch_add(&destroys, 1);
            }
        } else if (action < 940) {  /* the module again */
            CUmodule fresh = NULL;
            CUfunction f = NULL;
            if (N(cuModuleLoadData(&fresh, cubin)) == CUDA_SUCCESS) {
                if (N(cuModuleGetFunction(&f, fresh, "k_noparams")) == CUDA_SUCCESS) atomic_store(&sl->function, f);
                CUmodule old = atomic_exchange(&sl->module, fresh);
                N(cuModuleUnload(old));
                atomic_fetch_add(&destroys, 1);
            }
        } else if (action < 944) {  /* the whole context, then the slot again */
            if (pthread_mutex_trylock(&sl->rebuild) == 0) {
                CUcontext old = atomic_load(&sl->ctx);
                N(cuCtxDestroy(old));
                build(sl);
                cuCtxPopCurrent(NULL);
                pthread_mutex_unlock(&sl->rebuild);
                atomic_fetch_add(&destroys, 1);
            }
        } else {
            sched_yield();
        }
        atomic_fetch_add(&progress, 1);
    }
    if (mine) cuEventDestroy(mine);
    return NULL;
}

int main(int argc, char **argv) {
    const double seconds = argc > 1 ? atof(argv[1]) : 60;
    const int nthreads = argc > 2 ? atoi(argv[2]) : 16;
    cubin = ts_read_file("tests/data/loader_kernels.sm_90.cubin", NULL);
    if (!cubin || nthreads < 1 || nthreads > 256) {
        fprintf(stderr, "hostile: tests/data/loader_kernels.sm_90.cubin cannot be read (run from the repository root)\n");
        return 2;
    }
    if (cuInit(0) != CUDA_SUCCESS) return 2;
    for (int i = 0; i < SLOTS; ++i) {
        pthread_mutex_init(&slots[i].rebuild, NULL);
        build(&slots[i]);
        cuCtxPopCurrent(NULL);
    }
    pthread_t *t = calloc((size_t)nthreads, sizeof *t);
    for (int i = 0; i < nthreads; ++i) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    const double t0 = ts_now();
    long last = -1;
    double lastChange = t0;
    int hung = 0;
    while (ts_now() - t0 < seconds) {
        sleep(1);
        long p = atomic_load(&progress);
        if (p != last) {
            last = p;
            lastChange = ts_now();
        } else if (ts_now() - lastChange > 60) {
            hung = 1;
            break;
        }
    }
    if (hung) {
        fprintf(stderr, "hostile: no progress for 60 s: deadlock (after %.0f s)\n", ts_now() - t0);
        _exit(3);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < nthreads; ++i) pthread_join(t[i], NULL);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("hostile: %d threads, %.0f s: %ld calls, %ld destroys, %ld unexpected answers, peak RSS %ld MiB\n", nthreads,
           ts_now() - t0, atomic_load(&calls), atomic_load(&destroys), atomic_load(&unexpected), ru.ru_maxrss / 1024);
    printf("hostile: %s\n", atomic_load(&unexpected) ? "FAIL" : "PASS");
    return atomic_load(&unexpected) ? 1 : 0;
}
