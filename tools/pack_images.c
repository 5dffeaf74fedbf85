// Build-time packer of the images embedded in the library (the built-in
// kernels' and the device runtime's cubins): concatenates its inputs and
// writes them in nvlite's packed format (lib/loader/unpack.h describes it),
// plus a header recording each input's size for the library to cut the
// unpacked bytes back apart.
//
//   pack_images OUT.bin OUT.h NAMESPACE IN...
//
// Greedy LZ77 with one step of lazy matching over hash chains; the window is
// the whole input (a few hundred KB at most), so later images reuse what
// earlier ones share with them (the sm_86 and sm_89 cubins are nearly the
// sm_80 one). The output is checked by unpacking it again before it is
// written. Built with PACK_IMAGES_NO_MAIN, it is the packer the library's
// unit test round-trips through (tools/pack_images.h).
#include "pack_images.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HASH_BITS 16
#define MAX_CHAIN 4096
#define MIN_MATCH 3
#define SHORT_LIMIT 0x7f  // the run length field of the control byte

typedef struct {
    uint8_t* data;
    size_t size, cap;
} Buf;

static void die(const char* what, const char* detail) {
    fprintf(stderr, "pack_images: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static void put(Buf* b, const void* p, size_t n) {
    if (b->size + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->size + n) cap *= 2;
        b->data = realloc(b->data, cap);
        if (!b->data) die("out of memory", NULL);
        b->cap = cap;
    }
    memcpy(b->data + b->size, p, n);
    b->size += n;
}

static void putByte(Buf* b, uint8_t v) { put(b, &v, 1); }

static void putVarint(Buf* b, uint64_t v) {
    while (v >= 0x80) {
        putByte(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    putByte(b, (uint8_t)v);
}

static size_t varintSize(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

// A run's control byte: 'base' (0 literal, 0x80 copy) plus its length less
// 'bias', with the rest in a varint when it does not fit in 7 bits.
static void putRun(Buf* b, uint8_t base, size_t length, size_t bias) {
    const size_t field = length - bias;
    if (field < SHORT_LIMIT) {
        putByte(b, (uint8_t)(base | field));
    } else {
        putByte(b, (uint8_t)(base | SHORT_LIMIT));
        putVarint(b, field - SHORT_LIMIT);
    }
}

static void flushLiterals(Buf* out, const uint8_t* in, size_t start, size_t end) {
    if (end > start) {
        putRun(out, 0x00, end - start, 1);
        put(out, in + start, end - start);
    }
}

static uint32_t hash3(const uint8_t* p) {
    const uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
    return (v * 2654435761u) >> (32 - HASH_BITS);
}

typedef struct {
    size_t length, distance;
} Match;

// Bytes a copy of 'm' costs in the output.
static size_t copyCost(Match m) {
    const size_t field = m.length - MIN_MATCH;
    return 1 + (field < SHORT_LIMIT ? 0 : varintSize(field - SHORT_LIMIT)) + varintSize(m.distance);
}

static Match longest(const uint8_t* in, size_t size, size_t pos, const int64_t* head, const int64_t* prev) {
    Match best = {0, 0};
    if (pos + MIN_MATCH > size) return best;
    int64_t cand = head[hash3(in + pos)];
    for (int chain = 0; cand >= 0 && chain < MAX_CHAIN; chain++, cand = prev[cand]) {
        const size_t c = (size_t)cand;
        size_t n = 0;
        while (pos + n < size && in[c + n] == in[pos + n]) n++;
        if (n >= MIN_MATCH) {
            const Match m = {n, pos - c};
            // Longer wins; at equal length the nearer one (a shorter distance).
            if (n > best.length || (n == best.length && copyCost(m) < copyCost(best))) best = m;
        }
    }
    // Worth it only when it saves bytes over sending them as literals.
    if (best.length && copyCost(best) >= best.length) best.length = 0;
    return best;
}

static void insert(const uint8_t* in, size_t size, size_t pos, int64_t* head, int64_t* prev) {
    if (pos + MIN_MATCH > size) return;
    const uint32_t h = hash3(in + pos);
    prev[pos] = head[h];
    head[h] = (int64_t)pos;
}

static Buf pack(const uint8_t* in, size_t size) {
    Buf out = {0};
    int64_t* head = malloc(sizeof(int64_t) << HASH_BITS);
    int64_t* prev = malloc(sizeof(int64_t) * (size ? size : 1));
    if (!head || !prev) die("out of memory", NULL);
    for (size_t i = 0; i < (size_t)1 << HASH_BITS; i++) head[i] = -1;
    size_t pos = 0, literalStart = 0;
    while (pos < size) {
        Match m = longest(in, size, pos, head, prev);
        if (m.length) {
            // One step of lazy matching: a longer copy starting at the next
            // byte is worth a literal.
            insert(in, size, pos, head, prev);
            const Match next = longest(in, size, pos + 1, head, prev);
            size_t inserted = pos + 1;  // chain positions below this are in
            if (next.length > m.length + 1) {
                pos++;
                m = next;
            }
            flushLiterals(&out, in, literalStart, pos);
            putRun(&out, 0x80, m.length, MIN_MATCH);
            putVarint(&out, m.distance);
            for (size_t i = inserted; i < pos + m.length; i++) insert(in, size, i, head, prev);
            pos += m.length;
            literalStart = pos;
        } else {
            insert(in, size, pos, head, prev);
            pos++;
        }
    }
    flushLiterals(&out, in, literalStart, size);
    free(head);
    free(prev);
    return out;
}

size_t packImages(const uint8_t* in, size_t size, uint8_t** out) {
    Buf b = pack(in, size);
    *out = b.data;
    return b.size;
}

#ifndef PACK_IMAGES_NO_MAIN

// The reverse, to check what pack() wrote (the library has its own,
// bounds-checked decoder: lib/loader/unpack.cpp).
static int getVarint(const uint8_t* p, size_t size, size_t* at, size_t* value) {
    *value = 0;
    for (int shift = 0; shift < 35; shift += 7) {
        if (*at >= size) return 0;
        const uint8_t v = p[(*at)++];
        *value |= (size_t)(v & 0x7f) << shift;
        if (!(v & 0x80)) return 1;
    }
    return 0;
}

static int verify(const uint8_t* packed, size_t packedSize, const uint8_t* expected, size_t size) {
    uint8_t* out = malloc(size ? size : 1);
    if (!out) die("out of memory", NULL);
    size_t in = 0, pos = 0;
    int ok = 1;
    while (ok && in < packedSize) {
        const uint8_t c = packed[in++];
        size_t n = c & SHORT_LIMIT, extra = 0;
        if (n == SHORT_LIMIT && !getVarint(packed, packedSize, &in, &extra)) ok = 0;
        n += extra;
        if (ok && (c & 0x80)) {
            size_t d = 0;
            if (!getVarint(packed, packedSize, &in, &d)) {
                ok = 0;
                break;
            }
            n += MIN_MATCH;
            if (d == 0 || d > pos || n > size - pos) {
                ok = 0;
                break;
            }
            for (size_t i = 0; i < n; i++, pos++) out[pos] = out[pos - d];
        } else if (ok) {
            n += 1;
            if (n > size - pos || n > packedSize - in) {
                ok = 0;
                break;
            }
            memcpy(out + pos, packed + in, n);
            in += n;
            pos += n;
        }
    }
    ok = ok && in == packedSize && pos == size && (size == 0 || memcmp(out, expected, size) == 0);
    free(out);
    return ok;
}

static void readFile(const char* path, Buf* into) {
    FILE* f = fopen(path, "rb");
    if (!f) die(path, strerror(errno));
    uint8_t chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) put(into, chunk, n);
    if (ferror(f)) die(path, strerror(errno));
    fclose(f);
}

static void writeFile(const char* path, const void* data, size_t size) {
    FILE* f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) die(path, strerror(errno));
}

int main(int argc, char** argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: pack_images OUT.bin OUT.h NAMESPACE IN...\n");
        return 2;
    }
    Buf all = {0};
    const int count = argc - 4;
    size_t* sizes = calloc((size_t)count, sizeof *sizes);
    if (!sizes) die("out of memory", NULL);
    for (int i = 0; i < count; i++) {
        const size_t before = all.size;
        readFile(argv[4 + i], &all);
        sizes[i] = all.size - before;
        if (sizes[i] > UINT32_MAX) die(argv[4 + i], "too large");
    }
    Buf packed = pack(all.data, all.size);
    if (!verify(packed.data, packed.size, all.data, all.size)) die("internal error", "the packed data does not unpack");
    writeFile(argv[1], packed.data, packed.size);

    Buf h = {0};
    char line[512];
    snprintf(line, sizeof line,
             "// Generated by tools/pack_images: the sizes of the images packed in %s.\n"
             "#pragma once\n\n#include <cstdint>\n\nnamespace %s {\n\n",
             argv[1], argv[3]);
    put(&h, line, strlen(line));
    snprintf(line, sizeof line, "inline constexpr uint32_t kPackedSize = %zu;\ninline constexpr uint32_t kImageSizes[] = {",
             packed.size);
    put(&h, line, strlen(line));
    for (int i = 0; i < count; i++) {
        snprintf(line, sizeof line, "%s%zu", i ? ", " : "", sizes[i]);
        put(&h, line, strlen(line));
    }
    snprintf(line, sizeof line, "};\n\n}  // namespace %s\n", argv[3]);
    put(&h, line, strlen(line));
    writeFile(argv[2], h.data, h.size);
    fprintf(stderr, "pack_images: %s: %zu bytes in %d images packed to %zu\n", argv[1], all.size, count, packed.size);
    free(sizes);
    free(all.data);
    free(packed.data);
    free(h.data);
    return 0;
}

#endif  // PACK_IMAGES_NO_MAIN
