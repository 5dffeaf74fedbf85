// Modules, functions, launches, occupancy.
#include <cstring>

#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/device.h"
#include "core/launch.h"
#include "core/link.h"
#include "core/module.h"
#include "core/occupancy.h"
#include "core/runtime.h"

namespace nvl::api {

using core::Context;
using core::Function;
using core::Module;

namespace {

Status publish(CUmodule* module, Result<Module*> m) {
    if (!m) return m.status();
    *module = (*m)->handle();
    return kOk;
}

// The object behind a function or module handle: one of ours, and its
// module still loaded.
template <class T, class Handle>
Result<T*> live(Handle h) {
    T* p = T::fromHandle(h);
    if (!p || !p->loaded()) return CUDA_ERROR_INVALID_HANDLE;
    return p;
}
Result<Function*> liveFunction(CUfunction f) { return live<Function>(f); }
Result<Module*> liveModule(CUmodule m) { return live<Module>(m); }

Status launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
              unsigned shared, CUstream stream, void** kernelParams, void** extra) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(stream));
    NVL_ASSIGN_OR_RETURN(Function * fn, liveFunction(f));
    if (&fn->module().context() != &st->context()) return CUDA_ERROR_INVALID_HANDLE;
    core::LaunchRequest r{{gx, gy, gz}, {bx, by, bz}, shared, kernelParams, extra};
    return st->context().noted(core::launchKernel(*st, *fn, r));
}

}  // namespace

Status moduleLoad(CUmodule* module, const char* fname) {
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    if (!module || !fname) return CUDA_ERROR_INVALID_VALUE;
    core::JitOptions jit;
    return publish(module, Module::loadFile(*ctx, fname, jit));
}

Status moduleLoadData(CUmodule* module, const void* image) {
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    core::JitOptions jit;
    return publish(module, Module::loadData(*ctx, image, jit));
}

Status moduleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions, CUjit_option* options,
                        void** optionValues) {
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    core::JitOptions jit;
    NVL_TRY(core::parseJitOptions(numOptions, options, optionValues, &jit));
    return publish(module, Module::loadData(*ctx, image, jit));
}

Status moduleLoadFatBinary(CUmodule* module, const void* fatCubin) {
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    if (!module || !fatCubin) return CUDA_ERROR_INVALID_VALUE;
    core::JitOptions jit;
    return publish(module, Module::loadData(*ctx, fatCubin, jit));
}

Status moduleUnload(CUmodule hmod) {
    NVL_TRY(core::checkCurrentIfAny());
    NVL_ASSIGN_OR_RETURN(Module * m, liveModule(hmod));
    return m->unload();
}

Status moduleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
    NVL_TRY(core::requireCurrent().status());
    if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Module * m, liveModule(hmod));
    NVL_ASSIGN_OR_RETURN(Function * f, m->function(name));
    *hfunc = f->handle();
    return kOk;
}

Status moduleGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUmodule hmod, const char* name) {
    NVL_TRY(core::requireCurrent().status());
    if (!name || (!dptr && !bytes)) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Module * m, liveModule(hmod));
    NVL_ASSIGN_OR_RETURN(Module::GlobalRange g, m->global(name));
    if (dptr) *dptr = g.address;
    if (bytes) *bytes = g.bytes;
    return kOk;
}

Status moduleGetLoadingMode(CUmoduleLoadingMode* mode) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    *mode = CU_MODULE_EAGER_LOADING;  // modules are placed and relocated when loaded
    return kOk;
}

Status funcGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
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
}

Status funcSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
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
}

Status funcSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Function * f, liveFunction(hfunc));
    if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
    // A preference only: the launch picks the carveout its shared memory needs.
    f->cacheConfig = config;
    return kOk;
}

Status funcGetName(const char** name, CUfunction hfunc) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!name || !hfunc) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Function * f, liveFunction(hfunc));
    *name = f->name().c_str();
    return kOk;
}

Status launchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                    unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
                    CUstream hStream, void** kernelParams, void** extra) {
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                  kernelParams, extra);
}

// ------------------------------------------------------------------ occupancy

Status occupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func, int blockSize,
                                                          size_t dynamicSMemSize, unsigned int flags) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!numBlocks) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Function * f, liveFunction(func));
    NVL_ASSIGN_OR_RETURN(*numBlocks, core::maxActiveBlocksPerSm(*f, blockSize, dynamicSMemSize, flags));
    return kOk;
}

Status occupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                 size_t dynamicSMemSize) {
    return occupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

Status occupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize, CUfunction func,
                                               CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                               int blockSizeLimit, unsigned int flags) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!minGridSize || !blockSize) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Function * f, liveFunction(func));
    NVL_ASSIGN_OR_RETURN(core::PotentialBlockSize p,
                         core::maxPotentialBlockSize(*f, blockSizeToDynamicSMemSize, dynamicSMemSize,
                                                     blockSizeLimit, flags));
    *minGridSize = p.minGridSize;
    *blockSize = p.blockSize;
    return kOk;
}

Status occupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func,
                                      CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                      int blockSizeLimit) {
    return occupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                                   dynamicSMemSize, blockSizeLimit, 0);
}

// ------------------------------------------------------------------ linking

Status linkCreate(unsigned int numOptions, CUjit_option* options, void** optionValues, CUlinkState* stateOut) {
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    if (!stateOut) return CUDA_ERROR_INVALID_VALUE;
    core::JitOptions jit;
    NVL_TRY(core::parseJitOptions(numOptions, options, optionValues, &jit));
    NVL_ASSIGN_OR_RETURN(*stateOut, core::Link::create(*ctx, jit));
    return kOk;
}

Status linkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                   unsigned int numOptions, CUjit_option* options, void** optionValues) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(auto link, core::Link::fromHandle(state));
    if (!data || size == 0) return CUDA_ERROR_INVALID_VALUE;
    if (numOptions && (!options || !optionValues)) return CUDA_ERROR_INVALID_VALUE;
    // Per-input JIT options have no nvJitLink counterpart; libcuda applies them to PTX only.
    return link->add(type, data, size, name);
}

Status linkAddFile(CUlinkState state, CUjitInputType type, const char* path, unsigned int numOptions,
                   CUjit_option* options, void** optionValues) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(auto link, core::Link::fromHandle(state));
    if (!path) return CUDA_ERROR_INVALID_VALUE;
    if (numOptions && (!options || !optionValues)) return CUDA_ERROR_INVALID_VALUE;
    return link->addFile(type, path);
}

Status linkComplete(CUlinkState state, void** cubinOut, size_t* sizeOut) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(auto link, core::Link::fromHandle(state));
    if (!cubinOut || !sizeOut) return CUDA_ERROR_INVALID_VALUE;
    return link->complete(cubinOut, sizeOut);
}

Status linkDestroy(CUlinkState state) {
    NVL_TRY(core::Runtime::get().checkInit());
    return core::Link::destroy(state);
}

}  // namespace nvl::api
