/*
 * Private tables of a made-up driver, shared by etrace's test (in-process)
 * and the stand-in libcuda.so.1 (fake_driver.c). Each function has a result
 * that depends on every argument, so a wrapper that loses or moves one is seen.
 */
#ifndef ETRACE_FAKE_TABLES_H
#define ETRACE_FAKE_TABLES_H

#include <stdarg.h>
#include <stdint.h>

struct fake_pair { long a, b; };          /* returned in rax:rdx */
struct fake_big { long v[4]; };           /* returned through a hidden pointer */

static inline int fake_out(int a, int* out) { *out = a * 3 + 1; return 7; }
static inline double fake_mix(double x, float y, int n) { return x * y + n; }
static inline long fake_many(long a, long b, long c, long d, long e, long f, long g, long h, double x) {
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + (long)(x * 16);
}
static inline struct fake_pair fake_pair(long x) { struct fake_pair r = {x * 5, -x}; return r; }
static inline struct fake_big fake_big(long x) { struct fake_big r = {{x, x + 1, x * x, -x}}; return r; }
static inline float fake_ratio(float a, float b) { return a / b; }
static inline double fake_var(int n, ...) {
    va_list ap;
    va_start(ap, n);
    double s = 0;
    for (int i = 0; i < n; ++i) s += va_arg(ap, double) * (i + 1);
    va_end(ap);
    return s;
}

typedef int (*fake_out_fn)(int, int*);
typedef double (*fake_mix_fn)(double, float, int);
typedef long (*fake_many_fn)(long, long, long, long, long, long, long, long, double);
typedef struct fake_pair (*fake_pair_fn)(long);
typedef struct fake_big (*fake_big_fn)(long);
typedef float (*fake_ratio_fn)(float, float);
typedef double (*fake_var_fn)(int, ...);

/* A table with its byte size in slot 0 (as most of libcuda's are). */
#define FAKE_SIZED_TABLE                                                                     \
    {(void*)(8 * sizeof(void*)), (void*)fake_out, (void*)fake_mix, (void*)fake_many,         \
     (void*)fake_pair, (void*)fake_big, (void*)fake_ratio, (void*)fake_var}
/* A plain list of functions, ended by a word that is not code. */
#define FAKE_PLAIN_TABLE {(void*)fake_out, (void*)fake_ratio, (void*)0}

#define FAKE_SIZED_UUID {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe}
#define FAKE_PLAIN_UUID {0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01}
/* Named like libcuda's INTEGRITY_CHECK table: slot 1 is left alone by default. */
#define FAKE_INTEGRITY_UUID {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2}

/* Calls every slot of a sized table and checks each result; returns the number of wrong ones. */
static inline int fake_exercise_sized(void* const* t) {
    int bad = 0, out = 0;
    bad += ((fake_out_fn)t[1])(41, &out) != 7 || out != 124;
    bad += ((fake_mix_fn)t[2])(1.25, 2.5f, -3) != 1.25 * 2.5 - 3;
    bad += ((fake_many_fn)t[3])(1, 2, 3, 4, 5, 6, 7, 8, 0.5) != 1 + 4 + 9 + 16 + 25 + 36 + 49 + 64 + 8;
    struct fake_pair p = ((fake_pair_fn)t[4])(11);
    bad += p.a != 55 || p.b != -11;
    struct fake_big g = ((fake_big_fn)t[5])(9);
    bad += g.v[0] != 9 || g.v[1] != 10 || g.v[2] != 81 || g.v[3] != -9;
    bad += ((fake_ratio_fn)t[6])(7.5f, 2.5f) != 3.0f;
    bad += ((fake_var_fn)t[7])(3, 1.5, 2.0, -0.25) != 1.5 + 4.0 - 0.75;
    return bad;
}

#endif
