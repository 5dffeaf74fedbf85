#include "loader/jit_options.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace nvl::loader {

namespace {

// Option values travel inside the void* itself (libcuda's convention).
unsigned asUnsigned(void* v) { return static_cast<unsigned>(reinterpret_cast<uintptr_t>(v)); }
int asInt(void* v) { return static_cast<int>(reinterpret_cast<intptr_t>(v)); }

Status readNames(void* namesValue, unsigned count, std::vector<std::string>* out) {
    if (count == 0) return kOk;
    auto** names = static_cast<const char**>(namesValue);
    if (!names) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < count; ++i) {
        if (!names[i]) return CUDA_ERROR_INVALID_VALUE;
        out->emplace_back(names[i]);
    }
    return kOk;
}

// Copies a log like libcuda (checked against libcuda 580 on an H200): at most
// size-1 characters and a NUL; the size slot becomes the message length when
// the whole message fits, else the buffer size.
void copyLog(std::string_view text, char* buffer, size_t size, void** slot) {
    size_t reported = 0;
    if (buffer && size > 0) {
        size_t n = std::min(text.size(), size - 1);
        std::memcpy(buffer, text.data(), n);
        buffer[n] = '\0';
        reported = text.size() < size ? text.size() : size;
    }
    if (slot) *slot = reinterpret_cast<void*>(static_cast<uintptr_t>(reported));
}

}  // namespace

Status parseJitOptions(unsigned count, const CUjit_option* options, void** values, JitOptions* out) try {
    if (count == 0) return kOk;
    if (!options || !values) return CUDA_ERROR_INVALID_VALUE;
    unsigned kernelCount = 0, variableCount = 0;
    void* kernelNames = nullptr;
    void* variableNames = nullptr;
    for (unsigned i = 0; i < count; ++i) {
        void* v = values[i];
        // Read as an integer: callers may pass values outside the enum.
        int option;
        static_assert(sizeof option == sizeof options[i]);
        std::memcpy(&option, &options[i], sizeof option);
        switch (option) {
        case CU_JIT_MAX_REGISTERS: out->maxRegisters = asUnsigned(v); break;
        case CU_JIT_THREADS_PER_BLOCK: break;  // a hint for ptxas that nvJitLink does not take
        case CU_JIT_WALL_TIME: out->wallTimeSlot = &values[i]; break;
        case CU_JIT_INFO_LOG_BUFFER: out->infoLog = static_cast<char*>(v); break;
        case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
            out->infoLogSize = asUnsigned(v);
            out->infoLogSizeSlot = &values[i];
            break;
        case CU_JIT_ERROR_LOG_BUFFER: out->errorLog = static_cast<char*>(v); break;
        case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
            out->errorLogSize = asUnsigned(v);
            out->errorLogSizeSlot = &values[i];
            break;
        case CU_JIT_OPTIMIZATION_LEVEL:
            if (asUnsigned(v) > 4) return CUDA_ERROR_INVALID_VALUE;
            out->optimizationLevel = static_cast<int>(asUnsigned(v));
            break;
        case CU_JIT_TARGET_FROM_CUCONTEXT: break;  // the default
        case CU_JIT_TARGET: {
            unsigned t = asUnsigned(v);
            out->targetArchSpecific = (t & CU_COMPUTE_ACCELERATED_TARGET_BASE) != 0;
            out->targetSm = t & 0xffff;
            if (out->targetSm < 30 || out->targetSm > 200) return CUDA_ERROR_INVALID_VALUE;
            break;
        }
        case CU_JIT_FALLBACK_STRATEGY: out->preferBinary = asUnsigned(v) == CU_PREFER_BINARY; break;
        case CU_JIT_GENERATE_DEBUG_INFO: out->debugInfo = asInt(v) != 0; break;
        case CU_JIT_LOG_VERBOSE: out->verbose = asInt(v) != 0; break;
        case CU_JIT_GENERATE_LINE_INFO: out->lineInfo = asInt(v) != 0; break;
        case CU_JIT_CACHE_MODE: out->cacheMode = asInt(v); break;
        case CU_JIT_NEW_SM3X_OPT: case CU_JIT_FAST_COMPILE: case CU_JIT_POSITION_INDEPENDENT_CODE:
        case CU_JIT_SPLIT_COMPILE:
            break;  // accepted, no effect (nvJitLink has no equivalent)
        case CU_JIT_GLOBAL_SYMBOL_NAMES: case CU_JIT_GLOBAL_SYMBOL_ADDRESSES: case CU_JIT_GLOBAL_SYMBOL_COUNT:
            break;  // host-resolved symbols: not supported; unresolved ones fail the link
        case CU_JIT_LTO: out->lto = asInt(v) != 0; break;
        case CU_JIT_FTZ: out->ftz = asInt(v) != 0; break;
        case CU_JIT_PREC_DIV: out->precDiv = asInt(v) != 0; break;
        case CU_JIT_PREC_SQRT: out->precSqrt = asInt(v) != 0; break;
        case CU_JIT_FMA: out->fma = asInt(v) != 0; break;
        case CU_JIT_REFERENCED_KERNEL_NAMES: kernelNames = v; break;
        case CU_JIT_REFERENCED_KERNEL_COUNT: kernelCount = asUnsigned(v); break;
        case CU_JIT_REFERENCED_VARIABLE_NAMES: variableNames = v; break;
        case CU_JIT_REFERENCED_VARIABLE_COUNT: variableCount = asUnsigned(v); break;
        case CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES: out->optimizeUnusedVariables = asInt(v) != 0; break;
        case CU_JIT_MIN_CTA_PER_SM: out->minCtaPerSm = asUnsigned(v); break;
        case CU_JIT_MAX_THREADS_PER_BLOCK: out->maxThreadsPerBlock = asUnsigned(v); break;
        case CU_JIT_OVERRIDE_DIRECTIVE_VALUES: out->overrideDirectives = asInt(v) != 0; break;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    NVL_TRY(readNames(kernelNames, kernelCount, &out->kernelsUsed));
    NVL_TRY(readNames(variableNames, variableCount, &out->variablesUsed));
    return kOk;
} catch (const std::bad_alloc&) {
    return CUDA_ERROR_OUT_OF_MEMORY;
}

void publish(JitOptions& jit, std::string_view info, std::string_view error, float wallMs) {
    try {
        jit.infoText.assign(info);
        jit.errorText.assign(error);
    } catch (const std::bad_alloc&) {
        jit.infoText.clear();  // the caller's buffers below still get the logs
        jit.errorText.clear();
    }
    copyLog(info, jit.infoLog, jit.infoLogSize, jit.infoLogSizeSlot);
    copyLog(error, jit.errorLog, jit.errorLogSize, jit.errorLogSizeSlot);
    if (jit.wallTimeSlot) {
        *jit.wallTimeSlot = nullptr;
        std::memcpy(jit.wallTimeSlot, &wallMs, sizeof wallMs);
    }
}

std::vector<std::string> nvJitLinkArguments(const JitOptions& jit, unsigned sm, bool archSpecific) {
    std::vector<std::string> args;
    args.push_back("-arch=sm_" + std::to_string(sm) + (archSpecific ? "a" : ""));
    // nvJitLink takes -O0 or -O3 only; ptxas gets the exact level.
    if (jit.optimizationLevel >= 0) {
        args.push_back("-Xptxas=-O" + std::to_string(std::min(jit.optimizationLevel, 3)));
        if (jit.optimizationLevel == 0) args.push_back("-O0");
    }
    if (jit.maxRegisters) args.push_back("-maxrregcount=" + std::to_string(jit.maxRegisters));
    if (jit.debugInfo) args.push_back("-g");
    if (jit.lineInfo) args.push_back("-lineinfo");
    if (jit.verbose) args.push_back("-verbose");
    if (jit.lto) args.push_back("-lto");
    if (jit.ftz >= 0) args.push_back("-ftz=" + std::to_string(jit.ftz));
    if (jit.precDiv >= 0) args.push_back("-prec-div=" + std::to_string(jit.precDiv));
    if (jit.precSqrt >= 0) args.push_back("-prec-sqrt=" + std::to_string(jit.precSqrt));
    if (jit.fma >= 0) args.push_back("-fma=" + std::to_string(jit.fma));
    if (jit.cacheMode == CU_JIT_CACHE_OPTION_CG) args.push_back("-Xptxas=-dlcm=cg");
    if (jit.cacheMode == CU_JIT_CACHE_OPTION_CA) args.push_back("-Xptxas=-dlcm=ca");
    if (jit.maxThreadsPerBlock) args.push_back("-Xptxas=--maxntid=" + std::to_string(jit.maxThreadsPerBlock));
    if (jit.minCtaPerSm) args.push_back("-Xptxas=--minnctapersm=" + std::to_string(jit.minCtaPerSm));
    if (jit.overrideDirectives) args.push_back("-Xptxas=--override-directive-values");
    for (const auto& k : jit.kernelsUsed) args.push_back("-kernels-used=" + k);
    for (const auto& v : jit.variablesUsed) args.push_back("-variables-used=" + v);
    if (jit.optimizeUnusedVariables) args.push_back("-optimize-unused-variables");
    return args;
}

}  // namespace nvl::loader
