// The legacy API old programs still call (deprecated since CUDA 4.0, still in
// libcuda 580): cuCtxAttach/cuCtxDetach, and the launch API that configures a
// function first (cuFuncSetBlockShape, cuFuncSetSharedSize, cuParamSet*) and
// then launches it (cuLaunch, cuLaunchGrid, cuLaunchGridAsync).
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/launch.h"
#include "core/module.h"
#include "core/runtime.h"

namespace nvl::api {

using core::Context;
using core::Function;

namespace {

// cuCtxAttach's usage counts beyond the creator's: cuCtxDetach drops one,
// and destroys the context when none is left.
class AttachCounts {
public:
    void attach(Context* c) {
        std::lock_guard lock(mutex_);
        ++counts_[c];
    }
    // True when an attachment was dropped, false when none was left.
    bool detach(Context* c) {
        std::lock_guard lock(mutex_);
        auto it = counts_.find(c);
        if (it == counts_.end()) return false;
        if (--it->second == 0) counts_.erase(it);
        return true;
    }

private:
    std::mutex mutex_;
    std::unordered_map<Context*, int> counts_;
};
AttachCounts& attachCounts() {
    static auto* a = new AttachCounts();
    return *a;
}

// The largest parameter block a kernel may have (CUDA 12.1+, Volta and later).
constexpr unsigned kMaxParamBytes = 32764;

// Writes 'n' bytes at 'offset' of the function's parameter block. Programs
// set the parameters first and their size last (NVIDIA's samples do), so
// any place inside the largest block is taken.
Status setParam(CUfunction hfunc, int offset, const void* data, unsigned n) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(hfunc));
    if (offset < 0 || static_cast<uint64_t>(offset) + n > kMaxParamBytes) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(f->legacyMutex);
    std::vector<uint8_t>& p = f->legacy.params;
    if (p.size() < static_cast<size_t>(offset) + n) p.resize(static_cast<size_t>(offset) + n, 0);
    if (n) std::memcpy(p.data() + offset, data, n);
    return kOk;
}

// cuLaunch / cuLaunchGrid(Async): the block shape, shared memory and
// parameters set beforehand.
Status launchLegacy(CUfunction hfunc, int gridWidth, int gridHeight, CUstream stream) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(hfunc));
    if (gridWidth <= 0 || gridHeight <= 0) return CUDA_ERROR_INVALID_VALUE;
    core::LaunchRequest r{};
    std::vector<uint8_t> params;
    {
        std::lock_guard lock(f->legacyMutex);
        for (int i = 0; i < 3; ++i) r.block[i] = f->legacy.block[i];
        r.sharedMemBytes = f->legacy.sharedBytes;
        params = f->legacy.params;
        params.resize(f->legacy.paramBytes, 0);
    }
    r.grid[0] = static_cast<uint32_t>(gridWidth);
    r.grid[1] = static_cast<uint32_t>(gridHeight);
    r.grid[2] = 1;
    size_t size = params.size();
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, params.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    r.extra = extra;
    return launchOn(stream, hfunc, r);
}

}  // namespace

Status ctxAttach(CUcontext* pctx, unsigned int flags) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pctx || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    attachCounts().attach(ctx);
    *pctx = ctx->handle();
    return kOk;
}

Status ctxDetach(CUcontext ctx) {
    NVL_TRY(core::Runtime::get().checkInit());
    Context* c = Context::fromHandle(ctx);
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (!c->active()) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (attachCounts().detach(c)) return kOk;
    return ctxDestroy(ctx);
}

Status funcSetBlockShape(CUfunction hfunc, int x, int y, int z) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(hfunc));
    if (x <= 0 || y <= 0 || z <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(f->legacyMutex);
    f->legacy.block[0] = static_cast<uint32_t>(x);
    f->legacy.block[1] = static_cast<uint32_t>(y);
    f->legacy.block[2] = static_cast<uint32_t>(z);
    return kOk;
}

Status funcSetSharedSize(CUfunction hfunc, unsigned int bytes) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(hfunc));
    std::lock_guard lock(f->legacyMutex);
    f->legacy.sharedBytes = bytes;
    return kOk;
}

Status paramSetSize(CUfunction hfunc, unsigned int numbytes) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(hfunc));
    if (numbytes > kMaxParamBytes) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(f->legacyMutex);
    f->legacy.paramBytes = numbytes;
    return kOk;
}

Status paramSeti(CUfunction hfunc, int offset, unsigned int value) { return setParam(hfunc, offset, &value, sizeof value); }

Status paramSetf(CUfunction hfunc, int offset, float value) { return setParam(hfunc, offset, &value, sizeof value); }

Status paramSetv(CUfunction hfunc, int offset, void* ptr, unsigned int numbytes) {
    if (!ptr && numbytes) {
        NVL_TRY(core::Runtime::get().checkInit());
        return CUDA_ERROR_INVALID_VALUE;
    }
    return setParam(hfunc, offset, ptr, numbytes);
}

Status launch(CUfunction f) { return launchLegacy(f, 1, 1, nullptr); }

Status launchGrid(CUfunction f, int grid_width, int grid_height) {
    return launchLegacy(f, grid_width, grid_height, nullptr);
}

Status launchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream) {
    return launchLegacy(f, grid_width, grid_height, hStream);
}

}  // namespace nvl::api
