// libFuzzer target: the loader (lib/loader) on bytes it never saw.
//
// The first byte picks what the rest goes to:
//   0  loader::load() with the size (cubin, fatbin with compressed entries,
//      __fatBinC_Wrapper_t, PTX text), then relocate() at two bases
//   1  cubin::validate() and cubin::parse() of an ELF
//   2  fatbin::parse(), fatbin::select() and fatbin::contents() of every entry
//   3  nvinfo::parse() of a .nv.info section
//   4  parseJitOptions() and nvJitLinkArguments() of options made from the bytes
//   5  checkLinkInput() (what cuLinkAddData checks before nvJitLink) of the
//      six input kinds
//   6  loader::load() of the bytes as a file's contents (readInputFile's rules
//      come first: a memfd stands in for the file)
// NVIDIA's JIT is not run (setJitDisabledForTesting): it is not our code, and
// it runs in a worker process anyway (tests/unit/test_jit_isolation.cpp).
//
// Seeds: make_seeds (tests/fuzz/make_seeds.c) writes real cubins, PTX and
// fatbins (NVRTC at build time; the prebuilt cubin when NVRTC is absent)
// with each mode byte.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "loader/cubin.h"
#include "loader/fatbin.h"
#include "loader/image.h"
#include "loader/input_check.h"
#include "loader/jit.h"
#include "loader/jit_options.h"
#include "loader/nv_info.h"

using namespace nvl;
using namespace nvl::loader;

namespace {

void loadAndRelocate(const uint8_t* p, size_t n) {
    JitOptions jit;
    Result<Image> image = load(p, n, 9, 0, jit);
    if (!image.ok()) return;
    (void)relocate(*image, 0x100000000ull);
    (void)relocate(*image, 0xff00000000ull + image->alignment);
    for (const Kernel& k : image->kernels) (void)image->findKernel(k.name);
}

void fatbinEntries(Bytes b) {
    auto entries = fatbin::parse(b);
    if (!entries.ok()) return;
    (void)fatbin::select(*entries, 90, false);
    (void)fatbin::select(*entries, 80, true);
    for (const fatbin::Entry& e : *entries) (void)fatbin::contents(e);
}

// Options from the bytes: (option byte, 4 value bytes) each; pointer-valued
// options get buffers of this harness.
void jitOptions(const uint8_t* p, size_t n) {
    static char info[64], error[48];
    static const char* names[64] = {"k", "kernel_a", "v", "x"};
    for (auto& s : names)
        if (!s) s = "n";
    std::vector<CUjit_option> options;
    std::vector<void*> values;
    for (size_t i = 0; i + 5 <= n && options.size() < 32; i += 5) {
        const int option = p[i] % (CU_JIT_NUM_OPTIONS + 3);
        uint32_t v;
        std::memcpy(&v, p + i + 1, 4);
        void* value = reinterpret_cast<void*>(static_cast<uintptr_t>(v));
        switch (option) {
        case CU_JIT_INFO_LOG_BUFFER: value = info; break;
        case CU_JIT_ERROR_LOG_BUFFER: value = error; break;
        case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: value = reinterpret_cast<void*>(uintptr_t{v % (sizeof info + 1)}); break;
        case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: value = reinterpret_cast<void*>(uintptr_t{v % (sizeof error + 1)}); break;
        case CU_JIT_REFERENCED_KERNEL_NAMES: case CU_JIT_REFERENCED_VARIABLE_NAMES: value = names; break;
        case CU_JIT_REFERENCED_KERNEL_COUNT: case CU_JIT_REFERENCED_VARIABLE_COUNT:
            value = reinterpret_cast<void*>(uintptr_t{v % 65});
            break;
        default: break;
        }
        int o = option;
        CUjit_option opt;
        std::memcpy(&opt, &o, sizeof o);
        options.push_back(opt);
        values.push_back(value);
    }
    JitOptions jit;
    if (!parseJitOptions(static_cast<unsigned>(options.size()), options.data(), values.data(), &jit).ok()) return;
    (void)nvJitLinkArguments(jit, jit.targetSm ? jit.targetSm : 90, jit.targetArchSpecific);
    publish(jit, "an info log that is longer than some buffers", "error", 1.5f);
}

void asFile(const uint8_t* p, size_t n) {
    const int fd = ::memfd_create("fuzz-input", MFD_CLOEXEC);
    if (fd < 0) return;
    if (::write(fd, p, n) == static_cast<ssize_t>(n)) {
        const std::string path = "/proc/self/fd/" + std::to_string(fd);
        JitOptions jit;
        (void)loadFile(path.c_str(), 9, 0, jit);
    }
    ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    setJitDisabledForTesting(true);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const uint8_t mode = data[0];
    const uint8_t* p = data + 1;
    const size_t n = size - 1;
    // A copy the size of the input: an over-read is ASan's to see.
    std::vector<uint8_t> copy(p, p + n);
    const Bytes b(copy.data(), copy.size());
    switch (mode % 7) {
    case 0: if (n) loadAndRelocate(copy.data(), n); break;
    case 1: {
        (void)cubin::validate(b);
        auto image = cubin::parse(b);
        if (image.ok()) (void)relocate(*image, 0x200000000ull);
        break;
    }
    case 2: fatbinEntries(b); break;
    case 3: (void)nvinfo::parse(b); break;
    case 4: jitOptions(copy.data(), n); break;
    case 5: {
        static const int kinds[] = {CU_JIT_INPUT_CUBIN, CU_JIT_INPUT_PTX,     CU_JIT_INPUT_FATBINARY,
                                    CU_JIT_INPUT_OBJECT, CU_JIT_INPUT_LIBRARY, CU_JIT_INPUT_NVVM};
        (void)checkLinkInput(kinds[(mode / 7) % 6], b);
        break;
    }
    case 6: asFile(copy.data(), n); break;
    }
    return 0;
}
