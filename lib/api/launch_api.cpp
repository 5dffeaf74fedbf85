// cuLaunchKernelEx and its attributes, cuLaunchCooperativeKernel.
//
// What each launch attribute does in nvlite:
//   COOPERATIVE, CLUSTER_DIMENSION      done (lib/core/launch.cpp, lib/hw/compute.cpp)
//   PROGRAMMATIC_STREAM_SERIALIZATION   the kernel runs after the previous one,
//                                       as without it: overlap is allowed, never promised
//   PROGRAMMATIC_EVENT,                 the event is recorded after the kernel:
//   LAUNCH_COMPLETION_EVENT             later than the kernel's trigger, as
//                                       libcuda's documentation allows
//   ACCESS_POLICY_WINDOW, PRIORITY,     hints, checked and accepted; the hardware
//   CLUSTER_SCHEDULING_POLICY_PREFERENCE, path does not act on them (README)
//   MEM_SYNC_DOMAIN(_MAP),
//   PREFERRED_CLUSTER_DIMENSION,
//   PREFERRED_SHARED_MEMORY_CARVEOUT,
//   NVLINK_UTIL_CENTRIC_SCHEDULING
//   SYNCHRONIZATION_POLICY (streams only), unknown ids: CUDA_ERROR_INVALID_VALUE;
//   DEVICE_UPDATABLE_KERNEL_NODE (graphs only): CUDA_ERROR_NOT_SUPPORTED
// The codes are libcuda 580's (tests/compat/expected/libcuda_launch_ex.txt).
#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/device.h"
#include "core/event.h"
#include "core/handle_registry.h"
#include "core/launch.h"
#include "core/runtime.h"

namespace nvl::api {

namespace {

// An event given to a launch attribute: live, without flags, not timed
// (libcuda: CUDA_ERROR_ILLEGAL_STATE for flags, CUDA_ERROR_NOT_SUPPORTED for
// a timed event).
Result<core::Event*> attributeEvent(CUevent h, int flags) {
    core::Event* e = core::Event::fromHandle(h);
    if (!e || !core::CallScope::use(e->context())) return CUDA_ERROR_INVALID_HANDLE;
    if (flags != 0) return CUDA_ERROR_ILLEGAL_STATE;
    if (e->timed()) return CUDA_ERROR_NOT_SUPPORTED;
    return e;
}

Status checkAccessPolicy(const CUaccessPolicyWindow& w) {
    // libcuda checks the ratio, the size and that misses do not persist.
    if (!(w.hitRatio >= 0.0f && w.hitRatio <= 1.0f)) return CUDA_ERROR_INVALID_VALUE;
    if (w.missProp == CU_ACCESS_PROPERTY_PERSISTING) return CUDA_ERROR_INVALID_VALUE;
    constexpr size_t kMaxWindowBytes = 134217728;  // CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE
    if (w.num_bytes > kMaxWindowBytes) return CUDA_ERROR_INVALID_VALUE;
    return kOk;
}

struct ExLaunch {
    core::LaunchRequest request{};
    core::Event* after[2] = {nullptr, nullptr};  // events recorded after the kernel
    uint32_t preferredCluster[3] = {0, 0, 0};
};

// Reads the attributes of a cuLaunchKernelEx configuration into 'out'.
Status readAttributes(const CUlaunchConfig& c, ExLaunch* out) {
    size_t events = 0;
    for (unsigned i = 0; i < c.numAttrs; ++i) {
        const CUlaunchAttribute& a = c.attrs[i];
        const CUlaunchAttributeValue& v = a.value;
        switch (static_cast<int>(a.id)) {
        case CU_LAUNCH_ATTRIBUTE_IGNORE: break;
        case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: NVL_TRY(checkAccessPolicy(v.accessPolicyWindow)); break;
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: out->request.cooperative = v.cooperative != 0; break;
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
            out->request.cluster[0] = v.clusterDim.x;
            out->request.cluster[1] = v.clusterDim.y;
            out->request.cluster[2] = v.clusterDim.z;
            if (!v.clusterDim.x || !v.clusterDim.y || !v.clusterDim.z) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
            break;
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
            if (v.clusterSchedulingPolicyPreference < CU_CLUSTER_SCHEDULING_POLICY_DEFAULT ||
                v.clusterSchedulingPolicyPreference > CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING)
                return CUDA_ERROR_INVALID_VALUE;
            break;
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: break;
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT: {
            NVL_ASSIGN_OR_RETURN(core::Event * e, attributeEvent(v.programmaticEvent.event, v.programmaticEvent.flags));
            if (events < 2) out->after[events++] = e;
            break;
        }
        case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT: {
            NVL_ASSIGN_OR_RETURN(core::Event * e,
                                 attributeEvent(v.launchCompletionEvent.event, v.launchCompletionEvent.flags));
            if (events < 2) out->after[events++] = e;
            break;
        }
        case CU_LAUNCH_ATTRIBUTE_PRIORITY: break;  // clamped to the stream range, as stream priorities
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
            if (v.memSyncDomainMap.default_ > 3 || v.memSyncDomainMap.remote > 3) return CUDA_ERROR_INVALID_VALUE;
            break;
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
            if (v.memSyncDomain != CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT && v.memSyncDomain != CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE)
                return CUDA_ERROR_INVALID_VALUE;
            break;
        case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
            out->preferredCluster[0] = v.preferredClusterDim.x;
            out->preferredCluster[1] = v.preferredClusterDim.y;
            out->preferredCluster[2] = v.preferredClusterDim.z;
            break;
        case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
            if (v.sharedMemCarveout > 100) return CUDA_ERROR_INVALID_VALUE;
            break;
        case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
            if (v.nvlinkUtilCentricScheduling > 1) return CUDA_ERROR_INVALID_VALUE;
            break;
        case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE: return CUDA_ERROR_NOT_SUPPORTED;  // graphs only
        case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:  // a stream's, not a launch's
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    // A preferred (substitute) cluster needs a cluster and is a multiple of
    // it; the blocks may run in the regular clusters, which is what they do here.
    if (out->preferredCluster[0] || out->preferredCluster[1] || out->preferredCluster[2]) {
        for (int i = 0; i < 3; ++i) {
            const uint32_t p = out->preferredCluster[i], r = out->request.cluster[i];
            if (!p || !r || p % r != 0) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
        }
    }
    return kOk;
}

}  // namespace

Status launchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!config) return CUDA_ERROR_INVALID_VALUE;
    if (config->numAttrs && !config->attrs) return CUDA_ERROR_INVALID_VALUE;
    ExLaunch ex;
    NVL_TRY(readAttributes(*config, &ex));
    core::LaunchRequest& r = ex.request;
    r.grid[0] = config->gridDimX;
    r.grid[1] = config->gridDimY;
    r.grid[2] = config->gridDimZ;
    r.block[0] = config->blockDimX;
    r.block[1] = config->blockDimY;
    r.block[2] = config->blockDimZ;
    r.sharedMemBytes = config->sharedMemBytes;
    r.kernelParams = kernelParams;
    r.extra = extra;
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(config->hStream));
    for (core::Event* e : ex.after)
        if (e && &st->context() != &e->context()) return CUDA_ERROR_INVALID_HANDLE;
    NVL_TRY(launchOn(config->hStream, f, r));
    for (core::Event* e : ex.after)
        if (e) NVL_TRY(e->context().noted(e->record(*st)));
    return kOk;
}

Status launchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                               unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                               unsigned int sharedMemBytes, CUstream hStream, void** kernelParams) {
    NVL_TRY(core::Runtime::get().checkInit());
    core::LaunchRequest r{{gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ}, sharedMemBytes,
                          kernelParams, nullptr};
    r.cooperative = true;
    return launchOn(hStream, f, r);
}

}  // namespace nvl::api
