// cuThreadExchangeStreamCaptureMode: the calling thread's stream-capture
// interaction mode, swapped for another. The mode only says which calls a
// capture in progress forbids; nvlite captures no stream (cuStreamBeginCapture
// is not provided, cuStreamIsCapturing always answers NONE), so keeping and
// returning the mode is all there is to do. Runtime programs and frameworks
// set it around allocations (cudaThreadExchangeStreamCaptureMode, PyTorch's
// CUDAStreamCaptureModeGuard).
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/runtime.h"

namespace nvl::api {
namespace {

// A thread starts in CU_STREAM_CAPTURE_MODE_GLOBAL, as in libcuda.
thread_local CUstreamCaptureMode threadCaptureMode = CU_STREAM_CAPTURE_MODE_GLOBAL;

}  // namespace

Status threadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
    NVL_TRY(core::Runtime::get().checkInit());
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    switch (*mode) {
    case CU_STREAM_CAPTURE_MODE_GLOBAL:
    case CU_STREAM_CAPTURE_MODE_THREAD_LOCAL:
    case CU_STREAM_CAPTURE_MODE_RELAXED: break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    const CUstreamCaptureMode previous = threadCaptureMode;
    threadCaptureMode = *mode;
    *mode = previous;
    return kOk;
}

}  // namespace nvl::api
