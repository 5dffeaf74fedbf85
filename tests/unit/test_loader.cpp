// Loader tests on SASS inputs: cubins from nvcc and NVRTC, fatbins, the
// prebuilt tests/data cubin (runs without a toolkit), relocation, JIT options.
#include <elf.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "loader/image.h"
#include "loader/jit_options.h"
#include "loader/jit_process.h"
#include "loader/relocation.h"
#include "test_loader_support.h"

using namespace nvl;
using namespace nvl::loader;
using namespace loadertest;

namespace {

// Inputs built once: everything the toolkit can make in a few seconds.
struct Inputs {
    Tool nvcc, nvrtc, fatbinary;  // fatbinary: with NVRTC's outputs
    std::vector<uint8_t> prebuilt;  // tests/data/loader_kernels.sm_90.cubin
    std::vector<uint8_t> nvccCubin;
    std::string ptxasLog;
    std::vector<uint8_t> nvrtcCubin, cubin80, ptx90;
    std::vector<uint8_t> fatBoth, fatElfZstd, fat80;
};

Inputs& inputs() {
    static Inputs in = [] {
        Inputs r;
        r.prebuilt = prebuiltCubin();
        const std::string src = kernelSource();
        r.nvcc.present = haveProgram("nvcc");
        if (r.nvcc.present) {
            r.nvccCubin = nvcc(src, "-cubin -arch=sm_90 -Xptxas -v", "cubin", &r.ptxasLog);
            r.nvcc.built = !r.nvccCubin.empty();
        }
        r.nvrtc.present = ts_nvrtc_available(nullptr);
        if (r.nvrtc.present) {
            r.nvrtcCubin = nvrtcCubin(src, 90);
            r.cubin80 = nvrtcCubin(src, 80);
            r.ptx90 = nvrtcPtx(src, 90);
            r.nvrtc.built = !r.nvrtcCubin.empty() && !r.cubin80.empty() && !r.ptx90.empty();
        }
        r.fatbinary.present = r.nvrtc.present && haveProgram("fatbinary");
        if (r.fatbinary.present && r.nvrtc.built) {
            std::string c90 = saveTemp("k90.cubin", r.nvrtcCubin), c80 = saveTemp("k80.cubin", r.cubin80);
            std::string p90 = saveTemp("k90.ptx", r.ptx90);
            r.fatBoth = fatbinary({"kind=elf,sm=90,file=" + c90, "kind=ptx,sm=90,file=" + p90});
            r.fatElfZstd = fatbinary({"kind=elf,sm=90,file=" + c90}, "--compress-all");
            r.fat80 = fatbinary({"kind=elf,sm=80,file=" + c80});
            r.fatbinary.built = !r.fatBoth.empty() && !r.fatElfZstd.empty() && !r.fat80.empty();
        }
        return r;
    }();
    return in;
}

Image loadOk(const std::vector<uint8_t>& bytes, uint32_t major = 9, uint32_t minor = 0) {
    JitOptions jit;
    Result<Image> r = load(bytes.data(), bytes.size(), major, minor, jit);
    if (!r.ok()) print_message("load failed: %d (%s)\n", r.status().code(), jit.errorText.c_str());
    assert_true(r.ok());
    return std::move(*r);
}

CUresult loadCode(const std::vector<uint8_t>& bytes, uint32_t major = 9, uint32_t minor = 0) {
    JitOptions jit;
    return load(bytes.data(), bytes.size(), major, minor, jit).status().code();
}

const Kernel& kernel(const Image& im, const char* name) {
    const Kernel* k = im.findKernel(name);
    if (!k) print_message("no kernel %s\n", name);
    assert_non_null(k);
    return *k;
}

const char* const kKernelNames[] = {"k_ptrs", "k_mixed", "k_page", "k_huge", "k_shared", "k_local",
                                    "k_call", "k_indirect", "k_bounds", "k_noparams", "k_cluster"};

// Kernels, parameters, memory needs and globals of loader_kernels.cu.
void checkKernelsCu(const Image& im) {
    assert_int_equal(im.smVersion, 90);
    assert_int_equal(im.binaryVersion, 90);
    assert_int_equal(im.ptxVersion, 90);
    assert_int_equal(im.kernels.size(), 11);
    for (const char* n : kKernelNames) {
        const Kernel& k = kernel(im, n);
        assert_true(k.textSize > 0 && k.textOffset % 128 == 0);
        assert_true(k.textOffset + k.textSize <= im.bytes.size());
        assert_true(k.registers > 0 && k.registers <= 255);
        assert_int_equal(k.paramBase, 0x210);
        assert_int_equal(k.constBank0Bytes, k.paramBase + k.paramBytes);
        assert_true(k.constBank0ImageOffset % 256 == 0 && k.constBank0ImageOffset + k.constBank0Bytes <= im.bytes.size());
        for (size_t i = 0; i < k.params.size(); ++i) assert_int_equal(k.params[i].ordinal, i);
    }
    // Parameters follow the C ABI: char@0, short@2, int@4, long long@8,
    // double@16, pointer@24, struct {int; double; char}@32 (24 bytes).
    const Kernel& mixed = kernel(im, "k_mixed");
    const uint32_t offsets[] = {0, 2, 4, 8, 16, 24, 32}, sizes[] = {1, 2, 4, 8, 8, 8, 24};
    assert_int_equal(mixed.params.size(), 7);
    for (size_t i = 0; i < 7; ++i) {
        assert_int_equal(mixed.params[i].offset, offsets[i]);
        assert_int_equal(mixed.params[i].size, sizes[i]);
    }
    assert_int_equal(mixed.paramBytes, 56);
    const Kernel& ptrs = kernel(im, "k_ptrs");
    assert_int_equal(ptrs.params.size(), 3);
    assert_int_equal(ptrs.params[2].offset, 16);
    assert_int_equal(ptrs.params[2].size, 4);
    assert_int_equal(ptrs.paramBytes, 20);
    const Kernel& page = kernel(im, "k_page");  // a 4 KiB struct by value
    assert_int_equal(page.params[0].size, 4096);
    assert_int_equal(page.params[1].offset, 4096);
    assert_int_equal(page.paramBytes, 4104);
    const Kernel& huge = kernel(im, "k_huge");  // 32000 bytes: EIATTR_KPARAM_INFO_V2
    assert_int_equal(huge.params[0].size, 32000);
    assert_int_equal(huge.params[1].offset, 32000);
    assert_int_equal(huge.params[1].size, 8);
    assert_int_equal(huge.paramBytes, 32008);
    const Kernel& none = kernel(im, "k_noparams");
    assert_int_equal(none.params.size(), 0);
    assert_int_equal(none.paramBytes, 0);

    const Kernel& shared = kernel(im, "k_shared");
    assert_int_equal(shared.staticSharedBytes, 4000);
    assert_int_equal(shared.reservedSharedBytes, 1024);
    assert_int_equal(shared.sharedWindowBytes, 5024);
    assert_int_equal(shared.numBarriers, 1);
    assert_int_equal(kernel(im, "k_ptrs").staticSharedBytes, 0);
    assert_int_equal(kernel(im, "k_local").localBytesPerThread, 8192);  // volatile int[2048]
    assert_int_equal(kernel(im, "k_local").frameBytes, 8192);
    assert_int_equal(kernel(im, "k_ptrs").localBytesPerThread, 0);
    assert_int_equal(kernel(im, "k_bounds").maxThreadsPerBlock, 128);
    assert_int_equal(kernel(im, "k_ptrs").maxThreadsPerBlock, 0);
    const Kernel& cluster = kernel(im, "k_cluster");
    assert_int_equal(cluster.clusterDims[0], 2);
    assert_int_equal(cluster.clusterDims[1], 1);
    assert_true(cluster.explicitCluster);
    assert_false(kernel(im, "k_ptrs").explicitCluster);

    // Globals: initialised data in the stored bytes, zero-initialised after them.
    const Global* gdev = im.findGlobal("gdev");
    const Global* ginit = im.findGlobal("ginit");
    const Global* cvals = im.findGlobal("cvals");
    const Global* czero = im.findGlobal("czero");
    assert_non_null(gdev);
    assert_non_null(ginit);
    assert_non_null(cvals);
    assert_non_null(czero);
    assert_non_null(im.findGlobal("gptr"));
    assert_non_null(im.findGlobal("table"));
    assert_int_equal(gdev->size, 64);
    assert_true(gdev->imageOffset >= im.bytes.size() && gdev->imageOffset + 64 <= im.allocationBytes());
    float f;
    memcpy(&f, im.bytes.data() + ginit->imageOffset, 4);
    assert_true(f == 3.5f);
    assert_int_equal(cvals->size, 32);
    for (int i = 0; i < 8; ++i) {
        memcpy(&f, im.bytes.data() + cvals->imageOffset + 4 * i, 4);
        assert_true(f == i + 1);
    }
    assert_int_equal(czero->size, 16);
    // __constant__ data is in a bank every kernel gets.
    bool inBank = false;
    for (const ConstantBank& b : kernel(im, "k_ptrs").banks)
        if (cvals->imageOffset >= b.imageOffset && cvals->imageOffset + 32 <= b.imageOffset + b.size) inBank = true;
    assert_true(inBank);
    assert_true(im.alignment >= 256 && im.alignment % 256 == 0);
    // Code is followed by at least 4 KiB of stored bytes.
    for (const Kernel& k : im.kernels) assert_true(k.textOffset + k.textSize + 4096 <= im.bytes.size());
}

void test_prebuilt_cubin(void**) {
    auto& in = inputs();
    checkKernelsCu(loadOk(in.prebuilt));
}

void test_nvcc_cubin(void**) {
    NEED(inputs().nvcc, "nvcc");
    checkKernelsCu(loadOk(inputs().nvccCubin));
}

void test_nvrtc_cubin(void**) {
    NEED(inputs().nvrtc, "NVRTC");
    checkKernelsCu(loadOk(inputs().nvrtcCubin));
}

// Registers, barriers, shared memory and stack agree with what ptxas said
// when it built the cubin (nvcc -Xptxas -v).
void test_kernel_resources_match_ptxas(void**) {
    auto& in = inputs();
    NEED(in.nvcc, "nvcc");
    struct Stats { int regs = -1, barriers = 0, smem = 0, stack = 0; };
    std::map<std::string, Stats> stats;
    // The number right before (or after) a marker on a ptxas line.
    auto numberBefore = [](const std::string& line, const char* marker, int* out) {
        size_t at = line.find(marker);
        if (at == std::string::npos) return false;
        size_t end = at;
        while (end > 0 && line[end - 1] == ' ') --end;
        size_t start = end;
        while (start > 0 && isdigit(static_cast<unsigned char>(line[start - 1]))) --start;
        if (start == end) return false;
        *out = std::stoi(line.substr(start, end - start));
        return true;
    };
    std::string current;
    std::istringstream lines(in.ptxasLog);
    for (std::string line; std::getline(lines, line);) {
        static const char kEntry[] = "Compiling entry function '";
        if (size_t at = line.find(kEntry); at != std::string::npos) {
            size_t start = at + sizeof kEntry - 1;
            current = line.substr(start, line.find('\'', start) - start);
        }
        if (current.empty() || line.find("Used ") == std::string::npos) continue;
        Stats& st = stats[current];
        numberBefore(line, "registers", &st.regs);
        numberBefore(line, "barriers", &st.barriers);
        numberBefore(line, "bytes smem", &st.smem);
        numberBefore(line, "bytes cumulative stack size", &st.stack);
    }
    Image im = loadOk(in.nvccCubin);
    assert_int_equal(stats.size(), im.kernels.size());
    for (const Kernel& k : im.kernels) {
        const Stats& s = stats[k.name];
        print_message("%-11s regs %u/%d barriers %u/%d smem %u/%d local %u/%d\n", k.name.c_str(), k.registers, s.regs,
                      k.numBarriers, s.barriers, k.staticSharedBytes, s.smem, k.localBytesPerThread, s.stack);
        assert_int_equal(k.registers, s.regs);
        assert_int_equal(k.numBarriers, s.barriers);
        assert_int_equal(k.staticSharedBytes, s.smem);
        assert_int_equal(k.localBytesPerThread, s.stack);
    }
}

// The same relocations at two bases: every patch moves by the difference,
// nothing else changes, and the values point where they should.
void test_relocation_at_two_bases(void**) {
    auto& in = inputs();
    Image a = loadOk(in.prebuilt), b = a;
    const uint64_t baseA = 0x7f1200000000ull, baseB = 0x200000ull;
    assert_true(relocate(a, baseA).ok());
    assert_true(relocate(b, baseB).ok());
    assert_true(relocate(b, baseB).ok());  // idempotent
    assert_int_equal(a.relocations.size(), 5);  // 4 x R_CUDA_64 in .nv.constant4, 1 x R_CUDA_G64
    std::vector<bool> patched(a.bytes.size(), false);
    for (const Relocation& r : a.relocations) {
        assert_true(r.type == reloc::k64 || r.type == reloc::kG64);
        uint64_t va, vb;
        memcpy(&va, a.bytes.data() + r.imageOffset, 8);
        memcpy(&vb, b.bytes.data() + r.imageOffset, 8);
        assert_int_equal(va, baseA + r.targetImageOffset + r.addend);
        assert_int_equal(va - vb, baseA - baseB);
        for (size_t i = 0; i < 8; ++i) patched[r.imageOffset + i] = true;
    }
    for (size_t i = 0; i < a.bytes.size(); ++i)
        if (!patched[i]) assert_int_equal(a.bytes[i], b.bytes[i]);
    // int* gptr = &gdev[3]: the initialiser points 12 bytes into gdev.
    uint64_t gptr;
    memcpy(&gptr, a.bytes.data() + a.findGlobal("gptr")->imageOffset, 8);
    assert_int_equal(gptr, baseA + a.findGlobal("gdev")->imageOffset + 12);
    // Bank 4 holds the addresses of __device__ variables the code uses.
    bool found = false;
    for (const ConstantBank& bank : kernel(a, "k_ptrs").banks) {
        if (bank.bank != 4) continue;
        for (uint64_t off = 0; off + 8 <= bank.size; off += 8) {
            uint64_t v;
            memcpy(&v, a.bytes.data() + bank.imageOffset + off, 8);
            if (v == baseA + a.findGlobal("ginit")->imageOffset) found = true;
        }
    }
    assert_true(found);
    assert_int_equal(relocate(a, baseA + 8).code(), CUDA_ERROR_INVALID_VALUE);  // misaligned base
}

// Encodings checked on the H200: libcuda placed a -rdc module with the caller
// at 0x7fbb577a0000, the callee at 0x7fbb577a0b00 and a __device__ int at
// 0x7fbb4fe00500; these are its patched instructions next to nvlink's.
void test_relocation_encodings_match_libcuda(void**) {
    struct Case {
        uint32_t type;
        uint64_t value;
        const char* before;  // nvlink's output (relocation fields zero)
        const char* after;   // read back from the GPU after libcuda loaded it
    } cases[] = {
        {reloc::kAbs55_16_34, 0x7fbb577a0b00, "43790000000000000000c00300ea0f00", "4379c000087a57bb7f00c00300ea0f00"},
        {reloc::kAbs32Lo32, 0x7fbb577a0060, "0278140000000000000f000000e41f00", "0278140060007a57000f000000e41f00"},
        {reloc::kAbs32Hi32, 0x7fbb577a0060, "0278150000000000000f000000ce0f00", "02781500bb7f0000000f000000ce0f00"},
        {reloc::kAbs32Lo32, 0x7fbb4fe00500, "82780400000000000000000000e20f00", "827804000005e04f0000000000e20f00"},
        {reloc::kAbs32Hi32, 0x7fbb4fe00500, "82780500000000000000000000e20f00", "82780500bb7f00000000000000e20f00"},
    };
    auto hex = [](const char* s) {
        std::vector<uint8_t> v;
        for (size_t i = 0; s[i] && s[i + 1]; i += 2) v.push_back(static_cast<uint8_t>(std::stoi(std::string(s + i, 2), nullptr, 16)));
        return v;
    };
    for (const Case& c : cases) {
        std::vector<uint8_t> insn = hex(c.before);
        assert_true(reloc::apply(c.type, insn.data(), c.value));
        assert_memory_equal(insn.data(), hex(c.after).data(), 16);
    }
    // Not a call target: unaligned or beyond 57 bits.
    std::vector<uint8_t> insn(16, 0);
    assert_false(reloc::apply(reloc::kAbs55_16_34, insn.data(), 0x1002));
    assert_false(reloc::apply(reloc::kAbs55_16_34, insn.data(), 1ull << 57));
    assert_false(reloc::apply(reloc::kAbs32_32, insn.data(), 1ull << 32));
    assert_false(reloc::apply(0x3a, insn.data(), 0x1000));  // R_CUDA_ABS47_34: not produced for sm_90, refused
    // Function descriptors in instructions (a device-side launch naming its
    // kernel: UMOV UR4, lo / UMOV UR5, hi): nvlite's descriptor is the
    // function's address, in bits 32..63 as for R_CUDA_ABS32_*.
    const std::vector<uint8_t> umov = hex("82780400000000000000000000e20f00");
    auto word1 = [](const std::vector<uint8_t>& v) {
        uint32_t w;
        memcpy(&w, v.data() + 4, 4);
        return w;
    };
    std::vector<uint8_t> lo = umov, hi = umov, whole = umov;
    assert_true(reloc::apply(reloc::kFuncDesc32Lo32, lo.data(), 0x7fbb577a0b00));
    assert_true(reloc::apply(reloc::kFuncDesc32Hi32, hi.data(), 0x7fbb577a0b00));
    assert_int_equal(word1(lo), 0x577a0b00);
    assert_int_equal(word1(hi), 0x7fbb);
    assert_memory_equal(lo.data() + 8, umov.data() + 8, 8);
    assert_false(reloc::apply(reloc::kFuncDesc32_32, whole.data(), 0x7fbb577a0b00));  // does not fit
    assert_true(reloc::apply(reloc::kFuncDesc32_32, whole.data(), 0x577a0b00));
    assert_int_equal(word1(whole), 0x577a0b00);
    assert_int_equal(reloc::patchWidth(reloc::kFuncDesc32Lo32), 8);
    assert_string_equal(reloc::name(reloc::kFuncDesc32Hi32), "R_CUDA_FUNC_DESC32_HI_32");
}

// cuBLAS 13's cubins link their relocation sections (sh_link) to .nv.info,
// not to the symbol table, and libcuda 580 loads them: the relocations are
// read against the cubin's one symbol table all the same.
void test_relocation_sections_linked_elsewhere(void**) {
    auto& in = inputs();
    std::vector<uint8_t> odd = in.prebuilt;
    Elf64_Ehdr eh;
    memcpy(&eh, odd.data(), sizeof eh);
    uint32_t symtab = 0, other = 0, changed = 0;
    for (uint32_t i = 0; i < eh.e_shnum; ++i) {
        Elf64_Shdr sh;
        memcpy(&sh, odd.data() + eh.e_shoff + uint64_t{i} * sizeof sh, sizeof sh);
        if (sh.sh_type == SHT_SYMTAB) symtab = i;
        else if (sh.sh_type == SHT_PROGBITS && !other) other = i;
    }
    assert_true(symtab != 0 && other != 0);
    for (uint32_t i = 0; i < eh.e_shnum; ++i) {
        const size_t at = eh.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr);
        Elf64_Shdr sh;
        memcpy(&sh, odd.data() + at, sizeof sh);
        if (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) continue;
        assert_int_equal(sh.sh_link, symtab);
        put32(odd, at + offsetof(Elf64_Shdr, sh_link), other);
        ++changed;
    }
    assert_true(changed > 0);
    const Image a = loadOk(in.prebuilt), b = loadOk(odd);
    assert_int_equal(b.relocations.size(), a.relocations.size());
    for (size_t i = 0; i < a.relocations.size(); ++i) {
        assert_int_equal(b.relocations[i].imageOffset, a.relocations[i].imageOffset);
        assert_int_equal(b.relocations[i].targetImageOffset, a.relocations[i].targetImageOffset);
        assert_int_equal(b.relocations[i].addend, a.relocations[i].addend);
    }
}

void test_relocate_rejects_what_it_cannot_apply(void**) {
    Image im;
    im.bytes.assign(64, 0);
    im.relocations = {{0, 0x99, 0, 0}};
    assert_int_equal(relocate(im, 0x1000).code(), CUDA_ERROR_INVALID_IMAGE);
    im.relocations = {{60, reloc::k64, 0, 0}};  // runs past the end
    assert_int_equal(relocate(im, 0x1000).code(), CUDA_ERROR_INVALID_IMAGE);
    im.relocations = {{0, reloc::k32, 0, 0}};
    assert_int_equal(relocate(im, 0x100000000ull).code(), CUDA_ERROR_INVALID_IMAGE);  // does not fit
    assert_true(relocate(im, 0x1000).ok());
    im.relocations = {{8, reloc::k64, 16, -4}};
    assert_true(relocate(im, 0x1000).ok());
    uint64_t v;
    memcpy(&v, im.bytes.data() + 8, 8);
    assert_int_equal(v, 0x1000 + 16 - 4);
}

// SASS for the GPU is used as is: no compiler needed even with one installed.
void test_fatbin_selects_sass(void**) {
    auto& in = inputs();
    NEED(in.fatbinary, "NVRTC and fatbinary");
    jitproc::setLibraryPathForTesting("/nonexistent/libnvJitLink.so");
    JitOptions jit;
    Result<Image> r = load(in.fatBoth.data(), in.fatBoth.size(), 9, 0, jit);
    jitproc::setLibraryPathForTesting(nullptr);
    assert_true(r.ok());
    checkKernelsCu(*r);
    assert_true(jit.infoText.empty() && jit.errorText.empty());
    // A zstd-compressed ELF entry (fatbinary --compress-all).
    checkKernelsCu(loadOk(in.fatElfZstd));
}

void test_fatbin_without_code_for_the_gpu(void**) {
    auto& in = inputs();
    NEED(in.fatbinary, "NVRTC and fatbinary");
    assert_int_equal(loadCode(in.fat80, 9, 0), CUDA_ERROR_NO_BINARY_FOR_GPU);
    Image im = loadOk(in.fat80, 8, 6);  // sm_80 SASS runs on 8.6
    assert_int_equal(im.smVersion, 80);
    assert_int_equal(loadCode(in.cubin80, 9, 0), CUDA_ERROR_NO_BINARY_FOR_GPU);
    assert_int_equal(loadCode(in.nvrtcCubin, 8, 0), CUDA_ERROR_NO_BINARY_FOR_GPU);
    assert_int_equal(loadCode(in.nvrtcCubin, 10, 0), CUDA_ERROR_NO_BINARY_FOR_GPU);
}

// Fatbins made by our own writer around the prebuilt cubin (no toolkit).
void test_hand_made_fatbins(void**) {
    auto& in = inputs();
    checkKernelsCu(loadOk(makeFatbin({{2, 80, 0x11, in.prebuilt}, {2, 90, 0x11, in.prebuilt}})));
    // sm_90a: for 9.0 exactly; plain sm_90 SASS would also serve a 9.x.
    loadOk(makeFatbin({{2, 90, 0x100011, in.prebuilt}}));
    assert_int_equal(loadCode(makeFatbin({{2, 90, 0x100011, in.prebuilt}}), 9, 1), CUDA_ERROR_NO_BINARY_FOR_GPU);
    assert_int_not_equal(loadCode(makeFatbin({{2, 90, 0x11, in.prebuilt}}), 9, 1), CUDA_ERROR_NO_BINARY_FOR_GPU);
    assert_int_equal(loadCode(makeFatbin({{2, 90, 0x10, in.prebuilt}})), CUDA_ERROR_NO_BINARY_FOR_GPU);  // 32-bit
    assert_int_equal(loadCode(makeFatbin({{2, 100, 0x11, in.prebuilt}})), CUDA_ERROR_NO_BINARY_FOR_GPU);
    assert_int_equal(loadCode(makeFatbin({})), CUDA_ERROR_NO_BINARY_FOR_GPU);
    // The old compressed format is refused, not misread.
    assert_int_equal(loadCode(makeFatbin({{2, 90, 0x1011, in.prebuilt}})), CUDA_ERROR_INVALID_IMAGE);
}

// cuModuleLoadData / cuModuleLoadFatBinary give a bare pointer.
void test_unknown_size_and_wrapper(void**) {
    auto& in = inputs();
    JitOptions jit;
    Result<Image> r = load(in.prebuilt.data(), kUnknownSize, 9, 0, jit);
    assert_true(r.ok());
    assert_int_equal(r->kernels.size(), 11);
    std::vector<uint8_t> fat = makeFatbin({{2, 90, 0x11, in.prebuilt}});
    r = load(fat.data(), kUnknownSize, 9, 0, jit);
    assert_true(r.ok());
    struct Wrapper {
        uint32_t magic, version;
        const void* data;
        const void* filenameOrFatbins;
    } w{0x466243B1, 1, fat.data(), nullptr};
    r = load(&w, kUnknownSize, 9, 0, jit);
    assert_true(r.ok());
    checkKernelsCu(*r);
    // With a size, the bytes are a file's contents: a pointer in them means nothing.
    assert_int_equal(load(&w, sizeof w, 9, 0, jit).status().code(), CUDA_ERROR_INVALID_IMAGE);
    w.version = 2;
    assert_true(load(&w, kUnknownSize, 9, 0, jit).ok());
    w.data = in.prebuilt.data();  // a cubin behind the wrapper
    assert_true(load(&w, kUnknownSize, 9, 0, jit).ok());
    w.version = 7;
    assert_int_equal(load(&w, kUnknownSize, 9, 0, jit).status().code(), CUDA_ERROR_INVALID_IMAGE);
    w.version = 1;
    w.data = nullptr;
    assert_int_equal(load(&w, kUnknownSize, 9, 0, jit).status().code(), CUDA_ERROR_INVALID_IMAGE);
    assert_int_equal(load(nullptr, 10, 9, 0, jit).status().code(), CUDA_ERROR_INVALID_VALUE);
    const uint8_t junk[] = {1, 2, 3, 4, 5, 0};
    assert_int_equal(load(junk, kUnknownSize, 9, 0, jit).status().code(), CUDA_ERROR_INVALID_IMAGE);
    assert_int_equal(load("", kUnknownSize, 9, 0, jit).status().code(), CUDA_ERROR_INVALID_IMAGE);
}

void test_load_file(void**) {
    auto& in = inputs();
    JitOptions jit;
    Result<Image> r = loadFile("tests/data/loader_kernels.sm_90.cubin", 9, 0, jit);
    assert_true(r.ok());
    checkKernelsCu(*r);
    std::string fat = saveTemp("hand.fatbin", makeFatbin({{2, 90, 0x11, in.prebuilt}}));
    assert_true(loadFile(fat.c_str(), 9, 0, jit).ok());
    assert_int_equal(loadFile("/nonexistent/module.cubin", 9, 0, jit).status().code(), CUDA_ERROR_FILE_NOT_FOUND);
    assert_int_equal(loadFile(nullptr, 9, 0, jit).status().code(), CUDA_ERROR_INVALID_VALUE);
}

// CU_JIT_* arrays in, libcuda's outputs back (no compiler involved).
void test_jit_options(void**) {
    char info[64], error[16];
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME, CU_JIT_OPTIMIZATION_LEVEL,
                           CU_JIT_MAX_REGISTERS, CU_JIT_TARGET, CU_JIT_LOG_VERBOSE, CU_JIT_FALLBACK_STRATEGY};
    void* values[] = {info, reinterpret_cast<void*>(uintptr_t{sizeof info}), error,
                      reinterpret_cast<void*>(uintptr_t{sizeof error}), nullptr, reinterpret_cast<void*>(uintptr_t{2}),
                      reinterpret_cast<void*>(uintptr_t{32}), reinterpret_cast<void*>(uintptr_t{CU_TARGET_COMPUTE_90A}),
                      reinterpret_cast<void*>(uintptr_t{1}), reinterpret_cast<void*>(uintptr_t{CU_PREFER_BINARY})};
    JitOptions jit;
    assert_true(parseJitOptions(10, opts, values, &jit).ok());
    assert_int_equal(jit.optimizationLevel, 2);
    assert_int_equal(jit.maxRegisters, 32);
    assert_int_equal(jit.targetSm, 90);
    assert_true(jit.targetArchSpecific && jit.verbose && jit.preferBinary);
    std::vector<std::string> args = nvJitLinkArguments(jit, 90, true);
    assert_string_equal(args[0].c_str(), "-arch=sm_90a");
    publish(jit, "short info", "an error message longer than sixteen", 1.5f);
    assert_string_equal(info, "short info");
    assert_int_equal(reinterpret_cast<uintptr_t>(values[1]), 10);  // the length when it fits
    assert_int_equal(strlen(error), 15);                             // truncated, NUL-terminated
    assert_int_equal(reinterpret_cast<uintptr_t>(values[3]), 16);  // the buffer size when it does not
    float wall;
    memcpy(&wall, &values[4], sizeof wall);
    assert_true(wall == 1.5f);
    assert_string_equal(jit.errorText.c_str(), "an error message longer than sixteen");

    CUjit_option bad[] = {static_cast<CUjit_option>(999)};
    JitOptions j2;
    assert_int_equal(parseJitOptions(1, bad, values, &j2).code(), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(parseJitOptions(1, nullptr, values, &j2).code(), CUDA_ERROR_INVALID_VALUE);
    CUjit_option level[] = {CU_JIT_OPTIMIZATION_LEVEL};
    void* five[] = {reinterpret_cast<void*>(uintptr_t{5})};
    assert_int_equal(parseJitOptions(1, level, five, &j2).code(), CUDA_ERROR_INVALID_VALUE);
    assert_true(parseJitOptions(0, nullptr, nullptr, &j2).ok());

    // A SASS load leaves empty logs, as libcuda does.
    auto& in = inputs();
    if (!in.prebuilt.empty()) {
        JitOptions j3;
        assert_true(parseJitOptions(4, opts, values, &j3).ok());
        assert_true(load(in.prebuilt.data(), in.prebuilt.size(), 9, 0, j3).ok());
        assert_string_equal(info, "");
        assert_int_equal(reinterpret_cast<uintptr_t>(values[1]), 0);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prebuilt_cubin),
        cmocka_unit_test(test_nvcc_cubin),
        cmocka_unit_test(test_nvrtc_cubin),
        cmocka_unit_test(test_kernel_resources_match_ptxas),
        cmocka_unit_test(test_relocation_at_two_bases),
        cmocka_unit_test(test_relocation_encodings_match_libcuda),
        cmocka_unit_test(test_relocation_sections_linked_elsewhere),
        cmocka_unit_test(test_relocate_rejects_what_it_cannot_apply),
        cmocka_unit_test(test_fatbin_selects_sass),
        cmocka_unit_test(test_fatbin_without_code_for_the_gpu),
        cmocka_unit_test(test_hand_made_fatbins),
        cmocka_unit_test(test_unknown_size_and_wrapper),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_jit_options),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
