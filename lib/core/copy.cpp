#include "core/copy.h"

#include <cstring>
#include <optional>

#include "core/context.h"
#include "core/memory.h"
#include "core/staging.h"
#include "hw/channel.h"
#include "hw/copy_engine.h"
#include "hw/cpu.h"

namespace nvl::core {
namespace {

// Where one side of a copy lives.
struct Place {
    enum Kind { Gpu, Pinned, Pageable } kind;
    uint64_t address;
    bool cpuVisible = false;  // device memory the CPU reaches at the same address (BAR1)
};

// Copies this small are done by the CPU through BAR1 when the stream is
// idle: a write costs a few posted stores, a read one uncached PCIe read,
// both far below a copy-engine round trip.
constexpr uint64_t kCpuWriteMax = 4096;
constexpr uint64_t kCpuReadMax = 16;

// A range the GPU can reach: inside one device or pinned-host allocation.
// The call holds its owner's pass from here on (AddressMap::findInUse).
std::optional<Place> gpuReachable(uint64_t addr, uint64_t bytes) {
    auto a = AddressMap::get().findInUse(addr);
    if (!a || !a->contains(addr, bytes)) return std::nullopt;
    if (a->kind == MemoryKind::Device || a->kind == MemoryKind::ModuleGlobal)
        return Place{Place::Gpu, addr, a->cpuVisible};
    return Place{Place::Pinned, addr};
}

Place classify(uint64_t addr, uint64_t bytes) {
    if (auto p = gpuReachable(addr, bytes)) return *p;
    return Place{Place::Pageable, addr};
}

Status submitCopy(Stream& st, uint64_t dst, uint64_t src, uint64_t bytes, bool wait) {
    hw::Channel& ch = st.copyChannel();
    NVL_ASSIGN_OR_RETURN(uint64_t value, st.submit(ch, hw::copyDwords(bytes), [&](hw::PushWriter& w) {
        hw::copy(w, dst, src, bytes);
    }));
    return wait ? ch.wait(value) : kOk;
}

// Host-to-host through cuMemcpy: fully synchronous, after earlier GPU work.
Status hostToHost(Stream& st, uint64_t dst, uint64_t src, uint64_t bytes) {
    NVL_TRY(st.context().synchronize());
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
    return kOk;
}

Status copyPlaces(Stream& st, Place dst, Place src, uint64_t bytes, Sync sync) {
    if (bytes == 0) return kOk;
    Context& ctx = st.context();
    const bool dstHost = dst.kind != Place::Gpu, srcHost = src.kind != Place::Gpu;
    // Host to host (pinned or not): fully synchronous, a CPU copy.
    if (dstHost && srcHost) return hostToHost(st, dst.address, src.address, bytes);
    if (dst.kind == Place::Pageable)
        return ctx.staging().fromDevice(st, st.copyChannel(), reinterpret_cast<void*>(dst.address), src.address,
                                        bytes);
    // Small copies between host memory and CPU-visible device memory, with
    // nothing in flight that they could overtake: the CPU does them.
    if (dst.kind == Place::Gpu && dst.cpuVisible && srcHost && bytes <= kCpuWriteMax && st.quiet()) {
        std::memcpy(reinterpret_cast<void*>(dst.address), reinterpret_cast<const void*>(src.address), bytes);
        hw::writeBarrier();  // the stores reach the GPU before later reads or doorbells
        return kOk;
    }
    if (src.kind == Place::Gpu && src.cpuVisible && dstHost && bytes <= kCpuReadMax && st.quiet()) {
        std::memcpy(reinterpret_cast<void*>(dst.address), reinterpret_cast<const void*>(src.address), bytes);
        return kOk;
    }
    if (src.kind == Place::Pageable) {
        return ctx.staging().toDevice(st, st.copyChannel(), dst.address, reinterpret_cast<const void*>(src.address),
                                      bytes);
    }
    // A device and a pinned side: the copy engine. Blocking copies that touch
    // host memory wait for completion; device-to-device ones never do.
    const bool wait = sync == Sync::Blocking && (dstHost || srcHost);
    return submitCopy(st, dst.address, src.address, bytes, wait);
}

Status submitFill(Stream& st, uint64_t dst, uint32_t value, uint32_t elementSize, uint64_t count, bool wait) {
    hw::Channel& ch = st.copyChannel();
    NVL_ASSIGN_OR_RETURN(uint64_t done, st.submit(ch, hw::fillDwords(count * elementSize, elementSize),
                                                  [&](hw::PushWriter& w) {
                                                      hw::fill(w, dst, value, elementSize, count);
                                                  }));
    return wait ? ch.wait(done) : kOk;
}

}  // namespace

Status copyHostToDevice(Stream& st, uint64_t dst, const void* src, uint64_t bytes, Sync sync) {
    auto d = gpuReachable(dst, bytes);
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    return copyPlaces(st, *d, classify(reinterpret_cast<uint64_t>(src), bytes), bytes, sync);
}

Status copyDeviceToHost(Stream& st, void* dst, uint64_t src, uint64_t bytes, Sync sync) {
    auto s = gpuReachable(src, bytes);
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    return copyPlaces(st, classify(reinterpret_cast<uint64_t>(dst), bytes), *s, bytes, sync);
}

Status copyDeviceToDevice(Stream& st, uint64_t dst, uint64_t src, uint64_t bytes, Sync sync) {
    auto d = gpuReachable(dst, bytes);
    auto s = gpuReachable(src, bytes);
    if (!d || !s) return CUDA_ERROR_INVALID_VALUE;
    return copyPlaces(st, *d, *s, bytes, sync);
}

Status copyUnified(Stream& st, uint64_t dst, uint64_t src, uint64_t bytes, Sync sync) {
    Place d = classify(dst, bytes);
    Place s = classify(src, bytes);
    // An address inside an allocation but running past its end is an error,
    // not pageable memory.
    if (d.kind == Place::Pageable && AddressMap::get().find(dst)) return CUDA_ERROR_INVALID_VALUE;
    if (s.kind == Place::Pageable && AddressMap::get().find(src)) return CUDA_ERROR_INVALID_VALUE;
    return copyPlaces(st, d, s, bytes, sync);
}

Status fill(Stream& st, uint64_t dst, uint32_t value, uint32_t elementSize, uint64_t count, Sync sync) {
    const uint64_t bytes = count * elementSize;
    if (count != 0 && bytes / elementSize != count) return CUDA_ERROR_INVALID_VALUE;
    if (dst % elementSize != 0) return CUDA_ERROR_INVALID_VALUE;
    auto d = gpuReachable(dst, bytes);
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (count == 0) return kOk;
    // Fills of pinned host memory are synchronous; of device memory, never.
    return submitFill(st, dst, value, elementSize, count, sync == Sync::Blocking && d->kind == Place::Pinned);
}

Status uploadToDevice(Context& ctx, uint64_t dst, const void* src, uint64_t bytes, uint64_t zeroBytes) {
    Stream& st = ctx.nullStream();
    NVL_TRY(copyPlaces(st, Place{Place::Gpu, dst}, classify(reinterpret_cast<uint64_t>(src), bytes), bytes,
                       Sync::Blocking));
    if (zeroBytes) NVL_TRY(submitFill(st, dst + bytes, 0, 1, zeroBytes, false));
    return st.synchronize();
}

}  // namespace nvl::core
