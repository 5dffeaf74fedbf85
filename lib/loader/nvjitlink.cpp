#include "loader/nvjitlink.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

#include "common/trace.h"

namespace nvl::loader::nvjitlink {

namespace {

// The C API (nvJitLink.h, CUDA 12/13). The unversioned names are exported by
// libnvJitLink.so.12 and .so.13 alike.
struct Api {
    int (*create)(void** handle, uint32_t numOptions, const char** options);
    int (*destroy)(void** handle);
    int (*addData)(void* handle, int type, const void* data, size_t size, const char* name);
    int (*addFile)(void* handle, int type, const char* path);
    int (*complete)(void* handle);
    int (*cubinSize)(void* handle, size_t* size);
    int (*cubin)(void* handle, void* out);
    int (*errorLogSize)(void* handle, size_t* size);
    int (*errorLog)(void* handle, char* out);
    int (*infoLogSize)(void* handle, size_t* size);
    int (*infoLog)(void* handle, char* out);
};

std::mutex gMutex;
bool gLoaded = false;
Api gApi{};
bool gHaveApi = false;
std::string gOverride;
bool gUseOverride = false;

void* openLibrary() {
    std::vector<std::string> candidates;
    if (gUseOverride) {
        candidates.push_back(gOverride);
    } else {
        candidates = {"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"};
        std::vector<std::string> dirs;
        if (const char* home = std::getenv("CUDA_HOME"); home && *home) dirs.push_back(std::string(home) + "/lib64/");
        dirs.push_back("/usr/local/cuda/lib64/");
        for (const auto& d : dirs)
            for (const char* n : {"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"}) candidates.push_back(d + n);
    }
    for (const auto& c : candidates) {
        if (c.empty()) continue;
        if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            if (trace::driver()) trace::print("loader: using %s", c.c_str());
            return h;
        }
    }
    if (trace::driver()) trace::print("loader: libnvJitLink not found");
    return nullptr;
}

template <class F>
bool bind(void* lib, const char* name, F* out) {
    *out = reinterpret_cast<F>(dlsym(lib, name));
    return *out != nullptr;
}

const Api* api() {
    std::lock_guard lock(gMutex);
    if (!gLoaded) {
        gLoaded = true;
        void* lib = openLibrary();  // stays loaded for the process
        Api a{};
        gHaveApi = lib && bind(lib, "nvJitLinkCreate", &a.create) && bind(lib, "nvJitLinkDestroy", &a.destroy) &&
                   bind(lib, "nvJitLinkAddData", &a.addData) && bind(lib, "nvJitLinkAddFile", &a.addFile) &&
                   bind(lib, "nvJitLinkComplete", &a.complete) &&
                   bind(lib, "nvJitLinkGetLinkedCubinSize", &a.cubinSize) &&
                   bind(lib, "nvJitLinkGetLinkedCubin", &a.cubin) &&
                   bind(lib, "nvJitLinkGetErrorLogSize", &a.errorLogSize) &&
                   bind(lib, "nvJitLinkGetErrorLog", &a.errorLog) &&
                   bind(lib, "nvJitLinkGetInfoLogSize", &a.infoLogSize) && bind(lib, "nvJitLinkGetInfoLog", &a.infoLog);
        gApi = a;
    }
    return gHaveApi ? &gApi : nullptr;
}

}  // namespace

struct Session::Handle {
    const Api* api;
    void* h;
};

bool preload() { return api() != nullptr; }

void setLibraryPathForTesting(const char* path) {
    std::lock_guard lock(gMutex);
    gUseOverride = path != nullptr;
    gOverride = path ? path : "";
    gLoaded = false;
    gHaveApi = false;
}

Result<std::unique_ptr<Session>> Session::create(const std::vector<std::string>& args) {
    const Api* a = api();
    if (!a) return CUDA_ERROR_JIT_COMPILER_NOT_FOUND;
    std::vector<const char*> argv;
    for (const auto& s : args) argv.push_back(s.c_str());
    void* h = nullptr;
    int rc = a->create(&h, static_cast<uint32_t>(argv.size()), argv.data());
    if (rc != kSuccess || !h) {
        if (trace::driver()) trace::print("loader: nvJitLinkCreate failed (%d)", rc);
        if (h) a->destroy(&h);
        return rc == kUnrecognizedArch || rc == kUnsupportedArch ? CUDA_ERROR_NO_BINARY_FOR_GPU
                                                                  : CUDA_ERROR_INVALID_VALUE;
    }
    std::unique_ptr<Session> s(new Session);
    s->handle_ = new Handle{a, h};
    return s;
}

Session::~Session() {
    if (handle_) handle_->api->destroy(&handle_->h);
    delete handle_;
}

int Session::addData(InputType type, const void* data, size_t size, const char* name) {
    return handle_->api->addData(handle_->h, type, data, size, name);
}

int Session::addFile(InputType type, const char* path) { return handle_->api->addFile(handle_->h, type, path); }

int Session::complete() { return handle_->api->complete(handle_->h); }

namespace {

// A log through its size and text getters; "" when there is none.
std::string readLog(void* h, int (*size)(void*, size_t*), int (*text)(void*, char*)) {
    size_t n = 0;
    if (size(h, &n) != kSuccess || n == 0) return {};
    std::string s(n, '\0');
    if (text(h, s.data()) != kSuccess) return {};
    s.resize(s.find('\0') == std::string::npos ? n : s.find('\0'));
    return s;
}

}  // namespace

std::string Session::errorLog() const {
    return readLog(handle_->h, handle_->api->errorLogSize, handle_->api->errorLog);
}

std::string Session::infoLog() const { return readLog(handle_->h, handle_->api->infoLogSize, handle_->api->infoLog); }

Result<std::vector<uint8_t>> Session::linkedCubin() const {
    size_t n = 0;
    if (handle_->api->cubinSize(handle_->h, &n) != kSuccess || n == 0) return CUDA_ERROR_INVALID_IMAGE;
    std::vector<uint8_t> out(n);
    if (handle_->api->cubin(handle_->h, out.data()) != kSuccess) return CUDA_ERROR_INVALID_IMAGE;
    return out;
}

}  // namespace nvl::loader::nvjitlink
