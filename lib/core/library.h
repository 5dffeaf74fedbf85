// Libraries and their kernels (cuLibrary*, cuKernel*): CUDA 12's
// context-independent modules. A library reads its code once, for the kind of
// GPU each device is; a context gets its own module of it the first time the
// library or one of its kernels is used there (or, in EAGER mode, the
// current context at load time). A CUkernel is a kernel of the library in
// whichever context is current: its CUfunction there is that module's.
//
// What is set on a kernel for a device (cuKernelSetAttribute,
// cuKernelSetCacheConfig) applies to its function in every context of that
// device, those loaded later included.
//
// Library and Kernel objects are never freed: unloading
// releases the modules and the image and leaves shells, so stale handles are
// answered with CUDA_ERROR_INVALID_HANDLE.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/module.h"
#include "loader/image.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class Context;
class Device;
class Kernel;

class Library {
public:
    // cuLibraryLoadData / cuLibraryLoadFromFile (after cuInit; no context needed).
    static Result<Library*> loadData(const void* code, JitOptions& jit);
    static Result<Library*> loadFile(const char* path, JitOptions& jit);
    static Library* fromHandle(CUlibrary l);
    CUlibrary handle() { return reinterpret_cast<CUlibrary>(this); }

    bool loaded() const { return loaded_.load(std::memory_order_acquire); }
    // Unloads its modules from every context (after their work) and drops the image.
    Status unload();

    // Its kernels, in the image's order.
    const std::vector<Kernel*>& kernels() const { return kernels_; }
    Result<Kernel*> kernel(const char* name) const;
    // Its module in 'ctx', loaded there on first use.
    Result<Module*> moduleFor(Context& ctx);
    // Whether 'name' is a global of the image, and a __managed__ one.
    struct GlobalKind {
        bool found = false, managed = false, isKernel = false;
    };
    GlobalKind globalKind(const char* name) const;

private:
    friend class Kernel;
    Library() = default;
    static Result<Library*> fromImages(std::vector<std::pair<uint32_t, loader::Image>> images);
    // Under mutex_: the image for a device's kind of GPU, a kernel's
    // description in it.
    const loader::Image* imageFor(const Device& dev) const;
    const KernelInfo* kernelInfo(const Device& dev, size_t index) const;
    // Under mutex_: a kernel's settings for 'dev' made anew on its functions
    // in the loaded contexts of that device.
    void applySettings(const Kernel& k, const Device& dev);

    std::atomic<bool> loaded_{false};
    // One image per kind of GPU (compute capability major * 10 + minor); the
    // templates each context's module copies (read-only once loaded).
    std::vector<std::pair<uint32_t, loader::Image>> images_;
    std::vector<Kernel*> kernels_;
    mutable std::mutex mutex_;
    struct Loaded {
        Context* ctx;
        uint64_t generation;
        std::shared_ptr<Module> module;  // keeps the context's object, not its resources
    };
    std::vector<Loaded> modules_;
};

class Kernel {
public:
    static Kernel* fromHandle(const void* handle);
    CUkernel handle() { return reinterpret_cast<CUkernel>(this); }

    Library& library() const { return library_; }
    const std::string& name() const { return name_; }
    size_t index() const { return index_; }
    bool loaded() const { return library_.loaded(); }
    // Its function in 'ctx' (loads the library there on first use).
    Result<Function*> functionFor(Context& ctx);
    // What is set on it for a device, and setting it.
    Status setAttribute(const Device& dev, CUfunction_attribute attrib, int value);
    Status setCacheConfig(const Device& dev, CUfunc_cache config);
    Result<int> attribute(const Device& dev, CUfunction_attribute attrib);
    // cuKernelGetParamInfo: offset and size of parameter 'index'.
    Result<loader::KernelParam> param(size_t index) const;

private:
    friend class Library;
    Kernel(Library& l, std::string name, size_t index) : library_(l), name_(std::move(name)), index_(index) {}
    // Under the library's mutex.
    Result<FunctionSettings*> settingsLocked(const Device& dev);

    Library& library_;
    const std::string name_;
    const size_t index_;
    // Per device ordinal, made on first use (under the library's mutex).
    std::vector<std::unique_ptr<FunctionSettings>> settings_;
};

}  // namespace nvl::core
