// Modules and their kernels: a loaded image placed in the context's device
// memory, its functions ready to launch, its globals.
//
// Lifetime (call_scope.h): Module and Function objects are owned by
// std::shared_ptr (the handle registries, the context, the calls using
// them; a function keeps its module). A module's code is behind its Gate:
// calls that launch its kernels or read it hold a pass; cuModuleUnload
// closes the gate (later calls get CUDA_ERROR_INVALID_HANDLE), waits for the
// passes in flight and the GPU, then frees the memory. Stale handles are
// not found: CUDA_ERROR_INVALID_HANDLE.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/call_scope.h"
#include "hw/compute.h"
#include "loader/image.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class Context;
class Module;

// The loader's descriptions, as the core hands them out.
using JitOptions = loader::JitOptions;
using KernelInfo = loader::Kernel;
inline Status parseJitOptions(unsigned count, const CUjit_option* options, void** values, JitOptions* out) {
    return loader::parseJitOptions(count, options, values, out);
}

class Function {
public:
    // The live function behind a handle (kept for the calling API call), or nullptr.
    static Function* fromHandle(CUfunction f);
    CUfunction handle() { return reinterpret_cast<CUfunction>(this); }

    Module& module() const { return *module_; }
    const std::string& name() const { return kernel_.name; }
    const loader::Kernel& kernel() const { return kernel_; }
    const hw::KernelDescriptor& descriptor() const { return descriptor_; }
    const hw::Qmd& qmdTemplate() const { return qmd_; }
    bool loaded() const;

    // Attributes a program can set (cuFuncSetAttribute, cuFuncSetCacheConfig).
    std::atomic<uint32_t> maxDynamicSharedBytes{0};
    std::atomic<int> preferredCarveout{-1};
    std::atomic<int> cacheConfig{CU_FUNC_CACHE_PREFER_NONE};

    // Threads per block the kernel's registers allow (and its own limit).
    uint32_t maxThreadsPerBlock() const;
    // Threads per block its registers allow (1024 at most).
    uint32_t maxThreadsByRegisters() const;
    // Warps its registers let 'registerFile' registers hold (an SM's, or a
    // block's limit).
    uint32_t warpsByRegisters(uint32_t registerFile) const;

private:
    friend class Module;
    Function(std::shared_ptr<Module> m, loader::Kernel k) : module_(std::move(m)), kernel_(std::move(k)) {}

    std::shared_ptr<Module> module_;
    loader::Kernel kernel_;
    hw::KernelDescriptor descriptor_;
    hw::Qmd qmd_;
};

class Module : public Gate, public std::enable_shared_from_this<Module> {
public:
    // Places 'image' in the context's memory and prepares its kernels.
    static Result<Module*> load(Context& ctx, loader::Image image);
    // Reads a cubin, fatbin or PTX (from memory or a file) for the context's
    // GPU, then load()s it. 'jit' carries cuModuleLoadDataEx's options.
    static Result<Module*> loadData(Context& ctx, const void* data, loader::JitOptions& jit);
    static Result<Module*> loadFile(Context& ctx, const char* path, loader::JitOptions& jit);
    // The live module behind a handle (kept for the calling API call), or nullptr.
    static Module* fromHandle(CUmodule m);
    CUmodule handle() { return reinterpret_cast<CUmodule>(this); }

    Context& context() const { return *ctx_; }
    // Loaded, and its context alive in the activation it was loaded in.
    bool loaded() const;
    // The image's PTX and SASS versions (major * 10 + minor).
    uint32_t ptxVersion() const { return ptxVersion_; }
    uint32_t binaryVersion() const { return binaryVersion_; }
    // cuModuleUnload: the handles go, then the device memory (after the
    // calls and the GPU work using it finish). CUDA_ERROR_INVALID_HANDLE
    // when another thread unloaded it first.
    Status unload();
    // Its context is being destroyed (and frees the memory): the handles go.
    void forget();

    Result<Function*> function(const char* name);
    struct GlobalRange {
        uint64_t address;
        uint64_t bytes;
    };
    Result<GlobalRange> global(const char* name);

private:
    explicit Module(std::shared_ptr<Context> ctx) : ctx_(std::move(ctx)) {}
    Status place(loader::Image image);
    // Takes the module's and its functions' handles out of the registries.
    void unregister();

    std::shared_ptr<Context> ctx_;
    uint64_t generation_ = 0;  // the context's activation it lives in
    uint32_t ptxVersion_ = 0, binaryVersion_ = 0;
    uint64_t base_ = 0;  // where the image lives (device heap)
    // Set by place(); read under a pass; cleared once the gate is closed.
    std::vector<std::shared_ptr<Function>> functions_;
    std::map<std::string, GlobalRange> globals_;
};

}  // namespace nvl::core
