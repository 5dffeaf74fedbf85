/* Compares include/nvlite/cuda.h with NVIDIA's cuda.h through the tables
 * built by values_ours.c and values_nvidia.c (see hv_tables.h):
 *   - every enumerator / constant macro of values.def: value, type class,
 *     and whether it is a macro or an enumerator;
 *   - every function name of functions.def: the symbol it expands to;
 *   - every typedef of types.def: sizeof / alignof;
 *   - every member of layout.def: offsetof / sizeof;
 * once in the default configuration and once with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM.  Every mismatch is printed by name
 * before the test fails. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "hv_tables.h"

struct hv_pair {
    struct hv_tables ours;
    struct hv_tables nv;
};

static int is_macro(const struct hv_value *v)
{
    return strcmp(v->name, v->expansion) != 0;
}

static int setup_default(void **state)
{
    static struct hv_pair p;
    hv_tables_ours(&p.ours);
    hv_tables_nvidia(&p.nv);
    *state = &p;
    return 0;
}

static int setup_ptds(void **state)
{
    static struct hv_pair p;
    hv_tables_ours_ptds(&p.ours);
    hv_tables_nvidia_ptds(&p.nv);
    *state = &p;
    return 0;
}

static void test_values(void **state)
{
    const struct hv_pair *p = *state;
    size_t i, bad = 0;

    assert_int_equal(p->ours.nvalues, p->nv.nvalues);
    for (i = 0; i < p->ours.nvalues; i++) {
        const struct hv_value *a = &p->ours.values[i], *b = &p->nv.values[i];
        assert_string_equal(a->name, b->name);
        if (a->value != b->value) {
            print_error("[%s] %s: value nvlite=%lld nvidia=%lld\n",
                        p->ours.variant, a->name, a->value, b->value);
            bad++;
        }
        if (strcmp(a->type, b->type) != 0) {
            print_error("[%s] %s: type nvlite=%s nvidia=%s\n",
                        p->ours.variant, a->name, a->type, b->type);
            bad++;
        }
        if (is_macro(a) != is_macro(b)) {
            print_error("[%s] %s: nvlite has it as %s, nvidia as %s\n", p->ours.variant, a->name,
                        is_macro(a) ? "a macro" : "an enumerator",
                        is_macro(b) ? "a macro" : "an enumerator");
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

static void test_functions(void **state)
{
    const struct hv_pair *p = *state;
    size_t i, bad = 0;

    assert_int_equal(p->ours.nfuncs, p->nv.nfuncs);
    for (i = 0; i < p->ours.nfuncs; i++) {
        const struct hv_func *a = &p->ours.funcs[i], *b = &p->nv.funcs[i];
        assert_string_equal(a->name, b->name);
        if (strcmp(a->symbol, b->symbol) != 0) {
            print_error("[%s] %s: maps to %s in nvlite, %s in nvidia\n",
                        p->ours.variant, a->name, a->symbol, b->symbol);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

static void test_layout(void **state)
{
    const struct hv_pair *p = *state;
    size_t i, bad = 0;

    assert_int_equal(p->ours.nlayouts, p->nv.nlayouts);
    for (i = 0; i < p->ours.nlayouts; i++) {
        const struct hv_layout *a = &p->ours.layouts[i], *b = &p->nv.layouts[i];
        int member = strchr(a->name, '.') != NULL;
        assert_string_equal(a->name, b->name);
        if (a->size != b->size) {
            print_error("[%s] sizeof(%s): nvlite=%zu nvidia=%zu\n",
                        p->ours.variant, a->name, a->size, b->size);
            bad++;
        }
        if (a->align_or_offset != b->align_or_offset) {
            print_error("[%s] %s(%s): nvlite=%zu nvidia=%zu\n", p->ours.variant,
                        member ? "offsetof" : "alignof", a->name,
                        a->align_or_offset, b->align_or_offset);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

/* Guards against a build that forgot -DCUDA_API_PER_THREAD_DEFAULT_STREAM
 * for the _ptds objects (the comparison above would then prove nothing). */
static const char *symbol_of(const struct hv_tables *t, const char *name)
{
    size_t i;
    for (i = 0; i < t->nfuncs; i++)
        if (strcmp(t->funcs[i].name, name) == 0)
            return t->funcs[i].symbol;
    return "(not in functions.def)";
}

static void test_variants_are_distinct(void **state)
{
    struct hv_tables t;
    (void)state;

    hv_tables_nvidia(&t);
    assert_string_equal(symbol_of(&t, "cuMemcpyHtoD"), "cuMemcpyHtoD_v2");
    assert_string_equal(symbol_of(&t, "cuStreamQuery"), "cuStreamQuery");
    hv_tables_nvidia_ptds(&t);
    assert_string_equal(symbol_of(&t, "cuMemcpyHtoD"), "cuMemcpyHtoD_v2_ptds");
    assert_string_equal(symbol_of(&t, "cuStreamQuery"), "cuStreamQuery_ptsz");
    hv_tables_ours(&t);
    assert_string_equal(symbol_of(&t, "cuMemAlloc"), "cuMemAlloc_v2");
    hv_tables_ours_ptds(&t);
    assert_string_equal(symbol_of(&t, "cuLaunchKernel"), "cuLaunchKernel_ptsz");
}

int main(void)
{
/* cmocka_unit_test_setup() names a test after its function; these run the
 * same function in two configurations, so name them explicitly. */
#define HV_TEST(label, fn, setup) { label, fn, setup, NULL, NULL }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variants_are_distinct),
        HV_TEST("values (default)", test_values, setup_default),
        HV_TEST("function mapping (default)", test_functions, setup_default),
        HV_TEST("layout (default)", test_layout, setup_default),
        HV_TEST("values (per-thread default stream)", test_values, setup_ptds),
        HV_TEST("function mapping (per-thread default stream)", test_functions, setup_ptds),
        HV_TEST("layout (per-thread default stream)", test_layout, setup_ptds),
    };
    return cmocka_run_group_tests_name("nvlite cuda.h vs NVIDIA cuda.h", tests, NULL, NULL);
}
