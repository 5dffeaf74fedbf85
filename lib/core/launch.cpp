#include "core/launch.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "common/env.h"
#include "core/context.h"
#include "core/device.h"
#include "core/device_launch.h"
#include "core/devrt.h"
#include "core/module.h"
#include "core/occupancy.h"
#include "core/stream.h"
#include "core/thread_state.h"
#include "hw/compute.h"

namespace nvl::core {
namespace {

// NVLITE_LOCAL_MEMORY=limit: every launch gets at least the stack limit's
// local memory, as before local memory was sized by need (for measuring).
bool localMemoryByNeed() {
    static const bool byNeed = [] {
        const char* v = env::value("NVLITE_LOCAL_MEMORY");
        return !(v && !std::strcmp(v, "limit"));
    }();
    return byNeed;
}

// Where a launch's parameter block comes from: a ready-made buffer
// ('extra') or one pointer per parameter ('kernelParams').
struct ParamSource {
    const void* buffer = nullptr;
    size_t bufferBytes = 0;
    void** pointers = nullptr;
};

// Checks the launch's parameters before anything is reserved.
Result<ParamSource> checkParams(const loader::Kernel& k, const LaunchRequest& r) {
    if (r.kernelParams && r.extra) return CUDA_ERROR_INVALID_VALUE;
    ParamSource src;
    if (r.extra) {
        bool haveSize = false;
        for (void** e = r.extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
            if (*e == CU_LAUNCH_PARAM_BUFFER_POINTER) {
                src.buffer = e[1];
            } else if (*e == CU_LAUNCH_PARAM_BUFFER_SIZE) {
                if (!e[1]) return CUDA_ERROR_INVALID_VALUE;
                src.bufferBytes = *static_cast<const size_t*>(e[1]);
                haveSize = true;
            } else {
                return CUDA_ERROR_INVALID_VALUE;
            }
        }
        if (!haveSize) return k.paramBytes == 0 ? Result<ParamSource>(ParamSource{}) : CUDA_ERROR_INVALID_VALUE;
        if (src.bufferBytes && !src.buffer) return CUDA_ERROR_INVALID_VALUE;
        // libcuda: a buffer larger than the parameters does not fit the launch;
        // a shorter one fills the start.
        if (src.bufferBytes > k.paramBytes) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
        return src;
    }
    if (k.params.empty()) return src;
    if (!r.kernelParams) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < k.params.size(); ++i)
        if (!r.kernelParams[i]) return CUDA_ERROR_INVALID_VALUE;
    src.pointers = r.kernelParams;
    return src;
}

// Writes the kernel's parameter block at 'out' (the launch image, or
// write-combined memory: each byte once). The loader checked that every
// parameter lies inside the block and sorted them; bytes no parameter
// covers are zero.
void writeParams(const loader::Kernel& k, const ParamSource& src, uint8_t* out) {
    size_t written = 0;
    if (src.buffer) {
        std::memcpy(out, src.buffer, src.bufferBytes);
        written = src.bufferBytes;
    } else if (src.pointers) {
        for (size_t i = 0; i < k.params.size(); ++i) {
            const loader::KernelParam& p = k.params[i];
            if (p.offset > written) std::memset(out + written, 0, p.offset - written);
            std::memcpy(out + p.offset, src.pointers[i], p.size);
            written = std::max<size_t>(written, p.offset + p.size);
        }
    }
    if (k.paramBytes > written) std::memset(out + written, 0, k.paramBytes - written);
}

// The cluster shape a launch gets: the one given, else the one the kernel
// requires (__cluster_dims__, or REQUIRED_CLUSTER_* set at run time), else
// none (zeros). Checked against the grid, the kernel and the device with
// libcuda's answers.
Status clusterShape(const Function& f, const LaunchRequest& r, const hw::ComputeState& state, uint32_t out[3]) {
    const loader::Kernel& k = f.kernel();
    uint32_t runtime[3];
    for (int i = 0; i < 3; ++i) runtime[i] = f.settings.requiredCluster[i].load(std::memory_order_relaxed);
    const uint32_t* required = k.clusterDims[0] ? k.clusterDims
                               : (runtime[0] || runtime[1] || runtime[2]) ? runtime
                                                                          : nullptr;
    const bool given = r.cluster[0] || r.cluster[1] || r.cluster[2];
    if (!given && !required) {
        out[0] = out[1] = out[2] = 0;
        return k.explicitCluster ? Status(CUDA_ERROR_INVALID_CLUSTER_SIZE) : kOk;
    }
    // A shape given at launch must be the one the kernel requires.
    if (given && required)
        for (int i = 0; i < 3; ++i)
            if (required[i] && r.cluster[i] != required[i]) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    const uint32_t* c = given ? r.cluster : required;
    uint64_t size = 1;
    for (int i = 0; i < 3; ++i) {
        if (c[i] == 0 || r.grid[i] % c[i] != 0) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
        size *= c[i];
        out[i] = c[i];
    }
    if (!state.qmd->hasCluster) return size == 1 ? kOk : Status(CUDA_ERROR_NOT_SUPPORTED);
    // Eight blocks per cluster are portable; sixteen when the kernel allows more.
    const uint64_t limit = f.settings.nonPortableClusterSizeAllowed.load(std::memory_order_relaxed) ? 16 : 8;
    if (size > limit) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    return kOk;
}

// %gridid: every launch of the process its own number.
std::atomic<uint64_t> nextGridId{1};

}  // namespace

Status launchKernel(Stream& st, Function& f, const LaunchRequest& r) {
    Context& ctx = st.context();
    const loader::Kernel& k = f.kernel();
    // Geometry against the device's limits.
    for (int i = 0; i < 3; ++i)
        if (r.grid[i] == 0 || r.block[i] == 0) return CUDA_ERROR_INVALID_VALUE;
    if (r.grid[0] > 2147483647u || r.grid[1] > 65535 || r.grid[2] > 65535) return CUDA_ERROR_INVALID_VALUE;
    if (r.block[0] > 1024 || r.block[1] > 1024 || r.block[2] > 64) return CUDA_ERROR_INVALID_VALUE;
    const uint64_t threads = static_cast<uint64_t>(r.block[0]) * r.block[1] * r.block[2];
    if (threads > 1024) return CUDA_ERROR_INVALID_VALUE;
    // And against the kernel's: its declared bound (__launch_bounds__) is an
    // argument error, what its registers allow a resource one (as libcuda).
    if (k.maxThreadsPerBlock && threads > k.maxThreadsPerBlock) return CUDA_ERROR_INVALID_VALUE;
    if (threads > f.maxThreadsPerBlock()) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    if (k.requiredBlock[0] &&
        (r.block[0] != k.requiredBlock[0] || r.block[1] != k.requiredBlock[1] || r.block[2] != k.requiredBlock[2]))
        return CUDA_ERROR_INVALID_VALUE;
    hw::ComputeState state = ctx.computeState();
    // What the occupancy calculator lets an SM hold: the launch's shared-memory
    // carveout is sized for it.
    NVL_ASSIGN_OR_RETURN(const int perSm, launchBlocksPerSm(f, static_cast<int>(threads), r.sharedMemBytes));
    if (r.cooperative) {
        // Every block must be resident at once for a grid-wide barrier (checked
        // before the shared memory, as libcuda: too much of it is too large a grid).
        if (!state.qmd->hasCluster) return CUDA_ERROR_NOT_SUPPORTED;  // needs the sm_90 driver area
        const uint64_t resident = static_cast<uint64_t>(perSm) * f.module().context().device().info().smCount;
        if (static_cast<uint64_t>(r.grid[0]) * r.grid[1] * r.grid[2] > resident)
            return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    }
    if (r.sharedMemBytes > f.settings.maxDynamicSharedBytes.load(std::memory_order_relaxed))
        return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(const ParamSource params, checkParams(k, r));
    uint32_t cluster[3];
    NVL_TRY(clusterShape(f, r, state, cluster));
    // Lazy loading: the module's code goes to the GPU with its first launch.
    NVL_TRY(f.ensureResident());
    // Local memory by need: a kernel reporting its stack size (the frame and
    // deepest call chain) gets that much; the context's stack limit (1 KiB
    // unless set) covers those reporting none (recursive call graphs), and
    // every kernel under NVLITE_LOCAL_MEMORY=limit. A kernel needing more
    // than the limit raises it.
    const uint32_t limit = ctx.stackBytes();
    const uint32_t stack = (k.localBytesPerThread > 0 || r.ownKernel) && localMemoryByNeed()
                               ? k.localBytesPerThread
                               : std::max(k.localBytesPerThread, limit);
    Context::LaunchInFlight inFlight(ctx);  // until submitted: local memory stays
    NVL_TRY(ctx.ensureLocalMemory(stack));
    ctx.raiseStackBytes(stack);
    if (k.devrtUses) ctx.devrt().noteLaunch(k.devrtUses);  // the FIFO / heap limits are fixed from now on

    const hw::KernelDescriptor& d = f.descriptor();
    // The local memory this launch runs with: what ensureLocalMemory provided.
    state.localBytesPerThread = ctx.localBytesPerThread();
    const hw::ComputeState& launchState = state;
    // A block never gets more than the SM has (an image may claim more static
    // shared memory than that: it cannot run).
    if (hw::Launch::sharedBytes(d, r.sharedMemBytes) > launchState.maxSmSharedKiB * 1024) return CUDA_ERROR_INVALID_VALUE;
    hw::LaunchGeometry g{{r.grid[0], r.grid[1], r.grid[2]}, {r.block[0], r.block[1], r.block[2]}, r.sharedMemBytes};
    for (int i = 0; i < 3; ++i) g.cluster[i] = cluster[i];
    g.cooperative = r.cooperative;
    g.blocksPerSm = static_cast<uint32_t>(std::max(perSm, 1));
    g.gridId = nextGridId.fetch_add(1, std::memory_order_relaxed);
    // A kernel that launches kernels: the queue its launches go to.
    std::shared_ptr<DeviceLaunchQueue> queue;
    if (k.devrtUses & loader::kDevrtLaunch) {
        if (r.launchQueue) {
            g.launchQueue = r.launchQueue;
            g.launchDepth = r.launchDepth;
        } else {
            NVL_ASSIGN_OR_RETURN(queue, ctx.deviceLaunches().queueFor(st));
            g.launchQueue = queue->va();
            g.launchDepth = 0;
        }
    }
    hw::Channel& compute = st.computeChannel();
    const size_t lane = st.laneIndex();
    // The thread's launch image: launches repeating the kernel and geometry
    // of its previous one reuse most of it.
    hw::Launch::Image& image = ThreadState<hw::Launch::Image>::get();
    Status submitted =
        st.submitWithData(compute, hw::Launch::kPushDwords + hw::kInvalidateCachesDwords,
                          hw::Launch::dataBytes(d, launchState, g),
                          [&](hw::PushWriter& w, const hw::Channel::DataSlot& slot) {
                              // Taken here, under the channel's lock with the space
                              // reserved: the first launch on this lane to reach the GPU
                              // after new code was placed is the one that invalidates.
                              if (ctx.takeCodeChanged(lane)) hw::invalidateShaderCaches(w);
                              const uint64_t qmdVa =
                                  hw::Launch::write(image, slot, f.qmdTemplate(), d, g, launchState,
                                                    [&](uint8_t* out) { writeParams(k, params, out); });
                              hw::Launch::push(w, qmdVa);
                          },
                          nullptr,
                          launchState.qmd->hasRelease ? hw::Channel::Completion::ByFill
                                                      : hw::Channel::Completion::Channel)
            .status();
    // Its launches run once it is done, before the stream's later work.
    if (submitted.ok() && queue) submitted = ctx.deviceLaunches().runAfter(st, std::move(queue), f);
    return submitted;
}

}  // namespace nvl::core
