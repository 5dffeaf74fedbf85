#include "loader/jit.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "common/clock.h"
#include "common/trace.h"
#include "loader/jit_process.h"
#include "loader/nvjitlink.h"
#include "loader/ptx_compat.h"

namespace nvl::loader {

namespace {

constexpr char kNoCompiler[] =
    "nvlite: compiling PTX needs libnvJitLink (CUDA toolkit 12 or 13), which was not found\n";

float millisecondsSince(uint64_t t0Ns) { return static_cast<float>(monotonicNs() - t0Ns) / 1e6f; }

std::atomic<bool> jitDisabled{false};

// One nvJitLink session over a single input, in a worker process.
Result<std::vector<uint8_t>> runOne(nvjitlink::InputType type, const void* data, size_t size, uint32_t gpuSm,
                                    JitOptions& jit) {
    if (jitDisabled.load(std::memory_order_relaxed)) return CUDA_ERROR_JIT_COMPILER_NOT_FOUND;
    const uint64_t t0 = monotonicNs();
    const bool ptx = type == nvjitlink::kPtx;
    JitTarget target = jitTarget(jit, gpuSm);
    auto session = jitproc::Session::create(nvJitLinkArguments(jit, target.sm, target.archSpecific),
                                            jitLimits(size, ptx));
    if (!session.ok()) {
        publish(jit, "", session.status().code() == CUDA_ERROR_JIT_COMPILER_NOT_FOUND ? kNoCompiler : "", 0);
        return session.status();
    }
    jitproc::Reply r = (*session)->add(type, data, size, "nvlite-module");
    if (r.rc == nvjitlink::kSuccess) r = (*session)->complete();
    publish(jit, r.info, r.error, millisecondsSince(t0));
    if (r.rc != nvjitlink::kSuccess) {
        if (trace::driver()) trace::print("loader: nvJitLink failed (%d): %s", r.rc, r.error.c_str());
        return jitError(r.rc, r.error, ptx);
    }
    if (r.cubin.empty()) return CUDA_ERROR_INVALID_IMAGE;
    return std::move(r.cubin);
}

double envNumber(const char* name, double fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    const double d = std::strtod(v, &end);
    return end != v && d > 0 ? d : fallback;
}

}  // namespace

void setJitDisabledForTesting(bool disabled) { jitDisabled.store(disabled, std::memory_order_relaxed); }
bool jitDisabledForTesting() { return jitDisabled.load(std::memory_order_relaxed); }

jitproc::Limits jitLimits(uint64_t inputBytes, bool compiles) {
    // Compiling PTX takes its time (big kernels: minutes); linking cubins is
    // quick. Generous for real inputs, short for the corrupt ones that keep
    // nvJitLink busy forever.
    constexpr double kMiB = 1 << 20;
    const double mib = static_cast<double>(inputBytes) / kMiB;
    jitproc::Limits l;
    l.seconds = compiles ? 60 + 60 * mib : 10 + 10 * mib;
    l.memoryBytes = (8ull << 30) + 32 * inputBytes;
    l.seconds = envNumber("NVLITE_JIT_TIME_LIMIT", l.seconds);
    l.memoryBytes = static_cast<uint64_t>(envNumber("NVLITE_JIT_MEMORY_LIMIT", static_cast<double>(l.memoryBytes) / kMiB) * kMiB);
    return l;
}

JitTarget jitTarget(const JitOptions& jit, uint32_t gpuSm) {
    if (jit.targetSm) return {jit.targetSm, jit.targetArchSpecific};
    return {gpuSm, gpuSm >= 90};
}

CUresult jitError(int rc, std::string_view errorLog, bool ptxInput) {
    switch (rc) {
    case nvjitlink::kPtxCompile:
        return errorLog.find("Unsupported .version") != std::string_view::npos ? CUDA_ERROR_UNSUPPORTED_PTX_VERSION
                                                                              : CUDA_ERROR_INVALID_PTX;
    case nvjitlink::kOutdatedLibrary: return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    case nvjitlink::kArchMismatch: case nvjitlink::kUnrecognizedArch: case nvjitlink::kUnsupportedArch:
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    case nvjitlink::kUnrecognizedOption: case nvjitlink::kMissingArch: case nvjitlink::kIncompatibleOptions:
    case nvjitlink::kNullInput: case nvjitlink::kLtoNotEnabled:
        return CUDA_ERROR_INVALID_VALUE;
    case nvjitlink::kInvalidInput: case nvjitlink::kUnrecognizedInput: case nvjitlink::kIncorrectInputType:
    case nvjitlink::kMissingFatbin: case nvjitlink::kFinalize:
        return ptxInput ? CUDA_ERROR_INVALID_PTX : CUDA_ERROR_INVALID_IMAGE;
    case nvjitlink::kNvvmCompile: return CUDA_ERROR_INVALID_IMAGE;
    // The worker crashed, ran out of time or memory: the input is what it could not take.
    case jitproc::kWorkerFailed: return ptxInput ? CUDA_ERROR_INVALID_PTX : CUDA_ERROR_INVALID_IMAGE;
    default: return CUDA_ERROR_UNKNOWN;
    }
}

Result<std::vector<uint8_t>> compilePtx(std::string_view ptx, uint32_t gpuSm, JitOptions& jit) {
    std::string text(ptx);  // NUL-terminated for the compiler
    if (normalizeLegacyPtxHeader(text) && trace::driver()) trace::print("loader: legacy PTX header normalised");
    return runOne(nvjitlink::kPtx, text.c_str(), text.size() + 1, gpuSm, jit);
}

Result<std::vector<uint8_t>> linkRelocatable(Bytes cubin, uint32_t gpuSm, JitOptions& jit) {
    return runOne(nvjitlink::kCubin, cubin.data(), cubin.size(), gpuSm, jit);
}

}  // namespace nvl::loader
