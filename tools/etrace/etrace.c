/*
 * etrace core: the tables we know by name, wrapping a table in place, the
 * entry/exit hooks of enter.S and the log.
 *
 * Table names and slot signatures are facts published by ZLUDA
 * (github.com/vosen/ZLUDA, dark_api/src/lib.rs); a table whose first word is
 * small holds its own byte size there (slot 0), the others are a plain list
 * of function pointers.
 */
#define _GNU_SOURCE
#include "etrace.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(struct etrace_frame) == ETRACE_FRAME_SIZE, "enter.S frame size");
_Static_assert(offsetof(struct etrace_frame, rax) == 48, "enter.S offsets");
_Static_assert(offsetof(struct etrace_frame, slot) == 56, "enter.S offsets");
_Static_assert(offsetof(struct etrace_frame, xmm) == 64, "enter.S offsets");
_Static_assert(offsetof(struct etrace_frame, ret_rax) == 192, "enter.S offsets");
_Static_assert(offsetof(struct etrace_frame, ret_rdx) == 200, "enter.S offsets");
_Static_assert(offsetof(struct etrace_frame, ret_xmm0) == 208, "enter.S offsets");
_Static_assert(offsetof(struct etrace_frame, ret_xmm1) == 224, "enter.S offsets");
_Static_assert(offsetof(struct etrace_frame, caller) == 240, "enter.S offsets");

/* ---- what is known of the tables ------------------------------------------------ */

struct etrace_fn_info {
    unsigned index;
    const char* name;
    const char* args;  /* comma-separated; a trailing '*' marks a pointer to dump */
};

struct known_table {
    const char* uuid;  /* as printed by etrace_format_uuid */
    const char* name;
    unsigned slots;    /* entries, slot 0 included */
    const struct etrace_fn_info* fns;
};

static const struct etrace_fn_info kCudartInterface[] = {
    {1, "get_module_from_cubin", "module*,fatbinc_wrapper*"},
    {2, "cudart_interface_fn2", "pctx*,dev"},
    {6, "get_module_from_cubin_ext1", "module*,fatbinc_wrapper*,arg3*,arg4*,arg5"},
    {7, "cudart_interface_fn7", "arg1"},
    {8, "get_module_from_cubin_ext2", "fatbin_header*,module*,arg3*,arg4*,arg5"},
    {12, "load_compilers", ""},
    {0, NULL, NULL},
};
static const struct etrace_fn_info kToolsHooks[] = {
    {2, "get_unknown_buffer1", "ptr*,size*"},
    {6, "get_unknown_buffer2", "ptr*,size*"},
    {0, NULL, NULL},
};
static const struct etrace_fn_info kContextLocalStorage[] = {
    {0, "context_local_storage_put", "ctx,key,value,dtor_cb"},
    {1, "context_local_storage_delete", "ctx,key"},
    {2, "context_local_storage_get", "value*,ctx,key"},
    {0, NULL, NULL},
};
static const struct etrace_fn_info kCtxCreateBypass[] = {
    {1, "ctx_create_v2_bypass", "pctx*,flags,dev"},
    {0, NULL, NULL},
};
static const struct etrace_fn_info kHeapAccess[] = {
    {1, "heap_alloc", "record*,arg2,arg3"},
    {2, "heap_free", "record*,arg2*"},
    {0, NULL, NULL},
};
static const struct etrace_fn_info kDeviceExtendedRt[] = {
    {5, "device_get_attribute_ext", "dev,attribute,unknown,result*"},
    {13, "device_get_something", "result*,dev"},
    {0, NULL, NULL},
};
static const struct etrace_fn_info kIntegrityCheck[] = {
    {1, "integrity_check", "version,unix_seconds,result*"},
    {0, NULL, NULL},
};
static const struct etrace_fn_info kContextChecks[] = {
    {2, "context_check", "ctx,result1*,result2*"},
    {3, "check_fn3", ""},
    {0, NULL, NULL},
};

static const struct known_table kKnown[] = {
    {"6bd5fb6c-5bf4-e74a-8987-d93912fd9df9", "CUDART_INTERFACE", 13, kCudartInterface},
    {"42d85a81-23f6-cb47-8298-f6e78a3aecdc", "TOOLS_TLS", 4, NULL},
    {"a094798c-2e74-2e74-93f2-0800200c0a66", "TOOLS_RUNTIME_CALLBACK_HOOKS", 7, kToolsHooks},
    {"c693336e-1121-df11-a8c3-68f355d89593", "CONTEXT_LOCAL_STORAGE_INTERFACE_V0301", 4, kContextLocalStorage},
    {"0ca50b8c-1004-929a-89a7-d0df10e77286", "CTX_CREATE_BYPASS", 2, kCtxCreateBypass},
    {"195bcbf4-d67d-024a-acc5-1d29cea631ae", "HEAP_ACCESS", 3, kHeapAccess},
    {"b10541e1-f7c7-c74a-9f64-f223be99f1e2", "DEVICE_EXTENDED_RT", 26, kDeviceExtendedRt},
    {"d4082055-bde6-704b-8d34-ba123c66e1f2", "INTEGRITY_CHECK", 3, kIntegrityCheck},
    {"263e8860-7cd2-6143-92f6-bbd5006dfa7e", "CONTEXT_CHECKS", 4, kContextChecks},
    {"dd9e98a4-f410-4844-99b0-e2aeb7b432b5", "HYBRID_CUDART", 3, NULL},
    {"da9151d3-3ae6-cc41-a5c0-4f26d533e328", "NVRTC_TABLE", 0, NULL},
    {"f8cff951-2146-8b4e-b9e2-fb469e7c0dd9", "F8CFF951", 0, NULL},
};

void etrace_format_uuid(const uint8_t u[16], char out[37]) {
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

static const struct known_table* find_known(const uint8_t uuid[16]) {
    char s[37];
    etrace_format_uuid(uuid, s);
    for (size_t i = 0; i < sizeof kKnown / sizeof kKnown[0]; ++i)
        if (strcmp(kKnown[i].uuid, s) == 0) return &kKnown[i];
    return NULL;
}

const char* etrace_table_name(const uint8_t uuid[16]) {
    const struct known_table* k = find_known(uuid);
    return k ? k->name : "unknown";
}

/* ---- settings and the log ----------------------------------------------------- */

static int g_fd = 2;
static unsigned g_dump = 16;       /* bytes dumped behind pointer arguments */
static int g_xmm = -1;             /* -1: only for slots of unknown signature */
static long g_max_lines = 200000;
static atomic_long g_lines;
static atomic_ulong g_seq;
static char g_nowrap[512] = "d4082055:1";
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct etrace_table* g_tables;
static __thread unsigned t_depth;

static void init_once(void) {
    const char* s = getenv("ETRACE_LOG");
    if (s && *s) {
        int fd = open(s, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) g_fd = fd;
    }
    if ((s = getenv("ETRACE_DUMP")) && *s) {
        long v = strtol(s, NULL, 0);
        g_dump = v < 0 ? 0 : v > ETRACE_DUMP_MAX ? ETRACE_DUMP_MAX : (unsigned)v;
    }
    if ((s = getenv("ETRACE_XMM")) && *s) g_xmm = atoi(s) != 0;
    if ((s = getenv("ETRACE_MAX_LINES")) && *s) g_max_lines = strtol(s, NULL, 0);
    if ((s = getenv("ETRACE_NOWRAP"))) snprintf(g_nowrap, sizeof g_nowrap, "%s", s);
}

void etrace_init(void) { pthread_once(&g_once, init_once); }

static pid_t tid(void) { return (pid_t)syscall(SYS_gettid); }

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void vlog(const char* fmt, va_list ap) {
    char line[2048];
    int n = snprintf(line, sizeof line, "etrace[%d:%d] ", (int)getpid(), (int)tid());
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (m < 0) return;
    size_t len = (size_t)n + ((size_t)m < sizeof line - (size_t)n - 1 ? (size_t)m : sizeof line - (size_t)n - 2);
    line[len++] = '\n';
    /* one write per line: lines of several threads and processes do not mix */
    ssize_t w = write(g_fd, line, len);
    (void)w;
}

void etrace_log(const char* fmt, ...) {
    etrace_init();
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

/* Call lines stop after ETRACE_MAX_LINES (table requests are always logged). */
static int call_line_allowed(void) { return atomic_fetch_add(&g_lines, 1) < g_max_lines; }

/* ---- memory ------------------------------------------------------------------- */

/* Copy len bytes from p if they are readable (no fault: the kernel checks). */
static int safe_read(const void* p, void* out, size_t len) {
    struct iovec local = {out, len}, remote = {(void*)p, len};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static int looks_like_pointer(uint64_t v) { return v >= 0x10000 && v < 0x800000000000ull; }

/* Protection of the mapping holding addr (-1 if none), and whether it is code. */
static int mapping_prot(uint64_t addr, int* is_code) {
    FILE* f = fopen("/proc/self/maps", "re");
    if (!f) return -1;
    char line[512];
    int prot = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3) continue;
        if (addr < lo || addr >= hi) continue;
        prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
               (perms[2] == 'x' ? PROT_EXEC : 0);
        if (is_code) *is_code = perms[2] == 'x';
        break;
    }
    fclose(f);
    return prot;
}

static int is_code(uint64_t addr) {
    int code = 0;
    return looks_like_pointer(addr) && mapping_prot(addr, &code) >= 0 && code;
}

void etrace_describe_addr(uint64_t addr, char* buf, size_t size) {
    Dl_info info;
    if (addr && dladdr((void*)addr, &info) && info.dli_fname) {
        const char* base = strrchr(info.dli_fname, '/');
        base = base ? base + 1 : info.dli_fname;
        if (!*base) base = "exe";
        snprintf(buf, size, "%s+0x%" PRIx64, base, addr - (uint64_t)info.dli_fbase);
    } else {
        snprintf(buf, size, "0x%" PRIx64, addr);
    }
}

static void hex(const uint8_t* p, size_t n, char* out, size_t size) {
    size_t o = 0;
    for (size_t i = 0; i < n && o + 3 < size; ++i) {
        if (i && i % 4 == 0) out[o++] = ' ';
        o += (size_t)snprintf(out + o, size - o, "%02x", p[i]);
    }
    out[o] = 0;
}

/* ---- wrapping ----------------------------------------------------------------- */

static int nowrap(const uint8_t uuid[16], unsigned index) {
    if (strcmp(g_nowrap, "all") == 0) return 1;
    char u[37], key[24];
    etrace_format_uuid(uuid, u);
    snprintf(key, sizeof key, "%.8s:%u", u, index);
    char star[16];
    snprintf(star, sizeof star, "%.8s:*", u);
    for (const char* p = g_nowrap; *p;) {
        size_t n = strcspn(p, ",");
        if ((n == strlen(key) && strncmp(p, key, n) == 0) || (n == strlen(star) && strncmp(p, star, n) == 0))
            return 1;
        p += n;
        if (*p == ',') ++p;
    }
    return 0;
}

static const struct etrace_fn_info* fn_info(const struct known_table* k, unsigned index) {
    if (!k || !k->fns) return NULL;
    for (const struct etrace_fn_info* f = k->fns; f->name; ++f)
        if (f->index == index) return f;
    return NULL;
}

/* Stub: mov r11, imm64 ; jmp [rip+0] ; .quad etrace_enter */
enum { kStubSize = 32 };

static uint8_t* make_stubs(struct etrace_slot* const* slots, unsigned n) {
    size_t len = ((size_t)n * kStubSize + 4095) & ~(size_t)4095;
    uint8_t* page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return NULL;
    for (unsigned i = 0; i < n; ++i) {
        uint8_t* s = page + (size_t)i * kStubSize;
        uint64_t slot = (uint64_t)(uintptr_t)slots[i];
        uint64_t target = (uint64_t)(uintptr_t)&etrace_enter;
        s[0] = 0x49; s[1] = 0xbb;                    /* mov r11, imm64 */
        memcpy(s + 2, &slot, 8);
        s[10] = 0xff; s[11] = 0x25;                  /* jmp qword [rip+0] */
        memset(s + 12, 0, 4);
        memcpy(s + 16, &target, 8);
        memset(s + 24, 0xcc, 8);                     /* int3 padding */
    }
    if (mprotect(page, len, PROT_READ | PROT_EXEC) != 0) {
        munmap(page, len);
        return NULL;
    }
    return page;
}

static int write_slot(void** where, void* value) {
    uintptr_t a = (uintptr_t)where;
    uintptr_t page = a & ~(uintptr_t)4095;
    size_t len = ((a + sizeof(void*) + 4095) & ~(uintptr_t)4095) - page;
    int prot = mapping_prot(a, NULL);
    if (prot < 0) return -1;
    if (!(prot & PROT_WRITE) && mprotect((void*)page, len, prot | PROT_WRITE) != 0) return -1;
    *where = value;
    if (!(prot & PROT_WRITE)) mprotect((void*)page, len, prot);
    return 0;
}

struct etrace_table* etrace_wrap_table(const uint8_t uuid[16], void** table) {
    etrace_init();
    if (!table) return NULL;
    pthread_mutex_lock(&g_lock);
    for (struct etrace_table* t = g_tables; t; t = t->next) {
        if (t->base == table) {
            pthread_mutex_unlock(&g_lock);
            return t;
        }
    }
    const struct known_table* k = find_known(uuid);
    struct etrace_table* t = calloc(1, sizeof *t);
    if (!t) {
        pthread_mutex_unlock(&g_lock);
        return NULL;
    }
    memcpy(t->uuid, uuid, 16);
    char u[37];
    etrace_format_uuid(uuid, u);
    if (k) {
        t->name = k->name;
    } else {
        /* unknown tables are told apart by their UUID's first 8 digits */
        char* name = malloc(20);
        if (name) snprintf(name, 20, "unknown_%.8s", u);
        t->name = name ? name : "unknown";
    }
    t->base = table;

    uint64_t first = 0;
    if (!safe_read(table, &first, sizeof first)) {
        pthread_mutex_unlock(&g_lock);
        free(t);
        return NULL;
    }
    unsigned start;
    if (first > 0 && first <= 0x10000 && first % sizeof(void*) == 0) {
        /* slot 0: the table's size in bytes */
        t->sized = 1;
        t->slots = (unsigned)(first / sizeof(void*));
        if (t->slots > ETRACE_MAX_SLOTS) t->slots = ETRACE_MAX_SLOTS;
        start = 1;
    } else {
        /* a plain list: as many entries as are known, else up to the first non-code word */
        unsigned n = 0;
        unsigned bound = k && k->slots ? k->slots : ETRACE_MAX_SLOTS;
        while (n < bound) {
            uint64_t v;
            if (!safe_read(table + n, &v, sizeof v) || !is_code(v)) break;
            ++n;
        }
        t->slots = n;
        start = 0;
    }

    char words[1600];
    size_t o = 0;
    for (unsigned i = 0; i < t->slots && o + 80 < sizeof words; ++i) {
        uint64_t v = 0;
        safe_read(table + i, &v, sizeof v);
        char d[96];
        if (i == 0 && t->sized) snprintf(d, sizeof d, "size=%" PRIu64, v);
        else etrace_describe_addr(v, d, sizeof d);
        o += (size_t)snprintf(words + o, sizeof words - o, " [%u]=%s", i, d);
    }
    if (k && k->slots && k->slots != t->slots)
        etrace_log("table %s %s: %u entries, %u expected", u, t->name, t->slots, k->slots);
    etrace_log("table %s %s at %p: %u entries%s:%s", u, t->name, (void*)table, t->slots,
               t->sized ? " (size in slot 0)" : "", words);

    struct etrace_slot* slots[ETRACE_MAX_SLOTS];
    unsigned idx[ETRACE_MAX_SLOTS];
    unsigned n = 0;
    char skipped[256] = "";
    for (unsigned i = start; i < t->slots; ++i) {
        void* fn = table[i];
        if (!is_code((uint64_t)(uintptr_t)fn)) continue;   /* data, not code */
        if (nowrap(uuid, i)) {
            size_t l = strlen(skipped);
            snprintf(skipped + l, sizeof skipped - l, " %u", i);
            continue;
        }
        struct etrace_slot* s = calloc(1, sizeof *s);
        if (!s) break;
        s->table = t;
        s->index = i;
        s->original = fn;
        s->info = fn_info(k, i);
        slots[n] = s;
        idx[n++] = i;
    }
    uint8_t* stubs = n ? make_stubs(slots, n) : NULL;
    unsigned wrapped = 0;
    for (unsigned j = 0; stubs && j < n; ++j)
        if (write_slot(&table[idx[j]], stubs + (size_t)j * kStubSize) == 0) ++wrapped;
    etrace_log("table %s %s: %u of %u code slots wrapped%s%s", u, t->name, wrapped, n,
               skipped[0] ? ", left alone (ETRACE_NOWRAP):" : "", skipped);
    t->next = g_tables;
    g_tables = t;
    pthread_mutex_unlock(&g_lock);
    return t;
}

/* ---- the hooks ---------------------------------------------------------------- */

/* Argument names of a known slot: returns how many, fills names/pointer flags. */
static unsigned parse_args(const struct etrace_fn_info* info, char names[6][32], int ptr[6]) {
    unsigned n = 0;
    const char* p = info->args;
    while (*p && n < 6) {
        size_t len = strcspn(p, ",");
        size_t copy = len < 31 ? len : 31;
        memcpy(names[n], p, copy);
        names[n][copy] = 0;
        ptr[n] = copy && names[n][copy - 1] == '*';
        if (ptr[n]) names[n][copy - 1] = 0;
        ++n;
        p += len;
        if (*p == ',') ++p;
    }
    return n;
}

static void slot_label(const struct etrace_slot* s, char* buf, size_t size) {
    snprintf(buf, size, "%s[%u]%s%s", s->table->name, s->index, s->info ? " " : "",
             s->info ? s->info->name : "");
}

void* etrace_before(struct etrace_frame* f, const uint64_t* stack_args) {
    const struct etrace_slot* s = (const struct etrace_slot*)(uintptr_t)f->slot;
    f->seq = atomic_fetch_add(&g_seq, 1) + 1;
    f->depth = t_depth++;
    f->dump_ok = 0;
    f->t0_ns = now_ns();
    if (!call_line_allowed()) {
        f->seq = 0;  /* no exit line either */
        return s->original;
    }

    char names[6][32];
    int ptr[6] = {0};
    unsigned nargs = 6;
    if (s->info) nargs = parse_args(s->info, names, ptr);
    else for (unsigned i = 0; i < 6; ++i) { snprintf(names[i], sizeof names[i], "a%u", i); ptr[i] = 1; }

    char label[128], caller[128], args[512] = "";
    slot_label(s, label, sizeof label);
    etrace_describe_addr(f->caller, caller, sizeof caller);
    size_t o = 0;
    for (unsigned i = 0; i < nargs && o < sizeof args - 64; ++i) {
        uint64_t v = f->gp[i];
        o += (size_t)snprintf(args + o, sizeof args - o, "%s%s=", i ? ", " : "", names[i]);
        o += (size_t)snprintf(args + o, sizeof args - o, v < 0x10000 ? "%" PRIu64 : "0x%" PRIx64, v);
        if (g_dump && ptr[i] && looks_like_pointer(v) && safe_read((void*)(uintptr_t)v, f->dump[i], g_dump))
            f->dump_ok |= 1u << i;
    }
    int want_xmm = g_xmm < 0 ? !s->info : g_xmm;
    char xmm[160] = "";
    if (want_xmm) {
        uint64_t x0, x1, st0, st1;
        memcpy(&x0, f->xmm[0], 8);
        memcpy(&x1, f->xmm[1], 8);
        st0 = stack_args[0];
        st1 = stack_args[1];
        double d0, d1;
        memcpy(&d0, &x0, 8);
        memcpy(&d1, &x1, 8);
        snprintf(xmm, sizeof xmm, " xmm0=0x%" PRIx64 "(%g) xmm1=0x%" PRIx64 "(%g) al=%u stack=[0x%" PRIx64
                 ", 0x%" PRIx64 "]", x0, d0, x1, d1, (unsigned)(f->rax & 0xff), st0, st1);
    }
    etrace_log("%*s#%" PRIu64 " %s(%s)%s from %s", (int)(2 * f->depth), "", f->seq, label, args, xmm, caller);
    for (unsigned i = 0; i < 6; ++i) {
        if (!(f->dump_ok & (1u << i))) continue;
        char h[3 * ETRACE_DUMP_MAX];
        hex(f->dump[i], g_dump, h, sizeof h);
        etrace_log("%*s#%" PRIu64 "   *%s = %s", (int)(2 * f->depth), "", f->seq, names[i], h);
    }
    return s->original;
}

void etrace_after(struct etrace_frame* f) {
    --t_depth;
    if (f->seq == 0) return;
    const struct etrace_slot* s = (const struct etrace_slot*)(uintptr_t)f->slot;
    uint64_t us = (now_ns() - f->t0_ns) / 1000;
    char label[128];
    slot_label(s, label, sizeof label);
    int want_xmm = g_xmm < 0 ? !s->info : g_xmm;
    char xmm[96] = "";
    if (want_xmm) {
        uint64_t x0;
        double d0;
        memcpy(&x0, f->ret_xmm0, 8);
        memcpy(&d0, &x0, 8);
        snprintf(xmm, sizeof xmm, " xmm0=0x%" PRIx64 "(%g) rdx=0x%" PRIx64, x0, d0, f->ret_rdx);
    }
    etrace_log("%*s#%" PRIu64 " %s -> %" PRIu64 " (0x%" PRIx64 ")%s %" PRIu64 "us", (int)(2 * f->depth), "",
               f->seq, label, f->ret_rax, f->ret_rax, xmm, us);
    /* memory behind pointer arguments that the call changed */
    char names[6][32];
    int ptr[6] = {0};
    if (s->info) parse_args(s->info, names, ptr);
    else for (unsigned i = 0; i < 6; ++i) snprintf(names[i], sizeof names[i], "a%u", i);
    for (unsigned i = 0; i < 6; ++i) {
        if (!(f->dump_ok & (1u << i))) continue;
        uint8_t now[ETRACE_DUMP_MAX];
        if (!safe_read((void*)(uintptr_t)f->gp[i], now, g_dump) || memcmp(now, f->dump[i], g_dump) == 0) continue;
        char h[3 * ETRACE_DUMP_MAX];
        hex(now, g_dump, h, sizeof h);
        etrace_log("%*s#%" PRIu64 "   *%s after = %s", (int)(2 * f->depth), "", f->seq, names[i], h);
    }
}
