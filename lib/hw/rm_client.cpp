#include "hw/rm_client.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdio>

#include "common/trace.h"
#include "defs/nv_status.h"
#include "defs/rm_classes.h"
#include "hw/cpu.h"
#include "hw/driver_error.h"

namespace nvl::hw {
namespace {

// Duration of the last escape, for NVLITE_TRACE=2.
thread_local double lastUs = 0;

template <class P>
int escape(int fd, uint32_t nr, P& params) {
    const uint64_t t0 = trace::driver() ? monotonicNs() : 0;
    int rc = kdrv::get().ioctl(fd, nv::nvIoctlRequest(nr, sizeof params), &params);
    if (t0) lastUs = static_cast<double>(monotonicNs() - t0) / 1000.0;
    return rc;
}

}  // namespace

Result<std::unique_ptr<RmClient>> RmClient::open() {
    std::unique_ptr<RmClient> rm(new RmClient());
    int fd = kdrv::get().open("/dev/nvidiactl", O_RDWR);
    if (fd < 0) return osError(fd, "open /dev/nvidiactl");
    rm->ctl_ = kdrv::Fd(fd);

    nv::NVOS21_PARAMETERS p{};
    p.hRoot = 0;
    p.hObjectParent = 0;
    p.hObjectNew = 0;
    p.hClass = nv::NV01_ROOT_CLIENT;
    int rc = escape(fd, nv::NV_ESC_RM_ALLOC, p);
    if (rc < 0) return osError(rc, "NV_ESC_RM_ALLOC(NV01_ROOT_CLIENT)");
    if (p.status != nv::NV_OK) return rmError(p.status, "NV_ESC_RM_ALLOC(NV01_ROOT_CLIENT)");
    rm->hClient_ = p.hObjectNew;
    return rm;
}

RmClient::~RmClient() {
    if (hClient_) (void)free(0, hClient_);
}

Result<uint32_t> RmClient::alloc(uint32_t hParent, uint32_t hClass, void* params, uint32_t paramsSize) {
    nv::NVOS21_PARAMETERS p{};
    p.hRoot = hClient_;
    p.hObjectParent = hParent;
    p.hObjectNew = newHandle();
    p.hClass = hClass;
    p.pAllocParms = reinterpret_cast<uint64_t>(params);
    p.paramsSize = paramsSize;
    int rc = escape(ctl_.get(), nv::NV_ESC_RM_ALLOC, p);
    if (trace::driver())
        trace::print("RM_ALLOC parent=0x%x class=0x%x -> handle=0x%x rc=%d status=%s (%.0f us)", hParent, hClass,
                     p.hObjectNew, rc, nv::nvStatusName(p.status) ? nv::nvStatusName(p.status) : "?", lastUs);
    if (rc < 0) return osError(rc, "NV_ESC_RM_ALLOC");
    if (p.status != nv::NV_OK) return rmError(p.status, "NV_ESC_RM_ALLOC");
    return p.hObjectNew;
}

Status RmClient::free(uint32_t hParent, uint32_t hObject) {
    nv::NVOS00_PARAMETERS p{};
    p.hRoot = hClient_;
    p.hObjectParent = hParent;
    p.hObjectOld = hObject;
    int rc = escape(ctl_.get(), nv::NV_ESC_RM_FREE, p);
    if (trace::driver()) trace::print("RM_FREE 0x%x rc=%d status=0x%x (%.0f us)", hObject, rc, p.status, lastUs);
    if (rc < 0) return osError(rc, "NV_ESC_RM_FREE");
    if (p.status != nv::NV_OK) return rmError(p.status, "NV_ESC_RM_FREE");
    return kOk;
}

Status RmClient::control(uint32_t hObject, uint32_t cmd, void* params, uint32_t paramsSize) {
    nv::NVOS54_PARAMETERS p{};
    p.hClient = hClient_;
    p.hObject = hObject;
    p.cmd = cmd;
    p.params = reinterpret_cast<uint64_t>(params);
    p.paramsSize = paramsSize;
    int rc = escape(ctl_.get(), nv::NV_ESC_RM_CONTROL, p);
    if (trace::driver())
        trace::print("RM_CONTROL obj=0x%x cmd=0x%x rc=%d status=%s (%.0f us)", hObject, cmd, rc,
                     nv::nvStatusName(p.status) ? nv::nvStatusName(p.status) : "?", lastUs);
    if (rc < 0) return osError(rc, "NV_ESC_RM_CONTROL");
    if (p.status != nv::NV_OK) return rmError(p.status, "NV_ESC_RM_CONTROL");
    return kOk;
}

Result<std::vector<nv::nv_ioctl_card_info_t>> RmClient::cardInfo() {
    // The driver fills as many entries as the buffer holds; 32 is its device limit.
    std::vector<nv::nv_ioctl_card_info_t> cards(32);
    int rc = kdrv::get().ioctl(ctl_.get(),
                               nv::nvIoctlRequest(nv::NV_ESC_CARD_INFO,
                                                  sizeof(nv::nv_ioctl_card_info_t) * cards.size()),
                               cards.data());
    if (rc < 0) return osError(rc, "NV_ESC_CARD_INFO");
    std::vector<nv::nv_ioctl_card_info_t> valid;
    for (const auto& c : cards)
        if (c.valid) valid.push_back(c);
    return valid;
}

Result<kdrv::Fd> RmClient::openDevice(uint32_t minor) {
    char path[32];
    std::snprintf(path, sizeof path, "/dev/nvidia%u", minor);
    int fd = kdrv::get().open(path, O_RDWR);
    if (fd < 0) return osError(fd, "open /dev/nvidiaN");
    kdrv::Fd owned(fd);
    nv::nv_ioctl_register_fd_t reg{};
    reg.ctl_fd = ctl_.get();
    int rc = escape(fd, nv::NV_ESC_REGISTER_FD, reg);
    if (rc < 0) return osError(rc, "NV_ESC_REGISTER_FD");
    return owned;
}

Result<uint32_t> RmClient::allocOsDescriptor(int deviceFd, uint32_t hDevice, void* addr, size_t size,
                                             uint32_t flags) {
    nv::nv_ioctl_nvos02_parameters_with_fd p{};
    p.params.hRoot = hClient_;
    p.params.hObjectParent = hDevice;
    p.params.hObjectNew = newHandle();
    p.params.hClass = nv::NV01_MEMORY_SYSTEM_OS_DESCRIPTOR;
    p.params.flags = flags;
    p.params.pMemory = reinterpret_cast<uint64_t>(addr);
    p.params.limit = size - 1;
    p.fd = -1;
    int rc = escape(deviceFd, nv::NV_ESC_RM_ALLOC_MEMORY, p);
    if (trace::driver())
        trace::print("RM_ALLOC_MEMORY(OS_DESCRIPTOR) %p+0x%zx -> 0x%x rc=%d status=0x%x (%.0f us)", addr, size,
                     p.params.hObjectNew, rc, p.params.status, lastUs);
    if (rc < 0) return osError(rc, "NV_ESC_RM_ALLOC_MEMORY");
    if (p.params.status != nv::NV_OK) return rmError(p.params.status, "NV_ESC_RM_ALLOC_MEMORY");
    return p.params.hObjectNew;
}

Result<RmClient::CpuMapping> RmClient::mapMemory(MapVia via, uint32_t minor, uint32_t hDevice, uint32_t hMemory,
                                                 uint64_t offset, size_t length, uint32_t flags,
                                                 void* target) {
    CpuMapping out;
    if (via == MapVia::Device) {
        NVL_ASSIGN_OR_RETURN(out.fd, openDevice(minor));
    } else {
        int fd = kdrv::get().open("/dev/nvidiactl", O_RDWR);
        if (fd < 0) return osError(fd, "open /dev/nvidiactl");
        out.fd = kdrv::Fd(fd);
    }
    nv::nv_ioctl_nvos33_parameters_with_fd p{};
    p.params.hClient = hClient_;
    p.params.hDevice = hDevice;
    p.params.hMemory = hMemory;
    p.params.offset = offset;
    p.params.length = length;
    p.params.flags = flags;
    p.fd = out.fd.get();
    int rc = escape(ctl_.get(), nv::NV_ESC_RM_MAP_MEMORY, p);
    if (trace::driver())
        trace::print("RM_MAP_MEMORY mem=0x%x off=0x%llx len=0x%zx rc=%d status=0x%x (%.0f us)", hMemory,
                     static_cast<unsigned long long>(offset), length, rc, p.params.status, lastUs);
    if (rc < 0) return osError(rc, "NV_ESC_RM_MAP_MEMORY");
    if (p.params.status != nv::NV_OK) return rmError(p.params.status, "NV_ESC_RM_MAP_MEMORY");
    int mflags = MAP_SHARED | (target ? MAP_FIXED : 0);
    void* addr = kdrv::get().mmap(target, length, PROT_READ | PROT_WRITE, mflags, out.fd.get(), 0);
    if (addr == MAP_FAILED) return osError(-errno, "mmap of RM memory");
    out.map = kdrv::Mapping(addr, length);
    return out;
}

Status RmClient::mapMemoryDma(uint32_t hDevice, uint32_t hDma, uint32_t hMemory, uint64_t length, uint32_t flags,
                              uint64_t gpuVa) {
    nv::NVOS46_PARAMETERS p{};
    p.hClient = hClient_;
    p.hDevice = hDevice;
    p.hDma = hDma;
    p.hMemory = hMemory;
    p.length = length;
    p.flags = flags | nv::NVOS46_FLAGS_DMA_OFFSET_FIXED.value(nv::NVOS46_FLAGS_DMA_OFFSET_FIXED_TRUE);
    p.dmaOffset = gpuVa;
    int rc = escape(ctl_.get(), nv::NV_ESC_RM_MAP_MEMORY_DMA, p);
    if (trace::driver())
        trace::print("RM_MAP_MEMORY_DMA mem=0x%x va=0x%llx len=0x%llx rc=%d status=0x%x (%.0f us)", hMemory,
                     static_cast<unsigned long long>(gpuVa), static_cast<unsigned long long>(length), rc, p.status,
                     lastUs);
    if (rc < 0) return osError(rc, "NV_ESC_RM_MAP_MEMORY_DMA");
    if (p.status != nv::NV_OK) return rmError(p.status, "NV_ESC_RM_MAP_MEMORY_DMA");
    if (p.dmaOffset != gpuVa) return Status(CUDA_ERROR_UNKNOWN, 0, "NV_ESC_RM_MAP_MEMORY_DMA moved the mapping");
    return kOk;
}

Status RmClient::unmapMemoryDma(uint32_t hDevice, uint32_t hDma, uint32_t hMemory, uint64_t gpuVa, uint64_t length) {
    nv::NVOS47_PARAMETERS p{};
    p.hClient = hClient_;
    p.hDevice = hDevice;
    p.hDma = hDma;
    p.hMemory = hMemory;
    p.dmaOffset = gpuVa;
    p.size = length;
    int rc = escape(ctl_.get(), nv::NV_ESC_RM_UNMAP_MEMORY_DMA, p);
    if (trace::driver())
        trace::print("RM_UNMAP_MEMORY_DMA mem=0x%x va=0x%llx rc=%d status=0x%x", hMemory,
                     static_cast<unsigned long long>(gpuVa), rc, p.status);
    if (rc < 0) return osError(rc, "NV_ESC_RM_UNMAP_MEMORY_DMA");
    if (p.status != nv::NV_OK) return rmError(p.status, "NV_ESC_RM_UNMAP_MEMORY_DMA");
    return kOk;
}

}  // namespace nvl::hw
