// RM escapes of /dev/nvidiactl and /dev/nvidiaN other than alloc, free and
// control: card info, fd registration, version check, OS events, OS-descriptor
// memory, CPU mappings (NV_ESC_RM_MAP_MEMORY + mmap) and GPU DMA mappings.
// Size checks, device-only / control-only rules and statuses follow
// kernel-open/nvidia/nv.c and src/nvidia/arch/nvalloc/unix/src/escape.c.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "defs/nv_ioctl.h"
#include "defs/nv_status.h"
#include "defs/rm_classes.h"
#include "kdrv/sim/sim_gpu_config.h"
#include "kdrv/sim/sim_state.h"
#include "kdrv/sim/sim_user_memory.h"

namespace nvl::kdrv::sim {
namespace {

uint64_t pageSize() {
    static const uint64_t size = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

}  // namespace

RmClient* Sim::findClient(uint32_t hClient) {
    auto it = clients_.find(hClient);
    return it == clients_.end() ? nullptr : &it->second;
}

RmObject* Sim::findObject(RmClient& c, uint32_t handle) {
    auto it = c.objects.find(handle);
    return it == c.objects.end() ? nullptr : &it->second;
}

int Sim::gpuOfUuid(const uint8_t uuid[16]) const {
    for (uint32_t k = 0; k < gpus_.size(); ++k) {
        uint8_t ours[16];
        std::memcpy(ours, config::kUuid, sizeof ours);
        ours[config::kUuidGpuByte] = static_cast<uint8_t>('0' + k);
        if (std::memcmp(uuid, ours, sizeof ours) == 0) return static_cast<int>(k);
    }
    return -1;
}

bool Sim::p2pLinked(const RmClient& c, int a, int b) const {
    for (const auto& [h, o] : c.objects)
        if (o.kind == ObjKind::P2p && ((o.gpu == a && o.peerGpu == b) || (o.gpu == b && o.peerGpu == a))) return true;
    return false;
}

int Sim::clientOwnerFd(int fd, const SimFile& file) const {
    return (file.type == FileType::Device && file.linkedCtl >= 0) ? file.linkedCtl : fd;
}

// ------------------------------------------------------------ escapes

int Sim::cardInfo(SimFile& file, void* data, uint32_t size) {
    if (file.type != FileType::Ctl) return -EINVAL;
    const size_t n = size / sizeof(nv::nv_ioctl_card_info_t);
    if (n < gpus_.size()) return -EINVAL;  // fewer entries than GPUs
    auto* ci = static_cast<nv::nv_ioctl_card_info_t*>(data);
    std::memset(ci, 0, n * sizeof *ci);
    for (uint32_t k = 0; k < gpus_.size(); ++k) {
        ci[k].valid = 1;
        ci[k].pci_info.domain = config::kPciDomain;
        ci[k].pci_info.bus = config::kPciBuses[k];
        ci[k].pci_info.slot = config::kPciSlot;
        ci[k].pci_info.function = config::kPciFunction;
        ci[k].pci_info.vendor_id = config::kPciVendorId;
        ci[k].pci_info.device_id = config::kPciDeviceId;
        ci[k].gpu_id = config::gpuIdOf(k);
        ci[k].interrupt_line = config::kInterruptLine;
        ci[k].reg_address = config::kRegAddress + k * config::kRegSize;
        ci[k].reg_size = config::kRegSize;
        ci[k].fb_address = config::kFbAddress + k * config::kFbBarSize;
        ci[k].fb_size = config::kFbBarSize;
        ci[k].minor_number = k;
    }
    return 0;
}

int Sim::registerFd(int fd, SimFile& file, void* data, uint32_t size) {
    if (size != sizeof(nv::nv_ioctl_register_fd_t)) return -EINVAL;
    const int ctl = static_cast<nv::nv_ioctl_register_fd_t*>(data)->ctl_fd;
    if (file.linkedCtl >= 0) return -EINVAL;  // already registered (NV_ERR_INVALID_STATE)
    SimFile* target = findFile(ctl);
    // It must be a control fd, not this one, and not itself linked.
    if (!target || target->type != FileType::Ctl || ctl == fd || target->linkedCtl >= 0) return -EINVAL;
    file.linkedCtl = ctl;
    return 0;
}

int Sim::checkVersion(SimFile& file, void* data, uint32_t size) {
    if (file.type != FileType::Ctl) return -EINVAL;
    if (size != sizeof(nv::nv_ioctl_rm_api_version_t)) return -EINVAL;
    auto* p = static_cast<nv::nv_ioctl_rm_api_version_t*>(data);
    p->reply = nv::NV_RM_API_VERSION_REPLY_RECOGNIZED;
    if (p->cmd == nv::NV_RM_API_VERSION_CMD_QUERY) {
        std::memset(p->versionString, 0, sizeof p->versionString);
        std::memcpy(p->versionString, config::kDriverVersion, sizeof config::kDriverVersion);
    }
    // Strict and relaxed checks are accepted whatever the string.
    return 0;
}

int Sim::osEvent(int fd, SimFile& file, bool alloc, void* data, uint32_t size) {
    (void)fd;
    (void)file;
    static_assert(sizeof(nv::nv_ioctl_alloc_os_event_t) == sizeof(nv::nv_ioctl_free_os_event_t));
    if (size != sizeof(nv::nv_ioctl_alloc_os_event_t)) return -EINVAL;
    auto* p = static_cast<nv::nv_ioctl_alloc_os_event_t*>(data);
    const auto key = std::make_pair(p->hClient, p->fd);
    if (alloc) {
        // Only one event per (client, fd).
        if (osEvents_.count(key)) {
            p->Status = nv::NV_ERR_INVALID_ARGUMENT;
        } else {
            osEvents_[key] = 0;
            p->Status = nv::NV_OK;
        }
    } else {
        p->Status = osEvents_.erase(key) ? nv::NV_OK : nv::NV_ERR_INVALID_EVENT;
    }
    return 0;
}

int Sim::statusCode(SimFile& file, void* data, uint32_t size) {
    if (file.type != FileType::Ctl || size != sizeof(nv::nv_ioctl_status_code_t)) return -EINVAL;
    auto* p = static_cast<nv::nv_ioctl_status_code_t*>(data);
    bool known = false;
    for (uint32_t k = 0; k < gpus_.size(); ++k)
        known = known || (p->domain == config::kPciDomain && p->bus == config::kPciBuses[k] && p->slot == config::kPciSlot);
    if (!known) return -EINVAL;
    p->status = nv::NV_OK;
    return 0;
}

// ---------------------------------------------------- OS descriptor memory

uint32_t Sim::allocMemory(int fd, SimFile& file, void* data, uint32_t size) {
    if (size != sizeof(nv::nv_ioctl_nvos02_parameters_with_fd)) return nv::NV_ERR_INVALID_ARGUMENT;
    if (file.type != FileType::Device) return nv::NV_ERR_INVALID_ARGUMENT;  // NV_ACTUAL_DEVICE_ONLY
    nv::NVOS02_PARAMETERS& p = static_cast<nv::nv_ioctl_nvos02_parameters_with_fd*>(data)->params;
    if (p.hClass != nv::NV01_MEMORY_SYSTEM_OS_DESCRIPTOR) {
        // The legacy NVOS02 allocations of other classes are not simulated.
        p.status = nv::NV_ERR_INVALID_CLASS;
        return nv::NV_OK;
    }
    // RmAllocOsDescriptor: the flags it accepts.
    const uint32_t coherency = static_cast<uint32_t>(nv::NVOS02_FLAGS_COHERENCY.get(p.flags));
    if (nv::NVOS02_FLAGS_LOCATION.get(p.flags) != nv::NVOS02_FLAGS_LOCATION_PCI ||
        nv::NVOS02_FLAGS_MAPPING.get(p.flags) != nv::NVOS02_FLAGS_MAPPING_NO_MAP ||
        (coherency != nv::NVOS02_FLAGS_COHERENCY_CACHED && coherency != nv::NVOS02_FLAGS_COHERENCY_WRITE_BACK &&
         coherency != nv::NVOS02_FLAGS_COHERENCY_UNCACHED)) {
        p.status = nv::NV_ERR_INVALID_FLAGS;
        return nv::NV_OK;
    }
    // RmCreateOsDescriptor: page-aligned address, no overflow, pages present.
    if (p.pMemory & (pageSize() - 1)) {
        p.status = nv::NV_ERR_NOT_SUPPORTED;
        return nv::NV_OK;
    }
    if (p.limit + 1 == 0) {
        p.status = nv::NV_ERR_INVALID_LIMIT;
        return nv::NV_OK;
    }
    const uint64_t bytes = p.limit + 1;
    if (p.pMemory == 0 || p.pMemory + bytes < p.pMemory || !userRangeMapped(p.pMemory, bytes)) {
        p.status = nv::NV_ERR_INVALID_ADDRESS;
        return nv::NV_OK;
    }
    // Nv04VidHeapControl(NVOS32_FUNCTION_ALLOC_OS_DESCRIPTOR).
    RmClient* c = findClient(p.hRoot);
    if (!c || c->ownerFd != clientOwnerFd(fd, file)) {
        p.status = nv::NV_ERR_INVALID_CLIENT;
        return nv::NV_OK;
    }
    RmObject* parent = findObject(*c, p.hObjectParent);
    if (!parent) {
        p.status = nv::NV_ERR_OBJECT_NOT_FOUND;
        return nv::NV_OK;
    }
    if (parent->kind != ObjKind::Device) {
        p.status = nv::NV_ERR_INVALID_OBJECT_PARENT;
        return nv::NV_OK;
    }
    uint32_t h = p.hObjectNew;
    if (h == 0) {
        h = newHandle(*c);
    } else if (h == c->handle || handleRestricted(h)) {
        p.status = nv::NV_ERR_INVALID_OBJECT_HANDLE;
        return nv::NV_OK;
    } else if (c->objects.count(h)) {
        p.status = nv::NV_ERR_INSERT_DUPLICATE_NAME;
        return nv::NV_OK;
    }
    const bool writable = nv::NVOS02_FLAGS_ALLOC_USER_READ_ONLY.get(p.flags) == 0;
    std::shared_ptr<Backing> mem = Backing::fromUser(p.pMemory, bytes, writable);
    if (!mem) {
        p.status = nv::NV_ERR_INVALID_ADDRESS;
        return nv::NV_OK;
    }
    RmObject obj;
    obj.handle = h;
    obj.hClass = p.hClass;
    obj.hParent = parent->handle;
    obj.kind = ObjKind::Memory;
    obj.gpu = parent->gpu;
    obj.mem = std::move(mem);
    parent->children.push_back(h);
    c->objects[h] = std::move(obj);
    p.hObjectNew = h;
    p.status = nv::NV_OK;
    return nv::NV_OK;
}

// ------------------------------------------------------- CPU mappings

uint32_t Sim::mapMemory(int fd, SimFile& file, void* data, uint32_t size) {
    if (size != sizeof(nv::nv_ioctl_nvos33_parameters_with_fd)) return nv::NV_ERR_INVALID_ARGUMENT;
    if (file.type != FileType::Ctl) return nv::NV_ERR_INVALID_ARGUMENT;  // NV_CTL_DEVICE_ONLY
    auto* w = static_cast<nv::nv_ioctl_nvos33_parameters_with_fd*>(data);
    nv::NVOS33_PARAMETERS& p = w->params;
    // Userspace does not choose the caching type.
    p.flags = (p.flags & ~static_cast<uint32_t>(nv::NVOS33_FLAGS_CACHING_TYPE.mask())) |
              nv::NVOS33_FLAGS_CACHING_TYPE.value(nv::NVOS33_FLAGS_CACHING_TYPE_DEFAULT);
    auto fail = [&](uint32_t s) {
        p.status = s;
        return nv::NV_OK;
    };
    RmClient* c = findClient(p.hClient);
    if (!c || c->ownerFd != clientOwnerFd(fd, file)) return fail(nv::NV_ERR_INVALID_CLIENT);
    RmObject* dev = findObject(*c, p.hDevice);
    if (!dev) return fail(nv::NV_ERR_OBJECT_NOT_FOUND);
    if (dev->kind != ObjKind::Device && dev->kind != ObjKind::Subdevice) return fail(nv::NV_ERR_INVALID_OBJECT_HANDLE);
    RmObject* memObj = findObject(*c, p.hMemory);
    if (!memObj) return fail(nv::NV_ERR_OBJECT_NOT_FOUND);
    std::shared_ptr<Backing> mem = memObj->mem;
    const bool mappable = mem && (memObj->kind == ObjKind::Memory || memObj->kind == ObjKind::Usermode ||
                                  memObj->kind == ObjKind::Channel);
    if (!mappable || mem->kind() == MemKind::OsDescriptor) return fail(nv::NV_ERR_OBJECT_NOT_FOUND);
    if (p.length == 0) return fail(nv::NV_ERR_INVALID_LIMIT);
    if (p.offset >= mem->size()) return fail(nv::NV_ERR_INVALID_BASE);
    if (p.length > mem->size() - p.offset) return fail(nv::NV_ERR_INVALID_LIMIT);

    // rm_create_mmap_context: video memory and registers map through a GPU
    // fd (BAR1/BAR0); system memory through a control fd.
    SimFile* target = findFile(w->fd);
    const bool needsCtl = mem->kind() == MemKind::System;
    if (!target || target->type == FileType::Uvm || (target->type == FileType::Ctl) != needsCtl)
        return fail(nv::NV_ERR_INVALID_ARGUMENT);
    if (target->mmap.valid) return fail(nv::NV_ERR_STATE_IN_USE);

    const uint64_t page = pageSize();
    const uint64_t start = p.offset & ~(page - 1);
    const uint64_t end = (p.offset + p.length + page - 1) & ~(page - 1);
    target->mmap.valid = true;
    target->mmap.mem = mem;
    target->mmap.offset = start;
    target->mmap.size = end - start;
    target->mmap.writable = nv::NVOS33_FLAGS_ACCESS.get(p.flags) != nv::NVOS33_FLAGS_ACCESS_READ_ONLY;

    // The "linear address" RM returns is a bus address: BAR1 for video
    // memory, BAR0 for the usermode page, the pages' own for system memory.
    uint64_t linear;
    switch (mem->kind()) {
    case MemKind::Video:
        linear = config::kFbAddress + mem->physAddr() + p.offset;
        break;
    case MemKind::Usermode:
        linear = config::kRegAddress + 0xbb0000 + p.offset;
        break;
    default:
        linear = mem->physAddr() + p.offset;
        break;
    }
    p.pLinearAddress = linear;
    memObj->cpuMappings.push_back(linear);
    p.status = nv::NV_OK;
    return nv::NV_OK;
}

uint32_t Sim::unmapMemory(int fd, SimFile& file, void* data, uint32_t size) {
    if (size != sizeof(nv::NVOS34_PARAMETERS)) return nv::NV_ERR_INVALID_ARGUMENT;
    if (file.type != FileType::Ctl) return nv::NV_ERR_INVALID_ARGUMENT;
    auto* p = static_cast<nv::NVOS34_PARAMETERS*>(data);
    RmClient* c = findClient(p->hClient);
    if (!c || c->ownerFd != clientOwnerFd(fd, file)) {
        p->status = nv::NV_ERR_INVALID_CLIENT;
        return nv::NV_OK;
    }
    RmObject* memObj = findObject(*c, p->hMemory);
    if (!memObj) {
        p->status = nv::NV_ERR_OBJECT_NOT_FOUND;
        return nv::NV_OK;
    }
    auto& maps = memObj->cpuMappings;
    auto it = std::find(maps.begin(), maps.end(), p->pLinearAddress);
    if (it == maps.end()) {
        p->status = nv::NV_ERR_OBJECT_NOT_FOUND;
        return nv::NV_OK;
    }
    maps.erase(it);
    // The pages stay mapped until the process munmap()s them, as with the real driver.
    p->status = nv::NV_OK;
    return nv::NV_OK;
}

// ------------------------------------------------------- GPU DMA mappings

uint32_t Sim::mapMemoryDma(int fd, SimFile& file, void* data, uint32_t size) {
    if (size != sizeof(nv::NVOS46_PARAMETERS)) return nv::NV_ERR_INVALID_ARGUMENT;
    if (file.type != FileType::Ctl) return nv::NV_ERR_INVALID_ARGUMENT;
    auto* p = static_cast<nv::NVOS46_PARAMETERS*>(data);
    auto fail = [&](uint32_t s) {
        p->status = s;
        return nv::NV_OK;
    };
    RmClient* c = findClient(p->hClient);
    if (!c || c->ownerFd != clientOwnerFd(fd, file)) return fail(nv::NV_ERR_INVALID_CLIENT);
    RmObject* dev = findObject(*c, p->hDevice);
    if (!dev) return fail(nv::NV_ERR_OBJECT_NOT_FOUND);
    if (dev->kind != ObjKind::Device && dev->kind != ObjKind::Subdevice) return fail(nv::NV_ERR_INVALID_OBJECT_HANDLE);
    RmObject* dma = findObject(*c, p->hDma);
    if (!dma) return fail(nv::NV_ERR_OBJECT_NOT_FOUND);
    if (dma->kind != ObjKind::VirtualMemory && dma->kind != ObjKind::VaSpace)
        return fail(nv::NV_ERR_INVALID_OBJECT_HANDLE);
    RmObject* memObj = findObject(*c, p->hMemory);
    if (!memObj) return fail(nv::NV_ERR_OBJECT_NOT_FOUND);
    if (memObj->kind != ObjKind::Memory || !memObj->mem) return fail(nv::NV_ERR_INVALID_OBJECT_HANDLE);
    // The mapping GPU's address space. Memory of another GPU: its video
    // memory only, asked for as a peer mapping, over a P2P object's link.
    if (dev->gpu < 0 || dma->gpu != dev->gpu) return fail(nv::NV_ERR_INVALID_OBJECT_HANDLE);
    GpuVaSpace& gva = gpus_[static_cast<size_t>(dev->gpu)]->va;
    if (memObj->gpu != dev->gpu) {
        if (memObj->mem->kind() != MemKind::Video) return fail(nv::NV_ERR_INVALID_OBJECT_HANDLE);
        if (nv::NVOS46_FLAGS_P2P_ENABLE.get(p->flags) != nv::NVOS46_FLAGS_P2P_ENABLE_NOSLI)
            return fail(nv::NV_ERR_INVALID_ARGUMENT);
        if (!p2pLinked(*c, dev->gpu, memObj->gpu)) return fail(nv::NV_ERR_INVALID_STATE);
    }
    const uint64_t memSize = memObj->mem->size();
    if (p->offset >= memSize) return fail(nv::NV_ERR_INVALID_OFFSET);
    const uint64_t length = p->length ? p->length : memSize - p->offset;
    if (length > memSize - p->offset) return fail(nv::NV_ERR_INVALID_LIMIT);
    const uint64_t lo = dma->vaBase, hi = dma->vaLimit;  // inclusive limit
    uint64_t va;
    if (nv::NVOS46_FLAGS_DMA_OFFSET_FIXED.get(p->flags)) {
        va = p->dmaOffset;
        if ((va & 0xfff) || va < lo || va + length - 1 > hi || va + length < va) return fail(nv::NV_ERR_INVALID_OFFSET);
    } else {
        auto found = gva.findFreeDma(length, 64 * 1024, std::max<uint64_t>(lo, 64 * 1024), hi + 1);
        if (!found) return fail(nv::NV_ERR_NO_MEMORY);
        va = *found;
    }
    GpuVaSpace::Mapping m;
    m.size = length;
    m.mem = memObj->mem;
    m.offset = p->offset;
    m.hClient = c->handle;
    m.hMemory = memObj->handle;
    if (!gva.mapDma(va, m)) return fail(nv::NV_ERR_INVALID_ADDRESS);
    p->dmaOffset = va;
    p->status = nv::NV_OK;
    return nv::NV_OK;
}

uint32_t Sim::unmapMemoryDma(int fd, SimFile& file, void* data, uint32_t size) {
    if (size != sizeof(nv::NVOS47_PARAMETERS)) return nv::NV_ERR_INVALID_ARGUMENT;
    if (file.type != FileType::Ctl) return nv::NV_ERR_INVALID_ARGUMENT;
    auto* p = static_cast<nv::NVOS47_PARAMETERS*>(data);
    RmClient* c = findClient(p->hClient);
    if (!c || c->ownerFd != clientOwnerFd(fd, file)) {
        p->status = nv::NV_ERR_INVALID_CLIENT;
        return nv::NV_OK;
    }
    RmObject* dev = findObject(*c, p->hDevice);
    if (!dev || dev->gpu < 0) {
        p->status = nv::NV_ERR_OBJECT_NOT_FOUND;
        return nv::NV_OK;
    }
    GpuVaSpace& va = gpus_[static_cast<size_t>(dev->gpu)]->va;
    p->status = va.unmapDma(p->dmaOffset, c->handle, p->hMemory) ? nv::NV_OK : nv::NV_ERR_OBJECT_NOT_FOUND;
    return nv::NV_OK;
}

}  // namespace nvl::kdrv::sim
