#include "kdrv/kdrv.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/trace.h"

// Test programs that link the simulator's objects into themselves (unit
// tests of the internal archive) define the entry; libnvlite.so does not,
// and then this hidden weak reference is null and absent from its symbols.
extern "C" __attribute__((weak, visibility("hidden"))) nvl::kdrv::Kdrv* nvliteSimKdrv(uint32_t abiVersion);

namespace nvl::kdrv {
namespace {

// The seam NVLITE_DEVICE=sim gets when libnvlite_sim.so cannot be used: no
// driver present, so cuInit answers CUDA_ERROR_NO_DEVICE.
class MissingKdrv final : public Kdrv {
public:
    bool present() override { return false; }
    int open(const char*, int) override { return -ENOENT; }
    int close(int) override { return -EBADF; }
    int ioctl(int, unsigned long, void*) override { return -EBADF; }
    void* mmap(void*, size_t, int, int, int, off_t) override {
        errno = ENODEV;
        return reinterpret_cast<void*>(-1);  // MAP_FAILED
    }
    int munmap(void*, size_t) override { return -EINVAL; }
    const char* name() const override { return "sim (missing)"; }
};

std::string directoryOf(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// libnvlite_sim.so next to this library (as loaded, then with links
// resolved: an install may reach us through a libcuda.so.1 link in a folder
// of its own), else wherever the dynamic linker finds it by soname.
void* openSimLibrary(std::string* errors) {
    std::string candidates[3];
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&openSimLibrary), &self) && self.dli_fname && self.dli_fname[0] == '/') {
        candidates[0] = directoryOf(self.dli_fname) + kSimLibraryName;
        char resolved[PATH_MAX];
        if (::realpath(self.dli_fname, resolved)) candidates[1] = directoryOf(resolved) + kSimLibraryName;
    }
    candidates[2] = kSimLibraryName;
    for (size_t i = 0; i < 3; ++i) {
        const std::string& c = candidates[i];
        if (c.empty() || (i > 0 && c == candidates[i - 1])) continue;
        if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            if (trace::driver()) trace::print("kdrv: simulated driver from %s", c.c_str());
            return h;
        }
        if (const char* e = dlerror()) *errors += std::string(*errors->c_str() ? "; " : "") + e;
    }
    return nullptr;
}

Kdrv* loadSim() {
    if (nvliteSimKdrv) return nvliteSimKdrv(kSimAbiVersion);  // linked in
    std::string errors;
    void* lib = openSimLibrary(&errors);  // stays loaded for the process
    if (!lib) {
        trace::print("NVLITE_DEVICE=sim, but the simulated driver %s cannot be loaded: %s", kSimLibraryName,
                     errors.c_str());
        return nullptr;
    }
    auto entry = reinterpret_cast<SimEntry>(dlsym(lib, kSimEntryName));
    Kdrv* k = entry ? entry(kSimAbiVersion) : nullptr;
    if (!k) trace::print("NVLITE_DEVICE=sim, but %s is not of this build of nvlite", kSimLibraryName);
    return k;
}

}  // namespace

Kdrv& get() {
    static Kdrv& selected = []() -> Kdrv& {
        const char* dev = std::getenv("NVLITE_DEVICE");
        if (dev && std::strcmp(dev, "sim") == 0) {
            if (Kdrv* k = loadSim()) return *k;
            static auto* missing = new MissingKdrv();  // never destroyed (see linuxKdrv)
            return *missing;
        }
        return linuxKdrv();
    }();
    return selected;
}

}  // namespace nvl::kdrv
