/* Tables describing one cuda.h as seen by the compiler; filled by
 * values_ours.c / values_nvidia.c (each built with and without
 * CUDA_API_PER_THREAD_DEFAULT_STREAM) and compared by check_header.c. */
#ifndef NVLITE_TESTS_HEADER_HV_TABLES_H
#define NVLITE_TESTS_HEADER_HV_TABLES_H

#include <stddef.h>

/* One X(NAME) entry of values.def. */
struct hv_value {
    const char *name;       /* as written in values.def */
    const char *expansion;  /* NAME after macro expansion ("NAME" if not a macro) */
    const char *type;       /* C type class of the expression, e.g. "int", "CUstream" */
    long long value;        /* (long long)(intptr_t)(NAME) */
};

/* One F(NAME) entry of functions.def. */
struct hv_func {
    const char *name;       /* as written in source */
    const char *symbol;     /* what the name expands to, i.e. the symbol called */
};

/* One T(type) entry of types.def or M(type, member) entry of layout.def. */
struct hv_layout {
    const char *name;       /* "type" or "type.member" */
    size_t size;
    size_t align_or_offset; /* alignof(type) for T, offsetof(type, member) for M */
};

struct hv_tables {
    const char *variant;
    const struct hv_value *values;
    size_t nvalues;
    const struct hv_func *funcs;
    size_t nfuncs;
    const struct hv_layout *layouts;
    size_t nlayouts;
};

void hv_tables_ours(struct hv_tables *t);
void hv_tables_ours_ptds(struct hv_tables *t);
void hv_tables_nvidia(struct hv_tables *t);
void hv_tables_nvidia_ptds(struct hv_tables *t);

#endif
