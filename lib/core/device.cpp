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

}  // namespace nvl::core
