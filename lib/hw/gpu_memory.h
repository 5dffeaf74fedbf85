// A memory object placed in the GPU virtual address space.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hw/rm_client.h"

namespace nvl::hw {

class Gpu;

class GpuMemory {
public:
    enum class Kind {
        Video,   // video memory (NV01_MEMORY_LOCAL_USER) at an address of our VaSpace
        Host,    // host memory described to RM (OS descriptor), GPU address == CPU address
    };

    GpuMemory(const GpuMemory&) = delete;
    GpuMemory& operator=(const GpuMemory&) = delete;
    ~GpuMemory();

    Kind kind() const { return kind_; }
    uint64_t va() const { return va_; }
    size_t size() const { return size_; }
    // CPU view at the same address as the GPU's, or nullptr when not mapped.
    void* cpu() const { return cpu_; }
    uint32_t handle() const { return object_.handle(); }
    Gpu& gpu() const { return gpu_; }

private:
    friend class Gpu;
    GpuMemory(Gpu& gpu, Kind kind) : gpu_(gpu), kind_(kind) {}

    Gpu& gpu_;
    Kind kind_;
    RmObject object_;
    uint64_t va_ = 0;
    size_t size_ = 0;
    void* cpu_ = nullptr;
    RmClient::CpuMapping cpuMapping_;  // video memory mapped through BAR1
    bool gpuMapped_ = false;           // mapped in the GPU VA space at va_
    bool vaReserved_ = false;          // va_ came from the VaSpace
    bool ownsHostPages_ = false;       // host pages mmapped by us (unmapped on destruction)
    std::vector<Gpu*> peers_;          // other GPUs that map this video memory (Gpu::mapForPeer)
};

}  // namespace nvl::hw
