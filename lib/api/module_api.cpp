// Modules, functions, launches, occupancy.
#include <algorithm>
#include <cstring>

#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/device.h"
#include "core/launch.h"
#include "core/library.h"
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

// A pass through the gates of a module and its context for the rest of the
// call (call_scope.h): an unload or destroy racing the call waits for it.
bool hold(Module& m) { return core::CallScope::use(m.context()) && core::CallScope::use(m); }

// The module behind a handle: one of ours, still loaded, held.
Result<Module*> liveModule(CUmodule m) {
    Module* p = Module::fromHandle(m);
    if (!p || !p->loaded() || !hold(*p)) return CUDA_ERROR_INVALID_HANDLE;
    return p;
}

}  // namespace

Result<Function*> resolveFunction(CUfunction f, KernelAsFunction kernels, Context* ctx) {
    if (Function* p = Function::fromHandle(f)) {
        if (!p->loaded() || !hold(p->module())) return CUDA_ERROR_INVALID_HANDLE;
        return p;
    }
    // A CUkernel: its function in the context (the current one unless given).
    core::Kernel* k = kernels == KernelAsFunction::Accepted ? core::Kernel::fromHandle(f) : nullptr;
    if (!k || !k->loaded()) return CUDA_ERROR_INVALID_HANDLE;
    if (!ctx) {
        NVL_ASSIGN_OR_RETURN(ctx, core::requireCurrent());
    }
    NVL_ASSIGN_OR_RETURN(Function * fn, k->functionFor(*ctx));
    if (!hold(fn->module())) return CUDA_ERROR_INVALID_HANDLE;
    return fn;
}

Status launchOn(CUstream stream, CUfunction f, const core::LaunchRequest& r) {
    NVL_ASSIGN_OR_RETURN(core::Stream * st, resolveStream(stream));
    NVL_ASSIGN_OR_RETURN(Function * fn, resolveFunction(f, KernelAsFunction::Accepted, &st->context()));
    if (&fn->module().context() != &st->context()) return CUDA_ERROR_INVALID_HANDLE;
    return st->context().noted(core::launchKernel(*st, *fn, r));
}

Status moduleLoad(CUmodule* module, const char* fname) {
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    if (!module || !fname || !*fname) return CUDA_ERROR_INVALID_VALUE;  // "": libcuda's answer too
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
    *mode = core::moduleLoadingMode();
    return kOk;
}

Status funcGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(hfunc));
    NVL_ASSIGN_OR_RETURN(*pi, core::functionAttribute(f->kernel(), f->settings, f->module().ptxVersion(),
                                                      f->module().binaryVersion(), attrib));
    return kOk;
}

Status funcSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(hfunc));
    return core::setFunctionAttribute(f->kernel(), f->module().context().device(), f->settings, attrib, value);
}

Status funcSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(hfunc));
    if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
    // A preference only: the launch picks the carveout its shared memory needs.
    f->settings.cacheConfig = config;
    return kOk;
}

Status funcGetName(const char** name, CUfunction hfunc) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!name || !hfunc) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(hfunc));
    *name = f->name().c_str();
    return kOk;
}

Status funcGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
    NVL_TRY(core::Runtime::get().checkInit());
    // libcuda: the offset is required, the size not; a NULL function is a value error.
    if (!func || !paramOffset) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(func));
    const auto& params = f->kernel().params;
    if (paramIndex >= params.size()) return CUDA_ERROR_INVALID_VALUE;
    if (paramOffset) *paramOffset = params[paramIndex].offset;
    if (paramSize) *paramSize = params[paramIndex].size;
    return kOk;
}

Status funcGetModule(CUmodule* hmod, CUfunction hfunc) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!hmod || !hfunc) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(hfunc));
    *hmod = f->module().handle();
    return kOk;
}

Status funcIsLoaded(CUfunctionLoadingState* state, CUfunction function) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!state) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(function));
    *state = f->resident() ? CU_FUNCTION_LOADING_STATE_LOADED : CU_FUNCTION_LOADING_STATE_UNLOADED;
    return kOk;
}

Status funcLoad(CUfunction function) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(function));
    return f->module().context().noted(f->ensureResident());
}

Status moduleGetFunctionCount(unsigned int* count, CUmodule mod) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Module * m, liveModule(mod));
    *count = static_cast<unsigned>(m->functions().size());
    return kOk;
}

Status moduleEnumerateFunctions(CUfunction* functions, unsigned int numFunctions, CUmodule mod) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!functions) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Module * m, liveModule(mod));
    // libcuda fills what it has (more room is fine), in the reverse of the
    // image's kernel order (a library's kernels come in the image's order).
    const auto& fs = m->functions();
    const size_t n = std::min<size_t>(numFunctions, fs.size());
    for (size_t i = 0; i < n; ++i) functions[i] = fs[fs.size() - 1 - i]->handle();
    return kOk;
}

Status launchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                    unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
                    CUstream hStream, void** kernelParams, void** extra) {
    core::LaunchRequest r{{gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ}, sharedMemBytes,
                          kernelParams, extra};
    return launchOn(hStream, f, r);
}

// ------------------------------------------------------------------ occupancy

Status occupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func, int blockSize,
                                                          size_t dynamicSMemSize, unsigned int flags) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!numBlocks) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(func, KernelAsFunction::Accepted));
    NVL_ASSIGN_OR_RETURN(*numBlocks, core::maxActiveBlocksPerSm(*f, blockSize, dynamicSMemSize, flags));
    return kOk;
}

Status occupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                 size_t dynamicSMemSize) {
    return occupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

Status occupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, CUfunction func, int numBlocks, int blockSize) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!dynamicSmemSize) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(func, KernelAsFunction::Accepted));
    NVL_ASSIGN_OR_RETURN(*dynamicSmemSize, core::availableDynamicSharedPerBlock(*f, numBlocks, blockSize));
    return kOk;
}

Status occupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize, CUfunction func,
                                               CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                               int blockSizeLimit, unsigned int flags) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!minGridSize || !blockSize) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Function * f, resolveFunction(func, KernelAsFunction::Accepted));
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
