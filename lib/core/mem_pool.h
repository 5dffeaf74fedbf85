// Memory pools and stream-ordered allocation (cuMemPool*, cuMemAllocAsync,
// cuMemFreeAsync).
//
// A pool belongs to a device: it reserves video memory in chunks and cuts
// allocations from them. A stream-ordered free does not make its range free
// at once: the range waits with the set of points the freeing stream's
// earlier work ends at. An allocation in stream T may take such a range only
// when T's later work comes after that set (stream order):
//   - T is the freeing stream;
//   - T follows the set through events it waited for or the implicit order
//     of the legacy stream (REUSE_FOLLOW_EVENT_DEPENDENCIES);
//   - the set is already reached (REUSE_ALLOW_OPPORTUNISTIC);
//   - or, when the pool cannot grow, T is made to wait for the set
//     (REUSE_ALLOW_INTERNAL_DEPENDENCIES).
// A synchronising call (stream, event or context) makes the frees it saw
// done free for anyone, and gives memory above the release threshold back to
// the driver; so does cuMemPoolTrimTo. Pool memory belongs to the pool, not
// to a context (as libcuda's: its CU_POINTER_ATTRIBUTE_CONTEXT is NULL).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "core/stream.h"
#include "hw/gpu_memory.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class Context;
class Device;

class MemPool {
public:
    MemPool(Device& device, uint64_t maxSize, bool isDefault, std::atomic<uint64_t>& reservedTotal)
        : device_(device), maxSize_(maxSize), default_(isDefault), reservedTotal_(reservedTotal) {}
    ~MemPool();
    MemPool(const MemPool&) = delete;
    MemPool& operator=(const MemPool&) = delete;

    Device& device() const { return device_; }
    bool isDefault() const { return default_; }
    CUmemoryPool handle() { return reinterpret_cast<CUmemoryPool>(this); }

    static constexpr uint64_t kAlignment = 512;
    // The pool grows in kChunkSize steps (libcuda 580's reserved amounts on an
    // H200 grow by 32 MiB); in kGranularity steps where a size limit would
    // refuse a whole one.
    static constexpr uint64_t kChunkSize = 32ull << 20;
    static constexpr uint64_t kGranularity = 2ull << 20;

private:
    friend class MemPools;

    struct Chunk {
        std::unique_ptr<hw::GpuMemory> memory;
        std::map<uint64_t, uint64_t> free;  // ranges free for anyone: va -> length
        uint64_t freeBytes = 0;
        uint64_t base() const { return memory->va(); }
        uint64_t size() const { return memory->size(); }
        bool empty() const { return freeBytes == size(); }
    };
    // A stream-ordered free not yet free for anyone.
    struct Pending {
        uint64_t va = 0, length = 0;
        Chunk* chunk = nullptr;
        uint64_t streamId = 0;       // the freeing stream
        Context* context = nullptr;  // its context (the points' channels are its)
        Dependencies after;          // the freeing stream's work before the free
    };
    struct Live {
        Chunk* chunk;
        uint64_t length;             // reserved for it
        uint64_t size;               // asked for (what USED_MEM counts)
        Context* context;            // where it was allocated, while that context lives
    };

    Result<uint64_t> alloc(Stream& st, uint64_t size);
    Status freeAsync(Stream& st, uint64_t va);
    bool freeNow(uint64_t va);
    // Frees that are done become free for anyone ('always': whatever the
    // opportunistic-reuse setting, when memory is given back).
    void sweep(bool always);
    void giveBack(Chunk& chunk, uint64_t va, uint64_t length);
    // Releases empty chunks while more than 'keep' bytes are reserved.
    void release(uint64_t keep);
    void releaseContext(Context& ctx);
    Result<Chunk*> grow(uint64_t length);
    // Takes 'length' bytes at the start of the free range at 'va'.
    uint64_t carve(Chunk& chunk, uint64_t va, uint64_t length);
    // Takes [va, va+length) out of 'pending[i]' (the rest stays pending).
    uint64_t takePending(size_t i, uint64_t length);
    void noteUsed(int64_t delta);
    bool idle() const { return live_.empty() && pending_.empty(); }

    Device& device_;
    const uint64_t maxSize_;  // 0: no limit
    const bool default_;
    std::atomic<uint64_t>& reservedTotal_;  // every pool's reserved bytes
    bool destroyed_ = false;  // cuMemPoolDestroy'ed with allocations outstanding

    // Attributes.
    bool followEvents_ = true;
    bool opportunistic_ = true;
    bool internalDependencies_ = true;
    uint64_t releaseThreshold_ = 0;
    uint64_t reserved_ = 0, reservedHigh_ = 0, used_ = 0, usedHigh_ = 0;

    std::vector<std::unique_ptr<Chunk>> chunks_;
    std::vector<Pending> pending_;
    std::unordered_map<uint64_t, Live> live_;
};

// Every pool of the process, the devices' default and current pools. One
// lock guards them all.
class MemPools {
public:
    static MemPools& get();

    Result<CUmemoryPool> defaultPool(Device& device);
    Result<CUmemoryPool> currentPool(Device& device);
    Status setCurrentPool(Device& device, CUmemoryPool pool);
    Result<CUmemoryPool> create(Device& device, uint64_t maxSize);
    Status destroy(CUmemoryPool pool);
    // The device of a live pool, or CUDA_ERROR_INVALID_VALUE.
    Result<Device*> deviceOf(CUmemoryPool pool);

    Status getAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value);
    Status setAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value);
    Status trimTo(CUmemoryPool pool, uint64_t minBytesToKeep);

    // Stream-ordered allocation from 'pool' (nullptr: the current pool of
    // the stream's device).
    Result<uint64_t> allocAsync(Stream& st, uint64_t size, CUmemoryPool pool);
    // A stream-ordered free of an allocation of 'pool' (the address map's pool).
    Status freeAsync(Stream& st, uint64_t va, void* pool);
    // cuMemFree of a pool allocation: after the work of the context that
    // allocated it (and the current one's), at once.
    Status free(uint64_t va, void* pool);

    // A stream, event or context synchronisation on 'device' returned:
    // pools above their release threshold give memory back.
    void afterSynchronize(Device& device) {
        if (reservedTotal_.load(std::memory_order_acquire) != 0) releaseAboveThresholds(device);
    }
    // The context is going away (it waited for its work): its streams'
    // pending frees are done. Its allocations stay (they are the pool's).
    void releaseContext(Context& ctx);

private:
    MemPools() = default;
    struct PerDevice {
        MemPool* defaultPool = nullptr;
        MemPool* current = nullptr;
    };
    PerDevice& perDevice(Device& device);  // with the default pool made
    MemPool* live(CUmemoryPool handle);    // nullptr unless a pool not destroyed
    MemPool* any(void* pool);              // live or destroyed-but-in-use
    void releaseAboveThresholds(Device& device);
    // Deletes a destroyed pool once nothing of it is left.
    void reap(MemPool* pool);

    std::mutex mutex_;
    std::unordered_map<Device*, PerDevice> devices_;
    std::unordered_set<MemPool*> pools_;    // live pools
    std::unordered_set<MemPool*> zombies_;  // destroyed, with allocations outstanding
    std::atomic<uint64_t> reservedTotal_{0};
};

}  // namespace nvl::core
