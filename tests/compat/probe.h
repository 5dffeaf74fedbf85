/*
 * What the compatibility probes share: CUresult names, and cases guarded
 * against crashes inside the library under test (libcuda crashes on some
 * bad arguments): P(label, call) prints the call's result, PV also values;
 * a crash prints CRASH and the probe goes on with the next case.
 * Include after <setjmp.h>, <signal.h>, <stdio.h>, <unistd.h> and cuda.h,
 * with _GNU_SOURCE defined.
 */
#ifndef NVLITE_TESTS_COMPAT_PROBE_H
#define NVLITE_TESTS_COMPAT_PROBE_H

#ifndef PROBE_WIDTH
#define PROBE_WIDTH 48 /* label column */
#endif

static const char* rname(CUresult r) {
    const char* s = NULL;
    if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) {
        static char buf[32];
        snprintf(buf, sizeof buf, "CUresult(%d)", (int)r);
        return buf;
    }
    return s;
}

/* A case that crashes prints CRASH instead of ending the run. */
static sigjmp_buf crash_jump;
static volatile sig_atomic_t in_case;
static void on_crash(int sig) {
    if (!in_case) {
        static const char msg[] = "UNGUARDED CRASH: stopping\n";
        (void)!write(1, msg, sizeof msg - 1);
        _exit(3);
    }
    in_case = 0;
    siglongjmp(crash_jump, sig);
}

#define P(label, call)                                           \
    do {                                                         \
        if (sigsetjmp(crash_jump, 1) == 0) {                     \
            in_case = 1;                                         \
            CUresult r0_ = (call);                               \
            in_case = 0;                                         \
            printf("%-*s => %s\n", PROBE_WIDTH, label, rname(r0_));          \
        } else {                                                 \
            printf("%-*s => CRASH\n", PROBE_WIDTH, label);                   \
        }                                                        \
        fflush(stdout);                                          \
    } while (0)
#define PV(label, call, fmt, ...)                                          \
    do {                                                                   \
        if (sigsetjmp(crash_jump, 1) == 0) {                               \
            in_case = 1;                                                   \
            CUresult r_ = (call);                                          \
            in_case = 0;                                                   \
            printf("%-*s => %s " fmt "\n", PROBE_WIDTH, label, rname(r_), __VA_ARGS__); \
        } else {                                                           \
            printf("%-*s => CRASH\n", PROBE_WIDTH, label);                             \
        }                                                                  \
        fflush(stdout);                                                    \
    } while (0)

#endif
