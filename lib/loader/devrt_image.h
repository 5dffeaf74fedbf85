// The device runtime's cubins (devrt/devrt.cu, compiled by nvcc -rdc at
// build time for each architecture family nvlite drives), embedded in the
// library.
#pragma once

#include <cstdint>

#include "loader/bytes.h"

namespace nvl::loader::devrt {

// The relocatable cubin whose SASS runs on sm_<sm> (90 for Hopper, 80 for
// Ampere and Ada), or an empty span when there is none.
Bytes embeddedCubin(uint32_t sm);

}  // namespace nvl::loader::devrt
