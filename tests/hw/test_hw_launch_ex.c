/*
 * Hardware-only tests of issue 10 part A (make test-hw, on a machine with an
 * NVIDIA GPU; built in CI, never run there: they skip without a real GPU).
 * Kernels are compiled at test time with NVRTC (cooperative groups' headers
 * from $CUDA_HOME/include, /usr/local/cuda by default) and every result is
 * checked on the host:
 *   - cooperative launches: cooperative groups' grid-wide sync over every
 *     block the GPU holds at once, hundreds of rounds, each checked by the
 *     blocks themselves; grid_group::is_valid() only in cooperative launches;
 *   - thread block clusters: cluster ids, ranks and shapes as the CUDA
 *     programming guide defines them, and distributed shared memory (each
 *     block sums its cluster's shared words), for shapes given at launch
 *     (2, 3, 5, 7 and 8 wide, 2-D, 3-D, 16 non-portable) and fixed by
 *     __cluster_dims__;
 *   - %dynamic_smem_size as the kernel sees it;
 *   - library kernels (CUkernel) launched in two contexts, each with its own
 *     globals; lazy loading (code placed at the first launch);
 *   - the legacy launch API (cuParamSet*, cuFuncSetBlockShape, cuLaunchGrid);
 *   - a launch-completion event another stream waits for.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define TEST(f) cmocka_unit_test_setup_teardown(f, ts_hw_ctx_setup, ts_ctx_teardown)

static const char kCoopSource[] =
    "#include <cooperative_groups.h>\n"
    "namespace cg = cooperative_groups;\n"
    "extern \"C\" {\n"
    /* Each round every block writes its slot, the grid syncs, every block
     * checks its neighbour's slot, the grid syncs again. */
    "__global__ void k_grid(unsigned* slots, unsigned* errors, unsigned rounds) {\n"
    "    cg::grid_group g = cg::this_grid();\n"
    "    if (!g.is_valid()) { if (threadIdx.x == 0) atomicAdd(errors, 1000000u); return; }\n"
    "    unsigned n = gridDim.x * gridDim.y, b = blockIdx.y * gridDim.x + blockIdx.x;\n"
    "    for (unsigned r = 1; r <= rounds; ++r) {\n"
    "        if (threadIdx.x == 0) slots[b] = r * 100000u + b;\n"
    "        g.sync();\n"
    "        unsigned nb = (b + 1 + r) % n;\n"
    "        if (threadIdx.x == 0 && slots[nb] != r * 100000u + nb) atomicAdd(errors, 1u);\n"
    "        g.sync();\n"
    "    }\n"
    "}\n"
    "__global__ void k_valid(unsigned* out) {\n"
    "    if (threadIdx.x == 0) out[blockIdx.x] = cg::this_grid().is_valid() ? 1u : 2u;\n"
    "}\n"
    "__global__ void __cluster_dims__(2, 1, 1) k_cluster2(unsigned* out) {\n"
    "    __shared__ unsigned s;\n"
    "    cg::cluster_group c = cg::this_cluster();\n"
    "    if (threadIdx.x == 0) s = blockIdx.x * 7u + 1u;\n"
    "    c.sync();\n"
    "    unsigned* other = c.map_shared_rank(&s, c.block_rank() ^ 1u);\n"
    "    if (threadIdx.x == 0) out[blockIdx.x] = *other;\n"
    "    c.sync();\n"
    "}\n"
    /* Writes what it sees of its cluster; 'extra' counts blocks outside the grid. */
    "__global__ void k_clusterq(unsigned* out, unsigned* extra) {\n"
    "    __shared__ unsigned s;\n"
    "    cg::cluster_group c = cg::this_cluster();\n"
    "    unsigned lin = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;\n"
    "    if (threadIdx.x == 0) s = lin + 1u;\n"
    "    c.sync();\n"
    "    unsigned sum = 0;\n"
    "    for (unsigned r = 0; r < c.num_blocks(); ++r) sum += *c.map_shared_rank(&s, r);\n"
    "    dim3 ci = c.block_index(), cd = c.dim_blocks();\n"
    "    unsigned cid[3], ncid[3];\n"
    "    asm volatile(\"mov.u32 %0, %%clusterid.x;\" : \"=r\"(cid[0]));\n"
    "    asm volatile(\"mov.u32 %0, %%clusterid.y;\" : \"=r\"(cid[1]));\n"
    "    asm volatile(\"mov.u32 %0, %%clusterid.z;\" : \"=r\"(cid[2]));\n"
    "    asm volatile(\"mov.u32 %0, %%nclusterid.x;\" : \"=r\"(ncid[0]));\n"
    "    asm volatile(\"mov.u32 %0, %%nclusterid.y;\" : \"=r\"(ncid[1]));\n"
    "    asm volatile(\"mov.u32 %0, %%nclusterid.z;\" : \"=r\"(ncid[2]));\n"
    "    if (threadIdx.x == 0) {\n"
    "        if (blockIdx.x >= gridDim.x || blockIdx.y >= gridDim.y || blockIdx.z >= gridDim.z) {\n"
    "            atomicAdd(extra, 1u);\n"
    "        } else {\n"
    "            unsigned* o = out + lin * 12;\n"
    "            o[0] = c.block_rank(); o[1] = c.num_blocks(); o[2] = ci.x; o[3] = ci.y; o[4] = ci.z;\n"
    "            o[5] = cd.x; o[6] = cd.y; o[7] = cd.z; o[8] = cid[0] | (cid[1] << 10) | (cid[2] << 20);\n"
    "            o[9] = ncid[0] | (ncid[1] << 10) | (ncid[2] << 20); o[10] = sum; o[11] = 0xc0ffeeu;\n"
    "        }\n"
    "    }\n"
    "    c.sync();\n"
    "}\n"
    "}\n";

static const char kSource[] =
    "extern \"C\" {\n"
    "__device__ int g_tag;\n"
    "__global__ void k_dyn_size(unsigned* out) {\n"
    "    extern __shared__ unsigned d[];\n"
    "    unsigned v;\n"
    "    asm volatile(\"mov.u32 %0, %%dynamic_smem_size;\" : \"=r\"(v));\n"
    "    d[threadIdx.x] = v;\n"
    "    __syncthreads();\n"
    "    if (threadIdx.x == 0) out[blockIdx.x] = d[blockDim.x - 1];\n"
    "}\n"
    "__global__ void k_tagged(int* out, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = i * 3 + g_tag;\n"
    "}\n"
    "__global__ void k_legacy(int* out, int a, float f) {\n"
    "    unsigned b = blockIdx.y * gridDim.x + blockIdx.x;\n"
    "    out[b * blockDim.x + threadIdx.x] = a + (int)f + blockIdx.x * 1000 + blockIdx.y * 100000 + threadIdx.x * 10;\n"
    "}\n"
    /* Spins until *flag is set (volatile reads), then writes done. */
    "__global__ void k_spin_then(volatile int* flag, int* done, long long max_cycles) {\n"
    "    long long t0 = clock64();\n"
    "    while (*flag == 0 && clock64() - t0 < max_cycles) {}\n"
    "    *done = *flag ? 1 : -1;\n"
    "}\n"
    "__global__ void k_set(int* flag, int v) { *flag = v; }\n"
    "}\n";

static char inc[2][512];

/* Every test starts here: without a real GPU it skips, saying why. */
static void require_gpu(void) {
    const char *why = NULL;
    if (!ts_have_real_gpu(&why)) ts_skip("no real GPU: %s", why);
}

static void *coop_cubin(void) {
    static int tried;
    static void *cubin;
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) ts_skip("NVRTC is needed: %s", why);
    if (!tried) {
        tried = 1;
        const char *home = getenv("CUDA_HOME");
        if (!home || !*home) home = "/usr/local/cuda";
        snprintf(inc[0], sizeof inc[0], "-I%s/include", home);
        snprintf(inc[1], sizeof inc[1], "-I%s/include/cccl", home);
        const char *opts[2] = {inc[0], inc[1]};
        cubin = ts_compile_cubin_opts(kCoopSource, "launch_ex_coop.cu", ts_device_arch(), opts, 2, NULL);
    }
    if (!cubin) fail_msg("NVRTC could not compile the cooperative-groups kernels (headers in %s?)", inc[0]);
    return cubin;
}

static CUmodule coop_module(void) {
    CUmodule m = NULL;
    assert_cu_ok(cuModuleLoadData(&m, coop_cubin()));
    return m;
}

/* ------------------------------------------------------------------ cooperative */

static void test_cooperative_grid_sync(void **state) {
    require_gpu();
    ts_fixture *fx = ts_fx(state);
    CUmodule m = coop_module();
    CUfunction g = ts_get_function(m, "k_grid"), valid = ts_get_function(m, "k_valid");
    int sms = 0, per_sm = 0;
    assert_cu_ok(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, fx->dev));
    const int block = 256;
    assert_cu_ok(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, g, block, 0));
    const unsigned max = (unsigned)(per_sm * sms);
    assert_true(max > 0);
    CUdeviceptr slots = ts_dev_alloc((size_t)max * 4 + 64), errors = ts_dev_alloc(64);
    unsigned rounds = 300;
    void *p[] = {&slots, &errors, &rounds};
    ts_watchdog_arm("cooperative grid sync", 60);
    const struct {
        unsigned gx, gy;
    } grids[] = {{max, 1}, {max / 2, 2}, {max / 3 + 1, 1}, {2, 1}, {(unsigned)sms, 1}};
    for (size_t i = 0; i < TS_ARRAY_SIZE(grids); ++i) {
        assert_cu_ok(cuMemsetD8(errors, 0, 64));
        assert_cu_ok(cuLaunchCooperativeKernel(g, grids[i].gx, grids[i].gy, 1, block, 1, 1, 0, NULL, p));
        assert_cu_ok(cuCtxSynchronize());
        unsigned e = 12345;
        assert_cu_ok(cuMemcpyDtoH(&e, errors, 4));
        if (e) fail_msg("grid %ux%u, %u rounds: %u neighbour checks failed", grids[i].gx, grids[i].gy, rounds, e);
    }
    /* Through cuLaunchKernelEx's attribute, on a stream. */
    CUstream s = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    a.value.cooperative = 1;
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = max;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = block;
    c.blockDimY = c.blockDimZ = 1;
    c.hStream = s;
    c.attrs = &a;
    c.numAttrs = 1;
    assert_cu_ok(cuMemsetD8(errors, 0, 64));
    assert_cu_ok(cuLaunchKernelEx(&c, g, p, NULL));
    assert_cu_ok(cuStreamSynchronize(s));
    unsigned e = 12345;
    assert_cu_ok(cuMemcpyDtoH(&e, errors, 4));
    assert_int_equal(e, 0);
    ts_watchdog_disarm();
    /* One block more than the GPU holds at once. */
    assert_cu(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
              cuLaunchCooperativeKernel(g, max + 1, 1, 1, block, 1, 1, 0, NULL, p));
    /* The grid group is valid in cooperative launches only. */
    CUdeviceptr vout = ts_dev_alloc(64);
    void *vp[] = {&vout};
    unsigned v[4];
    assert_cu_ok(cuLaunchKernel(valid, 4, 1, 1, 32, 1, 1, 0, NULL, vp, NULL));
    assert_cu_ok(cuMemcpyDtoH(v, vout, sizeof v));
    for (int i = 0; i < 4; ++i) assert_int_equal(v[i], 2);
    assert_cu_ok(cuLaunchCooperativeKernel(valid, 4, 1, 1, 32, 1, 1, 0, NULL, vp));
    assert_cu_ok(cuMemcpyDtoH(v, vout, sizeof v));
    for (int i = 0; i < 4; ++i) assert_int_equal(v[i], 1);
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuModuleUnload(m));
}

/* ------------------------------------------------------------------ clusters */

/* Launches k_clusterq with a cluster shape and checks every block. */
static void check_cluster(CUfunction q, unsigned gx, unsigned gy, unsigned gz, unsigned cx, unsigned cy, unsigned cz) {
    const size_t n = (size_t)gx * gy * gz;
    CUdeviceptr out = ts_dev_alloc(n * 48), extra = ts_dev_alloc(16);
    assert_cu_ok(cuMemsetD8(out, 0, n * 48));
    assert_cu_ok(cuMemsetD8(extra, 0, 16));
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.clusterDim.x = cx;
    a.value.clusterDim.y = cy;
    a.value.clusterDim.z = cz;
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = gx;
    c.gridDimY = gy;
    c.gridDimZ = gz;
    c.blockDimX = 64;
    c.blockDimY = c.blockDimZ = 1;
    c.attrs = &a;
    c.numAttrs = 1;
    void *p[] = {&out, &extra};
    assert_cu_ok(cuLaunchKernelEx(&c, q, p, NULL));
    assert_cu_ok(cuCtxSynchronize());
    unsigned *h = ts_malloc(n * 48);
    unsigned outside = 0;
    assert_cu_ok(cuMemcpyDtoH(h, out, n * 48));
    assert_cu_ok(cuMemcpyDtoH(&outside, extra, 4));
    if (outside) fail_msg("cluster %ux%ux%u grid %ux%ux%u: %u blocks ran outside the grid", cx, cy, cz, gx, gy, gz, outside);
    for (unsigned z = 0; z < gz; ++z)
        for (unsigned y = 0; y < gy; ++y)
            for (unsigned x = 0; x < gx; ++x) {
                const unsigned *o = h + ((size_t)(z * gy + y) * gx + x) * 12;
                const unsigned ix = x % cx, iy = y % cy, iz = z % cz;
                unsigned sum = 0;
                for (unsigned k = 0; k < cz; ++k)
                    for (unsigned j = 0; j < cy; ++j)
                        for (unsigned i = 0; i < cx; ++i)
                            sum += ((z - iz + k) * gy + (y - iy + j)) * gx + (x - ix + i) + 1;
                const unsigned want[12] = {(iz * cy + iy) * cx + ix, cx * cy * cz, ix, iy, iz, cx, cy, cz,
                                           (x / cx) | ((y / cy) << 10) | ((z / cz) << 20),
                                           (gx / cx) | ((gy / cy) << 10) | ((gz / cz) << 20), sum, 0xc0ffeeu};
                static const char *const names[12] = {"block_rank", "num_blocks", "block_index.x", "block_index.y",
                                                      "block_index.z", "dim_blocks.x", "dim_blocks.y", "dim_blocks.z",
                                                      "%clusterid", "%nclusterid", "shared sum", "tag"};
                for (int w = 0; w < 12; ++w)
                    if (o[w] != want[w])
                        fail_msg("cluster %ux%ux%u grid %ux%ux%u, block (%u,%u,%u): %s is %u (0x%x), expected %u (0x%x)",
                                 cx, cy, cz, gx, gy, gz, x, y, z, names[w], o[w], o[w], want[w], want[w]);
            }
    ts_free(h);
    assert_cu_ok(cuMemFree(out));
    assert_cu_ok(cuMemFree(extra));
}

static void test_cluster_shapes(void **state) {
    require_gpu();
    ts_fixture *fx = ts_fx(state);
    int v = 0;
    assert_cu_ok(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, fx->dev));
    if (!v) ts_skip("this GPU has no thread block clusters");
    CUmodule m = coop_module();
    CUfunction q = ts_get_function(m, "k_clusterq");
    ts_watchdog_arm("cluster launches", 60);
    check_cluster(q, 8, 3, 1, 2, 1, 1);
    check_cluster(q, 9, 2, 1, 3, 1, 1);
    check_cluster(q, 35, 1, 1, 5, 1, 1);
    check_cluster(q, 1001, 1, 1, 7, 1, 1);
    check_cluster(q, 64, 3, 1, 8, 1, 1);
    check_cluster(q, 3, 4, 2, 1, 2, 2);
    check_cluster(q, 4, 4, 4, 2, 2, 2);
    check_cluster(q, 6, 1, 1, 1, 1, 1);
    assert_cu_ok(cuFuncSetAttribute(q, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    check_cluster(q, 32, 2, 1, 16, 1, 1);
    ts_watchdog_disarm();
    assert_cu_ok(cuModuleUnload(m));
}

static void test_cluster_dims_and_distributed_shared(void **state) {
    require_gpu();
    ts_fixture *fx = ts_fx(state);
    int v = 0;
    assert_cu_ok(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, fx->dev));
    if (!v) ts_skip("this GPU has no thread block clusters");
    CUmodule m = coop_module();
    CUfunction c2 = ts_get_function(m, "k_cluster2");
    const unsigned n = 2 * 333;
    CUdeviceptr out = ts_dev_alloc(n * 4);
    void *p[] = {&out};
    ts_watchdog_arm("__cluster_dims__ launch", 30);
    assert_cu_ok(cuLaunchKernel(c2, n, 1, 1, 96, 1, 1, 0, NULL, p, NULL));
    assert_cu_ok(cuCtxSynchronize());
    ts_watchdog_disarm();
    unsigned *h = ts_malloc(n * 4);
    assert_cu_ok(cuMemcpyDtoH(h, out, n * 4));
    for (unsigned b = 0; b < n; ++b)
        if (h[b] != (b ^ 1u) * 7u + 1u) fail_msg("block %u read %u from its partner, expected %u", b, h[b], (b ^ 1u) * 7u + 1u);
    assert_cu(CUDA_ERROR_INVALID_CLUSTER_SIZE, cuLaunchKernel(c2, n + 1, 1, 1, 96, 1, 1, 0, NULL, p, NULL));
    assert_cu_ok(cuModuleUnload(m));
}

/* ------------------------------------------------------------------ driver area, libraries, legacy */

static void test_dynamic_smem_size(void **state) {
    require_gpu();
    (void)state;
    CUmodule m = ts_source_module(kSource, "launch_ex.cu");
    CUfunction f = ts_get_function(m, "k_dyn_size");
    CUdeviceptr out = ts_dev_alloc(64 * 4);
    void *p[] = {&out};
    static const unsigned sizes[] = {256, 1000, 4100, 40000};
    for (size_t i = 0; i < TS_ARRAY_SIZE(sizes); ++i) {
        assert_cu_ok(cuMemsetD8(out, 0, 64 * 4));
        assert_cu_ok(cuLaunchKernel(f, 3, 1, 1, 64, 1, 1, sizes[i], NULL, p, NULL));
        unsigned h[3];
        assert_cu_ok(cuMemcpyDtoH(h, out, sizeof h));
        for (int b = 0; b < 3; ++b)
            if (h[b] != sizes[i]) fail_msg("%%dynamic_smem_size is %u in block %d, launched with %u", h[b], b, sizes[i]);
    }
    assert_cu_ok(cuModuleUnload(m));
}

static void test_library_in_two_contexts(void **state) {
    require_gpu();
    ts_fixture *fx = ts_fx(state);
    const char *why = NULL;
    if (!ts_nvrtc_available(&why)) ts_skip("NVRTC is needed: %s", why);
    size_t size = 0;
    void *cubin = ts_compile_cubin(kSource, "launch_ex_lib.cu", ts_device_arch(), &size);
    assert_non_null(cubin);
    CUlibrary lib = NULL;
    assert_cu_ok(cuLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
    free(cubin);
    CUkernel k = NULL;
    assert_cu_ok(cuLibraryGetKernel(&k, lib, "k_tagged"));
    CUcontext ctx[2] = {fx->ctx, NULL};
    assert_cu_ok(cuCtxCreate(&ctx[1], NULL, 0, fx->dev));
    /* cuCtxCreate pushed it; cuCtxSetCurrent below only swaps the top of the
     * stack, and destroying a context that is not current pops nothing: off
     * the stack it goes, or the fixture's context stays on it twice. */
    CUcontext popped = NULL;
    assert_cu_ok(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, ctx[1]);
    const int n = 100003;
    for (int c = 0; c < 2; ++c) {
        assert_cu_ok(cuCtxSetCurrent(ctx[c]));
        CUdeviceptr tag = 0;
        assert_cu_ok(cuLibraryGetGlobal(&tag, NULL, lib, "g_tag"));
        const int value = 1000 * (c + 1);
        assert_cu_ok(cuMemcpyHtoD(tag, &value, sizeof value));
    }
    for (int c = 0; c < 2; ++c) {
        assert_cu_ok(cuCtxSetCurrent(ctx[c]));
        CUdeviceptr out = 0;
        assert_cu_ok(cuMemAlloc(&out, n * sizeof(int)));
        int nn = n;
        void *p[] = {&out, &nn};
        CUfunctionLoadingState st = CU_FUNCTION_LOADING_STATE_MAX;
        assert_cu_ok(cuLaunchKernel((CUfunction)k, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, p, NULL));
        /* The launch loaded the kernel into this context. libcuda 580 takes a
         * CUkernel for a CUfunction in the launch and occupancy calls only:
         * cuFuncIsLoaded(CUkernel) is CUDA_ERROR_INVALID_HANDLE there
         * (tests/compat/expected/libcuda_launch_library.txt); ask the
         * kernel's function in this context. */
        CUfunction kf = NULL;
        assert_cu(CUDA_ERROR_INVALID_HANDLE, cuFuncIsLoaded(&st, (CUfunction)k));
        assert_cu_ok(cuKernelGetFunction(&kf, k));
        assert_cu_ok(cuFuncIsLoaded(&st, kf));
        assert_int_equal(st, CU_FUNCTION_LOADING_STATE_LOADED);
        int *h = ts_malloc(n * sizeof(int));
        assert_cu_ok(cuMemcpyDtoH(h, out, n * sizeof(int)));
        for (int i = 0; i < n; ++i)
            if (h[i] != i * 3 + 1000 * (c + 1)) fail_msg("context %d, element %d: %d", c, i, h[i]);
        ts_free(h);
        assert_cu_ok(cuMemFree(out));
    }
    assert_cu_ok(cuCtxSetCurrent(fx->ctx));
    assert_cu_ok(cuCtxDestroy(ctx[1]));
    assert_cu_ok(cuLibraryUnload(lib));
}

static void test_legacy_launch_results(void **state) {
    require_gpu();
    (void)state;
    CUmodule m = ts_source_module(kSource, "launch_ex.cu");
    CUfunction f = ts_get_function(m, "k_legacy");
    const int gx = 5, gy = 3, bx = 96;
    CUdeviceptr out = ts_dev_alloc((size_t)gx * gy * bx * 4);
    assert_cu_ok(cuFuncSetBlockShape(f, bx, 1, 1));
    assert_cu_ok(cuParamSetSize(f, 16));
    assert_cu_ok(cuParamSetv(f, 0, &out, sizeof out));
    assert_cu_ok(cuParamSeti(f, 8, 123));
    assert_cu_ok(cuParamSetf(f, 12, 4.0f));
    assert_cu_ok(cuLaunchGrid(f, gx, gy));
    int *h = ts_malloc((size_t)gx * gy * bx * 4);
    assert_cu_ok(cuMemcpyDtoH(h, out, (size_t)gx * gy * bx * 4));
    for (int y = 0; y < gy; ++y)
        for (int x = 0; x < gx; ++x)
            for (int t = 0; t < bx; ++t) {
                const int got = h[(y * gx + x) * bx + t], want = 127 + x * 1000 + y * 100000 + t * 10;
                if (got != want) fail_msg("block (%d,%d) thread %d: %d, expected %d", x, y, t, got, want);
            }
    CUstream s = ts_stream_new(0);
    assert_cu_ok(cuParamSeti(f, 8, -50));
    assert_cu_ok(cuLaunchGridAsync(f, 1, 1, s));
    assert_cu_ok(cuStreamSynchronize(s));
    assert_cu_ok(cuMemcpyDtoH(h, out, bx * 4));
    for (int t = 0; t < bx; ++t) assert_int_equal(h[t], -46 + t * 10);
    assert_cu_ok(cuStreamDestroy(s));
    assert_cu_ok(cuModuleUnload(m));
}

/* A launch-completion event: another stream waits for it. */
static void test_launch_completion_event(void **state) {
    require_gpu();
    (void)state;
    CUmodule m = ts_source_module(kSource, "launch_ex.cu");
    CUfunction spin = ts_get_function(m, "k_spin_then"), set = ts_get_function(m, "k_set");
    CUdeviceptr flag = ts_dev_alloc(64), done = ts_dev_alloc(64);
    assert_cu_ok(cuMemsetD8(flag, 0, 64));
    assert_cu_ok(cuMemsetD8(done, 0, 64));
    CUstream a = ts_stream_new(CU_STREAM_NON_BLOCKING), b = ts_stream_new(CU_STREAM_NON_BLOCKING);
    CUevent ev = ts_event_new(CU_EVENT_DISABLE_TIMING);
    /* a: k_set writes the flag, its completion event recorded with it. */
    int one = 1;
    void *sp[] = {&flag, &one};
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
    attr.value.launchCompletionEvent.event = ev;
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = c.blockDimY = c.blockDimZ = 1;
    c.hStream = a;
    c.attrs = &attr;
    c.numAttrs = 1;
    assert_cu_ok(cuLaunchKernelEx(&c, set, sp, NULL));
    /* b waits for the event, then k_spin_then sees the flag at once. */
    assert_cu_ok(cuStreamWaitEvent(b, ev, 0));
    long long max_cycles = 4000000000LL;
    void *pp[] = {&flag, &done, &max_cycles};
    assert_cu_ok(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, b, pp, NULL));
    assert_cu_ok(cuStreamSynchronize(b));
    int d = 0;
    assert_cu_ok(cuMemcpyDtoH(&d, done, 4));
    assert_int_equal(d, 1);
    assert_cu_ok(cuStreamDestroy(a));
    assert_cu_ok(cuStreamDestroy(b));
    assert_cu_ok(cuEventDestroy(ev));
    assert_cu_ok(cuModuleUnload(m));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_cooperative_grid_sync),
        TEST(test_cluster_shapes),
        TEST(test_cluster_dims_and_distributed_shared),
        TEST(test_dynamic_smem_size),
        TEST(test_library_in_two_contexts),
        TEST(test_legacy_launch_results),
        TEST(test_launch_completion_event),
    };
    return cmocka_run_group_tests_name("hw_launch_ex", tests, NULL, NULL);
}
