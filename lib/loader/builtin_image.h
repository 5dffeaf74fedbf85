// The built-in kernels' cubins (builtin/kernels.cu, compiled with NVRTC at
// build time for every architecture nvlite drives), embedded in the library.
#pragma once

#include <cstdint>

#include "loader/bytes.h"

namespace nvl::loader::builtin {

// The cubin for sm_<sm> (80, 86, 89 or 90), else the newest one of the same
// major version not newer than it, else an empty span.
Bytes embeddedCubin(uint32_t sm);

}  // namespace nvl::loader::builtin
