/*
 * make_seeds: the fuzz targets' starting corpus, made at build time.
 *
 *   make_seeds <loader dir> <api dir>
 *
 * Real inputs: the prebuilt cubin from tests/data (always), and when NVRTC
 * is here, cubins, a relocatable (-rdc) cubin and PTX of
 * tests/data/loader_kernels.cu compiled now; fatbin containers made around
 * them (plain, zstd-compressed when libzstd is installed, PTX entries); a
 * .nv.info section cut out of a cubin; JIT option bytes. Each is written
 * with the mode byte(s) of the target that reads it (see fuzz_loader.cpp and
 * fuzz_api.cpp). Run from the repository root.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvlite/cuda.h"
#include "support/ts_elf.h"
#include "support/ts_kernels.h"

static const char *loader_dir, *api_dir;
static int written;

static void put(const char *dir, const char *name, unsigned char mode, const void *data, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%u", dir, name, mode);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputc(mode, f);
    fwrite(data, 1, n, f);
    fclose(f);
    ++written;
}

/* A fatbin container with one entry holding 'payload' as stored. */
static unsigned char *fatbin_of(int kind, const void *payload, size_t n, unsigned arch, uint64_t flags,
                                uint64_t uncompressed, size_t *size) {
    const size_t header = kind == 1 ? 0x50 : 0x40;
    const size_t padded = (n + 7) & ~(size_t)7;
    unsigned char *f = calloc(1, 16 + header + padded);
    ts_put_le(f, 0xBA55ED50u, 4);
    ts_put_le(f + 4, 1, 2);
    ts_put_le(f + 6, 16, 2);
    ts_put_le(f + 8, header + padded, 8);
    unsigned char *e = f + 16;
    ts_put_le(e, (uint64_t)kind, 2);
    ts_put_le(e + 2, 0x101, 2);
    ts_put_le(e + 4, header, 4);
    ts_put_le(e + 8, padded, 8);
    ts_put_le(e + 0x10, n, 4);
    ts_put_le(e + 0x18, kind == 1 ? (8u << 16) | 0 : 0, 4);
    ts_put_le(e + 0x1c, arch, 4);
    ts_put_le(e + 0x28, 0x11 | flags, 8);
    ts_put_le(e + 0x38, uncompressed, 8);
    memcpy(e + header, payload, n);
    *size = 16 + header + padded;
    return f;
}

/* A cubin for both targets: the loader's whole-load, parse and file modes,
 * the link checks, and the API target. */
static void cubin_seed(const char *name, const unsigned char *c, size_t n) {
    put(loader_dir, name, 0, c, n);
    put(loader_dir, name, 1, c, n);
    put(loader_dir, name, 5, c, n);
    put(loader_dir, name, 6, c, n);
    put(api_dir, name, 0, c, n);
    size_t fn;
    unsigned char *fat = fatbin_of(2, c, n, 90, 0, n, &fn);
    char fname[256];
    snprintf(fname, sizeof fname, "%s.fatbin", name);
    put(loader_dir, fname, 0, fat, fn);
    put(loader_dir, fname, 2, fat, fn);
    put(loader_dir, fname, 12, fat, fn); /* mode 5, kind FATBINARY */
    put(api_dir, fname, 1, fat, fn);
    free(fat);
    /* zstd-compressed, through the system's libzstd when there is one. */
    void *z = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (z) {
        size_t (*bound)(size_t) = (size_t (*)(size_t))dlsym(z, "ZSTD_compressBound");
        size_t (*compress)(void *, size_t, const void *, size_t, int) =
            (size_t (*)(void *, size_t, const void *, size_t, int))dlsym(z, "ZSTD_compress");
        if (bound && compress) {
            unsigned char *zb = malloc(bound(n));
            size_t zn = compress(zb, bound(n), c, n, 3);
            fat = fatbin_of(2, zb, zn, 90, 0x8000, n, &fn);
            snprintf(fname, sizeof fname, "%s.zstd.fatbin", name);
            put(loader_dir, fname, 0, fat, fn);
            put(loader_dir, fname, 2, fat, fn);
            put(api_dir, fname, 1, fat, fn);
            free(fat);
            free(zb);
        }
        dlclose(z);
    }
    /* Its .nv.info sections. */
    unsigned char *copy = malloc(n);
    memcpy(copy, c, n);
    unsigned count = ts_elf_section_count(copy, n);
    for (unsigned i = 1; i < count; ++i) {
        const char *sn = ts_elf_section_name(copy, n, i);
        if (strncmp(sn, ".nv.info", 8) != 0) continue;
        uint64_t size = 0;
        unsigned char *d = ts_elf_data(copy, n, (int)i, &size);
        if (!d) continue;
        snprintf(fname, sizeof fname, "%s%s", name, sn);
        put(loader_dir, fname, 3, d, size);
    }
    free(copy);
}

static void ptx_seed(const char *name, const char *ptx) {
    const size_t n = strlen(ptx) + 1;
    put(loader_dir, name, 0, ptx, n);
    put(loader_dir, name, 6, ptx, n);
    put(loader_dir, name, 12, ptx, n); /* mode 5, kind PTX is 12 / 7 = 1 */
    size_t fn;
    unsigned char *fat = fatbin_of(1, ptx, n, 90, 0, n, &fn);
    char fname[256];
    snprintf(fname, sizeof fname, "%s.fatbin", name);
    put(loader_dir, fname, 0, fat, fn);
    put(loader_dir, fname, 2, fat, fn);
    free(fat);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: make_seeds <loader corpus dir> <api corpus dir>\n");
        return 2;
    }
    loader_dir = argv[1];
    api_dir = argv[2];
    size_t n = 0;
    unsigned char *prebuilt = ts_read_file("tests/data/loader_kernels.sm_90.cubin", &n);
    if (!prebuilt) {
        fprintf(stderr, "make_seeds: tests/data/loader_kernels.sm_90.cubin cannot be read (run from the repository root)\n");
        return 1;
    }
    cubin_seed("prebuilt", prebuilt, n);
    /* JIT options: (option, u32 value) records. */
    static const unsigned char options[] = {CU_JIT_MAX_REGISTERS, 32, 0, 0, 0, CU_JIT_INFO_LOG_BUFFER, 0, 0, 0, 0,
                                            CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, 40, 0, 0, 0, CU_JIT_TARGET, 90, 0, 0, 0,
                                            CU_JIT_OPTIMIZATION_LEVEL, 3, 0, 0, 0};
    put(loader_dir, "options", 4, options, sizeof options);

    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) {
        printf("make_seeds: %d seeds (no NVRTC: %s)\n", written, why);
        return 0;
    }
    size_t src_n = 0;
    char *src = ts_read_file("tests/data/loader_kernels.cu", &src_n);
    static const char *const rdc[] = {"-rdc=true"};
    static const char *const regs[] = {"-maxrregcount=24", "-lineinfo"};
    static const char *const names[] = {"nvrtc90", "nvrtc90rdc", "nvrtc90regs", "nvrtc80"};
    for (int i = 0; i < 4; ++i) {
        size_t cn = 0;
        unsigned char *c = i == 1   ? ts_compile_cubin_opts(src, "seed_rdc.cu", 90, rdc, 1, &cn)
                           : i == 2 ? ts_compile_cubin_opts(src, "seed_regs.cu", 90, regs, 2, &cn)
                                    : ts_compile_cubin(src, "seed.cu", i == 3 ? 80 : 90, &cn);
        if (!c) {
            fprintf(stderr, "make_seeds: NVRTC is here but compiling %s failed\n", names[i]);
            return 1;
        }
        cubin_seed(names[i], c, cn);
        free(c);
    }
    char *ptx = ts_compile_ptx(src, "seed_ptx.cu", 90, NULL);
    if (!ptx) {
        fprintf(stderr, "make_seeds: NVRTC is here but compiling PTX failed\n");
        return 1;
    }
    ptx_seed("nvrtc90", ptx);
    printf("make_seeds: %d seeds\n", written);
    return 0;
}
