#include "core/library.h"

#include <algorithm>

#include "core/context.h"
#include "core/device.h"
#include "core/handle_registry.h"
#include "core/runtime.h"

namespace nvl::core {
namespace {

uint32_t archOf(const Device& d) { return d.info().smMajor * 10 + d.info().smMinor; }

// The kinds of GPU present, each once.
std::vector<const Device*> deviceKinds() {
    std::vector<const Device*> kinds;
    Runtime& rt = Runtime::get();
    for (int i = 0; i < rt.deviceCount(); ++i) {
        const Device* d = rt.device(i);
        if (!d) continue;
        bool seen = false;
        for (const Device* k : kinds) seen = seen || archOf(*k) == archOf(*d);
        if (!seen) kinds.push_back(d);
    }
    return kinds;
}

const KernelInfo* findKernel(const loader::Image& image, const std::string& name) {
    for (const KernelInfo& k : image.kernels)
        if (k.name == name) return &k;
    return nullptr;
}

}  // namespace

// ------------------------------------------------------------------ libraries

Library* Library::fromHandle(CUlibrary l) { return HandleRegistry<Library>::get().find(l).get(); }

Result<Library*> Library::loadData(const void* code, JitOptions& jit) {
    std::vector<std::pair<uint32_t, loader::Image>> images;
    for (const Device* d : deviceKinds()) {
        NVL_ASSIGN_OR_RETURN(loader::Image image,
                             loader::load(code, loader::kUnknownSize, d->info().smMajor, d->info().smMinor, jit));
        images.emplace_back(archOf(*d), std::move(image));
    }
    return fromImages(std::move(images));
}

Result<Library*> Library::loadFile(const char* path, JitOptions& jit) {
    std::vector<std::pair<uint32_t, loader::Image>> images;
    for (const Device* d : deviceKinds()) {
        NVL_ASSIGN_OR_RETURN(loader::Image image, loader::loadFile(path, d->info().smMajor, d->info().smMinor, jit));
        images.emplace_back(archOf(*d), std::move(image));
    }
    return fromImages(std::move(images));
}

Result<Library*> Library::fromImages(std::vector<std::pair<uint32_t, loader::Image>> images) {
    if (images.empty()) return CUDA_ERROR_NO_DEVICE;
    auto* lib = new Library();
    lib->images_ = std::move(images);
    const loader::Image& first = lib->images_.front().second;
    for (size_t i = 0; i < first.kernels.size(); ++i) {
        auto* k = new Kernel(*lib, first.kernels[i].name, i);
        k->settings_.resize(static_cast<size_t>(Runtime::get().deviceCount()));
        lib->kernels_.push_back(k);
        HandleRegistry<Kernel>::get().add(std::shared_ptr<Kernel>(k));
    }
    lib->loaded_.store(true, std::memory_order_release);
    HandleRegistry<Library>::get().add(std::shared_ptr<Library>(lib));
    // EAGER: into the current context now (other contexts on first use).
    if (moduleLoadingMode() == CU_MODULE_EAGER_LOADING) {
        if (Context* ctx = current::top(); ctx && CallScope::use(*ctx)) {
            Result<Module*> m = lib->moduleFor(*ctx);
            if (!m) {
                (void)lib->unload();
                return m.status();
            }
        }
    }
    return lib;
}

const loader::Image* Library::imageFor(const Device& dev) const {
    for (const auto& [arch, image] : images_)
        if (arch == archOf(dev)) return &image;
    return nullptr;
}

const KernelInfo* Library::kernelInfo(const Device& dev, size_t index) const {
    if (index >= kernels_.size()) return nullptr;
    const loader::Image* image = imageFor(dev);
    return image ? findKernel(*image, kernels_[index]->name()) : nullptr;
}

Library::GlobalKind Library::globalKind(const char* name) const {
    std::lock_guard lock(mutex_);
    GlobalKind kind;
    if (images_.empty()) return kind;
    const loader::Image& image = images_.front().second;
    if (const loader::Global* g = image.findGlobal(name)) {
        kind.found = true;
        kind.managed = g->managed;
    }
    kind.isKernel = findKernel(image, name) != nullptr;
    return kind;
}

Result<Kernel*> Library::kernel(const char* name) const {
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    for (Kernel* k : kernels_)
        if (k->name() == name) return k;
    return CUDA_ERROR_NOT_FOUND;
}

Result<Module*> Library::moduleFor(Context& ctx) {
    std::lock_guard lock(mutex_);
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    // Forget the modules of destroyed contexts and those unloaded since.
    std::erase_if(modules_, [](const Loaded& l) { return !l.module->loaded(); });
    for (const Loaded& l : modules_)
        if (l.ctx == &ctx && l.generation == ctx.generation()) {
            CallScope::keep(l.module);  // for the calling API call
            return l.module.get();
        }
    const Device& dev = ctx.device();
    const loader::Image* image = imageFor(dev);
    if (!image) return CUDA_ERROR_NO_BINARY_FOR_GPU;
    NVL_ASSIGN_OR_RETURN(Module * raw, Module::load(ctx, *image, this));
    std::shared_ptr<Module> m = raw->shared_from_this();
    CallScope::keep(m);
    // What was set on the kernels for this device applies here too.
    for (Kernel* k : kernels_) {
        const auto& s = k->settings_[static_cast<size_t>(dev.ordinal())];
        if (!s) continue;
        for (const auto& f : m->functions())
            if (f->name() == k->name()) f->settings = *s;
    }
    modules_.push_back({&ctx, ctx.generation(), m});
    return raw;
}

void Library::applySettings(const Kernel& k, const Device& dev) {
    const auto& s = k.settings_[static_cast<size_t>(dev.ordinal())];
    if (!s) return;
    for (const Loaded& l : modules_) {
        if (&l.ctx->device() != &dev || !l.module->loaded()) continue;
        for (const auto& f : l.module->functions())
            if (f->name() == k.name()) f->settings = *s;
    }
}

Status Library::unload() {
    std::vector<Loaded> modules;
    {
        std::lock_guard lock(mutex_);
        if (!loaded_.exchange(false, std::memory_order_acq_rel)) return CUDA_ERROR_INVALID_HANDLE;
        modules.swap(modules_);
    }
    Status first = kOk;
    for (const Loaded& l : modules) {
        if (!l.module->loaded()) continue;
        Status s = l.module->unloadNow();
        if (first.ok() && !s.ok()) first = s;
    }
    std::lock_guard lock(mutex_);
    images_.clear();
    return first;
}

// ------------------------------------------------------------------ kernels

Kernel* Kernel::fromHandle(const void* handle) { return HandleRegistry<Kernel>::get().find(handle).get(); }

Result<Function*> Kernel::functionFor(Context& ctx) {
    NVL_ASSIGN_OR_RETURN(Module * m, library_.moduleFor(ctx));
    return m->function(name_.c_str());
}

Result<FunctionSettings*> Kernel::settingsLocked(const Device& dev) {
    auto& s = settings_[static_cast<size_t>(dev.ordinal())];
    if (!s) {
        const KernelInfo* info = library_.kernelInfo(dev, index_);
        if (!info) return CUDA_ERROR_INVALID_HANDLE;
        auto fresh = std::make_unique<FunctionSettings>();
        NVL_ASSIGN_OR_RETURN(uint32_t room, kernel_limits::defaultMaxDynamicShared(*info, dev));
        fresh->maxDynamicSharedBytes = room;
        s = std::move(fresh);
    }
    return s.get();
}

Result<int> Kernel::attribute(const Device& dev, CUfunction_attribute attrib) {
    std::lock_guard lock(library_.mutex_);
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    const loader::Image* image = library_.imageFor(dev);
    const KernelInfo* info = library_.kernelInfo(dev, index_);
    if (!image || !info) return CUDA_ERROR_INVALID_HANDLE;
    NVL_ASSIGN_OR_RETURN(FunctionSettings * s, settingsLocked(dev));
    return functionAttribute(*info, *s, image->ptxVersion, image->binaryVersion, attrib);
}

Status Kernel::setAttribute(const Device& dev, CUfunction_attribute attrib, int value) {
    std::lock_guard lock(library_.mutex_);
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    const KernelInfo* info = library_.kernelInfo(dev, index_);
    if (!info) return CUDA_ERROR_INVALID_HANDLE;
    NVL_ASSIGN_OR_RETURN(FunctionSettings * s, settingsLocked(dev));
    NVL_TRY(setFunctionAttribute(*info, dev, *s, attrib, value));
    library_.applySettings(*this, dev);
    return kOk;
}

Result<loader::KernelParam> Kernel::param(size_t index) const {
    std::lock_guard lock(library_.mutex_);
    if (!loaded() || library_.images_.empty()) return CUDA_ERROR_INVALID_HANDLE;
    const KernelInfo* info = findKernel(library_.images_.front().second, name_);
    if (!info) return CUDA_ERROR_INVALID_HANDLE;
    if (index >= info->params.size()) return CUDA_ERROR_INVALID_VALUE;
    return info->params[index];
}

Status Kernel::setCacheConfig(const Device& dev, CUfunc_cache config) {
    if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(library_.mutex_);
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    NVL_ASSIGN_OR_RETURN(FunctionSettings * s, settingsLocked(dev));
    // A preference only, as for functions.
    s->cacheConfig = config;
    library_.applySettings(*this, dev);
    return kOk;
}

}  // namespace nvl::core
