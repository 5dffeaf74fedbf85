// The process's connection to the NVIDIA kernel driver: the RM client, the
// UVM address space, the GPU virtual-address reservation and the GPUs.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "common/status.h"
#include "hw/gpu.h"
#include "hw/rm_client.h"
#include "hw/uvm.h"
#include "hw/va_space.h"

namespace nvl::hw {

class Driver {
public:
    // Opens the driver and attaches every GPU it reports. Without the
    // driver's device files: CUDA_ERROR_NO_DEVICE.
    static Result<std::unique_ptr<Driver>> open();
    ~Driver();

    RmClient& rm() { return *rm_; }
    size_t gpuCount() const { return gpus_.size(); }
    Gpu& gpu(size_t i) { return *gpus_[i]; }

    // What RM says two GPUs can do to each other's memory (read as 'a'
    // reaching 'b', the same both ways on NVLink and PCIe). Asked once per pair.
    struct PeerCaps {
        bool access = false;   // reads and writes
        bool atomics = false;
        bool nvlink = false;
    };
    Result<PeerCaps> peerCaps(Gpu& a, Gpu& b);
    // The NV50_P2P link between two GPUs (made once, kept for the process):
    // RM's peer ids that mappings of one's memory in the other need.
    Status linkPeers(Gpu& a, Gpu& b);

    // Opened on first use (the first context), shared by all GPUs.
    Result<Uvm*> uvm();
    Result<VaSpace*> vaSpace();
    Uvm& uvmOpened() { return *uvm_; }
    VaSpace& vaSpaceOpened() { return *vaSpace_; }

private:
    Driver() = default;

    std::unique_ptr<RmClient> rm_;
    std::mutex lazyMutex_;
    std::unique_ptr<Uvm> uvm_;
    std::unique_ptr<VaSpace> vaSpace_;
    std::mutex peerMutex_;
    std::map<std::pair<uint32_t, uint32_t>, PeerCaps> peerCaps_;  // by (gpu id, gpu id), lower first
    std::map<std::pair<uint32_t, uint32_t>, RmObject> peerLinks_;
    // Destroyed first (their objects belong to the client, their memory to the VA space).
    std::vector<std::unique_ptr<Gpu>> gpus_;
};

}  // namespace nvl::hw
