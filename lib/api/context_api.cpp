// Contexts: creation, the current-context stack, primary contexts.
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/device.h"
#include "core/runtime.h"

namespace nvl::api {

using core::Context;

namespace {

constexpr unsigned kSchedMask = CU_CTX_SCHED_MASK;
constexpr unsigned kAllFlags = CU_CTX_FLAGS_MASK;

bool validFlags(unsigned flags) {
    if (flags & ~kAllFlags) return false;
    switch (flags & kSchedMask) {
    case CU_CTX_SCHED_AUTO:
    case CU_CTX_SCHED_SPIN:
    case CU_CTX_SCHED_YIELD:
    case CU_CTX_SCHED_BLOCKING_SYNC:
        return true;
    default:
        return false;
    }
}

Status createContext(CUcontext* pctx, unsigned flags, CUdevice dev) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    if (!validFlags(flags)) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Context * ctx, Context::create(*d, flags, false));
    core::current::push(ctx);
    *pctx = ctx->handle();
    return kOk;
}

// A handle that names a context we made (alive or not).
Result<Context*> known(CUcontext handle) {
    if (!handle) return CUDA_ERROR_INVALID_CONTEXT;
    Context* ctx = Context::fromHandle(handle);
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
    return ctx;
}

}  // namespace

Status ctxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev) { return createContext(pctx, flags, dev); }

Status ctxCreateV3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams, unsigned int flags,
                   CUdevice dev) {
    // Execution affinity (SM partitioning) is not something nvlite offers.
    if (paramsArray && numParams > 0) return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
    return createContext(pctx, flags, dev);
}

Status ctxCreateV4(CUcontext* pctx, CUctxCreateParams* params, unsigned int flags, CUdevice dev) {
    if (params) {
        if (params->execAffinityParams && params->numExecAffinityParams > 0)
            return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
        if (params->cigParams) return CUDA_ERROR_NOT_SUPPORTED;
    }
    return createContext(pctx, flags, dev);
}

Status ctxDestroy(CUcontext ctx) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!ctx) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Context * c, known(ctx));
    if (c->isPrimary()) return CUDA_ERROR_INVALID_CONTEXT;
    if (!c->active()) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    c->deactivate();
    // Popped from the calling thread when on top; anywhere else (other
    // threads, lower on the stack) it stays, destroyed, as in libcuda.
    if (core::current::top() == c) core::current::pop();
    return kOk;
}

Status ctxGetCurrent(CUcontext* pctx) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    Context* c = core::current::top();
    *pctx = c ? c->handle() : nullptr;
    return kOk;
}

Status ctxSetCurrent(CUcontext ctx) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!ctx) {
        core::current::set(nullptr);
        return kOk;
    }
    // A destroyed context can be made current (libcuda accepts it); the
    // calls that need it then answer CUDA_ERROR_CONTEXT_IS_DESTROYED.
    NVL_ASSIGN_OR_RETURN(Context * c, known(ctx));
    core::current::set(c);
    return kOk;
}

Status ctxPushCurrent(CUcontext ctx) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!ctx) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Context * c, known(ctx));
    core::current::push(c);
    return kOk;
}

Status ctxPopCurrent(CUcontext* pctx) {
    NVL_TRY(core::Runtime::get().checkInit());
    Context* c = core::current::pop();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx) *pctx = c->handle();
    return kOk;
}

Status ctxGetDevice(CUdevice* device) {
    // Answers even for a destroyed current context, as libcuda does.
    NVL_TRY(core::Runtime::get().checkInit());
    Context* c = core::current::top();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    *device = c->device().ordinal();
    return kOk;
}

Status ctxGetFlags(unsigned int* flags) {
    NVL_ASSIGN_OR_RETURN(Context * c, core::requireCurrent());
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    *flags = c->flags();
    return kOk;
}

Status ctxSynchronize() {
    NVL_ASSIGN_OR_RETURN(Context * c, core::requireCurrent());
    return c->noted(c->synchronize());
}

// ------------------------------------------------------------ primary contexts

Status devicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    std::lock_guard lock(d->primaryMutex);
    if (!d->primary) {
        NVL_ASSIGN_OR_RETURN(d->primary, Context::create(*d, d->primaryFlags, true));
    }
    NVL_TRY(d->primary->activate(d->primaryFlags));
    ++d->primaryRefs;
    *pctx = d->primary->handle();
    return kOk;
}

Status devicePrimaryCtxRelease(CUdevice dev) {
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    std::lock_guard lock(d->primaryMutex);
    if (d->primaryRefs == 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (--d->primaryRefs == 0) d->primary->deactivate();
    return kOk;
}

Status devicePrimaryCtxReset(CUdevice dev) {
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    std::lock_guard lock(d->primaryMutex);
    if (d->primary) d->primary->deactivate();
    return kOk;
}

Status devicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(d->primaryMutex);
    *flags = d->primaryFlags;
    *active = d->primary && d->primary->active() ? 1 : 0;
    return kOk;
}

Status devicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    if (!validFlags(flags)) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(d->primaryMutex);
    d->primaryFlags = flags;
    return kOk;
}

// ------------------------------------------------------------------ profiler

// cudaProfiler.h: profiling tools attach to libcuda, never to nvlite, so
// there is nothing to start or stop; libcuda without a tool answers the same.
Status profilerStart() { return core::requireCurrent().status(); }
Status profilerStop() { return core::requireCurrent().status(); }

}  // namespace nvl::api
