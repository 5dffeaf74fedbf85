/* What the benchmarks share beyond the samples' checks and clock. */
#ifndef NVLITE_BENCH_H
#define NVLITE_BENCH_H

#include "../samples/sample.h"

static inline int bench_compare_doubles(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n); sorts v. */
static inline double median(double* v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_compare_doubles);
    return v[n / 2];
}

#endif
