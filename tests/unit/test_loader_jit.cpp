// Loader tests that compile or link through nvJitLink: plain PTX, PTX-only
// fatbins (zstd and LZ4), JIT logs and errors, relocatable cubins, the Linker.

#include <string>
#include <vector>

#include "loader/image.h"
#include "loader/jit_options.h"
#include "loader/linker.h"
#include "loader/jit_process.h"
#include "loader/nvjitlink.h"
#include "loader/ptx_compat.h"
#include "loader/relocation.h"
#include "test_loader_support.h"
#include "../data/legacy_ptx.h"

using namespace nvl;
using namespace nvl::loader;
using namespace loadertest;

namespace {

const char kBadPtx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry bad(.param .u64 p)\n{\n  mov.u32 %r1, 1;\n  bogus.instr;\n  ret;\n}\n";

const char kReqntidPtx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry fixed_block(.param .u64 out)\n.reqntid 64, 2, 1\n{\n"
    "  .reg .b64 %rd<2>;\n  .reg .b32 %r<2>;\n"
    "  ld.param.u64 %rd1, [out];\n  mov.u32 %r1, %tid.x;\n  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";

// -rdc halves for the linker: a kernel calling an external device function
// and reading an external variable, and the other unit defining them.
const char kCallerCu[] =
    "extern __device__ int counter;\n"
    "extern __device__ int work(int x);\n"
    "extern \"C\" __global__ void caller(int* out) { out[threadIdx.x] = work(threadIdx.x) + counter; }\n";
const char kCalleeCu[] =
    "__device__ int counter = 5;\n"
    "__device__ __noinline__ int work(int x) { int s = 0; for (int i = 0; i < x; ++i) s += i * x; return s; }\n";

struct Inputs {
    Tool jit;        // NVRTC + nvJitLink
    Tool fatbinary;  // with NVRTC's PTX
    std::vector<uint8_t> ptx90, ptx80, fatPtxZstd, fatPtxLz4, fat80Ptx, callerPtx, calleeCubin, relocatable;
};

Inputs& inputs() {
    static Inputs in = [] {
        Inputs r;
        const std::string src = kernelSource();
        r.jit.present = ts_nvrtc_available(nullptr) && haveNvJitLink();
        if (!r.jit.present) return r;
        r.ptx90 = nvrtcPtx(src, 90);
        r.ptx80 = nvrtcPtx(src, 80);
        r.callerPtx = nvrtcPtx(kCallerCu, 90, {"-rdc=true"});
        r.calleeCubin = nvrtcCubin(kCalleeCu, 90, {"-rdc=true"});
        r.relocatable = nvrtcCubin(src, 90, {"-rdc=true"});
        r.jit.built = !r.ptx90.empty() && !r.ptx80.empty() && !r.callerPtx.empty() && !r.calleeCubin.empty() &&
                      !r.relocatable.empty();
        r.fatbinary.present = haveProgram("fatbinary");
        if (r.jit.built && r.fatbinary.present) {
            std::string p90 = saveTemp("j90.ptx", r.ptx90), p80 = saveTemp("j80.ptx", r.ptx80);
            r.fatPtxZstd = fatbinary({"kind=ptx,sm=90,file=" + p90});  // zstd: the default, as nvcc 13 does
            r.fatPtxLz4 = fatbinary({"kind=ptx,sm=90,file=" + p90}, "--compress-mode=speed");
            r.fat80Ptx = fatbinary({"kind=ptx,sm=80,file=" + p80});
            r.fatbinary.built = !r.fatPtxZstd.empty() && !r.fatPtxLz4.empty() && !r.fat80Ptx.empty();
        }
        return r;
    }();
    return in;
}

uint16_t fatbinFlagsOfFirstEntry(const std::vector<uint8_t>& fat) {
    uint64_t flags;
    memcpy(&flags, fat.data() + 16 + 0x28, 8);
    return static_cast<uint16_t>(flags);
}

void checkJitImage(const Image& im, uint32_t ptxVersion) {
    assert_int_equal(im.smVersion, 90);
    assert_int_equal(im.binaryVersion, 90);
    assert_int_equal(im.ptxVersion, ptxVersion);
    const Kernel* mixed = im.findKernel("k_mixed");
    assert_non_null(mixed);
    assert_int_equal(mixed->params.size(), 7);
    assert_int_equal(mixed->params[6].offset, 32);
    assert_int_equal(mixed->params[6].size, 24);
    assert_non_null(im.findKernel("k_huge"));
    assert_int_equal(im.findKernel("k_huge")->params[0].size, 32000);
    assert_int_equal(im.findKernel("k_shared")->staticSharedBytes, 4000);
    assert_int_equal(im.findKernel("k_local")->localBytesPerThread, 8192);
    assert_non_null(im.findGlobal("cvals"));
    Image copy = im;
    assert_true(relocate(copy, 0x7f0000000000ull).ok());
}

void test_plain_ptx(void**) {
    auto& in = inputs();
    NEED(in.jit, "NVRTC and nvJitLink");
    char info[8192];
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE,
                           CU_JIT_WALL_TIME};
    void* values[] = {info, reinterpret_cast<void*>(uintptr_t{sizeof info}), reinterpret_cast<void*>(uintptr_t{1}),
                      nullptr};
    JitOptions jit;
    assert_true(parseJitOptions(4, opts, values, &jit).ok());
    Result<Image> r = load(in.ptx90.data(), kUnknownSize, 9, 0, jit);  // NUL-terminated text
    assert_true(r.ok());
    checkJitImage(*r, 90);
    assert_int_equal(r->findKernel("k_cluster")->clusterDims[0], 2);
    // ptxas' verbose report, compiled for sm_90a like libcuda does on an H200.
    assert_non_null(strstr(info, "sm_90a"));
    assert_int_equal(reinterpret_cast<uintptr_t>(values[1]), strlen(info));
    float wall;
    memcpy(&wall, &values[3], sizeof wall);
    assert_true(wall > 0);
    // PTX compiled from compute_80: PTX_VERSION 80 (libcuda says so too).
    JitOptions j2;
    r = load(in.ptx80.data(), in.ptx80.size(), 9, 0, j2);
    assert_true(r.ok());
    assert_int_equal(r->ptxVersion, 80);
    // .reqntid
    r = load(kReqntidPtx, kUnknownSize, 9, 0, j2);
    assert_true(r.ok());
    const Kernel* k = r->findKernel("fixed_block");
    assert_non_null(k);
    assert_int_equal(k->requiredBlock[0], 64);
    assert_int_equal(k->requiredBlock[1], 2);
    assert_int_equal(k->requiredBlock[2], 1);
}

void test_ptx_only_fatbins(void**) {
    auto& in = inputs();
    NEED(in.jit, "NVRTC and nvJitLink");
    NEED(in.fatbinary, "fatbinary");
    assert_int_equal(fatbinFlagsOfFirstEntry(in.fatPtxZstd) & 0xa000, 0x8000);  // really zstd
    assert_int_equal(fatbinFlagsOfFirstEntry(in.fatPtxLz4) & 0xa000, 0x2000);   // really LZ4
    JitOptions jit;
    Result<Image> r = load(in.fatPtxZstd.data(), in.fatPtxZstd.size(), 9, 0, jit);
    assert_true(r.ok());
    checkJitImage(*r, 90);
    r = load(in.fatPtxLz4.data(), kUnknownSize, 9, 0, jit);
    assert_true(r.ok());
    checkJitImage(*r, 90);
    r = load(in.fat80Ptx.data(), in.fat80Ptx.size(), 9, 0, jit);  // no SASS: the best PTX below the GPU
    assert_true(r.ok());
    assert_int_equal(r->ptxVersion, 80);
    // PTX newer than the GPU is no code for it.
    assert_int_equal(load(in.fatPtxZstd.data(), in.fatPtxZstd.size(), 8, 9, jit).status().code(),
                     CUDA_ERROR_NO_BINARY_FOR_GPU);
}

void test_ptx_errors_fill_logs(void**) {
    NEED(inputs().jit, "NVRTC and nvJitLink");
    char info[256], error[4096];
    memset(info, 'X', sizeof info);
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {info, reinterpret_cast<void*>(uintptr_t{sizeof info}), error,
                      reinterpret_cast<void*>(uintptr_t{sizeof error})};
    JitOptions jit;
    assert_true(parseJitOptions(4, opts, values, &jit).ok());
    assert_int_equal(load(kBadPtx, kUnknownSize, 9, 0, jit).status().code(), CUDA_ERROR_INVALID_PTX);
    print_message("error log: %s\n", error);
    assert_non_null(strstr(error, "bogus"));
    assert_int_equal(reinterpret_cast<uintptr_t>(values[3]), strlen(error));
    assert_true(strlen(info) < sizeof info);  // NUL-terminated
    // A small buffer gets a NUL-terminated prefix and its own size back.
    char small[16];
    void* v2[] = {info, reinterpret_cast<void*>(uintptr_t{sizeof info}), small,
                  reinterpret_cast<void*>(uintptr_t{sizeof small})};
    JitOptions j2;
    assert_true(parseJitOptions(4, opts, v2, &j2).ok());
    assert_int_equal(load(kBadPtx, sizeof kBadPtx - 1, 9, 0, j2).status().code(), CUDA_ERROR_INVALID_PTX);
    assert_int_equal(strlen(small), 15);
    assert_int_equal(reinterpret_cast<uintptr_t>(v2[3]), 16);
    assert_memory_equal(small, error, 15);

    // A PTX ISA newer than the compiler.
    std::string future(kBadPtx);
    future.replace(future.find("8.0"), 3, "99.9");
    JitOptions j3;
    assert_int_equal(load(future.c_str(), kUnknownSize, 9, 0, j3).status().code(), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
    assert_non_null(strstr(j3.errorText.c_str(), "99.9"));
}

// The header rewrite alone (no compiler needed).
void test_legacy_ptx_header_rewrite(void**) {
    std::string ptx = kLegacyHeaderPtx;
    assert_true(normalizeLegacyPtxHeader(ptx));
    assert_int_equal(ptx.find("\t.version 3.1\n\t.target sm_20\n"), 0);
    assert_int_equal(ptx.size(), sizeof kLegacyHeaderPtx - 1 - strlen(", map_f64_to_f32"));
    assert_string_equal(ptx.c_str() + ptx.find("\t.entry"), strstr(kLegacyHeaderPtx, "\t.entry"));
    assert_false(normalizeLegacyPtxHeader(ptx));  // idempotent

    // PTX 3.0 after comments: only the version moves.
    std::string v30 = kLegacyV30Ptx;
    assert_true(normalizeLegacyPtxHeader(v30));
    assert_int_equal(v30.size(), sizeof kLegacyV30Ptx - 1);
    assert_non_null(strstr(v30.c_str(), "\n.version 3.1\n.target sm_20\n.address_size 64\n"));

    // Comments and blank lines before the header; the option between others.
    std::string mid = "// generated\n/* block\n comment */\n\n.version 1.2\n.target sm_21 , map_f64_to_f32 ,texmode_unified\n"
                      ".entry k { exit; }\n";
    assert_true(normalizeLegacyPtxHeader(mid));
    assert_string_equal(mid.c_str(),
                        "// generated\n/* block\n comment */\n\n.version 3.1\n.target sm_21  ,texmode_unified\n"
                        ".entry k { exit; }\n");
    std::string tesla = ".version 1.4\n.target sm_10, map_f64_to_f32\n.entry k { exit; }\n";
    assert_true(normalizeLegacyPtxHeader(tesla));
    assert_string_equal(tesla.c_str(), ".version 3.1\n.target sm_10\n.entry k { exit; }\n");
    // Modern headers, and text after the header, are left alone.
    for (const char* keep : {".version 8.0\n.target sm_90\n.address_size 64\n.entry k { exit; }\n",
                             ".version 3.1\n.target sm_20\n.entry k { exit; }\n",
                             ".version 10.4\n.target sm_20\n",
                             ".entry k { exit; }\n.version 1.4\n.target sm_20, map_f64_to_f32\n",
                             "/* unterminated .version 1.4\n.target sm_20, map_f64_to_f32\n",
                             "", ".version", ".version 1\n.target sm_20\n", ".version 123.4\n",
                             ".version \n.target sm_20, map_f64_to_f32"}) {
        std::string t = keep;
        assert_false(normalizeLegacyPtxHeader(t));
        assert_string_equal(t.c_str(), keep);
    }
}

// libcuda JITs PTX with a CUDA 4-era header (cuda-samples' matrixMulDynlinkJIT);
// so do we, with the sample's options: an info log buffer and 32 registers.
void test_legacy_ptx_header_compiles(void**) {
    NEED(inputs().jit, "NVRTC and nvJitLink");
    char info[1024];
    memset(info, 'X', sizeof info);
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER, CU_JIT_MAX_REGISTERS};
    void* values[] = {reinterpret_cast<void*>(uintptr_t{sizeof info}), info, reinterpret_cast<void*>(uintptr_t{32})};
    JitOptions jit;
    assert_true(parseJitOptions(3, opts, values, &jit).ok());
    Result<Image> r = load(kLegacyHeaderPtx, kUnknownSize, 9, 0, jit);
    if (!r.ok()) print_message("error log: %s\n", jit.errorText.c_str());
    assert_true(r.ok());
    const Kernel* k = r->findKernel("legacy_scale");
    assert_non_null(k);
    assert_int_equal(k->params.size(), 4);
    assert_int_equal(k->params[2].offset, 16);
    assert_int_equal(k->params[3].offset, 20);
    assert_true(strlen(info) < sizeof info);  // the info log is written (NUL-terminated)
    assert_int_equal(reinterpret_cast<uintptr_t>(values[0]), strlen(info));
    // PTX 3.0 with .file/.loc (nvJitLink wants 3.1).
    JitOptions j3;
    r = load(kLegacyV30Ptx, kUnknownSize, 9, 0, j3);
    if (!r.ok()) print_message("error log: %s\n", j3.errorText.c_str());
    assert_true(r.ok());
    assert_non_null(r->findKernel("legacy_iota"));
    // Through the linker too (cuLinkAddData with PTX).
    JitOptions j2;
    auto linker = Linker::create(9, 0, j2);
    assert_true(linker.ok());
    assert_true((*linker)->add(CU_JIT_INPUT_PTX, kLegacyHeaderPtx, sizeof kLegacyHeaderPtx, "legacy.ptx").ok());
    assert_true((*linker)->complete().ok());
}

void test_jit_compiler_not_found(void**) {
    auto& in = inputs();
    NEED(in.jit, "NVRTC and nvJitLink");
    char error[512] = "unchanged";
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {error, reinterpret_cast<void*>(uintptr_t{sizeof error})};
    JitOptions jit;
    assert_true(parseJitOptions(2, opts, values, &jit).ok());
    jitproc::setLibraryPathForTesting("/nonexistent/libnvJitLink.so.13");
    CUresult ptx = load(in.ptx90.data(), in.ptx90.size(), 9, 0, jit).status().code();
    auto linker = Linker::create(9, 0, jit);
    jitproc::setLibraryPathForTesting(nullptr);
    assert_int_equal(ptx, CUDA_ERROR_JIT_COMPILER_NOT_FOUND);
    assert_non_null(strstr(error, "libnvJitLink"));
    assert_int_equal(linker.status().code(), CUDA_ERROR_JIT_COMPILER_NOT_FOUND);
    // And back: the search finds the toolkit's library again.
    JitOptions j2;
    assert_true(load(in.ptx90.data(), in.ptx90.size(), 9, 0, j2).ok());
}

void test_jit_options_reach_the_compiler(void**) {
    auto& in = inputs();
    NEED(in.jit, "NVRTC and nvJitLink");
    CUjit_option opts[] = {CU_JIT_MAX_REGISTERS};
    void* values[] = {reinterpret_cast<void*>(uintptr_t{16})};
    JitOptions jit;
    assert_true(parseJitOptions(1, opts, values, &jit).ok());
    Result<Image> r = load(in.ptx90.data(), in.ptx90.size(), 9, 0, jit);
    assert_true(r.ok());
    // 34 without the limit (ptxas keeps a floor for functions with calls).
    assert_true(r->findKernel("k_local")->registers < 34);
}

// nvcc -rdc / NVRTC -rdc output (ET_REL): libcuda loads it, so do we, by
// linking it first.
void test_relocatable_cubin(void**) {
    auto& in = inputs();
    NEED(in.jit, "NVRTC and nvJitLink");
    uint16_t type;
    memcpy(&type, in.relocatable.data() + 16, 2);
    assert_int_equal(type, 1);  // ET_REL
    JitOptions jit;
    Result<Image> r = load(in.relocatable.data(), in.relocatable.size(), 9, 0, jit);
    assert_true(r.ok());
    assert_int_equal(r->kernels.size(), 11);
    assert_true(relocate(*r, 0x100000000ull).ok());
}

void test_linker_ptx_and_cubin(void**) {
    auto& in = inputs();
    NEED(in.jit, "NVRTC and nvJitLink");
    char info[4096], error[4096];
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
    void* values[] = {info, reinterpret_cast<void*>(uintptr_t{sizeof info}), error,
                      reinterpret_cast<void*>(uintptr_t{sizeof error}), reinterpret_cast<void*>(uintptr_t{1})};
    JitOptions jit;
    assert_true(parseJitOptions(5, opts, values, &jit).ok());
    auto linker = Linker::create(9, 0, jit);
    assert_true(linker.ok());
    Linker& l = **linker;
    assert_true(l.add(CU_JIT_INPUT_PTX, in.callerPtx.data(), in.callerPtx.size(), "caller.ptx").ok());
    assert_true(l.add(CU_JIT_INPUT_CUBIN, in.calleeCubin.data(), in.calleeCubin.size(), "callee.cubin").ok());
    assert_int_equal(l.add(42, in.callerPtx.data(), 1, "x").code(), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(l.addFile(CU_JIT_INPUT_CUBIN, "/nonexistent/x.cubin").code(), CUDA_ERROR_FILE_NOT_FOUND);
    auto cubin = l.complete();
    assert_true(cubin.ok());
    assert_true(strlen(info) > 0);

    JitOptions j2;
    Result<Image> r = load((*cubin)->data(), (*cubin)->size(), 9, 0, j2);
    assert_true(r.ok());
    const Kernel* k = r->findKernel("caller");
    assert_non_null(k);
    assert_non_null(r->findGlobal("counter"));
    // The cross-unit call and the variable's address are code relocations.
    bool call = false, lo = false, hi = false;
    for (const Relocation& x : r->relocations) {
        call |= x.type == reloc::kAbs55_16_34;
        lo |= x.type == reloc::kAbs32Lo32;
        hi |= x.type == reloc::kAbs32Hi32;
    }
    assert_true(call && lo && hi);
    Image a = *r, b = *r;
    assert_true(relocate(a, 0x7f0000000000ull).ok());
    assert_true(relocate(b, 0x10000000ull).ok());
    for (const Relocation& x : a.relocations) {
        if (x.type != reloc::kAbs55_16_34) continue;
        // Decode both patched calls: bits 16..23 and 34..80 hold target >> 2.
        auto target = [&](const Image& im) {
            const uint8_t* p = im.bytes.data() + x.imageOffset;
            unsigned __int128 w = 0;
            for (int i = 15; i >= 0; --i) w = (w << 8) | p[i];
            uint64_t low = static_cast<uint64_t>(w >> 16) & 0xff, high = static_cast<uint64_t>(w >> 34) & ((1ull << 47) - 1);
            return (high << 10) | (low << 2);
        };
        assert_int_equal(target(a), 0x7f0000000000ull + x.targetImageOffset + x.addend);
        assert_int_equal(target(b), 0x10000000ull + x.targetImageOffset + x.addend);
    }

    // Bad PTX is refused with INVALID_PTX and an error log.
    JitOptions j3;
    auto bad = Linker::create(9, 0, j3);
    assert_true(bad.ok());
    Status s = (*bad)->add(CU_JIT_INPUT_PTX, kBadPtx, sizeof kBadPtx, "bad.ptx");
    if (s.ok()) s = (*bad)->complete().status();
    assert_int_equal(s.code(), CUDA_ERROR_INVALID_PTX);
    assert_non_null(strstr((*bad)->options().errorText.c_str(), "bogus"));

    // Unresolved symbols fail the link.
    auto alone = Linker::create(9, 0, j3);
    assert_true((*alone)->add(CU_JIT_INPUT_PTX, in.callerPtx.data(), in.callerPtx.size(), "caller.ptx").ok());
    assert_false((*alone)->complete().ok());

    // cuLinkAddFile path.
    std::string calleePath = saveTemp("callee.cubin", in.calleeCubin), callerPath = saveTemp("caller.ptx", in.callerPtx);
    auto files = Linker::create(9, 0, j3);
    assert_true((*files)->addFile(CU_JIT_INPUT_PTX, callerPath.c_str()).ok());
    assert_true((*files)->addFile(CU_JIT_INPUT_CUBIN, calleePath.c_str()).ok());
    assert_true((*files)->complete().ok());
}

}  // namespace

// AddressSanitizer build (make test-asan): LeakSanitizer reports, for this
// program only, the 72704-byte emergency exception pool libstdc++ allocates
// when it is loaded (a frame of an "unknown module" at exit) as a leak; it
// is neither ours nor a leak, so leak detection is off here (make soak and
// the other suites keep checking nvlite's memory).
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_ptx),
        cmocka_unit_test(test_ptx_only_fatbins),
        cmocka_unit_test(test_ptx_errors_fill_logs),
        cmocka_unit_test(test_legacy_ptx_header_rewrite),
        cmocka_unit_test(test_legacy_ptx_header_compiles),
        cmocka_unit_test(test_jit_compiler_not_found),
        cmocka_unit_test(test_jit_options_reach_the_compiler),
        cmocka_unit_test(test_relocatable_cubin),
        cmocka_unit_test(test_linker_ptx_and_cubin),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
