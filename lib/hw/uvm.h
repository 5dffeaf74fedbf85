// The UVM driver (/dev/nvidia-uvm): the process's GPU virtual address space.
// External ranges place RM memory objects at the virtual addresses we choose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/status.h"
#include "defs/uvm_ioctl.h"
#include "kdrv/kdrv.h"

namespace nvl::hw {

class Uvm {
public:
    // Opens /dev/nvidia-uvm and initialises the UVM address space of this process.
    static Result<std::unique_ptr<Uvm>> open();

    int fd() const { return fd_.get(); }

    Status registerGpu(const nv::NvProcessorUuid& uuid, int rmCtrlFd, uint32_t hClient);
    Status unregisterGpu(const nv::NvProcessorUuid& uuid);
    Status registerGpuVaSpace(const nv::NvProcessorUuid& uuid, int rmCtrlFd, uint32_t hClient,
                              uint32_t hVaSpace);
    Status unregisterGpuVaSpace(const nv::NvProcessorUuid& uuid);
    Status registerChannel(const nv::NvProcessorUuid& uuid, int rmCtrlFd, uint32_t hClient,
                           uint32_t hChannel, uint64_t base, uint64_t length);
    Status unregisterChannel(const nv::NvProcessorUuid& uuid, uint32_t hClient, uint32_t hChannel);
    Status createExternalRange(uint64_t base, uint64_t length);
    // Maps [base, base+length) of an external range to hMemory at 'offset' on one GPU.
    Status mapExternalAllocation(const nv::NvProcessorUuid& uuid, uint64_t base, uint64_t length,
                                 uint64_t offset, int rmCtrlFd, uint32_t hClient, uint32_t hMemory);
    // Removes a range created by createExternalRange and everything mapped in it.
    Status free(uint64_t base, uint64_t length);

private:
    Uvm() = default;
    kdrv::Fd fd_;
    // A second fd through which UVM_MM_INITIALIZE ties the address space to this process's mm.
    kdrv::Fd mmFd_;
};

}  // namespace nvl::hw
