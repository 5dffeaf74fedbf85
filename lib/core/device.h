// A CUDA device: one attached GPU, its attributes and its primary context.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "hw/gpu.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class Context;

class Device {
public:
    Device(int ordinal, hw::Gpu& gpu) : ordinal_(ordinal), gpu_(gpu) {}

    int ordinal() const { return ordinal_; }
    hw::Gpu& gpu() const { return gpu_; }
    const hw::GpuInfo& info() const { return gpu_.info(); }

    // cuDeviceGetAttribute semantics: CUDA_ERROR_INVALID_VALUE for an
    // attribute outside the enum.
    Result<int> attribute(int attribute) const;
    // "dddd:bb:dd.f" as libcuda writes it.
    std::string pciBusId() const;
    bool hasPciAddress(unsigned domain, unsigned bus, unsigned device, unsigned function) const;
    // Video memory free and total (cuMemGetInfo).
    Status memoryInfo(size_t* free, size_t* total) const;

    // Primary context bookkeeping (cuDevicePrimaryCtx*).
    std::mutex primaryMutex;
    unsigned primaryFlags = 0;
    int primaryRefs = 0;
    std::shared_ptr<Context> primary;  // created on first retain, kept for the process

private:
    int ordinal_;
    hw::Gpu& gpu_;
};

// Looks up a device by ordinal after checking cuInit.
Result<Device*> deviceFor(CUdevice ordinal);

}  // namespace nvl::core
