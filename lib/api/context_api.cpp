// Contexts: creation, the current-context stack, primary contexts.
#include <algorithm>

#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/device.h"
#include "core/device_launch.h"
#include "core/devrt.h"
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
    NVL_ASSIGN_OR_RETURN(std::shared_ptr<Context> ctx, Context::create(*d, flags, false));
    core::current::push(ctx.get());
    *pctx = ctx->handle();
    return kOk;
}

// cuCtxCreate_v3/_v4's execution affinity, as libcuda 580 answers
// (compat_probe misuse-ctxcreate, tests/compat/expected/libcuda_misuse.txt):
// a positive count without its array is an argument error, a count of 0 or
// less asks for nothing, and any affinity asked for is one nvlite does not
// offer (SM partitioning).
Status checkAffinity(const CUexecAffinityParam* params, int count) {
    if (count > 0 && !params) return CUDA_ERROR_INVALID_VALUE;
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

// A context argument of the _v2 getters and cuCtxGetId: NULL is the
// current one.
Result<Context*> contextOrCurrent(CUcontext ctx) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!ctx) {
        Context* c = core::current::top();
        if (!c) return CUDA_ERROR_INVALID_CONTEXT;
        return c;
    }
    return known(ctx);
}

// The most local memory a thread may have (sm_90: 512 KiB).
constexpr size_t kMaxStackBytes = 512 << 10;

}  // namespace

Status ctxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev) { return createContext(pctx, flags, dev); }

Status ctxCreateV3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams, unsigned int flags,
                   CUdevice dev) {
    NVL_TRY(checkAffinity(paramsArray, numParams));
    return createContext(pctx, flags, dev);
}

Status ctxCreateV4(CUcontext* pctx, CUctxCreateParams* params, unsigned int flags, CUdevice dev) {
    if (params) {
        // CIG (a graphics API's context shared with CUDA) is not offered; as
        // libcuda 580 answers: with affinity too NOT_SUPPORTED, without its
        // data INVALID_VALUE.
        if (params->cigParams) {
            if (params->numExecAffinityParams > 0) return CUDA_ERROR_NOT_SUPPORTED;
            if (!params->cigParams->sharedData) return CUDA_ERROR_INVALID_VALUE;
            return CUDA_ERROR_NOT_SUPPORTED;
        }
        NVL_TRY(checkAffinity(params->execAffinityParams, params->numExecAffinityParams));
    }
    return createContext(pctx, flags, dev);
}

Status ctxDestroy(CUcontext ctx) {
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
    // Answers even for a destroyed current context, as libcuda does.
    NVL_TRY(core::Runtime::get().checkInit());
    Context* c = core::current::top();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    *flags = c->flags();
    return kOk;
}

Status ctxSynchronize() {
    NVL_ASSIGN_OR_RETURN(Context * c, core::requireCurrent());
    return synchronized(*c, c->noted(c->synchronize()));
}

Status ctxSynchronizeV2(CUcontext ctx) {
    NVL_ASSIGN_OR_RETURN(Context * c, contextOrCurrent(ctx));
    if (!c->active()) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (CUresult sticky = c->stickyError(); sticky != CUDA_SUCCESS) return sticky;
    return synchronized(*c, c->noted(c->synchronize()));
}

Status ctxGetDeviceV2(CUdevice* device, CUcontext ctx) {
    NVL_ASSIGN_OR_RETURN(Context * c, contextOrCurrent(ctx));
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    *device = c->device().ordinal();
    return kOk;
}

Status ctxSetFlags(unsigned int flags) {
    NVL_ASSIGN_OR_RETURN(Context * c, core::requireCurrent());
    if (!validFlags(flags)) return CUDA_ERROR_INVALID_VALUE;
    c->setFlags(flags);
    return kOk;
}

Status ctxGetId(CUcontext ctx, unsigned long long* ctxId) {
    NVL_ASSIGN_OR_RETURN(Context * c, contextOrCurrent(ctx));
    if (!c->active()) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (!ctxId) return CUDA_ERROR_INVALID_VALUE;
    *ctxId = c->id();
    return kOk;
}

// The API version of contexts made through cuCtxCreate_v2 and later (every
// context nvlite makes): 3020.
Status ctxGetApiVersion(CUcontext ctx, unsigned int* version) {
    constexpr unsigned kApiVersion = 3020;
    NVL_ASSIGN_OR_RETURN(Context * c, contextOrCurrent(ctx));
    if (!c->active()) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = kApiVersion;
    return kOk;
}

// ------------------------------------------------------------------ limits

// CU_LIMIT_STACK_SIZE is the per-thread stack every launch gets; printf's
// FIFO and the device heap belong to the context's device runtime. The two
// hints (L2 fetch granularity, persisting L2 size) are kept, clamped, for
// cuCtxGetLimit. The limits of features nvlite does not provide (the device
// runtime's synchronisation depth, a CDP1 limit; CIG's shared-memory fallback) are
// CUDA_ERROR_UNSUPPORTED_LIMIT, libcuda's answer for limits a device does not
// have.
Status ctxGetLimit(size_t* pvalue, CUlimit limit) {
    NVL_ASSIGN_OR_RETURN(Context * c, core::requireCurrent());
    if (!pvalue) return CUDA_ERROR_INVALID_VALUE;
    switch (limit) {
    case CU_LIMIT_STACK_SIZE: *pvalue = c->stackBytes(); return kOk;
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY: *pvalue = c->l2FetchGranularity.load(); return kOk;
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE: *pvalue = c->persistingL2Bytes.load(); return kOk;
    case CU_LIMIT_PRINTF_FIFO_SIZE: *pvalue = c->devrt().fifoLimit(); return kOk;
    case CU_LIMIT_MALLOC_HEAP_SIZE: *pvalue = c->devrt().heapLimit(); return kOk;
    // Read-only facts (libcuda 580: the opt-in shared memory per block, and 0
    // for a context that is not a CIG context, which nvlite never makes);
    // cuBLAS reads both.
    case CU_LIMIT_SHMEM_SIZE: {
        NVL_ASSIGN_OR_RETURN(int optin, c->device().attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
        *pvalue = static_cast<size_t>(optin);
        return kOk;
    }
    case CU_LIMIT_CIG_ENABLED: *pvalue = 0; return kOk;
    case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: *pvalue = c->deviceLaunches().pendingLimit(); return kOk;
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
    case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED: return CUDA_ERROR_UNSUPPORTED_LIMIT;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

Status ctxSetLimit(CUlimit limit, size_t value) {
    NVL_ASSIGN_OR_RETURN(Context * c, core::requireCurrent());
    switch (limit) {
    case CU_LIMIT_STACK_SIZE:
        if (value > kMaxStackBytes) return CUDA_ERROR_INVALID_VALUE;
        return c->setStackBytes(static_cast<uint32_t>(value));
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY: {
        // 0 to 128 bytes, a power of two from 32 (a hint).
        size_t g = value >= 128 ? 128 : value >= 64 ? 64 : value >= 32 ? 32 : 0;
        c->l2FetchGranularity.store(g);
        return kOk;
    }
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE: {
        NVL_ASSIGN_OR_RETURN(int most, c->device().attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE));
        c->persistingL2Bytes.store(std::min(value, static_cast<size_t>(most)));
        return kOk;
    }
    // Smaller values are raised to the smallest libcuda keeps.
    case CU_LIMIT_PRINTF_FIFO_SIZE:
        return c->devrt().setFifoLimit(std::max(value, core::DeviceRuntime::kMinFifoBytes));
    case CU_LIMIT_MALLOC_HEAP_SIZE:
        return c->devrt().setHeapLimit(std::max(value, core::DeviceRuntime::kMinHeapBytes));
    case CU_LIMIT_SHMEM_SIZE:
    case CU_LIMIT_CIG_ENABLED: return CUDA_ERROR_NOT_PERMITTED;  // read-only (libcuda 580)
    case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: return c->deviceLaunches().setPendingLimit(value);
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
    case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED: return CUDA_ERROR_UNSUPPORTED_LIMIT;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

// A preference only, as in libcuda: launches choose the shared-memory
// carveout their kernels need.
Status ctxGetCacheConfig(CUfunc_cache* pconfig) {
    NVL_ASSIGN_OR_RETURN(Context * c, core::requireCurrent());
    if (!pconfig) return CUDA_ERROR_INVALID_VALUE;
    *pconfig = c->cacheConfig.load();
    return kOk;
}

Status ctxSetCacheConfig(CUfunc_cache config) {
    NVL_ASSIGN_OR_RETURN(Context * c, core::requireCurrent());
    if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
    c->cacheConfig.store(config);
    return kOk;
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

// A primary context about to go first runs its context-local storage
// destructors (cudart's state), outside the device's lock: they may call the
// driver, the cuDevicePrimaryCtx* functions included.
Status devicePrimaryCtxRelease(CUdevice dev) {
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    std::shared_ptr<Context> last;  // kept alive while its storage goes
    {
        std::lock_guard lock(d->primaryMutex);
        if (d->primaryRefs == 0) return CUDA_ERROR_INVALID_CONTEXT;
        if (d->primaryRefs == 1) last = d->primary;
    }
    if (last) last->storage.destroyAll(last->handle());
    std::lock_guard lock(d->primaryMutex);
    if (d->primaryRefs == 0) return CUDA_ERROR_INVALID_CONTEXT;  // released meanwhile
    if (--d->primaryRefs == 0) d->primary->deactivate();
    return kOk;
}

Status devicePrimaryCtxReset(CUdevice dev) {
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    std::shared_ptr<Context> primary;
    {
        std::lock_guard lock(d->primaryMutex);
        primary = d->primary;
    }
    if (primary) primary->storage.destroyAll(primary->handle());
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
