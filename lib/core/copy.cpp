#include "core/copy.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "core/builtin.h"
#include "core/context.h"
#include "core/device.h"
#include "core/mem_pool.h"
#include "core/peer.h"
#include "core/copy_rect.h"
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
    // Several GPUs: the device the memory belongs to (nullptr: any, or not
    // known), the context that owns it, and whether it is cuMemAlloc memory.
    const Device* device = nullptr;
    Context* owner = nullptr;
    bool heapMemory = false;
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
    const Device* device = a->context ? &a->context->device() : a->pool ? &a->pool->device() : nullptr;
    if (a->kind == MemoryKind::Device || a->kind == MemoryKind::ModuleGlobal)
        return Place{Place::Gpu, addr, a->cpuVisible, device, a->context, a->kind == MemoryKind::Device && !a->pool};
    return Place{Place::Pinned, addr, false, device, a->context, false};
}

// ------------------------------------------------------------ several GPUs

// Memory of another device than the stream's.
bool remote(const Stream& st, const Place& p) {
    return p.kind != Place::Pageable && p.device && p.device != &st.context().device();
}

// Makes a remote side reachable from st's GPU; false when it cannot be.
Result<bool> reach(Stream& st, Place& p, uint64_t bytes) {
    if (!remote(st, p)) return true;
    if (!p.owner || (p.kind == Place::Gpu && !p.heapMemory)) return false;
    NVL_ASSIGN_OR_RETURN(bool ok, reachFrom(st, *p.owner, p.kind == Place::Gpu, p.address, bytes));
    if (ok) p.device = nullptr;  // local now
    return ok;
}

Status copyPlaces(Stream& st, Place dst, Place src, uint64_t bytes, Sync sync);

// A side that st's GPU cannot reach: the copy goes through host memory, in
// pieces, each side read or written by a stream of its own device (after
// st's earlier work; returns once done).
Status stagedAcrossDevices(Stream& st, Place dst, Place src, uint64_t bytes) {
    Stream* reader = &st;
    Stream* writer = &st;
    if (remote(st, src)) {
        if (!src.owner) return CUDA_ERROR_NOT_SUPPORTED;  // pool memory: no context of its device at hand
        reader = &src.owner->nullStream();
    }
    if (remote(st, dst)) {
        if (!dst.owner) return CUDA_ERROR_NOT_SUPPORTED;
        writer = &dst.owner->nullStream();
    }
    NVL_TRY(st.synchronize());
    constexpr uint64_t kPiece = 8ull << 20;
    std::vector<uint8_t> buffer(std::min(bytes, kPiece));
    const Place tmp{Place::Pageable, reinterpret_cast<uint64_t>(buffer.data())};
    src.device = dst.device = nullptr;
    for (uint64_t done = 0; done < bytes;) {
        const uint64_t n = std::min(kPiece, bytes - done);
        Place s = src, d = dst;
        s.address += done;
        d.address += done;
        NVL_TRY(reader->context().noted(copyPlaces(*reader, tmp, s, n, Sync::Blocking)));
        NVL_TRY(writer->context().noted(copyPlaces(*writer, d, tmp, n, Sync::Blocking)));
        done += n;
    }
    return kOk;
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
    if (remote(st, dst) || remote(st, src)) {
        NVL_ASSIGN_OR_RETURN(bool dstReached, reach(st, dst, bytes));
        NVL_ASSIGN_OR_RETURN(bool srcReached, reach(st, src, bytes));
        if (!dstReached || !srcReached) return stagedAcrossDevices(st, dst, src, bytes);
    }
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
    // Between device memory: a kernel, at memory speed (small copies stay on
    // the copy engine, and so do overlapping ones: the copy engine gives
    // memmove's result, which nvlite promises). Device-to-device copies never wait.
    if (dst.kind == Place::Gpu && src.kind == Place::Gpu && builtin::wantCopy(st, bytes) &&
        !builtin::overlap(dst.address, bytes, src.address, bytes))
        return builtin::copy(st, builtin::Box{dst.address, bytes, 0, src.address, bytes, 0, bytes, 1, 1});
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

// ---------------------------------------------------------------- rectangles

// a * b + c without overflow, or nothing.
std::optional<uint64_t> mulAdd(uint64_t a, uint64_t b, uint64_t c) {
    uint64_t m, r;
    if (__builtin_mul_overflow(a, b, &m) || __builtin_add_overflow(m, c, &r)) return std::nullopt;
    return r;
}

// Bytes from a side's first byte to one past its last: the last line of
// the last slice ends there.
std::optional<uint64_t> span(const CopySide& s, const Extent& e) {
    auto slices = mulAdd(e.depth - 1, s.slicePitch, 0);
    if (!slices) return std::nullopt;
    auto lines = mulAdd(e.height - 1, s.pitch, *slices);
    if (!lines) return std::nullopt;
    return mulAdd(1, e.width, *lines);
}

// Where a side of a 2-D/3-D copy lives, from how the caller named it.
Result<Place> resolve(const CopySide& s, uint64_t bytes) {
    switch (s.naming) {
    case Naming::Device:
        if (auto p = gpuReachable(s.address, bytes)) return *p;
        return CUDA_ERROR_INVALID_VALUE;
    case Naming::Host: {
        auto p = gpuReachable(s.address, bytes);
        if (p && p->kind == Place::Pinned) return *p;
        // Device memory is not host memory.
        if (auto a = AddressMap::get().find(s.address); a && a->kind != MemoryKind::HostAllocated &&
                                                        a->kind != MemoryKind::HostRegistered)
            return CUDA_ERROR_INVALID_VALUE;
        return Place{Place::Pageable, s.address};
    }
    case Naming::Unified:
        break;
    }
    Place p = classify(s.address, bytes);
    // Inside an allocation but running past its end: an error, not pageable memory.
    if (p.kind == Place::Pageable && AddressMap::get().find(s.address)) return CUDA_ERROR_INVALID_VALUE;
    return p;
}

// The rectangles of a 3-D copy: one per slice, or one for all when the
// slices are packed on both sides (each slice's lines follow the previous
// slice's at the same pitch); packed lines are one line.
std::vector<Rect> planRects(const CopySide& dst, const CopySide& src, const Extent& e) {
    std::vector<Rect> rects;
    auto packedSlices = [&](const CopySide& s) { return s.slicePitch == s.pitch * e.height; };
    uint64_t lines = e.height, slices = e.depth;
    if (e.depth > 1 && packedSlices(dst) && packedSlices(src) && mulAdd(e.height, e.depth, 0)) {
        lines = e.height * e.depth;
        slices = 1;
    }
    rects.reserve(slices);
    for (uint64_t z = 0; z < slices; ++z) {
        Rect r{dst.address + z * dst.slicePitch, dst.pitch, src.address + z * src.slicePitch, src.pitch, e.width, lines};
        if (r.lines > 1 && r.dstPitch == r.width && r.srcPitch == r.width) r = Rect::linear(r.dst, r.src, r.bytes());
        rects.push_back(r);
    }
    return rects;
}

// The copy-engine work of one rectangle between GPU-reachable memory: one
// launch per line where a pitch is too wide for the engine.
template <class Emit>
void forEachEngineCopy(const Rect& r, Emit&& emit) {
    const bool narrow = r.width <= hw::kMaxPitch && r.dstPitch <= hw::kMaxPitch && r.srcPitch <= hw::kMaxPitch;
    if (r.lines == 1) {
        emit(hw::copyDwords(r.width), [r](hw::PushWriter& w) { hw::copy(w, r.dst, r.src, r.width); });
    } else if (narrow) {
        emit(hw::copy2DDwords(r.lines), [r](hw::PushWriter& w) {
            hw::copy2D(w, r.dst, r.dstPitch, r.src, r.srcPitch, r.width, r.lines);
        });
    } else {
        for (uint64_t l = 0; l < r.lines; ++l) {
            const uint64_t d = r.dst + l * r.dstPitch, s = r.src + l * r.srcPitch;
            emit(hw::copyDwords(r.width), [=](hw::PushWriter& w) { hw::copy(w, d, s, r.width); });
        }
    }
}

// Device-side work of every 2-D/3-D copy (both sides GPU-reachable) goes
// through here: the place to choose another engine (a copy kernel) for it.
// Rectangles share submissions up to a push-buffer budget.
Status submitRects(Stream& st, const std::vector<Rect>& rects, bool wait) {
    constexpr size_t kBudget = 4096;  // dwords per submission
    using Op = std::function<void(hw::PushWriter&)>;
    hw::Channel& ch = st.copyChannel();
    std::vector<Op> ops;
    size_t dwords = 0;
    uint64_t last = 0;
    auto flush = [&]() -> Status {
        if (ops.empty()) return kOk;
        NVL_ASSIGN_OR_RETURN(last, st.submit(ch, dwords, [&](hw::PushWriter& w) {
            for (const Op& op : ops) op(w);
        }));
        ops.clear();
        dwords = 0;
        return kOk;
    };
    Status failed = kOk;
    for (const Rect& r : rects) {
        forEachEngineCopy(r, [&](size_t n, Op op) {
            if (!failed.ok()) return;
            if (dwords + n > kBudget) failed = flush();
            ops.push_back(std::move(op));
            dwords += n;
        });
        NVL_TRY(failed);
    }
    NVL_TRY(flush());
    return wait && last ? ch.wait(last) : kOk;
}

// Host to host: after earlier GPU work, by the CPU, line by line.
Status hostRects(Stream& st, const std::vector<Rect>& rects) {
    NVL_TRY(st.context().synchronize());
    for (const Rect& r : rects)
        for (uint64_t l = 0; l < r.lines; ++l)
            std::memmove(reinterpret_cast<void*>(r.dst + l * r.dstPitch),
                         reinterpret_cast<const void*>(r.src + l * r.srcPitch), r.width);
    return kOk;
}

Status submitFill2D(Stream& st, uint64_t dst, uint64_t pitch, uint32_t value, uint32_t elementSize, uint64_t count,
                    uint64_t lines, bool wait) {
    hw::Channel& ch = st.copyChannel();
    uint64_t done = 0;
    if (pitch <= hw::kMaxPitch) {
        NVL_ASSIGN_OR_RETURN(done, st.submit(ch, hw::fill2DDwords(lines), [&](hw::PushWriter& w) {
            hw::fill2D(w, dst, pitch, value, elementSize, count, lines);
        }));
    } else {
        for (uint64_t l = 0; l < lines; ++l) {
            NVL_ASSIGN_OR_RETURN(done, st.submit(ch, hw::fillDwords(count * elementSize, elementSize),
                                                 [&](hw::PushWriter& w) {
                                                     hw::fill(w, dst + l * pitch, value, elementSize, count);
                                                 }));
        }
    }
    return wait ? ch.wait(done) : kOk;
}

// Blocking copies are synchronising calls: kernels' printf output comes out.
Status flushed(Stream& st, Sync sync, Status s) {
    if (sync == Sync::Blocking) st.context().flushDeviceOutput();
    return s;
}

}  // namespace

// A copy of nothing succeeds whatever its addresses (libcuda 580: numba
// copies empty arrays from and to a NULL device pointer).
Status copyHostToDevice(Stream& st, uint64_t dst, const void* src, uint64_t bytes, Sync sync) {
    if (bytes == 0) return flushed(st, sync, kOk);
    auto d = gpuReachable(dst, bytes);
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    return flushed(st, sync, copyPlaces(st, *d, classify(reinterpret_cast<uint64_t>(src), bytes), bytes, sync));
}

Status copyDeviceToHost(Stream& st, void* dst, uint64_t src, uint64_t bytes, Sync sync) {
    if (bytes == 0) return flushed(st, sync, kOk);
    auto s = gpuReachable(src, bytes);
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    return flushed(st, sync, copyPlaces(st, classify(reinterpret_cast<uint64_t>(dst), bytes), *s, bytes, sync));
}

Status copyDeviceToDevice(Stream& st, uint64_t dst, uint64_t src, uint64_t bytes, Sync sync) {
    if (bytes == 0) return flushed(st, sync, kOk);
    auto d = gpuReachable(dst, bytes);
    auto s = gpuReachable(src, bytes);
    if (!d || !s) return CUDA_ERROR_INVALID_VALUE;
    return flushed(st, sync, copyPlaces(st, *d, *s, bytes, sync));
}

Status copyUnified(Stream& st, uint64_t dst, uint64_t src, uint64_t bytes, Sync sync) {
    if (bytes == 0) return flushed(st, sync, kOk);
    Place d = classify(dst, bytes);
    Place s = classify(src, bytes);
    // An address inside an allocation but running past its end is an error,
    // not pageable memory.
    if (d.kind == Place::Pageable && AddressMap::get().find(dst)) return CUDA_ERROR_INVALID_VALUE;
    if (s.kind == Place::Pageable && AddressMap::get().find(src)) return CUDA_ERROR_INVALID_VALUE;
    return flushed(st, sync, copyPlaces(st, d, s, bytes, sync));
}

Status fill(Stream& st, uint64_t dst, uint32_t value, uint32_t elementSize, uint64_t count, Sync sync) {
    const uint64_t bytes = count * elementSize;
    if (count != 0 && bytes / elementSize != count) return CUDA_ERROR_INVALID_VALUE;
    if (dst % elementSize != 0) return CUDA_ERROR_INVALID_VALUE;
    if (count == 0) return kOk;  // a fill of nothing, as a copy of nothing
    auto d = gpuReachable(dst, bytes);
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(bool reached, reach(st, *d, bytes));
    if (!reached) return CUDA_ERROR_NOT_SUPPORTED;  // another device's memory, no peer link
    // Device memory: a kernel when it is large enough.
    if (d->kind == Place::Gpu && builtin::wantFill(st, bytes))
        return builtin::fill(st, builtin::Box{dst, bytes, 0, 0, 0, 0, count, 1, 1}, value, elementSize);
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

namespace {

Status copyRects(Stream& st, const CopySide& dst, const CopySide& src, const Extent& extent, Sync sync) {
    if (extent.width == 0 || extent.height == 0 || extent.depth == 0) return kOk;
    auto dstSpan = span(dst, extent), srcSpan = span(src, extent);
    if (!dstSpan || !srcSpan) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Place d, resolve(dst, *dstSpan));
    NVL_ASSIGN_OR_RETURN(Place s, resolve(src, *srcSpan));
    // Another device's memory: over the peer link, else not provided.
    NVL_ASSIGN_OR_RETURN(bool dstReached, reach(st, d, *dstSpan));
    NVL_ASSIGN_OR_RETURN(bool srcReached, reach(st, s, *srcSpan));
    if (!dstReached || !srcReached) return CUDA_ERROR_NOT_SUPPORTED;
    const std::vector<Rect> rects = planRects(dst, src, extent);
    const bool dstHost = d.kind != Place::Gpu, srcHost = s.kind != Place::Gpu;
    if (dstHost && srcHost) return hostRects(st, rects);
    Staging& staging = st.context().staging();
    if (d.kind == Place::Pageable) {
        for (const Rect& r : rects) NVL_TRY(staging.fromDevice(st, st.copyChannel(), r));
        return kOk;
    }
    if (s.kind == Place::Pageable) {
        for (const Rect& r : rects) NVL_TRY(staging.toDevice(st, st.copyChannel(), r));
        return kOk;
    }
    // Between device memory: one kernel for the whole box when it is large enough.
    if (d.kind == Place::Gpu && s.kind == Place::Gpu) {
        const builtin::Box box{dst.address, dst.pitch, dst.slicePitch, src.address, src.pitch, src.slicePitch,
                               extent.width, extent.height, extent.depth};
        if (builtin::fits(box) && builtin::wantCopy(st, extent.width * extent.height * extent.depth) &&
            !builtin::overlap(box.dst, builtin::span(box.dstPitch, box.dstSlicePitch, box), box.src,
                              builtin::span(box.srcPitch, box.srcSlicePitch, box)))
            return builtin::copy(st, box);
    }
    return submitRects(st, rects, sync == Sync::Blocking && (dstHost || srcHost));
}

}  // namespace

Status copy3D(Stream& st, const CopySide& dst, const CopySide& src, const Extent& extent, Sync sync) {
    return flushed(st, sync, copyRects(st, dst, src, extent, sync));
}

Status fill2D(Stream& st, uint64_t dst, uint64_t pitch, uint32_t value, uint32_t elementSize, uint64_t width,
              uint64_t height, Sync sync) {
    if (width == 0 || height == 0) return kOk;
    auto lineBytes = mulAdd(width, elementSize, 0);
    if (!lineBytes) return CUDA_ERROR_INVALID_VALUE;
    auto bytes = mulAdd(height - 1, pitch, *lineBytes);
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    auto d = gpuReachable(dst, *bytes);
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(bool reached, reach(st, *d, *bytes));
    if (!reached) return CUDA_ERROR_NOT_SUPPORTED;  // another device's memory, no peer link
    // Fills of pinned host memory are synchronous; of device memory, never.
    const bool wait = sync == Sync::Blocking && d->kind == Place::Pinned;
    // Device memory: a kernel when it is large enough (and every line starts
    // on an element).
    if (d->kind == Place::Gpu && dst % elementSize == 0 && pitch % elementSize == 0 && builtin::wantFill(st, *bytes)) {
        const bool packed = height == 1 || pitch == *lineBytes;
        const builtin::Box box{dst, packed ? *lineBytes * height : pitch, 0, 0, 0, 0,
                               packed ? width * height : width, packed ? 1 : height, 1};
        if (builtin::fits(box)) return builtin::fill(st, box, value, elementSize);
    }
    // Packed lines are one 1-D fill.
    if (height == 1 || pitch == *lineBytes) {
        auto count = mulAdd(width, height, 0);
        if (!count) return CUDA_ERROR_INVALID_VALUE;
        return submitFill(st, dst, value, elementSize, *count, wait);
    }
    return submitFill2D(st, dst, pitch, value, elementSize, width, height, wait);
}

}  // namespace nvl::core
