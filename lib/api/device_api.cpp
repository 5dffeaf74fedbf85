// cuInit, cuDriverGetVersion and the cuDevice* queries.
#include <cctype>
#include <cstdio>
#include <cstring>

#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/device.h"
#include "core/runtime.h"

namespace nvl::api {
namespace {

// The CUDA version this library implements (the header's CUDA_VERSION).
constexpr int kDriverVersion = CUDA_VERSION;

// Parses the forms CUDA documents: domain:bus:device.function,
// domain:bus:device and bus:device.function (hexadecimal, any case).
bool parsePciBusId(const char* s, unsigned& domain, unsigned& bus, unsigned& device, unsigned& function) {
    unsigned a = 0, b = 0, c = 0, f = 0;
    int n = 0;
    if (std::sscanf(s, "%x:%x:%x.%x%n", &a, &b, &c, &f, &n) == 4 && s[n] == 0) {
        domain = a, bus = b, device = c, function = f;
        return true;
    }
    n = 0;
    if (std::sscanf(s, "%x:%x.%x%n", &b, &c, &f, &n) == 3 && s[n] == 0) {
        domain = 0, bus = b, device = c, function = f;
        return true;
    }
    n = 0;
    if (std::sscanf(s, "%x:%x:%x%n", &a, &b, &c, &n) == 3 && s[n] == 0) {
        domain = a, bus = b, device = c, function = 0;
        return true;
    }
    return false;
}

}  // namespace

Status init(unsigned int flags) { return core::Runtime::get().init(flags); }

Status driverGetVersion(int* driverVersion) {
    if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = kDriverVersion;
    return kOk;
}

Status deviceGetCount(int* count) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = core::Runtime::get().deviceCount();
    return kOk;
}

Status deviceGet(CUdevice* device, int ordinal) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    NVL_TRY(core::deviceFor(ordinal).status());
    *device = ordinal;
    return kOk;
}

Status deviceGetName(char* name, int len, CUdevice dev) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    std::snprintf(name, static_cast<size_t>(len), "%s", d->info().name.c_str());
    return kOk;
}

Status deviceTotalMem(size_t* bytes, CUdevice dev) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    *bytes = d->info().totalMemory;
    return kOk;
}

// The first ABI's 32-bit size: clamped.
Status deviceTotalMemV1(unsigned int* bytes, CUdevice dev) {
    size_t total = 0;
    NVL_TRY(deviceTotalMem(bytes ? &total : nullptr, dev));
    *bytes = total > 0xffffffffull ? 0xffffffffu : static_cast<unsigned int>(total);
    return kOk;
}

Status deviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    NVL_ASSIGN_OR_RETURN(*pi, d->attribute(static_cast<int>(attrib)));
    return kOk;
}

// Without MIG the _v2 and the first cuDeviceGetUuid differ in nothing: both
// give the GPU's UUID.
Status deviceGetUuid(CUuuid* uuid, CUdevice dev) {
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    std::memcpy(uuid->bytes, d->info().uuid, sizeof uuid->bytes);
    return kOk;
}

Status deviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!pciBusId || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    const std::string id = d->pciBusId();
    std::snprintf(pciBusId, static_cast<size_t>(len), "%s", id.c_str());
    return static_cast<size_t>(len) > id.size() ? kOk : Status(CUDA_ERROR_INVALID_VALUE);
}

Status deviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!dev || !pciBusId) return CUDA_ERROR_INVALID_VALUE;
    unsigned domain, bus, device, function;
    if (!parsePciBusId(pciBusId, domain, bus, device, function)) return CUDA_ERROR_INVALID_VALUE;
    auto& rt = core::Runtime::get();
    for (int i = 0; i < rt.deviceCount(); ++i) {
        if (rt.device(i)->hasPciAddress(domain, bus, device, function)) {
            *dev = i;
            return kOk;
        }
    }
    return CUDA_ERROR_INVALID_DEVICE;
}

}  // namespace nvl::api
