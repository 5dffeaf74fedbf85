// What cuModuleLoadDataEx / cuLinkCreate's CU_JIT_* options ask for, and the
// outputs (logs, wall time) that libcuda writes back into the caller's
// optionValues array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace nvl::loader {

struct JitOptions {
    // CU_JIT_INFO_LOG_BUFFER(_SIZE_BYTES), CU_JIT_ERROR_LOG_BUFFER(_SIZE_BYTES).
    char* infoLog = nullptr;
    size_t infoLogSize = 0;
    char* errorLog = nullptr;
    size_t errorLogSize = 0;

    int optimizationLevel = -1;      // CU_JIT_OPTIMIZATION_LEVEL 0..4; -1: default (4)
    unsigned maxRegisters = 0;       // CU_JIT_MAX_REGISTERS; 0: no limit
    unsigned targetSm = 0;           // CU_JIT_TARGET as major*10+minor; 0: the context's device
    bool targetArchSpecific = false; // CU_JIT_TARGET ...A (sm_90a)
    bool preferBinary = false;       // CU_JIT_FALLBACK_STRATEGY == CU_PREFER_BINARY
    bool debugInfo = false;          // CU_JIT_GENERATE_DEBUG_INFO
    bool lineInfo = false;           // CU_JIT_GENERATE_LINE_INFO
    bool verbose = false;            // CU_JIT_LOG_VERBOSE
    bool lto = false;                // CU_JIT_LTO
    int cacheMode = 0;               // CU_JIT_CACHE_MODE (CUjit_cacheMode)
    int ftz = -1, precDiv = -1, precSqrt = -1, fma = -1;  // CU_JIT_FTZ/PREC_DIV/PREC_SQRT/FMA; -1 unset
    unsigned maxThreadsPerBlock = 0; // CU_JIT_MAX_THREADS_PER_BLOCK
    unsigned minCtaPerSm = 0;        // CU_JIT_MIN_CTA_PER_SM
    bool overrideDirectives = false; // CU_JIT_OVERRIDE_DIRECTIVE_VALUES
    bool optimizeUnusedVariables = false;  // CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES
    std::vector<std::string> kernelsUsed;    // CU_JIT_REFERENCED_KERNEL_NAMES/COUNT
    std::vector<std::string> variablesUsed;  // CU_JIT_REFERENCED_VARIABLE_NAMES/COUNT

    // Outputs of the last compilation or link, whole (the caller's buffers
    // may hold only a prefix).
    std::string infoText;
    std::string errorText;

    // The caller's optionValues slots that libcuda updates: the log sizes
    // (bytes written) and CU_JIT_WALL_TIME (a float stored in the slot).
    void** infoLogSizeSlot = nullptr;
    void** errorLogSizeSlot = nullptr;
    void** wallTimeSlot = nullptr;
};

// Reads cuModuleLoadDataEx/cuLinkCreate options. CUDA_ERROR_INVALID_VALUE for
// an unknown option or a missing array. 'values' is kept: the outputs are
// written back into it by publish().
Status parseJitOptions(unsigned count, const CUjit_option* options, void** values, JitOptions* out);

// Records the logs and wall time, copies the logs into the caller's buffers
// the way libcuda does (NUL-terminated, truncated to the buffer; the size
// slot becomes the message length when it fits, else the buffer size) and
// stores the wall time. Called once per load or link, on success and failure.
void publish(JitOptions& jit, std::string_view info, std::string_view error, float wallMs);

// The nvJitLink command line for these options: "-arch=sm_NN[a]" first.
std::vector<std::string> nvJitLinkArguments(const JitOptions& jit, unsigned sm, bool archSpecific);

}  // namespace nvl::loader
