// NV_ESC_RM_CONTROL: the control commands the simulated GPU answers. Checks
// in the order RM makes them (src/nvidia/src/kernel/rmapi/control.c and
// libraries/resserv): client, parameter pointer/size against the command's
// known size (NV_ERR_INVALID_ARGUMENT), parameter copy-in, client ownership,
// object, command supported by the object's class (NV_ERR_NOT_SUPPORTED).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "defs/nv_ioctl.h"
#include "defs/nv_status.h"
#include "defs/rm_classes.h"
#include "defs/rm_controls.h"
#include "kdrv/sim/sim_gpu_config.h"
#include "kdrv/sim/sim_state.h"
#include "kdrv/sim/sim_user_memory.h"

namespace nvl::kdrv::sim {
namespace {

struct ControlInfo {
    uint32_t cmd;
    ObjKind kind;  // the object class that implements it
    uint32_t size;
};

const ControlInfo* controlInfo(uint32_t cmd) {
    static const ControlInfo table[] = {
        {nv::NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, ObjKind::Client,
         sizeof(nv::NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS)},
        {nv::NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS, ObjKind::Client, sizeof(nv::NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS)},
        {nv::NV0000_CTRL_CMD_GPU_GET_PROBED_IDS, ObjKind::Client, sizeof(nv::NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS)},
        {nv::NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, ObjKind::Client, sizeof(nv::NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS)},
        {nv::NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2, ObjKind::Client,
         sizeof(nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS)},
        {nv::NV0080_CTRL_CMD_GPU_GET_CLASSLIST, ObjKind::Device, sizeof(nv::NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS)},
        {nv::NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, ObjKind::Device,
         sizeof(nv::NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS)},
        {nv::NV2080_CTRL_CMD_GR_GET_INFO, ObjKind::Subdevice, sizeof(nv::NV2080_CTRL_GR_GET_INFO_PARAMS)},
        {nv::NV2080_CTRL_CMD_GPU_GET_GID_INFO, ObjKind::Subdevice, sizeof(nv::NV2080_CTRL_GPU_GET_GID_INFO_PARAMS)},
        {nv::NV2080_CTRL_CMD_GPU_GET_NAME_STRING, ObjKind::Subdevice,
         sizeof(nv::NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS)},
        {nv::NV2080_CTRL_CMD_FB_GET_INFO_V2, ObjKind::Subdevice, sizeof(nv::NV2080_CTRL_FB_GET_INFO_V2_PARAMS)},
        {nv::NV2080_CTRL_CMD_BUS_GET_PCI_INFO, ObjKind::Subdevice, sizeof(nv::NV2080_CTRL_BUS_GET_PCI_INFO_PARAMS)},
        {nv::NV2080_CTRL_CMD_BUS_GET_INFO_V2, ObjKind::Subdevice, sizeof(nv::NV2080_CTRL_BUS_GET_INFO_V2_PARAMS)},
        {nv::NV2080_CTRL_CMD_GPU_GET_ENGINES_V2, ObjKind::Subdevice,
         sizeof(nv::NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS)},
        {nv::NV2080_CTRL_CMD_CE_GET_CAPS_V2, ObjKind::Subdevice, sizeof(nv::NV2080_CTRL_CE_GET_CAPS_V2_PARAMS)},
        {nv::NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES, ObjKind::Subdevice,
         sizeof(nv::NV2080_CTRL_GPU_QUERY_COMPUTE_MODE_RULES_PARAMS)},
        {nv::NV2080_CTRL_CMD_GPU_GET_SIMULATION_INFO, ObjKind::Subdevice,
         sizeof(nv::NV2080_CTRL_GPU_GET_SIMULATION_INFO_PARAMS)},
        {nv::NV2080_CTRL_CMD_PERF_BOOST, ObjKind::Subdevice, sizeof(nv::NV2080_CTRL_PERF_BOOST_PARAMS)},
        {nv::NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2, ObjKind::Subdevice,
         sizeof(nv::NV2080_CTRL_PERF_GET_LEVEL_INFO_V2_PARAMS)},
        {nv::NVL_CTRL_CMD_PERF_GET_CLOCKS, ObjKind::Subdevice, sizeof(nv::NVL_PERF_GET_CLOCKS_PARAMS)},
        {nv::NVL_CTRL_CMD_CLK_GET_DOMAINS, ObjKind::Subdevice, sizeof(nv::NVL_CLK_GET_DOMAINS_PARAMS)},
        {nv::NV2080_CTRL_CMD_TIMER_GET_TIME, ObjKind::Subdevice, sizeof(nv::NV2080_CTRL_TIMER_GET_TIME_PARAMS)},
        {nv::NV2080_CTRL_CMD_ECC_GET_CLIENT_EXPOSED_COUNTERS, ObjKind::Subdevice,
         sizeof(nv::NV2080_CTRL_ECC_GET_CLIENT_EXPOSED_COUNTERS_PARAMS)},
        {nv::NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, ObjKind::ChannelGroup, sizeof(nv::NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS)},
        {nv::NVA06C_CTRL_CMD_SET_TIMESLICE, ObjKind::ChannelGroup, sizeof(nv::NVA06C_CTRL_SET_TIMESLICE_PARAMS)},
        {nv::NVA06F_CTRL_CMD_GPFIFO_SCHEDULE, ObjKind::Channel, sizeof(nv::NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS)},
        {nv::NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, ObjKind::Channel,
         sizeof(nv::NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS)},
    };
    for (const ControlInfo& c : table)
        if (c.cmd == cmd) return &c;
    return nullptr;
}

// The classes the device lists (NV0080_CTRL_CMD_GPU_GET_CLASSLIST), ascending:
// the ones the sim implements.
const uint32_t kClassList[] = {
    nv::NV01_MEMORY_SYSTEM,      nv::NV01_MEMORY_LOCAL_USER, nv::NV01_MEMORY_VIRTUAL,
    nv::NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, nv::NV01_EVENT_OS_EVENT, nv::NV01_DEVICE_0,
    nv::NV20_SUBDEVICE_0,        nv::GT200_DEBUGGER,         nv::FERMI_CONTEXT_SHARE_A,
    nv::FERMI_VASPACE_A,         nv::KEPLER_CHANNEL_GROUP_A, nv::HOPPER_USERMODE_A,
    nv::HOPPER_CHANNEL_GPFIFO_A, nv::HOPPER_DMA_COPY_A,      nv::HOPPER_COMPUTE_A,
};
constexpr uint32_t kNumClasses = sizeof kClassList / sizeof kClassList[0];

uint32_t grInfo(uint32_t index) {
    switch (index) {
    case nv::NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_COUNT: return config::kTpcCount;
    case nv::NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_SUB_COUNT: return config::kTpcCount;
    case nv::NV2080_CTRL_GR_INFO_INDEX_THREAD_STACK_SCALING_FACTOR: return 1;
    case nv::NV2080_CTRL_GR_INFO_INDEX_SM_REG_BANK_COUNT: return 4;
    case nv::NV2080_CTRL_GR_INFO_INDEX_SM_REG_BANK_REG_COUNT: return 16384;
    case nv::NV2080_CTRL_GR_INFO_INDEX_SM_VERSION: return config::kSmVersion;
    case nv::NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM: return config::kMaxWarpsPerSm;
    case nv::NV2080_CTRL_GR_INFO_INDEX_MAX_THREADS_PER_WARP: return config::kThreadsPerWarp;
    case nv::NV2080_CTRL_GR_INFO_INDEX_FB_MEMORY_REQUEST_GRANULARITY: return 256;
    case nv::NV2080_CTRL_GR_INFO_INDEX_HOST_MEMORY_REQUEST_GRANULARITY: return 128;
    case nv::NV2080_CTRL_GR_INFO_INDEX_MAX_SP_PER_SM: return config::kSpPerSm;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS: return config::kGpcCount;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_FBPS: return config::kFbpCount;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC: return config::kTpcPerGpc;
    case nv::NV2080_CTRL_GR_INFO_INDEX_TIMESLICE_ENABLED: return 1;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_FBPAS: return config::kFbpCount;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_PES_PER_GPC: return 3;
    case nv::NV2080_CTRL_GR_INFO_INDEX_GPU_CORE_COUNT: return config::kCudaCores;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPCS_PER_PES: return 3;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC: return config::kSmPerTpc;
    case nv::NV2080_CTRL_GR_INFO_INDEX_RT_CORE_COUNT: return 0;
    case nv::NV2080_CTRL_GR_INFO_INDEX_TENSOR_CORE_COUNT: return config::kTensorCores;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GRS: return 1;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_LTCS: return config::kLtcCount;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_LTC_SLICES: return config::kLtsCount;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCMMU_PER_GPC: return 1;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_LTC_PER_FBP: return config::kLtcCount / config::kFbpCount;
    case nv::NV2080_CTRL_GR_INFO_INDEX_FAMILY_MAX_TPC_PER_GPC: return config::kTpcPerGpc;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_FBPA_PER_FBP: return 1;
    case nv::NV2080_CTRL_GR_INFO_INDEX_MAX_SUBCONTEXT_COUNT: return config::kMaxSubcontexts;
    case nv::NV2080_CTRL_GR_INFO_INDEX_MAX_LEGACY_SUBCONTEXT_COUNT: return 2;
    case nv::NV2080_CTRL_GR_INFO_INDEX_MAX_PER_ENGINE_SUBCONTEXT_COUNT: return config::kMaxSubcontexts;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SLICES_PER_LTC: return config::kLtsCount / config::kLtcCount;
    case nv::NV2080_CTRL_GR_INFO_INDEX_MAX_MIG_ENGINES: return 8;
    case nv::NV2080_CTRL_GR_INFO_INDEX_MAX_PARTITIONABLE_GPCS: return config::kGpcCount;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_MIN_SUBCTX_PER_SMC_ENG: return 1;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS_PER_DIELET: return config::kGpcCount;
    case nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_MAX_NUM_SMC_ENGINES_PER_DIELET: return 8;
    default: return 0;  // graphics-only facts: none on a compute GPU
    }
}

uint32_t clockKHz(uint32_t domain) {
    switch (domain) {
    case nv::NV2080_CTRL_CLK_DOMAIN_GPCCLK: return config::kSmClockMHz * 1000;
    case nv::NV2080_CTRL_CLK_DOMAIN_MCLK: return config::kMemClockMHz * 1000;
    default: return 0;
    }
}

}  // namespace

uint32_t Sim::rmControl(int fd, SimFile& file, void* data, uint32_t size) {
    if (size != sizeof(nv::NVOS54_PARAMETERS)) return nv::NV_ERR_INVALID_ARGUMENT;
    if (file.type != FileType::Ctl) return nv::NV_ERR_INVALID_ARGUMENT;
    auto* p = static_cast<nv::NVOS54_PARAMETERS*>(data);
    RmClient* c = findClient(p->hClient);
    if (!c) {
        p->status = nv::NV_ERR_INVALID_CLIENT;
        return nv::NV_OK;
    }
    // Raised-IRQL and lock-bypass controls are for kernel clients.
    if (p->flags & (nv::NVOS54_FLAGS_IRQL_RAISED | nv::NVOS54_FLAGS_LOCK_BYPASS)) {
        p->status = nv::NV_ERR_INVALID_ARGUMENT;
        return nv::NV_OK;
    }
    const ControlInfo* info = controlInfo(p->cmd);
    if ((p->paramsSize != 0 && p->params == 0) || (p->paramsSize == 0 && p->params != 0) ||
        (info && p->paramsSize != info->size)) {
        p->status = nv::NV_ERR_INVALID_ARGUMENT;
        return nv::NV_OK;
    }
    if (c->ownerFd != clientOwnerFd(fd, file)) {
        p->status = nv::NV_ERR_INVALID_CLIENT;
        return nv::NV_OK;
    }
    RmObject* obj = findObject(*c, p->hObject);
    if (!obj) {
        p->status = nv::NV_ERR_OBJECT_NOT_FOUND;
        return nv::NV_OK;
    }
    if (!info || info->kind != obj->kind) {
        p->status = nv::NV_ERR_NOT_SUPPORTED;
        return nv::NV_OK;
    }
    p->status = control(*c, *obj, p->cmd, p->params, p->paramsSize);
    return nv::NV_OK;
}

uint32_t Sim::control(RmClient& c, RmObject& obj, uint32_t cmd, uint64_t pParams, uint32_t paramsSize) {
    std::vector<uint8_t> buf(paramsSize);
    if (!copyFromUser(buf.data(), pParams, paramsSize)) return nv::NV_ERR_INVALID_ADDRESS;
    void* params = buf.data();
    uint32_t status = nv::NV_OK;

    switch (cmd) {
    // ---- NV01_ROOT_CLIENT
    case nv::NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2: {
        auto* q = static_cast<nv::NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS*>(params);
        std::memset(q, 0, sizeof *q);
        std::snprintf(q->driverVersionBuffer, sizeof q->driverVersionBuffer, "%s", config::kDriverVersion);
        std::snprintf(q->versionBuffer, sizeof q->versionBuffer, "%s", config::kDriverVersion);
        std::snprintf(q->driverBranch, sizeof q->driverBranch, "r580_00");
        std::snprintf(q->titleBuffer, sizeof q->titleBuffer, "rel/gpu_drv/r580/r580_00-nvlite-sim");
        break;
    }
    case nv::NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS: {
        auto* q = static_cast<nv::NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS*>(params);
        std::fill(std::begin(q->gpuIds), std::end(q->gpuIds), nv::NV0000_CTRL_GPU_INVALID_ID);
        for (uint32_t k = 0; k < gpus_.size(); ++k) q->gpuIds[k] = config::gpuIdOf(k);
        break;
    }
    case nv::NV0000_CTRL_CMD_GPU_GET_PROBED_IDS: {
        auto* q = static_cast<nv::NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS*>(params);
        std::fill(std::begin(q->gpuIds), std::end(q->gpuIds), nv::NV0000_CTRL_GPU_INVALID_ID);
        std::fill(std::begin(q->excludedGpuIds), std::end(q->excludedGpuIds), nv::NV0000_CTRL_GPU_INVALID_ID);
        std::fill(std::begin(q->gpuFlags), std::end(q->gpuFlags), 0u);
        for (uint32_t k = 0; k < gpus_.size(); ++k) q->gpuIds[k] = config::gpuIdOf(k);
        break;
    }
    case nv::NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: {
        auto* q = static_cast<nv::NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS*>(params);
        int k = -1;
        for (uint32_t i = 0; i < gpus_.size(); ++i)
            if (q->gpuId == config::gpuIdOf(i)) k = static_cast<int>(i);
        if (k < 0) {
            status = nv::NV_ERR_INVALID_ARGUMENT;
            break;
        }
        bool inUse = false;
        for (auto& [h, other] : clients_)
            for (auto& [oh, o] : other.objects)
                if (o.kind == ObjKind::Device && o.gpu == k) inUse = true;
        q->gpuFlags = nv::NV0000_CTRL_GPU_ID_INFO_IN_USE.value(inUse) |
                      nv::NV0000_CTRL_GPU_ID_INFO_BOOT_MASTER.value(k == 0 ? nv::NV0000_CTRL_GPU_ID_INFO_BOOT_MASTER_TRUE
                                                                           : 0);
        q->deviceInstance = static_cast<uint32_t>(k);
        q->subDeviceInstance = 0;
        q->sliStatus = 0;
        q->boardId = q->gpuId;
        q->gpuInstance = 0;
        q->numaId = -1;
        break;
    }

    case nv::NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2: {
        // Every pair of distinct GPUs is linked by NVLink (reads, writes,
        // atomics), unless NVLITE_SIM_P2P=0; peer ids are the GPU indices.
        auto* q = static_cast<nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS*>(params);
        const uint32_t n = q->gpuCount;
        if (n == 0 || n > nv::NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS) {
            status = nv::NV_ERR_INVALID_ARGUMENT;
            break;
        }
        int index[nv::NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS];
        for (uint32_t i = 0; i < n && status == nv::NV_OK; ++i) {
            index[i] = -1;
            for (uint32_t k = 0; k < gpus_.size(); ++k)
                if (q->gpuIds[i] == config::gpuIdOf(k)) index[i] = static_cast<int>(k);
            if (index[i] < 0) status = nv::NV_ERR_INVALID_ARGUMENT;
        }
        if (status != nv::NV_OK) break;
        bool distinct = true;
        for (uint32_t i = 0; i < n; ++i)
            for (uint32_t j = i + 1; j < n; ++j) distinct = distinct && index[i] != index[j];
        const bool linked = p2p_ && distinct && n > 1;
        q->p2pCaps = linked ? nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_WRITES_SUPPORTED.value(1) |
                                  nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_READS_SUPPORTED.value(1) |
                                  nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_NVLINK_SUPPORTED.value(1) |
                                  nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_ATOMICS_SUPPORTED.value(1)
                            : 0;
        q->p2pOptimalReadCEs = 0;
        q->p2pOptimalWriteCEs = 0;
        std::fill(std::begin(q->p2pCapsStatus), std::end(q->p2pCapsStatus), linked ? nv::NV0000_P2P_CAPS_STATUS_OK : nv::NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED);
        std::fill(std::begin(q->busPeerIds), std::end(q->busPeerIds), nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_INVALID_PEER);
        std::fill(std::begin(q->busEgmPeerIds), std::end(q->busEgmPeerIds),
                  nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_INVALID_PEER);
        for (uint32_t i = 0; i < n && linked; ++i)
            for (uint32_t j = 0; j < n; ++j)
                if (i != j) q->busPeerIds[i * n + j] = static_cast<uint32_t>(index[j]);
        break;
    }

    // ---- NV01_DEVICE_0
    case nv::NV0080_CTRL_CMD_GPU_GET_CLASSLIST: {
        auto* q = static_cast<nv::NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS*>(params);
        if (q->classList == 0) {
            q->numClasses = kNumClasses;  // the count query
            break;
        }
        const uint32_t fit = std::min(q->numClasses, kNumClasses);
        if (!copyToUser(q->classList, kClassList, size_t{fit} * sizeof kClassList[0])) {
            status = nv::NV_ERR_INVALID_ADDRESS;
            break;
        }
        if (q->numClasses < kNumClasses)
            status = nv::NV_ERR_INVALID_PARAM_STRUCT;  // buffer too small (it is filled as far as it goes)
        else
            q->numClasses = kNumClasses;
        break;
    }
    case nv::NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2: {
        auto* q = static_cast<nv::NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS*>(params);
        std::memset(q, 0, sizeof *q);
        std::copy(std::begin(kClassList), std::end(kClassList), q->classList);
        q->numClasses = kNumClasses;
        break;
    }

    // ---- NV20_SUBDEVICE_0
    case nv::NV2080_CTRL_CMD_GR_GET_INFO: {
        auto* q = static_cast<nv::NV2080_CTRL_GR_GET_INFO_PARAMS*>(params);
        if (q->grInfoListSize == 0 || q->grInfoListSize > nv::NV2080_CTRL_GR_INFO_MAX_SIZE) {
            status = nv::NV_ERR_INVALID_ARGUMENT;
            break;
        }
        std::vector<nv::NV2080_CTRL_GR_INFO> list(q->grInfoListSize);
        if (!copyFromUser(list.data(), q->grInfoList, list.size() * sizeof list[0])) {
            status = nv::NV_ERR_INVALID_ADDRESS;
            break;
        }
        for (auto& e : list) {
            if (e.index >= nv::NV2080_CTRL_GR_INFO_MAX_SIZE) {
                status = nv::NV_ERR_INVALID_ARGUMENT;
                break;
            }
            e.data = grInfo(e.index);
        }
        if (status == nv::NV_OK && !copyToUser(q->grInfoList, list.data(), list.size() * sizeof list[0]))
            status = nv::NV_ERR_INVALID_ADDRESS;
        break;
    }
    case nv::NV2080_CTRL_CMD_GPU_GET_GID_INFO: {
        auto* q = static_cast<nv::NV2080_CTRL_GPU_GET_GID_INFO_PARAMS*>(params);
        if (q->index != 0 ||
            nv::NV2080_GPU_CMD_GPU_GET_GID_FLAGS_TYPE.get(q->flags) != nv::NV2080_GPU_CMD_GPU_GET_GID_FLAGS_TYPE_SHA1) {
            status = nv::NV_ERR_INVALID_ARGUMENT;
            break;
        }
        std::memset(q->data, 0, sizeof q->data);
        const uint32_t format = static_cast<uint32_t>(nv::NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT.get(q->flags));
        // GPU k: byte kUuidGpuByte of the UUID is '0' + k (two hex digits in the string).
        const uint8_t gpuByte = static_cast<uint8_t>('0' + std::max(obj.gpu, 0));
        if (format == nv::NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY) {
            std::memcpy(q->data, config::kUuid, sizeof config::kUuid);
            q->data[config::kUuidGpuByte] = gpuByte;
            q->length = sizeof config::kUuid;
        } else if (format == nv::NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_ASCII) {
            std::memcpy(q->data, config::kUuidString, sizeof config::kUuidString);
            // "GPU-" + 8 + "-" + 4 + "-" + 4 + "-" + 4 + "-": byte 14 is at 4+8+1+4+1+4+1+4+1 + 2*4.
            char hex[3];
            std::snprintf(hex, sizeof hex, "%02x", gpuByte);
            std::memcpy(q->data + 36, hex, 2);
            q->length = sizeof config::kUuidString;  // with the NUL
        } else {
            status = nv::NV_ERR_INVALID_ARGUMENT;
        }
        break;
    }
    case nv::NV2080_CTRL_CMD_GPU_GET_NAME_STRING: {
        auto* q = static_cast<nv::NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS*>(params);
        std::memset(&q->gpuNameString, 0, sizeof q->gpuNameString);
        if (q->gpuNameStringFlags == nv::NV2080_CTRL_GPU_GET_NAME_STRING_FLAGS_TYPE_ASCII) {
            std::memcpy(q->gpuNameString.ascii, config::kGpuName, sizeof config::kGpuName);
        } else if (q->gpuNameStringFlags == nv::NV2080_CTRL_GPU_GET_NAME_STRING_FLAGS_TYPE_UNICODE) {
            for (size_t i = 0; i + 1 < sizeof config::kGpuName; ++i)
                q->gpuNameString.unicode[i] = static_cast<uint16_t>(config::kGpuName[i]);
        } else {
            status = nv::NV_ERR_INVALID_ARGUMENT;
        }
        break;
    }
    case nv::NV2080_CTRL_CMD_FB_GET_INFO_V2: {
        auto* q = static_cast<nv::NV2080_CTRL_FB_GET_INFO_V2_PARAMS*>(params);
        if (q->fbInfoListSize > nv::NV2080_CTRL_FB_INFO_MAX_LIST_SIZE) {
            status = nv::NV_ERR_INVALID_ARGUMENT;
            break;
        }
        const uint64_t totalKb = vidmemBytes_ >> 10;
        const uint64_t freeKb = (vidmemBytes_ - vidmemUsed(static_cast<size_t>(std::max(obj.gpu, 0)))) >> 10;
        for (uint32_t i = 0; i < q->fbInfoListSize && status == nv::NV_OK; ++i) {
            nv::NV2080_CTRL_FB_INFO& e = q->fbInfoList[i];
            uint64_t v = 0;
            switch (e.index) {
            case nv::NV2080_CTRL_FB_INFO_INDEX_RAM_SIZE:
            case nv::NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE:
            case nv::NV2080_CTRL_FB_INFO_INDEX_USABLE_RAM_SIZE:
            case nv::NV2080_CTRL_FB_INFO_INDEX_HEAP_SIZE:
            case nv::NV2080_CTRL_FB_INFO_INDEX_MAPPABLE_HEAP_SIZE:
                v = totalKb;
                break;
            case nv::NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE:
            case nv::NV2080_CTRL_FB_INFO_INDEX_LARGEST_FREE_REGION_SIZE_KB:
                v = freeKb;
                break;
            case nv::NV2080_CTRL_FB_INFO_INDEX_BAR1_SIZE:
            case nv::NV2080_CTRL_FB_INFO_INDEX_BAR1_AVAIL_SIZE:
            case nv::NV2080_CTRL_FB_INFO_INDEX_BAR1_MAX_CONTIGUOUS_AVAIL_SIZE:
                v = config::kFbBarSize >> 10;
                break;
            case nv::NV2080_CTRL_FB_INFO_INDEX_BUS_WIDTH: v = config::kBusWidthBits; break;
            case nv::NV2080_CTRL_FB_INFO_INDEX_RAM_TYPE: v = nv::NV2080_CTRL_FB_INFO_RAM_TYPE_HBM3; break;
            case nv::NV2080_CTRL_FB_INFO_INDEX_L2CACHE_SIZE: v = config::kL2CacheBytes; break;
            case nv::NV2080_CTRL_FB_INFO_INDEX_FBP_COUNT:
            case nv::NV2080_CTRL_FB_INFO_INDEX_PARTITION_COUNT:
                v = config::kFbpCount;
                break;
            case nv::NV2080_CTRL_FB_INFO_INDEX_FBP_MASK:
            case nv::NV2080_CTRL_FB_INFO_INDEX_PARTITION_MASK:
                v = (1u << config::kFbpCount) - 1;
                break;
            case nv::NV2080_CTRL_FB_INFO_INDEX_LTC_COUNT: v = config::kLtcCount; break;
            case nv::NV2080_CTRL_FB_INFO_INDEX_LTS_COUNT: v = config::kLtsCount; break;
            case nv::NV2080_CTRL_FB_INFO_INDEX_RAM_LOCATION: v = nv::NV2080_CTRL_FB_INFO_RAM_LOCATION_GPU_DEDICATED; break;
            case nv::NV2080_CTRL_FB_INFO_INDEX_NUMA_NODE_ID: v = 0xffffffffu; break;
            default:
                if (e.index > nv::NV2080_CTRL_FB_INFO_INDEX_MAX) status = nv::NV_ERR_INVALID_ARGUMENT;
                break;
            }
            e.data = static_cast<uint32_t>(v);
        }
        break;
    }
    case nv::NV2080_CTRL_CMD_BUS_GET_PCI_INFO: {
        auto* q = static_cast<nv::NV2080_CTRL_BUS_GET_PCI_INFO_PARAMS*>(params);
        q->pciDeviceId = (uint32_t{config::kPciDeviceId} << 16) | config::kPciVendorId;
        q->pciSubSystemId = config::kPciSubSystemId;
        q->pciRevisionId = config::kPciRevisionId;
        q->pciExtDeviceId = config::kPciDeviceId;
        break;
    }
    case nv::NV2080_CTRL_CMD_BUS_GET_INFO_V2: {
        auto* q = static_cast<nv::NV2080_CTRL_BUS_GET_INFO_V2_PARAMS*>(params);
        if (q->busInfoListSize > nv::NV2080_CTRL_BUS_INFO_MAX_LIST_SIZE) {
            status = nv::NV_ERR_INVALID_ARGUMENT;
            break;
        }
        const uint32_t linkCaps =
            nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_MAX_SPEED.value(nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_MAX_SPEED_32000MBPS) |
            nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_MAX_WIDTH.value(16) |
            nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_GEN.value(nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_GEN_GEN5) |
            nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_CURR_LEVEL.value(nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_CURR_LEVEL_GEN5) |
            nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_GPU_GEN.value(nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP_GPU_GEN_GEN5);
        const uint32_t linkStatus =
            nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CTRL_STATUS_LINK_SPEED.value(
                nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CTRL_STATUS_LINK_SPEED_32000MBPS) |
            nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CTRL_STATUS_LINK_WIDTH.value(
                nv::NV2080_CTRL_BUS_INFO_PCIE_LINK_CTRL_STATUS_LINK_WIDTH_X16);
        for (uint32_t i = 0; i < q->busInfoListSize; ++i) {
            nv::NV2080_CTRL_BUS_INFO& e = q->busInfoList[i];
            switch (e.index) {
            case nv::NV2080_CTRL_BUS_INFO_INDEX_PCIE_GPU_LINK_CAPS:
            case nv::NV2080_CTRL_BUS_INFO_INDEX_PCIE_ROOT_LINK_CAPS:
                e.data = linkCaps;
                break;
            case nv::NV2080_CTRL_BUS_INFO_INDEX_PCIE_GPU_LINK_CTRL_STATUS:
            case nv::NV2080_CTRL_BUS_INFO_INDEX_PCIE_ROOT_LINK_CTRL_STATUS:
                e.data = linkStatus;
                break;
            case nv::NV2080_CTRL_BUS_INFO_INDEX_BUS_NUMBER: e.data = config::kPciBuses[std::max(obj.gpu, 0)]; break;
            case nv::NV2080_CTRL_BUS_INFO_INDEX_DEVICE_NUMBER: e.data = config::kPciSlot; break;
            case nv::NV2080_CTRL_BUS_INFO_INDEX_DOMAIN_NUMBER: e.data = config::kPciDomain; break;
            default:
                if (e.index > nv::NV2080_CTRL_BUS_INFO_INDEX_MAX) status = nv::NV_ERR_INVALID_ARGUMENT;
                e.data = 0;
                break;
            }
        }
        break;
    }
    case nv::NV2080_CTRL_CMD_GPU_GET_ENGINES_V2: {
        auto* q = static_cast<nv::NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS*>(params);
        std::memset(q, 0, sizeof *q);
        q->engineList[q->engineCount++] = nv::NV2080_ENGINE_TYPE_GRAPHICS;
        for (uint32_t i = 0; i < config::kCopyEngineCount; ++i)
            q->engineList[q->engineCount++] = nv::NV2080_ENGINE_TYPE_COPY(i);
        break;
    }
    case nv::NV2080_CTRL_CMD_CE_GET_CAPS_V2: {
        auto* q = static_cast<nv::NV2080_CTRL_CE_GET_CAPS_V2_PARAMS*>(params);
        if (!nv::NV2080_ENGINE_TYPE_IS_COPY(q->ceEngineType) ||
            nv::NV2080_ENGINE_TYPE_COPY_IDX(q->ceEngineType) >= config::kCopyEngineCount) {
            status = nv::NV_ERR_INVALID_ARGUMENT;
            break;
        }
        std::memset(q->capsTbl, 0, sizeof q->capsTbl);
        if (nv::NV2080_ENGINE_TYPE_COPY_IDX(q->ceEngineType) < config::kGrCopyEngineCount)
            q->capsTbl[nv::NV2080_CTRL_CE_CAPS_CE_GRCE_BYTE] |= nv::NV2080_CTRL_CE_CAPS_CE_GRCE_MASK;
        break;
    }
    case nv::NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES:
        static_cast<nv::NV2080_CTRL_GPU_QUERY_COMPUTE_MODE_RULES_PARAMS*>(params)->rules =
            nv::NV2080_CTRL_GPU_COMPUTE_MODE_RULES_NONE;
        break;
    case nv::NV2080_CTRL_CMD_GPU_GET_SIMULATION_INFO:
        // The sim plays silicon: the library must not take simulator paths.
        static_cast<nv::NV2080_CTRL_GPU_GET_SIMULATION_INFO_PARAMS*>(params)->type =
            nv::NV2080_CTRL_GPU_GET_SIMULATION_INFO_TYPE_NONE;
        break;
    case nv::NV2080_CTRL_CMD_PERF_BOOST: {
        auto* q = static_cast<nv::NV2080_CTRL_PERF_BOOST_PARAMS*>(params);
        if (nv::NV2080_CTRL_PERF_BOOST_FLAGS_CMD.get(q->flags) > nv::NV2080_CTRL_PERF_BOOST_FLAGS_CMD_BOOST_TO_MAX ||
            (q->duration > nv::NV2080_CTRL_PERF_BOOST_DURATION_MAX &&
             q->duration != nv::NV2080_CTRL_PERF_BOOST_DURATION_INFINITE))
            status = nv::NV_ERR_INVALID_ARGUMENT;
        break;
    }
    case nv::NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2: {
        auto* q = static_cast<nv::NV2080_CTRL_PERF_GET_LEVEL_INFO_V2_PARAMS*>(params);
        if (q->level > 1 || q->perfGetClkInfoListSize > nv::NV2080_CTRL_PERF_CLK_MAX_DOMAINS) {
            status = nv::NV_ERR_INVALID_ARGUMENT;
            break;
        }
        for (uint32_t i = 0; i < q->perfGetClkInfoListSize; ++i) {
            nv::NV2080_CTRL_PERF_GET_CLK_INFO& e = q->perfGetClkInfoList[i];
            const uint32_t max = clockKHz(e.domain);
            e.currentFreq = e.defaultFreq = e.maxFreq = max;
            e.minFreq = e.domain == nv::NV2080_CTRL_CLK_DOMAIN_GPCCLK ? 345000 : max;
        }
        break;
    }
    case nv::NVL_CTRL_CMD_PERF_GET_CLOCKS: {
        auto* q = static_cast<nv::NVL_PERF_GET_CLOCKS_PARAMS*>(params);
        if (q->numDomains > nv::NVL_PERF_GET_CLOCKS_MAX_DOMAINS) {
            status = nv::NV_ERR_INVALID_ARGUMENT;
            break;
        }
        q->unknown[0] = 3;  // what an H200 returned
        q->unknown[1] = 4;
        q->unknown[2] = 1;
        for (uint32_t i = 0; i < q->numDomains; ++i) q->domains[i].freqKHz = clockKHz(q->domains[i].clkDomain);
        break;
    }
    case nv::NVL_CTRL_CMD_CLK_GET_DOMAINS:
        static_cast<nv::NVL_CLK_GET_DOMAINS_PARAMS*>(params)->clkDomains = 0x003C0017;  // as the H200
        break;
    case nv::NV2080_CTRL_CMD_TIMER_GET_TIME:
        static_cast<nv::NV2080_CTRL_TIMER_GET_TIME_PARAMS*>(params)->time_nsec = gpu_.now();
        break;
    case nv::NV2080_CTRL_CMD_ECC_GET_CLIENT_EXPOSED_COUNTERS:
        std::memset(params, 0, paramsSize);
        break;

    // ---- KEPLER_CHANNEL_GROUP_A
    case nv::NVA06C_CTRL_CMD_GPFIFO_SCHEDULE: {
        const bool enable = static_cast<nv::NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS*>(params)->bEnable != 0;
        obj.scheduled = enable;
        for (uint32_t h : obj.children)
            if (RmObject* child = findObject(c, h); child && child->channel) child->channel->scheduled = enable;
        gpu_.kick();
        break;
    }
    case nv::NVA06C_CTRL_CMD_SET_TIMESLICE:
        break;

    // ---- HOPPER_CHANNEL_GPFIFO_A
    case nv::NVA06F_CTRL_CMD_GPFIFO_SCHEDULE:
        obj.channel->scheduled = static_cast<nv::NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS*>(params)->bEnable != 0;
        gpu_.kick();
        break;
    case nv::NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN:
        static_cast<nv::NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS*>(params)->workSubmitToken =
            obj.channel->workSubmitToken;
        break;

    default:
        status = nv::NV_ERR_NOT_SUPPORTED;
        break;
    }
    // RM copies the parameters back whether or not the command succeeded.
    if (!copyToUser(pParams, buf.data(), paramsSize) && status == nv::NV_OK) status = nv::NV_ERR_INVALID_ADDRESS;
    return status;
}

}  // namespace nvl::kdrv::sim
