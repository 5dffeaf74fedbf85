#include "hw/va_space.h"

#include <sys/mman.h>

#include <cerrno>
#include <iterator>

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

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NVL_ADDRESS_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(NVL_ADDRESS_SANITIZER)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

// AddressSanitizer's x86_64 layout (shadow offset 0x7fff8000): the program
// has [0, 0x7fff8000) below its shadow; the low CPU-visible range is taken
// there (the first candidate that is free), the GPU-only range inside the
// shadow gap [0x8fff7000, 0x2008fff7000).
struct Candidate {
    uint64_t base, size;
};
constexpr Candidate kAsanCpuRanges[] = {
    {0x10000000, 0x6fff0000}, {0x40000000, 0x3fff0000}, {0x60000000, 0x1fff0000}, {0x70000000, 0xfff0000}};
constexpr uint64_t kAsanGpuOnlyBase = 16ull << 30;
constexpr uint64_t kAsanGpuOnlyEnd = 1ull << 40;

Result<void*> mapReserve(uint64_t base, uint64_t size, bool fixed) {
    void* p = ::mmap(reinterpret_cast<void*>(base), size, PROT_NONE, kReserveFlags | (fixed ? MAP_FIXED_NOREPLACE : 0),
                     -1, 0);
    if (p == MAP_FAILED) return osError(-errno, "mmap(reserve GPU VA)");
    if (fixed && reinterpret_cast<uint64_t>(p) != base) {  // kernels before 4.17 take the flag as a hint
        ::munmap(p, size);
        return Status(CUDA_ERROR_OUT_OF_MEMORY, 0, "reserve GPU VA: address taken");
    }
    return p;
}

}  // namespace

Result<std::unique_ptr<VaSpace>> VaSpace::reserve(uint64_t base, uint64_t size) {
    std::unique_ptr<VaSpace> vs(new VaSpace());
    if constexpr (kAddressSanitizer) {
        for (const Candidate& c : kAsanCpuRanges) {
            auto p = mapReserve(c.base, c.size, true);
            if (!p.ok()) continue;
            vs->cpu_.base = vs->cpu_.mappedBase = c.base;
            vs->cpu_.end = c.base + c.size;
            vs->cpu_.mappedBytes = c.size;
            break;
        }
        if (!vs->cpu_.end) return Status(CUDA_ERROR_OUT_OF_MEMORY, 0, "reserve GPU VA below ASan's shadow");
        // Inside ASan's shadow gap, which it reserved (the mapping fails with
        // EEXIST); under another layout the range is free and reserved here.
        auto gap = mapReserve(kAsanGpuOnlyBase, kAsanGpuOnlyEnd - kAsanGpuOnlyBase, true);
        if (gap.ok()) {
            vs->gpu_.mappedBase = kAsanGpuOnlyBase;
            vs->gpu_.mappedBytes = kAsanGpuOnlyEnd - kAsanGpuOnlyBase;
        }
        vs->localWindow_ = kAsanGpuOnlyEnd - kWindowSize;
        vs->sharedWindow_ = kAsanGpuOnlyEnd - 2 * kWindowSize;
        vs->gpu_.base = kAsanGpuOnlyBase;
        vs->gpu_.end = vs->sharedWindow_;
        vs->gpu_.free[vs->gpu_.base] = vs->gpu_.end - vs->gpu_.base;
        vs->cpu_.free[vs->cpu_.base] = vs->cpu_.end - vs->cpu_.base;
        return vs;
    }
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
    Range& r = vs->cpu_;
    r.base = r.mappedBase = reinterpret_cast<uint64_t>(p);
    r.mappedBytes = size;
    // The two compute windows sit at the top, aligned, never handed out.
    uint64_t top = (r.base + size) & ~(kWindowSize - 1);
    vs->localWindow_ = top - kWindowSize;
    vs->sharedWindow_ = top - 2 * kWindowSize;
    r.end = vs->sharedWindow_;
    r.free[r.base] = r.end - r.base;
    return vs;
}

VaSpace::~VaSpace() {
    for (const Range* r : {&cpu_, &gpu_})
        if (r->mappedBytes) ::munmap(reinterpret_cast<void*>(r->mappedBase), r->mappedBytes);
}

Result<uint64_t> VaSpace::take(Range& r, uint64_t size, uint64_t align) {
    for (auto it = r.free.begin(); it != r.free.end(); ++it) {
        uint64_t start = (it->first + align - 1) & ~(align - 1);
        uint64_t end = it->first + it->second;
        if (start + size > end || start + size < start) continue;
        uint64_t blockStart = it->first;
        r.free.erase(it);
        if (start > blockStart) r.free[blockStart] = start - blockStart;
        if (start + size < end) r.free[start + size] = end - (start + size);
        return start;
    }
    return Status(CUDA_ERROR_OUT_OF_MEMORY, 0, "GPU virtual address space exhausted");
}

void VaSpace::giveBack(Range& r, uint64_t va, uint64_t size) {
    auto [it, inserted] = r.free.emplace(va, size);
    if (!inserted) return;  // double free: keep the map consistent
    auto next = std::next(it);
    if (next != r.free.end() && it->first + it->second == next->first) {
        it->second += next->second;
        r.free.erase(next);
    }
    if (it != r.free.begin()) {
        auto prev = std::prev(it);
        if (prev->first + prev->second == it->first) {
            prev->second += it->second;
            r.free.erase(it);
        }
    }
}

Result<uint64_t> VaSpace::alloc(uint64_t size, uint64_t align, Use use) {
    std::lock_guard lock(mutex_);
    return take(use == Use::GpuOnly && separateGpuOnly() ? gpu_ : cpu_, size, align);
}

void VaSpace::free(uint64_t va, uint64_t size) {
    std::lock_guard lock(mutex_);
    giveBack(gpu_.contains(va, size) ? gpu_ : cpu_, va, size);
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
