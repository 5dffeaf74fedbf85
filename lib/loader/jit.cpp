#include "loader/jit.h"

#include <string>

#include "common/clock.h"
#include "common/trace.h"
#include "loader/nvjitlink.h"
#include "loader/ptx_compat.h"

namespace nvl::loader {

namespace {

constexpr char kNoCompiler[] =
    "nvlite: compiling PTX needs libnvJitLink (CUDA toolkit 12 or 13), which was not found\n";

float millisecondsSince(uint64_t t0Ns) { return static_cast<float>(monotonicNs() - t0Ns) / 1e6f; }

// One nvJitLink run over a single input.
Result<std::vector<uint8_t>> runOne(nvjitlink::InputType type, const void* data, size_t size, uint32_t gpuSm,
                                    JitOptions& jit) {
    const uint64_t t0 = monotonicNs();
    JitTarget target = jitTarget(jit, gpuSm);
    auto session = nvjitlink::Session::create(nvJitLinkArguments(jit, target.sm, target.archSpecific));
    if (!session.ok()) {
        publish(jit, "", session.status().code() == CUDA_ERROR_JIT_COMPILER_NOT_FOUND ? kNoCompiler : "", 0);
        return session.status();
    }
    int rc = (*session)->addData(type, data, size, "nvlite-module");
    if (rc == nvjitlink::kSuccess) rc = (*session)->complete();
    std::string info = (*session)->infoLog(), error = (*session)->errorLog();
    publish(jit, info, error, millisecondsSince(t0));
    if (rc != nvjitlink::kSuccess) {
        if (trace::driver()) trace::print("loader: nvJitLink failed (%d): %s", rc, error.c_str());
        return jitError(rc, error, type == nvjitlink::kPtx);
    }
    return (*session)->linkedCubin();
}

}  // namespace

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
