// Kernel launches: checks a launch against the kernel and the device, lays
// out its parameters, and submits it in the stream. cuLaunchKernel, the
// cooperative and cluster launches of cuLaunchKernelEx and
// cuLaunchCooperativeKernel, and the legacy cuLaunch/cuLaunchGrid all come
// here.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class Function;
class Stream;

struct LaunchRequest {
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t sharedMemBytes;
    void** kernelParams;
    void** extra;
    // Every block resident at once, with a grid-wide barrier for cooperative
    // groups (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE when they do not fit).
    bool cooperative = false;
    // Thread block cluster shape given at launch (zeros: the kernel's own, if any).
    uint32_t cluster[3] = {0, 0, 0};
    // nvlite's own kernels (core/builtin.h): no call graph, so the local
    // memory the kernel reports is all it needs (none), whatever the stack limit.
    bool ownKernel = false;
    // A launch a grid made (core/device_launch.h): the queue it runs with
    // (0: a host launch) and its nesting depth.
    uint64_t launchQueue = 0;
    uint32_t launchDepth = 0;
};

// Loads the function's code if it is not yet (lazy loading), checks and
// submits the launch.
Status launchKernel(Stream& st, Function& f, const LaunchRequest& r);

}  // namespace nvl::core
