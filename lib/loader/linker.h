// cuLinkCreate / cuLinkAddData / cuLinkAddFile / cuLinkComplete over
// nvJitLink: PTX, cubin (relocatable or not), fatbin, host object and
// library inputs, linked into one executable cubin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "loader/jit_options.h"

namespace nvl::loader {

namespace jitproc { class Session; }

class Linker {
public:
    // 'jit' holds cuLinkCreate's options; its log buffers and output slots
    // belong to the caller and must stay valid until complete() (libcuda's
    // rule for the optionValues of cuLinkCreate).
    // CUDA_ERROR_JIT_COMPILER_NOT_FOUND without libnvJitLink.
    static Result<std::unique_ptr<Linker>> create(uint32_t smMajor, uint32_t smMinor, const JitOptions& jit);
    ~Linker();

    // cuLinkAddData: CUDA_ERROR_INVALID_VALUE for an unknown type or no data;
    // CUDA_ERROR_INVALID_PTX / INVALID_IMAGE when nvlite's checks
    // (input_check.h) or nvJitLink reject the input.
    // Per-input CU_JIT_* options of cuLinkAddData are not supported by
    // nvJitLink and are ignored by the caller.
    Status add(int type, const void* data, size_t size, const char* name);
    // cuLinkAddFile: the file read by nvlite (readInputFile), then add().
    // CUDA_ERROR_FILE_NOT_FOUND when the file cannot be read.
    Status addFile(int type, const char* path);
    // cuLinkComplete: links and keeps the cubin (valid until the Linker goes).
    Result<const std::vector<uint8_t>*> complete();
    // The options with what the session wrote back (logs, wall time).
    const JitOptions& options() const { return jit_; }

private:
    Linker() = default;
    Status failed(int rc, const std::string& info, const std::string& error, bool ptxInput);

    JitOptions jit_;
    // The nvJitLink session, in a worker process (jit_process.h): a
    // single-threaded one, so every call of the session runs on the same
    // thread whichever thread calls (nvJitLink 13.0 corrupts its heap
    // otherwise).
    std::unique_ptr<jitproc::Session> session_;
    std::vector<uint8_t> cubin_;
    bool completed_ = false;
    double startMs_ = 0;
    uint64_t inputBytes_ = 0;  // so far: the limits grow with them
    bool compiles_ = false;    // PTX or LTO-IR among the inputs
};

}  // namespace nvl::loader
