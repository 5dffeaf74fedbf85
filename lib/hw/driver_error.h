// Turning kernel-driver failures into Status values.
#pragma once

#include <cstdint>

#include "common/status.h"

namespace nvl::hw {

// A call the driver answered with an NV_STATUS other than NV_OK.
Status rmError(uint32_t nvStatus, const char* where);
// An ioctl/open/mmap the kernel refused (negative errno).
Status osError(int negErrno, const char* where);

}  // namespace nvl::hw
