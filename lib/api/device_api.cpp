// cuInit, cuDriverGetVersion and the cuDevice* queries.
#include <cctype>
#include <cstdio>
#include <cstring>

#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/device.h"
#include "core/peer.h"
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

// ------------------------------------------------------------ deprecated queries

Status deviceComputeCapability(int* major, int* minor, CUdevice dev) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!major || !minor) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    NVL_ASSIGN_OR_RETURN(*major, d->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
    NVL_ASSIGN_OR_RETURN(*minor, d->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    return kOk;
}

// The same numbers cuDeviceGetAttribute gives.
Status deviceGetProperties(CUdevprop* prop, CUdevice dev) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!prop) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * d, core::deviceFor(dev));
    CUdevprop p{};
    const struct {
        int* out;
        CUdevice_attribute attribute;
    } fields[] = {
        {&p.maxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
        {&p.maxThreadsDim[0], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X},
        {&p.maxThreadsDim[1], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y},
        {&p.maxThreadsDim[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z},
        {&p.maxGridSize[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X},
        {&p.maxGridSize[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y},
        {&p.maxGridSize[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z},
        {&p.sharedMemPerBlock, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
        {&p.totalConstantMemory, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY},
        {&p.SIMDWidth, CU_DEVICE_ATTRIBUTE_WARP_SIZE},
        {&p.memPitch, CU_DEVICE_ATTRIBUTE_MAX_PITCH},
        {&p.regsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
        {&p.clockRate, CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
        {&p.textureAlign, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT},
    };
    for (const auto& f : fields) {
        NVL_ASSIGN_OR_RETURN(*f.out, d->attribute(static_cast<int>(f.attribute)));
    }
    *prop = p;
    return kOk;
}

// ------------------------------------------------------------------ peers

// Whether contexts of 'dev' can map memory of 'peerDev': RM's peer
// capabilities of the two GPUs (reads and writes); never for one device.
Status deviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!canAccessPeer) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::Device * a, core::deviceFor(dev));
    NVL_ASSIGN_OR_RETURN(core::Device * b, core::deviceFor(peerDev));
    NVL_ASSIGN_OR_RETURN(hw::Driver::PeerCaps caps, core::peerCaps(*a, *b));
    *canAccessPeer = caps.access ? 1 : 0;
    return kOk;
}

// The link between two devices, from RM's peer capabilities. CUDA arrays are
// not provided, so neither is their access over the link.
Status deviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib, CUdevice srcDevice, CUdevice dstDevice) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    // The devices first: libcuda 580 answers an unknown attribute between a
    // device and itself with CUDA_ERROR_INVALID_DEVICE
    // (tests/compat/dropin_probe.c devices, run on the H200).
    NVL_ASSIGN_OR_RETURN(core::Device * src, core::deviceFor(srcDevice));
    NVL_ASSIGN_OR_RETURN(core::Device * dst, core::deviceFor(dstDevice));
    if (srcDevice == dstDevice) return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK:
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED: break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    NVL_ASSIGN_OR_RETURN(hw::Driver::PeerCaps caps, core::peerCaps(*src, *dst));
    switch (attrib) {
    // Lower ranks are faster links: NVLink before PCIe.
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = caps.access && !caps.nvlink ? 1 : 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED: *value = caps.access; break;
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED: *value = caps.atomics; break;
    default: *value = 0; break;
    }
    return kOk;
}

// ------------------------------------------------------------------ peer access

Status ctxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
    NVL_ASSIGN_OR_RETURN(core::Context * ctx, core::requireCurrent());
    core::Context* peer = core::Context::fromHandle(peerContext);
    if (!peer || !peer->active()) return CUDA_ERROR_INVALID_CONTEXT;
    return core::enablePeerAccess(*ctx, *peer, Flags);
}

Status ctxDisablePeerAccess(CUcontext peerContext) {
    NVL_ASSIGN_OR_RETURN(core::Context * ctx, core::requireCurrent());
    core::Context* peer = core::Context::fromHandle(peerContext);
    if (!peer) return CUDA_ERROR_INVALID_CONTEXT;
    return core::disablePeerAccess(*ctx, *peer);
}

}  // namespace nvl::api
