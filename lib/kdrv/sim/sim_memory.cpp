#include "kdrv/sim/sim_memory.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kdrv/sim/sim_user_memory.h"

namespace nvl::kdrv::sim {
namespace {

uint64_t alignUp(uint64_t v, uint64_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

// Is [addr, addr+len) inside one shared mapping of this process? (Then an
// mremap alias of it cannot reach past the end of the underlying object.)
bool withinOneSharedMapping(uint64_t addr, uint64_t len) {
    FILE* f = std::fopen("/proc/self/maps", "re");
    if (!f) return false;
    bool ok = false;
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
        unsigned long long start = 0, end = 0;
        char perms[8] = {};
        if (std::sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3) continue;
        if (addr >= start && addr < end) {
            ok = perms[3] == 's' && addr + len <= end;
            break;
        }
    }
    std::fclose(f);
    return ok;
}

}  // namespace

// ---------------------------------------------------------------- MemFile

std::unique_ptr<MemFile> MemFile::create(const char* name, uint64_t size) {
    int fd = ::memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) return nullptr;
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
        ::close(fd);
        return nullptr;
    }
    void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (base == MAP_FAILED) {
        ::close(fd);
        return nullptr;
    }
    return std::unique_ptr<MemFile>(new MemFile(fd, static_cast<uint8_t*>(base), size));
}

MemFile::~MemFile() {
    ::munmap(base_, size_);
    ::close(fd_);
}

void MemFile::discard(uint64_t offset, uint64_t len) {
    if (len == 0 || offset >= size_) return;
    len = std::min(len, size_ - offset);
    if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                    static_cast<off_t>(len)) == 0)
        return;
    std::memset(base_ + offset, 0, len);
}

// --------------------------------------------------------- RangeAllocator

RangeAllocator::RangeAllocator(uint64_t size) : size_(size) {
    if (size) free_[0] = size;
}

std::optional<uint64_t> RangeAllocator::alloc(uint64_t size, uint64_t align) {
    if (size == 0) return std::nullopt;
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        const uint64_t off = it->first, len = it->second;
        const uint64_t start = alignUp(off, align);
        if (start < off || start - off >= len || len - (start - off) < size) continue;
        free_.erase(it);
        if (start > off) free_[off] = start - off;
        if (start + size < off + len) free_[start + size] = off + len - (start + size);
        allocated_[start] = size;
        used_ += size;
        return start;
    }
    return std::nullopt;
}

void RangeAllocator::free(uint64_t offset) {
    auto a = allocated_.find(offset);
    if (a == allocated_.end()) return;
    uint64_t start = offset, len = a->second;
    allocated_.erase(a);
    used_ -= len;
    auto next = free_.lower_bound(start);
    if (next != free_.end() && next->first == start + len) {
        len += next->second;
        next = free_.erase(next);
    }
    if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == start) {
            start = prev->first;
            len += prev->second;
            free_.erase(prev);
        }
    }
    free_[start] = len;
}

// --------------------------------------------------------------- PhysPool

PhysPool::PhysPool(const char* name, uint64_t size, uint64_t physBase)
    : file_(MemFile::create(name, size)), allocator_(file_ ? size : 0), physBase_(physBase) {}

std::optional<uint64_t> PhysPool::alloc(uint64_t size, uint64_t align) {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocator_.alloc(size, align);
}

void PhysPool::free(uint64_t offset, uint64_t size) {
    // Scrub before the range can be handed out again.
    if (file_) file_->discard(offset, size);
    std::lock_guard<std::mutex> lock(mutex_);
    allocator_.free(offset);
}

uint64_t PhysPool::used() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocator_.used();
}

// ---------------------------------------------------------------- Backing

std::shared_ptr<Backing> Backing::fromPool(MemKind kind, PhysPool& pool, uint64_t size, uint64_t align) {
    if (!pool.ok() || size == 0) return nullptr;
    auto off = pool.alloc(size, align);
    if (!off) return nullptr;
    std::shared_ptr<Backing> b(new Backing());
    b->kind_ = kind;
    b->size_ = size;
    b->physAddr_ = pool.physBase() + *off;
    b->mapFd_ = pool.file()->fd();
    b->mapOffset_ = *off;
    b->ptr_ = pool.file()->base() + *off;
    b->pool_ = &pool;
    b->poolOffset_ = *off;
    b->poolSize_ = size;
    return b;
}

std::shared_ptr<Backing> Backing::fromUser(uint64_t addr, uint64_t size, bool writable) {
    (void)writable;
    if (size == 0 || addr + size < addr || !userRangeMapped(addr, size)) return nullptr;
    std::shared_ptr<Backing> b(new Backing());
    b->kind_ = MemKind::OsDescriptor;
    b->size_ = size;
    b->userAddr_ = addr;
    b->physAddr_ = addr;  // the pinned pages' "bus address"; opaque to the library
    if (withinOneSharedMapping(addr, size)) {
        void* alias = ::mremap(reinterpret_cast<void*>(addr), 0, size, MREMAP_MAYMOVE);
        if (alias != MAP_FAILED) {
            b->alias_ = alias;
            b->aliasLen_ = size;
            b->ptr_ = static_cast<uint8_t*>(alias);
        }
    }
    return b;
}

Backing::~Backing() {
    if (pool_) pool_->free(poolOffset_, poolSize_);
    if (alias_) ::munmap(alias_, aliasLen_);
}

bool Backing::read(uint64_t off, void* dst, size_t n) const {
    if (off > size_ || n > size_ - off) return false;
    if (n == 0) return true;
    if (ptr_) {
        std::memcpy(dst, ptr_ + off, n);
        return true;
    }
    return copyFromUser(dst, userAddr_ + off, n);
}

void Backing::prepareWrite(uint64_t off, size_t n) const {
#ifdef MADV_POPULATE_WRITE
    constexpr size_t kMin = 1u << 20;
    if (!ptr_ || !pool_ || n < kMin || off > size_ || n > size_ - off) return;
    const uint64_t page = 4096;
    const uint64_t start = (reinterpret_cast<uint64_t>(ptr_) + off + page - 1) & ~(page - 1);
    const uint64_t end = (reinterpret_cast<uint64_t>(ptr_) + off + n) & ~(page - 1);
    if (end > start) (void)::madvise(reinterpret_cast<void*>(start), end - start, MADV_POPULATE_WRITE);
#else
    (void)off;
    (void)n;
#endif
}

bool Backing::write(uint64_t off, const void* src, size_t n) {
    if (off > size_ || n > size_ - off) return false;
    if (n == 0) return true;
    if (ptr_) {
        prepareWrite(off, n);
        std::memmove(ptr_ + off, src, n);
        return true;
    }
    return copyToUser(userAddr_ + off, src, n);
}

bool Backing::fill(uint64_t off, uint8_t byte, size_t n) {
    if (off > size_ || n > size_ - off) return false;
    if (ptr_ && pool_ && byte == 0 && n >= kZeroDropMin) {
        // Zeroing whole pages drops them from the pool's memfd (they read as
        // zero again): a large zeroed object (a module's 2 GiB .nv.global, a
        // cuMemsetD8 of a big allocation) costs the host no memory, as it
        // costs the real GPU none.
        constexpr uint64_t page = 4096;
        const uint64_t first = poolOffset_ + off, last = first + n;
        const uint64_t start = (first + page - 1) & ~(page - 1), end = last & ~(page - 1);
        std::memset(ptr_ + off, 0, static_cast<size_t>(start - first));
        pool_->file()->discard(start, end - start);
        std::memset(ptr_ + (end - poolOffset_), 0, static_cast<size_t>(last - end));
        return true;
    }
    if (ptr_) {
        prepareWrite(off, n);
        std::memset(ptr_ + off, byte, n);
        return true;
    }
    uint8_t buf[4096];
    std::memset(buf, byte, sizeof buf);
    for (size_t done = 0; done < n;) {
        const size_t c = std::min(sizeof buf, n - done);
        if (!copyToUser(userAddr_ + off + done, buf, c)) return false;
        done += c;
    }
    return true;
}

bool Backing::load32(uint64_t off, uint32_t* v) const {
    if (off > size_ || 4 > size_ - off) return false;
    if (ptr_ && off % 4 == 0) {
        *v = __atomic_load_n(reinterpret_cast<const uint32_t*>(ptr_ + off), __ATOMIC_ACQUIRE);
        return true;
    }
    return read(off, v, 4);
}

bool Backing::load64(uint64_t off, uint64_t* v) const {
    if (off > size_ || 8 > size_ - off) return false;
    if (ptr_ && off % 8 == 0) {
        *v = __atomic_load_n(reinterpret_cast<const uint64_t*>(ptr_ + off), __ATOMIC_ACQUIRE);
        return true;
    }
    return read(off, v, 8);
}

bool Backing::store16(uint64_t off, uint16_t v) {
    if (off > size_ || 2 > size_ - off) return false;
    if (ptr_ && off % 2 == 0) {
        __atomic_store_n(reinterpret_cast<uint16_t*>(ptr_ + off), v, __ATOMIC_RELEASE);
        return true;
    }
    return write(off, &v, 2);
}

bool Backing::store32(uint64_t off, uint32_t v) {
    if (off > size_ || 4 > size_ - off) return false;
    if (ptr_ && off % 4 == 0) {
        __atomic_store_n(reinterpret_cast<uint32_t*>(ptr_ + off), v, __ATOMIC_RELEASE);
        return true;
    }
    return write(off, &v, 4);
}

bool Backing::store64(uint64_t off, uint64_t v) {
    if (off > size_ || 8 > size_ - off) return false;
    if (ptr_ && off % 8 == 0) {
        __atomic_store_n(reinterpret_cast<uint64_t*>(ptr_ + off), v, __ATOMIC_RELEASE);
        return true;
    }
    return write(off, &v, 8);
}

// ------------------------------------------------------------- GpuVaSpace

namespace {

// Remove [va, va+size) from a layer, keeping the parts of mappings outside it.
void carve(std::map<uint64_t, GpuVaSpace::Mapping>& layer, uint64_t va, uint64_t size) {
    const uint64_t end = va + size;
    auto it = layer.upper_bound(va);
    if (it != layer.begin()) --it;
    while (it != layer.end() && it->first < end) {
        const uint64_t s = it->first, e = s + it->second.size;
        if (e <= va) {
            ++it;
            continue;
        }
        GpuVaSpace::Mapping m = it->second;
        it = layer.erase(it);
        if (s < va) {
            GpuVaSpace::Mapping left = m;
            left.size = va - s;
            layer[s] = left;
        }
        if (e > end) {
            GpuVaSpace::Mapping right = m;
            right.size = e - end;
            right.offset = m.offset + (end - s);
            it = layer.emplace(end, right).first;
            ++it;
        }
    }
}

}  // namespace

void GpuVaSpace::mapUvm(uint64_t va, const Mapping& m) {
    carve(uvm_, va, m.size);
    uvm_[va] = m;
}

void GpuVaSpace::unmapUvm(uint64_t va, uint64_t size) { carve(uvm_, va, size); }

bool GpuVaSpace::mapDma(uint64_t va, const Mapping& m) {
    auto it = dma_.lower_bound(va);
    if (it != dma_.end() && it->first < va + m.size) return false;
    if (it != dma_.begin()) {
        auto prev = std::prev(it);
        if (prev->first + prev->second.size > va) return false;
    }
    dma_[va] = m;
    return true;
}

bool GpuVaSpace::unmapDma(uint64_t va, uint32_t hClient, uint32_t hMemory) {
    auto it = dma_.find(va);
    if (it == dma_.end() || it->second.hClient != hClient || it->second.hMemory != hMemory) return false;
    dma_.erase(it);
    return true;
}

void GpuVaSpace::unmapDmaOfMemory(uint32_t hClient, uint32_t hMemory) {
    for (auto it = dma_.begin(); it != dma_.end();) {
        if (it->second.hClient == hClient && it->second.hMemory == hMemory)
            it = dma_.erase(it);
        else
            ++it;
    }
}

void GpuVaSpace::unmapDmaWithin(uint64_t va, uint64_t size) {
    for (auto it = dma_.lower_bound(va); it != dma_.end() && it->first < va + size;) {
        if (it->first + it->second.size <= va + size)
            it = dma_.erase(it);
        else
            ++it;
    }
}

std::optional<uint64_t> GpuVaSpace::findFreeDma(uint64_t size, uint64_t align, uint64_t lo, uint64_t hi) const {
    std::vector<std::pair<uint64_t, uint64_t>> used;
    for (const auto& [s, m] : uvm_) used.emplace_back(s, s + m.size);
    for (const auto& [s, m] : dma_) used.emplace_back(s, s + m.size);
    std::sort(used.begin(), used.end());
    uint64_t cand = alignUp(lo, align);
    for (const auto& [s, e] : used) {
        if (e <= cand) continue;
        if (s >= cand + size) break;
        cand = alignUp(e, align);
    }
    if (cand < lo || cand + size < cand || cand + size > hi) return std::nullopt;
    return cand;
}

void GpuVaSpace::clear() {
    uvm_.clear();
    dma_.clear();
}

bool GpuVaSpace::find(const std::map<uint64_t, Mapping>& layer, uint64_t va, Translation* t) {
    auto it = layer.upper_bound(va);
    if (it == layer.begin()) return false;
    --it;
    const uint64_t delta = va - it->first;
    if (delta >= it->second.size) return false;
    t->mem = it->second.mem.get();
    t->offset = it->second.offset + delta;
    t->len = it->second.size - delta;
    return true;
}

bool GpuVaSpace::translate(uint64_t va, Translation* t) const {
    if (find(uvm_, va, t)) return true;
    if (!find(dma_, va, t)) return false;
    // A UVM mapping further up takes precedence.
    auto next = uvm_.upper_bound(va);
    if (next != uvm_.end() && next->first - va < t->len) t->len = next->first - va;
    return true;
}

bool GpuVaSpace::read(uint64_t va, void* dst, size_t n, uint64_t* faultVa) const {
    auto* out = static_cast<uint8_t*>(dst);
    while (n) {
        Translation t;
        if (!translate(va, &t)) {
            *faultVa = va;
            return false;
        }
        const size_t c = static_cast<size_t>(std::min<uint64_t>(t.len, n));
        if (!t.mem->read(t.offset, out, c)) {
            *faultVa = va;
            return false;
        }
        va += c;
        out += c;
        n -= c;
    }
    return true;
}

bool GpuVaSpace::write(uint64_t va, const void* src, size_t n, uint64_t* faultVa) {
    const auto* in = static_cast<const uint8_t*>(src);
    while (n) {
        Translation t;
        if (!translate(va, &t)) {
            *faultVa = va;
            return false;
        }
        const size_t c = static_cast<size_t>(std::min<uint64_t>(t.len, n));
        if (!t.mem->write(t.offset, in, c)) {
            *faultVa = va;
            return false;
        }
        va += c;
        in += c;
        n -= c;
    }
    return true;
}

void GpuVaSpace::prepareWrite(uint64_t va, uint64_t n) const {
    while (n) {
        Translation t;
        if (!translate(va, &t)) return;
        const uint64_t c = std::min(t.len, n);
        t.mem->prepareWrite(t.offset, static_cast<size_t>(c));
        va += c;
        n -= c;
    }
}

bool GpuVaSpace::fill(uint64_t va, uint8_t byte, size_t n, uint64_t* faultVa) {
    while (n) {
        Translation t;
        if (!translate(va, &t)) {
            *faultVa = va;
            return false;
        }
        const size_t c = static_cast<size_t>(std::min<uint64_t>(t.len, n));
        if (!t.mem->fill(t.offset, byte, c)) {
            *faultVa = va;
            return false;
        }
        va += c;
        n -= c;
    }
    return true;
}

bool GpuVaSpace::mapped(uint64_t va, uint64_t n, uint64_t* faultVa) const {
    while (n) {
        Translation t;
        if (!translate(va, &t)) {
            *faultVa = va;
            return false;
        }
        const uint64_t c = std::min<uint64_t>(t.len, n);
        va += c;
        n -= c;
    }
    return true;
}

}  // namespace nvl::kdrv::sim
