#include "core/builtin.h"

#include <algorithm>
#include <bit>

#include "common/builtin_abi.h"
#include "common/env.h"
#include "core/context.h"
#include "core/device.h"
#include "core/launch.h"
#include "core/module.h"
#include "core/stream.h"
#include "loader/builtin_image.h"

namespace nvl::core {
namespace builtin {
namespace {

uint64_t minBytes(const char* name) { return env::bytes(name, kDefaultMinBytes); }

// Body units (16 bytes) a thread takes per loop step (builtin/kernels.cu's kUnroll).
constexpr uint64_t kUnitsPerThread = 4;
constexpr uint64_t kUnitBytes = 16;
// Blocks per SM a launch aims at (2048 resident threads on sm_80/90).
constexpr uint64_t kBlocksPerSm = 8;

uint64_t ceilPow2(uint64_t v) { return v <= 1 ? 1 : std::bit_ceil(v); }

Status launch(Stream& st, Function& f, const Box& b, uint64_t lineBytes, nvl::builtin::Args& a) {
    const Geometry g = geometry(lineBytes, b.lines * b.slices, st.context().device().info().smCount);
    a.magic = nvl::builtin::kMagic;
    a.dst = b.dst;
    a.width = b.width;
    a.lines = b.lines;
    a.slices = b.slices;
    a.dstPitch = b.dstPitch;
    a.dstSlicePitch = b.dstSlicePitch;
    a.lineThreads = g.lineThreads;
    void* params[] = {&a};
    LaunchRequest r{};
    r.grid[0] = g.blocks;
    r.grid[1] = r.grid[2] = 1;
    r.block[0] = nvl::builtin::kBlockThreads;
    r.block[1] = r.block[2] = 1;
    r.sharedMemBytes = 0;
    r.kernelParams = params;
    r.extra = nullptr;
    r.ownKernel = true;
    return launchKernel(st, f, r);
}

}  // namespace

bool wantCopy(uint64_t bytes) {
    static const uint64_t min = minBytes("NVLITE_KERNEL_COPY_MIN");
    return min != UINT64_MAX && bytes != 0 && bytes >= min;
}

bool wantFill(uint64_t bytes) {
    static const uint64_t min = minBytes("NVLITE_KERNEL_FILL_MIN");
    return min != UINT64_MAX && bytes != 0 && bytes >= min;
}

bool fits(const Box& b) {
    return b.lines >= 1 && b.slices >= 1 && b.lines <= UINT32_MAX && b.slices <= UINT32_MAX &&
           b.lines * b.slices / b.slices == b.lines;
}

uint64_t span(uint64_t pitch, uint64_t slicePitch, const Box& b) {
    return (b.slices - 1) * slicePitch + (b.lines - 1) * pitch + b.width;
}

Geometry geometry(uint64_t lineBytes, uint64_t lines, uint32_t smCount) {
    const uint64_t maxBlocks = std::bit_floor(std::max<uint64_t>(uint64_t{smCount} * kBlocksPerSm, 1));
    // Units of a line: its body and one for the head and the tail.
    const uint64_t lineUnits = lineBytes / kUnitBytes + 1;
    const uint64_t totalUnits = lineUnits > UINT64_MAX / lines ? UINT64_MAX : lineUnits * lines;
    const uint64_t perBlock = nvl::builtin::kBlockThreads * kUnitsPerThread;
    const uint64_t blocks = std::min(ceilPow2(totalUnits / perBlock + 1), maxBlocks);
    const uint64_t threads = blocks * nvl::builtin::kBlockThreads;
    const uint64_t lineThreads = std::clamp<uint64_t>(ceilPow2(lineUnits), 32, threads);
    return {static_cast<uint32_t>(blocks), static_cast<uint32_t>(lineThreads)};
}

Status copy(Stream& st, const Box& b) {
    NVL_ASSIGN_OR_RETURN(Function * f, st.context().builtins().copyKernel());
    nvl::builtin::Args a{};
    a.op = nvl::builtin::kOpCopy;
    a.src = b.src;
    a.srcPitch = b.srcPitch;
    a.srcSlicePitch = b.srcSlicePitch;
    return launch(st, *f, b, b.width, a);
}

Status fill(Stream& st, const Box& b, uint32_t value, uint32_t elementSize) {
    NVL_ASSIGN_OR_RETURN(Function * f, st.context().builtins().fillKernel());
    nvl::builtin::Args a{};
    a.op = nvl::builtin::kOpFill;
    a.value = value;
    a.elementSize = elementSize;
    return launch(st, *f, b, b.width * elementSize, a);
}

}  // namespace builtin

Status BuiltinKernels::loadLocked() {
    if (module_ && module_->loaded()) return kOk;
    module_ = nullptr;
    copy_ = fill_ = nullptr;
    const hw::GpuInfo& gi = ctx_.device().info();
    const loader::Bytes cubin = loader::builtin::embeddedCubin(gi.smMajor * 10 + gi.smMinor);
    if (cubin.empty()) return CUDA_ERROR_NOT_SUPPORTED;
    loader::JitOptions jit;
    NVL_ASSIGN_OR_RETURN(loader::Image image, loader::load(cubin.data(), cubin.size(), gi.smMajor, gi.smMinor, jit));
    NVL_ASSIGN_OR_RETURN(Module * m, Module::load(ctx_, std::move(image), nullptr, Module::Placement::Alone));
    NVL_ASSIGN_OR_RETURN(Function * c, m->function(NVL_BUILTIN_COPY_NAME));
    NVL_ASSIGN_OR_RETURN(Function * f, m->function(NVL_BUILTIN_FILL_NAME));
    module_ = m;
    copy_ = c;
    fill_ = f;
    return kOk;
}

Result<Function*> BuiltinKernels::copyKernel() {
    std::lock_guard lock(mutex_);
    NVL_TRY(loadLocked());
    return copy_;
}

Result<Function*> BuiltinKernels::fillKernel() {
    std::lock_guard lock(mutex_);
    NVL_TRY(loadLocked());
    return fill_;
}

void BuiltinKernels::forget() {
    std::lock_guard lock(mutex_);
    module_ = nullptr;
    copy_ = fill_ = nullptr;
}

bool BuiltinKernels::loaded() {
    std::lock_guard lock(mutex_);
    return module_ && module_->loaded();
}

}  // namespace nvl::core
