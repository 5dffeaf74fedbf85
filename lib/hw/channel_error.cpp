#include "hw/channel_error.h"

#include "defs/rm_classes.h"

namespace nvl::hw {

const char* rcErrorName(uint32_t rcError) {
    switch (rcError) {
    case nv::ROBUST_CHANNEL_GR_EXCEPTION: return "ROBUST_CHANNEL_GR_EXCEPTION";
    case nv::ROBUST_CHANNEL_FAKE_ERROR: return "ROBUST_CHANNEL_FAKE_ERROR";
    case nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT: return "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT";
    case nv::ROBUST_CHANNEL_PBDMA_ERROR: return "ROBUST_CHANNEL_PBDMA_ERROR";
    case nv::ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR: return "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR";
    case nv::ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW: return "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW";
    case nv::ROBUST_CHANNEL_PREEMPTIVE_REMOVAL: return "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL";
    case nv::ROBUST_CHANNEL_GPU_ECC_DBE: return "ROBUST_CHANNEL_GPU_ECC_DBE";
    case nv::ROBUST_CHANNEL_GR_CLASS_ERROR: return "ROBUST_CHANNEL_GR_CLASS_ERROR";
    case nv::ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS: return "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS";
    case nv::ROBUST_CHANNEL_CONTAINED_ERROR: return "ROBUST_CHANNEL_CONTAINED_ERROR";
    case nv::ROBUST_CHANNEL_UNCONTAINED_ERROR: return "ROBUST_CHANNEL_UNCONTAINED_ERROR";
    case nv::ROBUST_CHANNEL_CE0_ERROR:
    case nv::ROBUST_CHANNEL_CE1_ERROR:
    case nv::ROBUST_CHANNEL_CE2_ERROR:
    case nv::ROBUST_CHANNEL_CE3_ERROR:
    case nv::ROBUST_CHANNEL_CE4_ERROR:
    case nv::ROBUST_CHANNEL_CE5_ERROR:
    case nv::ROBUST_CHANNEL_CE6_ERROR:
    case nv::ROBUST_CHANNEL_CE7_ERROR:
    case nv::ROBUST_CHANNEL_CE8_ERROR:
    case nv::ROBUST_CHANNEL_CE9_ERROR:
    case nv::ROBUST_CHANNEL_CE10_ERROR:
    case nv::ROBUST_CHANNEL_CE11_ERROR:
    case nv::ROBUST_CHANNEL_CE12_ERROR:
    case nv::ROBUST_CHANNEL_CE13_ERROR:
    case nv::ROBUST_CHANNEL_CE14_ERROR:
    case nv::ROBUST_CHANNEL_CE15_ERROR:
    case nv::ROBUST_CHANNEL_CE16_ERROR:
    case nv::ROBUST_CHANNEL_CE17_ERROR:
    case nv::ROBUST_CHANNEL_CE18_ERROR:
    case nv::ROBUST_CHANNEL_CE19_ERROR: return "ROBUST_CHANNEL_CEn_ERROR";
    default: return nullptr;
    }
}

Status channelErrorStatus(uint32_t rcError) {
    CUresult code;
    switch (rcError) {
    case nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT:
        code = CUDA_ERROR_ILLEGAL_ADDRESS;
        break;
    case nv::ROBUST_CHANNEL_GPU_ECC_DBE:
    case nv::ROBUST_CHANNEL_CONTAINED_ERROR:
    case nv::ROBUST_CHANNEL_UNCONTAINED_ERROR:
        code = CUDA_ERROR_ECC_UNCORRECTABLE;
        break;
    case nv::ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS:
        code = CUDA_ERROR_DEVICE_UNAVAILABLE;  // as an RM call failing with NV_ERR_GPU_IS_LOST
        break;
    default:
        // ROBUST_CHANNEL_GR_EXCEPTION (SM exceptions: __trap(), illegal
        // instructions), resets, preemptive removal after another channel's
        // error, PBDMA, class and copy-engine errors: libcuda's "unspecified
        // launch failure". Known limit: libcuda tells some SM exceptions
        // apart (misaligned address 716, illegal instruction 715, an
        // out-of-range address 700) from the SM's error state, which RM's
        // notifier does not carry; nvlite reports them all as 719.
        code = CUDA_ERROR_LAUNCH_FAILED;
        break;
    }
    const char* name = rcErrorName(rcError);
    return Status(code, rcError, name ? name : "channel error notifier");
}

}  // namespace nvl::hw
