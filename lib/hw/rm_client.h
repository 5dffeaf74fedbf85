// The RM client: one root client per process on /dev/nvidiactl, through
// which every RM object is allocated, controlled and freed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "common/status.h"
#include "defs/nv_ioctl.h"
#include "kdrv/kdrv.h"

namespace nvl::hw {

class RmClient {
public:
    // Opens /dev/nvidiactl and allocates the root client.
    static Result<std::unique_ptr<RmClient>> open();
    ~RmClient();
    RmClient(const RmClient&) = delete;
    RmClient& operator=(const RmClient&) = delete;

    int ctlFd() const { return ctl_.get(); }
    uint32_t handle() const { return hClient_; }

    // NV_ESC_RM_ALLOC. Handles are chosen by us (see newHandle()).
    Result<uint32_t> alloc(uint32_t hParent, uint32_t hClass, void* params, uint32_t paramsSize);
    template <class P>
    Result<uint32_t> alloc(uint32_t hParent, uint32_t hClass, P& params) {
        return alloc(hParent, hClass, &params, sizeof params);
    }
    Result<uint32_t> alloc(uint32_t hParent, uint32_t hClass) { return alloc(hParent, hClass, nullptr, 0); }

    // NV_ESC_RM_FREE (frees the object's children too).
    Status free(uint32_t hParent, uint32_t hObject);

    // NV_ESC_RM_CONTROL.
    Status control(uint32_t hObject, uint32_t cmd, void* params, uint32_t paramsSize);
    template <class P>
    Status control(uint32_t hObject, uint32_t cmd, P& params) {
        return control(hObject, cmd, &params, sizeof params);
    }

    // NV_ESC_CARD_INFO: the GPUs the driver knows (valid entries only).
    Result<std::vector<nv::nv_ioctl_card_info_t>> cardInfo();

    // Opens /dev/nvidia<minor> and registers it with our control fd.
    Result<kdrv::Fd> openDevice(uint32_t minor);

    // NV_ESC_RM_ALLOC_MEMORY with NV01_MEMORY_SYSTEM_OS_DESCRIPTOR: makes
    // existing host memory [addr, addr+size) an RM memory object (pins it).
    Result<uint32_t> allocOsDescriptor(int deviceFd, uint32_t hDevice, void* addr, size_t size,
                                       uint32_t flags);

    // NV_ESC_RM_MAP_MEMORY on a fresh fd, then mmap: a CPU mapping of the
    // memory object, at 'target' when given (MAP_FIXED). The fd is one of
    // /dev/nvidia<minor> for video memory and usermode objects, and of
    // /dev/nvidiactl for system memory (RM wants it so). It stays with the
    // mapping: the driver keeps the mapping's context on it.
    struct CpuMapping {
        kdrv::Fd fd;
        kdrv::Mapping map;
    };
    enum class MapVia { Device, Control };
    Result<CpuMapping> mapMemory(MapVia via, uint32_t minor, uint32_t hDevice, uint32_t hMemory, uint64_t offset,
                                 size_t length, uint32_t flags, void* target);

    // NV_ESC_RM_MAP_MEMORY_DMA at a fixed GPU virtual address of hDma's
    // VA space, and its inverse.
    Status mapMemoryDma(uint32_t hDevice, uint32_t hDma, uint32_t hMemory, uint64_t length, uint32_t flags,
                        uint64_t gpuVa);
    Status unmapMemoryDma(uint32_t hDevice, uint32_t hDma, uint32_t hMemory, uint64_t gpuVa, uint64_t length);

    uint32_t newHandle() { return nextHandle_.fetch_add(1, std::memory_order_relaxed); }

private:
    RmClient() = default;

    kdrv::Fd ctl_;
    uint32_t hClient_ = 0;
    // Our handles live in a range of their own, away from RM's generated ones.
    std::atomic<uint32_t> nextHandle_{0x4e560001};
};

// An RM object freed when it goes out of scope.
class RmObject {
public:
    RmObject() = default;
    RmObject(RmClient* rm, uint32_t hParent, uint32_t handle) : rm_(rm), parent_(hParent), handle_(handle) {}
    RmObject(const RmObject&) = delete;
    RmObject& operator=(const RmObject&) = delete;
    RmObject(RmObject&& o) noexcept
        : rm_(std::exchange(o.rm_, nullptr)), parent_(o.parent_), handle_(std::exchange(o.handle_, 0)) {}
    RmObject& operator=(RmObject&& o) noexcept {
        if (this != &o) {
            reset();
            rm_ = std::exchange(o.rm_, nullptr);
            parent_ = o.parent_;
            handle_ = std::exchange(o.handle_, 0);
        }
        return *this;
    }
    ~RmObject() { reset(); }

    uint32_t handle() const { return handle_; }
    explicit operator bool() const { return handle_ != 0; }
    void reset() {
        if (rm_ && handle_) (void)rm_->free(parent_, handle_);
        rm_ = nullptr;
        handle_ = 0;
    }

private:
    RmClient* rm_ = nullptr;
    uint32_t parent_ = 0;
    uint32_t handle_ = 0;
};

// Allocates an RM object owned by an RmObject.
template <class P>
Result<RmObject> allocObject(RmClient& rm, uint32_t hParent, uint32_t hClass, P* params) {
    auto h = params ? rm.alloc(hParent, hClass, params, sizeof *params) : rm.alloc(hParent, hClass);
    if (!h) return h.status();
    return RmObject(&rm, hParent, *h);
}
inline Result<RmObject> allocObject(RmClient& rm, uint32_t hParent, uint32_t hClass) {
    return allocObject<int>(rm, hParent, hClass, nullptr);
}

}  // namespace nvl::hw
