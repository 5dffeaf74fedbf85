// The tables cudart keeps its per-context state through:
//   CONTEXT_LOCAL_STORAGE_INTERFACE_V0301 (c693336e-1121-df11-a8c3-68f355d89593):
//     3 slots, no size slot: put, delete, get of a value per (context, key),
//     with a destructor the driver calls when the context goes
//   CONTEXT_CHECKS (263e8860-7cd2-6143-92f6-bbd5006dfa7e): 15 slots; cudart
//     calls [2] and [3] (libcuda 580 answered 0 to both every time)
#include "api/entry.h"
#include "api/private_tables.h"
#include "core/context.h"
#include "core/runtime.h"

namespace nvl::api::tables {
namespace {

using core::Context;

constexpr char kChecks[] = "CONTEXT_CHECKS";

// The context a slot names: NULL is the current one (libcuda 580:
// CUDA_ERROR_INVALID_CONTEXT when there is none).
Result<Context*> contextFor(CUcontext ctx) {
    NVL_TRY(core::Runtime::get().checkInit());
    Context* c = ctx ? Context::fromHandle(ctx) : core::current::top();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    return c;
}

// [0] put(context, key, value, destructor)
CUresult storagePut(CUcontext ctx, void* key, void* value, core::ContextStorage::Destructor destructor) noexcept {
    return call(
        "CONTEXT_LOCAL_STORAGE[0] put",
        [&]() -> Status {
            NVL_ASSIGN_OR_RETURN(Context * c, contextFor(ctx));
            c->storage.put(key, value, destructor);
            return kOk;
        },
        ctx, key, value, destructor);
}

// [1] delete(context, key): the destructor is not called.
CUresult storageDelete(CUcontext ctx, void* key) noexcept {
    return call(
        "CONTEXT_LOCAL_STORAGE[1] delete",
        [&]() -> Status {
            NVL_ASSIGN_OR_RETURN(Context * c, contextFor(ctx));
            return c->storage.erase(key);
        },
        ctx, key);
}

// [2] get(value out, context, key): CUDA_ERROR_INVALID_HANDLE for a key
// without a value (libcuda 580's answer).
CUresult storageGet(void** value, CUcontext ctx, void* key) noexcept {
    return call(
        "CONTEXT_LOCAL_STORAGE[2] get",
        [&]() -> Status {
            NVL_ASSIGN_OR_RETURN(Context * c, contextFor(ctx));
            if (!value) return CUDA_ERROR_INVALID_VALUE;
            NVL_ASSIGN_OR_RETURN(*value, c->storage.get(key));
            return kOk;
        },
        value, ctx, key);
}

// CONTEXT_CHECKS [2](context, u32 out, pointer out): libcuda 580 wrote 0 to
// the first output and left the second alone, for primary contexts and
// others; what a nonzero answer would mean is not known.
CUresult contextCheck(CUcontext ctx, uint32_t* result, const void** unused) noexcept {
    return call(
        "CONTEXT_CHECKS[2] contextCheck",
        [&]() -> Status {
            NVL_TRY(contextFor(ctx).status());
            if (!result) return CUDA_ERROR_INVALID_VALUE;
            *result = 0;
            return kOk;
        },
        ctx, result, unused);
}

// CONTEXT_CHECKS [3](): libcuda 580 answered 0 (not a CUresult).
uint32_t checkNothing() noexcept {
    (void)call("CONTEXT_CHECKS[3] check", [] { return kOk; });
    return 0;
}

}  // namespace

const void* const* contextLocalStorage() {
    static const void* const table[] = {
        reinterpret_cast<const void*>(&storagePut),
        reinterpret_cast<const void*>(&storageDelete),
        reinterpret_cast<const void*>(&storageGet),
    };
    return table;
}

const void* const* contextChecks() {
    static const void* const table[] = {
        sizeSlot<15>(),
        reinterpret_cast<const void*>(&unknown<kChecks, 1>),
        reinterpret_cast<const void*>(&contextCheck),
        reinterpret_cast<const void*>(&checkNothing),
        reinterpret_cast<const void*>(&unknown<kChecks, 4>),
        reinterpret_cast<const void*>(&unknown<kChecks, 5>),
        reinterpret_cast<const void*>(&unknown<kChecks, 6>),
        reinterpret_cast<const void*>(&unknown<kChecks, 7>),
        reinterpret_cast<const void*>(&unknown<kChecks, 8>),
        reinterpret_cast<const void*>(&unknown<kChecks, 9>),
        reinterpret_cast<const void*>(&unknown<kChecks, 10>),
        reinterpret_cast<const void*>(&unknown<kChecks, 11>),
        reinterpret_cast<const void*>(&unknown<kChecks, 12>),
        reinterpret_cast<const void*>(&unknown<kChecks, 13>),
        reinterpret_cast<const void*>(&unknown<kChecks, 14>),
    };
    static_assert(sizeof table == 15 * sizeof(void*));
    return table;
}

}  // namespace nvl::api::tables
