// The device runtime linked into modules (lib/loader/devrt_link.cpp): the
// embedded runtime cubins, and cubins that call printf, assert, malloc and
// free compiled at test time with NVRTC (whole-program for sm_90 and sm_80,
// -rdc linked by nvJitLink): where the runtime lands in the image, what each
// call relocation points at once relocated, the registers and stack of the
// kernels that call it, zero-filled data moved past it, and what is refused
// (unknown externals, runtime cubins that break the rules, corrupt ones).
#include <elf.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "loader/devrt_image.h"
#include "loader/devrt_link.h"
#include "loader/image.h"
#include "loader/jit_options.h"
#include "loader/relocation.h"
#include "test_loader_support.h"

using namespace nvl;
using namespace nvl::loader;
using namespace loadertest;

namespace {

const char kSource[] =
    "extern \"C\" {\n"
    "__device__ int g_zero[3000];\n"  // zero-filled: moves up when the runtime is placed
    "__device__ int g_init[4] = {1, 2, 3, 4};\n"
    "__global__ void k_printf(int a, double b) { printf(\"a=%d b=%f g=%d\\n\", a, b, g_zero[a] + g_init[a & 3]); }\n"
    "__global__ void k_assert(int n) { assert(threadIdx.x < n); g_zero[threadIdx.x] = 1; }\n"
    "__global__ void k_heap(int n) {\n"
    "    int* p = (int*)malloc(n * sizeof(int));\n"
    "    if (p) { p[0] = n; g_zero[1] = p[0]; }\n"
    "    free(p);\n"
    "}\n"
    "__global__ void k_plain(int* out) { out[threadIdx.x] = g_zero[threadIdx.x] + g_init[0]; }\n"
    "}\n";
// k_plain alone: what it is without the runtime.
const char kPlainSource[] =
    "extern \"C\" {\n"
    "__device__ int g_zero[3000];\n"
    "__device__ int g_init[4] = {1, 2, 3, 4};\n"
    "__global__ void k_plain(int* out) { out[threadIdx.x] = g_zero[threadIdx.x] + g_init[0]; }\n"
    "}\n";

constexpr uint64_t kBase = 0x7f1234560000ull;  // where the tests pretend the image lives

struct Inputs {
    Tool nvrtc, jit;
    std::vector<uint8_t> sm90, sm80, plain90, rdc90;
};

Inputs& inputs() {
    static Inputs in = [] {
        Inputs r;
        r.nvrtc.present = ts_nvrtc_available(nullptr);
        if (!r.nvrtc.present) return r;
        r.sm90 = nvrtcCubin(kSource, 90);
        r.sm80 = nvrtcCubin(kSource, 80);
        r.plain90 = nvrtcCubin(kPlainSource, 90);
        r.nvrtc.built = !r.sm90.empty() && !r.sm80.empty() && !r.plain90.empty();
        r.jit.present = r.nvrtc.present && haveNvJitLink();
        if (r.jit.present) {
            r.rdc90 = nvrtcCubin(kSource, 90, {"-rdc=true"});
            r.jit.built = !r.rdc90.empty();
        }
        return r;
    }();
    return in;
}

Image loadOk(const std::vector<uint8_t>& bytes, uint32_t major, uint32_t minor) {
    JitOptions jit;
    Result<Image> img = load(bytes.data(), bytes.size(), major, minor, jit);
    if (!img) fail_msg("load: %s", ts_cu_name(img.status().code()));
    return std::move(*img);
}

const devrt::Library& library(uint32_t sm) {
    auto lib = devrt::libraryFor(sm);
    if (!lib) fail_msg("no device runtime for sm_%u: %s", sm, ts_cu_name(lib.status().code()));
    return **lib;
}

const Kernel& kernel(const Image& img, const char* name) {
    const Kernel* k = img.findKernel(name);
    if (!k) fail_msg("kernel %s missing", name);
    return *k;
}

// The 8-byte words of the kernel's constant bank 4 (the whole-program
// cubins' table of call targets and global addresses), relocated.
std::set<uint64_t> bank4Words(const Image& img, const Kernel& k) {
    std::set<uint64_t> words;
    for (const ConstantBank& b : k.banks) {
        if (b.bank != 4) continue;
        for (uint64_t off = 0; off + 8 <= b.size; off += 8) words.insert(readLe<uint64_t>(img.bytes.data() + b.imageOffset + off));
    }
    return words;
}

// Where the runtime sits in the image.
uint64_t runtimeAt(const Image& img, const devrt::Library& lib) {
    assert_true(img.devrtStateOffset != Image::kNoDevrt);
    assert_true(img.devrtStateOffset >= lib.stateSlot);
    return img.devrtStateOffset - lib.stateSlot;
}

uint64_t target(const devrt::Library& lib, uint64_t at, const char* cudaName) {
    const devrt::Library::Function* f = lib.find(cudaName);
    if (!f) fail_msg("the runtime has no %s", cudaName);
    return kBase + at + f->offset;
}

// ------------------------------------------------------------------ tests

void test_embedded_libraries(void**) {
    for (uint32_t sm : {80u, 90u, 86u, 89u}) {
        const devrt::Library& lib = library(sm);
        // printf, assert, malloc, free, cooperative groups' two calls, and the
        // device-side launch calls under their CDP1 and CDP2 names.
        assert_int_equal(lib.functions.size(), 18);
        assert_int_equal(lib.block.size() % 256, 0);
        for (const char* n : {"vprintf", "__assertfail", "malloc", "free", "__cuda_syscall_CGS_get_intrinsic_handle",
                              "__cuda_syscall_CGS_sync", "cnpGetParameterBufferV2", "cnpLaunchDeviceV2", "cnpSetLastError",
                              "cnpGetLastError", "cnpStreamCreate", "cnpStreamDestroy",
                              "__cuda_syscall_cnpv2GetParameterBufferV2", "__cuda_syscall_cnpv2LaunchDeviceV2",
                              "__cuda_syscall_cnpv2SetLastError", "__cuda_syscall_cnpv2GetLastError",
                              "__cuda_syscall_cnpv2StreamCreate", "__cuda_syscall_cnpv2StreamDestroy"}) {
            const devrt::Library::Function* f = lib.find(n);
            if (!f) fail_msg("sm_%u: no %s", sm, n);
            // Within what a 1024-thread block may have, and called as ABI functions.
            if (f->registers == 0 || f->registers > 32) fail_msg("sm_%u %s: %u registers", sm, n, f->registers);
            assert_true(f->stackBytes <= 512);
            assert_true(f->offset % 128 == 0 && f->offset < lib.stateSlot);
        }
        assert_true(lib.stateSlot + 8 <= lib.block.size());
        assert_int_equal(readLe<uint64_t>(lib.block.data() + lib.stateSlot), 0);
        // The code reaches the State through its slot (ABS32 LO/HI pairs).
        size_t toState = 0;
        for (const auto& r : lib.relocations) {
            assert_true(r.offset < lib.block.size() && r.target < lib.block.size());
            if (r.target == lib.stateSlot) ++toState;
        }
        assert_true(toState >= 8);
    }
    for (uint32_t sm : {70u, 75u, 100u, 120u}) assert_int_equal(devrt::libraryFor(sm).status().code(), CUDA_ERROR_NOT_SUPPORTED);
}

void test_whole_program_sm90(void**) {
    NEED(inputs().nvrtc, "NVRTC");
    const devrt::Library& lib = library(90);
    Image img = loadOk(inputs().sm90, 9, 0);
    assert_true(img.externs.empty());
    const uint64_t at = runtimeAt(img, lib);
    assert_int_equal(at % 256, 0);
    assert_true(at + lib.block.size() <= img.bytes.size());
    assert_bytes_named(lib.block.data(), img.bytes.data() + at, lib.block.size(), "the runtime in the image");

    // Zero-filled data moved past the runtime, initialised data stays before it.
    const Global* zero = img.findGlobal("g_zero");
    const Global* init = img.findGlobal("g_init");
    assert_non_null(zero);
    assert_non_null(init);
    assert_true(zero->imageOffset >= img.bytes.size());
    assert_int_equal(zero->imageOffset % 4, 0);
    assert_true(init->imageOffset + init->size <= at);
    assert_true(img.allocationBytes() >= zero->imageOffset + zero->size);
    bool zeroReferenced = false;
    for (const Relocation& r : img.relocations) {
        const bool inStored = r.targetImageOffset < img.bytes.size();
        const bool inZeroFill = r.targetImageOffset >= img.bytes.size() && r.targetImageOffset < img.allocationBytes();
        assert_true(inStored || inZeroFill);
        if (r.targetImageOffset == zero->imageOffset) zeroReferenced = true;
    }
    assert_true(zeroReferenced);

    // Which kernels call what, and what they became.
    const Kernel& kp = kernel(img, "k_printf");
    const Kernel& ka = kernel(img, "k_assert");
    const Kernel& kh = kernel(img, "k_heap");
    const Kernel& kn = kernel(img, "k_plain");
    assert_int_equal(kp.devrtUses, kDevrtFifo);
    assert_int_equal(ka.devrtUses, kDevrtFifo);
    assert_int_equal(kh.devrtUses, kDevrtHeap);
    assert_int_equal(kn.devrtUses, 0);
    assert_true(kp.registers >= lib.find("vprintf")->registers);
    assert_true(ka.registers >= lib.find("__assertfail")->registers);
    assert_true(kh.registers >= std::max(lib.find("malloc")->registers, lib.find("free")->registers));
    assert_true(kp.localBytesPerThread >= kp.frameBytes + lib.find("vprintf")->stackBytes);
    // k_plain is what it is without the runtime.
    Image plain = loadOk(inputs().plain90, 9, 0);
    assert_int_equal(kn.registers, kernel(plain, "k_plain").registers);
    assert_int_equal(kn.localBytesPerThread, kernel(plain, "k_plain").localBytesPerThread);
    assert_int_equal(plain.devrtStateOffset, Image::kNoDevrt);

    // Relocated: the call table in bank 4 points at the runtime's functions,
    // the runtime's code at its State slot.
    assert_int_equal(relocate(img, kBase).code(), CUDA_SUCCESS);
    auto words = bank4Words(img, kp);
    assert_true(words.count(target(lib, at, "vprintf")));
    assert_true(words.count(kBase + zero->imageOffset));
    words = bank4Words(img, ka);
    assert_true(words.count(target(lib, at, "__assertfail")));
    words = bank4Words(img, kh);
    assert_true(words.count(target(lib, at, "malloc")));
    assert_true(words.count(target(lib, at, "free")));
    size_t toState = 0;
    for (const Relocation& r : img.relocations)
        if (r.targetImageOffset == img.devrtStateOffset) ++toState;
    assert_true(toState >= 8);
}

void test_whole_program_sm80(void**) {
    NEED(inputs().nvrtc, "NVRTC");
    const devrt::Library& lib = library(86);
    Image img = loadOk(inputs().sm80, 8, 6);  // sm_80 SASS on an sm_86 GPU
    assert_int_equal(img.smVersion, 80);
    const uint64_t at = runtimeAt(img, lib);
    assert_bytes_named(lib.block.data(), img.bytes.data() + at, lib.block.size(), "the sm_80 runtime in the image");
    assert_int_equal(relocate(img, kBase).code(), CUDA_SUCCESS);
    assert_true(bank4Words(img, kernel(img, "k_printf")).count(target(lib, at, "vprintf")));
    assert_true(bank4Words(img, kernel(img, "k_heap")).count(target(lib, at, "malloc")));
    assert_int_equal(kernel(img, "k_plain").devrtUses, 0);
    assert_int_equal(kernel(img, "k_assert").devrtUses, kDevrtFifo);
}

// -rdc code linked by nvJitLink calls the runtime with CALL instructions
// carrying R_CUDA_ABS55_16_34: the patched fields decode to our functions.
void test_rdc_calls(void**) {
    NEED(inputs().jit, "NVRTC and nvJitLink");
    const devrt::Library& lib = library(90);
    Image img = loadOk(inputs().rdc90, 9, 0);
    const uint64_t at = runtimeAt(img, lib);
    assert_int_equal(relocate(img, kBase).code(), CUDA_SUCCESS);
    std::set<std::string> reached;
    for (const Relocation& r : img.relocations) {
        if (r.type != reloc::kAbs55_16_34) continue;
        const uint8_t* site = img.bytes.data() + r.imageOffset;
        uint64_t low = 0, high = 0;
        for (unsigned i = 0; i < 8; ++i) low |= static_cast<uint64_t>((site[(16 + i) / 8] >> ((16 + i) % 8)) & 1) << i;
        for (unsigned i = 0; i < 47; ++i) high |= static_cast<uint64_t>((site[(34 + i) / 8] >> ((34 + i) % 8)) & 1) << i;
        const uint64_t callee = (high << 10) | (low << 2);
        for (const char* n : {"vprintf", "__assertfail", "malloc", "free"})
            if (callee == target(lib, at, n)) reached.insert(n);
    }
    assert_int_equal(reached.size(), 4);
    assert_int_equal(kernel(img, "k_heap").devrtUses, kDevrtHeap);
    assert_int_equal(kernel(img, "k_plain").devrtUses, 0);
}

// Renames every "vprintf" in the cubin's string tables.
std::vector<uint8_t> renamed(std::vector<uint8_t> cubin, const std::string& from, const std::string& to) {
    const std::string needle = std::string(1, '\0') + from + std::string(1, '\0');
    size_t hits = 0;
    for (size_t i = 0; i + needle.size() <= cubin.size(); ++i) {
        if (memcmp(cubin.data() + i, needle.data(), needle.size()) != 0) continue;
        memcpy(cubin.data() + i + 1, to.data(), to.size());
        ++hits;
    }
    if (hits == 0) fail_msg("no \"%s\" in the cubin", from.c_str());
    return cubin;
}

void test_unknown_extern_refused(void**) {
    NEED(inputs().nvrtc, "NVRTC");
    const std::vector<uint8_t> bad = renamed(inputs().sm90, "vprintf", "vprintq");
    JitOptions jit;
    assert_int_equal(load(bad.data(), bad.size(), 9, 0, jit).status().code(), CUDA_ERROR_INVALID_IMAGE);
    // Without a runtime for the architecture: refused, not half linked.
    assert_int_equal(load(inputs().sm90.data(), inputs().sm90.size(), 10, 0, jit).status().code(),
                     CUDA_ERROR_NO_BINARY_FOR_GPU);
}

void test_library_rules(void**) {
    const Bytes embedded = devrt::embeddedCubin(90);
    assert_true(embedded.size() > 1024);
    assert_int_equal(devrt::parseLibrary(embedded).status().code(), CUDA_SUCCESS);
    // A runtime without one of its functions, or with a foreign section, is refused.
    std::vector<uint8_t> copy(embedded.begin(), embedded.end());
    assert_int_equal(devrt::parseLibrary(renamed(copy, "nvl_devrt_free", "nvl_devrt_fref")).status().code(),
                     CUDA_ERROR_INVALID_IMAGE);
    assert_int_equal(devrt::parseLibrary(renamed(copy, "nvl_devrt_state", "nvl_devrt_statf")).status().code(),
                     CUDA_ERROR_INVALID_IMAGE);
    if (inputs().nvrtc.built) {
        // An executable cubin, and relocatable user code (constant banks, no runtime symbols).
        assert_int_equal(devrt::parseLibrary(inputs().sm90).status().code(), CUDA_ERROR_INVALID_IMAGE);
        const std::vector<uint8_t> rdc = nvrtcCubin(
            "__constant__ int c_table[4] = {1, 2, 3, 4};\n"
            "extern \"C\" __device__ __noinline__ int nvl_devrt_vprintf(const char*, const char*) { return c_table[1]; }\n",
            90, {"-rdc=true"});
        assert_false(rdc.empty());
        assert_int_equal(devrt::parseLibrary(rdc).status().code(), CUDA_ERROR_INVALID_IMAGE);
    }
    // Corrupt copies: an answer, never a crash (fixed seed).
    std::mt19937_64 rng(4242);
    for (int iter = 0; iter < 400; ++iter) {
        std::vector<uint8_t> bad = copy;
        for (int n = 1 + static_cast<int>(rng() % 8); n > 0; --n) bad[rng() % bad.size()] = static_cast<uint8_t>(rng());
        if (iter % 4 == 0) bad.resize(rng() % bad.size());
        (void)devrt::parseLibrary(bad);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedded_libraries),
        cmocka_unit_test(test_whole_program_sm90),
        cmocka_unit_test(test_whole_program_sm80),
        cmocka_unit_test(test_rdc_calls),
        cmocka_unit_test(test_unknown_extern_refused),
        cmocka_unit_test(test_library_rules),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
