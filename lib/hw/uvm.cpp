#include "hw/uvm.h"

#include <fcntl.h>

#include <cstring>

#include "common/trace.h"
#include "defs/nv_status.h"
#include "hw/cpu.h"
#include "hw/driver_error.h"

namespace nvl::hw {
namespace {

// One UVM ioctl: the request number is the command itself; the status
// comes back in the parameters' rmStatus.
template <class P>
Status uvmCall(int fd, unsigned long cmd, P& params, const char* name) {
    const uint64_t t0 = trace::driver() ? monotonicNs() : 0;
    int rc = kdrv::get().ioctl(fd, cmd, &params);
    if (t0)
        trace::print("%s rc=%d status=%s (%.0f us)", name, rc,
                     nv::nvStatusName(params.rmStatus) ? nv::nvStatusName(params.rmStatus) : "?",
                     static_cast<double>(monotonicNs() - t0) / 1000.0);
    if (rc < 0) return osError(rc, name);
    if (params.rmStatus != nv::NV_OK) return rmError(params.rmStatus, name);
    return kOk;
}

}  // namespace

Result<std::unique_ptr<Uvm>> Uvm::open() {
    std::unique_ptr<Uvm> uvm(new Uvm());
    int fd = kdrv::get().open("/dev/nvidia-uvm", O_RDWR);
    if (fd < 0) return osError(fd, "open /dev/nvidia-uvm");
    uvm->fd_ = kdrv::Fd(fd);
    int fd2 = kdrv::get().open("/dev/nvidia-uvm", O_RDWR);
    if (fd2 < 0) return osError(fd2, "open /dev/nvidia-uvm");
    uvm->mmFd_ = kdrv::Fd(fd2);

    nv::UVM_INITIALIZE_PARAMS init{};
    NVL_TRY(uvmCall(fd, nv::UVM_INITIALIZE, init, "UVM_INITIALIZE"));

    // Ties the address space to this process's mm; libcuda makes the same
    // call, and an already-initialised state is not an error for us.
    nv::UVM_MM_INITIALIZE_PARAMS mm{};
    mm.uvmFd = fd;
    (void)uvmCall(fd2, nv::UVM_MM_INITIALIZE, mm, "UVM_MM_INITIALIZE");
    return uvm;
}

Status Uvm::registerGpu(const nv::NvProcessorUuid& uuid, int rmCtrlFd, uint32_t hClient) {
    nv::UVM_REGISTER_GPU_PARAMS p{};
    p.gpu_uuid = uuid;
    p.rmCtrlFd = rmCtrlFd;
    p.hClient = hClient;
    return uvmCall(fd_.get(), nv::UVM_REGISTER_GPU, p, "UVM_REGISTER_GPU");
}

Status Uvm::unregisterGpu(const nv::NvProcessorUuid& uuid) {
    nv::UVM_UNREGISTER_GPU_PARAMS p{};
    p.gpu_uuid = uuid;
    return uvmCall(fd_.get(), nv::UVM_UNREGISTER_GPU, p, "UVM_UNREGISTER_GPU");
}

Status Uvm::registerGpuVaSpace(const nv::NvProcessorUuid& uuid, int rmCtrlFd, uint32_t hClient,
                               uint32_t hVaSpace) {
    nv::UVM_REGISTER_GPU_VASPACE_PARAMS p{};
    p.gpuUuid = uuid;
    p.rmCtrlFd = rmCtrlFd;
    p.hClient = hClient;
    p.hVaSpace = hVaSpace;
    return uvmCall(fd_.get(), nv::UVM_REGISTER_GPU_VASPACE, p, "UVM_REGISTER_GPU_VASPACE");
}

Status Uvm::unregisterGpuVaSpace(const nv::NvProcessorUuid& uuid) {
    nv::UVM_UNREGISTER_GPU_VASPACE_PARAMS p{};
    p.gpuUuid = uuid;
    return uvmCall(fd_.get(), nv::UVM_UNREGISTER_GPU_VASPACE, p, "UVM_UNREGISTER_GPU_VASPACE");
}

Status Uvm::registerChannel(const nv::NvProcessorUuid& uuid, int rmCtrlFd, uint32_t hClient,
                            uint32_t hChannel, uint64_t base, uint64_t length) {
    nv::UVM_REGISTER_CHANNEL_PARAMS p{};
    p.gpuUuid = uuid;
    p.rmCtrlFd = rmCtrlFd;
    p.hClient = hClient;
    p.hChannel = hChannel;
    p.base = base;
    p.length = length;
    return uvmCall(fd_.get(), nv::UVM_REGISTER_CHANNEL, p, "UVM_REGISTER_CHANNEL");
}

Status Uvm::unregisterChannel(const nv::NvProcessorUuid& uuid, uint32_t hClient, uint32_t hChannel) {
    nv::UVM_UNREGISTER_CHANNEL_PARAMS p{};
    p.gpuUuid = uuid;
    p.hClient = hClient;
    p.hChannel = hChannel;
    return uvmCall(fd_.get(), nv::UVM_UNREGISTER_CHANNEL, p, "UVM_UNREGISTER_CHANNEL");
}

Status Uvm::createExternalRange(uint64_t base, uint64_t length) {
    nv::UVM_CREATE_EXTERNAL_RANGE_PARAMS p{};
    p.base = base;
    p.length = length;
    return uvmCall(fd_.get(), nv::UVM_CREATE_EXTERNAL_RANGE, p, "UVM_CREATE_EXTERNAL_RANGE");
}

Status Uvm::mapExternalAllocation(const nv::NvProcessorUuid& uuid, uint64_t base, uint64_t length,
                                  uint64_t offset, int rmCtrlFd, uint32_t hClient, uint32_t hMemory) {
    // Large (about 4 KiB with the per-GPU attribute table): keep it off the stack.
    auto p = std::make_unique<nv::UVM_MAP_EXTERNAL_ALLOCATION_PARAMS>();
    std::memset(p.get(), 0, sizeof *p);
    p->base = base;
    p->length = length;
    p->offset = offset;
    p->perGpuAttributes[0].gpuUuid = uuid;
    p->perGpuAttributes[0].gpuMappingType = nv::UvmGpuMappingTypeReadWriteAtomic;
    p->gpuAttributesCount = 1;
    p->rmCtrlFd = rmCtrlFd;
    p->hClient = hClient;
    p->hMemory = hMemory;
    return uvmCall(fd_.get(), nv::UVM_MAP_EXTERNAL_ALLOCATION, *p, "UVM_MAP_EXTERNAL_ALLOCATION");
}

Status Uvm::free(uint64_t base, uint64_t length) {
    nv::UVM_FREE_PARAMS p{};
    p.base = base;
    p.length = length;
    return uvmCall(fd_.get(), nv::UVM_FREE, p, "UVM_FREE");
}

}  // namespace nvl::hw
