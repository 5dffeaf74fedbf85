// PTX compilation and device linking through nvJitLink, with libcuda's
// error codes and log handling.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "loader/bytes.h"
#include "loader/jit_process.h"
#include "loader/jit_options.h"

namespace nvl::loader {

// The architecture JIT output is built for: CU_JIT_TARGET if given, else the
// GPU's, arch-specific ("sm_90a") from sm_90 on, as libcuda does (its info
// log on the H200 says "Compiling entry function ... for 'sm_90a'").
struct JitTarget {
    uint32_t sm;
    bool archSpecific;
};
JitTarget jitTarget(const JitOptions& jit, uint32_t gpuSm);

// PTX text -> executable cubin. Publishes the logs into 'jit'.
// CUDA_ERROR_JIT_COMPILER_NOT_FOUND without libnvJitLink, CUDA_ERROR_INVALID_PTX
// for PTX that does not compile, CUDA_ERROR_UNSUPPORTED_PTX_VERSION for a PTX
// ISA newer than the compiler.
Result<std::vector<uint8_t>> compilePtx(std::string_view ptx, uint32_t gpuSm, JitOptions& jit);

// A relocatable cubin (ET_REL, nvcc -rdc -cubin) -> executable cubin, which
// libcuda also accepts in cuModuleLoadData.
Result<std::vector<uint8_t>> linkRelocatable(Bytes cubin, uint32_t gpuSm, JitOptions& jit);

// What a worker may use for a call on 'inputBytes' of input that compiles
// (PTX, LTO-IR) or only links: 60 s + 60 s per MiB to compile, 10 s + 10 s
// per MiB to link, 8 GiB + 32 bytes per input byte of address space.
// NVLITE_JIT_TIME_LIMIT (seconds) and NVLITE_JIT_MEMORY_LIMIT (MiB) replace them.
jitproc::Limits jitLimits(uint64_t inputBytes, bool compiles);

// Fuzzing: with true, every compile and link answers
// CUDA_ERROR_JIT_COMPILER_NOT_FOUND at once (no worker is started).
void setJitDisabledForTesting(bool disabled);
bool jitDisabledForTesting();

// CUresult for a failed nvJitLink call (or a failed worker: jitproc::kWorkerFailed).
CUresult jitError(int nvJitLinkResult, std::string_view errorLog, bool ptxInput);

}  // namespace nvl::loader
