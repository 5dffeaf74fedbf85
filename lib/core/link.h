// cuLink*: a linker session turning PTX, cubins and fatbins into one cubin.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>

#include "common/status.h"
#include "loader/linker.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class Context;

class Link {
public:
    // 'jit' keeps the caller's log buffers and output slots (cuLinkCreate's
    // optionValues must stay valid until cuLinkDestroy, as in libcuda).
    // The session belongs to 'ctx': cuCtxDestroy destroys it too.
    static Result<CUlinkState> create(Context& ctx, const loader::JitOptions& jit);
    // The live session behind a handle, kept alive while the caller holds
    // it (a cuLinkDestroy on another thread cannot free it underneath); or
    // CUDA_ERROR_INVALID_HANDLE.
    static Result<std::shared_ptr<Link>> fromHandle(CUlinkState s);
    // Ends the session; CUDA_ERROR_INVALID_HANDLE when it is not a live one.
    static Status destroy(CUlinkState s);

    // One call at a time per session.
    Status add(int type, const void* data, size_t size, const char* name);
    Status addFile(int type, const char* path);
    // The linked cubin (valid until destroy).
    Status complete(void** cubin, size_t* size);

    Link(std::unique_ptr<loader::Linker> l, std::shared_ptr<Context> ctx)
        : linker_(std::move(l)), ctx_(std::move(ctx)) {}

private:
    std::mutex mutex_;
    bool completed_ = false;  // under mutex_
    std::unique_ptr<loader::Linker> linker_;
    std::shared_ptr<Context> ctx_;
};

}  // namespace nvl::core
