#include "core/device.h"

#include <cstdio>

#include "core/runtime.h"

namespace nvl::core {

Result<Device*> deviceFor(CUdevice ordinal) {
    NVL_TRY(Runtime::get().checkInit());
    Device* d = Runtime::get().device(ordinal);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    return d;
}

std::string Device::pciBusId() const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", info().pciDomain, info().pciBus, info().pciDevice,
                  info().pciFunction);
    return buf;
}

bool Device::hasPciAddress(unsigned domain, unsigned bus, unsigned device, unsigned function) const {
    const hw::GpuInfo& gi = info();
    return gi.pciDomain == domain && gi.pciBus == bus && gi.pciDevice == device && gi.pciFunction == function;
}

Status Device::memoryInfo(size_t* free, size_t* total) const {
    NVL_ASSIGN_OR_RETURN(hw::FbUsage usage, gpu_.fbUsage());
    if (free) *free = usage.free;
    if (total) *total = usage.total;
    return kOk;
}

}  // namespace nvl::core
