// Modules and their kernels: a loaded image placed in the context's device
// memory, its functions ready to launch, its globals.
//
// Loading reads and checks the image at once; placing it in GPU memory (the
// upload, relocation, launch templates) happens at load time in EAGER mode and
// on first use in LAZY mode (CUDA_MODULE_LOADING, LAZY by default as in
// libcuda): when one of its functions is looked up (cuModuleGetFunction,
// cuKernelGetFunction), launched or loaded (cuFuncLoad), or an address is
// asked of it (cuModuleGetGlobal). The image is placed whole; each function
// says it is loaded (cuFuncIsLoaded) once it was used in one of those ways,
// as libcuda's do.
//
// Lifetime (call_scope.h): Module and Function objects are owned by
// std::shared_ptr (the handle registries, the context, a library, the calls
// using them; a function keeps its module). A module's code is behind its
// Gate: calls that launch its kernels or read it hold a pass; cuModuleUnload
// closes the gate (later calls get CUDA_ERROR_INVALID_HANDLE), waits for the
// passes in flight and the GPU, then frees the memory and lets the objects
// go. Stale handles are not found: CUDA_ERROR_INVALID_HANDLE.
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
class Device;
class Library;
class Module;

// The loader's descriptions, as the core hands them out.
using JitOptions = loader::JitOptions;
using KernelInfo = loader::Kernel;
inline Status parseJitOptions(unsigned count, const CUjit_option* options, void** values, JitOptions* out) {
    return loader::parseJitOptions(count, options, values, out);
}

// CUDA_MODULE_LOADING, read once: CU_MODULE_LAZY_LOADING unless it says EAGER.
CUmoduleLoadingMode moduleLoadingMode();

// What a program can set on a function (cuFuncSetAttribute, cuFuncSetCache-
// Config, cuKernelSetAttribute), kept per function and, for library kernels,
// per device.
struct FunctionSettings {
    std::atomic<uint32_t> maxDynamicSharedBytes{0};
    std::atomic<int> preferredCarveout{-1};
    std::atomic<int> cacheConfig{CU_FUNC_CACHE_PREFER_NONE};
    std::atomic<int> nonPortableClusterSizeAllowed{0};
    std::atomic<int> clusterSchedulingPolicy{CU_CLUSTER_SCHEDULING_POLICY_DEFAULT};
    // A cluster shape required at run time (REQUIRED_CLUSTER_WIDTH/HEIGHT/
    // DEPTH set by the program; zeros: not set), for kernels without
    // __cluster_dims__.
    std::atomic<uint32_t> requiredCluster[3] = {0, 0, 0};

    FunctionSettings() = default;
    FunctionSettings(const FunctionSettings& o) { *this = o; }
    FunctionSettings& operator=(const FunctionSettings& o);
};

// A kernel's limits and attributes, from its image description and the
// device (shared by functions and library kernels).
namespace kernel_limits {
// Warps its registers let 'registerFile' registers hold (an SM's, or a block's limit).
uint32_t warpsByRegisters(const KernelInfo& k, uint32_t registerFile);
// Threads per block its registers allow (1024 at most).
uint32_t maxThreadsByRegisters(const KernelInfo& k);
// Threads per block the kernel's registers allow (and its own limit).
uint32_t maxThreadsPerBlock(const KernelInfo& k);
// Dynamic shared memory a kernel may use without opting in.
Result<uint32_t> defaultMaxDynamicShared(const KernelInfo& k, const Device& dev);
}  // namespace kernel_limits

// cuFuncGetAttribute / cuKernelGetAttribute.
Result<int> functionAttribute(const KernelInfo& k, const FunctionSettings& s, uint32_t ptxVersion,
                              uint32_t binaryVersion, CUfunction_attribute attrib);
// cuFuncSetAttribute / cuKernelSetAttribute: checks 'value' and sets it in 's'.
Status setFunctionAttribute(const KernelInfo& k, const Device& dev, FunctionSettings& s, CUfunction_attribute attrib,
                            int value);

class Function {
public:
    // The live function behind a handle (kept for the calling API call), or nullptr.
    static Function* fromHandle(CUfunction f);
    CUfunction handle() { return reinterpret_cast<CUfunction>(this); }

    Module& module() const { return *module_; }
    const std::string& name() const { return kernel_.name; }
    const loader::Kernel& kernel() const { return kernel_; }
    // The launch path's view: valid once the module is resident (ensureResident()).
    const hw::KernelDescriptor& descriptor() const { return descriptor_; }
    const hw::Qmd& qmdTemplate() const { return qmd_; }
    // The module is loaded and its context alive (the handle is usable).
    bool loaded() const;
    // cuFuncIsLoaded: its code is in GPU memory and it was looked up,
    // launched or loaded since.
    bool resident() const;
    // Places the module's code now if it is not yet (lazy loading) and
    // counts the function as loaded.
    Status ensureResident();

    FunctionSettings settings;

    // Threads per block the kernel's registers allow (and its own limit).
    uint32_t maxThreadsPerBlock() const { return kernel_limits::maxThreadsPerBlock(kernel_); }
    uint32_t maxThreadsByRegisters() const { return kernel_limits::maxThreadsByRegisters(kernel_); }

    // The occupancy calculator's last answer for a launch of this function
    // (core/occupancy.h, launchBlocksPerSm): its key holds every input that
    // can change, so it is never stale.
    std::atomic<uint64_t> launchOccupancy{0};

    // The legacy launch API's state (cuFuncSetBlockShape, cuFuncSetSharedSize,
    // cuParamSet*): what cuLaunch / cuLaunchGrid launch with.
    struct LegacyLaunch {
        uint32_t block[3] = {1, 1, 1};  // libcuda's shape until one is set
        uint32_t sharedBytes = 0;
        // What cuParamSet* wrote (in any order, before or after
        // cuParamSetSize) and the size a launch passes (cuParamSetSize).
        std::vector<uint8_t> params;
        uint32_t paramBytes = 0;
    };
    std::mutex legacyMutex;
    LegacyLaunch legacy;

private:
    friend class Module;
    Function(std::shared_ptr<Module> m, loader::Kernel k) : module_(std::move(m)), kernel_(std::move(k)) {}

    std::shared_ptr<Module> module_;
    loader::Kernel kernel_;
    hw::KernelDescriptor descriptor_;
    hw::Qmd qmd_;
    std::atomic<bool> used_{false};
};

class Module : public Gate, public std::enable_shared_from_this<Module> {
public:
    // Where a module's image goes in device memory: the context's heap, or,
    // for nvlite's own code (the built-in kernels), the heap's small cached
    // chunk (DeviceHeap::allocOwn: it never keeps a larger chunk from going
    // back to the driver, and does not count as a user's module).
    enum class Placement { Shared, Own };
    // Makes a module of 'image' in the context: placed now (EAGER) or on first
    // use (LAZY). 'owner': the library it belongs to, if any.
    static Result<Module*> load(Context& ctx, loader::Image image, Library* owner = nullptr,
                                Placement placement = Placement::Shared);
    // Reads a cubin, fatbin or PTX (from memory or a file) for the context's
    // GPU, then load()s it. 'jit' carries cuModuleLoadDataEx's options.
    static Result<Module*> loadData(Context& ctx, const void* data, loader::JitOptions& jit);
    static Result<Module*> loadFile(Context& ctx, const char* path, loader::JitOptions& jit);
    // The live module behind a handle (kept for the calling API call), or nullptr.
    static Module* fromHandle(CUmodule m);
    CUmodule handle() { return reinterpret_cast<CUmodule>(this); }

    Context& context() const { return *ctx_; }
    Library* library() const { return library_; }
    // Loaded, and its context alive in the activation it was loaded in.
    bool loaded() const;
    // Its image is in GPU memory.
    bool resident() const { return resident_.load(std::memory_order_acquire); }
    // Places the image in GPU memory unless it is there (lazy loading).
    Status ensureResident();
    // The image's PTX and SASS versions (major * 10 + minor).
    uint32_t ptxVersion() const { return ptxVersion_; }
    uint32_t binaryVersion() const { return binaryVersion_; }
    // cuModuleUnload: the handles go, then the device memory (after the
    // calls and the GPU work using it finish). CUDA_ERROR_NOT_PERMITTED for
    // a library's module; CUDA_ERROR_INVALID_HANDLE when another thread
    // unloaded it first.
    Status unload();
    // Its context is being destroyed (and frees the memory): the handles go.
    void forget();

    // A function by name, loaded (lazy loading places the module now).
    Result<Function*> function(const char* name);
    // Its kernels, in the image's order (none once unloaded).
    std::vector<std::shared_ptr<Function>> functions() const;
    struct GlobalRange {
        uint64_t address;
        uint64_t bytes;
    };
    // A global's address (places the module first).
    Result<GlobalRange> global(const char* name);

private:
    friend class Library;
    Module(std::shared_ptr<Context> ctx, Library* owner) : ctx_(std::move(ctx)), library_(owner) {}
    Status place();
    Status unloadNow();
    // Takes the module's and its functions' handles out of the registries
    // and lets go of the functions (they keep the module, not it them).
    void unregister();

    std::shared_ptr<Context> ctx_;
    Library* const library_;
    std::atomic<bool> resident_{false};
    uint64_t generation_ = 0;  // the context's activation it lives in
    mutable std::mutex mutex_;  // placement; functions_ (cleared once the gate is closed)
    uint32_t ptxVersion_ = 0, binaryVersion_ = 0;
    loader::Image image_;  // until placed
    uint64_t base_ = 0;    // where the image lives (device heap)
    std::vector<std::shared_ptr<Function>> functions_;
    struct GlobalInfo {
        uint64_t imageOffset;
        uint64_t bytes;
    };
    std::map<std::string, GlobalInfo> globals_;
    bool cpuVisible_ = false;
    Placement placement_ = Placement::Shared;
};

}  // namespace nvl::core
