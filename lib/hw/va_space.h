// The process's GPU-visible virtual address layout.
//
// One CPU reservation (PROT_NONE, never backed) holds every virtual address
// we give the GPU, so device pointers never collide with host memory, a CPU
// mapping of GPU memory can sit at the same address the GPU uses, and all of
// it stays below 2^40 (the launch path hands the GPU QMD addresses >> 8 in
// 32 bits). Host memory the GPU uses elsewhere keeps its own address.
//
// AddressSanitizer builds (make test-asan, the fuzz targets): ASan's x86_64
// layout leaves the program only [0, 2 GiB) below 2^40; [2.25 GiB, 2 TiB) is
// its shadow gap, reserved and never handed out. So there the reservation
// is split: what the CPU maps too (channel rings, memory for small copies)
// comes from a reservation in the low 2 GiB, what only the GPU sees (large
// device memory, the compute windows) from [16 GiB, 1 TiB) inside the gap:
// still never host memory, and still below 2^40.
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
    // ThreadSanitizer build caps the range at 512 GiB; an AddressSanitizer
    // build ignores both and splits the space (see above).
    static Result<std::unique_ptr<VaSpace>> reserve(uint64_t base, uint64_t size);
    ~VaSpace();
    VaSpace(const VaSpace&) = delete;
    VaSpace& operator=(const VaSpace&) = delete;

    // What an allocation is for: memory the CPU maps at the same address
    // too, or memory only the GPU sees.
    enum class Use { CpuVisible, GpuOnly };

    // The CPU-visible range (below the compute windows, unless those sit in
    // a GPU-only range of their own).
    uint64_t base() const { return cpu_.base; }
    uint64_t size() const { return cpu_.end - cpu_.base; }
    bool contains(uint64_t va, uint64_t len = 1) const { return cpu_.contains(va, len) || gpu_.contains(va, len); }
    // True in AddressSanitizer builds: GPU-only memory has its own range.
    bool separateGpuOnly() const { return gpu_.end != 0; }

    // A free range of 'size' bytes aligned to 'align' (a power of two).
    // CUDA_ERROR_OUT_OF_MEMORY when the range for 'use' has none.
    Result<uint64_t> alloc(uint64_t size, uint64_t align, Use use = Use::CpuVisible);
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

    struct Range {
        uint64_t base = 0, end = 0;           // what alloc() hands out from
        uint64_t mappedBase = 0, mappedBytes = 0;  // our reservation (0: none of ours)
        std::map<uint64_t, uint64_t> free;   // start -> length
        bool contains(uint64_t va, uint64_t len) const {
            return end && va >= base && va + len <= end && va + len >= va;
        }
    };
    static Result<uint64_t> take(Range& r, uint64_t size, uint64_t align);
    static void giveBack(Range& r, uint64_t va, uint64_t size);

    Range cpu_;
    Range gpu_;  // AddressSanitizer builds only
    uint64_t sharedWindow_ = 0;
    uint64_t localWindow_ = 0;
    std::mutex mutex_;
};

}  // namespace nvl::hw
