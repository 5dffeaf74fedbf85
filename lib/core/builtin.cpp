#include "core/builtin.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "common/builtin_abi.h"
#include "common/env.h"
#include "core/context.h"
#include "core/device.h"
#include "core/launch.h"
#include "core/module.h"
#include "core/occupancy.h"
#include "core/stream.h"
#include "loader/builtin_image.h"

namespace nvl::core {
namespace builtin {
namespace {


// Body units (16 bytes) a thread takes per loop step (builtin/kernels.cu's kUnroll).
constexpr uint64_t kUnitsPerThread = 4;
constexpr uint64_t kUnitBytes = 16;
// Blocks per SM a launch aims at (2048 resident threads on sm_80/90).
constexpr uint64_t kBlocksPerSm = 8;

// The H200's L2 when the GPU does not say.
constexpr uint64_t kDefaultL2Bytes = uint64_t{50} << 20;

uint64_t ceilPow2(uint64_t v) { return v <= 1 ? 1 : std::bit_ceil(v); }

Status submit(Stream& st, Function& f, uint32_t blocks, uint32_t threads, nvl::builtin::Args& a) {
    a.magic = nvl::builtin::kMagic;
    void* params[] = {&a};
    LaunchRequest r{};
    r.grid[0] = blocks;
    r.grid[1] = r.grid[2] = 1;
    r.block[0] = threads;
    r.block[1] = r.block[2] = 1;
    r.sharedMemBytes = 0;
    r.kernelParams = params;
    r.extra = nullptr;
    r.ownKernel = true;
    return launchKernel(st, f, r);
}

// A 1-D copy or fill on a line kernel ('bytes' the line's length, 'traffic'
// the bytes it moves through memory).
Status launchLine(Stream& st, const BuiltinKernels::Kernel& k, uint64_t bytes, uint64_t traffic,
                  nvl::builtin::Args& a) {
    const Variant& v = variant();
    const uint32_t blocks = lineBlocks(bytes, v, k.residentBlocks);
    const uint32_t l2 = st.context().device().info().l2CacheBytes;
    if (v.stream && traffic > (l2 ? l2 : kDefaultL2Bytes)) a.flags |= nvl::builtin::kFlagStream;
    a.lines = a.slices = 1;
    return submit(st, *k.function, blocks, v.threads, a);
}

Status launch(Stream& st, const BuiltinKernels::Kernel& k, const Box& b, uint64_t lineBytes, nvl::builtin::Args& a) {
    Function& f = *k.function;
    const Geometry g = geometry(lineBytes, b.lines * b.slices, st.context().device().info().smCount,
                                k.residentBlocks);
    a.magic = nvl::builtin::kMagic;
    a.dst = b.dst;
    a.width = b.width;
    a.lines = b.lines;
    a.slices = b.slices;
    a.dstPitch = b.dstPitch;
    a.dstSlicePitch = b.dstSlicePitch;
    a.lineThreads = g.lineThreads;
    return submit(st, f, g.blocks, nvl::builtin::kBlockThreads, a);
}

// Whether the box's lines (and slices) lie back to back on both sides: one line.
bool packed(const Box& b, bool copy) {
    const uint64_t bytes = b.width;  // copies: bytes per line
    const bool dstLines = b.lines == 1 || b.dstPitch == bytes;
    const bool srcLines = !copy || b.lines == 1 || b.srcPitch == bytes;
    const bool dstSlices = b.slices == 1 || b.dstSlicePitch == bytes * b.lines;
    const bool srcSlices = !copy || b.slices == 1 || b.srcSlicePitch == bytes * b.lines;
    return dstLines && srcLines && dstSlices && srcSlices;
}

}  // namespace

const Variant& variant() {
    static const Variant* const chosen = [] {
        const char* name = env::value("NVLITE_BUILTIN_VARIANT");
        if (name)
            for (const Variant& v : kVariants)
                if (std::strcmp(v.name, name) == 0) return &v;
        return &kVariants[0];
    }();
    return *chosen;
}

uint32_t lineBlocks(uint64_t bytes, const Variant& v, uint64_t residentBlocks) {
    const uint64_t chunk = uint64_t{v.threads} * nvl::builtin::kLineUnroll * kUnitBytes;
    uint64_t blocks = bytes / chunk + 1;
    if (v.persistent) blocks = std::min(blocks, std::max<uint64_t>(residentBlocks, 1));
    return static_cast<uint32_t>(std::min<uint64_t>(blocks, INT32_MAX));
}

bool wantCopy(Stream& st, uint64_t bytes) {
    static const uint64_t min = env::bytes("NVLITE_KERNEL_COPY_MIN", kDefaultCopyMinBytes);
    return min != UINT64_MAX && bytes != 0 && bytes >= min && st.context().builtins().usable();
}

bool wantFill(Stream& st, uint64_t bytes) {
    static const uint64_t min = env::bytes("NVLITE_KERNEL_FILL_MIN", kDefaultFillMinBytes);
    return min != UINT64_MAX && bytes != 0 && bytes >= min && st.context().builtins().usable();
}

bool fits(const Box& b) {
    return b.lines >= 1 && b.slices >= 1 && b.lines <= UINT32_MAX && b.slices <= UINT32_MAX &&
           b.lines * b.slices / b.slices == b.lines;
}

uint64_t span(uint64_t pitch, uint64_t slicePitch, const Box& b) {
    return (b.slices - 1) * slicePitch + (b.lines - 1) * pitch + b.width;
}

Geometry geometry(uint64_t lineBytes, uint64_t lines, uint32_t smCount, uint64_t residentBlocks) {
    const uint64_t maxBlocks =
        std::bit_floor(std::max<uint64_t>(std::min(uint64_t{smCount} * kBlocksPerSm, residentBlocks), 1));
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
    NVL_ASSIGN_OR_RETURN(const BuiltinKernels::Set k, st.context().builtins().kernels());
    nvl::builtin::Args a{};
    a.op = nvl::builtin::kOpCopy;
    a.src = b.src;
    a.srcPitch = b.srcPitch;
    a.srcSlicePitch = b.srcSlicePitch;
    if (variant().line && packed(b, true)) {
        a.op = nvl::builtin::kOpCopyLine;
        const uint64_t bytes = b.width * b.lines * b.slices;
        a.width = bytes;
        a.dst = b.dst;
        return launchLine(st, k.copyLine, bytes, 2 * bytes, a);
    }
    return launch(st, k.copy, b, b.width, a);
}

Status fill(Stream& st, const Box& b, uint32_t value, uint32_t elementSize) {
    NVL_ASSIGN_OR_RETURN(const BuiltinKernels::Set k, st.context().builtins().kernels());
    nvl::builtin::Args a{};
    a.op = nvl::builtin::kOpFill;
    a.value = value;
    a.elementSize = elementSize;
    if (variant().line && packed(Box{b.dst, b.dstPitch, b.dstSlicePitch, 0, 0, 0, b.width * elementSize, b.lines,
                                     b.slices},
                                 false)) {
        a.op = nvl::builtin::kOpFillLine;
        const uint64_t count = b.width * b.lines * b.slices;
        a.width = count;
        a.dst = b.dst;
        return launchLine(st, k.fillLine, count * elementSize, count * elementSize, a);
    }
    return launch(st, k.fill, b, b.width * elementSize, a);
}

}  // namespace builtin

namespace {

// Blocks of 'threads' the GPU holds at once (SMs x resident blocks per SM).
BuiltinKernels::Kernel resident(Function* f, uint32_t threads, uint32_t smCount) {
    const uint64_t sms = std::max<uint32_t>(smCount, 1);
    auto perSm = maxActiveBlocksPerSm(*f, static_cast<int>(threads), 0, 0);
    return {f, sms * static_cast<uint64_t>(perSm && *perSm > 0 ? *perSm : 1)};
}

}  // namespace

Status BuiltinKernels::loadLocked() {
    if (module_ && module_->loaded()) return kOk;
    module_ = nullptr;
    set_ = Set{};
    const hw::GpuInfo& gi = ctx_.device().info();
    const loader::Bytes cubin = loader::builtin::embeddedCubin(gi.smMajor * 10 + gi.smMinor);
    if (cubin.empty()) return CUDA_ERROR_NOT_SUPPORTED;
    loader::JitOptions jit;
    NVL_ASSIGN_OR_RETURN(loader::Image image, loader::load(cubin.data(), cubin.size(), gi.smMajor, gi.smMinor, jit));
    NVL_ASSIGN_OR_RETURN(Module * m, Module::load(ctx_, std::move(image), nullptr, Module::Placement::Own));
    NVL_ASSIGN_OR_RETURN(Function * c, m->function(NVL_BUILTIN_COPY_NAME));
    NVL_ASSIGN_OR_RETURN(Function * f, m->function(NVL_BUILTIN_FILL_NAME));
    NVL_ASSIGN_OR_RETURN(Function * cl, m->function(NVL_BUILTIN_COPY_LINE_NAME));
    NVL_ASSIGN_OR_RETURN(Function * fl, m->function(NVL_BUILTIN_FILL_LINE_NAME));
    const uint32_t lineThreads = builtin::variant().threads;
    module_ = m;
    set_.copy = resident(c, nvl::builtin::kBlockThreads, gi.smCount);
    set_.fill = resident(f, nvl::builtin::kBlockThreads, gi.smCount);
    set_.copyLine = resident(cl, lineThreads, gi.smCount);
    set_.fillLine = resident(fl, lineThreads, gi.smCount);
    return kOk;
}

Result<BuiltinKernels::Set> BuiltinKernels::kernels() {
    std::lock_guard lock(mutex_);
    NVL_TRY(loadLocked());
    return set_;
}

void BuiltinKernels::forget() {
    std::lock_guard lock(mutex_);
    module_ = nullptr;
    set_ = Set{};
}

bool BuiltinKernels::usable() {
    std::lock_guard lock(mutex_);
    return loadLocked().ok();
}

bool BuiltinKernels::loaded() {
    std::lock_guard lock(mutex_);
    return module_ && module_->loaded();
}

}  // namespace nvl::core
