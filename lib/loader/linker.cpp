#include "loader/linker.h"

#include <unistd.h>

#include <cstring>
#include <new>
#include <string>

#include "common/clock.h"
#include "loader/input_check.h"
#include "loader/jit.h"
#include "loader/jit_process.h"
#include "loader/nvjitlink.h"
#include "loader/ptx_compat.h"

namespace nvl::loader {

namespace {

double nowMs() { return static_cast<double>(monotonicNs()) / 1e6; }

bool inputType(int t, nvjitlink::InputType* out) {
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
    if (jitDisabledForTesting()) return CUDA_ERROR_JIT_COMPILER_NOT_FOUND;
    try {
        std::unique_ptr<Linker> l(new Linker);
        l->jit_ = jit;
        l->startMs_ = nowMs();
        JitTarget target = jitTarget(jit, smMajor * 10 + smMinor);
        NVL_ASSIGN_OR_RETURN(l->session_, jitproc::Session::create(nvJitLinkArguments(jit, target.sm, target.archSpecific),
                                                                   jitLimits(0, false)));
        return l;
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
}

Linker::~Linker() = default;

Status Linker::failed(int rc, const std::string& info, const std::string& error, bool ptxInput) {
    publish(jit_, info, error, static_cast<float>(nowMs() - startMs_));
    return jitError(rc, error, ptxInput);
}

Status Linker::add(int type, const void* data, size_t size, const char* name) {
    nvjitlink::InputType t;
    if (!inputType(type, &t) || !data || size == 0 || completed_) return CUDA_ERROR_INVALID_VALUE;
    try {
        const bool ptx = t == nvjitlink::kPtx;
        // Nothing reaches nvJitLink unchecked.
        NVL_TRY(checkLinkInput(type, Bytes(static_cast<const uint8_t*>(data), size)));
        inputBytes_ += size;
        compiles_ = compiles_ || ptx || t == nvjitlink::kLtoir;
        session_->setLimits(jitLimits(size, ptx || t == nvjitlink::kLtoir));
        jitproc::Reply r;
        if (ptx) {
            std::string text(static_cast<const char*>(data), strnlen(static_cast<const char*>(data), size));
            normalizeLegacyPtxHeader(text);
            r = session_->add(t, text.c_str(), text.size() + 1, name ? name : "ptx");
        } else {
            r = session_->add(t, data, size, name ? name : "input");
        }
        return r.rc == nvjitlink::kSuccess ? kOk : failed(r.rc, r.info, r.error, ptx);
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
}

Status Linker::addFile(int type, const char* path) {
    nvjitlink::InputType t;
    if (!inputType(type, &t) || !path || completed_) return CUDA_ERROR_INVALID_VALUE;
    try {
        NVL_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, readInputFile(path));
        if (bytes.empty()) return t == nvjitlink::kPtx ? CUDA_ERROR_INVALID_PTX : CUDA_ERROR_INVALID_IMAGE;
        return add(type, bytes.data(), bytes.size(), path);
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
}

Result<const std::vector<uint8_t>*> Linker::complete() {
    if (completed_) return &cubin_;
    try {
        session_->setLimits(jitLimits(inputBytes_, compiles_));
        jitproc::Reply r = session_->complete();
        if (r.rc != nvjitlink::kSuccess) return failed(r.rc, r.info, r.error, false);
        publish(jit_, r.info, r.error, static_cast<float>(nowMs() - startMs_));
        if (r.cubin.empty()) return CUDA_ERROR_INVALID_IMAGE;
        cubin_ = std::move(r.cubin);
        completed_ = true;
        // The worker is no longer needed: the cubin is here.
        session_.reset();
        return &cubin_;
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
}

}  // namespace nvl::loader
