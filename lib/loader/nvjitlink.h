// nvJitLink (CUDA toolkit), loaded at run time: the PTX compiler and device
// linker behind JIT loads and cuLink*. Only its C API is used, declared here
// from the public documentation (no toolkit header in the build).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace nvl::loader::nvjitlink {

// nvJitLinkInputType
enum InputType : int { kCubin = 1, kPtx = 2, kLtoir = 3, kFatbin = 4, kObject = 5, kLibrary = 6 };

// nvJitLinkResult values the loader tells apart.
enum ResultCode : int {
    kSuccess = 0,
    kUnrecognizedOption = 1,
    kMissingArch = 2,
    kInvalidInput = 3,
    kPtxCompile = 4,
    kNvvmCompile = 5,
    kInternal = 6,
    kUnrecognizedInput = 8,
    kFinalize = 9,
    kNullInput = 10,
    kIncompatibleOptions = 11,
    kIncorrectInputType = 12,
    kArchMismatch = 13,
    kOutdatedLibrary = 14,
    kMissingFatbin = 15,
    kUnrecognizedArch = 16,
    kUnsupportedArch = 17,
    kLtoNotEnabled = 18,
};

// One nvJitLink handle.
class Session {
public:
    // CUDA_ERROR_JIT_COMPILER_NOT_FOUND when libnvJitLink cannot be loaded
    // (searched as libnvJitLink.so.13, .so.12, .so, then in $CUDA_HOME/lib64
    // and /usr/local/cuda/lib64); CUDA_ERROR_INVALID_VALUE for rejected options.
    static Result<std::unique_ptr<Session>> create(const std::vector<std::string>& args);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    int addData(InputType type, const void* data, size_t size, const char* name);
    int addFile(InputType type, const char* path);
    int complete();
    std::string errorLog() const;
    std::string infoLog() const;
    Result<std::vector<uint8_t>> linkedCubin() const;

private:
    Session() = default;
    struct Handle;
    Handle* handle_ = nullptr;
};

// Loads the library now (where it is found); false when there is none.
bool preload();

// Tests only: load the library from exactly this path from now on ("" or a
// missing file makes the JIT unavailable); nullptr restores the search.
void setLibraryPathForTesting(const char* path);

}  // namespace nvl::loader::nvjitlink
