/*
 * Reading and mutating cubins in tests: the section header of a section by
 * name, the .nv.info records of a kernel, the relocation and symbol tables.
 * The tests make corrupt images from valid ones with these (one field
 * changed), so the mutation is written in the test itself.
 *
 * Header-only C (static functions), for C and C++ tests and the fuzz
 * targets. The image is trusted to be a 64-bit little-endian ELF (the
 * tests start from real cubins); every function checks its own bounds.
 */
#ifndef NVLITE_TESTS_SUPPORT_TS_ELF_H
#define NVLITE_TESTS_SUPPORT_TS_ELF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Offsets inside the ELF64 header and a section header (Elf64_Shdr). */
#define TS_EH_TYPE 16
#define TS_EH_SHOFF 0x28
#define TS_EH_SHENTSIZE 0x3a
#define TS_EH_SHNUM 0x3c
#define TS_EH_SHSTRNDX 0x3e
#define TS_SH_NAME 0
#define TS_SH_TYPE 4
#define TS_SH_OFFSET 24
#define TS_SH_SIZE 32
#define TS_SH_LINK 40
#define TS_SH_INFO 44
#define TS_SH_ENTSIZE 56
#define TS_SHDR_BYTES 64

/* .nv.info record formats and attributes (lib/loader/nv_info.h). */
#define TS_EIFMT_SVAL 4
#define TS_EIATTR_PARAM_CBANK 0x0a
#define TS_EIATTR_REGCOUNT 0x2f

static inline uint64_t ts_le(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

static inline void ts_put_le(unsigned char *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

static inline unsigned ts_elf_section_count(const unsigned char *img, size_t n) {
    if (n < 64 || ts_le(img + TS_EH_SHENTSIZE, 2) != TS_SHDR_BYTES) return 0;
    uint64_t off = ts_le(img + TS_EH_SHOFF, 8), count = ts_le(img + TS_EH_SHNUM, 2);
    return off + count * TS_SHDR_BYTES <= n ? (unsigned)count : 0;
}

/* Section header number 'i', or NULL. */
static inline unsigned char *ts_elf_shdr(unsigned char *img, size_t n, unsigned i) {
    if (i >= ts_elf_section_count(img, n)) return NULL;
    return img + ts_le(img + TS_EH_SHOFF, 8) + (uint64_t)i * TS_SHDR_BYTES;
}

static inline const char *ts_elf_section_name(unsigned char *img, size_t n, unsigned i) {
    unsigned char *sh = ts_elf_shdr(img, n, i);
    unsigned char *str = ts_elf_shdr(img, n, (unsigned)ts_le(img + TS_EH_SHSTRNDX, 2));
    if (!sh || !str) return "";
    uint64_t at = ts_le(str + TS_SH_OFFSET, 8) + ts_le(sh + TS_SH_NAME, 4);
    return at < n ? (const char *)img + at : "";
}

/* Index of the section called 'name', or -1. */
static inline int ts_elf_find(unsigned char *img, size_t n, const char *name) {
    unsigned count = ts_elf_section_count(img, n);
    for (unsigned i = 1; i < count; ++i)
        if (strcmp(ts_elf_section_name(img, n, i), name) == 0) return (int)i;
    return -1;
}

/* Index of the first section of 'type', or -1. */
static inline int ts_elf_find_type(unsigned char *img, size_t n, uint32_t type) {
    unsigned count = ts_elf_section_count(img, n);
    for (unsigned i = 1; i < count; ++i)
        if (ts_le(ts_elf_shdr(img, n, i) + TS_SH_TYPE, 4) == type) return (int)i;
    return -1;
}

/* The bytes of section 'i' (NULL when they are not inside the image). */
static inline unsigned char *ts_elf_data(unsigned char *img, size_t n, int i, uint64_t *size) {
    unsigned char *sh = i > 0 ? ts_elf_shdr(img, n, (unsigned)i) : NULL;
    if (!sh) return NULL;
    uint64_t off = ts_le(sh + TS_SH_OFFSET, 8), sz = ts_le(sh + TS_SH_SIZE, 8);
    if (off > n || sz > n - off) return NULL;
    if (size) *size = sz;
    return img + off;
}

/* The first record of 'attribute' in the .nv.info section 'name', or NULL.
 * A record is {u8 format, u8 attribute, u16 value or size, payload}. */
static inline unsigned char *ts_nvinfo_record(unsigned char *img, size_t n, const char *name, unsigned attribute) {
    uint64_t size = 0;
    unsigned char *s = ts_elf_data(img, n, ts_elf_find(img, n, name), &size);
    for (uint64_t off = 0; s && off + 4 <= size;) {
        if (s[off + 1] == attribute) return s + off;
        off += 4 + (s[off] == TS_EIFMT_SVAL ? ts_le(s + off + 2, 2) : 0);
    }
    return NULL;
}

#endif /* NVLITE_TESTS_SUPPORT_TS_ELF_H */
