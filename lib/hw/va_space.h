// The process's GPU-visible virtual address layout.
//
// One CPU reservation (PROT_NONE, never backed) holds every virtual address
// we give the GPU, so device pointers never collide with host memory, a CPU
// mapping of GPU memory can sit at the same address the GPU uses, and all of
// it stays below 2^40 (the launch path hands the GPU QMD addresses >> 8 in
// 32 bits). Host memory the GPU uses elsewhere keeps its own address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "common/status.h"

namespace nvl::hw {

class VaSpace {
public:
    // Reserves [base, base + size) in the CPU address space (base is a hint
    // that must be honoured; falls back to any address below 2^40). A
    // ThreadSanitizer build caps the range at 512 GiB (see va_space.cpp).
    static Result<std::unique_ptr<VaSpace>> reserve(uint64_t base, uint64_t size);
    ~VaSpace();
    VaSpace(const VaSpace&) = delete;
    VaSpace& operator=(const VaSpace&) = delete;

    uint64_t base() const { return base_; }
    uint64_t size() const { return size_; }
    bool contains(uint64_t va, uint64_t len = 1) const {
        return va >= base_ && va + len <= base_ + size_ && va + len >= va;
    }

    // A free range of 'size' bytes aligned to 'align' (a power of two).
    Result<uint64_t> alloc(uint64_t size, uint64_t align);
    void free(uint64_t va, uint64_t size);

    // Puts the reservation back over [va, va+size) after a CPU mapping there
    // is no longer wanted (atomically replaces it).
    void unmapCpu(uint64_t va, uint64_t size);
    // Ordinary host memory (anonymous, shared) at [va, va+size).
    Result<void*> mapHostMemory(uint64_t va, uint64_t size);

    // Reserved GPU-only windows (shared and local memory of compute).
    uint64_t sharedWindow() const { return sharedWindow_; }
    uint64_t localWindow() const { return localWindow_; }

private:
    VaSpace() = default;

    uint64_t base_ = 0;
    uint64_t size_ = 0;
    uint64_t sharedWindow_ = 0;
    uint64_t localWindow_ = 0;
    std::mutex mutex_;
    std::map<uint64_t, uint64_t> free_;  // start -> length
};

}  // namespace nvl::hw
