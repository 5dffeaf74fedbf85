// Helpers for the loader tests: real inputs made at test time with the CUDA
// toolkit (NVRTC through dlopen, nvcc and fatbinary as programs), a temporary
// directory, the prebuilt cubin in tests/data, and a small fatbin writer.
// The library itself never uses the toolkit; the tests may.
#pragma once

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace loadertest {

inline std::string cudaHome() {
    const char* h = getenv("CUDA_HOME");
    return h && *h ? h : "/usr/local/cuda";
}

inline bool fileExists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

inline std::vector<uint8_t> readFile(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return {};
    std::stringstream s;
    s << f.rdbuf();
    std::string d = s.str();
    return {d.begin(), d.end()};
}

inline bool writeFile(const std::string& path, const void* data, size_t size) {
    FILE* f = fopen(path.c_str(), "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

inline bool writeFile(const std::string& path, const std::string& s) { return writeFile(path, s.data(), s.size()); }

// A directory under /tmp removed at exit.
inline const std::string& tempDir() {
    static std::string dir = [] {
        char tmpl[] = "/tmp/nvlite-loader-XXXXXX";
        std::string d = mkdtemp(tmpl) ? tmpl : "/tmp";
        static std::string forCleanup = d;
        atexit([] {
            std::string cmd = "rm -rf '" + forCleanup + "'";
            if (system(cmd.c_str()) != 0) {}
        });
        return d;
    }();
    return dir;
}

inline std::string dataPath(const char* name) { return std::string("tests/data/") + name; }

inline std::string kernelSource() {
    std::vector<uint8_t> s = readFile(dataPath("loader_kernels.cu"));
    return {s.begin(), s.end()};
}

// Runs a shell command; its output goes to 'log' when given.
inline bool run(const std::string& cmd, std::string* log = nullptr) {
    std::string logPath = tempDir() + "/cmd.log";
    int rc = system((cmd + " >'" + logPath + "' 2>&1").c_str());
    if (log) {
        auto l = readFile(logPath);
        log->assign(l.begin(), l.end());
    }
    return rc == 0;
}

inline bool haveNvcc() { return fileExists(cudaHome() + "/bin/nvcc"); }
inline bool haveFatbinary() { return fileExists(cudaHome() + "/bin/fatbinary"); }

// nvcc on 'source' with 'args'; the output file (with 'ext') is returned,
// ptxas/nvcc messages go to 'log'. Empty on failure.
inline std::vector<uint8_t> nvcc(const std::string& source, const std::string& args, const char* ext,
                                 std::string* log = nullptr) {
    static int n = 0;
    std::string base = tempDir() + "/nvcc" + std::to_string(n++);
    if (!writeFile(base + ".cu", source)) return {};
    std::string out = base + "." + ext;
    if (!run(cudaHome() + "/bin/nvcc " + args + " -o '" + out + "' '" + base + ".cu'", log)) {
        if (log) fprintf(stderr, "nvcc failed: %s\n", log->c_str());
        return {};
    }
    return readFile(out);
}

// fatbinary --create with the given --image3 specs ("kind=elf,sm=90,file=...").
inline std::vector<uint8_t> fatbinary(const std::vector<std::string>& images, const std::string& extra = "") {
    static int n = 0;
    std::string out = tempDir() + "/fb" + std::to_string(n++) + ".fatbin";
    std::string cmd = cudaHome() + "/bin/fatbinary --create='" + out + "' -64 " + extra;
    for (const auto& i : images) cmd += " --image3=" + i;
    std::string log;
    if (!run(cmd, &log)) {
        fprintf(stderr, "fatbinary failed: %s\n", log.c_str());
        return {};
    }
    return readFile(out);
}

inline std::string saveTemp(const std::string& name, const std::vector<uint8_t>& bytes) {
    std::string p = tempDir() + "/" + name;
    writeFile(p, bytes.data(), bytes.size());
    return p;
}

// NVRTC, loaded at run time (libnvrtc.so.13 from the toolkit).
class Nvrtc {
public:
    static Nvrtc& get() {
        static Nvrtc n;
        return n;
    }
    bool ok() const { return ok_; }

    // Compiles 'source'; with "-arch=sm_NN" the result is a cubin, with
    // "-arch=compute_NN" PTX (NUL included). Empty on failure.
    std::vector<uint8_t> compile(const std::string& source, const std::vector<std::string>& options,
                                 std::string* log = nullptr) {
        if (!ok_) return {};
        void* prog = nullptr;
        if (create_(&prog, source.c_str(), "loader_kernels.cu", 0, nullptr, nullptr) != 0) return {};
        std::vector<const char*> argv;
        bool cubin = false;
        for (const auto& o : options) {
            argv.push_back(o.c_str());
            if (o.rfind("-arch=sm_", 0) == 0) cubin = true;
        }
        int rc = compile_(prog, static_cast<int>(argv.size()), argv.data());
        size_t n = 0;
        std::string l;
        if (logSize_(prog, &n) == 0 && n) {
            l.resize(n);
            getLog_(prog, l.data());
        }
        if (log) *log = l;
        std::vector<uint8_t> out;
        if (rc == 0) {
            if ((cubin ? cubinSize_ : ptxSize_)(prog, &n) == 0) {
                out.resize(n);
                if ((cubin ? getCubin_ : getPtx_)(prog, reinterpret_cast<char*>(out.data())) != 0) out.clear();
            }
        } else {
            fprintf(stderr, "NVRTC failed: %s\n", l.c_str());
        }
        destroy_(&prog);
        return out;
    }

private:
    Nvrtc() {
        void* h = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
        if (!h) h = dlopen((cudaHome() + "/lib64/libnvrtc.so.13").c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) h = dlopen((cudaHome() + "/lib64/libnvrtc.so").c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) return;
        ok_ = bind(h, "nvrtcCreateProgram", &create_) && bind(h, "nvrtcCompileProgram", &compile_) &&
              bind(h, "nvrtcDestroyProgram", &destroy_) && bind(h, "nvrtcGetProgramLogSize", &logSize_) &&
              bind(h, "nvrtcGetProgramLog", &getLog_) && bind(h, "nvrtcGetPTXSize", &ptxSize_) &&
              bind(h, "nvrtcGetPTX", &getPtx_) && bind(h, "nvrtcGetCUBINSize", &cubinSize_) &&
              bind(h, "nvrtcGetCUBIN", &getCubin_);
    }
    template <class F>
    static bool bind(void* h, const char* name, F* out) {
        *out = reinterpret_cast<F>(dlsym(h, name));
        return *out != nullptr;
    }
    bool ok_ = false;
    int (*create_)(void**, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
    int (*compile_)(void*, int, const char* const*) = nullptr;
    int (*destroy_)(void**) = nullptr;
    int (*logSize_)(void*, size_t*) = nullptr;
    int (*getLog_)(void*, char*) = nullptr;
    int (*ptxSize_)(void*, size_t*) = nullptr;
    int (*getPtx_)(void*, char*) = nullptr;
    int (*cubinSize_)(void*, size_t*) = nullptr;
    int (*getCubin_)(void*, char*) = nullptr;
};

// Our own fatbin writer (layout in lib/loader/fatbin.h), for tests that must
// run without the toolkit and for hand-made corrupt containers.
struct FatbinEntry {
    uint16_t kind;  // 1 PTX, 2 ELF
    uint32_t arch;
    uint64_t flags;  // 0x11 = 64-bit Linux
    std::vector<uint8_t> payload;
    uint64_t uncompressedSize = 0;
};

inline void put16(std::vector<uint8_t>& v, size_t at, uint16_t x) { memcpy(v.data() + at, &x, 2); }
inline void put32(std::vector<uint8_t>& v, size_t at, uint32_t x) { memcpy(v.data() + at, &x, 4); }
inline void put64(std::vector<uint8_t>& v, size_t at, uint64_t x) { memcpy(v.data() + at, &x, 8); }

inline std::vector<uint8_t> makeFatbin(const std::vector<FatbinEntry>& entries) {
    std::vector<uint8_t> body;
    for (const auto& e : entries) {
        const size_t header = e.kind == 1 ? 0x50 : 0x40;
        size_t padded = (e.payload.size() + 7) / 8 * 8;
        std::vector<uint8_t> h(header, 0);
        put16(h, 0, e.kind);
        put16(h, 2, 0x101);
        put32(h, 4, static_cast<uint32_t>(header));
        put64(h, 8, padded);
        bool compressed = (e.flags & 0xa000) != 0;
        put32(h, 0x10, compressed ? static_cast<uint32_t>(e.payload.size()) : 0);
        put32(h, 0x18, e.kind == 1 ? 0x00090000 : 0x00010008);
        put32(h, 0x1c, e.arch);
        put64(h, 0x28, e.flags);
        put64(h, 0x38, e.uncompressedSize);
        body.insert(body.end(), h.begin(), h.end());
        body.insert(body.end(), e.payload.begin(), e.payload.end());
        body.resize(body.size() + (padded - e.payload.size()), 0);
    }
    std::vector<uint8_t> out(16, 0);
    put32(out, 0, 0xBA55ED50);
    put16(out, 4, 1);
    put16(out, 6, 16);
    put64(out, 8, body.size());
    out.insert(out.end(), body.begin(), body.end());
    return out;
}

}  // namespace loadertest
