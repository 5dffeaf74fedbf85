// What several files of lib/api share.
#pragma once

#include "common/status.h"
#include "core/launch.h"
#include "core/context.h"
#include "core/stream.h"
#include "nvlite/cuda.h"

namespace nvl::core {
class Context;
class Function;
}  // namespace nvl::core

namespace nvl::api {

// The stream a handle names: NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD
// are the current context's legacy stream (which needs a current context);
// any other live stream is itself, in its own context, whichever context is
// current; anything else is CUDA_ERROR_INVALID_HANDLE. A destroyed or failed
// context answers with its code.
Result<core::Stream*> resolveStream(CUstream s);

// The function a CUfunction handle names: one of ours whose module is
// loaded; for the launch and occupancy calls (KernelAsFunction::Accepted), as
// in libcuda, also a CUkernel (lib/core/library.h), whose function in 'ctx'
// (the current context when null) it stands for. Anything else is
// CUDA_ERROR_INVALID_HANDLE.
enum class KernelAsFunction { Refused, Accepted };
Result<core::Function*> resolveFunction(CUfunction f, KernelAsFunction kernels = KernelAsFunction::Refused,
                                        core::Context* ctx = nullptr);
// Every launch entry point's last step: the stream, the function in its
// context, the launch.
Status launchOn(CUstream stream, CUfunction f, const core::LaunchRequest& r);
// A stream, event or context synchronisation of 'ctx' returned 's': on
// success, memory pools above their release threshold give memory back
// (libcuda's rule for cuMemPool's release threshold).
Status synchronized(core::Context& ctx, Status s);

}  // namespace nvl::api
