// cuLinkCreate / cuLinkAddData / cuLinkAddFile / cuLinkComplete over
// nvJitLink: PTX, cubin (relocatable or not), fatbin, host object and
// library inputs, linked into one executable cubin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "loader/jit_options.h"

namespace nvl::loader {

namespace nvjitlink { class Session; }
class SessionThread;

class Linker {
public:
    // 'jit' holds cuLinkCreate's options; its log buffers and output slots
    // belong to the caller and must stay valid until complete() (libcuda's
    // rule for the optionValues of cuLinkCreate).
    // CUDA_ERROR_JIT_COMPILER_NOT_FOUND without libnvJitLink.
    static Result<std::unique_ptr<Linker>> create(uint32_t smMajor, uint32_t smMinor, const JitOptions& jit);
    ~Linker();

    // cuLinkAddData: CUDA_ERROR_INVALID_VALUE for an unknown type or no data;
    // CUDA_ERROR_INVALID_PTX / INVALID_IMAGE when nvJitLink rejects the input.
    // Per-input CU_JIT_* options of cuLinkAddData are not supported by
    // nvJitLink and are ignored by the caller.
    Status add(CUjitInputType type, const void* data, size_t size, const char* name);
    // cuLinkAddFile: CUDA_ERROR_FILE_NOT_FOUND when the file cannot be read.
    Status addFile(CUjitInputType type, const char* path);
    // cuLinkComplete: links and keeps the cubin (valid until the Linker goes).
    Result<const std::vector<uint8_t>*> complete();
    // The options with what the session wrote back (logs, wall time).
    const JitOptions& options() const { return jit_; }

private:
    Linker();
    Status failed(int rc, bool ptxInput);

    JitOptions jit_;
    // nvJitLink 13.0 crashes (heap corruption) when a handle that took PTX is
    // completed or destroyed on another thread than the one that added it,
    // and cuLink* calls may come from any thread: every call of the session
    // runs on this thread of its own.
    std::unique_ptr<SessionThread> thread_;
    std::unique_ptr<nvjitlink::Session> session_;
    std::vector<uint8_t> cubin_;
    bool completed_ = false;
    double startMs_ = 0;
};

}  // namespace nvl::loader
