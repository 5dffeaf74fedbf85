#include "core/module.h"

#include <cstdlib>
#include <cstring>
#include <strings.h>

#include "common/align.h"
#include "core/context.h"
#include "core/copy.h"
#include "core/device.h"
#include "core/devrt.h"
#include "core/handle_registry.h"
#include "core/memory.h"
#include "hw/cpu.h"

namespace nvl::core {

CUmoduleLoadingMode moduleLoadingMode() {
    static const CUmoduleLoadingMode mode = [] {
        const char* v = std::getenv("CUDA_MODULE_LOADING");
        return v && strcasecmp(v, "EAGER") == 0 ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
    }();
    return mode;
}

FunctionSettings& FunctionSettings::operator=(const FunctionSettings& o) {
    maxDynamicSharedBytes = o.maxDynamicSharedBytes.load();
    preferredCarveout = o.preferredCarveout.load();
    cacheConfig = o.cacheConfig.load();
    nonPortableClusterSizeAllowed = o.nonPortableClusterSizeAllowed.load();
    clusterSchedulingPolicy = o.clusterSchedulingPolicy.load();
    for (int i = 0; i < 3; ++i) requiredCluster[i] = o.requiredCluster[i].load();
    return *this;
}

// ------------------------------------------------------------------ limits and attributes

namespace kernel_limits {

uint32_t warpsByRegisters(const KernelInfo& k, uint32_t registerFile) {
    // Registers are handed to warps in units of 256, and warps to the SM's
    // four schedulers in groups of four.
    const uint64_t perWarp = alignUp(std::max<uint64_t>(k.registers, 1) * 32, 256);
    return static_cast<uint32_t>(registerFile / perWarp / 4 * 4);
}

uint32_t maxThreadsByRegisters(const KernelInfo& k) {
    constexpr uint32_t kRegistersPerBlock = 65536;  // CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK
    return std::min<uint32_t>(1024, warpsByRegisters(k, kRegistersPerBlock) * 32);
}

uint32_t maxThreadsPerBlock(const KernelInfo& k) {
    uint32_t limit = maxThreadsByRegisters(k);
    if (k.maxThreadsPerBlock) limit = std::min(limit, k.maxThreadsPerBlock);
    return limit;
}

Result<uint32_t> defaultMaxDynamicShared(const KernelInfo& k, const Device& dev) {
    // Kernels get the default shared memory per block unless they opt in to more.
    NVL_ASSIGN_OR_RETURN(int room, dev.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
    const uint32_t r = static_cast<uint32_t>(room);
    return k.staticSharedBytes < r ? r - k.staticSharedBytes : 0u;
}

}  // namespace kernel_limits

Result<int> functionAttribute(const KernelInfo& k, const FunctionSettings& s, uint32_t ptxVersion,
                              uint32_t binaryVersion, CUfunction_attribute attrib) {
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return static_cast<int>(kernel_limits::maxThreadsPerBlock(k));
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: return static_cast<int>(k.staticSharedBytes);
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: {
        // The program's __constant__ data (bank 3), not the compiler's banks.
        uint64_t bytes = 0;
        for (const auto& b : k.banks)
            if (b.bank == loader::kUserConstantBank) bytes += b.size;
        return static_cast<int>(bytes);
    }
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: return static_cast<int>(k.localBytesPerThread);
    case CU_FUNC_ATTRIBUTE_NUM_REGS: return static_cast<int>(k.registers);
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: return static_cast<int>(ptxVersion);
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: return static_cast<int>(binaryVersion);
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: return 0;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: return static_cast<int>(s.maxDynamicSharedBytes.load());
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: return s.preferredCarveout.load();
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: return k.explicitCluster ? 1 : 0;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: {
        const int i = attrib - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH;
        return static_cast<int>(k.clusterDims[0] ? k.clusterDims[i] : s.requiredCluster[i].load());
    }
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: return s.nonPortableClusterSizeAllowed.load();
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: return s.clusterSchedulingPolicy.load();
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

Status setFunctionAttribute(const KernelInfo& k, const Device& dev, FunctionSettings& s, CUfunction_attribute attrib,
                            int value) {
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: {
        NVL_ASSIGN_OR_RETURN(int optin, dev.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
        const int room = optin - static_cast<int>(k.staticSharedBytes);
        if (value < 0 || value > room) return CUDA_ERROR_INVALID_VALUE;
        s.maxDynamicSharedBytes = static_cast<uint32_t>(value);
        return kOk;
    }
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        if (value < -1 || value > 100) return CUDA_ERROR_INVALID_VALUE;
        s.preferredCarveout = value;
        return kOk;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
        // libcuda takes any value; nonzero allows up to 16 blocks per cluster.
        s.nonPortableClusterSizeAllowed = value;
        return kOk;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
        // Fixed by __cluster_dims__ at compile time, or set here at run time.
        if (k.clusterDims[0]) return CUDA_ERROR_NOT_PERMITTED;
        if (value < 0) return CUDA_ERROR_INVALID_VALUE;
        s.requiredCluster[attrib - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] = static_cast<uint32_t>(value);
        return kOk;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        if (value < CU_CLUSTER_SCHEDULING_POLICY_DEFAULT || value > CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING)
            return CUDA_ERROR_INVALID_VALUE;
        // A preference: the hardware places clusters by itself.
        s.clusterSchedulingPolicy = value;
        return kOk;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

// ------------------------------------------------------------------ functions

namespace {

template <class T, class Handle>
T* pinned(Handle h) {
    std::shared_ptr<T> p = HandleRegistry<T>::get().find(h);
    T* raw = p.get();
    CallScope::keep(std::move(p));
    return raw;
}

// Where a kernel's parameters start in its constant bank 0, and the bank's size.
void describeBank0(const loader::Kernel& k, const hw::ComputeState& state, hw::KernelDescriptor& d) {
    // A kernel without EIATTR_PARAM_CBANK has no parameters: they would
    // start after its bank 0, which holds at least the driver area.
    d.paramBase = k.params.empty() && k.paramBytes == 0 ? std::max(k.paramBase, hw::Launch::driverAreaBytes(state))
                                                        : k.paramBase;
    d.cbuf0Bytes = std::max<uint32_t>(k.constBank0Bytes, d.paramBase + k.paramBytes);
}

// The launch path's description of a kernel of an image placed at 'base'.
hw::KernelDescriptor describe(const loader::Kernel& k, uint64_t base, const hw::ComputeState& state) {
    hw::KernelDescriptor d;
    d.programVa = base + k.textOffset;
    d.programBytes = static_cast<uint32_t>(k.textSize);
    d.registers = k.registers;
    d.barriers = std::max<uint32_t>(k.numBarriers, 1);
    d.sharedWindowBytes = k.sharedWindowBytes;
    describeBank0(k, state, d);
    static std::atomic<uint64_t> lastSerial{0};
    d.serial = lastSerial.fetch_add(1, std::memory_order_relaxed) + 1;
    d.userConstantsVa = 0;
    for (const loader::ConstantBank& b : k.banks) {
        d.banks.push_back({b.bank, base + b.imageOffset, static_cast<uint32_t>(b.size)});
        if (b.bank == loader::kUserConstantBank) d.userConstantsVa = base + b.imageOffset;
    }
    return d;
}

}  // namespace

Function* Function::fromHandle(CUfunction f) { return pinned<Function>(f); }
Module* Module::fromHandle(CUmodule m) { return pinned<Module>(m); }

bool Function::loaded() const { return module_->loaded(); }
bool Function::resident() const { return used_.load(std::memory_order_acquire) && module_->resident(); }

Status Function::ensureResident() {
    NVL_TRY(module_->ensureResident());
    used_.store(true, std::memory_order_release);
    return kOk;
}

// ------------------------------------------------------------------ modules

bool Module::loaded() const { return isOpen() && ctx_->active() && ctx_->generation() == generation_; }

std::vector<std::shared_ptr<Function>> Module::functions() const {
    std::lock_guard lock(mutex_);
    return functions_;
}

Result<Module*> Module::load(Context& ctx, loader::Image image, Library* owner, Placement placement) {
    // Loading a module is a synchronising point for kernels' printf output (libcuda).
    ctx.flushDeviceOutput();
    if (image.devrtStateOffset != loader::Image::kNoDevrt) {
        // The device runtime linked into the image finds this context's State
        // through its slot; the runtime's buffers come with the module, even
        // before its code is placed (lazy loading).
        uint8_t uses = 0;
        for (const loader::Kernel& k : image.kernels) uses |= k.devrtUses;
        NVL_ASSIGN_OR_RETURN(uint64_t state, ctx.devrt().stateAddress(uses));
        if (image.devrtStateOffset > image.bytes.size() || image.bytes.size() - image.devrtStateOffset < sizeof state)
            return CUDA_ERROR_INVALID_IMAGE;
        std::memcpy(image.bytes.data() + image.devrtStateOffset, &state, sizeof state);
    }
    // Parameters inside the driver area of constant bank 0 (or a bank 0 past
    // 64 KiB) would make every launch write where it must not: a corrupt
    // image, refused before anything is made of it.
    const hw::ComputeState state = ctx.computeState();
    for (const loader::Kernel& k : image.kernels) {
        hw::KernelDescriptor bank0;  // all acceptsKernel reads: no bank list built at load
        describeBank0(k, state, bank0);
        if (!hw::Launch::acceptsKernel(bank0, state)) return CUDA_ERROR_INVALID_IMAGE;
    }
    std::shared_ptr<Module> m(new Module(ctx.shared_from_this(), owner));
    const Device& dev = ctx.device();
    m->generation_ = ctx.generation();
    m->placement_ = placement;
    m->ptxVersion_ = image.ptxVersion;
    m->binaryVersion_ = image.binaryVersion;
    for (const loader::Global& g : image.globals) m->globals_[g.name] = {g.imageOffset, g.size};
    for (loader::Kernel& k : image.kernels) {
        std::shared_ptr<Function> f(new Function(m, std::move(k)));
        NVL_ASSIGN_OR_RETURN(uint32_t room, kernel_limits::defaultMaxDynamicShared(f->kernel_, dev));
        f->settings.maxDynamicSharedBytes = room;
        m->functions_.push_back(std::move(f));
    }
    image.kernels.clear();
    m->image_ = std::move(image);
    // A failure from here on lets go of the module and its functions (they
    // hold each other until unregister()).
    struct Undo {
        Module* m;
        ~Undo() {
            if (m) m->functions_.clear();
        }
    } undo{m.get()};
    if (moduleLoadingMode() == CU_MODULE_EAGER_LOADING) {
        std::lock_guard lock(m->mutex_);
        NVL_TRY(m->place());
        for (const auto& f : m->functions_) f->used_.store(true, std::memory_order_release);
    }
    for (const auto& f : m->functions_) HandleRegistry<Function>::get().add(f);
    undo.m = nullptr;
    Module* raw = m.get();
    m->open();
    ctx.addModule(m);
    HandleRegistry<Module>::get().add(std::move(m));
    return raw;
}

Result<Module*> Module::loadData(Context& ctx, const void* data, loader::JitOptions& jit) {
    const hw::GpuInfo& gi = ctx.device().info();
    NVL_ASSIGN_OR_RETURN(loader::Image image, loader::load(data, loader::kUnknownSize, gi.smMajor, gi.smMinor, jit));
    return load(ctx, std::move(image));
}

Result<Module*> Module::loadFile(Context& ctx, const char* path, loader::JitOptions& jit) {
    const hw::GpuInfo& gi = ctx.device().info();
    NVL_ASSIGN_OR_RETURN(loader::Image image, loader::loadFile(path, gi.smMajor, gi.smMinor, jit));
    return load(ctx, std::move(image));
}

Status Module::ensureResident() {
    if (resident_.load(std::memory_order_acquire)) return kOk;
    std::lock_guard lock(mutex_);
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    if (resident_.load(std::memory_order_relaxed)) return kOk;
    return place();
}

// Under mutex_.
Status Module::place() {
    loader::Image& image = image_;
    const uint64_t align = std::max<uint64_t>(image.alignment, 1);
    const uint64_t total = image.allocationBytes();
    Context& ctx = *ctx_;
    NVL_ASSIGN_OR_RETURN(DeviceHeap::Block block, placement_ == Placement::Own ? ctx.heap().allocOwn(total + align)
                                                                               : ctx.heap().alloc(total + align));
    const uint64_t base = alignUp(block.va, align);
    Status s = loader::relocate(image, base);
    if (s.ok() && block.cpuVisible) {
        std::memcpy(reinterpret_cast<void*>(base), image.bytes.data(), image.bytes.size());
        std::memset(reinterpret_cast<void*>(base + image.bytes.size()), 0, image.zeroFillBytes);
        hw::writeBarrier();
    } else if (s.ok()) {
        // Large images live in memory the CPU does not map: the copy engine brings them.
        s = uploadToDevice(ctx, base, image.bytes.data(), image.bytes.size(), image.zeroFillBytes);
    }
    if (!s.ok()) {
        ctx.heap().free(block.va);
        return s;
    }
    base_ = block.va;
    cpuVisible_ = block.cpuVisible;
    if (placement_ == Placement::Shared) ctx.moduleResident();

    const hw::ComputeState state = ctx.computeState();
    for (const auto& f : functions_) {
        f->descriptor_ = describe(f->kernel_, base, state);
        f->qmd_ = hw::Launch::makeTemplate(f->descriptor_, state);
    }
    for (auto& [name, g] : globals_)
        AddressMap::get().insert({base + g.imageOffset, g.bytes, MemoryKind::ModuleGlobal, &ctx, 0, cpuVisible_});
    ctx.noteNewCode();
    // The host copy is no longer needed.
    image_ = loader::Image{};
    resident_.store(true, std::memory_order_release);
    return kOk;
}

Status Module::unload() {
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    // A library's module goes with its library (cuLibraryUnload), as in libcuda.
    if (library_) return CUDA_ERROR_NOT_PERMITTED;
    return unloadNow();
}

Status Module::unloadNow() {
    // No new call gets in; those inside (launches among them) finish first.
    if (!close()) return CUDA_ERROR_INVALID_HANDLE;
    unregister();
    Context& ctx = *ctx_;
    Status s = kOk;
    // Launches already submitted may still run its code, and the grids they
    // launch from the device are started by nvlite's thread, which needs the
    // module placed (core/device_launch.h): wait for all of them first.
    if (resident_.load(std::memory_order_acquire) && ctx.active() && ctx.generation() == generation_)
        s = ctx.noted(ctx.synchronize());
    {
        std::lock_guard lock(mutex_);
        image_ = loader::Image{};
        if (resident_.exchange(false, std::memory_order_acq_rel) && ctx.active() &&
            ctx.generation() == generation_) {
            for (auto& [name, g] : globals_) AddressMap::get().remove(base_ + g.imageOffset);
            ctx.heap().free(base_);
            if (placement_ == Placement::Shared) ctx.moduleGone();
        }
    }
    ctx.removeModule(this);
    return s;
}

void Module::unregister() {
    std::vector<std::shared_ptr<Function>> functions;  // freed outside the lock
    {
        std::lock_guard lock(mutex_);
        functions.swap(functions_);
    }
    for (const auto& f : functions) HandleRegistry<Function>::get().remove(f.get());
    HandleRegistry<Module>::get().remove(this);
}

void Module::forget() {
    (void)close();
    unregister();
    std::lock_guard lock(mutex_);
    image_ = loader::Image{};
    resident_.store(false, std::memory_order_release);
}

Result<Function*> Module::function(const char* name) {
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    if (!*name) return CUDA_ERROR_INVALID_VALUE;
    std::shared_ptr<Function> found;
    {
        std::lock_guard lock(mutex_);
        for (const auto& f : functions_)
            if (f->name() == name) {
                found = f;
                break;
            }
    }
    if (!found) return CUDA_ERROR_NOT_FOUND;
    // libcuda loads a function when it is looked up.
    NVL_TRY(ctx_->noted(found->ensureResident()));
    Function* raw = found.get();
    CallScope::keep(std::move(found));
    return raw;
}

Result<Module::GlobalRange> Module::global(const char* name) {
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    auto it = globals_.find(name);
    if (it == globals_.end()) {
        // libcuda: a kernel's name is the wrong kind of symbol, not a missing one.
        for (const auto& f : functions())
            if (f->name() == name) return CUDA_ERROR_INVALID_VALUE;
        return CUDA_ERROR_NOT_FOUND;
    }
    NVL_TRY(ensureResident());
    return GlobalRange{base_ + it->second.imageOffset, it->second.bytes};
}

}  // namespace nvl::core
