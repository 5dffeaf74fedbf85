// One NVIDIA GPU as RM presents it: device and subdevice objects, what they
// tell us about the chip, and (once opened for work) the doorbell page, the
// GPU virtual address space registered with UVM, and memory placement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "common/status.h"
#include "defs/nv_ioctl.h"
#include "defs/uvm_ioctl.h"
#include "hw/gpu_info.h"
#include "hw/gpu_memory.h"
#include "hw/rm_client.h"

namespace nvl::hw {

class Driver;
class Uvm;
class VaSpace;

struct VideoMemoryOptions {
    bool cpuMapped = false;   // also map through BAR1 at the same address
    bool contiguous = false;  // physically contiguous
    // With cpuMapped: where no CPU-visible address is left (AddressSanitizer
    // builds have few), take the memory without the CPU mapping (cpu() is
    // null) instead of failing.
    bool cpuMappingOptional = false;
};

struct FbUsage {
    uint64_t total = 0;
    uint64_t free = 0;
};

class Gpu {
public:
    // Allocates the RM device and subdevice of a card and reads its info.
    static Result<std::unique_ptr<Gpu>> attach(Driver& driver, const nv::nv_ioctl_card_info_t& card);
    ~Gpu();
    Gpu(const Gpu&) = delete;
    Gpu& operator=(const Gpu&) = delete;

    const GpuInfo& info() const { return info_; }

    // Brings up what work needs (doorbell, VA space, UVM registration).
    // Idempotent and thread safe; cheap after the first call.
    Status open();
    bool isOpen() {
        std::lock_guard lock(openMutex_);
        return opened_;
    }

    Driver& driver() const { return driver_; }
    RmClient& rm() const;
    Uvm& uvm() const;
    VaSpace& vaSpace() const;
    uint32_t hDevice() const { return device_.handle(); }
    uint32_t hSubdevice() const { return subdevice_.handle(); }
    uint32_t hVaSpace() const { return vaSpaceObject_.handle(); }
    const nv::NvProcessorUuid& uuid() const { return uuid_; }
    // The usermode doorbell register (NOTIFY_CHANNEL_PENDING).
    volatile uint32_t* doorbell() const { return doorbell_; }
    // How a doorbell write reaches the GPU, and so what a submission must do
    // between its GP_PUT store (through BAR1, in video memory) and the
    // doorbell. On Hopper a doorbell through BAR0 may overtake BAR1 writes
    // still in flight: Host then reads the old GP_PUT, finds nothing new and
    // the entry waits for the channel's next doorbell (RM flushes before its
    // own BAR0 doorbells on GH100 and later: kbusFlushPcieForBar0Doorbell).
    //   Bar1       HOPPER_USERMODE_A mapped through BAR1 (bBar1Mapping, as UVM
    //              and nvidia-push ring on Hopper): behind the GP_PUT store
    //   Bar0Flush  BAR0 page; GP_PUT is read back through BAR1 first (RM's way)
    //   Bar0       BAR0 page, nothing between (GPUs before Hopper, where RM
    //              does not flush either; on Hopper only NVLITE_DOORBELL=bar0-unflushed,
    //              the behaviour before the fix, kept for comparison runs)
    enum class DoorbellPath { Bar1, Bar0Flush, Bar0 };
    DoorbellPath doorbellPath() const { return doorbellPath_; }

    // Video memory, rounded up to 2 MiB pages, at a fresh address of the VaSpace.
    Result<std::unique_ptr<GpuMemory>> allocVideo(size_t size, const VideoMemoryOptions& opts);
    // Fresh page-aligned host memory, pinned and mapped for the GPU at its own address.
    Result<std::unique_ptr<GpuMemory>> allocHost(size_t size);
    // Existing host memory (page-aligned range), pinned and mapped at its own address.
    Result<std::unique_ptr<GpuMemory>> registerHost(void* addr, size_t size);

    // Another GPU's video memory mapped into this GPU's address space at the
    // same address (peer access over the NV50_P2P link Driver::linkPeers
    // made), and taken out again; released with the memory at the latest.
    Status mapForPeer(GpuMemory& mem);
    void unmapForPeer(GpuMemory& mem);

    // NVLITE_VA=uvm: GPU VA spaces are to belong to UVM.
    static bool uvmRequested();
    // Whether the GPU VA space belongs to UVM (NVLITE_VA=uvm) rather than RM.
    bool usesUvm() const { return usesUvm_; }

    // Current video-memory totals from RM.
    Result<FbUsage> fbUsage();

private:
    friend class GpuMemory;
    explicit Gpu(Driver& driver) : driver_(driver) {}

    Status queryInfo();
    Status chooseClasses();
    Status bringUp();
    Status mapDoorbell();
    Result<std::unique_ptr<GpuMemory>> describeHost(void* addr, size_t size, bool ownsPages);
    // Places a memory object at mem.va_ in the GPU VA space, and removes it.
    Status mapForGpu(GpuMemory& mem, bool systemMemory);
    void unmapForGpu(GpuMemory& mem);
    void release(GpuMemory& mem);

    Driver& driver_;
    GpuInfo info_;
    nv::NvProcessorUuid uuid_{};
    RmObject device_;
    RmObject subdevice_;

    std::mutex openMutex_;
    bool opened_ = false;
    kdrv::Fd deviceFd_;  // /dev/nvidiaN, for host-memory descriptors
    RmObject usermode_;
    RmClient::CpuMapping usermodeMapping_;
    volatile uint32_t* doorbell_ = nullptr;
    DoorbellPath doorbellPath_ = DoorbellPath::Bar0;
    RmObject vaSpaceObject_;
    RmObject virtualMemory_;  // the whole VA space as one NV01_MEMORY_VIRTUAL (RM-managed mode)
    bool usesUvm_ = false;
    bool uvmGpuRegistered_ = false;
    bool uvmVaSpaceRegistered_ = false;
};

}  // namespace nvl::hw
