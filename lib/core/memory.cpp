#include "core/memory.h"

#include <unistd.h>

#include <algorithm>
#include <bit>

#include "common/align.h"
#include "core/call_scope.h"
#include "core/context.h"
#include "hw/driver.h"
#include "hw/gpu.h"

namespace nvl::core {
namespace {


uint64_t pageSize() {
    static const uint64_t size = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

}  // namespace

// ---------------------------------------------------------------- AddressMap

AddressMap& AddressMap::get() {
    static AddressMap* map = new AddressMap();  // outlives every context
    return *map;
}

std::optional<AllocationInfo> AddressMap::find(uint64_t addr) const {
    std::shared_lock lock(mutex_);
    auto it = byBase_.upper_bound(addr);
    if (it == byBase_.begin()) return std::nullopt;
    --it;
    const AllocationInfo& a = it->second;
    // A zero-byte window never matches; an address inside [base, base+size) does.
    if (addr - a.base < std::max<uint64_t>(a.size, 1)) return a;
    return std::nullopt;
}

std::optional<AllocationInfo> AddressMap::findInUse(uint64_t addr) const {
    std::shared_lock lock(mutex_);
    auto it = byBase_.upper_bound(addr);
    if (it == byBase_.begin()) return std::nullopt;
    --it;
    const AllocationInfo& a = it->second;
    if (addr - a.base >= std::max<uint64_t>(a.size, 1)) return std::nullopt;
    // Under the lock the context is alive: its destroy removes its entries
    // (removeContext) only after closing its gate and draining the passes.
    if (a.context && !CallScope::use(*a.context)) return std::nullopt;
    return a;
}

bool AddressMap::overlaps(uint64_t addr, uint64_t len) const {
    std::shared_lock lock(mutex_);
    auto it = byBase_.lower_bound(addr + len);
    if (it == byBase_.begin()) return false;
    --it;
    return it->second.base + it->second.size > addr;
}

void AddressMap::insert(const AllocationInfo& info) {
    std::unique_lock lock(mutex_);
    AllocationInfo& a = byBase_[info.base];
    a = info;
    a.id = ++lastId_;
}

std::optional<AllocationInfo> AddressMap::remove(uint64_t base) {
    std::unique_lock lock(mutex_);
    auto it = byBase_.find(base);
    if (it == byBase_.end()) return std::nullopt;
    AllocationInfo info = it->second;
    byBase_.erase(it);
    return info;
}

std::vector<AllocationInfo> AddressMap::removeContext(Context* ctx) {
    std::unique_lock lock(mutex_);
    std::vector<AllocationInfo> out;
    for (auto it = byBase_.begin(); it != byBase_.end();) {
        if (it->second.context == ctx) {
            out.push_back(it->second);
            it = byBase_.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

// ---------------------------------------------------------------- DeviceHeap

DeviceHeap::~DeviceHeap() = default;

std::optional<uint64_t> DeviceHeap::carve(Chunk& chunk, uint64_t length) {
    if (chunk.freeBytes < length) return std::nullopt;
    for (auto it = chunk.freeBlocks.begin(); it != chunk.freeBlocks.end(); ++it) {
        if (it->second < length) continue;
        uint64_t va = it->first;
        uint64_t rest = it->second - length;
        chunk.freeBlocks.erase(it);
        if (rest) chunk.freeBlocks[va + length] = rest;
        chunk.freeBytes -= length;
        return va;
    }
    return std::nullopt;
}

void DeviceHeap::giveBack(Chunk& chunk, uint64_t va, uint64_t length) {
    auto [it, inserted] = chunk.freeBlocks.emplace(va, length);
    (void)inserted;
    chunk.freeBytes += length;
    auto next = std::next(it);
    if (next != chunk.freeBlocks.end() && it->first + it->second == next->first) {
        it->second += next->second;
        chunk.freeBlocks.erase(next);
    }
    if (it != chunk.freeBlocks.begin()) {
        auto prev = std::prev(it);
        if (prev->first + prev->second == it->first) {
            prev->second += it->second;
            chunk.freeBlocks.erase(it);
        }
    }
}

Result<DeviceHeap::Chunk*> DeviceHeap::newChunk(uint64_t size, bool dedicated, bool cpuMapped) {
    hw::VideoMemoryOptions opts;
    opts.cpuMapped = cpuMapped;  // small-copy fast paths reach shared chunks through BAR1
    opts.cpuMappingOptional = true;
    auto mem = gpu_.allocVideo(size, opts);
    if (!mem && mem.status().code() == CUDA_ERROR_OUT_OF_MEMORY) {
        // Give cached empty chunks back and try once more.
        for (auto& c : chunks_)
            if (!c->dedicated && c->freeBytes == c->size()) c->memory.reset();
        std::erase_if(chunks_, [](const std::unique_ptr<Chunk>& c) { return !c->memory; });
        mem = gpu_.allocVideo(size, opts);
    }
    if (!mem) return mem.status();
    auto chunk = std::make_unique<Chunk>();
    chunk->memory = std::move(*mem);
    chunk->dedicated = dedicated;
    chunk->freeBlocks[chunk->base()] = chunk->size();
    chunk->freeBytes = chunk->size();
    for (auto& [peer, count] : peers_) NVL_TRY(peer->mapForPeer(*chunk->memory));
    chunks_.push_back(std::move(chunk));
    return chunks_.back().get();
}

Status DeviceHeap::addPeer(hw::Gpu& peer) {
    std::lock_guard lock(mutex_);
    return addPeerLocked(peer);
}

Status DeviceHeap::ensurePeer(hw::Gpu& peer) {
    std::lock_guard lock(mutex_);
    if (std::find(internalPeers_.begin(), internalPeers_.end(), &peer) != internalPeers_.end()) return kOk;
    NVL_TRY(addPeerLocked(peer));
    internalPeers_.push_back(&peer);
    return kOk;
}

Status DeviceHeap::addPeerLocked(hw::Gpu& peer) {
    for (auto& [g, count] : peers_)
        if (g == &peer) {
            ++count;
            return kOk;
        }
    for (auto& c : chunks_) {
        if (Status s = peer.mapForPeer(*c->memory); !s.ok()) {
            for (auto& undo : chunks_) peer.unmapForPeer(*undo->memory);
            return s;
        }
    }
    peers_.emplace_back(&peer, 1);
    return kOk;
}

void DeviceHeap::removePeer(hw::Gpu& peer) {
    std::lock_guard lock(mutex_);
    for (auto it = peers_.begin(); it != peers_.end(); ++it) {
        if (it->first != &peer) continue;
        if (--it->second == 0) {
            for (auto& c : chunks_) peer.unmapForPeer(*c->memory);
            peers_.erase(it);
        }
        return;
    }
}

bool DeviceHeap::hasPeer(const hw::Gpu& peer) {
    std::lock_guard lock(mutex_);
    for (auto& [g, count] : peers_)
        if (g == &peer) return true;
    return false;
}

void DeviceHeap::releaseChunk(Chunk* chunk) {
    std::erase_if(chunks_, [chunk](const std::unique_ptr<Chunk>& c) { return c.get() == chunk; });
}

Result<DeviceHeap::Block> DeviceHeap::alloc(uint64_t size) {
    const uint64_t length = alignUp(size, kAlignment);
    if (length < size) return CUDA_ERROR_OUT_OF_MEMORY;
    std::lock_guard lock(mutex_);
    // Records the allocation at 'va' in 'chunk'.
    auto handOut = [&](Chunk* chunk, uint64_t va) {
        live_[va] = {chunk, length};
        return Block{va, chunk->memory->cpu() != nullptr};
    };
    if (length > kDedicatedThreshold) {
        NVL_ASSIGN_OR_RETURN(Chunk * chunk, newChunk(length, true, false));
        return handOut(chunk, *carve(*chunk, length));
    }
    for (auto& c : chunks_) {
        if (c->dedicated) continue;
        if (auto va = carve(*c, length)) return handOut(c.get(), *va);
    }
    // Shared chunks start small and double with the heap (up to kChunkSize):
    // a context that allocates little takes little video memory.
    uint64_t shared = 0;
    for (const auto& c : chunks_)
        if (!c->dedicated) shared += c->size();
    const uint64_t chunkSize = std::max(std::clamp(std::bit_ceil(std::max(shared, kFirstChunkSize)), kFirstChunkSize, kChunkSize),
                                   std::bit_ceil(length));
    auto fresh = newChunk(chunkSize, false, true);
    if (!fresh) {
        // Near the end of video memory a smaller chunk may still fit.
        if (fresh.status().code() != CUDA_ERROR_OUT_OF_MEMORY) return fresh.status();
        fresh = newChunk(length, false, true);
        if (!fresh) return fresh.status();
    }
    return handOut(*fresh, *carve(**fresh, length));
}

Result<DeviceHeap::Block> DeviceHeap::allocOwn(uint64_t size) {
    const uint64_t length = alignUp(size, kAlignment);
    if (length < size) return CUDA_ERROR_OUT_OF_MEMORY;
    std::lock_guard lock(mutex_);
    Chunk* chunk = nullptr;
    std::optional<uint64_t> va;
    if (length > kFirstChunkSize / 2) {
        NVL_ASSIGN_OR_RETURN(chunk, newChunk(length, true, true));
        va = carve(*chunk, length);
    } else {
        // A first-size chunk already holding own data, else any first-size one.
        for (int pass = 0; pass < 2 && !va; ++pass)
            for (auto& c : chunks_) {
                if (c->dedicated || c->size() != kFirstChunkSize || (pass == 0 && c->own == 0)) continue;
                if ((va = carve(*c, length))) {
                    chunk = c.get();
                    break;
                }
            }
        if (!va) {
            NVL_ASSIGN_OR_RETURN(chunk, newChunk(kFirstChunkSize, false, true));
            va = carve(*chunk, length);
        }
    }
    ++chunk->own;
    live_[*va] = {chunk, length, true};
    return Block{*va, chunk->memory->cpu() != nullptr};
}

bool DeviceHeap::free(uint64_t va) {
    std::lock_guard lock(mutex_);
    auto it = live_.find(va);
    if (it == live_.end()) return false;
    Live b = it->second;
    live_.erase(it);
    giveBack(*b.chunk, va, b.length);
    if (b.own) --b.chunk->own;
    if (b.chunk->freeBytes == b.chunk->size()) {
        // Keep one chunk of the first size as a bounded cache (kFirstChunkSize):
        // this one, unless another already serves (empty, or holding nvlite's
        // own data); release the rest.
        bool keep = caches(*b.chunk) && std::none_of(chunks_.begin(), chunks_.end(), [&](const std::unique_ptr<Chunk>& c) {
                        return c.get() != b.chunk && caches(*c);
                    });
        if (!keep) releaseChunk(b.chunk);
    }
    return true;
}

// ---------------------------------------------------------------- HostMemory

HostMemory::~HostMemory() = default;

Result<void*> HostMemory::alloc(uint64_t size) {
    NVL_ASSIGN_OR_RETURN(auto mem, gpu_.allocHost(size));
    void* p = mem->cpu();
    {
        std::lock_guard lock(mutex_);
        allocations_[reinterpret_cast<uint64_t>(p)] = std::move(mem);
    }
    if (gpu_.driver().gpuCount() > 1) mapOnOpenGpus(reinterpret_cast<uint64_t>(p), size);
    return p;
}

bool HostMemory::free(void* p) {
    std::unique_ptr<hw::GpuMemory> mem;
    std::vector<std::unique_ptr<hw::GpuMemory>> others;
    {
        std::lock_guard lock(mutex_);
        auto it = allocations_.find(reinterpret_cast<uint64_t>(p));
        if (it == allocations_.end()) return false;
        mem = std::move(it->second);
        allocations_.erase(it);
        if (auto o = others_.find(reinterpret_cast<uint64_t>(p)); o != others_.end()) {
            others = std::move(o->second);
            others_.erase(o);
        }
    }
    others.clear();  // the other GPUs' mappings first: 'mem' owns the pages
    return true;     // 'mem' unpins and unmaps here, outside the lock
}

Status HostMemory::mapOn(hw::Gpu& gpu, uint64_t addr, uint64_t len) {
    if (&gpu == &gpu_) return kOk;
    NVL_TRY(gpu.open());
    // UVM's one address space takes a range once: not for a second GPU.
    if (gpu.usesUvm()) return CUDA_ERROR_NOT_SUPPORTED;
    std::lock_guard lock(mutex_);
    // The pieces of [addr, addr+len): one allocation, or registered segments.
    std::vector<std::pair<uint64_t, uint64_t>> pieces;
    for (auto& [base, mem] : allocations_)
        if (addr >= base && addr - base < mem->size()) pieces.emplace_back(base, mem->size());
    if (pieces.empty()) {
        auto it = segments_.upper_bound(addr);
        if (it != segments_.begin()) --it;
        for (; it != segments_.end() && it->first < addr + len; ++it)
            if (it->first + it->second.memory->size() > addr) pieces.emplace_back(it->first, it->second.memory->size());
    }
    for (auto [base, size] : pieces) {
        auto& list = others_[base];
        bool have = false;
        for (auto& m : list) have = have || &m->gpu() == &gpu;
        if (have) continue;
        NVL_ASSIGN_OR_RETURN(auto mem, gpu.registerHost(reinterpret_cast<void*>(base), size));
        list.push_back(std::move(mem));
    }
    return kOk;
}

void HostMemory::mapOnOpenGpus(uint64_t addr, uint64_t len) {
    hw::Driver& driver = gpu_.driver();
    for (size_t i = 0; i < driver.gpuCount(); ++i)
        if (&driver.gpu(i) != &gpu_ && driver.gpu(i).isOpen()) (void)mapOn(driver.gpu(i), addr, len);
}

Status HostMemory::registerRange(void* p, uint64_t size) {
    const uint64_t page = pageSize();
    const uint64_t start = reinterpret_cast<uint64_t>(p) / page * page;
    const uint64_t end = alignUp(reinterpret_cast<uint64_t>(p) + size, page);
    std::lock_guard lock(mutex_);

    // Pin the gaps between segments already pinned for other registrations.
    std::vector<uint64_t> used;
    std::vector<std::pair<uint64_t, uint64_t>> gaps;
    uint64_t cursor = start;
    auto it = segments_.upper_bound(start);
    if (it != segments_.begin()) --it;
    for (; it != segments_.end() && it->first < end; ++it) {
        uint64_t segStart = it->first, segEnd = segStart + it->second.memory->size();
        if (segEnd <= start) continue;
        if (segStart > cursor) gaps.emplace_back(cursor, segStart);
        used.push_back(segStart);
        cursor = std::max(cursor, segEnd);
    }
    if (cursor < end) gaps.emplace_back(cursor, end);

    std::vector<uint64_t> created;
    for (auto [gs, ge] : gaps) {
        auto mem = gpu_.registerHost(reinterpret_cast<void*>(gs), ge - gs);
        if (!mem) {
            for (uint64_t c : created) segments_.erase(c);
            return mem.status();
        }
        segments_[gs] = Segment{std::move(*mem), 0};
        created.push_back(gs);
        used.push_back(gs);
    }
    Registration reg;
    for (uint64_t s : used) {
        ++segments_[s].refs;
        reg.segments.push_back(s);
    }
    registrations_[reinterpret_cast<uint64_t>(p)] = std::move(reg);
    return kOk;
}

Status HostMemory::registerPortable(void* p, uint64_t size) {
    NVL_TRY(registerRange(p, size));
    if (gpu_.driver().gpuCount() > 1) mapOnOpenGpus(reinterpret_cast<uint64_t>(p), size);
    return kOk;
}

bool HostMemory::unregisterRange(void* p) {
    std::vector<std::unique_ptr<hw::GpuMemory>> released;
    {
        std::lock_guard lock(mutex_);
        auto it = registrations_.find(reinterpret_cast<uint64_t>(p));
        if (it == registrations_.end()) return false;
        for (uint64_t s : it->second.segments) {
            auto seg = segments_.find(s);
            if (--seg->second.refs == 0) {
                if (auto o = others_.find(s); o != others_.end()) {
                    for (auto& m : o->second) released.push_back(std::move(m));  // before the pages' own
                    others_.erase(o);
                }
                released.push_back(std::move(seg->second.memory));
                segments_.erase(seg);
            }
        }
        registrations_.erase(it);
    }
    return true;  // unpinned here, outside the lock
}

}  // namespace nvl::core
