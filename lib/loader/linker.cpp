#include "loader/linker.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <new>
#include <string>

#include "loader/jit.h"
#include "loader/nvjitlink.h"

namespace nvl::loader {

namespace {

double nowMs() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool inputType(CUjitInputType t, nvjitlink::InputType* out) {
    switch (t) {
    case CU_JIT_INPUT_CUBIN: *out = nvjitlink::kCubin; return true;
    case CU_JIT_INPUT_PTX: *out = nvjitlink::kPtx; return true;
    case CU_JIT_INPUT_FATBINARY: *out = nvjitlink::kFatbin; return true;
    case CU_JIT_INPUT_OBJECT: *out = nvjitlink::kObject; return true;
    case CU_JIT_INPUT_LIBRARY: *out = nvjitlink::kLibrary; return true;
    case CU_JIT_INPUT_NVVM: *out = nvjitlink::kLtoir; return true;  // LTO-IR; needs CU_JIT_LTO
    default: return false;
    }
}

}  // namespace

Result<std::unique_ptr<Linker>> Linker::create(uint32_t smMajor, uint32_t smMinor, const JitOptions& jit) {
    try {
        std::unique_ptr<Linker> l(new Linker);
        l->jit_ = jit;
        l->startMs_ = nowMs();
        JitTarget target = jitTarget(jit, smMajor * 10 + smMinor);
        NVL_ASSIGN_OR_RETURN(l->session_,
                             nvjitlink::Session::create(nvJitLinkArguments(jit, target.sm, target.archSpecific)));
        return l;
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
}

Linker::~Linker() = default;

Status Linker::failed(int rc, bool ptxInput) {
    std::string error = session_->errorLog();
    publish(jit_, session_->infoLog(), error, static_cast<float>(nowMs() - startMs_));
    return jitError(rc, error, ptxInput);
}

Status Linker::add(CUjitInputType type, const void* data, size_t size, const char* name) {
    nvjitlink::InputType t;
    if (!inputType(type, &t) || !data || size == 0 || completed_) return CUDA_ERROR_INVALID_VALUE;
    try {
        int rc;
        if (t == nvjitlink::kPtx) {
            std::string text(static_cast<const char*>(data), strnlen(static_cast<const char*>(data), size));
            rc = session_->addData(t, text.c_str(), text.size() + 1, name ? name : "ptx");
        } else {
            rc = session_->addData(t, data, size, name ? name : "input");
        }
        return rc == nvjitlink::kSuccess ? kOk : failed(rc, t == nvjitlink::kPtx);
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
}

Status Linker::addFile(CUjitInputType type, const char* path) {
    nvjitlink::InputType t;
    if (!inputType(type, &t) || !path || completed_) return CUDA_ERROR_INVALID_VALUE;
    if (access(path, R_OK) != 0) return CUDA_ERROR_FILE_NOT_FOUND;
    try {
        int rc = session_->addFile(t, path);
        return rc == nvjitlink::kSuccess ? kOk : failed(rc, t == nvjitlink::kPtx);
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
}

Result<const std::vector<uint8_t>*> Linker::complete() {
    if (completed_) return &cubin_;
    try {
        int rc = session_->complete();
        if (rc != nvjitlink::kSuccess) return failed(rc, false);
        publish(jit_, session_->infoLog(), session_->errorLog(), static_cast<float>(nowMs() - startMs_));
        NVL_ASSIGN_OR_RETURN(cubin_, session_->linkedCubin());
        completed_ = true;
        return &cubin_;
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
}

}  // namespace nvl::loader
