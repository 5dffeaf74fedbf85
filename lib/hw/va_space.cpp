#include "hw/va_space.h"

#include <sys/mman.h>

#include <cerrno>

#include "hw/driver_error.h"

namespace nvl::hw {
namespace {

constexpr uint64_t kWindowSize = 1ull << 32;  // the windows must be 4 GiB aligned
constexpr int kReserveFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

}  // namespace

Result<std::unique_ptr<VaSpace>> VaSpace::reserve(uint64_t base, uint64_t size) {
    std::unique_ptr<VaSpace> vs(new VaSpace());
    void* p = ::mmap(reinterpret_cast<void*>(base), size, PROT_NONE, kReserveFlags | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED) {
        // Something already lives there: take any free range below 2^40.
        p = ::mmap(nullptr, size, PROT_NONE, kReserveFlags, -1, 0);
        if (p == MAP_FAILED) return osError(-errno, "mmap(reserve GPU VA)");
        if (reinterpret_cast<uint64_t>(p) + size > (1ull << 40)) {
            ::munmap(p, size);
            return Status(CUDA_ERROR_OUT_OF_MEMORY, 0, "reserve GPU VA below 2^40");
        }
    }
    vs->base_ = reinterpret_cast<uint64_t>(p);
    vs->size_ = size;
    // The two compute windows sit at the top, aligned, never handed out.
    uint64_t top = (vs->base_ + size) & ~(kWindowSize - 1);
    vs->localWindow_ = top - kWindowSize;
    vs->sharedWindow_ = top - 2 * kWindowSize;
    vs->free_[vs->base_] = vs->sharedWindow_ - vs->base_;
    return vs;
}

VaSpace::~VaSpace() {
    if (size_) ::munmap(reinterpret_cast<void*>(base_), size_);
}

Result<uint64_t> VaSpace::alloc(uint64_t size, uint64_t align) {
    std::lock_guard lock(mutex_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        uint64_t start = (it->first + align - 1) & ~(align - 1);
        uint64_t end = it->first + it->second;
        if (start + size > end || start + size < start) continue;
        uint64_t blockStart = it->first;
        free_.erase(it);
        if (start > blockStart) free_[blockStart] = start - blockStart;
        if (start + size < end) free_[start + size] = end - (start + size);
        return start;
    }
    return Status(CUDA_ERROR_OUT_OF_MEMORY, 0, "GPU virtual address space exhausted");
}

void VaSpace::free(uint64_t va, uint64_t size) {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = free_.emplace(va, size);
    if (!inserted) return;  // double free: keep the map consistent
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
        it->second += next->second;
        free_.erase(next);
    }
    if (it != free_.begin()) {
        auto prev = std::prev(it);
        if (prev->first + prev->second == it->first) {
            prev->second += it->second;
            free_.erase(it);
        }
    }
}

void VaSpace::unmapCpu(uint64_t va, uint64_t size) {
    ::mmap(reinterpret_cast<void*>(va), size, PROT_NONE, kReserveFlags | MAP_FIXED, -1, 0);
}

Result<void*> VaSpace::mapHostMemory(uint64_t va, uint64_t size) {
    void* p = ::mmap(reinterpret_cast<void*>(va), size, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p == MAP_FAILED) return osError(-errno, "mmap(host memory in GPU VA)");
    return p;
}

}  // namespace nvl::hw
