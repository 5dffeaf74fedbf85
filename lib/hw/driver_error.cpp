#include "hw/driver_error.h"

#include <cerrno>
#include <cstring>

#include "common/trace.h"
#include "defs/nv_status.h"

namespace nvl::hw {

Status rmError(uint32_t nvStatus, const char* where) {
    CUresult code;
    switch (nvStatus) {
    case nv::NV_ERR_NO_MEMORY:
    case nv::NV_ERR_INSUFFICIENT_RESOURCES:
        code = CUDA_ERROR_OUT_OF_MEMORY;
        break;
    case nv::NV_ERR_GPU_IS_LOST:
    case nv::NV_ERR_GPU_IN_FULLCHIP_RESET:
        code = CUDA_ERROR_DEVICE_UNAVAILABLE;
        break;
    case nv::NV_ERR_INSUFFICIENT_PERMISSIONS:
        code = CUDA_ERROR_NOT_PERMITTED;
        break;
    default:
        code = CUDA_ERROR_UNKNOWN;
        break;
    }
    if (trace::driver()) {
        const char* name = nv::nvStatusName(nvStatus);
        trace::print("%s failed: %s (0x%x)", where, name ? name : "unknown NV_STATUS", nvStatus);
    }
    return Status(code, nvStatus, where);
}

Status osError(int negErrno, const char* where) {
    int err = -negErrno;
    if (trace::driver()) trace::print("%s failed: %s", where, std::strerror(err));
    CUresult code = err == ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_OPERATING_SYSTEM;
    return Status(code, 0, where);
}

}  // namespace nvl::hw
