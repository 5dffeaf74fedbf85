#include "core/link.h"

#include <unordered_map>

#include "core/context.h"
#include "core/device.h"

namespace nvl::core {
namespace {

// The live sessions by handle; each owned here and by any call using it.
struct Sessions {
    std::mutex mutex;
    std::unordered_map<const void*, std::shared_ptr<Link>> byHandle;
};
Sessions& sessions() {
    static auto* s = new Sessions();
    return *s;
}

}  // namespace

Result<CUlinkState> Link::create(Context& ctx, const loader::JitOptions& jit) {
    const hw::GpuInfo& gi = ctx.device().info();
    NVL_ASSIGN_OR_RETURN(auto linker, loader::Linker::create(gi.smMajor, gi.smMinor, jit));
    auto link = std::make_shared<Link>(std::move(linker));
    auto handle = reinterpret_cast<CUlinkState>(link.get());
    {
        std::lock_guard lock(sessions().mutex);
        sessions().byHandle.emplace(link.get(), std::move(link));
    }
    return handle;
}

Result<std::shared_ptr<Link>> Link::fromHandle(CUlinkState s) {
    std::lock_guard lock(sessions().mutex);
    auto it = sessions().byHandle.find(s);
    if (it == sessions().byHandle.end()) return CUDA_ERROR_INVALID_HANDLE;
    return it->second;
}

Status Link::destroy(CUlinkState s) {
    std::shared_ptr<Link> last;  // freed outside the lock
    {
        std::lock_guard lock(sessions().mutex);
        auto it = sessions().byHandle.find(s);
        if (it == sessions().byHandle.end()) return CUDA_ERROR_INVALID_HANDLE;
        last = std::move(it->second);
        sessions().byHandle.erase(it);
    }
    return kOk;
}

Status Link::add(int type, const void* data, size_t size, const char* name) {
    std::lock_guard lock(mutex_);
    Status st = linker_->add(type, data, size, name);
    if (!st.ok() && type == CU_JIT_INPUT_CUBIN && failedCubin_.ok()) failedCubin_ = st;
    return st;
}

Status Link::addFile(int type, const char* path) {
    std::lock_guard lock(mutex_);
    Status st = linker_->addFile(type, path);
    if (!st.ok() && type == CU_JIT_INPUT_CUBIN && st.code() != CUDA_ERROR_FILE_NOT_FOUND && failedCubin_.ok())
        failedCubin_ = st;
    return st;
}

Status Link::complete(void** cubin, size_t* size) {
    std::lock_guard lock(mutex_);
    // A link state completes once: libcuda 580 answers a second cuLinkComplete
    // with CUDA_ERROR_INVALID_HANDLE (compat_probe misuse-link).
    if (completed_) return CUDA_ERROR_INVALID_HANDLE;
    if (!failedCubin_.ok()) return failedCubin_;
    NVL_ASSIGN_OR_RETURN(const std::vector<uint8_t>* out, linker_->complete());
    *cubin = const_cast<uint8_t*>(out->data());
    *size = out->size();
    completed_ = true;
    return kOk;
}

}  // namespace nvl::core
