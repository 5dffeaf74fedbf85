// Which GPUs a process sees and in what order, as libcuda decides:
// CUDA_DEVICE_ORDER sorts them, CUDA_VISIBLE_DEVICES picks and reorders them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nvl::core {

// What the order and the selection look at, per GPU.
struct GpuIdentity {
    uint32_t pciDomain = 0, pciBus = 0, pciDevice = 0, pciFunction = 0;
    uint8_t uuid[16] = {};
    uint64_t speed = 0;  // FASTEST_FIRST's key (higher first): SMs x SM clock
};

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi and libcuda write it.
std::string uuidString(const uint8_t uuid[16]);

// The GPUs (indices into 'gpus') that become devices 0, 1, ...
//  - order (CUDA_DEVICE_ORDER): "PCI_BUS_ID" sorts by PCI address; anything
//    else, unset included, is FASTEST_FIRST: faster first, ties in PCI order.
//  - visible (CUDA_VISIBLE_DEVICES, null when unset: all of them): a comma
//    separated list of indices into that order or GPU UUIDs ("GPU-" and a
//    prefix that names one GPU). The list ends at the first entry that names
//    no GPU, names one a second time or is a MIG instance ("MIG-": nvlite
//    drives whole GPUs only); the GPUs named before it are visible, in the
//    list's order. Blanks around entries are ignored.
std::vector<size_t> visibleOrder(const std::vector<GpuIdentity>& gpus, const char* order, const char* visible);

}  // namespace nvl::core
