#include "loader/linker.h"

#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <functional>
#include <future>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>

#include "common/clock.h"
#include "loader/jit.h"
#include "loader/nvjitlink.h"
#include "loader/ptx_compat.h"

namespace nvl::loader {

// Runs what it is given, one call at a time, on a thread of its own.
class SessionThread {
public:
    SessionThread() : thread_([this] { loop(); }) {}
    ~SessionThread() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        ready_.notify_one();
        thread_.join();
    }
    // Runs 'f' there and returns its result (or rethrows its exception).
    template <class F>
    auto run(F&& f) -> decltype(f()) {
        std::packaged_task<decltype(f())()> task(std::forward<F>(f));
        auto result = task.get_future();
        {
            std::lock_guard lock(mutex_);
            work_ = [&task] { task(); };
        }
        ready_.notify_one();
        return result.get();
    }

private:
    void loop() {
        std::unique_lock lock(mutex_);
        for (;;) {
            ready_.wait(lock, [this] { return stop_ || work_; });
            if (!work_) return;  // stopping, nothing left
            std::function<void()> w = std::move(work_);
            work_ = nullptr;
            lock.unlock();
            w();
            lock.lock();
        }
    }

    std::mutex mutex_;
    std::condition_variable ready_;
    std::function<void()> work_;  // one call at a time: run() waits for it
    bool stop_ = false;
    std::thread thread_;  // last: starts once the rest is ready
};

namespace {

double nowMs() { return static_cast<double>(monotonicNs()) / 1e6; }

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

Linker::Linker() : thread_(std::make_unique<SessionThread>()) {}

Result<std::unique_ptr<Linker>> Linker::create(uint32_t smMajor, uint32_t smMinor, const JitOptions& jit) {
    try {
        std::unique_ptr<Linker> l(new Linker);
        l->jit_ = jit;
        l->startMs_ = nowMs();
        JitTarget target = jitTarget(jit, smMajor * 10 + smMinor);
        const std::vector<std::string> args = nvJitLinkArguments(jit, target.sm, target.archSpecific);
        NVL_ASSIGN_OR_RETURN(l->session_, l->thread_->run([&] { return nvjitlink::Session::create(args); }));
        return l;
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    } catch (const std::system_error&) {  // no thread for the session
        return CUDA_ERROR_OPERATING_SYSTEM;
    }
}

Linker::~Linker() {
    if (session_) thread_->run([this] { session_.reset(); });
}

Status Linker::failed(int rc, bool ptxInput) {
    std::string info, error;
    thread_->run([&] {
        info = session_->infoLog();
        error = session_->errorLog();
    });
    publish(jit_, info, error, static_cast<float>(nowMs() - startMs_));
    return jitError(rc, error, ptxInput);
}

Status Linker::add(CUjitInputType type, const void* data, size_t size, const char* name) {
    nvjitlink::InputType t;
    if (!inputType(type, &t) || !data || size == 0 || completed_) return CUDA_ERROR_INVALID_VALUE;
    try {
        int rc;
        if (t == nvjitlink::kPtx) {
            std::string text(static_cast<const char*>(data), strnlen(static_cast<const char*>(data), size));
            normalizeLegacyPtxHeader(text);
            rc = thread_->run([&] { return session_->addData(t, text.c_str(), text.size() + 1, name ? name : "ptx"); });
        } else {
            rc = thread_->run([&] { return session_->addData(t, data, size, name ? name : "input"); });
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
        int rc = thread_->run([&] { return session_->addFile(t, path); });
        return rc == nvjitlink::kSuccess ? kOk : failed(rc, t == nvjitlink::kPtx);
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
}

Result<const std::vector<uint8_t>*> Linker::complete() {
    if (completed_) return &cubin_;
    try {
        int rc = thread_->run([&] { return session_->complete(); });
        if (rc != nvjitlink::kSuccess) return failed(rc, false);
        std::string info, error;
        Result<std::vector<uint8_t>> cubin = thread_->run([&] {
            info = session_->infoLog();
            error = session_->errorLog();
            return session_->linkedCubin();
        });
        publish(jit_, info, error, static_cast<float>(nowMs() - startMs_));
        NVL_ASSIGN_OR_RETURN(cubin_, std::move(cubin));
        completed_ = true;
        return &cubin_;
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
}

}  // namespace nvl::loader
