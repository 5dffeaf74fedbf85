// What several files of lib/api share.
#pragma once

#include "common/status.h"
#include "core/context.h"
#include "core/stream.h"
#include "nvlite/cuda.h"

namespace nvl::api {

// The stream a handle names: NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD
// are the current context's legacy stream (which needs a current context);
// any other live stream is itself, in its own context, whichever context is
// current; anything else is CUDA_ERROR_INVALID_HANDLE. A destroyed or failed
// context answers with its code.
Result<core::Stream*> resolveStream(CUstream s);

// A stream, event or context synchronisation of 'ctx' returned 's': on
// success, memory pools above their release threshold give memory back
// (libcuda's rule for cuMemPool's release threshold).
Status synchronized(core::Context& ctx, Status s);

}  // namespace nvl::api
