// RM objects: NV_ESC_RM_ALLOC and NV_ESC_RM_FREE. The classes a Hopper GPU
// offers that the sim implements, their parents and allocation parameters
// (src/nvidia/src/kernel/rmapi/resource_list.h), handle rules
// (libraries/resserv: clientValidateNewResourceHandle, RS_COMPATABILITY_MODE)
// and what each object does in the simulated GPU.
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "defs/compute_cbc0.h"
#include "common/align.h"
#include "defs/host_c86f.h"
#include "defs/copy_c8b5.h"
#include "defs/nv_ioctl.h"
#include "defs/nv_status.h"
#include "defs/rm_classes.h"
#include "defs/uvm_ioctl.h"
#include "kdrv/sim/sim_gpu_config.h"
#include "kdrv/sim/sim_state.h"
#include "kdrv/sim/sim_user_memory.h"

namespace nvl::kdrv::sim {
namespace {

constexpr uint32_t kClientHandleBase = 0xc1d00000;  // RM's generated client handles
constexpr uint32_t kObjectHandleBase = 0xcaf00000;  // RS_UNIQUE_HANDLE_BASE
constexpr uint32_t kHandleRange = 0x80000;          // RS_UNIQUE_HANDLE_RANGE
constexpr uint32_t kFwHandleBase = 0xc9f00000;      // RS_FW_UNIQUE_HANDLE_BASE: not for clients to pick

}  // namespace

bool handleRestricted(uint32_t h) { return h >= kFwHandleBase && h - kFwHandleBase < kHandleRange; }

namespace {

struct ClassInfo {
    uint32_t hClass;
    ObjKind kind;
    std::initializer_list<ObjKind> parents;  // empty: any parent
    uint32_t paramsSize;
    bool paramsRequired;
};

const ClassInfo* classInfo(uint32_t hClass) {
    static const ClassInfo table[] = {
        {nv::NV01_DEVICE_0, ObjKind::Device, {ObjKind::Client}, sizeof(nv::NV0080_ALLOC_PARAMETERS), false},
        {nv::NV20_SUBDEVICE_0, ObjKind::Subdevice, {ObjKind::Device}, sizeof(nv::NV2080_ALLOC_PARAMETERS), false},
        {nv::HOPPER_USERMODE_A, ObjKind::Usermode, {ObjKind::Subdevice}, sizeof(nv::NV_HOPPER_USERMODE_A_PARAMS), false},
        {nv::FERMI_VASPACE_A, ObjKind::VaSpace, {ObjKind::Device, ObjKind::Subdevice},
         sizeof(nv::NV_VASPACE_ALLOCATION_PARAMETERS), true},
        {nv::NV01_MEMORY_VIRTUAL, ObjKind::VirtualMemory, {ObjKind::Device},
         sizeof(nv::NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS), true},
        {nv::NV01_MEMORY_LOCAL_USER, ObjKind::Memory, {ObjKind::Device, ObjKind::Subdevice},
         sizeof(nv::NV_MEMORY_ALLOCATION_PARAMS), true},
        {nv::NV01_MEMORY_SYSTEM, ObjKind::Memory, {ObjKind::Device}, sizeof(nv::NV_MEMORY_ALLOCATION_PARAMS), true},
        {nv::KEPLER_CHANNEL_GROUP_A, ObjKind::ChannelGroup, {ObjKind::Device},
         sizeof(nv::NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS), true},
        {nv::FERMI_CONTEXT_SHARE_A, ObjKind::ContextShare, {ObjKind::ChannelGroup},
         sizeof(nv::NV_CTXSHARE_ALLOCATION_PARAMETERS), true},
        {nv::HOPPER_CHANNEL_GPFIFO_A, ObjKind::Channel, {ObjKind::Device, ObjKind::ChannelGroup},
         sizeof(nv::NV_CHANNEL_ALLOC_PARAMS), true},
        {nv::HOPPER_COMPUTE_A, ObjKind::Engine, {ObjKind::Channel}, sizeof(nv::NV_GR_ALLOCATION_PARAMETERS), false},
        {nv::HOPPER_DMA_COPY_A, ObjKind::Engine, {ObjKind::Channel}, sizeof(nv::NVB0B5_ALLOCATION_PARAMETERS), false},
        {nv::NV01_EVENT_OS_EVENT, ObjKind::Event, {}, sizeof(nv::NV0005_ALLOC_PARAMETERS), true},
        {nv::GT200_DEBUGGER, ObjKind::Debugger, {ObjKind::Device}, sizeof(nv::NV83DE_ALLOC_PARAMETERS), true},
        {nv::NV50_P2P, ObjKind::P2p, {ObjKind::Client}, sizeof(nv::NV503B_ALLOC_PARAMETERS), true},
    };
    for (const ClassInfo& c : table)
        if (c.hClass == hClass) return &c;
    return nullptr;
}

bool isPowerOfTwo(uint64_t v) { return v && !(v & (v - 1)); }


}  // namespace

uint32_t Sim::newHandle(RmClient& c) {
    for (uint32_t i = 0; i < kHandleRange; ++i) {
        const uint32_t h = kObjectHandleBase + (c.handleSeq++ % kHandleRange);
        if (!c.objects.count(h) && h != c.handle) return h;
    }
    return 0;
}

// ------------------------------------------------------------ NV_ESC_RM_ALLOC

uint32_t Sim::rmAlloc(int fd, SimFile& file, void* data, uint32_t size) {
    const bool access = size == sizeof(nv::NVOS64_PARAMETERS);
    if (size != sizeof(nv::NVOS21_PARAMETERS) && !access) return nv::NV_ERR_INVALID_ARGUMENT;
    // NVOS21 and NVOS64 agree up to pAllocParms.
    auto* p = static_cast<nv::NVOS21_PARAMETERS*>(data);
    uint32_t& status = access ? static_cast<nv::NVOS64_PARAMETERS*>(data)->status : p->status;

    const bool isClient =
        p->hClass == nv::NV01_ROOT || p->hClass == nv::NV01_ROOT_CLIENT || p->hClass == nv::NV01_ROOT_NON_PRIV;
    const bool isEvent = p->hClass == nv::NV01_EVENT || p->hClass == nv::NV01_EVENT_OS_EVENT;
    if (!isEvent && file.type != FileType::Ctl) return nv::NV_ERR_INVALID_ARGUMENT;  // NV_CTL_DEVICE_ONLY

    if (isClient) {
        p->hClass = nv::NV01_ROOT_CLIENT;  // user space always gets a _CLIENT
        if (p->pAllocParms) {
            uint32_t requested = 0;
            if (!copyFromUser(&requested, p->pAllocParms, sizeof requested)) {
                status = nv::NV_ERR_INVALID_ADDRESS;
                return nv::NV_OK;
            }
        }
        uint32_t h = p->hObjectNew;
        if (h == 0) {
            do {
                h = kClientHandleBase + (clientSeq_++ % kHandleRange);
            } while (clients_.count(h));
        } else if (clients_.count(h)) {
            status = nv::NV_ERR_INSERT_DUPLICATE_NAME;
            return nv::NV_OK;
        }
        RmClient& c = clients_[h];
        c.handle = h;
        c.ownerFd = clientOwnerFd(fd, file);
        RmObject& obj = c.objects[h];
        obj.handle = h;
        obj.hClass = nv::NV01_ROOT_CLIENT;
        obj.kind = ObjKind::Client;
        p->hObjectNew = h;
        status = nv::NV_OK;
        return nv::NV_OK;
    }

    RmClient* c = findClient(p->hRoot);
    if (!c) {
        status = nv::NV_ERR_INVALID_OBJECT_HANDLE;
        return nv::NV_OK;
    }
    if (c->ownerFd != clientOwnerFd(fd, file)) {
        status = nv::NV_ERR_INVALID_CLIENT;
        return nv::NV_OK;
    }
    uint32_t h = p->hObjectNew;
    status = allocObject(*c, p->hObjectParent, &h, p->hClass, p->pAllocParms);
    if (status == nv::NV_OK) p->hObjectNew = h;
    return nv::NV_OK;
}

uint32_t Sim::allocObject(RmClient& c, uint32_t hParent, uint32_t* hObject, uint32_t hClass, uint64_t pParams) {
    const ClassInfo* info = classInfo(hClass);
    if (!info) return nv::NV_ERR_INVALID_CLASS;  // unknown, or not offered by this GPU

    // Parameters: the size comes from the class, not from the caller.
    alignas(16) uint8_t params[sizeof(nv::NV_CHANNEL_ALLOC_PARAMS) + sizeof(nv::NV_MEMORY_ALLOCATION_PARAMS)] = {};
    static_assert(sizeof params >= sizeof(nv::NV_CHANNEL_ALLOC_PARAMS));
    const bool haveParams = pParams != 0;
    if (info->paramsRequired && !haveParams) return nv::NV_ERR_INVALID_ARGUMENT;
    if (haveParams && !copyFromUser(params, pParams, info->paramsSize)) return nv::NV_ERR_INVALID_ADDRESS;

    // Parent.
    RmObject* parent = findObject(c, hParent ? hParent : c.handle);
    if (!parent) return nv::NV_ERR_OBJECT_NOT_FOUND;
    if (info->parents.size() &&
        std::find(info->parents.begin(), info->parents.end(), parent->kind) == info->parents.end())
        return nv::NV_ERR_INVALID_OBJECT_PARENT;

    // Handle.
    uint32_t h = *hObject;
    if (h == 0) {
        h = newHandle(c);
        if (h == 0) return nv::NV_ERR_INSUFFICIENT_RESOURCES;
    } else if (h == c.handle || handleRestricted(h)) {
        return nv::NV_ERR_INVALID_OBJECT_HANDLE;
    } else if (c.objects.count(h)) {
        return nv::NV_ERR_INSERT_DUPLICATE_NAME;
    }

    RmObject obj;
    obj.handle = h;
    obj.hClass = hClass;
    obj.hParent = parent->handle;
    obj.kind = info->kind;
    obj.gpu = parent->gpu;
    const uint32_t hParentObj = parent->handle;

    switch (info->kind) {
    case ObjKind::Device: {
        const auto* dp = reinterpret_cast<const nv::NV0080_ALLOC_PARAMETERS*>(params);
        const uint32_t instance = haveParams ? dp->deviceId : 0;
        if (instance >= gpus_.size())
            return instance < nv::NV_MAX_DEVICES ? nv::NV_ERR_INVALID_DEVICE : nv::NV_ERR_INVALID_ARGUMENT;
        obj.gpu = static_cast<int>(instance);
        break;
    }
    case ObjKind::P2p: {
        // Two subdevices of different GPUs that can reach each other.
        const auto* pp = reinterpret_cast<const nv::NV503B_ALLOC_PARAMETERS*>(params);
        RmObject* a = findObject(c, pp->hSubDevice);
        RmObject* b = findObject(c, pp->hPeerSubDevice);
        if (!a || !b || a->kind != ObjKind::Subdevice || b->kind != ObjKind::Subdevice)
            return nv::NV_ERR_INVALID_OBJECT_HANDLE;
        if (a->gpu == b->gpu || !p2p_) return nv::NV_ERR_NOT_SUPPORTED;
        obj.gpu = a->gpu;
        obj.peerGpu = b->gpu;
        break;
    }
    case ObjKind::Subdevice: {
        const auto* sp = reinterpret_cast<const nv::NV2080_ALLOC_PARAMETERS*>(params);
        if (haveParams && sp->subDeviceId != 0)
            return sp->subDeviceId < nv::NV_MAX_SUBDEVICES ? nv::NV_ERR_INVALID_DEVICE : nv::NV_ERR_INVALID_ARGUMENT;
        break;
    }
    case ObjKind::Usermode: {
        // usrmodeConstruct: a privileged page needs the BAR1 mapping and a
        // kernel caller; bBar1Mapping alone is open to user space.
        const auto* up = reinterpret_cast<const nv::NV_HOPPER_USERMODE_A_PARAMS*>(params);
        if (haveParams && up->bPriv) return up->bBar1Mapping ? nv::NV_ERR_INSUFFICIENT_PERMISSIONS : nv::NV_ERR_INVALID_PARAMETER;
        obj.doorbellViaBar1 = haveParams && up->bBar1Mapping;
        obj.mem = Backing::fromPool(MemKind::Usermode, *sysmem_, config::kUsermodeSize, config::kUsermodeSize);
        if (!obj.mem) return nv::NV_ERR_NO_MEMORY;
        break;
    }
    case ObjKind::VaSpace: {
        auto* vp = reinterpret_cast<nv::NV_VASPACE_ALLOCATION_PARAMETERS*>(params);
        obj.vaBase = vp->vaBase;
        obj.vaLimit = vp->vaSize ? vp->vaBase + vp->vaSize - 1 : (1ull << 57) - 1;
        break;
    }
    case ObjKind::VirtualMemory: {
        auto* vp = reinterpret_cast<nv::NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS*>(params);
        obj.vaBase = vp->offset;
        obj.vaLimit = vp->limit ? vp->limit : (1ull << 57) - 1;
        if (obj.vaLimit < obj.vaBase) return nv::NV_ERR_INVALID_LIMIT;
        break;
    }
    case ObjKind::Memory: {
        auto* mp = reinterpret_cast<nv::NV_MEMORY_ALLOCATION_PARAMS*>(params);
        const bool video = hClass == nv::NV01_MEMORY_LOCAL_USER;
        if (mp->flags & nv::NVOS32_ALLOC_FLAGS_VIRTUAL) return nv::NV_ERR_NOT_SUPPORTED;
        if (mp->size == 0) return nv::NV_ERR_INVALID_ARGUMENT;
        // Page size: attr PAGE_SIZE (HUGE: attr2 says 2 MiB or 512 MiB).
        uint64_t page = 4096;
        switch (nv::NVOS32_ATTR_PAGE_SIZE.get(mp->attr)) {
        case nv::NVOS32_ATTR_PAGE_SIZE_BIG:
            page = 64 * 1024;
            break;
        case nv::NVOS32_ATTR_PAGE_SIZE_HUGE:
            page = nv::NVOS32_ATTR2_PAGE_SIZE_HUGE.get(mp->attr2) == nv::NVOS32_ATTR2_PAGE_SIZE_HUGE_512MB
                       ? (512ull << 20)
                       : (2ull << 20);
            break;
        case nv::NVOS32_ATTR_PAGE_SIZE_DEFAULT:
            page = (video && mp->size >= 64 * 1024) ? 64 * 1024 : 4096;
            break;
        default:
            break;
        }
        uint64_t align = page;
        if (mp->flags & (nv::NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE | nv::NVOS32_ALLOC_FLAGS_ALIGNMENT_HINT)) {
            if (mp->alignment && !isPowerOfTwo(mp->alignment)) return nv::NV_ERR_INVALID_ARGUMENT;
            align = std::max<uint64_t>(align, mp->alignment);
        }
        const uint64_t bytes = alignUp(mp->size, page);
        if (bytes < mp->size) return nv::NV_ERR_NO_MEMORY;
        if (video && obj.gpu < 0) return nv::NV_ERR_INVALID_OBJECT_PARENT;
        obj.mem = Backing::fromPool(video ? MemKind::Video : MemKind::System,
                                    video ? *gpus_[static_cast<size_t>(obj.gpu)]->vidmem : *sysmem_, bytes, align);
        if (!obj.mem) return nv::NV_ERR_NO_MEMORY;
        // What RM reports back: the size it allocated, where, and the resolved attributes.
        mp->size = bytes;
        mp->limit = bytes - 1;
        mp->offset = obj.mem->physAddr();
        if (nv::NVOS32_ATTR_PAGE_SIZE.get(mp->attr) == nv::NVOS32_ATTR_PAGE_SIZE_DEFAULT)
            mp->attr = (mp->attr & ~static_cast<uint32_t>(nv::NVOS32_ATTR_PAGE_SIZE.mask())) |
                       nv::NVOS32_ATTR_PAGE_SIZE.value(page == 4096 ? nv::NVOS32_ATTR_PAGE_SIZE_4KB
                                                                     : nv::NVOS32_ATTR_PAGE_SIZE_BIG);
        if (nv::NVOS32_ATTR_PHYSICALITY.get(mp->attr) != nv::NVOS32_ATTR_PHYSICALITY_NONCONTIGUOUS)
            mp->attr = (mp->attr & ~static_cast<uint32_t>(nv::NVOS32_ATTR_PHYSICALITY.mask())) |
                       nv::NVOS32_ATTR_PHYSICALITY.value(nv::NVOS32_ATTR_PHYSICALITY_CONTIGUOUS);
        break;
    }
    case ObjKind::ChannelGroup: {
        auto* gp = reinterpret_cast<nv::NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS*>(params);
        const uint32_t e = gp->engineType ? gp->engineType : nv::NV2080_ENGINE_TYPE_GRAPHICS;
        if (!nv::NV2080_ENGINE_TYPE_IS_GR(e) && !nv::NV2080_ENGINE_TYPE_IS_COPY(e)) return nv::NV_ERR_INVALID_ARGUMENT;
        obj.engineType = e;
        break;
    }
    case ObjKind::ContextShare: {
        auto* cp = reinterpret_cast<nv::NV_CTXSHARE_ALLOCATION_PARAMETERS*>(params);
        if (cp->hVASpace) {
            RmObject* vas = findObject(c, cp->hVASpace);
            if (!vas) return nv::NV_ERR_OBJECT_NOT_FOUND;
            if (vas->kind != ObjKind::VaSpace) return nv::NV_ERR_INVALID_OBJECT_HANDLE;
        }
        obj.hVaSpace = cp->hVASpace;
        obj.subctxId = nextSubctx_++ % config::kMaxSubcontexts;
        cp->subctxId = obj.subctxId;
        break;
    }
    case ObjKind::Channel: {
        auto* cp = reinterpret_cast<nv::NV_CHANNEL_ALLOC_PARAMS*>(params);
        auto ch = std::make_shared<Channel>();
        // Memory the channel reads: error notifier, USERD.
        auto memoryOf = [&](uint32_t handle, std::shared_ptr<Backing>* out) -> uint32_t {
            RmObject* m = findObject(c, handle);
            if (!m) return nv::NV_ERR_OBJECT_NOT_FOUND;
            if (m->kind != ObjKind::Memory || !m->mem) return nv::NV_ERR_INVALID_OBJECT_HANDLE;
            *out = m->mem;
            return nv::NV_OK;
        };
        uint32_t s;
        if (cp->hObjectError && (s = memoryOf(cp->hObjectError, &ch->errorNotifier)) != nv::NV_OK) return s;
        if (ch->errorNotifier && ch->errorNotifier->size() < sizeof(nv::NvNotification))
            return nv::NV_ERR_INVALID_ARGUMENT;
        if (cp->hObjectBuffer && !findObject(c, cp->hObjectBuffer)) return nv::NV_ERR_OBJECT_NOT_FOUND;
        if (!isPowerOfTwo(cp->gpFifoEntries) || cp->gpFifoEntries < 2) return nv::NV_ERR_INVALID_ARGUMENT;
        if (cp->gpFifoOffset & 7) return nv::NV_ERR_INVALID_ARGUMENT;
        if (cp->hUserdMemory[0]) {
            if ((s = memoryOf(cp->hUserdMemory[0], &ch->userd)) != nv::NV_OK) return s;
            ch->userdOffset = cp->userdOffset[0];
            if (ch->userdOffset % config::kUserdSize ||
                ch->userdOffset + config::kUserdSize > ch->userd->size())
                return nv::NV_ERR_INVALID_ARGUMENT;
        } else {
            // RM allocates USERD (in video memory); the client maps it
            // through the channel object (a GPU fd, like BAR1).
            ch->userd = Backing::fromPool(MemKind::Video, *gpus_[static_cast<size_t>(obj.gpu)]->vidmem, 4096, 4096);
            if (!ch->userd) return nv::NV_ERR_NO_MEMORY;
            obj.mem = ch->userd;
        }
        RmObject* group = parent->kind == ObjKind::ChannelGroup ? parent : nullptr;
        if (cp->hContextShare) {
            RmObject* cs = findObject(c, cp->hContextShare);
            if (!cs) return nv::NV_ERR_OBJECT_NOT_FOUND;
            if (cs->kind != ObjKind::ContextShare || !group || cs->hParent != group->handle)
                return nv::NV_ERR_INVALID_OBJECT_HANDLE;
        }
        if (cp->engineType && !nv::NV2080_ENGINE_TYPE_IS_VALID(cp->engineType)) return nv::NV_ERR_INVALID_ARGUMENT;
        // Channel id / work-submit token.
        uint32_t id = config::kFirstWorkSubmitToken;
        while (channelIds_.count(id)) ++id;
        if (id >= config::kFirstWorkSubmitToken + config::kMaxChannels) return nv::NV_ERR_NO_FREE_FIFOS;
        channelIds_.insert(id);
        ch->hClient = c.handle;
        ch->hChannel = h;
        ch->va = &gpus_[static_cast<size_t>(obj.gpu)]->va;
        ch->hGroup = group ? group->handle : 0;
        ch->workSubmitToken = id;
        ch->engineType = cp->engineType ? cp->engineType : (group ? group->engineType : 0);
        ch->gpfifoVa = cp->gpFifoOffset;
        ch->gpfifoEntries = cp->gpFifoEntries;
        ch->scheduled = group ? group->scheduled : false;
        ch->gpGet = 0;
        ch->userd->store32(ch->userdOffset + offsetof(nv::Nvc86fControl, GPGet), 0);
        obj.channel = ch;
        gpu_.addChannel(std::move(ch));
        break;
    }
    case ObjKind::Engine:
        parent->channel->engineClasses.push_back(hClass);
        break;
    case ObjKind::Event: {
        auto* ep = reinterpret_cast<nv::NV0005_ALLOC_PARAMETERS*>(params);
        RmClient* src = findClient(ep->hParentClient ? ep->hParentClient : c.handle);
        if (!src) return nv::NV_ERR_INVALID_CLIENT;
        if (!findObject(*src, ep->hSrcResource)) return nv::NV_ERR_OBJECT_NOT_FOUND;
        if (ep->hClass != nv::NV01_EVENT_OS_EVENT) return nv::NV_ERR_INVALID_CLASS;
        obj.eventSource = ep->hSrcResource;
        obj.notifyIndex = ep->notifyIndex;
        obj.eventData = ep->data;
        break;
    }
    case ObjKind::Debugger:
    case ObjKind::Client:
        break;
    }

    // Copy the parameters back, as RM does on success.
    if (haveParams && !copyToUser(pParams, params, info->paramsSize)) {
        if (obj.channel) {
            gpu_.removeChannel(obj.channel.get());
            channelIds_.erase(obj.channel->workSubmitToken);
        }
        if (info->kind == ObjKind::Engine) {
            auto& ec = parent->channel->engineClasses;
            ec.erase(std::find(ec.begin(), ec.end(), hClass));
        }
        return nv::NV_ERR_INVALID_ADDRESS;
    }
    if (obj.kind == ObjKind::Usermode) gpu_.addDoorbell(obj.mem, obj.doorbellViaBar1);
    c.objects[h] = std::move(obj);
    c.objects[hParentObj].children.push_back(h);
    *hObject = h;
    return nv::NV_OK;
}

// ------------------------------------------------------------- NV_ESC_RM_FREE

uint32_t Sim::rmFree(int fd, SimFile& file, void* data, uint32_t size) {
    if (size != sizeof(nv::NVOS00_PARAMETERS)) return nv::NV_ERR_INVALID_ARGUMENT;
    if (file.type != FileType::Ctl) return nv::NV_ERR_INVALID_ARGUMENT;
    auto* p = static_cast<nv::NVOS00_PARAMETERS*>(data);
    RmClient* c = findClient(p->hRoot);
    if (!c) {
        p->status = nv::NV_ERR_INVALID_OBJECT_HANDLE;
        return nv::NV_OK;
    }
    if (c->ownerFd != clientOwnerFd(fd, file)) {
        p->status = nv::NV_ERR_INVALID_CLIENT;
        return nv::NV_OK;
    }
    if (p->hObjectOld == p->hRoot) {
        freeClient(p->hRoot);
    } else if (c->objects.count(p->hObjectOld)) {
        freeObject(*c, p->hObjectOld);
    }
    // Freeing a handle that does not exist succeeds (RS_COMPATABILITY_MODE).
    p->status = nv::NV_OK;
    return nv::NV_OK;
}

void Sim::freeObject(RmClient& c, uint32_t handle) {
    auto it = c.objects.find(handle);
    if (it == c.objects.end()) return;
    // Children first, newest first.
    const std::vector<uint32_t> children = it->second.children;
    for (auto ci = children.rbegin(); ci != children.rend(); ++ci) freeObject(c, *ci);
    it = c.objects.find(handle);
    if (it == c.objects.end()) return;
    RmObject& obj = it->second;
    switch (obj.kind) {
    case ObjKind::Channel:
        if (obj.channel) {
            gpu_.removeChannel(obj.channel.get());
            channelIds_.erase(obj.channel->workSubmitToken);
        }
        break;
    case ObjKind::Usermode:
        gpu_.removeDoorbell(obj.mem.get());
        break;
    case ObjKind::Memory:
        // RM unmaps its own GPU mappings of the memory (on every GPU, peers
        // included); UVM's stay (UVM holds a duplicate).
        for (auto& g : gpus_) g->va.unmapDmaOfMemory(c.handle, handle);
        break;
    case ObjKind::Engine:
        if (RmObject* parent = findObject(c, obj.hParent); parent && parent->channel) {
            Channel& ch = *parent->channel;
            auto e = std::find(ch.engineClasses.begin(), ch.engineClasses.end(), obj.hClass);
            if (e != ch.engineClasses.end()) ch.engineClasses.erase(e);
            if (!ch.hasEngineClass(obj.hClass))
                for (auto& s : ch.subchClass)
                    if (s == obj.hClass) s = 0;
        }
        break;
    default:
        break;
    }
    if (RmObject* parent = findObject(c, obj.hParent); parent && parent != &obj) {
        auto& pc = parent->children;
        pc.erase(std::remove(pc.begin(), pc.end(), handle), pc.end());
    }
    c.objects.erase(it);
}

void Sim::freeClient(uint32_t hClient) {
    RmClient* c = findClient(hClient);
    if (!c) return;
    const std::vector<uint32_t> children = c->objects[hClient].children;
    for (auto ci = children.rbegin(); ci != children.rend(); ++ci) freeObject(*c, *ci);
    clients_.erase(hClient);
    // rm_client_free_os_events
    for (auto it = osEvents_.begin(); it != osEvents_.end();)
        it = it->first.first == hClient ? osEvents_.erase(it) : std::next(it);
}

// ------------------------------------------------------------------ events

void Sim::signalNonStall(Channel& ch) {
    RmClient* c = findClient(ch.hClient);
    if (!c) return;
    for (auto& [h, obj] : c->objects) {
        if (obj.kind != ObjKind::Event) continue;
        RmObject* src = findObject(*c, obj.eventSource);
        const bool related = obj.eventSource == ch.hChannel || (ch.hGroup && obj.eventSource == ch.hGroup) ||
                             (src && (src->kind == ObjKind::Device || src->kind == ObjKind::Subdevice));
        if (!related) continue;
        ++obj.eventsSignalled;
        auto os = osEvents_.find(std::make_pair(c->handle, static_cast<uint32_t>(obj.eventData)));
        if (os != osEvents_.end()) ++os->second;
    }
}

}  // namespace nvl::kdrv::sim
