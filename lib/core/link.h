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
    // The session links for the architecture of ctx's device and outlives
    // ctx, as in libcuda 580 (compat_probe misuse-link: after cuCtxDestroy
    // it still links with no context current, and cuLinkDestroy succeeds).
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

    explicit Link(std::unique_ptr<loader::Linker> l) : linker_(std::move(l)) {}

private:
    std::mutex mutex_;
    bool completed_ = false;  // under mutex_
    // A cubin input that failed: libcuda 580 fails the cuLinkComplete that
    // follows with the same error (other input types do not; compat_probe
    // misuse-link).
    Status failedCubin_ = kOk;  // under mutex_
    std::unique_ptr<loader::Linker> linker_;
};

}  // namespace nvl::core
