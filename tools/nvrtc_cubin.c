/*
 * nvrtc_cubin: compiles one CUDA C++ file to a cubin with NVRTC, at build
 * time (the built-in kernels, builtin/kernels.cu).
 *
 *   nvrtc_cubin SOURCE ARCH OUTPUT [NVRTC options...]
 *
 * ARCH is major * 10 + minor (90 for sm_90). NVRTC is opened from the CUDA
 * toolkit ($CUDA_HOME or /usr/local/cuda) by samples/nvrtc_compile.h.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "../samples/nvrtc_compile.h"

static char* read_file(const char* path) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    long n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    char* text = malloc((size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        text = NULL;
    }
    if (text) text[n] = 0;
    fclose(f);
    return text;
}

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s SOURCE ARCH OUTPUT [NVRTC options...]\n", argv[0]);
        return 2;
    }
    char* source = read_file(argv[1]);
    if (!source) {
        fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[1]);
        return 1;
    }
    const int arch = atoi(argv[2]);
    size_t size = 0;
    char* cubin = nvrtc_compile(source, argv[1], 0, arch, (const char* const*)(argv + 4), argc - 4, &size);
    free(source);
    if (!cubin) return 1;
    FILE* out = fopen(argv[3], "wb");
    int ok = out && fwrite(cubin, 1, size, out) == size;
    if (out && fclose(out) != 0) ok = 0;
    free(cubin);
    if (!ok) {
        fprintf(stderr, "%s: cannot write %s\n", argv[0], argv[3]);
        remove(argv[3]);
        return 1;
    }
    return 0;
}
