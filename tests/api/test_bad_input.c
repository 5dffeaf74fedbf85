/*
 * What bad input gets (issue 9): mutated copies of valid images, hostile
 * sizes and files, each answered with an error (or loaded and launched)
 * without a crash, within a second and 100 MB of memory.
 *
 * Every corrupt image here starts as a valid one (the prebuilt cubin in
 * tests/data, an NVRTC -rdc cubin, a fatbin made around them) with one
 * field changed by the test.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "support/test_support.h"
#include "support/ts_elf.h"
#include "support/ts_kernels.h"

/* A bad input must be refused (or done) within this, using at most this. */
#define LIMIT_SECONDS 1.0
#define LIMIT_BYTES (100 * TS_MiB)

static unsigned char *prebuilt;
static size_t prebuilt_size;

static int group_setup(void **state) {
    if (ts_group_init(state) != 0) return -1;
    prebuilt = ts_read_file("tests/data/loader_kernels.sm_90.cubin", &prebuilt_size);
    if (!prebuilt) fprintf(stderr, "tests/data/loader_kernels.sm_90.cubin cannot be read (run from the repository root)\n");
    return prebuilt ? 0 : -1;
}

static unsigned char *copy_of(const unsigned char *img, size_t n) {
    unsigned char *c = ts_malloc(n);
    memcpy(c, img, n);
    return c;
}

static long peak_rss_bytes(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss * 1024L;
}

/* Runs 'call' and checks its result, its time and the growth of the peak RSS. */
#define EXPECT_BOUNDED(expected, call)                                                                 \
    do {                                                                                               \
        const long rss0_ = peak_rss_bytes();                                                           \
        const double t0_ = ts_now();                                                                   \
        assert_cu((expected), (call));                                                                 \
        const double took_ = ts_now() - t0_;                                                           \
        const long grew_ = peak_rss_bytes() - rss0_;                                                   \
        if (took_ > LIMIT_SECONDS) fail_msg("%s took %.2f s", #call, took_);                           \
        if (grew_ > (long)LIMIT_BYTES) fail_msg("%s grew the peak RSS by %ld MiB", #call, grew_ >> 20); \
    } while (0)

static CUresult load_and_unload(const void *img) {
    CUmodule m = NULL;
    CUresult r = cuModuleLoadData(&m, img);
    if (r == CUDA_SUCCESS) cuModuleUnload(m);
    return r;
}

/* ------------------------------------------------------------- item 1 */

/* The parameters of k_ptrs (float*, const float*, int) at the offset its
 * PARAM_CBANK record says: 0x210 in the valid cubin. */
static unsigned char *with_param_offset(unsigned offset) {
    unsigned char *c = copy_of(prebuilt, prebuilt_size);
    unsigned char *rec = ts_nvinfo_record(c, prebuilt_size, ".nv.info.k_ptrs", TS_EIATTR_PARAM_CBANK);
    assert_non_null(rec);
    assert_int_equal(ts_le(rec + 8, 2), 0x210);
    ts_put_le(rec + 8, offset, 2);
    return c;
}

static void launch_k_ptrs(CUmodule m) {
    CUfunction f = ts_get_function(m, "k_ptrs");
    CUdeviceptr a = ts_dev_alloc(4 * 64), b = ts_dev_alloc(4 * 64);
    int n = 37;
    void *args[] = {&a, &b, &n};
    assert_cu_ok(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
    assert_cu_ok(cuCtxSynchronize());
}

/* A kernel whose parameters would start inside the driver's part of
 * constant bank 0 is a corrupt image: refused at load, never launched. */
static void test_param_base_inside_driver_area(void **state) {
    (void)state;
    static const unsigned offsets[] = {0x0, 0x10, 0x2c, 0x2f, 0x30, 0x160, 0x208, 0x20c};
    for (size_t i = 0; i < TS_ARRAY_SIZE(offsets); ++i) {
        unsigned char *c = with_param_offset(offsets[i]);
        EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, load_and_unload(c));
    }
    /* Past the end of a 64 KiB bank. */
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, load_and_unload(with_param_offset(0xfff8)));
    /* Unchanged (0x210): loads and launches. */
    static const unsigned fine[] = {0x210};
    for (size_t i = 0; i < TS_ARRAY_SIZE(fine); ++i) {
        CUmodule m = NULL;
        assert_cu_ok(cuModuleLoadData(&m, with_param_offset(fine[i])));
        launch_k_ptrs(m);
        assert_cu_ok(cuModuleUnload(m));
    }
}

/* The parameter size claims 64 KiB - 1. */
static void test_param_size_huge(void **state) {
    (void)state;
    unsigned char *c = copy_of(prebuilt, prebuilt_size);
    unsigned char *rec = ts_nvinfo_record(c, prebuilt_size, ".nv.info.k_ptrs", TS_EIATTR_PARAM_CBANK);
    assert_non_null(rec);
    ts_put_le(rec + 10, 0xffff, 2);
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, load_and_unload(c));
}

/* A kernel without parameters and without a PARAM_CBANK record takes its
 * parameter base from the size of its bank 0: cut to 16 bytes, the driver
 * area still comes first, and the kernel launches. */
static void test_small_bank0_without_param_record(void **state) {
    (void)state;
    unsigned char *c = copy_of(prebuilt, prebuilt_size);
    assert_null(ts_nvinfo_record(c, prebuilt_size, ".nv.info.k_noparams", TS_EIATTR_PARAM_CBANK));
    int bank0 = ts_elf_find(c, prebuilt_size, ".nv.constant0.k_noparams");
    assert_true(bank0 > 0);
    ts_put_le(ts_elf_shdr(c, prebuilt_size, (unsigned)bank0) + TS_SH_SIZE, 16, 8);
    CUmodule m = NULL;
    EXPECT_BOUNDED(CUDA_SUCCESS, cuModuleLoadData(&m, c));
    CUfunction f = ts_get_function(m, "k_noparams");
    assert_cu_ok(cuLaunchKernel(f, 3, 1, 1, 33, 1, 1, 0, NULL, NULL, NULL));
    assert_cu_ok(cuCtxSynchronize());
    assert_cu_ok(cuModuleUnload(m));
}

/* ------------------------------------------------------------- item 2 */

/* A fatbin container with one ELF entry for sm_90 holding 'payload'
 * (stored as is), with the entry's flags and claimed uncompressed size. */
static unsigned char *fatbin_of(const void *payload, size_t n, uint64_t flags, uint64_t claimed, size_t *size) {
    const size_t padded = (n + 7) & ~(size_t)7;
    unsigned char *f = ts_malloc(16 + 64 + padded);
    memset(f, 0, 16 + 64 + padded);
    ts_put_le(f, 0xBA55ED50u, 4);
    ts_put_le(f + 4, 1, 2);
    ts_put_le(f + 6, 16, 2);
    ts_put_le(f + 8, 64 + padded, 8);
    unsigned char *e = f + 16;
    ts_put_le(e, 2, 2); /* ELF */
    ts_put_le(e + 2, 0x101, 2);
    ts_put_le(e + 4, 64, 4);
    ts_put_le(e + 8, padded, 8);
    ts_put_le(e + 0x10, n, 4); /* compressed size */
    ts_put_le(e + 0x1c, 90, 4);
    ts_put_le(e + 0x28, 0x11 | flags, 8);
    ts_put_le(e + 0x38, claimed, 8);
    memcpy(e + 64, payload, n);
    *size = 16 + 64 + padded;
    return f;
}

#define FLAG_LZ4 0x2000
#define FLAG_ZSTD 0x8000

/* 96 bytes claiming a 1 GiB entry: refused without taking the gigabyte. */
static void test_compressed_entry_claims_1gib(void **state) {
    (void)state;
    unsigned char junk[32];
    ts_fill_random(junk, sizeof junk, 0x96);
    size_t n;
    unsigned char *f = fatbin_of(junk, sizeof junk, FLAG_LZ4, 1ull << 30, &n);
    assert_int_equal(n, 112);
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, load_and_unload(f));
    memcpy(junk, "\x28\xb5\x2f\xfd", 4); /* a zstd frame's magic */
    f = fatbin_of(junk, sizeof junk, FLAG_ZSTD, 1ull << 30, &n);
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, load_and_unload(f));
    f = fatbin_of(junk, sizeof junk, FLAG_ZSTD, ~0ull, &n);
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, load_and_unload(f));
    CUmodule m = NULL;
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadFatBinary(&m, f));
}

/* A real zstd entry of the prebuilt cubin (libzstd from the system): it
 * loads; with its claimed size changed it is refused. */
static void test_zstd_entry_with_wrong_size(void **state) {
    (void)state;
    void *lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) ts_skip("libzstd.so.1 is not installed");
    size_t (*bound)(size_t) = (size_t (*)(size_t))dlsym(lib, "ZSTD_compressBound");
    size_t (*compress)(void *, size_t, const void *, size_t, int) =
        (size_t (*)(void *, size_t, const void *, size_t, int))dlsym(lib, "ZSTD_compress");
    assert_non_null(bound);
    assert_non_null(compress);
    unsigned char *z = ts_malloc(bound(prebuilt_size));
    size_t zn = compress(z, bound(prebuilt_size), prebuilt, prebuilt_size, 3);
    assert_true(zn > 0 && zn < prebuilt_size);
    size_t n;
    unsigned char *f = fatbin_of(z, zn, FLAG_ZSTD, prebuilt_size, &n);
    EXPECT_BOUNDED(CUDA_SUCCESS, load_and_unload(f));
    static const int64_t deltas[] = {-1, 1, 4096, 1 << 30};
    for (size_t i = 0; i < TS_ARRAY_SIZE(deltas); ++i) {
        f = fatbin_of(z, zn, FLAG_ZSTD, (uint64_t)((int64_t)prebuilt_size + deltas[i]), &n);
        EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, load_and_unload(f));
    }
    /* The frame cut short. */
    f = fatbin_of(z, zn - 9, FLAG_ZSTD, prebuilt_size, &n);
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, load_and_unload(f));
    dlclose(lib);
}

/* ------------------------------------------------------------- item 3 */

static const char kRdcSource[] =
    "extern \"C\" __device__ int helper_rdc(int x) { return x * 3 + 1; }\n"
    "__device__ int g_rdc[8];\n"
    "extern \"C\" __global__ void k_rdc(int* out) { out[threadIdx.x] = helper_rdc(threadIdx.x) + g_rdc[threadIdx.x & 7]; }\n";

static unsigned char *rdc_cubin(size_t *n) {
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) return NULL;
    static const char *const opts[] = {"-rdc=true"};
    unsigned char *c = ts_compile_cubin_opts(kRdcSource, "rdc.cu", 90, opts, 1, n);
    if (!c) fail_msg("NVRTC is here but compiling the relocatable test kernel failed");
    assert_int_equal(ts_le(c + TS_EH_TYPE, 2), 1); /* ET_REL */
    return c;
}

static CUresult load_file(const void *img, size_t n) {
    char *path = ts_temp_write("mutated.cubin", img, n);
    assert_non_null(path);
    CUmodule m = NULL;
    CUresult r = cuModuleLoad(&m, path);
    if (r == CUDA_SUCCESS) cuModuleUnload(m);
    free(path);
    return r;
}

static CUresult link_cubin(const void *img, size_t n) {
    CUlinkState ls = NULL;
    CUresult r = cuLinkCreate(0, NULL, NULL, &ls);
    if (r != CUDA_SUCCESS) return r;
    r = cuLinkAddData(ls, CU_JIT_INPUT_CUBIN, (void *)img, n, "mutated", 0, NULL, NULL);
    cuLinkDestroy(ls);
    return r;
}

#define SHT_SYMTAB_ 2
#define SHT_STRTAB_ 3
#define SHT_RELA_ 4

/* Corrupt relocatable cubins never reach nvJitLink: nvlite's own checks
 * refuse them, through cuModuleLoadData and cuLinkAddData alike. */
static void test_corrupt_relocatable_cubins(void **state) {
    (void)state;
    size_t n = 0;
    unsigned char *valid = rdc_cubin(&n);
    if (!valid) ts_skip("NVRTC is not available");
    EXPECT_BOUNDED(CUDA_SUCCESS, load_and_unload(valid));
    assert_cu_ok(link_cubin(valid, n));

    const int symtab = ts_elf_find_type(valid, n, SHT_SYMTAB_);
    const int rela = ts_elf_find_type(valid, n, SHT_RELA_);
    const int strtab = ts_elf_find(valid, n, ".strtab");
    const int text = ts_elf_find(valid, n, ".text.k_rdc");
    assert_true(symtab > 0 && rela > 0 && strtab > 0 && text > 0);
    uint64_t relBytes = 0, strBytes = 0;
    assert_non_null(ts_elf_data(valid, n, rela, &relBytes));
    assert_non_null(ts_elf_data(valid, n, strtab, &strBytes));
    assert_true(relBytes >= 24);

    for (int m = 0; m < 9; ++m) {
        unsigned char *c = copy_of(valid, n);
        unsigned char *rel = ts_elf_data(c, n, rela, NULL);
        switch (m) {
        case 0: ts_put_le(rel + 8 + 4, 0x7fffff, 4); break;                             /* r_sym far past the symbols */
        case 1: ts_put_le(rel, 1ull << 40, 8); break;                                    /* r_offset far outside */
        case 2: ts_put_le(ts_elf_shdr(c, n, (unsigned)rela) + TS_SH_INFO, 0xffff, 4); break;  /* target section */
        case 3: ts_put_le(ts_elf_shdr(c, n, (unsigned)symtab) + TS_SH_LINK, 0, 4); break;     /* symtab's strings */
        case 4: ts_elf_data(c, n, strtab, NULL)[strBytes - 1] = 'x'; break;               /* strings unterminated */
        case 5: ts_put_le(ts_elf_shdr(c, n, (unsigned)text) + TS_SH_OFFSET, n - 8, 8); break;  /* code past the end */
        case 6: ts_put_le(ts_elf_shdr(c, n, (unsigned)text) + TS_SH_SIZE, 1ull << 34, 8); break;
        case 7: ts_put_le(ts_elf_shdr(c, n, (unsigned)symtab) + TS_SH_SIZE, 7, 8); break;    /* not whole symbols */
        case 8: ts_put_le(ts_elf_shdr(c, n, (unsigned)text) + TS_SH_LINK, 0x7777, 4); break;
        }
        /* cuModuleLoadData has no size: the image's own headers give its
         * extent, so code moved past the end is read where the caller says
         * (as in libcuda); the file and the link have a size. */
        if (m != 5) EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, load_and_unload(c));
        EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, load_file(c, n));
        EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, link_cubin(c, n));
    }
    /* A symbol's section out of range (the kernel's, found by name). */
    unsigned char *c = copy_of(valid, n);
    uint64_t symBytes = 0;
    unsigned char *syms = ts_elf_data(c, n, symtab, &symBytes);
    unsigned char *names = ts_elf_data(c, n, strtab, NULL);
    int changed = 0;
    for (uint64_t off = 0; off + 24 <= symBytes; off += 24) {
        if (strcmp((const char *)names + ts_le(syms + off, 4), "k_rdc") != 0) continue;
        ts_put_le(syms + off + 6, 0xfe00, 2); /* st_shndx */
        changed = 1;
    }
    assert_true(changed);
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, load_and_unload(c));
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, load_file(c, n));
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, link_cubin(c, n));
    free(valid);
}

/* ------------------------------------------------------------- item 5 */

/* Files that never end, or are no files: refused from their first bytes. */
/* Huge allocations fail cleanly and leave a null result, as libcuda 580's do
 * (tests/compat/expected/libcuda_misuse.txt). */
static void test_huge_allocations(void **state) {
    (void)state;
    const size_t sizes[] = {SIZE_MAX, SIZE_MAX - 4095, (size_t)1 << 62, (size_t)1 << 47, (size_t)1 << 44};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        CUdeviceptr d = 0x1234;
        void *h = (void *)0x5678;
        EXPECT_BOUNDED(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&d, sizes[i]));
        assert_int_equal(d, 0);
        EXPECT_BOUNDED(CUDA_ERROR_OUT_OF_MEMORY, cuMemAllocHost(&h, sizes[i]));
        assert_null(h);
    }
}

static size_t machine_ram(void) { return (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE); }

/* MemAvailable of /proc/meminfo in bytes, or 0 when it cannot be read. */
static size_t available_ram(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
    fclose(f);
    return (size_t)kib * 1024;
}

/* Pinned memory beyond what the machine has is refused before the kernel is
 * asked to pin it (which wakes the OOM killer: the H200 run was killed),
 * whatever the flags; so is a registration of a mapping larger than RAM
 * (libcuda 580: CUDA_ERROR_OUT_OF_MEMORY for 1<<47 bytes). */
static void test_huge_pinned_requests(void **state) {
    (void)state;
    const size_t ram = machine_ram(), avail = available_ram();
    size_t sizes[4] = {(size_t)1 << 47, (size_t)1 << 44, ram + 12345 * 4096 + 77, 0};
    size_t n = 3;
    if (avail) sizes[n++] = avail + avail / 4 + 40961; /* more than is free now */
    const unsigned flags[] = {0, CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_DEVICEMAP, CU_MEMHOSTALLOC_WRITECOMBINED,
                              CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED};
    for (size_t i = 0; i < n; ++i) {
        for (size_t f = 0; f < TS_ARRAY_SIZE(flags); ++f) {
            void *h = (void *)0x5678;
            EXPECT_BOUNDED(CUDA_ERROR_OUT_OF_MEMORY, cuMemHostAlloc(&h, sizes[i], flags[f]));
            assert_null(h);
        }
    }
    /* A registration running past a small buffer. */
    unsigned char *buf = ts_malloc(8192);
    ts_fill_random(buf, 8192, 47);
    EXPECT_BOUNDED(CUDA_ERROR_OUT_OF_MEMORY, cuMemHostRegister(buf + 3, (size_t)1 << 47, 0));
    EXPECT_BOUNDED(CUDA_ERROR_OUT_OF_MEMORY, cuMemHostRegister(buf + 3, (size_t)1 << 44, CU_MEMHOSTREGISTER_DEVICEMAP));
    /* The user's own mapping, larger than RAM (reserved, not backed). */
    const size_t len = (ram * 2 + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
    void *big = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (big != MAP_FAILED) {
        EXPECT_BOUNDED(CUDA_ERROR_OUT_OF_MEMORY, cuMemHostRegister((unsigned char *)big + 4096, len - 4096, 0));
        munmap(big, len);
    }
    /* Nothing was left registered or allocated: the buffer registers normally. */
    assert_cu_ok(cuMemHostRegister(buf + 3, 5000, 0));
    assert_cu_ok(cuMemHostUnregister(buf + 3));
    void *h = NULL;
    assert_cu_ok(cuMemHostAlloc(&h, 3 * 4096 + 5, CU_MEMHOSTALLOC_PORTABLE));
    assert_non_null(h);
    assert_cu_ok(cuMemFreeHost(h));
}

/* Device allocations of the GPU's whole memory or more (cuMemAlloc,
 * cuMemAllocPitch, a stream-ordered one) fail at once, and leave the
 * context able to allocate. */
static void test_device_sized_allocations(void **state) {
    (void)state;
    size_t free_bytes = 0, total = 0;
    assert_cu_ok(cuMemGetInfo(&free_bytes, &total));
    assert_true(total > 0 && free_bytes <= total);
    const size_t sizes[] = {total, total + 2 * TS_MiB + 4097, total * 2 + 12345};
    for (size_t i = 0; i < TS_ARRAY_SIZE(sizes); ++i) {
        CUdeviceptr d = 0x1234;
        EXPECT_BOUNDED(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&d, sizes[i]));
        assert_int_equal(d, 0);
        size_t pitch = 77;
        d = 0x1234;
        EXPECT_BOUNDED(CUDA_ERROR_OUT_OF_MEMORY, cuMemAllocPitch(&d, &pitch, sizes[i] / 3 + 5, 4, 4));
        assert_int_equal(pitch, 0);
        d = 0;
        EXPECT_BOUNDED(CUDA_ERROR_OUT_OF_MEMORY, cuMemAllocAsync(&d, sizes[i], NULL));
    }
    assert_cu_ok(cuStreamSynchronize(NULL));
    CUdeviceptr d = 0;
    assert_cu_ok(cuMemAlloc(&d, TS_MiB + 333));
    assert_cu_ok(cuMemsetD8(d, 0x5a, TS_MiB + 333));
    unsigned char back[16];
    assert_cu_ok(cuMemcpyDtoH(back, d + TS_MiB + 300, sizeof back));
    for (size_t i = 0; i < sizeof back; ++i) assert_int_equal(back[i], 0x5a);
    assert_cu_ok(cuMemFree(d));
}

/* A link state completes once (libcuda 580: CUDA_ERROR_INVALID_HANDLE after). */
static void test_link_completes_once(void **state) {
    (void)state;
    CUlinkState ls = NULL;
    void *out = NULL;
    size_t n = 0;
    assert_cu_ok(cuLinkCreate(0, NULL, NULL, &ls));
    CUresult r = cuLinkComplete(ls, &out, &n);
    if (r == CUDA_ERROR_JIT_COMPILER_NOT_FOUND || r == CUDA_ERROR_NOT_SUPPORTED) {
        cuLinkDestroy(ls);
        skip(); /* no nvJitLink here: nothing to link with */
    }
    assert_cu_ok(r);
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuLinkComplete(ls, &out, &n));
    assert_cu_ok(cuLinkDestroy(ls));
}

static void test_endless_and_odd_files(void **state) {
    (void)state;
    CUmodule m = NULL;
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, cuModuleLoad(&m, "/dev/zero"));
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, cuModuleLoad(&m, "/dev/urandom"));
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, cuModuleLoad(&m, "/dev/null"));
    EXPECT_BOUNDED(CUDA_ERROR_FILE_NOT_FOUND, cuModuleLoad(&m, "/"));
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_VALUE, cuModuleLoad(&m, "")); /* libcuda 580's answer */
    /* A __fatBinC_Wrapper_t holds a pointer: in a file it is just bytes. */
    unsigned char wrapper[32];
    ts_put_le(wrapper, 0x466243B1u, 4);
    ts_put_le(wrapper + 4, 1, 4);
    ts_put_le(wrapper + 8, 0x4141414141414141ull, 8);
    ts_put_le(wrapper + 16, 0, 8);
    ts_put_le(wrapper + 24, 0x4242424242424242ull, 8);
    char *wpath = ts_temp_write("wrapper.bin", wrapper, sizeof wrapper);
    assert_non_null(wpath);
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, cuModuleLoad(&m, wpath));
    free(wpath);
    /* /proc files say they are empty and are not. */
    EXPECT_BOUNDED(CUDA_ERROR_INVALID_IMAGE, cuModuleLoad(&m, "/proc/self/maps"));
    /* A valid cubin as a file still loads. */
    char *path = ts_temp_write("valid.cubin", prebuilt, prebuilt_size);
    assert_non_null(path);
    EXPECT_BOUNDED(CUDA_SUCCESS, cuModuleLoad(&m, path));
    assert_cu_ok(cuModuleUnload(m));
    free(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_param_base_inside_driver_area, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_huge_allocations, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_huge_pinned_requests, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_device_sized_allocations, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_link_completes_once, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_param_size_huge, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_small_bank0_without_param_record, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_compressed_entry_claims_1gib, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_zstd_entry_with_wrong_size, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_relocatable_cubins, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_endless_and_odd_files, ts_ctx_setup, ts_ctx_teardown),
    };
    return cmocka_run_group_tests_name("bad_input", tests, group_setup, NULL);
}
