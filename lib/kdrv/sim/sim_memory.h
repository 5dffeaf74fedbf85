// Memory of the simulated GPU: the backing store of RM memory objects and the
// GPU virtual address space.
//
// Video memory and system memory are each one sparse memfd ("physical
// memory"), mapped once into the sim and carved up by a first-fit allocator;
// an RM memory object is a range of it. Pages cost nothing until touched, and
// freed ranges are punched out (zeroed, returned to the OS). A CPU mapping of
// an object (NV_ESC_RM_MAP_MEMORY + mmap) maps the same memfd range, so the
// library's CPU view and the simulated GPU share pages.
//
// OS-descriptor memory (NV01_MEMORY_SYSTEM_OS_DESCRIPTOR) is the library's own
// memory. When it is a shared mapping the sim makes a second mapping of the
// same pages (mremap with old_size 0), which pins them like the real driver
// does; otherwise it reaches the pages through process_vm_readv/writev.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace nvl::kdrv::sim {

// A memfd mapped in full into the sim. Not copyable; unmaps and closes itself.
class MemFile {
public:
    // nullptr when the memfd or the mapping cannot be made.
    static std::unique_ptr<MemFile> create(const char* name, uint64_t size);
    ~MemFile();
    MemFile(const MemFile&) = delete;
    MemFile& operator=(const MemFile&) = delete;

    int fd() const { return fd_; }
    uint8_t* base() const { return base_; }
    uint64_t size() const { return size_; }
    // Give the pages of [offset, offset+len) back; they read as zero afterwards.
    void discard(uint64_t offset, uint64_t len);

private:
    MemFile(int fd, uint8_t* base, uint64_t size) : fd_(fd), base_(base), size_(size) {}
    int fd_;
    uint8_t* base_;
    uint64_t size_;
};

// First-fit allocator of aligned ranges in [0, size).
class RangeAllocator {
public:
    explicit RangeAllocator(uint64_t size);
    std::optional<uint64_t> alloc(uint64_t size, uint64_t align);
    void free(uint64_t offset);
    uint64_t size() const { return size_; }
    uint64_t used() const { return used_; }

private:
    uint64_t size_;
    uint64_t used_ = 0;
    std::map<uint64_t, uint64_t> free_;       // offset -> length
    std::map<uint64_t, uint64_t> allocated_;  // offset -> length
};

// A pool of "physical" memory: a MemFile plus its allocator. Thread safe
// (backing memory is released from whichever thread drops the last reference).
class PhysPool {
public:
    PhysPool(const char* name, uint64_t size, uint64_t physBase);
    bool ok() const { return file_ != nullptr; }
    std::optional<uint64_t> alloc(uint64_t size, uint64_t align);
    void free(uint64_t offset, uint64_t size);
    uint64_t size() const { return allocator_.size(); }
    uint64_t used() const;
    MemFile* file() const { return file_.get(); }
    uint64_t physBase() const { return physBase_; }

private:
    std::unique_ptr<MemFile> file_;
    mutable std::mutex mutex_;
    RangeAllocator allocator_;
    uint64_t physBase_;
};

enum class MemKind { Video, System, OsDescriptor, Usermode };

// The memory behind one RM memory object. Shared: GPU mappings keep it alive
// after the RM object is freed (UVM holds a duplicate handle in the real driver).
class Backing {
public:
    // Memory from a pool; returned to it when the last reference goes.
    static std::shared_ptr<Backing> fromPool(MemKind kind, PhysPool& pool, uint64_t size, uint64_t align);
    // The library's memory [addr, addr+size); nullptr if it is not mapped.
    static std::shared_ptr<Backing> fromUser(uint64_t addr, uint64_t size, bool writable);
    ~Backing();
    Backing(const Backing&) = delete;
    Backing& operator=(const Backing&) = delete;

    MemKind kind() const { return kind_; }
    uint64_t size() const { return size_; }
    // The "physical" address: FB offset for video memory, a fake bus address otherwise.
    uint64_t physAddr() const { return physAddr_; }
    // memfd and offset for a CPU mapping; fd -1 when the memory cannot be mmapped.
    int mapFd() const { return mapFd_; }
    uint64_t mapOffset() const { return mapOffset_; }
    // Direct view for the sim, or nullptr (OS descriptor without an alias).
    uint8_t* ptr() const { return ptr_; }
    uint64_t userAddr() const { return userAddr_; }

    // Plain accesses; false if [off, off+n) is outside the object or the
    // library's pages went away.
    bool read(uint64_t off, void* dst, size_t n) const;
    bool write(uint64_t off, const void* src, size_t n);
    // Atomic (when naturally aligned) 32/64-bit accesses for semaphores.
    bool load32(uint64_t off, uint32_t* v) const;
    bool load64(uint64_t off, uint64_t* v) const;
    bool store16(uint64_t off, uint16_t v);
    bool store32(uint64_t off, uint32_t v);
    bool store64(uint64_t off, uint64_t v);
    // Fills of zero over kZeroDropMin bytes or more punch the whole pages out
    // of the memfd instead of writing them (no host memory for zeroed pages).
    bool fill(uint64_t off, uint8_t byte, size_t n);
    static constexpr size_t kZeroDropMin = 1u << 20;
    // Hint before a large write through ptr(): populates the sparse memfd
    // pages in one call (first-touch faults one page at a time cost several
    // times more, notably in VMs). Best effort; no-op for small ranges.
    void prepareWrite(uint64_t off, size_t n) const;

private:
    Backing() = default;
    MemKind kind_ = MemKind::Video;
    uint64_t size_ = 0;
    uint64_t physAddr_ = 0;
    int mapFd_ = -1;
    uint64_t mapOffset_ = 0;
    uint8_t* ptr_ = nullptr;
    uint64_t userAddr_ = 0;
    // Release: pool range, or alias mapping.
    PhysPool* pool_ = nullptr;
    uint64_t poolOffset_ = 0;
    uint64_t poolSize_ = 0;
    void* alias_ = nullptr;
    size_t aliasLen_ = 0;
};

// One piece of a translation: [va, va+len) lies at mem[offset...].
struct Translation {
    Backing* mem = nullptr;
    uint64_t offset = 0;
    uint64_t len = 0;  // contiguous bytes from va within this mapping
};

// The GPU virtual address space the channels see: UVM external mappings and
// RM (NV_ESC_RM_MAP_MEMORY_DMA) mappings. Not thread safe (the Sim lock guards it).
class GpuVaSpace {
public:
    struct Mapping {
        uint64_t size = 0;
        std::shared_ptr<Backing> mem;
        uint64_t offset = 0;
        uint32_t hClient = 0;
        uint32_t hMemory = 0;
    };

    // UVM: replaces whatever UVM mapped in [va, va+size) (splitting partial overlaps).
    void mapUvm(uint64_t va, const Mapping& m);
    void unmapUvm(uint64_t va, uint64_t size);
    // RM DMA mappings: false if the range overlaps another DMA mapping.
    bool mapDma(uint64_t va, const Mapping& m);
    bool unmapDma(uint64_t va, uint32_t hClient, uint32_t hMemory);
    // Drop DMA mappings of a memory object (freed) and those within a range (UVM_FREE).
    void unmapDmaOfMemory(uint32_t hClient, uint32_t hMemory);
    void unmapDmaWithin(uint64_t va, uint64_t size);
    // A free VA range of the given size and alignment in [lo, hi), for non-fixed DMA mappings.
    std::optional<uint64_t> findFreeDma(uint64_t size, uint64_t align, uint64_t lo, uint64_t hi) const;
    void clear();

    bool translate(uint64_t va, Translation* t) const;
    // Piecewise accesses across mappings; on failure *faultVa is the first unmapped address.
    bool read(uint64_t va, void* dst, size_t n, uint64_t* faultVa) const;
    bool write(uint64_t va, const void* src, size_t n, uint64_t* faultVa);
    bool fill(uint64_t va, uint8_t byte, size_t n, uint64_t* faultVa);
    // Populate the backing pages of [va, va+n) ahead of a large write (best effort).
    void prepareWrite(uint64_t va, uint64_t n) const;
    // Whole range mapped?
    bool mapped(uint64_t va, uint64_t n, uint64_t* faultVa) const;

    size_t uvmMappingCount() const { return uvm_.size(); }
    size_t dmaMappingCount() const { return dma_.size(); }

private:
    static bool find(const std::map<uint64_t, Mapping>& layer, uint64_t va, Translation* t);
    std::map<uint64_t, Mapping> uvm_;  // start -> mapping, non-overlapping
    std::map<uint64_t, Mapping> dma_;
};

}  // namespace nvl::kdrv::sim
