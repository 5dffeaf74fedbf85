#include "core/mem_pool.h"

#include <algorithm>
#include <cstring>

#include "common/align.h"
#include "core/context.h"
#include "core/device.h"
#include "core/memory.h"

namespace nvl::core {
namespace {

// Shared chunks up to this size are also mapped for the CPU (BAR1), as the
// context heap's are, for the small-copy fast paths.
constexpr uint64_t kCpuMappedMax = 64ull << 20;

bool reached(const Dependencies& deps) {
    for (const Point& p : deps)
        if (!p.done()) return false;
    return true;
}

}  // namespace

// ---------------------------------------------------------------- MemPool

MemPool::~MemPool() {
    for (auto& c : chunks_) reservedTotal_.fetch_sub(c->size(), std::memory_order_acq_rel);
}

void MemPool::noteUsed(int64_t delta) {
    used_ = static_cast<uint64_t>(static_cast<int64_t>(used_) + delta);
    usedHigh_ = std::max(usedHigh_, used_);
}

void MemPool::giveBack(Chunk& chunk, uint64_t va, uint64_t length) {
    auto [it, inserted] = chunk.free.emplace(va, length);
    (void)inserted;
    chunk.freeBytes += length;
    auto next = std::next(it);
    if (next != chunk.free.end() && it->first + it->second == next->first) {
        it->second += next->second;
        chunk.free.erase(next);
    }
    if (it != chunk.free.begin()) {
        auto prev = std::prev(it);
        if (prev->first + prev->second == it->first) {
            prev->second += it->second;
            chunk.free.erase(it);
        }
    }
}

void MemPool::sweep(bool always) {
    if (!opportunistic_ && !always) return;
    std::erase_if(pending_, [&](const Pending& p) {
        if (!reached(p.after)) return false;
        giveBack(*p.chunk, p.va, p.length);
        return true;
    });
}

void MemPool::release(uint64_t keep) {
    std::erase_if(chunks_, [&](const std::unique_ptr<Chunk>& c) {
        if (reserved_ <= keep || !c->empty()) return false;
        reserved_ -= c->size();
        reservedTotal_.fetch_sub(c->size(), std::memory_order_acq_rel);
        return true;
    });
}

Result<MemPool::Chunk*> MemPool::grow(uint64_t length) {
    const uint64_t own = alignUp(length, kGranularity);
    uint64_t size = alignUp(length, kChunkSize);
    if (own < length || size < length) return CUDA_ERROR_OUT_OF_MEMORY;
    if (maxSize_ && reserved_ + size > maxSize_) {
        if (reserved_ + own > maxSize_) return CUDA_ERROR_OUT_OF_MEMORY;
        size = own;
    }
    hw::VideoMemoryOptions opts;
    opts.cpuMapped = size <= kCpuMappedMax;
    auto mem = device_.gpu().allocVideo(size, opts);
    if (!mem && mem.status().code() == CUDA_ERROR_OUT_OF_MEMORY) {
        // Empty chunks first, then a chunk just large enough.
        sweep(true);
        release(0);
        mem = device_.gpu().allocVideo(size, opts);
        if (!mem && size != own) {
            opts.cpuMapped = own <= kCpuMappedMax;
            mem = device_.gpu().allocVideo(own, opts);
        }
    }
    if (!mem) return mem.status();
    auto chunk = std::make_unique<Chunk>();
    chunk->memory = std::move(*mem);
    chunk->free[chunk->base()] = chunk->size();
    chunk->freeBytes = chunk->size();
    reserved_ += chunk->size();
    reservedHigh_ = std::max(reservedHigh_, reserved_);
    reservedTotal_.fetch_add(chunk->size(), std::memory_order_acq_rel);
    chunks_.push_back(std::move(chunk));
    return chunks_.back().get();
}

uint64_t MemPool::carve(Chunk& chunk, uint64_t va, uint64_t length) {
    auto it = chunk.free.find(va);
    const uint64_t rest = it->second - length;
    chunk.free.erase(it);
    if (rest) chunk.free[va + length] = rest;
    chunk.freeBytes -= length;
    return va;
}

uint64_t MemPool::takePending(size_t i, uint64_t length) {
    Pending& p = pending_[i];
    const uint64_t va = p.va;
    if (p.length > length) {
        p.va += length;
        p.length -= length;
    } else {
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return va;
}

Result<uint64_t> MemPool::alloc(Stream& st, uint64_t size) {
    const uint64_t length = alignUp(size, kAlignment);
    if (length < size) return CUDA_ERROR_OUT_OF_MEMORY;
    Context& ctx = st.context();
    auto handOut = [&](Chunk* chunk, uint64_t va) {
        live_[va] = Live{chunk, length, size, &ctx};
        noteUsed(static_cast<int64_t>(size));
        return va;
    };
    sweep(false);
    // The smallest range that fits among those free for anyone and the
    // pending frees this stream may take: freed earlier in this stream, or
    // before work this stream follows.
    Chunk* bestChunk = nullptr;
    uint64_t bestVa = 0, bestLength = ~0ull;
    size_t bestPending = SIZE_MAX;
    for (auto& c : chunks_) {
        if (c->freeBytes < length) continue;
        for (const auto& [va, len] : c->free) {
            if (len < length || len >= bestLength) continue;
            bestChunk = c.get(), bestVa = va, bestLength = len;
        }
    }
    Dependencies followed;
    bool haveFollowed = false;
    for (size_t i = 0; i < pending_.size(); ++i) {
        const Pending& p = pending_[i];
        if (p.length < length || p.length > bestLength) continue;  // ties: the freed range
        bool ok = p.streamId == st.id();
        if (!ok && followEvents_ && p.context == &ctx) {
            if (!haveFollowed) {
                followed = st.followed();
                haveFollowed = true;
            }
            ok = followed.covers(p.after, opportunistic_);
        }
        if (ok) bestPending = i, bestLength = p.length;
    }
    if (bestPending != SIZE_MAX) {
        Chunk* chunk = pending_[bestPending].chunk;
        return handOut(chunk, takePending(bestPending, length));
    }
    if (bestChunk) return handOut(bestChunk, carve(*bestChunk, bestVa, length));
    // New memory.
    auto grown = grow(length);
    if (grown) return handOut(*grown, carve(**grown, (*grown)->base(), length));
    if (grown.status().code() != CUDA_ERROR_OUT_OF_MEMORY) return grown.status();
    // Out of memory: wait, in the stream, for a pending free (of this context's streams).
    if (internalDependencies_) {
        for (size_t i = 0; i < pending_.size(); ++i) {
            const Pending& p = pending_[i];
            if (p.length < length || p.context != &ctx) continue;
            NVL_TRY(st.waitForAll(p.after));
            Chunk* chunk = p.chunk;
            return handOut(chunk, takePending(i, length));
        }
    }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

Status MemPool::freeAsync(Stream& st, uint64_t va) {
    auto it = live_.find(va);
    if (it == live_.end()) return CUDA_ERROR_INVALID_VALUE;
    const Live l = it->second;
    live_.erase(it);
    noteUsed(-static_cast<int64_t>(l.size));
    Pending p;
    p.va = va;
    p.length = l.length;
    p.chunk = l.chunk;
    p.streamId = st.id();
    p.context = &st.context();
    // Reached points stay: without opportunistic reuse only the streams
    // that follow them may take the range.
    p.after = st.upcoming();
    if (opportunistic_ && reached(p.after)) giveBack(*p.chunk, va, p.length);
    else pending_.push_back(p);
    return kOk;
}

bool MemPool::freeNow(uint64_t va) {
    auto it = live_.find(va);
    if (it == live_.end()) return false;
    const Live l = it->second;
    live_.erase(it);
    noteUsed(-static_cast<int64_t>(l.size));
    giveBack(*l.chunk, va, l.length);
    return true;
}

void MemPool::releaseContext(Context& ctx) {
    std::erase_if(pending_, [&](const Pending& p) {
        if (p.context != &ctx) return false;
        giveBack(*p.chunk, p.va, p.length);
        return true;
    });
    for (auto& [va, l] : live_)
        if (l.context == &ctx) l.context = nullptr;
}

// ---------------------------------------------------------------- MemPools

MemPools& MemPools::get() {
    static MemPools* pools = new MemPools();  // outlives every context
    return *pools;
}

MemPools::PerDevice& MemPools::perDevice(Device& device) {
    PerDevice& pd = devices_[&device];
    if (!pd.defaultPool) {
        pd.defaultPool = new MemPool(device, 0, true, reservedTotal_);
        pools_.insert(pd.defaultPool);
        pd.current = pd.defaultPool;
    }
    return pd;
}

MemPool* MemPools::live(CUmemoryPool handle) {
    auto* p = reinterpret_cast<MemPool*>(handle);
    return pools_.count(p) ? p : nullptr;
}

MemPool* MemPools::any(void* pool) {
    auto* p = static_cast<MemPool*>(pool);
    return pools_.count(p) || zombies_.count(p) ? p : nullptr;
}

void MemPools::reap(MemPool* p) {
    if (!p->destroyed_) return;
    p->sweep(true);
    if (!p->idle()) return;
    zombies_.erase(p);
    delete p;  // its chunks go back to the driver
}

Result<CUmemoryPool> MemPools::defaultPool(Device& device) {
    std::lock_guard lock(mutex_);
    return perDevice(device).defaultPool->handle();
}

Result<CUmemoryPool> MemPools::currentPool(Device& device) {
    std::lock_guard lock(mutex_);
    return perDevice(device).current->handle();
}

Status MemPools::setCurrentPool(Device& device, CUmemoryPool handle) {
    std::lock_guard lock(mutex_);
    MemPool* p = live(handle);
    if (!p || &p->device() != &device) return CUDA_ERROR_INVALID_VALUE;
    perDevice(device).current = p;
    return kOk;
}

Result<CUmemoryPool> MemPools::create(Device& device, uint64_t maxSize) {
    std::lock_guard lock(mutex_);
    perDevice(device);
    auto* p = new MemPool(device, maxSize, false, reservedTotal_);
    pools_.insert(p);
    return p->handle();
}

Status MemPools::destroy(CUmemoryPool handle) {
    std::lock_guard lock(mutex_);
    MemPool* p = live(handle);
    if (!p || p->isDefault()) return CUDA_ERROR_INVALID_VALUE;
    pools_.erase(p);
    for (auto& [device, pd] : devices_)
        if (pd.current == p) pd.current = pd.defaultPool;
    p->destroyed_ = true;
    zombies_.insert(p);
    reap(p);
    return kOk;
}

Result<Device*> MemPools::deviceOf(CUmemoryPool handle) {
    std::lock_guard lock(mutex_);
    MemPool* p = live(handle);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    return &p->device();
}

Status MemPools::getAttribute(CUmemoryPool handle, CUmemPool_attribute attr, void* value) {
    std::lock_guard lock(mutex_);
    MemPool* p = live(handle);
    if (!p || !value) return CUDA_ERROR_INVALID_VALUE;
    auto putInt = [&](bool v) {
        const int i = v ? 1 : 0;
        std::memcpy(value, &i, sizeof i);
    };
    auto put64 = [&](uint64_t v) { std::memcpy(value, &v, sizeof v); };
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: putInt(p->followEvents_); return kOk;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: putInt(p->opportunistic_); return kOk;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: putInt(p->internalDependencies_); return kOk;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: put64(p->releaseThreshold_); return kOk;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: put64(p->reserved_); return kOk;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: put64(p->reservedHigh_); return kOk;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: put64(p->used_); return kOk;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: put64(p->usedHigh_); return kOk;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

Status MemPools::setAttribute(CUmemoryPool handle, CUmemPool_attribute attr, void* value) {
    std::lock_guard lock(mutex_);
    MemPool* p = live(handle);
    if (!p || !value) return CUDA_ERROR_INVALID_VALUE;
    int i = 0;
    uint64_t v = 0;
    std::memcpy(&i, value, sizeof i);
    std::memcpy(&v, value, sizeof v);
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: p->followEvents_ = i != 0; return kOk;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: p->opportunistic_ = i != 0; return kOk;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: p->internalDependencies_ = i != 0; return kOk;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: p->releaseThreshold_ = v; return kOk;
    // The high watermarks can only be reset (to the current amount).
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        if (v != 0) return CUDA_ERROR_INVALID_VALUE;
        p->reservedHigh_ = p->reserved_;
        return kOk;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (v != 0) return CUDA_ERROR_INVALID_VALUE;
        p->usedHigh_ = p->used_;
        return kOk;
    default: return CUDA_ERROR_INVALID_VALUE;  // the current amounts are read-only
    }
}

Status MemPools::trimTo(CUmemoryPool handle, uint64_t minBytesToKeep) {
    std::lock_guard lock(mutex_);
    MemPool* p = live(handle);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    p->sweep(true);
    p->release(minBytesToKeep);
    return kOk;
}

Result<uint64_t> MemPools::allocAsync(Stream& st, uint64_t size, CUmemoryPool handle) {
    std::lock_guard lock(mutex_);
    Context& ctx = st.context();
    MemPool* p = handle ? live(handle) : perDevice(ctx.device()).current;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    // The pool's memory is its device's: other devices would need peer access.
    if (&p->device() != &ctx.device()) return CUDA_ERROR_NOT_SUPPORTED;
    NVL_ASSIGN_OR_RETURN(uint64_t va, p->alloc(st, size));
    AllocationInfo info{va, size, MemoryKind::Device, nullptr, 0, p->live_.at(va).chunk->memory->cpu() != nullptr};
    info.pool = p;
    AddressMap::get().insert(info);
    return va;
}

Status MemPools::freeAsync(Stream& st, uint64_t va, void* pool) {
    std::lock_guard lock(mutex_);
    MemPool* p = any(pool);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    NVL_TRY(p->freeAsync(st, va));
    AddressMap::get().remove(va);
    reap(p);
    return kOk;
}

Status MemPools::free(uint64_t va, void* pool) {
    Context* owner = nullptr;
    {
        std::lock_guard lock(mutex_);
        MemPool* p = any(pool);
        if (!p) return CUDA_ERROR_INVALID_VALUE;
        auto it = p->live_.find(va);
        if (it == p->live_.end()) return CUDA_ERROR_INVALID_VALUE;
        owner = it->second.context;
    }
    // Work still in flight may use it: the range is reused at once. (A
    // context of the allocation's that went away waited for its work then.)
    Context* current = current::top();
    for (Context* c : {owner, current})
        if (c && c->active()) NVL_TRY(c->noted(c->synchronize()));
    std::lock_guard lock(mutex_);
    MemPool* p = any(pool);
    if (!p || !p->freeNow(va)) return CUDA_ERROR_INVALID_VALUE;
    AddressMap::get().remove(va);
    reap(p);
    return kOk;
}

void MemPools::releaseAboveThresholds(Device& device) {
    std::lock_guard lock(mutex_);
    for (MemPool* p : pools_) {
        if (&p->device() != &device) continue;
        p->sweep(true);
        if (p->reserved_ > p->releaseThreshold_) p->release(p->releaseThreshold_);
    }
    for (MemPool* p : std::vector<MemPool*>(zombies_.begin(), zombies_.end())) reap(p);
}

void MemPools::releaseContext(Context& ctx) {
    std::lock_guard lock(mutex_);
    for (MemPool* p : pools_) p->releaseContext(ctx);
    for (MemPool* p : std::vector<MemPool*>(zombies_.begin(), zombies_.end())) {
        p->releaseContext(ctx);
        reap(p);
    }
}

}  // namespace nvl::core
