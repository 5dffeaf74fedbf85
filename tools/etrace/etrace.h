/*
 * etrace: logs what a program asks of the CUDA driver's private tables
 * (cuGetExportTable) and every call it makes into them.
 *
 * A table returned by the driver is wrapped in place: each slot that points
 * to code gets a small stub that enters etrace_enter (enter.S), which saves
 * the argument registers (integer and xmm), logs the call, calls the original
 * function with the registers and the first ETRACE_STACK_WORDS words of
 * stack arguments exactly as they were, logs the result and returns it
 * (rax, rdx, xmm0, xmm1 preserved). Wrapping in place keeps the table
 * addresses the program sees equal to the driver's own.
 *
 * x86-64 System V only.
 */
#ifndef ETRACE_H
#define ETRACE_H

#include <stddef.h>
#include <stdint.h>

#define ETRACE_DUMP_MAX 32     /* bytes shown behind a pointer argument */
#define ETRACE_STACK_WORDS 16  /* stack argument words passed on to the original */
#define ETRACE_MAX_SLOTS 128   /* bound for tables without a size header */

/* Layout shared with enter.S: offsets are checked in etrace.c. */
struct etrace_frame {
    uint64_t gp[6];            /*   0: rdi rsi rdx rcx r8 r9 */
    uint64_t rax;              /*  48: al = vector registers used by a variadic call */
    uint64_t slot;             /*  56: struct etrace_slot* (r11 from the stub) */
    uint8_t xmm[8][16];        /*  64: xmm0-7 */
    uint64_t ret_rax;          /* 192 */
    uint64_t ret_rdx;          /* 200 */
    uint8_t ret_xmm0[16];      /* 208 */
    uint8_t ret_xmm1[16];      /* 224 */
    uint64_t caller;           /* 240: return address into the caller */
    uint64_t seq;              /* 248: call number, for matching entry and exit lines */
    uint64_t t0_ns;            /* 256 */
    uint32_t dump_ok;          /* 264: bit i: dump[i] holds the bytes behind argument i */
    uint32_t depth;            /* 268 */
    uint8_t dump[6][ETRACE_DUMP_MAX]; /* 272 */
};                             /* 464 */

#define ETRACE_FRAME_SIZE 464

struct etrace_fn_info;         /* a known slot: its name and argument names */

struct etrace_table {
    uint8_t uuid[16];
    const char* name;          /* known name, or "unknown" */
    void** base;               /* the table as the driver returned it */
    unsigned slots;            /* entries, slot 0 included */
    int sized;                 /* slot 0 holds the table's byte size */
    struct etrace_table* next;
};

struct etrace_slot {
    struct etrace_table* table;
    unsigned index;
    void* original;
    const struct etrace_fn_info* info;
};

/* enter.S */
void etrace_enter(void);

/* Called from enter.S. */
void* etrace_before(struct etrace_frame* f, const uint64_t* stack_args);
void etrace_after(struct etrace_frame* f);

/* etrace.c */

/* Wrap the table the driver returned for uuid (idempotent). Returns the
 * table's record, NULL if it could not be wrapped. */
struct etrace_table* etrace_wrap_table(const uint8_t uuid[16], void** table);

/* Log one formatted line (a newline is added). */
void etrace_log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/* "lib.so+0x1234" for a code address, else the hex value. */
void etrace_describe_addr(uint64_t addr, char* buf, size_t size);

/* The known name of a table, "unknown" otherwise. */
const char* etrace_table_name(const uint8_t uuid[16]);

/* "6bd5fb6c-5bf4-e74a-8987-d93912fd9df9" */
void etrace_format_uuid(const uint8_t uuid[16], char out[37]);

/* Settings from the environment (ETRACE_LOG, ETRACE_DUMP, ETRACE_NOWRAP,
 * ETRACE_XMM, ETRACE_MAX_LINES); called once before the first log line. */
void etrace_init(void);

#endif
