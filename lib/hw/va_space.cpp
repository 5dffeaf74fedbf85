#include "hw/va_space.h"

#include <sys/mman.h>

#include <cerrno>

#include "hw/driver_error.h"

namespace nvl::hw {
namespace {

constexpr uint64_t kWindowSize = 1ull << 32;  // the windows must be 4 GiB aligned
constexpr int kReserveFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NVL_THREAD_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(NVL_THREAD_SANITIZER)
// A ThreadSanitizer build (make test-tsan). On x86_64 its runtime (GCC 12's
// libtsan.so.2, LLVM's Mapping48AddressSpace) leaves the program only
// [4 KiB, 512 GiB) of the low addresses: [512 GiB, 1 TiB) is mapped PROT_NONE
// and its shadow starts at 1 TiB, so the reservation is cut to end at
// 512 GiB (448 GiB from the usual base: still more than any GPU's memory).
constexpr uint64_t kAddressLimit = 1ull << 39;
#else
constexpr uint64_t kAddressLimit = 1ull << 40;  // 40-bit GPFIFO entries and QMD pointers
#endif

}  // namespace

Result<std::unique_ptr<VaSpace>> VaSpace::reserve(uint64_t base, uint64_t size) {
    std::unique_ptr<VaSpace> vs(new VaSpace());
    if (base >= kAddressLimit) return Status(CUDA_ERROR_OUT_OF_MEMORY, 0, "reserve GPU VA: base above the limit");
    if (size > kAddressLimit - base) size = (kAddressLimit - base) & ~(kWindowSize - 1);
    if (size < 4 * kWindowSize) return Status(CUDA_ERROR_OUT_OF_MEMORY, 0, "reserve GPU VA: too small below the limit");
    void* p = ::mmap(reinterpret_cast<void*>(base), size, PROT_NONE, kReserveFlags | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED) {
        // Something already lives there: take any free range below the limit.
        p = ::mmap(nullptr, size, PROT_NONE, kReserveFlags, -1, 0);
        if (p == MAP_FAILED) return osError(-errno, "mmap(reserve GPU VA)");
        if (reinterpret_cast<uint64_t>(p) + size > kAddressLimit) {
            ::munmap(p, size);
            return Status(CUDA_ERROR_OUT_OF_MEMORY, 0, "reserve GPU VA below the limit");
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
