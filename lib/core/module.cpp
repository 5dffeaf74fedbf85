#include "core/module.h"

#include <cstring>

#include "common/align.h"
#include "core/context.h"
#include "core/copy.h"
#include "core/device.h"
#include "core/handle_registry.h"
#include "core/memory.h"
#include "hw/cpu.h"

namespace nvl::core {

namespace {

template <class T, class Handle>
T* pinned(Handle h) {
    std::shared_ptr<T> p = HandleRegistry<T>::get().find(h);
    T* raw = p.get();
    CallScope::keep(std::move(p));
    return raw;
}

}  // namespace

Function* Function::fromHandle(CUfunction f) { return pinned<Function>(f); }
Module* Module::fromHandle(CUmodule m) { return pinned<Module>(m); }

bool Function::loaded() const { return module_->loaded(); }

bool Module::loaded() const { return isOpen() && ctx_->active() && ctx_->generation() == generation_; }

uint32_t Function::warpsByRegisters(uint32_t registerFile) const {
    // Registers are handed to warps in units of 256, and warps to the SM's
    // four schedulers in groups of four.
    const uint64_t perWarp = alignUp(std::max<uint64_t>(kernel_.registers, 1) * 32, 256);
    return static_cast<uint32_t>(registerFile / perWarp / 4 * 4);
}

uint32_t Function::maxThreadsByRegisters() const {
    constexpr uint32_t kRegistersPerBlock = 65536;  // CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK
    return std::min<uint32_t>(1024, warpsByRegisters(kRegistersPerBlock) * 32);
}

uint32_t Function::maxThreadsPerBlock() const {
    uint32_t limit = maxThreadsByRegisters();
    if (kernel_.maxThreadsPerBlock) limit = std::min(limit, kernel_.maxThreadsPerBlock);
    return limit;
}

Result<Module*> Module::load(Context& ctx, loader::Image image) {
    std::shared_ptr<Module> m(new Module(ctx.shared_from_this()));
    NVL_TRY(m->place(std::move(image)));
    for (const auto& f : m->functions_) HandleRegistry<Function>::get().add(f);
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

namespace {

// The launch path's description of a kernel of an image placed at 'base'.
hw::KernelDescriptor describe(const loader::Kernel& k, uint64_t base, const hw::ComputeState& state) {
    hw::KernelDescriptor d;
    d.programVa = base + k.textOffset;
    d.programBytes = static_cast<uint32_t>(k.textSize);
    d.registers = k.registers;
    d.barriers = std::max<uint32_t>(k.numBarriers, 1);
    d.sharedWindowBytes = k.sharedWindowBytes;
    // A kernel without EIATTR_PARAM_CBANK has no parameters: they would
    // start after its bank 0, which holds at least the driver area.
    d.paramBase = k.params.empty() && k.paramBytes == 0 ? std::max(k.paramBase, hw::Launch::driverAreaBytes(state))
                                                        : k.paramBase;
    d.cbuf0Bytes = std::max<uint32_t>(k.constBank0Bytes, d.paramBase + k.paramBytes);
    for (const loader::ConstantBank& b : k.banks)
        d.banks.push_back({b.bank, base + b.imageOffset, static_cast<uint32_t>(b.size)});
    return d;
}

}  // namespace

Status Module::place(loader::Image image) {
    Context& ctx = *ctx_;
    hw::ComputeState state = ctx.computeState();
    // Parameters inside the driver area of constant bank 0 (or a bank 0 past
    // 64 KiB) would make every launch write where it must not: a corrupt
    // image, refused before anything is placed.
    for (const loader::Kernel& k : image.kernels)
        if (!hw::Launch::acceptsKernel(describe(k, 0, state), state)) return CUDA_ERROR_INVALID_IMAGE;
    const uint64_t align = std::max<uint64_t>(image.alignment, 1);
    const uint64_t total = image.allocationBytes();
    NVL_ASSIGN_OR_RETURN(DeviceHeap::Block block, ctx.heap().alloc(total + align));
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
    generation_ = ctx.generation();
    ptxVersion_ = image.ptxVersion;
    binaryVersion_ = image.binaryVersion;

    NVL_ASSIGN_OR_RETURN(int defaultShared, ctx.device().attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
    for (loader::Kernel& k : image.kernels) {
        std::shared_ptr<Function> f(new Function(shared_from_this(), std::move(k)));
        const loader::Kernel& fk = f->kernel_;
        f->descriptor_ = describe(fk, base, state);
        f->qmd_ = hw::Launch::makeTemplate(f->descriptor_, state);
        // Kernels get the default shared memory per block unless they opt in to more.
        const uint32_t room = static_cast<uint32_t>(defaultShared);
        f->maxDynamicSharedBytes = fk.staticSharedBytes < room ? room - fk.staticSharedBytes : 0;
        functions_.push_back(std::move(f));
    }
    for (const loader::Global& g : image.globals) {
        globals_[g.name] = {base + g.imageOffset, g.size};
        AddressMap::get().insert({base + g.imageOffset, g.size, MemoryKind::ModuleGlobal, &ctx, 0, block.cpuVisible});
    }
    ctx.noteNewCode();
    return kOk;
}

void Module::unregister() {
    for (const auto& f : functions_) HandleRegistry<Function>::get().remove(f.get());
    HandleRegistry<Module>::get().remove(this);
}

Status Module::unload() {
    // No new call gets in; those inside (launches among them) finish first.
    if (!close()) return CUDA_ERROR_INVALID_HANDLE;
    unregister();
    Context& ctx = *ctx_;
    // Launches already submitted may still run its code.
    Status s = ctx.noted(ctx.synchronize());
    for (auto& [name, g] : globals_) AddressMap::get().remove(g.address);
    ctx.heap().free(base_);
    // The functions keep this object; it keeps them no more.
    functions_.clear();
    ctx.removeModule(this);
    return s;
}

void Module::forget() {
    (void)close();
    unregister();
    functions_.clear();
}

Result<Function*> Module::function(const char* name) {
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    if (!*name) return CUDA_ERROR_INVALID_VALUE;
    for (const auto& f : functions_)
        if (f->name() == name) return f.get();
    return CUDA_ERROR_NOT_FOUND;
}

Result<Module::GlobalRange> Module::global(const char* name) {
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    auto it = globals_.find(name);
    if (it != globals_.end()) return it->second;
    // libcuda: a kernel's name is the wrong kind of symbol, not a missing one.
    for (const auto& f : functions_)
        if (f->name() == name) return CUDA_ERROR_INVALID_VALUE;
    return CUDA_ERROR_NOT_FOUND;
}

}  // namespace nvl::core
