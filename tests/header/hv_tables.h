/* Tables describing one cuda.h as the compiler sees it, in one
 * configuration; filled by values_ours.c / values_nvidia.c from the lists
 * derive.py writes (build/tests/header/<config>/{values,funcs,types,layout}.def)
 * and compared by check_header.c. */
#ifndef NVLITE_TESTS_HEADER_HV_TABLES_H
#define NVLITE_TESTS_HEADER_HV_TABLES_H

#include <stddef.h>

/* One X(NAME) entry: an enumerator or a value macro. */
struct hv_value {
    const char *name;       /* as written in values.def */
    const char *expansion;  /* NAME after macro expansion ("NAME" if not a macro) */
    const char *type;       /* C type class of the expression, e.g. "int", "CUstream" */
    long long value;        /* (long long)(intptr_t)(NAME) */
};

/* One F(NAME) entry: a macro mapping a name to the symbol called. */
struct hv_func {
    const char *name;
    const char *symbol;     /* what NAME expands to */
};

/* One T(type) or M(type, member) entry. */
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
void hv_tables_nvidia(struct hv_tables *t);

#endif
