// Helpers for the loader tests: real inputs made at test time with the CUDA
// toolkit (NVRTC and temporary files from tests/support/ts_kernels.h, nvcc and
// fatbinary as programs), the prebuilt cubin in tests/data, and a small fatbin
// writer. The library itself never uses the toolkit; the tests may.
#pragma once

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace loadertest {

inline std::string cudaHome() {
    const char* h = getenv("CUDA_HOME");
    return h && *h ? h : "/usr/local/cuda";
}

// Takes over a malloc'ed buffer from the ts_* helpers.
inline std::vector<uint8_t> adopt(void* p, size_t n) {
    std::vector<uint8_t> v;
    if (p) v.assign(static_cast<uint8_t*>(p), static_cast<uint8_t*>(p) + n);
    free(p);
    return v;
}

inline std::vector<uint8_t> readFile(const std::string& path) {
    size_t n = 0;
    void* p = ts_read_file(path.c_str(), &n);
    return adopt(p, n);
}

// Writes 'bytes' into the tests' temporary folder; returns the path ("" on failure).
inline std::string saveTemp(const std::string& name, const std::vector<uint8_t>& bytes) {
    char* p = ts_temp_write(name.c_str(), bytes.data(), bytes.size());
    std::string path = p ? p : "";
    free(p);
    return path;
}

// Files in tests/data, which the repository holds: a missing one fails the
// test (the suite runs from the repository root).
inline const std::vector<uint8_t>& dataFile(const char* name) {
    static std::vector<std::pair<std::string, std::vector<uint8_t>>> cache;
    for (const auto& [n, bytes] : cache)
        if (n == name) return bytes;
    std::vector<uint8_t> bytes = readFile(std::string("tests/data/") + name);
    if (bytes.empty()) fail_msg("tests/data/%s cannot be read (run the tests from the repository root)", name);
    cache.emplace_back(name, std::move(bytes));
    return cache.back().second;
}
inline const std::vector<uint8_t>& prebuiltCubin() { return dataFile("loader_kernels.sm_90.cubin"); }
inline std::string kernelSource() {
    const std::vector<uint8_t>& s = dataFile("loader_kernels.cu");
    return {s.begin(), s.end()};
}

// A toolkit program the inputs need: whether it is here, and whether what
// was built with it came out. NEED skips a test when the tool is absent and
// fails it when the tool is there but building the inputs failed.
struct Tool {
    bool present = false;
    bool built = false;
};
#define NEED(tool, what)                                                                            \
    do {                                                                                            \
        if (!(tool).present) ts_skip("%s not available", what);                                     \
        if (!(tool).built) fail_msg("%s is here but building the test inputs with it failed", what); \
    } while (0)

inline bool haveProgram(const char* name) { return access((cudaHome() + "/bin/" + name).c_str(), X_OK) == 0; }

// Whether nvJitLink (CUDA 13's) can be loaded, by name or from the toolkit.
inline bool haveNvJitLink() {
    for (std::string p : {std::string("libnvJitLink.so.13"), cudaHome() + "/lib64/libnvJitLink.so.13"})
        if (void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            dlclose(h);
            return true;
        }
    return false;
}

// Runs a shell command; its output goes to 'log' when given.
inline bool run(const std::string& cmd, std::string* log = nullptr) {
    static int n = 0;
    std::string logPath = saveTemp("cmd" + std::to_string(n++) + ".log", {});
    if (logPath.empty()) return false;
    int rc = system((cmd + " >'" + logPath + "' 2>&1").c_str());
    if (log) {
        auto l = readFile(logPath);
        log->assign(l.begin(), l.end());
    }
    return rc == 0;
}

// Runs a toolkit command in which "@OUT" stands for an output file named
// 'out' in the temporary folder; returns that file's bytes, empty on failure
// (the command's messages then go to stderr; to 'log' when given).
inline std::vector<uint8_t> runTool(std::string cmd, const std::string& out, std::string* log = nullptr) {
    const std::string outPath = saveTemp(out, {});
    if (outPath.empty()) return {};
    cmd.replace(cmd.find("@OUT"), 4, "'" + outPath + "'");
    std::string l;
    const bool ok = run(cmd, &l);
    if (log) *log = l;
    if (!ok) {
        fprintf(stderr, "%s failed: %s\n", cmd.c_str(), l.c_str());
        return {};
    }
    return readFile(outPath);
}

// nvcc on 'source' with 'args'; returns the output file (with 'ext').
inline std::vector<uint8_t> nvcc(const std::string& source, const std::string& args, const char* ext,
                                 std::string* log = nullptr) {
    static int n = 0;
    const std::string base = "nvcc" + std::to_string(n++);
    const std::string src = saveTemp(base + ".cu", {source.begin(), source.end()});
    if (src.empty()) return {};
    return runTool(cudaHome() + "/bin/nvcc " + args + " -o @OUT '" + src + "'", base + "." + ext, log);
}

// fatbinary --create with the given --image3 specs ("kind=elf,sm=90,file=...").
inline std::vector<uint8_t> fatbinary(const std::vector<std::string>& images, const std::string& extra = "") {
    static int n = 0;
    std::string cmd = cudaHome() + "/bin/fatbinary --create=@OUT -64 " + extra;
    for (const auto& i : images) cmd += " --image3=" + i;
    return runTool(cmd, "fb" + std::to_string(n++) + ".fatbin");
}

// NVRTC: a cubin for sm_<arch>, or PTX for compute_<arch> (NUL included).
inline std::vector<uint8_t> nvrtcCubin(const std::string& source, int arch, std::vector<const char*> options = {}) {
    size_t n = 0;
    void* p = ts_compile_cubin_opts(source.c_str(), "loader_kernels.cu", arch, options.data(),
                                    static_cast<int>(options.size()), &n);
    return adopt(p, n);
}
inline std::vector<uint8_t> nvrtcPtx(const std::string& source, int arch, std::vector<const char*> options = {}) {
    size_t n = 0;
    void* p = ts_compile_ptx_opts(source.c_str(), "loader_kernels.cu", arch, options.data(),
                                  static_cast<int>(options.size()), &n);
    return adopt(p, n);
}

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
