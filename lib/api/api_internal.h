// Shared bodies of entry points exported under several names (the _v2
// names, the legacy unsuffixed ones and the per-thread-stream variants).
#pragma once

#include <cstdint>

#include "common/status.h"
#include "core/context.h"
#include "core/copy.h"
#include "core/stream.h"
#include "nvlite/cuda.h"

namespace nvl::api {

// The stream a handle names: NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD
// are the current context's legacy stream (which needs a current context);
// any other live stream is itself, in its own context, whichever context is
// current; anything else is CUDA_ERROR_INVALID_HANDLE. A destroyed or failed
// context answers with its code.
Result<core::Stream*> resolveStream(CUstream s);
Status deviceUuid(CUuuid* uuid, CUdevice dev);
Status memcpyHtoD(CUdeviceptr dst, const void* src, size_t n, CUstream s, core::Sync sync);
Status memcpyDtoH(void* dst, CUdeviceptr src, size_t n, CUstream s, core::Sync sync);
Status memcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, core::Sync sync);
Status memcpyAny(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, core::Sync sync);
Status memset(CUdeviceptr dst, uint32_t value, uint32_t elementSize, size_t n, CUstream s, core::Sync sync);

}  // namespace nvl::api
