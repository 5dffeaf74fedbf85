// Memory the API hands out: device allocations (sub-allocated from large
// video-memory chunks), pinned host allocations and registered host ranges,
// all found by address in one process-wide map (unified addressing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "hw/gpu_memory.h"

namespace nvl::core {

class Context;
class MemPool;

// ModuleGlobal: a module's __device__/__constant__ variable, device memory
// that copies reach but cuMemFree does not accept.
enum class MemoryKind { Device, ModuleGlobal, HostAllocated, HostRegistered };

// What the address map knows about an allocation (a copy: safe to keep).
struct AllocationInfo {
    uint64_t base = 0;
    uint64_t size = 0;  // bytes asked for
    MemoryKind kind = MemoryKind::Device;
    Context* context = nullptr;
    unsigned flags = 0;
    // Device memory the CPU also sees at the same address (through BAR1).
    bool cpuVisible = false;
    // Unique in the process, never reused (set by AddressMap::insert).
    uint64_t id = 0;
    // The memory pool of a stream-ordered allocation (cuMemAllocAsync), else nullptr.
    MemPool* pool = nullptr;
    bool contains(uint64_t addr, uint64_t len) const {
        return addr >= base && len <= size && addr - base <= size - len;
    }
};

// Process-wide map from addresses to allocations.
class AddressMap {
public:
    static AddressMap& get();

    // The allocation containing 'addr', if any.
    std::optional<AllocationInfo> find(uint64_t addr) const;
    // The same, for a call that will use the memory (copy, fill, free): it
    // then holds a pass through the owning context's gate (CallScope), so
    // that the memory stays until it returns. Nothing when the context is
    // being destroyed.
    std::optional<AllocationInfo> findInUse(uint64_t addr) const;
    // Any allocation overlapping [addr, addr+len).
    bool overlaps(uint64_t addr, uint64_t len) const;
    // Gives the allocation its id.
    void insert(const AllocationInfo& info);
    // Removes the allocation starting exactly at 'base'.
    std::optional<AllocationInfo> remove(uint64_t base);
    // Removes every allocation of a context and returns them.
    std::vector<AllocationInfo> removeContext(Context* ctx);

private:
    mutable std::shared_mutex mutex_;
    std::map<uint64_t, AllocationInfo> byBase_;
    uint64_t lastId_ = 0;
};

// Device memory of one context: large video-memory chunks cut into
// allocations, so cuMemAlloc/cuMemFree make no driver call in the common case.
class DeviceHeap {
public:
    explicit DeviceHeap(hw::Gpu& gpu) : gpu_(gpu) {}
    ~DeviceHeap();
    DeviceHeap(const DeviceHeap&) = delete;
    DeviceHeap& operator=(const DeviceHeap&) = delete;

    struct Block {
        uint64_t va;
        bool cpuVisible;  // mapped for the CPU at va as well
    };
    Result<Block> alloc(uint64_t size);
    // nvlite's own small, long-lived data (the built-in kernels' code), mapped
    // for the CPU: carved from a shared chunk of the first size (one with room,
    // else a new one), never from a larger chunk, so that it never keeps a large
    // chunk from going back to the driver. The chunk it sits in is the heap's
    // cached chunk (free() keeps no other empty one). Data larger than half a
    // first-size chunk gets video memory of its own.
    Result<Block> allocOwn(uint64_t size);
    // Frees an allocation made by alloc(); false if 'va' is not one.
    bool free(uint64_t va);

    // Peer access: every chunk, and every later one, also mapped into
    // another GPU's address space (at the same addresses). Counted: each
    // addPeer needs its removePeer. The GPU must be open.
    Status addPeer(hw::Gpu& peer);
    void removePeer(hw::Gpu& peer);
    bool hasPeer(const hw::Gpu& peer);
    // One addPeer that nvlite holds for its own copies, at most once per GPU.
    Status ensurePeer(hw::Gpu& peer);

    static constexpr uint64_t kAlignment = 512;
    static constexpr uint64_t kChunkSize = 64ull << 20;      // the largest shared chunk
    static constexpr uint64_t kFirstChunkSize = 2ull << 20;  // the first one
    static constexpr uint64_t kDedicatedThreshold = 32ull << 20;

private:
    struct Chunk {
        std::unique_ptr<hw::GpuMemory> memory;
        std::map<uint64_t, uint64_t> freeBlocks;  // va -> length
        uint64_t freeBytes = 0;
        uint32_t own = 0;  // allocOwn() allocations in it
        bool dedicated = false;
        uint64_t base() const { return memory->va(); }
        uint64_t size() const { return memory->size(); }
    };
    struct Live {
        Chunk* chunk;
        uint64_t length;
        bool own = false;
    };
    // A chunk that serves as the cache of empty memory: of the first size,
    // shared, and empty or holding nvlite's own data.
    static bool caches(const Chunk& c) {
        return !c.dedicated && c.size() == kFirstChunkSize && (c.freeBytes == c.size() || c.own > 0);
    }

    std::optional<uint64_t> carve(Chunk& chunk, uint64_t length);
    void giveBack(Chunk& chunk, uint64_t va, uint64_t length);
    Result<Chunk*> newChunk(uint64_t size, bool dedicated, bool cpuMapped);
    void releaseChunk(Chunk* chunk);

    hw::Gpu& gpu_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<Chunk>> chunks_;
    std::unordered_map<uint64_t, Live> live_;
    std::vector<std::pair<hw::Gpu*, int>> peers_;  // GPUs the chunks are mapped into, with their counts
    std::vector<hw::Gpu*> internalPeers_;         // those of them ensurePeer holds a count for
    Status addPeerLocked(hw::Gpu& peer);
};

// Pinned host memory and registrations, owned by the contexts that made them.
class HostMemory {
public:
    explicit HostMemory(hw::Gpu& gpu) : gpu_(gpu) {}
    ~HostMemory();

    // cuMemAllocHost / cuMemHostAlloc: fresh pinned pages.
    Result<void*> alloc(uint64_t size);
    bool free(void* p);
    // cuMemHostRegister: pins the pages under [p, p+size).
    Status registerRange(void* p, uint64_t size);
    // registerRange, then mapped for the other open GPUs (cuMemHostRegister).
    Status registerPortable(void* p, uint64_t size);
    bool unregisterRange(void* p);

    // Unified addressing makes pinned memory every device's: the pages of
    // [addr, addr+len) (inside one allocation or registration) mapped for
    // another GPU too, at their own address. Idempotent; the mappings go
    // with the memory. mapOnOpenGpus() does it for every GPU already open.
    Status mapOn(hw::Gpu& gpu, uint64_t addr, uint64_t len);
    void mapOnOpenGpus(uint64_t addr, uint64_t len);

private:
    // Pinned page ranges are shared by registrations whose ranges share pages.
    struct Segment {
        std::unique_ptr<hw::GpuMemory> memory;
        int refs = 0;
    };
    struct Registration {
        std::vector<uint64_t> segments;  // start addresses in segments_
    };

    hw::Gpu& gpu_;
    std::mutex mutex_;
    std::unordered_map<uint64_t, std::unique_ptr<hw::GpuMemory>> allocations_;
    std::map<uint64_t, Segment> segments_;  // page-aligned start -> segment
    std::unordered_map<uint64_t, Registration> registrations_;
    // Mappings of an allocation or a segment (by its start) for other GPUs.
    std::unordered_map<uint64_t, std::vector<std::unique_ptr<hw::GpuMemory>>> others_;
};

}  // namespace nvl::core
