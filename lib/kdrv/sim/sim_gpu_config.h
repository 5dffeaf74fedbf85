// The simulated chip: one Hopper GPU shaped like an H200 SXM, as the real
// driver would describe it. Everything the sim reports about "its" GPU comes
// from here, so tests can compare against these values.
#pragma once

#include <cstdint>

namespace nvl::kdrv::sim::config {

// ---- Driver
inline constexpr const char kDriverVersion[] = "580.159.04";  // NV0000 BUILD_VERSION_V2
inline constexpr const char kGpuName[] = "nvlite simulated Hopper";

// ---- PCI identity (NV_ESC_CARD_INFO, NV2080_CTRL_CMD_BUS_GET_PCI_INFO)
inline constexpr uint32_t kPciDomain = 0;
inline constexpr uint8_t kPciBus = 0x1b;
inline constexpr uint8_t kPciSlot = 0;
inline constexpr uint8_t kPciFunction = 0;
inline constexpr uint16_t kPciVendorId = 0x10de;
inline constexpr uint16_t kPciDeviceId = 0x2335;          // H200 SXM 141GB
inline constexpr uint32_t kPciSubSystemId = 0x18bf10de;   // (subsystem id << 16) | subsystem vendor
inline constexpr uint32_t kPciRevisionId = 0xa1;
inline constexpr uint32_t kGpuId = 0x1b00;                // RM gpu id: bus << 8 | devfn (GPU 0)
inline constexpr uint32_t kMinor = 0;                     // /dev/nvidia0 (GPU 0)
inline constexpr uint16_t kInterruptLine = 0;
inline constexpr uint64_t kRegAddress = 0xa2000000ull;    // BAR0
inline constexpr uint64_t kRegSize = 0x01000000ull;       // 16 MiB
inline constexpr uint64_t kFbAddress = 0x38000000000ull;  // BAR1
inline constexpr uint64_t kFbBarSize = 0x2000000000ull;   // 128 GiB BAR1

// Binary GPU UUID: the ASCII bytes "nvlite-sim-h200!", i.e.
// GPU-6e766c69-7465-2d73-696d-2d6832303021.
inline constexpr uint8_t kUuid[16] = {'n', 'v', 'l', 'i', 't', 'e', '-', 's',
                                      'i', 'm', '-', 'h', '2', '0', '0', '!'};
inline constexpr const char kUuidString[] = "GPU-6e766c69-7465-2d73-696d-2d6832303021";

// ---- Several GPUs: NVLITE_SIM_GPUS=n (1..kMaxGpus, 1 by default) gives n of
// them, GPU k being /dev/nvidiak, RM device instance k, on PCI bus
// kPciBuses[k], with UUID kUuid whose byte kUuidGpuByte is '0' + k. GPU 1
// sits on a lower bus than GPU 0, so enumeration in PCI order differs from
// minor order. NVLITE_SIM_P2P=0 makes the GPUs unable to reach each other
// (no peer-to-peer capability); by default every pair is linked by NVLink.
inline constexpr uint32_t kMaxGpus = 8;
inline constexpr uint8_t kPciBuses[kMaxGpus] = {kPciBus, 0x0c, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba};
inline constexpr uint32_t gpuIdOf(uint32_t k) { return uint32_t{kPciBuses[k]} << 8; }
inline constexpr size_t kUuidGpuByte = 14;

// ---- Memory
inline constexpr uint64_t kDefaultVidmemMiB = 16 * 1024;  // env NVLITE_SIM_VIDMEM_MB overrides
inline constexpr uint64_t kSysmemPoolBytes = 64ull << 30; // sparse pool for NV01_MEMORY_SYSTEM
inline constexpr uint64_t kSysmemPhysBase = 0x100000000000ull;  // fake bus address of that pool
inline constexpr uint32_t kBusWidthBits = 5120;
inline constexpr uint32_t kL2CacheBytes = 50u << 20;
inline constexpr uint32_t kFbpCount = 10;
inline constexpr uint32_t kLtcCount = 80;
inline constexpr uint32_t kLtsCount = 160;

// ---- Clocks (MHz)
inline constexpr uint32_t kSmClockMHz = 1980;
inline constexpr uint32_t kMemClockMHz = 3201;

// ---- Graphics/compute engine (NV2080_CTRL_CMD_GR_GET_INFO).
// H100/H200 SXM: 8 GPCs x 9 TPCs x 2 SMs by design, 66 TPCs (132 SMs) enabled.
// SM count = SHADER_PIPE_SUB_COUNT (enabled TPCs, as nv_gpu_ops.c reads it)
//          x LITTER_NUM_SM_PER_TPC.
inline constexpr uint32_t kSmVersion = 0x0900;  // NV2080_CTRL_GR_INFO_SM_VERSION_9_0
inline constexpr uint32_t kGpcCount = 8;
inline constexpr uint32_t kTpcPerGpc = 9;       // LITTER (design) value
inline constexpr uint32_t kSmPerTpc = 2;
inline constexpr uint32_t kTpcCount = 66;       // enabled
inline constexpr uint32_t kSmCount = kTpcCount * kSmPerTpc;  // 132
inline constexpr uint32_t kMaxWarpsPerSm = 64;
inline constexpr uint32_t kThreadsPerWarp = 32;
inline constexpr uint32_t kSpPerSm = 128;
inline constexpr uint32_t kCudaCores = kSmCount * kSpPerSm;  // GPU_CORE_COUNT
inline constexpr uint32_t kTensorCores = kSmCount * 4;
inline constexpr uint32_t kMaxSubcontexts = 64;

// ---- Copy engines (NV2080_CTRL_CMD_GPU_GET_ENGINES_V2): GR0 and COPY0..COPY9.
// NV2080_CTRL_CMD_CE_GET_CAPS_V2 marks COPY0 and COPY1 as GRCEs (serving the
// graphics runlist); COPY2..COPY9 are the asynchronous copy engines.
inline constexpr uint32_t kCopyEngineCount = 10;
inline constexpr uint32_t kGrCopyEngineCount = 2;

// ---- Channels
inline constexpr uint32_t kUserdSize = 0x200;         // bytes of USERD per channel
inline constexpr uint32_t kUsermodeSize = 0x10000;    // HOPPER_USERMODE_A page
inline constexpr uint32_t kFirstWorkSubmitToken = 0x10;  // tokens count up from here (= channel id)
inline constexpr uint32_t kMaxChannels = 2048;

// ---- Launch log
inline constexpr uint32_t kQmdSize = 384;             // Hopper QMD V04
inline constexpr uint32_t kMaxRecordedCb0 = 64 * 1024;
inline constexpr uint32_t kMaxRecordedLaunches = 4096;  // oldest dropped beyond this

}  // namespace nvl::kdrv::sim::config
