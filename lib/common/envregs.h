// What nvlite keeps in a grid's environment registers (%envreg0..31, words
// of constant bank 0 the launch writes: hw/compute.cpp), for its device
// runtime to read (devrt/devrt.cu). Included by the device source too.
#pragma once

#include <stdint.h>

namespace nvl::envreg {

// Cooperative groups' grid workspace (0 outside cooperative launches).
inline constexpr uint32_t kGridWorkspaceHigh = 1;
inline constexpr uint32_t kGridWorkspaceLow = 2;
// A grid that launches kernels: its launch queue (core/devrt_abi.h; 0: none)
// and nesting depth (0: launched by the host).
inline constexpr uint32_t kLaunchQueueHigh = 3;
inline constexpr uint32_t kLaunchQueueLow = 4;
inline constexpr uint32_t kLaunchDepth = 5;

}  // namespace nvl::envreg
