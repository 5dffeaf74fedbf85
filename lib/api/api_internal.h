// Shared bodies of entry points exported under several names (the _v2
// names, the legacy unsuffixed ones and the per-thread-stream variants).
#pragma once

#include <cstdint>

#include "common/status.h"
#include "core/copy.h"
#include "nvlite/cuda.h"

namespace nvl::api {

Status checkStream(CUstream s);
Status deviceUuid(CUuuid* uuid, CUdevice dev);
Status memcpyHtoD(CUdeviceptr dst, const void* src, size_t n, CUstream s, core::Sync sync);
Status memcpyDtoH(void* dst, CUdeviceptr src, size_t n, CUstream s, core::Sync sync);
Status memcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, core::Sync sync);
Status memcpyAny(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, core::Sync sync);
Status memset(CUdeviceptr dst, uint32_t value, uint32_t elementSize, size_t n, CUstream s, core::Sync sync);

}  // namespace nvl::api
