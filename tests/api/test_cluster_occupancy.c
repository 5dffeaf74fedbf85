/*
 * cuOccupancyMaxActiveClusters and cuOccupancyMaxPotentialClusterSize
 * (lib/core/occupancy.cpp), which cuBLAS 13 calls when a handle is created:
 * the cluster shape from the configuration or the kernel, the portable (8)
 * and non-portable (16) limits, the codes for what is refused, and counts
 * that follow the blocks an SM holds (cuOccupancyMaxActiveBlocksPerMultiprocessor).
 *
 * Known from libcuda 580 (tests/compat/launch_probe.c section cluster, run on
 * the H200): a kernel allowed non-portable sizes has a potential cluster
 * size of 16; a configuration of clusters of 2 gives a count (528 for
 * 64-thread blocks of a small kernel; nvlite's count is larger there: the
 * README says so).
 */
#include <string.h>

#include "support/test_support.h"

static const char kSource[] =
    "extern \"C\" {\n"
    "__global__ void k_plain(float* out) { if (out) out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }\n"
    "__global__ void __cluster_dims__(2, 1, 1) k_cluster2(float* out) { if (out) out[blockIdx.x] = 2.0f; }\n"
    "__global__ void k_shared(float* out) {\n"
    "    __shared__ float s[12000];\n"
    "    s[threadIdx.x] = (float)threadIdx.x;\n"
    "    __syncthreads();\n"
    "    if (out) out[threadIdx.x] = s[(threadIdx.x * 7) % 12000];\n"
    "}\n"
    "}\n";

static CUlaunchConfig config(unsigned block, size_t shared, CUlaunchAttribute *attr, unsigned cx) {
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = 64;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = block;
    c.blockDimY = c.blockDimZ = 1;
    c.sharedMemBytes = (unsigned)shared;
    if (attr && cx) {
        memset(attr, 0, sizeof *attr);
        attr->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr->value.clusterDim.x = cx;
        attr->value.clusterDim.y = attr->value.clusterDim.z = 1;
        c.attrs = attr;
        c.numAttrs = 1;
    }
    return c;
}

static int clusters(CUfunction f, unsigned block, unsigned cx) {
    CUlaunchAttribute a;
    CUlaunchConfig c = config(block, 0, &a, cx);
    int n = -1;
    assert_cu_ok(cuOccupancyMaxActiveClusters(&n, f, &c));
    return n;
}

static void test_active_clusters(void **state) {
    ts_fixture *fx = ts_fx(state);
    int cluster = 0;
    assert_cu_ok(cuDeviceGetAttribute(&cluster, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, fx->dev));
    if (!cluster) ts_skip("the device has no thread block clusters");
    CUmodule m = ts_source_module(kSource, "cluster_occupancy.cu");
    CUfunction plain = ts_get_function(m, "k_plain");
    int sms = 0, perSm = 0;
    assert_cu_ok(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, fx->dev));
    assert_cu_ok(cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, plain, 128, 0));
    assert_true(perSm > 0);

    /* Clusters of one are the blocks the device holds; of two, half of them
     * (a cluster stays in one GPC: an even count per SM loses nothing). */
    assert_int_equal(clusters(plain, 128, 1), sms * perSm);
    assert_int_equal(clusters(plain, 128, 2), sms * perSm / 2);
    const int eight = clusters(plain, 128, 8);
    assert_true(eight > 0 && eight <= sms * perSm / 8);

    /* Fewer blocks per SM (shared memory), fewer clusters. */
    CUfunction shared = ts_get_function(m, "k_shared");
    int sharedPerSm = 0;
    assert_cu_ok(cuOccupancyMaxActiveBlocksPerMultiprocessor(&sharedPerSm, shared, 128, 0));
    assert_true(sharedPerSm > 0 && sharedPerSm < perSm);
    assert_int_equal(clusters(shared, 128, 2), sms * sharedPerSm / 2);
    assert_true(clusters(shared, 128, 2) < clusters(plain, 128, 2));

    /* A kernel compiled with its shape takes it without an attribute; a
     * different one is refused. */
    CUfunction two = ts_get_function(m, "k_cluster2");
    CUlaunchConfig c = config(128, 0, NULL, 0);
    int n = -1;
    assert_cu_ok(cuOccupancyMaxActiveClusters(&n, two, &c));
    assert_int_equal(n, clusters(two, 128, 2));
    CUlaunchAttribute a;
    c = config(128, 0, &a, 4);
    assert_cu(CUDA_ERROR_INVALID_CLUSTER_SIZE, cuOccupancyMaxActiveClusters(&n, two, &c));

    /* No shape anywhere; sizes above the portable 8 unless allowed. */
    c = config(128, 0, NULL, 0);
    assert_cu(CUDA_ERROR_INVALID_CLUSTER_SIZE, cuOccupancyMaxActiveClusters(&n, plain, &c));
    c = config(128, 0, &a, 16);
    assert_cu(CUDA_ERROR_INVALID_CLUSTER_SIZE, cuOccupancyMaxActiveClusters(&n, plain, &c));
    assert_cu_ok(cuFuncSetAttribute(plain, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    assert_cu_ok(cuOccupancyMaxActiveClusters(&n, plain, &c));
    assert_true(n > 0 && n <= sms * perSm / 16);
    c = config(128, 0, &a, 17);
    assert_cu(CUDA_ERROR_INVALID_CLUSTER_SIZE, cuOccupancyMaxActiveClusters(&n, plain, &c));
    assert_cu_ok(cuFuncSetAttribute(plain, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 0));

    /* Arguments. */
    c = config(128, 0, &a, 2);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveClusters(NULL, plain, &c));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveClusters(&n, plain, NULL));
    assert_cu(CUDA_ERROR_INVALID_HANDLE, cuOccupancyMaxActiveClusters(&n, NULL, &c));
    c = config(0, 0, &a, 2);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveClusters(&n, plain, &c));
    c = config(1025, 0, &a, 2);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveClusters(&n, plain, &c));
    c = config(128, 0, &a, 2);
    c.numAttrs = 1;
    c.attrs = NULL;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveClusters(&n, plain, &c));
    assert_cu_ok(cuModuleUnload(m));
}

static void test_potential_cluster_size(void **state) {
    ts_fixture *fx = ts_fx(state);
    int cluster = 0;
    assert_cu_ok(cuDeviceGetAttribute(&cluster, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, fx->dev));
    if (!cluster) ts_skip("the device has no thread block clusters");
    CUmodule m = ts_source_module(kSource, "cluster_occupancy.cu");
    CUfunction plain = ts_get_function(m, "k_plain");
    CUlaunchAttribute a;
    /* The configuration's shape is not looked at. */
    CUlaunchConfig c = config(128, 0, &a, 4);
    int size = -1;
    assert_cu_ok(cuOccupancyMaxPotentialClusterSize(&size, plain, &c));
    assert_int_equal(size, 8);
    assert_cu_ok(cuFuncSetAttribute(plain, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    assert_cu_ok(cuOccupancyMaxPotentialClusterSize(&size, plain, &c));
    assert_int_equal(size, 16); /* libcuda 580's answer on the H200 */
    assert_cu_ok(cuFuncSetAttribute(plain, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 0));
    /* A compiled-in shape is the only one. */
    assert_cu_ok(cuOccupancyMaxPotentialClusterSize(&size, ts_get_function(m, "k_cluster2"), &c));
    assert_int_equal(size, 2);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxPotentialClusterSize(NULL, plain, &c));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxPotentialClusterSize(&size, plain, NULL));
    assert_cu_ok(cuModuleUnload(m));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_active_clusters, ts_ctx_setup, ts_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_potential_cluster_size, ts_ctx_setup, ts_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, ts_group_init, NULL);
}
