// Contexts: creation, the current-context stack, primary contexts.
#include "api/entry.h"
#include "core/context.h"
#include "core/device.h"
#include "core/runtime.h"

using namespace nvl;
using nvl::api::entry;
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
    NVL_ASSIGN_OR_RETURN(std::shared_ptr<Context> ctx, Context::create(*d, flags, false));
    core::current::push(ctx.get());
    *pctx = ctx->handle();
    return kOk;
}

// cuCtxCreate_v3/_v4's execution affinity: a count without its array, or a
// negative count, is an argument error (checked against libcuda by
// compat_probe misuse-ctxcreate); any affinity asked for is one nvlite does
// not offer (SM partitioning).
Status checkAffinity(const CUexecAffinityParam* params, int count) {
    if (count < 0 || (count > 0 && !params)) return CUDA_ERROR_INVALID_VALUE;
    if (count > 0) return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
    return kOk;
}

// A handle that names a context we made (alive or recently destroyed),
// kept for the rest of the call.
Result<Context*> known(CUcontext handle) {
    if (!handle) return CUDA_ERROR_INVALID_CONTEXT;
    Context* ctx = Context::fromHandle(handle);
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
    return ctx;
}

}  // namespace

NVL_EXPORT CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
    return entry("cuCtxCreate_v2", [&] { return createContext(pctx, flags, dev); }, "%p, %u, %d",
                 static_cast<void*>(pctx), flags, dev);
}

NVL_EXPORT CUresult cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams,
                                   unsigned int flags, CUdevice dev) {
    return entry("cuCtxCreate_v3", [&]() -> Status {
        NVL_TRY(checkAffinity(paramsArray, numParams));
        return createContext(pctx, flags, dev);
    }, "%p, %p, %d, %u, %d", static_cast<void*>(pctx), static_cast<void*>(paramsArray), numParams, flags, dev);
}

NVL_EXPORT CUresult cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* params, unsigned int flags, CUdevice dev) {
    return entry("cuCtxCreate_v4", [&]() -> Status {
        if (params) {
            NVL_TRY(checkAffinity(params->execAffinityParams, params->numExecAffinityParams));
            if (params->cigParams) return CUDA_ERROR_NOT_SUPPORTED;
        }
        return createContext(pctx, flags, dev);
    }, "%p, %p, %u, %d", static_cast<void*>(pctx), static_cast<void*>(params), flags, dev);
}

NVL_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx) {
    return entry("cuCtxDestroy_v2", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!ctx) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(Context * c, known(ctx));
        if (c->isPrimary()) return CUDA_ERROR_INVALID_CONTEXT;
        // Calls using it on other threads finish first; later ones get
        // CUDA_ERROR_CONTEXT_IS_DESTROYED. A second destroy (here or racing) too.
        if (!Context::destroy(*c)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
        // Popped from the calling thread when on top; anywhere else (other
        // threads, lower on the stack) it stays, destroyed, as in libcuda.
        if (core::current::top() == c) core::current::pop();
        return kOk;
    }, "%p", static_cast<void*>(ctx));
}

NVL_EXPORT CUresult cuCtxGetCurrent(CUcontext* pctx) {
    return entry("cuCtxGetCurrent", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!pctx) return CUDA_ERROR_INVALID_VALUE;
        Context* c = core::current::top();
        *pctx = c ? c->handle() : nullptr;
        return kOk;
    }, "%p", static_cast<void*>(pctx));
}

NVL_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
    return entry("cuCtxSetCurrent", [&]() -> Status {
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
    }, "%p", static_cast<void*>(ctx));
}

NVL_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
    return entry("cuCtxPushCurrent_v2", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!ctx) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(Context * c, known(ctx));
        core::current::push(c);
        return kOk;
    }, "%p", static_cast<void*>(ctx));
}

NVL_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext* pctx) {
    return entry("cuCtxPopCurrent_v2", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        Context* c = core::current::pop();
        if (!c) return CUDA_ERROR_INVALID_CONTEXT;
        if (pctx) *pctx = c->handle();
        return kOk;
    }, "%p", static_cast<void*>(pctx));
}

NVL_EXPORT CUresult cuCtxGetDevice(CUdevice* device) {
    return entry("cuCtxGetDevice", [&]() -> Status {
        // Answers even for a destroyed current context, as libcuda does.
        NVL_TRY(core::Runtime::get().checkInit());
        Context* c = core::current::top();
        if (!c) return CUDA_ERROR_INVALID_CONTEXT;
        if (!device) return CUDA_ERROR_INVALID_VALUE;
        *device = c->device().ordinal();
        return kOk;
    }, "%p", static_cast<void*>(device));
}

NVL_EXPORT CUresult cuCtxGetFlags(unsigned int* flags) {
    return entry("cuCtxGetFlags", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Context * c, core::requireCurrent());
        if (!flags) return CUDA_ERROR_INVALID_VALUE;
        *flags = c->flags();
        return kOk;
    }, "%p", static_cast<void*>(flags));
}

NVL_EXPORT CUresult cuCtxSynchronize(void) {
    return entry("cuCtxSynchronize", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Context * c, core::requireCurrent());
        return c->noted(c->synchronize());
    }, "");
}

// ------------------------------------------------------------ primary contexts

NVL_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
    return entry("cuDevicePrimaryCtxRetain", [&]() -> Status {
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
    }, "%p, %d", static_cast<void*>(pctx), dev);
}

NVL_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
    return entry("cuDevicePrimaryCtxRelease_v2", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
        std::lock_guard lock(d->primaryMutex);
        if (d->primaryRefs == 0) return CUDA_ERROR_INVALID_CONTEXT;
        if (--d->primaryRefs == 0) d->primary->deactivate();
        return kOk;
    }, "%d", dev);
}

NVL_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
    return entry("cuDevicePrimaryCtxReset_v2", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
        std::lock_guard lock(d->primaryMutex);
        if (d->primary) d->primary->deactivate();
        return kOk;
    }, "%d", dev);
}

NVL_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
    return entry("cuDevicePrimaryCtxGetState", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
        if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
        std::lock_guard lock(d->primaryMutex);
        *flags = d->primaryFlags;
        *active = d->primary && d->primary->active() ? 1 : 0;
        return kOk;
    }, "%d, %p, %p", dev, static_cast<void*>(flags), static_cast<void*>(active));
}

NVL_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
    return entry("cuDevicePrimaryCtxSetFlags_v2", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
        if (!validFlags(flags)) return CUDA_ERROR_INVALID_VALUE;
        std::lock_guard lock(d->primaryMutex);
        d->primaryFlags = flags;
        return kOk;
    }, "%d, %u", dev, flags);
}
