// What the RC error RM writes into a torn-down channel's error notifier means
// to a CUDA program.
//
// When RM (on Hopper: GSP-RM's channel teardown) recovers from a fault, it
// fills NvNotification[NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR] of every
// channel of the faulting channel's TSG: info32 = the ROBUST_CHANNEL_* code
// (the Xid the kernel log shows), info16 = the NV2080_ENGINE_TYPE of the
// engine, status = 0xffff, written last (krcErrorSetNotifier,
// notifyFillNvNotification). Channels of other TSGs keep running.
#pragma once

#include <cstdint>

#include "common/status.h"

namespace nvl::hw {

// The CUresult libcuda gives for a channel torn down with RC error 'rcError':
// ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT (an unmapped or freed address touched
// by a kernel, a copy or a semaphore) is CUDA_ERROR_ILLEGAL_ADDRESS,
// ROBUST_CHANNEL_GR_EXCEPTION (an SM exception such as __trap()) and every
// other channel error CUDA_ERROR_LAUNCH_FAILED, uncorrectable ECC errors
// CUDA_ERROR_ECC_UNCORRECTABLE. The Status carries the code in
// driverStatus() and its ROBUST_CHANNEL_* name in where().
Status channelErrorStatus(uint32_t rcError);

// The ROBUST_CHANNEL_* name of an RC error, or nullptr for one we do not name.
const char* rcErrorName(uint32_t rcError);

}  // namespace nvl::hw
