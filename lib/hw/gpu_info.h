// What RM tells us about a GPU, read once when the GPU is attached.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvl::hw {

struct GpuInfo {
    std::string name;
    uint8_t uuid[16] = {};

    uint32_t pciDomain = 0;
    uint32_t pciBus = 0;
    uint32_t pciDevice = 0;    // slot
    uint32_t pciFunction = 0;
    uint32_t pciDeviceId = 0;  // vendor in the low 16 bits, device in the high 16 bits
    uint32_t pciSubsystemId = 0;
    uint32_t minor = 0;        // /dev/nvidia<minor>
    uint32_t gpuId = 0;        // RM's id of the GPU (NV0000 controls name GPUs by it)

    uint32_t smMajor = 0;
    uint32_t smMinor = 0;
    uint32_t smCount = 0;
    uint32_t maxWarpsPerSm = 0;
    uint32_t threadsPerWarp = 32;
    uint32_t tpcCount = 0;
    uint32_t smPerTpc = 0;
    uint32_t gpcCount = 0;
    uint32_t maxTpcPerGpc = 0;

    uint64_t totalMemory = 0;     // bytes usable by allocations (RM heap)
    uint32_t busWidthBits = 0;
    uint32_t l2CacheBytes = 0;
    uint64_t bar1Bytes = 0;

    uint32_t smClockKhz = 0;      // maximum SM clock
    uint32_t memoryClockKhz = 0;  // peak memory clock

    uint32_t copyEngineCount = 0;   // copy engines RM reports
    uint32_t asyncEngineCount = 0;  // what CUDA reports: engines copies can use beside compute
    std::vector<uint32_t> asyncCopyEngines;  // their NV2080_ENGINE_TYPE_COPYn
    std::vector<uint32_t> asyncCopyPces;     // physical engines behind each (0: unknown)
    enum class ComputeMode { Default, ExclusiveProcess, Prohibited };
    ComputeMode computeMode = ComputeMode::Default;
    bool eccEnabled = false;

    // Classes chosen from the class list.
    uint32_t channelClass = 0;
    uint32_t usermodeClass = 0;
    uint32_t computeClass = 0;
    uint32_t copyClass = 0;
};

}  // namespace nvl::hw
