// CUDART_INTERFACE (6bd5fb6c-5bf4-e74a-8987-d93912fd9df9): cudart's way to
// the primary context and, in older cudarts, to modules made from the fat
// binaries nvcc embeds (cudart 13 loads those through cuLibraryLoadData).
// 13 slots; slot 10 is empty in libcuda 580.
#include "api/entry.h"
#include "api/entry_impls.h"
#include "api/private_tables.h"
#include "core/context.h"
#include "core/device.h"
#include "core/runtime.h"

namespace nvl::api::tables {
namespace {

constexpr char kName[] = "CUDART_INTERFACE";

// The magic of the __fatBinC_Wrapper_t nvcc emits: {u32 magic, u32 version,
// const void* fatbin, const void* prelinked fatbins (version 2)}.
constexpr uint32_t kWrapperMagic = 0x466243B1;

Status loadWrapper(CUmodule* module, const void* wrapper) {
    if (!module || !wrapper) return CUDA_ERROR_INVALID_VALUE;
    if (*static_cast<const uint32_t*>(wrapper) != kWrapperMagic) return CUDA_ERROR_INVALID_IMAGE;
    return moduleLoadData(module, wrapper);
}

// [1] A module from a fat-binary wrapper, in the current context.
CUresult moduleFromWrapper(CUmodule* module, const void* wrapper) noexcept {
    return call("CUDART_INTERFACE[1] moduleFromWrapper", [&] { return loadWrapper(module, wrapper); }, module,
                wrapper);
}

// [2] The device's primary context, made if it was not yet, neither retained
// nor activated (libcuda answers the same handle cuDevicePrimaryCtxRetain
// later gives).
CUresult primaryContext(CUcontext* pctx, CUdevice dev) noexcept {
    return call(
        "CUDART_INTERFACE[2] primaryContext",
        [&]() -> Status {
            NVL_TRY(core::Runtime::get().checkInit());
            if (!pctx) return CUDA_ERROR_INVALID_VALUE;
            NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
            std::lock_guard lock(d->primaryMutex);
            if (!d->primary) {
                NVL_ASSIGN_OR_RETURN(d->primary, core::Context::create(*d, d->primaryFlags, true));
            }
            *pctx = d->primary->handle();
            return kOk;
        },
        pctx, dev);
}

// [6] As [1], with three more arguments whose meaning is unknown: only
// their empty values are accepted.
CUresult moduleFromWrapperEx(CUmodule* module, const void* wrapper, void* arg3, void* arg4, unsigned arg5) noexcept {
    return call(
        "CUDART_INTERFACE[6] moduleFromWrapperEx",
        [&]() -> Status {
            if (arg3 || arg4 || arg5) return CUDA_ERROR_NOT_SUPPORTED;
            return loadWrapper(module, wrapper);
        },
        module, wrapper, arg3, arg4, arg5);
}

// [7] Takes one word and answers nothing; what libcuda does with it is
// unknown (ZLUDA ignores it too).
void ignoreWord(uintptr_t word) noexcept {
    (void)call("CUDART_INTERFACE[7] ignored", [] { return kOk; }, word);
}

// [8] A module from a fatbin container, with the three unknown arguments of [6].
CUresult moduleFromFatbin(const void* fatbin, CUmodule* module, void* arg3, void* arg4, unsigned arg5) noexcept {
    return call(
        "CUDART_INTERFACE[8] moduleFromFatbin",
        [&]() -> Status {
            if (arg3 || arg4 || arg5) return CUDA_ERROR_NOT_SUPPORTED;
            if (!module || !fatbin) return CUDA_ERROR_INVALID_VALUE;
            return moduleLoadData(module, fatbin);
        },
        fatbin, module, arg3, arg4, arg5);
}

// [12] Loads the PTX compilers in libcuda; nvlite loads nvJitLink when a
// module needs it.
CUresult loadCompilers() noexcept {
    return call("CUDART_INTERFACE[12] loadCompilers", [] { return core::Runtime::get().checkInit(); });
}

}  // namespace

const void* const* cudartInterface() {
    static const void* const table[] = {
        sizeSlot<13>(),
        reinterpret_cast<const void*>(&moduleFromWrapper),
        reinterpret_cast<const void*>(&primaryContext),
        reinterpret_cast<const void*>(&unknown<kName, 3>),
        reinterpret_cast<const void*>(&unknown<kName, 4>),
        reinterpret_cast<const void*>(&unknown<kName, 5>),
        reinterpret_cast<const void*>(&moduleFromWrapperEx),
        reinterpret_cast<const void*>(&ignoreWord),
        reinterpret_cast<const void*>(&moduleFromFatbin),
        reinterpret_cast<const void*>(&unknown<kName, 9>),
        nullptr,
        reinterpret_cast<const void*>(&unknown<kName, 11>),
        reinterpret_cast<const void*>(&loadCompilers),
    };
    static_assert(sizeof table == 13 * sizeof(void*));
    return table;
}

}  // namespace nvl::api::tables
