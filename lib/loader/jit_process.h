// nvJitLink in a process of its own.
//
// NVIDIA's JIT compiles and links what programs hand to cuModuleLoad* and
// cuLink*, and it trusts its input: corrupt inputs crash it (SIGSEGV,
// SIGFPE) or keep it busy for minutes and gigabytes. So it never runs in the
// user's process. Each nvJitLink session lives in a worker process with a
// time limit per call and a memory limit; a worker that crashes, overruns or
// hangs is killed and the call fails (CUDA_ERROR_INVALID_PTX for PTX,
// CUDA_ERROR_INVALID_IMAGE otherwise), the user's process is untouched.
//
// Workers come from a small server process started at the first JIT use:
// the nvlite-jit program installed next to the library (found as
// $NVLITE_JIT_HELPER, <library dir>/nvlite-jit, or
// <library dir>/../libexec/nvlite-jit), or, when it is missing, a fork of
// the process made at that moment. The server forks one worker per session
// and hands it the session's own socket; a worker is single-threaded, so
// every nvJitLink call of a session runs on the same thread (nvJitLink 13.0
// corrupts its heap otherwise). A worker whose session went well without a
// single error is kept (two at most, 100 sessions each) for the next session:
// nvJitLink's first use in a process costs ~100 ms, later ones a few.
//
// Nothing of this runs until something needs the JIT.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace nvl::loader::jitproc {

// What a worker may use for one call.
struct Limits {
    double seconds = 60;               // wall time of one call
    uint64_t memoryBytes = 8ull << 30;  // address space of the worker
};

// What one call answered: nvJitLink's result code and the session's logs
// after it, and for complete() the linked cubin.
struct Reply {
    int rc = 0;
    std::string info, error;
    std::vector<uint8_t> cubin;
};

// Codes besides nvJitLinkResult's.
inline constexpr int kWorkerFailed = -1000;   // crashed, killed at a limit, or answered nonsense
inline constexpr int kNoLibrary = -1001;      // the worker found no libnvJitLink
inline constexpr int kCreateRefused = -1002;  // nvJitLinkCreate failed (rc in the error log)

class Session {
public:
    // Starts a worker and creates its nvJitLink handle with 'args'.
    // CUDA_ERROR_JIT_COMPILER_NOT_FOUND when no libnvJitLink is found;
    // CUDA_ERROR_OPERATING_SYSTEM when no worker can be started;
    // CUDA_ERROR_OUT_OF_MEMORY when 256 workers are alive already.
    static Result<std::unique_ptr<Session>> create(const std::vector<std::string>& args, const Limits& limits);
    ~Session();  // the worker ends
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // nvJitLinkAddData (type: nvJitLinkInputType).
    Reply add(int type, const void* data, size_t size, const std::string& name);
    // nvJitLinkComplete, then the cubin (on success) and the logs.
    Reply complete();
    // The limits for later calls (they grow with the inputs).
    void setLimits(const Limits& l) { limits_ = l; }

    // One worker process (see jit_process.cpp).
    struct Worker {
        int fd = -1;
        int pid = 0;
        int sessions = 0;  // served so far
    };

private:
    Session() = default;
    // 'seconds' <= 0: the session's limit.
    Reply call(uint32_t op, uint32_t arg, const std::vector<uint8_t>& payload, double seconds = 0);
    void kill();

    Worker worker_;
    bool dead_ = false;
    bool clean_ = true;  // every call succeeded: the worker may serve again
    bool counted_ = false;
    Limits limits_;
};

// The library nvJitLink is loaded from in workers started from now on
// (tests; "" or a missing file: none); nullptr restores the search.
void setLibraryPathForTesting(const char* path);

// Tests: ends the server and the idle workers; the next session starts a
// new server (reading $NVLITE_JIT_HELPER again).
void stopServerForTesting();

// The server's side: serves sessions on 'controlFd' until it is closed by
// every process that holds it. Used by the nvlite-jit program (fd 3) and by
// the fork fallback.
[[noreturn]] void serve(int controlFd);

}  // namespace nvl::loader::jitproc
