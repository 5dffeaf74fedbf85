/*
 * Kernels compiled at test time, for the module and launch tests.
 *
 *   ts_compile_cubin / ts_compile_ptx   NVRTC, through samples/nvrtc_compile.h
 *                                       (dlopen: the test link line has no
 *                                       -lnvrtc), as the samples and benchmarks
 *   ts_compile_fatbin                   nvcc -fatbin into a temporary folder
 *   ts_temp_write / ts_read_file        files in a per-process temporary
 *                                       folder, removed at exit
 *
 * Plain C11, its own object (linked into every test binary), and free of
 * cmocka: a test decides itself whether a missing compiler is a skip
 * (ts_nvrtc_available / ts_nvcc_available say why) or a failure.
 *
 * NVRTC is found as libnvrtc.so.13 (then .so.12, libnvrtc.so) in
 * $CUDA_HOME/lib64, /usr/local/cuda/lib64, then the loader's search path
 * (samples/nvrtc_compile.h); nvcc as $CUDA_HOME/bin/nvcc, then
 * /usr/local/cuda/bin/nvcc.
 *
 * Compiled source is always CUDA C++: give kernels extern "C" so that their
 * names are what cuModuleGetFunction is asked for.
 */
#ifndef NVLITE_TESTS_SUPPORT_TS_KERNELS_H
#define NVLITE_TESTS_SUPPORT_TS_KERNELS_H

#include <stddef.h>

/* The body of a kernel (float* out, const float* in, int n) that holds 128
 * values live at once (the stores may alias the loads): it takes as many
 * registers as it may have, and with -maxrregcount=N exactly N. */
#define TS_REGS_KERNEL_BODY                                              \
    "    float v[128];\n"                                                \
    "#pragma unroll\n"                                                   \
    "    for (int i = 0; i < 128; ++i) v[i] = in[i * n + threadIdx.x];\n" \
    "    float s = 0.f;\n"                                               \
    "#pragma unroll\n"                                                   \
    "    for (int i = 0; i < 128; ++i) s += v[i] * v[(i * 7) % 128];\n"  \
    "#pragma unroll\n"                                                   \
    "    for (int i = 0; i < 128; ++i) out[i * n + threadIdx.x] = v[i] * s;\n"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when NVRTC could be loaded; else 0 and *why (if not NULL) says why. */
int ts_nvrtc_available(const char **why);

/* Compiles 'source' with NVRTC for sm_<arch> (arch = major*10+minor, e.g. 90)
 * and returns the cubin (malloc'ed; free() it) and its size. 'options' (may
 * be NULL) holds 'noptions' extra NVRTC options, e.g. "-maxrregcount=32".
 * On failure returns NULL and prints NVRTC's log to stderr. 'name' names the
 * program in messages. */
void *ts_compile_cubin(const char *source, const char *name, int arch, size_t *size);
void *ts_compile_cubin_opts(const char *source, const char *name, int arch, const char *const *options, int noptions,
                            size_t *size);
/* The same for compute_<arch>: PTX text, NUL-terminated (size counts the NUL). */
char *ts_compile_ptx(const char *source, const char *name, int arch, size_t *size);
char *ts_compile_ptx_opts(const char *source, const char *name, int arch, const char *const *options, int noptions,
                          size_t *size);

/* 1 when nvcc exists (and is executable); else 0 and *why says why. */
int ts_nvcc_available(const char **why);

/* nvcc -fatbin of 'source' with the given gencode arguments, each one
 * passed as "-gencode" "<value>" (e.g. "arch=compute_90,code=sm_90"), plus
 * 'extra' arguments (may be NULL; nextra of them, e.g. "-compress-mode=size").
 * Returns the fatbin (malloc'ed) and its size, or NULL (nvcc's output went to
 * stderr). */
void *ts_compile_fatbin(const char *source, const char *const *gencodes, int ngencodes, const char *const *extra,
                        int nextra, size_t *size);

/* The process's temporary folder (mkdtemp, created on first use, removed with
 * everything written through ts_temp_write at exit). NULL if it cannot be
 * made. */
const char *ts_temp_dir(void);
/* Writes n bytes to <temp dir>/<name>; returns the path (malloc'ed) or NULL. */
char *ts_temp_write(const char *name, const void *data, size_t n);
/* Reads a whole file (malloc'ed, with a NUL after the data); NULL if it
 * cannot be read. */
void *ts_read_file(const char *path, size_t *size);

#ifdef __cplusplus
}
#endif

#endif /* NVLITE_TESTS_SUPPORT_TS_KERNELS_H */
