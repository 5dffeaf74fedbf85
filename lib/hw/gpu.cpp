#include "hw/gpu.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>

#include "common/align.h"
#include "common/env.h"
#include "common/trace.h"
#include "defs/host_c86f.h"
#include "defs/nv_status.h"
#include "defs/rm_classes.h"
#include "defs/rm_controls.h"
#include "hw/driver.h"
#include "hw/driver_error.h"
#include "hw/uvm.h"
#include "hw/va_space.h"

namespace nvl::hw {
namespace {

constexpr uint64_t kHugePage = 2ull << 20;
// The GPU VA space: page 0 left out, up to 80 MiB below 2^49 (the 49-bit
// space the MMU walks; the range tinygrad asks RM for on Ampere and Hopper).
constexpr uint64_t kGpuVaBase = 0x1000;
constexpr uint64_t kGpuVaSize = (1ull << 49) - (80ull << 20);

size_t hostPageSize() {
    static const size_t size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

// The machine's RAM: pinned pages beyond it can never be had, and asking the
// kernel to pin them would only wake the OOM killer.
uint64_t physicalMemory() {
    static const uint64_t bytes = [] {
        const long pages = ::sysconf(_SC_PHYS_PAGES);
        return pages > 0 ? static_cast<uint64_t>(pages) * hostPageSize() : ~0ull;
    }();
    return bytes;
}

// A number after 'key' in a small text file (/proc, /sys), else nullopt.
std::optional<uint64_t> numberIn(const char* path, const char* key) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    char text[4096];
    const ssize_t n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    if (n <= 0) return std::nullopt;
    text[n] = 0;
    const char* at = std::strstr(text, key);
    if (!at) return std::nullopt;
    at += std::strlen(key);
    while (*at == ' ' || *at == '\t') ++at;
    if (*at < '0' || *at > '9') return std::nullopt;  // "max": no limit
    return std::strtoull(at, nullptr, 10);
}

// Memory the kernel can give now without taking it from others: MemAvailable,
// and no more than the room left under the cgroup's limit (cgroup v2);
// UINT64_MAX when unknown.
uint64_t availableMemory() {
    uint64_t bytes = UINT64_MAX;
    if (auto kib = numberIn("/proc/meminfo", "MemAvailable:")) bytes = *kib << 10;
    char line[512];
    const int fd = ::open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return bytes;
    const ssize_t n = ::read(fd, line, sizeof line - 1);
    ::close(fd);
    if (n <= 0 || std::strncmp(line, "0::", 3) != 0) return bytes;
    line[n] = 0;
    line[std::strcspn(line, "\n")] = 0;
    char path[640];
    std::snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
    const auto limit = numberIn(path, "");
    std::snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.current", line + 3);
    const auto used = numberIn(path, "");
    if (limit && used) bytes = std::min(bytes, *limit > *used ? *limit - *used : 0);
    return bytes;
}

// New pinned pages: never more than the machine's RAM, and for large amounts
// no more than is available now. Pinning pages the kernel does not have
// wakes the OOM killer, which picks the process asking.
bool canPinNew(uint64_t bytes) {
    constexpr uint64_t kCheckAvailableFrom = 256ull << 20;
    if (bytes > physicalMemory()) return false;
    return bytes < kCheckAvailableFrom || bytes <= availableMemory();
}

}  // namespace

RmClient& Gpu::rm() const { return driver_.rm(); }

bool Gpu::uvmRequested() {
    const char* vaChoice = std::getenv("NVLITE_VA");
    return vaChoice && std::strcmp(vaChoice, "uvm") == 0;
}
Uvm& Gpu::uvm() const { return driver_.uvmOpened(); }
VaSpace& Gpu::vaSpace() const { return driver_.vaSpaceOpened(); }

Result<std::unique_ptr<Gpu>> Gpu::attach(Driver& driver, const nv::nv_ioctl_card_info_t& card) {
    std::unique_ptr<Gpu> gpu(new Gpu(driver));
    RmClient& rm = driver.rm();
    GpuInfo& info = gpu->info_;
    info.minor = card.minor_number;
    info.gpuId = card.gpu_id;
    info.pciDomain = card.pci_info.domain;
    info.pciBus = card.pci_info.bus;
    info.pciDevice = card.pci_info.slot;
    info.pciFunction = card.pci_info.function;
    info.pciDeviceId = (static_cast<uint32_t>(card.pci_info.device_id) << 16) | card.pci_info.vendor_id;

    // RM lets a client use a GPU only once one of its fds has that GPU open.
    NVL_ASSIGN_OR_RETURN(gpu->deviceFd_, rm.openDevice(card.minor_number));

    nv::NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS id{};
    id.gpuId = card.gpu_id;
    NVL_TRY(rm.control(rm.handle(), nv::NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, id));

    nv::NV0080_ALLOC_PARAMETERS deviceParams{};
    deviceParams.deviceId = id.deviceInstance;
    deviceParams.hClientShare = rm.handle();
    deviceParams.vaMode = nv::NV_DEVICE_ALLOCATION_VAMODE_OPTIONAL_MULTIPLE_VASPACES;
    NVL_ASSIGN_OR_RETURN(gpu->device_, allocObject(rm, rm.handle(), nv::NV01_DEVICE_0, &deviceParams));

    nv::NV2080_ALLOC_PARAMETERS subdeviceParams{};
    NVL_ASSIGN_OR_RETURN(gpu->subdevice_,
                         allocObject(rm, gpu->device_.handle(), nv::NV20_SUBDEVICE_0, &subdeviceParams));

    NVL_TRY(gpu->chooseClasses());
    NVL_TRY(gpu->queryInfo());
    return gpu;
}

Gpu::~Gpu() {
    if (uvmVaSpaceRegistered_) (void)uvm().unregisterGpuVaSpace(uuid_);
    if (uvmGpuRegistered_) (void)uvm().unregisterGpu(uuid_);
}

Status Gpu::chooseClasses() {
    auto list = std::make_unique<nv::NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS>();
    std::memset(list.get(), 0, sizeof *list);
    NVL_TRY(rm().control(device_.handle(), nv::NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, *list));
    auto has = [&](uint32_t cls) {
        for (uint32_t i = 0; i < list->numClasses; ++i)
            if (list->classList[i] == cls) return true;
        return false;
    };
    auto pick = [&](std::initializer_list<uint32_t> preferred) -> uint32_t {
        for (uint32_t cls : preferred)
            if (has(cls)) return cls;
        return 0;
    };
    // Hopper first; Ampere/Ada share the code path where they can.
    info_.channelClass = pick({nv::HOPPER_CHANNEL_GPFIFO_A, nv::AMPERE_CHANNEL_GPFIFO_A});
    info_.usermodeClass = pick({nv::HOPPER_USERMODE_A, nv::AMPERE_USERMODE_A, nv::TURING_USERMODE_A});
    info_.computeClass = pick({nv::HOPPER_COMPUTE_A, nv::ADA_COMPUTE_A, nv::AMPERE_COMPUTE_B});
    info_.copyClass = pick({nv::HOPPER_DMA_COPY_A, nv::AMPERE_DMA_COPY_B});
    if (!info_.channelClass || !info_.usermodeClass || !info_.computeClass || !info_.copyClass) {
        if (trace::api()) trace::print("GPU %u: no supported channel/compute/copy classes", info_.minor);
        return Status(CUDA_ERROR_NO_DEVICE, 0, "class list");
    }
    return kOk;
}

Status Gpu::queryInfo() {
    RmClient& rm = this->rm();
    const uint32_t sub = subdevice_.handle();

    // Graphics/compute engine facts.
    nv::NV2080_CTRL_GR_INFO gr[] = {
        {nv::NV2080_CTRL_GR_INFO_INDEX_SM_VERSION, 0},
        {nv::NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM, 0},
        {nv::NV2080_CTRL_GR_INFO_INDEX_MAX_THREADS_PER_WARP, 0},
        {nv::NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_SUB_COUNT, 0},  // enabled TPCs
        {nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC, 0},
        {nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS, 0},
        {nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC, 0},
    };
    nv::NV2080_CTRL_GR_GET_INFO_PARAMS grParams{};
    grParams.grInfoListSize = sizeof gr / sizeof gr[0];
    grParams.grInfoList = reinterpret_cast<uint64_t>(gr);
    NVL_TRY(rm.control(sub, nv::NV2080_CTRL_CMD_GR_GET_INFO, grParams));
    // NV2080_CTRL_GR_INFO_SM_VERSION_<major>_<minor>: major in bits 15:8,
    // minor in 7:0 (some chips report the minor in 7:4).
    uint32_t smVersion = gr[0].data;
    info_.smMajor = (smVersion >> 8) & 0xff;
    info_.smMinor = smVersion & 0xff;
    if (info_.smMinor > 0xf) info_.smMinor >>= 4;
    info_.maxWarpsPerSm = gr[1].data;
    info_.threadsPerWarp = gr[2].data ? gr[2].data : 32;  // every NVIDIA GPU so far, should RM not say
    info_.tpcCount = gr[3].data;
    info_.smPerTpc = gr[4].data;
    info_.gpcCount = gr[5].data;
    info_.maxTpcPerGpc = gr[6].data;
    info_.smCount = info_.tpcCount * info_.smPerTpc;

    // UUID (binary form).
    nv::NV2080_CTRL_GPU_GET_GID_INFO_PARAMS gid{};
    gid.flags = nv::NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY;
    static_assert(sizeof info_.uuid == sizeof uuid_ && sizeof uuid_ <= sizeof gid.data);
    gid.length = sizeof uuid_;  // the binary GID is the 16-byte UUID
    NVL_TRY(rm.control(sub, nv::NV2080_CTRL_CMD_GPU_GET_GID_INFO, gid));
    std::memcpy(info_.uuid, gid.data, sizeof info_.uuid);
    std::memcpy(&uuid_, gid.data, sizeof uuid_);

    nv::NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS name{};
    name.gpuNameStringFlags = nv::NV2080_CTRL_GPU_GET_NAME_STRING_FLAGS_TYPE_ASCII;
    NVL_TRY(rm.control(sub, nv::NV2080_CTRL_CMD_GPU_GET_NAME_STRING, name));
    const char* ascii = reinterpret_cast<const char*>(name.gpuNameString.ascii);
    info_.name.assign(ascii, strnlen(ascii, sizeof name.gpuNameString.ascii));

    // Memory facts (RM reports sizes in KiB).
    auto fb = std::make_unique<nv::NV2080_CTRL_FB_GET_INFO_V2_PARAMS>();
    std::memset(fb.get(), 0, sizeof *fb);
    const uint32_t fbIndex[] = {
        nv::NV2080_CTRL_FB_INFO_INDEX_HEAP_SIZE,
        nv::NV2080_CTRL_FB_INFO_INDEX_BUS_WIDTH,
        nv::NV2080_CTRL_FB_INFO_INDEX_L2CACHE_SIZE,
        nv::NV2080_CTRL_FB_INFO_INDEX_BAR1_SIZE,
        nv::NV2080_CTRL_FB_INFO_FBPA_ECC_ENABLED,
    };
    fb->fbInfoListSize = sizeof fbIndex / sizeof fbIndex[0];
    for (uint32_t i = 0; i < fb->fbInfoListSize; ++i) fb->fbInfoList[i].index = fbIndex[i];
    NVL_TRY(rm.control(sub, nv::NV2080_CTRL_CMD_FB_GET_INFO_V2, *fb));
    info_.totalMemory = static_cast<uint64_t>(fb->fbInfoList[0].data) << 10;
    info_.busWidthBits = fb->fbInfoList[1].data;
    info_.l2CacheBytes = fb->fbInfoList[2].data;
    info_.bar1Bytes = static_cast<uint64_t>(fb->fbInfoList[3].data) << 10;
    info_.eccEnabled = fb->fbInfoList[4].data != 0;

    // Copy engines present.
    auto engines = std::make_unique<nv::NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS>();
    std::memset(engines.get(), 0, sizeof *engines);
    if (rm.control(sub, nv::NV2080_CTRL_CMD_GPU_GET_ENGINES_V2, *engines).ok()) {
        for (uint32_t i = 0; i < engines->engineCount; ++i) {
            uint32_t e = engines->engineList[i];
            if (e < nv::NV2080_ENGINE_TYPE_COPY0 || e > nv::NV2080_ENGINE_TYPE_COPY9) continue;
            ++info_.copyEngineCount;
            // CUDA counts the engines that copy beside compute, not the ones
            // serving the graphics runlist (GRCE).
            nv::NV2080_CTRL_CE_GET_CAPS_V2_PARAMS caps{};
            caps.ceEngineType = e;
            if (rm.control(sub, nv::NV2080_CTRL_CMD_CE_GET_CAPS_V2, caps).ok() &&
                !(caps.capsTbl[nv::NV2080_CTRL_CE_CAPS_CE_GRCE_BYTE] & nv::NV2080_CTRL_CE_CAPS_CE_GRCE_MASK)) {
                info_.asyncCopyEngines.push_back(e);
                nv::NV2080_CTRL_CE_GET_CE_PCE_MASK_PARAMS pce{};
                pce.ceEngineType = e;
                const bool known = rm.control(sub, nv::NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK, pce).ok();
                info_.asyncCopyPces.push_back(known ? static_cast<uint32_t>(std::popcount(pce.pceMask)) : 0);
                if (trace::api())
                    trace::print("copy engine 0x%x: PCE mask 0x%x%s", e, pce.pceMask, known ? "" : " (unknown)");
            }
        }
    }

    info_.asyncEngineCount = static_cast<uint32_t>(info_.asyncCopyEngines.size());

    nv::NV2080_CTRL_GPU_QUERY_COMPUTE_MODE_RULES_PARAMS mode{};
    if (rm.control(sub, nv::NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES, mode).ok()) {
        if (mode.rules == nv::NV2080_CTRL_GPU_COMPUTE_MODE_RULES_EXCLUSIVE_COMPUTE)
            info_.computeMode = GpuInfo::ComputeMode::ExclusiveProcess;
        else if (mode.rules == nv::NV2080_CTRL_GPU_COMPUTE_MODE_RULES_COMPUTE_PROHIBITED)
            info_.computeMode = GpuInfo::ComputeMode::Prohibited;
    }

    nv::NV2080_CTRL_BUS_GET_PCI_INFO_PARAMS pci{};
    if (rm.control(sub, nv::NV2080_CTRL_CMD_BUS_GET_PCI_INFO, pci).ok()) info_.pciSubsystemId = pci.pciSubSystemId;

    // Maximum SM and memory clocks, asked the way libcuda asks (see rm_controls.h).
    auto clocks = std::make_unique<nv::NVL_PERF_GET_CLOCKS_PARAMS>();
    std::memset(clocks.get(), 0, sizeof *clocks);
    clocks->flags = nv::NVL_PERF_GET_CLOCKS_FLAGS_LIBCUDA;
    clocks->numDomains = 2;
    clocks->domains[0].clkDomain = nv::NV2080_CTRL_CLK_DOMAIN_GPCCLK;
    clocks->domains[1].clkDomain = nv::NV2080_CTRL_CLK_DOMAIN_MCLK;
    if (rm.control(sub, nv::NVL_CTRL_CMD_PERF_GET_CLOCKS, *clocks).ok()) {
        info_.smClockKhz = clocks->domains[0].freqKHz;
        info_.memoryClockKhz = clocks->domains[1].freqKHz;
    }

    if (trace::driver())
        trace::print("GPU %u: %s sm %u.%u smCount %u (tpc %u x %u) warps/SM %u gpcs %u heap %llu MiB bus %u L2 %u "
                     "BAR1 %llu MiB CEs %u (async %u) clocks %u/%u kHz pci %04x:%02x:%02x.%x id 0x%08x sub 0x%08x",
                     info_.minor, info_.name.c_str(), info_.smMajor, info_.smMinor, info_.smCount, info_.tpcCount,
                     info_.smPerTpc, info_.maxWarpsPerSm, info_.gpcCount,
                     static_cast<unsigned long long>(info_.totalMemory >> 20), info_.busWidthBits, info_.l2CacheBytes,
                     static_cast<unsigned long long>(info_.bar1Bytes >> 20), info_.copyEngineCount, info_.asyncEngineCount,
                     info_.smClockKhz,
                     info_.memoryClockKhz, info_.pciDomain, info_.pciBus, info_.pciDevice, info_.pciFunction,
                     info_.pciDeviceId, info_.pciSubsystemId);
    return kOk;
}

Status Gpu::open() {
    std::lock_guard lock(openMutex_);
    if (opened_) return kOk;
    Status s = bringUp();
    if (s.ok()) opened_ = true;
    return s;
}

Status Gpu::mapDoorbell() {
    if (usermode_) return kOk;
    RmClient& rm = this->rm();
    // NVLITE_DOORBELL=bar0 / bar0-unflushed ring through BAR0 (comparison runs).
    const char* choice = env::value("NVLITE_DOORBELL");
    const bool wantBar0 = choice && (!std::strcmp(choice, "bar0") || !std::strcmp(choice, "bar0-unflushed"));
    const bool hopper = info_.usermodeClass == nv::HOPPER_USERMODE_A;
    if (hopper && !wantBar0) {
        nv::NV_HOPPER_USERMODE_A_PARAMS params{};
        params.bBar1Mapping = 1;
        Result<RmObject> object = allocObject(rm, subdevice_.handle(), info_.usermodeClass, &params);
        if (object) {
            Result<RmClient::CpuMapping> mapping =
                rm.mapMemory(RmClient::MapVia::Device, info_.minor, device_.handle(), object->handle(), 0,
                             nv::NVC361_NV_USERMODE__SIZE, 0, nullptr);
            if (mapping) {
                usermode_ = std::move(*object);
                usermodeMapping_ = std::move(*mapping);
                doorbellPath_ = DoorbellPath::Bar1;
            } else if (trace::api()) {
                trace::print("doorbell: BAR1 page not mappable (error %d); ringing through BAR0", mapping.status().code());
            }
        } else if (trace::api()) {
            trace::print("doorbell: no BAR1 page (error %d); ringing through BAR0", object.status().code());
        }
    }
    if (!usermode_) {
        NVL_ASSIGN_OR_RETURN(usermode_, allocObject(rm, subdevice_.handle(), info_.usermodeClass));
        NVL_ASSIGN_OR_RETURN(usermodeMapping_,
                             rm.mapMemory(RmClient::MapVia::Device, info_.minor, device_.handle(), usermode_.handle(), 0,
                                          nv::NVC361_NV_USERMODE__SIZE, 0, nullptr));
        const bool unflushed = !hopper || (choice && !std::strcmp(choice, "bar0-unflushed"));
        doorbellPath_ = unflushed ? DoorbellPath::Bar0 : DoorbellPath::Bar0Flush;
    }
    doorbell_ = reinterpret_cast<volatile uint32_t*>(usermodeMapping_.map.as<uint8_t>() + nv::NVC361_NOTIFY_CHANNEL_PENDING);
    if (trace::api())
        trace::print("doorbell through %s", doorbellPath_ == DoorbellPath::Bar1        ? "BAR1"
                                            : doorbellPath_ == DoorbellPath::Bar0Flush ? "BAR0, GP_PUT read back first"
                                                                                       : "BAR0");
    return kOk;
}

Status Gpu::bringUp() {
    RmClient& rm = this->rm();
    NVL_TRY(driver_.vaSpace().status());

    NVL_TRY(mapDoorbell());

    // Leave idle clocks while we hold the GPU, as libcuda does.
    nv::NV2080_CTRL_PERF_BOOST_PARAMS boost{};
    boost.duration = nv::NV2080_CTRL_PERF_BOOST_DURATION_INFINITE;
    boost.flags = nv::NV2080_CTRL_PERF_BOOST_FLAGS_CMD.value(nv::NV2080_CTRL_PERF_BOOST_FLAGS_CMD_BOOST_TO_MAX) |
                  nv::NV2080_CTRL_PERF_BOOST_FLAGS_CUDA.value(nv::NV2080_CTRL_PERF_BOOST_FLAGS_CUDA_YES) |
                  nv::NV2080_CTRL_PERF_BOOST_FLAGS_CUDA_PRIORITY.value(
                      nv::NV2080_CTRL_PERF_BOOST_FLAGS_CUDA_PRIORITY_HIGH);
    (void)rm.control(subdevice_.handle(), nv::NV2080_CTRL_CMD_PERF_BOOST, boost);

    // The GPU virtual address space. By default RM manages it: no UVM, whose
    // GPU registration alone costs 90-120 ms on the H200 (RM-managed start-up
    // took 12-21 ms in all, libcuda about 210 ms), and MMU faults become channel errors.
    // NVLITE_VA=uvm hands the VA space to UVM instead, as tinygrad does.
    usesUvm_ = uvmRequested();
    if (!vaSpaceObject_) {
        nv::NV_VASPACE_ALLOCATION_PARAMETERS vas{};
        vas.vaBase = kGpuVaBase;
        vas.vaSize = kGpuVaSize;
        // (RM's internal-window flag leaves too little room for the compute
        // object's context buffers: NV_ERR_NO_MEMORY on the H200.)
        vas.flags = usesUvm_ ? nv::NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING |
                                   nv::NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED
                             : 0;
        NVL_ASSIGN_OR_RETURN(vaSpaceObject_, allocObject(rm, device_.handle(), nv::FERMI_VASPACE_A, &vas));
    }
    if (usesUvm_) {
        NVL_TRY(driver_.uvm().status());
        if (!uvmGpuRegistered_) {
            NVL_TRY(uvm().registerGpu(uuid_, -1, 0));
            uvmGpuRegistered_ = true;
        }
        if (!uvmVaSpaceRegistered_) {
            NVL_TRY(uvm().registerGpuVaSpace(uuid_, rm.ctlFd(), rm.handle(), vaSpaceObject_.handle()));
            uvmVaSpaceRegistered_ = true;
        }
    } else if (!virtualMemory_) {
        nv::NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS vm{};
        vm.offset = 0;
        vm.limit = kGpuVaBase + kGpuVaSize - 1;
        vm.hVASpace = vaSpaceObject_.handle();
        NVL_ASSIGN_OR_RETURN(virtualMemory_, allocObject(rm, device_.handle(), nv::NV01_MEMORY_VIRTUAL, &vm));
    }
    return kOk;
}

Result<std::unique_ptr<GpuMemory>> Gpu::allocVideo(size_t size, const VideoMemoryOptions& opts) {
    if (size == 0) return CUDA_ERROR_INVALID_VALUE;
    const uint64_t bytes = alignUp(size, kHugePage);
    if (bytes < size) return CUDA_ERROR_OUT_OF_MEMORY;
    std::unique_ptr<GpuMemory> mem(new GpuMemory(*this, GpuMemory::Kind::Video));
    RmClient& rm = this->rm();

    nv::NV_MEMORY_ALLOCATION_PARAMS p{};
    p.owner = rm.handle();
    p.type = nv::NVOS32_TYPE_IMAGE;
    p.flags = nv::NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED | nv::NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED |
              nv::NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE | nv::NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT |
              (opts.cpuMapped ? nv::NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM : 0);
    p.attr = nv::NVOS32_ATTR_PAGE_SIZE.value(nv::NVOS32_ATTR_PAGE_SIZE_HUGE) |
             nv::NVOS32_ATTR_PHYSICALITY.value(opts.contiguous ? nv::NVOS32_ATTR_PHYSICALITY_CONTIGUOUS
                                                               : nv::NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS);
    p.attr2 = nv::NVOS32_ATTR2_ZBC.value(nv::NVOS32_ATTR2_ZBC_PREFER_NO_ZBC) |
              nv::NVOS32_ATTR2_GPU_CACHEABLE.value(nv::NVOS32_ATTR2_GPU_CACHEABLE_YES) |
              nv::NVOS32_ATTR2_PAGE_SIZE_HUGE.value(nv::NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB);
    p.format = nv::NV_MMU_PTE_KIND_GENERIC_MEMORY;
    p.size = bytes;
    p.alignment = kHugePage;
    p.limit = bytes - 1;
    NVL_ASSIGN_OR_RETURN(mem->object_, allocObject(rm, device_.handle(), nv::NV01_MEMORY_LOCAL_USER, &p));
    mem->size_ = bytes;

    bool cpuMapped = opts.cpuMapped;
    auto va = vaSpace().alloc(bytes, kHugePage, cpuMapped ? VaSpace::Use::CpuVisible : VaSpace::Use::GpuOnly);
    if (!va.ok() && cpuMapped && opts.cpuMappingOptional && vaSpace().separateGpuOnly()) {
        cpuMapped = false;
        va = vaSpace().alloc(bytes, kHugePage, VaSpace::Use::GpuOnly);
    }
    if (!va.ok()) return va.status();
    mem->va_ = *va;
    mem->vaReserved_ = true;

    if (cpuMapped) {
        uint32_t flags = nv::NVOS33_FLAGS_CACHING_TYPE.value(nv::NVOS33_FLAGS_CACHING_TYPE_WRITECOMBINED);
        NVL_ASSIGN_OR_RETURN(mem->cpuMapping_,
                             rm.mapMemory(RmClient::MapVia::Device, info_.minor, device_.handle(), mem->object_.handle(), 0, bytes, flags,
                                          reinterpret_cast<void*>(mem->va_)));
        mem->cpu_ = mem->cpuMapping_.map.get();
    }

    NVL_TRY(mapForGpu(*mem, false));
    return mem;
}

Result<std::unique_ptr<GpuMemory>> Gpu::allocHost(size_t size) {
    if (size == 0) return CUDA_ERROR_INVALID_VALUE;
    const size_t bytes = alignUp(size, hostPageSize());
    if (bytes < size || !canPinNew(bytes)) return CUDA_ERROR_OUT_OF_MEMORY;  // no such amount of memory
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return osError(-errno, "mmap(host memory)");
    auto mem = describeHost(p, bytes, true);
    if (!mem.ok()) ::munmap(p, bytes);
    return mem;
}

Result<std::unique_ptr<GpuMemory>> Gpu::registerHost(void* addr, size_t size) {
    // The caller's own pages (they may be resident already: only RAM bounds
    // them); pinning a range larger than RAM could only end in the OOM killer.
    if (size > physicalMemory()) return CUDA_ERROR_OUT_OF_MEMORY;
    return describeHost(addr, size, false);
}

Result<std::unique_ptr<GpuMemory>> Gpu::describeHost(void* addr, size_t size, bool ownsPages) {
    std::unique_ptr<GpuMemory> mem(new GpuMemory(*this, GpuMemory::Kind::Host));
    RmClient& rm = this->rm();
    const uint32_t flags = nv::NVOS02_FLAGS_PHYSICALITY.value(nv::NVOS02_FLAGS_PHYSICALITY_NONCONTIGUOUS) |
                           nv::NVOS02_FLAGS_COHERENCY.value(nv::NVOS02_FLAGS_COHERENCY_CACHED) |
                           nv::NVOS02_FLAGS_MAPPING.value(nv::NVOS02_FLAGS_MAPPING_NO_MAP);
    NVL_ASSIGN_OR_RETURN(uint32_t handle, rm.allocOsDescriptor(deviceFd_.get(), device_.handle(), addr, size, flags));
    mem->object_ = RmObject(&rm, device_.handle(), handle);
    mem->va_ = reinterpret_cast<uint64_t>(addr);
    mem->size_ = size;
    mem->cpu_ = addr;
    NVL_TRY(mapForGpu(*mem, true));
    // Taken only on success: on failure the caller still owns the pages.
    mem->ownsHostPages_ = ownsPages;
    return mem;
}

Status Gpu::mapForGpu(GpuMemory& mem, bool systemMemory) {
    if (usesUvm_) {
        NVL_TRY(uvm().createExternalRange(mem.va_, mem.size_));
        mem.gpuMapped_ = true;
        return uvm().mapExternalAllocation(uuid_, mem.va_, mem.size_, 0, rm().ctlFd(), rm().handle(),
                                           mem.object_.handle());
    }
    const uint32_t flags =
        nv::NVOS46_FLAGS_ACCESS.value(nv::NVOS46_FLAGS_ACCESS_READ_WRITE) |
        nv::NVOS46_FLAGS_PAGE_SIZE.value(systemMemory ? nv::NVOS46_FLAGS_PAGE_SIZE_4KB : nv::NVOS46_FLAGS_PAGE_SIZE_HUGE) |
        nv::NVOS46_FLAGS_CACHE_SNOOP.value(systemMemory ? nv::NVOS46_FLAGS_CACHE_SNOOP_ENABLE
                                                        : nv::NVOS46_FLAGS_CACHE_SNOOP_DISABLE);
    NVL_TRY(rm().mapMemoryDma(device_.handle(), virtualMemory_.handle(), mem.object_.handle(), mem.size_, flags,
                              mem.va_));
    mem.gpuMapped_ = true;
    return kOk;
}

Status Gpu::mapForPeer(GpuMemory& mem) {
    if (&mem.gpu_ == this || mem.kind_ != GpuMemory::Kind::Video) return CUDA_ERROR_INVALID_VALUE;
    for (Gpu* g : mem.peers_)
        if (g == this) return kOk;
    // The peer's video memory at its own address in this GPU's space, read
    // and written through this GPU's peer id for it (the NV50_P2P link).
    const uint32_t flags = nv::NVOS46_FLAGS_ACCESS.value(nv::NVOS46_FLAGS_ACCESS_READ_WRITE) |
                           nv::NVOS46_FLAGS_PAGE_SIZE.value(nv::NVOS46_FLAGS_PAGE_SIZE_HUGE) |
                           nv::NVOS46_FLAGS_P2P_ENABLE.value(nv::NVOS46_FLAGS_P2P_ENABLE_NOSLI);
    NVL_TRY(rm().mapMemoryDma(device_.handle(), virtualMemory_.handle(), mem.object_.handle(), mem.size_, flags,
                              mem.va_));
    mem.peers_.push_back(this);
    return kOk;
}

void Gpu::unmapForPeer(GpuMemory& mem) {
    for (size_t i = 0; i < mem.peers_.size(); ++i) {
        if (mem.peers_[i] != this) continue;
        (void)rm().unmapMemoryDma(device_.handle(), virtualMemory_.handle(), mem.object_.handle(), mem.va_, mem.size_);
        mem.peers_.erase(mem.peers_.begin() + static_cast<std::ptrdiff_t>(i));
        return;
    }
}

void Gpu::unmapForGpu(GpuMemory& mem) {
    // Peers first: their mappings name the memory object.
    while (!mem.peers_.empty()) mem.peers_.back()->unmapForPeer(mem);
    if (!mem.gpuMapped_) return;
    if (usesUvm_) (void)uvm().free(mem.va_, mem.size_);
    else (void)rm().unmapMemoryDma(device_.handle(), virtualMemory_.handle(), mem.object_.handle(), mem.va_, mem.size_);
    mem.gpuMapped_ = false;
}

void Gpu::release(GpuMemory& mem) {
    unmapForGpu(mem);
    if (mem.cpuMapping_.map.get()) {
        // Put the reservation back over the BAR1 mapping instead of leaving a hole.
        mem.cpuMapping_.map.release();
        vaSpace().unmapCpu(mem.va_, mem.size_);
    }
    mem.cpuMapping_.fd.reset();
    mem.object_.reset();
    if (mem.vaReserved_) vaSpace().free(mem.va_, mem.size_);
    if (mem.ownsHostPages_) ::munmap(reinterpret_cast<void*>(mem.va_), mem.size_);
}

GpuMemory::~GpuMemory() { gpu_.release(*this); }

Result<FbUsage> Gpu::fbUsage() {
    auto fb = std::make_unique<nv::NV2080_CTRL_FB_GET_INFO_V2_PARAMS>();
    std::memset(fb.get(), 0, sizeof *fb);
    fb->fbInfoListSize = 2;
    fb->fbInfoList[0].index = nv::NV2080_CTRL_FB_INFO_INDEX_HEAP_SIZE;
    fb->fbInfoList[1].index = nv::NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE;
    NVL_TRY(rm().control(subdevice_.handle(), nv::NV2080_CTRL_CMD_FB_GET_INFO_V2, *fb));
    FbUsage u;
    u.total = static_cast<uint64_t>(fb->fbInfoList[0].data) << 10;
    u.free = static_cast<uint64_t>(fb->fbInfoList[1].data) << 10;
    return u;
}

}  // namespace nvl::hw
