// cuInit, cuDriverGetVersion and the cuDevice* queries.
#include <cctype>
#include <cstdio>
#include <cstring>

#include "api/api_internal.h"
#include "api/entry.h"
#include "core/device.h"
#include "core/runtime.h"

using namespace nvl;
using nvl::api::entry;

namespace nvl::api {

Status deviceUuid(CUuuid* uuid, CUdevice dev) {
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    std::memcpy(uuid->bytes, d->info().uuid, sizeof uuid->bytes);
    return kOk;
}

}  // namespace nvl::api

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

NVL_EXPORT CUresult cuInit(unsigned int flags) {
    return entry("cuInit", [&] { return core::Runtime::get().init(flags); }, "flags=%u", flags);
}

NVL_EXPORT CUresult cuDriverGetVersion(int* driverVersion) {
    return entry("cuDriverGetVersion", [&]() -> Status {
        if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
        *driverVersion = kDriverVersion;
        return kOk;
    }, "%p", static_cast<void*>(driverVersion));
}

NVL_EXPORT CUresult cuDeviceGetCount(int* count) {
    return entry("cuDeviceGetCount", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!count) return CUDA_ERROR_INVALID_VALUE;
        *count = core::Runtime::get().deviceCount();
        return kOk;
    }, "%p", static_cast<void*>(count));
}

NVL_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
    return entry("cuDeviceGet", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!device) return CUDA_ERROR_INVALID_VALUE;
        NVL_TRY(core::deviceFor(ordinal).status());
        *device = ordinal;
        return kOk;
    }, "%p, %d", static_cast<void*>(device), ordinal);
}

NVL_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
    return entry("cuDeviceGetName", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
        std::snprintf(name, static_cast<size_t>(len), "%s", d->info().name.c_str());
        return kOk;
    }, "%p, %d, %d", static_cast<void*>(name), len, dev);
}

NVL_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
    return entry("cuDeviceTotalMem_v2", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!bytes) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
        *bytes = d->info().totalMemory;
        return kOk;
    }, "%p, %d", static_cast<void*>(bytes), dev);
}

NVL_EXPORT CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attribute, CUdevice dev) {
    const int attrib = api::enumValue(attribute);
    return entry("cuDeviceGetAttribute", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!pi) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
        NVL_ASSIGN_OR_RETURN(*pi, d->attribute(attrib));
        return kOk;
    }, "%p, %d, %d", static_cast<void*>(pi), attrib, dev);
}

// Without MIG the _v2 and the legacy cuDeviceGetUuid differ in nothing: both
// give the GPU's UUID (the legacy name is in legacy_api.cpp).
NVL_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
    return entry("cuDeviceGetUuid_v2", [&] { return api::deviceUuid(uuid, dev); }, "%p, %d", static_cast<void*>(uuid), dev);
}

NVL_EXPORT CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
    return entry("cuDeviceGetPCIBusId", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        if (!pciBusId || len <= 0) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
        const std::string id = d->pciBusId();
        std::snprintf(pciBusId, static_cast<size_t>(len), "%s", id.c_str());
        return static_cast<size_t>(len) > id.size() ? kOk : Status(CUDA_ERROR_INVALID_VALUE);
    }, "%p, %d, %d", static_cast<void*>(pciBusId), len, dev);
}

NVL_EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
    return entry("cuDeviceGetByPCIBusId", [&]() -> Status {
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
    }, "%p, %s", static_cast<void*>(dev), pciBusId ? pciBusId : "(null)");
}
