/* Compares include/nvlite/cuda.h with NVIDIA's cuda.h through the tables
 * that values_ours.c and values_nvidia.c build from derive.py's lists, in
 * one configuration (HV_CONFIG: default, ptds or internal):
 *   - every enumerator and value macro: value, type class, and whether it
 *     is a macro or an enumerator;
 *   - every mapping macro: the symbol it expands to;
 *   - every typedef and struct/union: sizeof and alignof;
 *   - every member: offsetof and sizeof.
 * Every mismatch is printed by name before the test fails. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "hv_tables.h"

#ifndef HV_CONFIG
#error "build with -DHV_CONFIG=\"<configuration>\""
#endif

struct hv_pair {
    struct hv_tables ours;
    struct hv_tables nv;
};

static int is_macro(const struct hv_value *v)
{
    return strcmp(v->name, v->expansion) != 0;
}

static int setup(void **state)
{
    static struct hv_pair p;
    hv_tables_ours(&p.ours);
    hv_tables_nvidia(&p.nv);
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
            print_error("[%s] %s: value nvlite=%lld nvidia=%lld\n", HV_CONFIG, a->name, a->value, b->value);
            bad++;
        }
        if (strcmp(a->type, b->type) != 0) {
            print_error("[%s] %s: type nvlite=%s nvidia=%s\n", HV_CONFIG, a->name, a->type, b->type);
            bad++;
        }
        if (strcmp(b->type, "other") == 0) {
            print_error("[%s] %s: type not known to HV_TYPE (hv_tables.inc)\n", HV_CONFIG, a->name);
            bad++;
        }
        if (is_macro(a) != is_macro(b)) {
            print_error("[%s] %s: nvlite has it as %s, nvidia as %s\n", HV_CONFIG, a->name,
                        is_macro(a) ? "a macro" : "an enumerator", is_macro(b) ? "a macro" : "an enumerator");
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

static void test_mappings(void **state)
{
    const struct hv_pair *p = *state;
    size_t i, bad = 0;

    assert_int_equal(p->ours.nfuncs, p->nv.nfuncs);
    for (i = 0; i < p->ours.nfuncs; i++) {
        const struct hv_func *a = &p->ours.funcs[i], *b = &p->nv.funcs[i];
        assert_string_equal(a->name, b->name);
        if (strcmp(a->symbol, b->symbol) != 0) {
            print_error("[%s] %s: maps to %s in nvlite, %s in nvidia\n", HV_CONFIG, a->name, a->symbol, b->symbol);
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
            print_error("[%s] sizeof(%s): nvlite=%zu nvidia=%zu\n", HV_CONFIG, a->name, a->size, b->size);
            bad++;
        }
        if (a->align_or_offset != b->align_or_offset) {
            print_error("[%s] %s(%s): nvlite=%zu nvidia=%zu\n", HV_CONFIG, member ? "offsetof" : "alignof",
                        a->name, a->align_or_offset, b->align_or_offset);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

/* The lists are NVIDIA's whole header, not a sample; and the configuration
 * is the one named (a build that forgot its -D would prove nothing). */
static const char *symbol_of(const struct hv_tables *t, const char *name)
{
    size_t i;
    for (i = 0; i < t->nfuncs; i++)
        if (strcmp(t->funcs[i].name, name) == 0)
            return t->funcs[i].symbol;
    return "(not a mapping macro here)";
}

static void test_tables_cover_the_header(void **state)
{
    const struct hv_pair *p = *state;

    assert_true(p->nv.nvalues > 900);
    assert_true(p->nv.nlayouts > 800);
    if (strcmp(HV_CONFIG, "default") == 0) {
        assert_string_equal(symbol_of(&p->nv, "cuMemcpyHtoD"), "cuMemcpyHtoD_v2");
        assert_string_equal(symbol_of(&p->nv, "cuStreamQuery"), "(not a mapping macro here)");
    } else if (strcmp(HV_CONFIG, "ptds") == 0) {
        assert_string_equal(symbol_of(&p->nv, "cuMemcpyHtoD"), "cuMemcpyHtoD_v2_ptds");
        assert_string_equal(symbol_of(&p->nv, "cuStreamQuery"), "cuStreamQuery_ptsz");
    } else {
        /* the library's view: the mapping macros are undone */
        assert_int_equal(p->nv.nfuncs, 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_tables_cover_the_header, setup),
        cmocka_unit_test_setup(test_values, setup),
        cmocka_unit_test_setup(test_mappings, setup),
        cmocka_unit_test_setup(test_layout, setup),
    };
    return cmocka_run_group_tests_name("nvlite cuda.h vs NVIDIA cuda.h (" HV_CONFIG ")", tests, NULL, NULL);
}
