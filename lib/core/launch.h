// cuLaunchKernel's work: checks a launch against the kernel and the device,
// lays out its parameters, and submits it in the stream.
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
};

Status launchKernel(Stream& st, Function& f, const LaunchRequest& r);

}  // namespace nvl::core
