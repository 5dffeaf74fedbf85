#include "core/module.h"

#include <cstring>
#include <unordered_set>

#include "core/context.h"
#include "core/copy.h"
#include "core/device.h"
#include "core/memory.h"
#include "hw/cpu.h"

namespace nvl::core {
namespace {

// Every Module and Function ever made (shells stay after unload).
std::mutex& registryMutex() {
    static auto* m = new std::mutex();
    return *m;
}
std::unordered_set<const void*>& registry() {
    static auto* s = new std::unordered_set<const void*>();
    return *s;
}
void remember(const void* p) {
    std::lock_guard lock(registryMutex());
    registry().insert(p);
}
bool known(const void* p) {
    std::lock_guard lock(registryMutex());
    return registry().count(p) != 0;
}

}  // namespace

Function* Function::fromHandle(CUfunction f) { return known(f) ? reinterpret_cast<Function*>(f) : nullptr; }
Module* Module::fromHandle(CUmodule m) { return known(m) ? reinterpret_cast<Module*>(m) : nullptr; }

bool Function::loaded() const { return module_.loaded(); }

bool Module::loaded() const { return loaded_.load(std::memory_order_acquire) && ctx_.active(); }

uint32_t Function::maxThreadsByRegisters() const {
    // Registers are handed to warps in units of 256, and warps to the SM's
    // four schedulers in groups of four.
    const uint32_t perWarp = ((std::max<uint32_t>(kernel_.registers, 1) * 32 + 255) / 256) * 256;
    return std::min<uint32_t>(1024, (65536 / perWarp) / 4 * 4 * 32);
}

uint32_t Function::maxThreadsPerBlock() const {
    uint32_t limit = maxThreadsByRegisters();
    if (kernel_.maxThreadsPerBlock) limit = std::min(limit, kernel_.maxThreadsPerBlock);
    return limit;
}

Result<Module*> Module::load(Context& ctx, loader::Image image) {
    auto* m = new Module(ctx);
    remember(m);
    NVL_TRY(m->place(std::move(image)));
    return m;
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

Status Module::place(loader::Image image) {
    std::lock_guard lock(mutex_);
    image_ = std::move(image);
    const uint64_t align = std::max<uint64_t>(image_.alignment, 1);
    const uint64_t total = image_.allocationBytes();
    NVL_ASSIGN_OR_RETURN(DeviceHeap::Block block, ctx_.heap().alloc(total + align));
    const uint64_t base = (block.va + align - 1) / align * align;
    Status s = loader::relocate(image_, base);
    if (!s.ok()) {
        ctx_.heap().free(block.va);
        return s;
    }
    if (block.cpuVisible) {
        std::memcpy(reinterpret_cast<void*>(base), image_.bytes.data(), image_.bytes.size());
        std::memset(reinterpret_cast<void*>(base + image_.bytes.size()), 0, image_.zeroFillBytes);
        hw::writeBarrier();
    } else {
        // Large images live in memory the CPU does not map: the copy engine brings them.
        AddressMap::get().insert({block.va, total + align, MemoryKind::Device, &ctx_, 0, false});
        s = copyHostToDevice(ctx_, base, image_.bytes.data(), image_.bytes.size(), Sync::Blocking);
        if (s.ok() && image_.zeroFillBytes)
            s = fill(ctx_, base + image_.bytes.size(), 0, 1, image_.zeroFillBytes, Sync::Blocking);
        if (s.ok()) s = ctx_.nullStream().synchronize();
        AddressMap::get().remove(block.va);
        if (!s.ok()) {
            ctx_.heap().free(block.va);
            return s;
        }
    }
    base_ = block.va;

    hw::ComputeState state = ctx_.computeState();
    for (const loader::Kernel& k : image_.kernels) {
        auto* f = new Function(*this, k);
        remember(f);
        hw::KernelDescriptor& d = f->descriptor_;
        d.programVa = base + k.textOffset;
        d.programBytes = static_cast<uint32_t>(k.textSize);
        d.registers = k.registers;
        // The window covers the SM's reserved 1 KiB; a kernel without static
        // shared memory still needs that part.
        d.sharedWindowBytes = std::max(k.sharedWindowBytes, k.staticSharedBytes + std::max<uint32_t>(k.reservedSharedBytes, 1024));
        d.paramBase = k.paramBase;
        d.cbuf0Bytes = std::max<uint32_t>(k.constBank0Bytes, k.paramBase + k.paramBytes);
        for (const loader::ConstantBank& b : k.banks)
            d.banks.push_back({b.bank, base + b.imageOffset, static_cast<uint32_t>(b.size)});
        f->qmd_ = hw::Launch::makeTemplate(d, state);
        // Kernels get 48 KiB of shared memory unless they opt in to more.
        f->maxDynamicSharedBytes = k.staticSharedBytes < 49152 ? 49152 - k.staticSharedBytes : 0;
        functions_.push_back(f);
    }
    for (const loader::Global& g : image_.globals) {
        globals_[g.name] = {base + g.imageOffset, g.size};
        AddressMap::get().insert({base + g.imageOffset, g.size, MemoryKind::Device, &ctx_, 0, block.cpuVisible});
    }
    ctx_.noteNewCode();
    loaded_.store(true, std::memory_order_release);
    return kOk;
}

Status Module::unload() {
    std::lock_guard lock(mutex_);
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    // Kernels of this module may still be running.
    Status s = ctx_.synchronize();
    loaded_.store(false, std::memory_order_release);
    for (auto& [name, g] : globals_) AddressMap::get().remove(g.address);
    if (ctx_.active()) ctx_.heap().free(base_);
    return s;
}

Result<Function*> Module::function(const char* name) {
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    if (!*name) return CUDA_ERROR_INVALID_VALUE;
    for (Function* f : functions_)
        if (f->name() == name) return f;
    return CUDA_ERROR_NOT_FOUND;
}

Result<Module::GlobalRange> Module::global(const char* name) {
    if (!loaded()) return CUDA_ERROR_INVALID_HANDLE;
    auto it = globals_.find(name);
    if (it != globals_.end()) return it->second;
    // libcuda: a kernel's name is the wrong kind of symbol, not a missing one.
    for (Function* f : functions_)
        if (f->name() == name) return CUDA_ERROR_INVALID_VALUE;
    return CUDA_ERROR_NOT_FOUND;
}

}  // namespace nvl::core
