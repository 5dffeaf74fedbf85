// cuLink*: a linker session turning PTX, cubins and fatbins into one cubin.
#pragma once

#include <cstddef>
#include <memory>

#include "common/status.h"
#include "loader/linker.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class Context;

class Link {
public:
    // 'jit' keeps the caller's log buffers and output slots (cuLinkCreate's
    // optionValues must stay valid until cuLinkDestroy, as in libcuda).
    static Result<Link*> create(Context& ctx, const loader::JitOptions& jit);
    // The live session behind a handle, or nullptr.
    static Link* fromHandle(CUlinkState s);
    static void destroy(Link* link);
    CUlinkState handle() { return reinterpret_cast<CUlinkState>(this); }

    Status add(CUjitInputType type, const void* data, size_t size, const char* name);
    Status addFile(CUjitInputType type, const char* path);
    // The linked cubin (valid until destroy).
    Status complete(void** cubin, size_t* size);

private:
    explicit Link(std::unique_ptr<loader::Linker> l) : linker_(std::move(l)) {}
    std::unique_ptr<loader::Linker> linker_;
};

}  // namespace nvl::core
