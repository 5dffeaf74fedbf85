// Modules, functions, launches, occupancy.
#include <cstring>

#include "api/api_internal.h"
#include "api/entry.h"
#include "core/context.h"
#include "core/device.h"
#include "core/launch.h"
#include "core/link.h"
#include "core/module.h"
#include "core/occupancy.h"
#include "core/runtime.h"

using namespace nvl;
using nvl::api::entry;
using core::Context;
using core::Function;
using core::Module;

namespace {

Status publish(CUmodule* module, Result<Module*> m) {
    if (!m) return m.status();
    *module = (*m)->handle();
    return kOk;
}

// The object behind a function or module handle: one of ours, its module
// still loaded, and the call holding passes through the gates of its
// context and module (an unload or destroy racing the call waits for it).
Module& moduleOf(Module* m) { return *m; }
Module& moduleOf(Function* f) { return f->module(); }
template <class T, class Handle>
Result<T*> live(Handle h) {
    T* p = T::fromHandle(h);
    if (!p || !p->loaded()) return CUDA_ERROR_INVALID_HANDLE;
    Module& m = moduleOf(p);
    if (!core::CallScope::use(m.context()) || !core::CallScope::use(m)) return CUDA_ERROR_INVALID_HANDLE;
    return p;
}
Result<Function*> liveFunction(CUfunction f) { return live<Function>(f); }
Result<Module*> liveModule(CUmodule m) { return live<Module>(m); }

Status launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
              unsigned shared, CUstream stream, void** kernelParams, void** extra) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, api::resolveStream(stream));
    NVL_ASSIGN_OR_RETURN(Function * fn, liveFunction(f));
    if (&fn->module().context() != &st->context()) return CUDA_ERROR_INVALID_HANDLE;
    core::LaunchRequest r{{gx, gy, gz}, {bx, by, bz}, shared, kernelParams, extra};
    return st->context().noted(core::launchKernel(*st, *fn, r));
}

}  // namespace

NVL_EXPORT CUresult cuModuleLoad(CUmodule* module, const char* fname) {
    return entry("cuModuleLoad", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
        if (!module || !fname) return CUDA_ERROR_INVALID_VALUE;
        core::JitOptions jit;
        return publish(module, Module::loadFile(*ctx, fname, jit));
    }, "%p, %s", static_cast<void*>(module), fname ? fname : "(null)");
}

NVL_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
    return entry("cuModuleLoadData", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
        if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
        core::JitOptions jit;
        return publish(module, Module::loadData(*ctx, image, jit));
    }, "%p, %p", static_cast<void*>(module), image);
}

NVL_EXPORT CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions,
                                      CUjit_option* options, void** optionValues) {
    return entry("cuModuleLoadDataEx", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
        if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
        core::JitOptions jit;
        NVL_TRY(core::parseJitOptions(numOptions, options, optionValues, &jit));
        return publish(module, Module::loadData(*ctx, image, jit));
    }, "%p, %p, %u", static_cast<void*>(module), image, numOptions);
}

NVL_EXPORT CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
    return entry("cuModuleLoadFatBinary", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
        if (!module || !fatCubin) return CUDA_ERROR_INVALID_VALUE;
        core::JitOptions jit;
        return publish(module, Module::loadData(*ctx, fatCubin, jit));
    }, "%p, %p", static_cast<void*>(module), fatCubin);
}

NVL_EXPORT CUresult cuModuleUnload(CUmodule hmod) {
    return entry("cuModuleUnload", [&]() -> Status {
        NVL_TRY(core::checkCurrentIfAny());
        NVL_ASSIGN_OR_RETURN(Module * m, liveModule(hmod));
        return m->unload();
    }, "%p", static_cast<void*>(hmod));
}

NVL_EXPORT CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
    return entry("cuModuleGetFunction", [&]() -> Status {
        NVL_TRY(core::requireCurrent().status());
        if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(Module * m, liveModule(hmod));
        NVL_ASSIGN_OR_RETURN(Function * f, m->function(name));
        *hfunc = f->handle();
        return kOk;
    }, "%p, %p, %s", static_cast<void*>(hfunc), static_cast<void*>(hmod), name ? name : "(null)");
}

NVL_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes, CUmodule hmod, const char* name) {
    return entry("cuModuleGetGlobal_v2", [&]() -> Status {
        NVL_TRY(core::requireCurrent().status());
        if (!name || (!dptr && !bytes)) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(Module * m, liveModule(hmod));
        NVL_ASSIGN_OR_RETURN(Module::GlobalRange g, m->global(name));
        if (dptr) *dptr = g.address;
        if (bytes) *bytes = g.bytes;
        return kOk;
    }, "%p, %p, %p, %s", static_cast<void*>(dptr), static_cast<void*>(bytes), static_cast<void*>(hmod),
       name ? name : "(null)");
}

NVL_EXPORT CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) {
    return entry("cuModuleGetLoadingMode", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!mode) return CUDA_ERROR_INVALID_VALUE;
        *mode = CU_MODULE_EAGER_LOADING;  // modules are placed and relocated when loaded
        return kOk;
    }, "%p", static_cast<void*>(mode));
}

NVL_EXPORT CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attribute, CUfunction hfunc) {
    const int attrib = api::enumValue(attribute);
    return entry("cuFuncGetAttribute", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!pi) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(Function * f, liveFunction(hfunc));
        const core::KernelInfo& k = f->kernel();
        switch (attrib) {
        case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = static_cast<int>(f->maxThreadsPerBlock()); break;
        case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = static_cast<int>(k.staticSharedBytes); break;
        case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: {
            // The program's __constant__ data (bank 3), not the compiler's banks.
            constexpr uint32_t kUserConstantBank = 3;
            uint64_t bytes = 0;
            for (const auto& b : k.banks)
                if (b.bank == kUserConstantBank) bytes += b.size;
            *pi = static_cast<int>(bytes);
            break;
        }
        case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = static_cast<int>(k.localBytesPerThread); break;
        case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = static_cast<int>(k.registers); break;
        case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = static_cast<int>(f->module().ptxVersion()); break;
        case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = static_cast<int>(f->module().binaryVersion()); break;
        case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *pi = 0; break;
        case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
            *pi = static_cast<int>(f->maxDynamicSharedBytes.load());
            break;
        case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = f->preferredCarveout.load(); break;
        case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: *pi = k.explicitCluster ? 1 : 0; break;
        case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: *pi = static_cast<int>(k.clusterDims[0]); break;
        case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: *pi = static_cast<int>(k.clusterDims[1]); break;
        case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: *pi = static_cast<int>(k.clusterDims[2]); break;
        case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *pi = 0; break;
        case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *pi = 0; break;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
        return kOk;
    }, "%p, %d, %p", static_cast<void*>(pi), attrib, static_cast<void*>(hfunc));
}

NVL_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attribute, int value) {
    const int attrib = api::enumValue(attribute);
    return entry("cuFuncSetAttribute", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        NVL_ASSIGN_OR_RETURN(Function * f, liveFunction(hfunc));
        const core::Device& dev = f->module().context().device();
        switch (attrib) {
        case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: {
            NVL_ASSIGN_OR_RETURN(int optin, dev.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
            const int room = optin - static_cast<int>(f->kernel().staticSharedBytes);
            if (value < 0 || value > room) return CUDA_ERROR_INVALID_VALUE;
            f->maxDynamicSharedBytes = static_cast<uint32_t>(value);
            return kOk;
        }
        case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
            if (value < -1 || value > 100) return CUDA_ERROR_INVALID_VALUE;
            f->preferredCarveout = value;
            return kOk;
        default:
            return CUDA_ERROR_INVALID_VALUE;
        }
    }, "%p, %d, %d", static_cast<void*>(hfunc), attrib, value);
}

NVL_EXPORT CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache cacheConfig) {
    const int config = api::enumValue(cacheConfig);
    return entry("cuFuncSetCacheConfig", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        NVL_ASSIGN_OR_RETURN(Function * f, liveFunction(hfunc));
        if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
        // A preference only: the launch picks the carveout its shared memory needs.
        f->cacheConfig = config;
        return kOk;
    }, "%p, %d", static_cast<void*>(hfunc), config);
}

NVL_EXPORT CUresult cuFuncGetName(const char** name, CUfunction hfunc) {
    return entry("cuFuncGetName", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!name || !hfunc) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(Function * f, liveFunction(hfunc));
        *name = f->name().c_str();
        return kOk;
    }, "%p, %p", static_cast<void*>(name), static_cast<void*>(hfunc));
}

NVL_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                  unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                  unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra) {
    return entry("cuLaunchKernel", [&] {
        return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                      kernelParams, extra);
    }, "%p, %u, %u, %u, %u, %u, %u, %u, %p", static_cast<void*>(f), gridDimX, gridDimY, gridDimZ, blockDimX,
       blockDimY, blockDimZ, sharedMemBytes, static_cast<void*>(hStream));
}

NVL_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                       unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                       unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                       void** kernelParams, void** extra) {
    return entry("cuLaunchKernel_ptsz", [&] {
        return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                      hStream ? hStream : CU_STREAM_PER_THREAD, kernelParams, extra);
    }, "%p, %u, %u, %u, %u, %u, %u, %u, %p", static_cast<void*>(f), gridDimX, gridDimY, gridDimZ, blockDimX,
       blockDimY, blockDimZ, sharedMemBytes, static_cast<void*>(hStream));
}

// ------------------------------------------------------------------ occupancy

NVL_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func,
                                                                        int blockSize, size_t dynamicSMemSize,
                                                                        unsigned int flags) {
    return entry("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!numBlocks) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(Function * f, liveFunction(func));
        NVL_ASSIGN_OR_RETURN(*numBlocks, core::maxActiveBlocksPerSm(*f, blockSize, dynamicSMemSize, flags));
        return kOk;
    }, "%p, %p, %d, %zu, %u", static_cast<void*>(numBlocks), static_cast<void*>(func), blockSize, dynamicSMemSize,
       flags);
}

NVL_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                               size_t dynamicSMemSize) {
    return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

NVL_EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize, CUfunction func,
                                                             CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                             size_t dynamicSMemSize, int blockSizeLimit,
                                                             unsigned int flags) {
    return entry("cuOccupancyMaxPotentialBlockSizeWithFlags", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!minGridSize || !blockSize) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(Function * f, liveFunction(func));
        NVL_ASSIGN_OR_RETURN(core::PotentialBlockSize p,
                             core::maxPotentialBlockSize(*f, blockSizeToDynamicSMemSize, dynamicSMemSize,
                                                         blockSizeLimit, flags));
        *minGridSize = p.minGridSize;
        *blockSize = p.blockSize;
        return kOk;
    }, "%p, %p, %p, %zu, %d, %u", static_cast<void*>(minGridSize), static_cast<void*>(blockSize),
       static_cast<void*>(func), dynamicSMemSize, blockSizeLimit, flags);
}

NVL_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func,
                                                    CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                    size_t dynamicSMemSize, int blockSizeLimit) {
    return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                                     dynamicSMemSize, blockSizeLimit, 0);
}

// ------------------------------------------------------------------ linking

NVL_EXPORT CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option* options, void** optionValues,
                                   CUlinkState* stateOut) {
    return entry("cuLinkCreate_v2", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
        if (!stateOut) return CUDA_ERROR_INVALID_VALUE;
        core::JitOptions jit;
        NVL_TRY(core::parseJitOptions(numOptions, options, optionValues, &jit));
        NVL_ASSIGN_OR_RETURN(*stateOut, core::Link::create(*ctx, jit));
        return kOk;
    }, "%u, %p, %p, %p", numOptions, static_cast<void*>(options), static_cast<void*>(optionValues),
       static_cast<void*>(stateOut));
}

NVL_EXPORT CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType inputType, void* data, size_t size,
                                    const char* name, unsigned int numOptions, CUjit_option* options,
                                    void** optionValues) {
    const int type = api::enumValue(inputType);
    return entry("cuLinkAddData_v2", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        NVL_ASSIGN_OR_RETURN(auto link, core::Link::fromHandle(state));
        if (!data || size == 0) return CUDA_ERROR_INVALID_VALUE;
        if (numOptions && (!options || !optionValues)) return CUDA_ERROR_INVALID_VALUE;
        // Per-input JIT options have no nvJitLink counterpart; libcuda applies them to PTX only.
        return link->add(type, data, size, name);
    }, "%p, %d, %p, %zu, %s", static_cast<void*>(state), type, data, size, name ? name : "(null)");
}

NVL_EXPORT CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType inputType, const char* path,
                                    unsigned int numOptions, CUjit_option* options, void** optionValues) {
    const int type = api::enumValue(inputType);
    return entry("cuLinkAddFile_v2", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        NVL_ASSIGN_OR_RETURN(auto link, core::Link::fromHandle(state));
        if (!path) return CUDA_ERROR_INVALID_VALUE;
        if (numOptions && (!options || !optionValues)) return CUDA_ERROR_INVALID_VALUE;
        return link->addFile(type, path);
    }, "%p, %d, %s", static_cast<void*>(state), type, path ? path : "(null)");
}

NVL_EXPORT CUresult cuLinkComplete(CUlinkState state, void** cubinOut, size_t* sizeOut) {
    return entry("cuLinkComplete", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        NVL_ASSIGN_OR_RETURN(auto link, core::Link::fromHandle(state));
        if (!cubinOut || !sizeOut) return CUDA_ERROR_INVALID_VALUE;
        return link->complete(cubinOut, sizeOut);
    }, "%p, %p, %p", static_cast<void*>(state), static_cast<void*>(cubinOut), static_cast<void*>(sizeOut));
}

NVL_EXPORT CUresult cuLinkDestroy(CUlinkState state) {
    return entry("cuLinkDestroy", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        return core::Link::destroy(state);
    }, "%p", static_cast<void*>(state));
}
