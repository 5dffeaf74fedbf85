// cuOccupancyMaxActiveClusters and cuOccupancyMaxPotentialClusterSize: the
// occupancy of thread block clusters (lib/core/occupancy.cpp). cuBLAS 13
// asks for them when a handle is created.
#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/occupancy.h"
#include "core/runtime.h"

namespace nvl::api {
namespace {

// The configuration's block, dynamic shared memory and cluster shape; a
// CUkernel's function in the context of the configuration's stream (the
// current context for none), as libcuda documents.
Result<core::Function*> readConfig(CUfunction func, const CUlaunchConfig* config, core::ClusterQuery* q) {
    if (!config) return CUDA_ERROR_INVALID_VALUE;
    if (config->numAttrs && !config->attrs) return CUDA_ERROR_INVALID_VALUE;
    const uint64_t threads =
        static_cast<uint64_t>(config->blockDimX) * config->blockDimY * config->blockDimZ;
    if (threads == 0 || threads > 1024) return CUDA_ERROR_INVALID_VALUE;
    q->blockSize = static_cast<int>(threads);
    q->dynamicSmemBytes = config->sharedMemBytes;
    for (unsigned i = 0; i < config->numAttrs; ++i) {
        const CUlaunchAttribute& a = config->attrs[i];
        if (a.id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) continue;
        const CUlaunchAttributeValue& v = a.value;
        if (!v.clusterDim.x || !v.clusterDim.y || !v.clusterDim.z) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
        q->cluster[0] = v.clusterDim.x;
        q->cluster[1] = v.clusterDim.y;
        q->cluster[2] = v.clusterDim.z;
    }
    core::Context* ctx = nullptr;
    if (config->hStream) {
        NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(config->hStream));
        ctx = &st->context();
    }
    return resolveFunction(func, KernelAsFunction::Accepted, ctx);
}

}  // namespace

Status occupancyMaxActiveClusters(int* numClusters, CUfunction func, const CUlaunchConfig* config) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!numClusters) return CUDA_ERROR_INVALID_VALUE;
    core::ClusterQuery q;
    NVL_ASSIGN_OR_RETURN(core::Function * f, readConfig(func, config, &q));
    NVL_ASSIGN_OR_RETURN(*numClusters, core::maxActiveClusters(*f, q));
    return kOk;
}

Status occupancyMaxPotentialClusterSize(int* clusterSize, CUfunction func, const CUlaunchConfig* config) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!clusterSize) return CUDA_ERROR_INVALID_VALUE;
    core::ClusterQuery q;
    NVL_ASSIGN_OR_RETURN(core::Function * f, readConfig(func, config, &q));
    NVL_ASSIGN_OR_RETURN(*clusterSize, core::maxPotentialClusterSize(*f, q));
    return kOk;
}

}  // namespace nvl::api
