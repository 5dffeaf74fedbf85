// /dev/nvidia-uvm: VA space initialization, GPU and GPU-VA-space
// registration, channel registration, external ranges and the mappings of RM
// memory into the GPU virtual address space. Statuses follow
// kernel-open/nvidia-uvm (uvm.c, uvm_va_space.c, uvm_user_channel.c,
// uvm_map_external.c, uvm_va_range.c).
#include <cerrno>
#include <cstring>
#include <memory>

#include "defs/nv_status.h"
#include "defs/uvm_ioctl.h"
#include "kdrv/sim/sim_gpu_config.h"
#include "kdrv/sim/sim_state.h"
#include "kdrv/sim/sim_user_memory.h"

namespace nvl::kdrv::sim {
namespace {

constexpr uint64_t kPage4k = 4096;
constexpr uint64_t kMaxVa = 1ull << 57;          // Hopper: 57-bit GPU virtual addresses
constexpr uint64_t kMaxChannelVa = 1ull << 57;   // Hopper: max_channel_va (uvm_hopper.c)

// uvm_api_range_invalid_aligned
bool rangeInvalid(uint64_t base, uint64_t length, uint64_t align) {
    return (base & (align - 1)) || (length & (align - 1)) || base == 0 || length == 0 || base + length < base;
}


bool overlaps(const std::map<uint64_t, UvmRange>& ranges, uint64_t base, uint64_t length) {
    auto it = ranges.lower_bound(base);
    if (it != ranges.end() && it->first < base + length) return true;
    if (it != ranges.begin()) {
        --it;
        if (it->first + it->second.size > base) return true;
    }
    return false;
}

// Runs one command: copy in, handle, copy out (the UVM_ROUTE_CMD macros).
template <class P, class F>
int route(void* arg, F&& handler) {
    auto params = std::make_unique<P>();
    const uint64_t user = reinterpret_cast<uint64_t>(arg);
    if (!copyFromUser(params.get(), user, sizeof(P))) return -EFAULT;
    params->rmStatus = handler(*params);
    return copyToUser(user, params.get(), sizeof(P)) ? 0 : -EFAULT;
}

}  // namespace

void Sim::uvmDestroy(int fd) {
    auto it = uvm_.find(fd);
    if (it == uvm_.end()) return;
    for (auto& [base, r] : it->second.ranges) {
        for (auto& g : gpus_) {
            g->va.unmapUvm(base, r.size);
            if (!r.channel) g->va.unmapDmaWithin(base, r.size);
        }
    }
    uvm_.erase(it);
}

int Sim::uvmIoctl(int fd, SimFile& file, unsigned long cmd, void* arg) {
    // Everything but INITIALIZE and MM_INITIALIZE needs an initialized VA space.
    UvmVaSpace* vs = file.uvmVaSpace ? &uvm_[fd] : nullptr;
    auto needVs = [&]() -> uint32_t { return vs ? nv::NV_OK : nv::NV_ERR_ILLEGAL_ACTION; };
    // Per GPU (a bit per GPU index): registered, and its VA space registered.
    auto gpuOf = [&](const nv::NvProcessorUuid& u) { return gpuOfUuid(u.uuid); };
    auto registered = [&](const nv::NvProcessorUuid& u) {
        const int g = gpuOf(u);
        return g >= 0 && vs && (vs->gpuRegistered >> g & 1u);
    };
    auto hasVaSpace = [&](const nv::NvProcessorUuid& u) {
        const int g = gpuOf(u);
        return registered(u) && (vs->gpuVaSpace >> g & 1u);
    };

    switch (cmd) {
    case nv::UVM_INITIALIZE:
        return route<nv::UVM_INITIALIZE_PARAMS>(arg, [&](nv::UVM_INITIALIZE_PARAMS& p) -> uint32_t {
            if (file.uvmMm) return nv::NV_ERR_INVALID_ARGUMENT;
            if (file.uvmVaSpace) return p.flags == file.uvmFlags ? nv::NV_OK : nv::NV_ERR_INVALID_ARGUMENT;
            if (p.flags & ~nv::UVM_INIT_FLAGS_MASK) return nv::NV_ERR_INVALID_ARGUMENT;
            file.uvmVaSpace = true;
            file.uvmFlags = p.flags;
            uvm_[fd] = UvmVaSpace{};
            return nv::NV_OK;
        });
    case nv::UVM_DEINITIALIZE:
        return 0;
    case nv::UVM_MM_INITIALIZE:
        return route<nv::UVM_MM_INITIALIZE_PARAMS>(arg, [&](nv::UVM_MM_INITIALIZE_PARAMS& p) -> uint32_t {
            SimFile* vaFile = findFile(p.uvmFd);
            if (!vaFile || vaFile->type != FileType::Uvm || !vaFile->uvmVaSpace) return nv::NV_ERR_INVALID_ARGUMENT;
            if (file.uvmVaSpace || file.uvmMm) return nv::NV_ERR_INVALID_ARGUMENT;  // fd already has a type
            if (vaFile->uvmMmSet) return nv::NV_ERR_INVALID_STATE;                   // only once per VA space
            vaFile->uvmMmSet = true;
            file.uvmMm = true;
            return nv::NV_OK;
        });

    case nv::UVM_REGISTER_GPU:
        return route<nv::UVM_REGISTER_GPU_PARAMS>(arg, [&](nv::UVM_REGISTER_GPU_PARAMS& p) -> uint32_t {
            if (uint32_t s = needVs()) return s;
            if (gpuOf(p.gpu_uuid) < 0) return nv::NV_ERR_GPU_UUID_NOT_FOUND;
            if (registered(p.gpu_uuid)) return nv::NV_ERR_INVALID_DEVICE;
            if (p.rmCtrlFd != -1) {
                SimFile* ctl = findFile(p.rmCtrlFd);
                if (!ctl || ctl->type != FileType::Ctl) return nv::NV_ERR_INVALID_ARGUMENT;
            }
            vs->gpuRegistered |= 1u << gpuOf(p.gpu_uuid);
            p.numaEnabled = 0;
            p.numaNodeId = -1;
            return nv::NV_OK;
        });
    case nv::UVM_UNREGISTER_GPU:
        return route<nv::UVM_UNREGISTER_GPU_PARAMS>(arg, [&](nv::UVM_UNREGISTER_GPU_PARAMS& p) -> uint32_t {
            if (uint32_t s = needVs()) return s;
            if (!registered(p.gpu_uuid)) return nv::NV_ERR_INVALID_DEVICE;
            // The GPU's VA space, channels and external mappings go with it.
            const int g = gpuOf(p.gpu_uuid);
            for (auto it = vs->ranges.begin(); it != vs->ranges.end();) {
                gpus_[static_cast<size_t>(g)]->va.unmapUvm(it->first, it->second.size);
                it = it->second.channel ? vs->ranges.erase(it) : std::next(it);
            }
            vs->gpuRegistered &= ~(1u << g);
            vs->gpuVaSpace &= ~(1u << g);
            return nv::NV_OK;
        });

    case nv::UVM_REGISTER_GPU_VASPACE:
        return route<nv::UVM_REGISTER_GPU_VASPACE_PARAMS>(arg, [&](nv::UVM_REGISTER_GPU_VASPACE_PARAMS& p) -> uint32_t {
            if (uint32_t s = needVs()) return s;
            if (!registered(p.gpuUuid)) return nv::NV_ERR_INVALID_DEVICE;
            if (hasVaSpace(p.gpuUuid)) return nv::NV_ERR_INVALID_DEVICE;
            SimFile* ctl = findFile(p.rmCtrlFd);
            if (!ctl || ctl->type != FileType::Ctl) return nv::NV_ERR_INVALID_ARGUMENT;
            RmClient* c = findClient(p.hClient);
            if (!c || c->ownerFd != p.rmCtrlFd) return nv::NV_ERR_INVALID_CLIENT;
            RmObject* vas = findObject(*c, p.hVaSpace);
            if (!vas) return nv::NV_ERR_OBJECT_NOT_FOUND;
            if (vas->kind != ObjKind::VaSpace) return nv::NV_ERR_INVALID_OBJECT_HANDLE;
            vs->gpuVaSpace |= 1u << gpuOf(p.gpuUuid);
            vs->vaClient = p.hClient;
            vs->vaHandle = p.hVaSpace;
            return nv::NV_OK;
        });
    case nv::UVM_UNREGISTER_GPU_VASPACE:
        return route<nv::UVM_UNREGISTER_GPU_VASPACE_PARAMS>(
            arg, [&](nv::UVM_UNREGISTER_GPU_VASPACE_PARAMS& p) -> uint32_t {
                if (uint32_t s = needVs()) return s;
                if (!hasVaSpace(p.gpuUuid)) return nv::NV_ERR_INVALID_DEVICE;
                const int g = gpuOf(p.gpuUuid);
                for (auto it = vs->ranges.begin(); it != vs->ranges.end();) {
                    gpus_[static_cast<size_t>(g)]->va.unmapUvm(it->first, it->second.size);
                    it = it->second.channel ? vs->ranges.erase(it) : std::next(it);
                }
                vs->gpuVaSpace &= ~(1u << g);
                return nv::NV_OK;
            });

    case nv::UVM_REGISTER_CHANNEL:
        return route<nv::UVM_REGISTER_CHANNEL_PARAMS>(arg, [&](nv::UVM_REGISTER_CHANNEL_PARAMS& p) -> uint32_t {
            if (uint32_t s = needVs()) return s;
            if (!hasVaSpace(p.gpuUuid)) return nv::NV_ERR_INVALID_DEVICE;
            SimFile* ctl = findFile(p.rmCtrlFd);
            if (!ctl || ctl->type != FileType::Ctl) return nv::NV_ERR_INVALID_ARGUMENT;
            RmClient* c = findClient(p.hClient);
            if (!c || c->ownerFd != p.rmCtrlFd) return nv::NV_ERR_INVALID_CLIENT;
            RmObject* ch = findObject(*c, p.hChannel);
            if (!ch || ch->kind != ObjKind::Channel) return nv::NV_ERR_INVALID_CHANNEL;
            for (auto& [b, r] : vs->ranges)
                if (r.channel && r.hClient == p.hClient && r.hChannel == p.hChannel) return nv::NV_ERR_INVALID_CHANNEL;
            // The channel's context buffers get a VA range there.
            if (rangeInvalid(p.base, p.length, kPage4k)) return nv::NV_ERR_INVALID_ADDRESS;
            if (p.base + p.length - 1 >= kMaxChannelVa) return nv::NV_ERR_OUT_OF_RANGE;
            if (overlaps(vs->ranges, p.base, p.length)) return nv::NV_ERR_UVM_ADDRESS_IN_USE;
            vs->ranges[p.base] = UvmRange{p.length, true, p.hClient, p.hChannel};
            return nv::NV_OK;
        });
    case nv::UVM_UNREGISTER_CHANNEL:
        return route<nv::UVM_UNREGISTER_CHANNEL_PARAMS>(arg, [&](nv::UVM_UNREGISTER_CHANNEL_PARAMS& p) -> uint32_t {
            if (uint32_t s = needVs()) return s;
            if (!registered(p.gpuUuid)) return nv::NV_ERR_INVALID_DEVICE;
            for (auto it = vs->ranges.begin(); it != vs->ranges.end(); ++it) {
                if (it->second.channel && it->second.hClient == p.hClient && it->second.hChannel == p.hChannel) {
                    vs->ranges.erase(it);
                    return nv::NV_OK;
                }
            }
            return nv::NV_ERR_INVALID_CHANNEL;
        });

    case nv::UVM_CREATE_EXTERNAL_RANGE:
        return route<nv::UVM_CREATE_EXTERNAL_RANGE_PARAMS>(
            arg, [&](nv::UVM_CREATE_EXTERNAL_RANGE_PARAMS& p) -> uint32_t {
                if (uint32_t s = needVs()) return s;
                if (rangeInvalid(p.base, p.length, kPage4k) || p.base + p.length > kMaxVa)
                    return nv::NV_ERR_INVALID_ADDRESS;
                if (overlaps(vs->ranges, p.base, p.length)) return nv::NV_ERR_UVM_ADDRESS_IN_USE;
                vs->ranges[p.base] = UvmRange{p.length, false, 0, 0};
                return nv::NV_OK;
            });

    case nv::UVM_MAP_EXTERNAL_ALLOCATION:
        return route<nv::UVM_MAP_EXTERNAL_ALLOCATION_PARAMS>(
            arg, [&](nv::UVM_MAP_EXTERNAL_ALLOCATION_PARAMS& p) -> uint32_t {
                if (uint32_t s = needVs()) return s;
                if (rangeInvalid(p.base, p.length, kPage4k)) return nv::NV_ERR_INVALID_ADDRESS;
                if (p.gpuAttributesCount == 0 || p.gpuAttributesCount > nv::UVM_MAX_GPUS)
                    return nv::NV_ERR_INVALID_ARGUMENT;
                // An external range must hold the whole mapping.
                auto r = vs->ranges.upper_bound(p.base);
                if (r == vs->ranges.begin()) return nv::NV_ERR_INVALID_ADDRESS;
                --r;
                if (r->second.channel || r->first + r->second.size < p.base + p.length) return nv::NV_ERR_INVALID_ADDRESS;
                for (uint64_t i = 0; i < p.gpuAttributesCount; ++i) {
                    const nv::UvmGpuMappingAttributes& a = p.perGpuAttributes[i];
                    if (a.gpuMappingType >= nv::UvmGpuMappingTypeCount || a.gpuCachingType >= nv::UvmGpuCachingTypeCount ||
                        a.gpuFormatType >= nv::UvmGpuFormatTypeCount ||
                        a.gpuElementBits >= nv::UvmGpuFormatElementBitsCount ||
                        a.gpuCompressionType >= nv::UvmGpuCompressionTypeCount)
                        return nv::NV_ERR_INVALID_ARGUMENT;
                    if (!hasVaSpace(a.gpuUuid)) return nv::NV_ERR_INVALID_DEVICE;
                }
                // Duplicate the RM handle (nvUvmInterfaceDupMemory).
                SimFile* ctl = findFile(p.rmCtrlFd);
                if (!ctl || ctl->type != FileType::Ctl) return nv::NV_ERR_INVALID_ARGUMENT;
                RmClient* c = findClient(p.hClient);
                if (!c || c->ownerFd != p.rmCtrlFd) return nv::NV_ERR_INVALID_CLIENT;
                RmObject* m = findObject(*c, p.hMemory);
                if (!m) return nv::NV_ERR_OBJECT_NOT_FOUND;
                if (m->kind != ObjKind::Memory || !m->mem) return nv::NV_ERR_INVALID_OBJECT_HANDLE;
                if (p.offset & (kPage4k - 1)) return nv::NV_ERR_INVALID_ADDRESS;
                if (p.offset > m->mem->size() || p.length > m->mem->size() - p.offset) return nv::NV_ERR_INVALID_OFFSET;
                GpuVaSpace::Mapping map;
                map.size = p.length;
                map.mem = m->mem;
                map.offset = p.offset;
                map.hClient = c->handle;
                map.hMemory = m->handle;
                for (uint64_t i = 0; i < p.gpuAttributesCount; ++i)
                    gpus_[static_cast<size_t>(gpuOf(p.perGpuAttributes[i].gpuUuid))]->va.mapUvm(p.base, map);
                return nv::NV_OK;
            });

    case nv::UVM_FREE:
        return route<nv::UVM_FREE_PARAMS>(arg, [&](nv::UVM_FREE_PARAMS& p) -> uint32_t {
            if (uint32_t s = needVs()) return s;
            if (rangeInvalid(p.base, p.length, kPage4k)) return nv::NV_ERR_INVALID_ADDRESS;
            // Only whole external ranges can be freed.
            auto it = vs->ranges.find(p.base);
            if (it == vs->ranges.end() || it->second.size != p.length || it->second.channel)
                return nv::NV_ERR_INVALID_ADDRESS;
            for (auto& g : gpus_) {
                g->va.unmapUvm(p.base, p.length);
                g->va.unmapDmaWithin(p.base, p.length);
            }
            vs->ranges.erase(it);
            return nv::NV_OK;
        });

    case nv::UVM_ENABLE_PEER_ACCESS:
        return route<nv::UVM_ENABLE_PEER_ACCESS_PARAMS>(arg, [&](nv::UVM_ENABLE_PEER_ACCESS_PARAMS&) -> uint32_t {
            if (uint32_t s = needVs()) return s;
            return nv::NV_ERR_INVALID_DEVICE;  // one GPU: no peers
        });

    default:
        return -EINVAL;  // uvm_test_ioctl: unknown command
    }
}

}  // namespace nvl::kdrv::sim
