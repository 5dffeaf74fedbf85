#include "core/launch.h"

#include <cstring>

#include "core/context.h"
#include "core/device.h"
#include "core/module.h"
#include "hw/compute.h"

namespace nvl::core {
namespace {

constexpr uint32_t kMaxParamBytes = 32764;  // CUDA's limit for kernel parameters

// Gathers the parameter block from kernelParams (one pointer per parameter,
// placed where the cubin says) or from 'extra' (a ready-made buffer).
Status gatherParams(const Function& f, const LaunchRequest& r, uint8_t* out, size_t* bytes) {
    const loader::Kernel& k = f.kernel();
    *bytes = k.paramBytes;
    if (r.kernelParams && r.extra) return CUDA_ERROR_INVALID_VALUE;
    if (r.extra) {
        const void* buffer = nullptr;
        size_t size = 0;
        bool haveSize = false;
        for (void** e = r.extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
            if (*e == CU_LAUNCH_PARAM_BUFFER_POINTER) {
                buffer = e[1];
            } else if (*e == CU_LAUNCH_PARAM_BUFFER_SIZE) {
                if (!e[1]) return CUDA_ERROR_INVALID_VALUE;
                size = *static_cast<const size_t*>(e[1]);
                haveSize = true;
            } else {
                return CUDA_ERROR_INVALID_VALUE;
            }
        }
        if (!haveSize) return k.paramBytes == 0 ? kOk : Status(CUDA_ERROR_INVALID_VALUE);
        if (size && !buffer) return CUDA_ERROR_INVALID_VALUE;
        // libcuda: a buffer larger than the parameters does not fit the launch;
        // a shorter one fills the start.
        if (size > k.paramBytes) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
        std::memset(out, 0, k.paramBytes);
        if (size) std::memcpy(out, buffer, size);
        return kOk;
    }
    if (k.params.empty()) return kOk;
    if (!r.kernelParams) return CUDA_ERROR_INVALID_VALUE;
    std::memset(out, 0, k.paramBytes);
    for (size_t i = 0; i < k.params.size(); ++i) {
        const loader::KernelParam& p = k.params[i];
        if (!r.kernelParams[i]) return CUDA_ERROR_INVALID_VALUE;
        if (p.offset + p.size > k.paramBytes) return CUDA_ERROR_INVALID_IMAGE;
        std::memcpy(out + p.offset, r.kernelParams[i], p.size);
    }
    return kOk;
}

}  // namespace

Status launchKernel(Context& ctx, Function& f, const LaunchRequest& r) {
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
    if (r.sharedMemBytes > f.maxDynamicSharedBytes.load(std::memory_order_relaxed)) return CUDA_ERROR_INVALID_VALUE;
    if (k.paramBytes > kMaxParamBytes) return CUDA_ERROR_INVALID_IMAGE;

    uint8_t params[kMaxParamBytes];
    size_t paramBytes = 0;
    NVL_TRY(gatherParams(f, r, params, &paramBytes));
    // Recursive kernels report no stack size; CUDA's default stack (1 KiB) covers them.
    constexpr uint32_t kDefaultStackBytes = 1024;
    NVL_TRY(ctx.ensureLocalMemory(k.localBytesPerThread ? k.localBytesPerThread : kDefaultStackBytes));

    const hw::KernelDescriptor& d = f.descriptor();
    const hw::ComputeState state = ctx.computeState();
    const hw::LaunchGeometry g{{r.grid[0], r.grid[1], r.grid[2]}, {r.block[0], r.block[1], r.block[2]}, r.sharedMemBytes};
    const bool invalidate = ctx.takeCodeChanged();
    hw::Channel& compute = ctx.channels().compute();
    Result<uint64_t> value = ctx.nullStream().submitWithData(
        compute, hw::Launch::kPushDwords + hw::kInvalidateCachesDwords, hw::Launch::dataBytes(d, state),
        [&](hw::PushWriter& w, const hw::Channel::DataSlot& slot) {
            if (invalidate) hw::invalidateShaderCaches(w);
            const uint64_t qmd = hw::Launch::write(slot, f.qmdTemplate(), d, g, params, paramBytes, state);
            hw::Launch::push(w, qmd);
        });
    if (!value) {
        if (invalidate) ctx.noteNewCode();
        return value.status();
    }
    return kOk;
}

}  // namespace nvl::core
