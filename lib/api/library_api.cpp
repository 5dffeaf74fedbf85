// Libraries and kernels: cuLibrary*, cuKernel* (lib/core/library.h).
#include <algorithm>

#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/device.h"
#include "core/library.h"
#include "core/module.h"
#include "core/runtime.h"

namespace nvl::api {

using core::Context;
using core::Kernel;
using core::Library;

namespace {

Result<Library*> liveLibrary(CUlibrary l) {
    Library* p = Library::fromHandle(l);
    if (!p || !p->loaded()) return CUDA_ERROR_INVALID_HANDLE;
    return p;
}

Result<Kernel*> liveKernel(CUkernel k) {
    Kernel* p = Kernel::fromHandle(k);
    if (!p || !p->loaded()) return CUDA_ERROR_INVALID_HANDLE;
    return p;
}

// cuLibraryLoad*'s options: the JIT's as cuModuleLoadDataEx takes them, and
// the library's own. CU_LIBRARY_BINARY_IS_PRESERVED (the code outlives the
// library) needs nothing: nvlite keeps its own copy of what it read.
// CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE serves
// cuLibraryGetUnifiedFunction, which nvlite does not provide.
Status parseOptions(CUjit_option* jitOptions, void** jitValues, unsigned numJit, CUlibraryOption* libOptions,
                    void** libValues, unsigned numLib, core::JitOptions* jit) {
    NVL_TRY(core::parseJitOptions(numJit, jitOptions, jitValues, jit));
    if (numLib && (!libOptions || !libValues)) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numLib; ++i) {
        switch (libOptions[i]) {
        case CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE:
        case CU_LIBRARY_BINARY_IS_PRESERVED: break;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return kOk;
}

Status publish(CUlibrary* library, Result<Library*> l) {
    if (!l) return l.status();
    *library = (*l)->handle();
    return kOk;
}

// The current context for calls that work in it (loading the library there).
Result<Context*> current() { return core::requireCurrent(); }

}  // namespace

Status libraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions, void** jitOptionsValues,
                       unsigned int numJitOptions, CUlibraryOption* libraryOptions, void** libraryOptionValues,
                       unsigned int numLibraryOptions) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!library || !code) return CUDA_ERROR_INVALID_VALUE;
    core::JitOptions jit;
    NVL_TRY(parseOptions(jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,
                         numLibraryOptions, &jit));
    return publish(library, Library::loadData(code, jit));
}

Status libraryLoadFromFile(CUlibrary* library, const char* fileName, CUjit_option* jitOptions,
                           void** jitOptionsValues, unsigned int numJitOptions, CUlibraryOption* libraryOptions,
                           void** libraryOptionValues, unsigned int numLibraryOptions) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!library || !fileName) return CUDA_ERROR_INVALID_VALUE;
    core::JitOptions jit;
    NVL_TRY(parseOptions(jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,
                         numLibraryOptions, &jit));
    return publish(library, Library::loadFile(fileName, jit));
}

Status libraryUnload(CUlibrary library) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Library * l, liveLibrary(library));
    return l->unload();
}

Status libraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pKernel || !name) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Library * l, liveLibrary(library));
    NVL_ASSIGN_OR_RETURN(Kernel * k, l->kernel(name));
    *pKernel = k->handle();
    return kOk;
}

Status libraryGetKernelCount(unsigned int* count, CUlibrary lib) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Library * l, liveLibrary(lib));
    *count = static_cast<unsigned>(l->kernels().size());
    return kOk;
}

Status libraryEnumerateKernels(CUkernel* kernels, unsigned int numKernels, CUlibrary lib) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!kernels) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Library * l, liveLibrary(lib));
    // libcuda fills what it has; more room is fine.
    const auto& ks = l->kernels();
    const size_t n = std::min<size_t>(numKernels, ks.size());
    for (size_t i = 0; i < n; ++i) kernels[i] = ks[i]->handle();
    return kOk;
}

Status libraryGetModule(CUmodule* pMod, CUlibrary library) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pMod) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Library * l, liveLibrary(library));
    NVL_ASSIGN_OR_RETURN(Context * ctx, current());
    NVL_ASSIGN_OR_RETURN(core::Module * m, l->moduleFor(*ctx));
    *pMod = m->handle();
    return kOk;
}

Status libraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!name || (!dptr && !bytes)) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Library * l, liveLibrary(library));
    NVL_ASSIGN_OR_RETURN(Context * ctx, current());
    NVL_ASSIGN_OR_RETURN(core::Module * m, l->moduleFor(*ctx));
    NVL_ASSIGN_OR_RETURN(core::Module::GlobalRange g, m->global(name));
    if (dptr) *dptr = g.address;
    if (bytes) *bytes = g.bytes;
    return kOk;
}

Status libraryGetManaged(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!name || (!dptr && !bytes)) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Library * l, liveLibrary(library));
    const Library::GlobalKind kind = l->globalKind(name);
    if (!kind.found || !kind.managed) return CUDA_ERROR_NOT_FOUND;
    // A __managed__ variable: nvlite has no managed memory yet.
    return CUDA_ERROR_NOT_SUPPORTED;
}

Status kernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pFunc) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Kernel * k, liveKernel(kernel));
    NVL_ASSIGN_OR_RETURN(Context * ctx, current());
    NVL_ASSIGN_OR_RETURN(core::Function * f, k->functionFor(*ctx));
    *pFunc = f->handle();
    return kOk;
}

Status kernelGetLibrary(CUlibrary* pLib, CUkernel kernel) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pLib) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Kernel * k, liveKernel(kernel));
    *pLib = k->library().handle();
    return kOk;
}

Status kernelGetAttribute(int* pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Kernel * k, liveKernel(kernel));
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    NVL_ASSIGN_OR_RETURN(*pi, k->attribute(*d, attrib));
    return kOk;
}

Status kernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Kernel * k, liveKernel(kernel));
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    return k->setAttribute(*d, attrib, val);
}

Status kernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev) {
    NVL_TRY(core::Runtime::get().checkInit());
    NVL_ASSIGN_OR_RETURN(Kernel * k, liveKernel(kernel));
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    return k->setCacheConfig(*d, config);
}

Status kernelGetName(const char** name, CUkernel hfunc) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!name || !hfunc) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Kernel * k, liveKernel(hfunc));
    *name = k->name().c_str();
    return kOk;
}

Status kernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
    NVL_TRY(core::Runtime::get().checkInit());
    // libcuda: the offset is required, the size not; a NULL kernel is a value error.
    if (!kernel || !paramOffset) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Kernel * k, liveKernel(kernel));
    NVL_ASSIGN_OR_RETURN(loader::KernelParam p, k->param(paramIndex));
    if (paramOffset) *paramOffset = p.offset;
    if (paramSize) *paramSize = p.size;
    return kOk;
}

}  // namespace nvl::api
