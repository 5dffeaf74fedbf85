#include "loader/kernel_info.h"

#include <elf.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include "common/trace.h"
#include "loader/nv_info.h"

namespace nvl::loader {

namespace {

// st_other of kernel entry symbols (STO_CUDA_ENTRY in public cubin writers;
// nvcc 13 / NVRTC 13 / nvlink set it on every __global__ and nothing else).
constexpr uint8_t kStoCudaEntry = 0x10;
// sm_90 cubins that refer to the reserved shared memory (an undefined
// .nv.reservedSmem.offset0 symbol; nvcc adds a .nv.shared.reserved.0 section,
// nvJitLink does not) start every .nv.shared.<kernel> with the 1 KiB the
// driver reserves per CTA (CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_-
// BLOCK): a kernel declaring 4000 bytes has a 5024-byte section, and libcuda
// reports 4000 for nvcc's and for JIT output alike (checked on the H200).
// sm_80 cubins have neither and sections without the reserved part.
constexpr uint32_t kReservedSharedBytes = 1024;

constexpr uint64_t kMaxBankBytes = 64 * 1024;
// The QMD (V04, Hopper) has eight constant buffer slots; sm_90 code uses 0-4.
constexpr uint32_t kMaxBanks = 8;
// Beyond any GPU: a value past these is a corrupt image, not a big kernel.
constexpr uint32_t kMaxRegisters = 255, kMaxBarriers = 16, kMaxSharedBytes = 1 << 20;
constexpr uint32_t kMaxParamBytes = 32764;  // CUDA's limit for a kernel's parameters


bool reservesShared(const ElfFile& elf) {
    if (elf.find(".nv.shared.reserved.0")) return true;
    for (const ElfSymbol& s : elf.symbols())
        if (s.name == ".nv.reservedSmem.offset0") return true;
    return false;
}

// Per-function values of the module-wide .nv.info, by symbol index (one
// entry per symbol: no map nodes to allocate).
struct ModuleInfo {
    static constexpr uint32_t kAbsent = UINT32_MAX;
    struct Values {
        uint32_t registers = kAbsent, frame = kAbsent, minStack = kAbsent;
    };
    std::vector<Values> bySymbol;
};

Status readModuleInfo(const ElfFile& elf, ModuleInfo* out) {
    out->bySymbol.assign(elf.symbols().size(), {});
    for (const ElfSection& s : elf.sections()) {
        if (s.type != nvinfo::kShtCudaInfo || s.info != 0) continue;
        for (uint64_t off = 0; off < s.data.size();) {
            NVL_ASSIGN_OR_RETURN(nvinfo::Record r, nvinfo::next(s.data, &off));
            uint32_t ModuleInfo::Values::*field;
            switch (r.attribute) {
            case nvinfo::kRegcount: field = &ModuleInfo::Values::registers; break;
            case nvinfo::kFrameSize: field = &ModuleInfo::Values::frame; break;
            case nvinfo::kMinStackSize: field = &ModuleInfo::Values::minStack; break;
            default: continue;
            }
            uint32_t sym, value;
            if (r.format != nvinfo::kSval || !nvinfo::word(r, 0, &sym) || !nvinfo::word(r, 1, &value) ||
                sym >= out->bySymbol.size())
                return CUDA_ERROR_INVALID_IMAGE;
            out->bySymbol[sym].*field = value;
        }
    }
    return kOk;
}

bool lookup(const ModuleInfo& m, uint32_t ModuleInfo::Values::*field, uint32_t symbol, uint32_t* out) {
    if (symbol >= m.bySymbol.size() || m.bySymbol[symbol].*field == ModuleInfo::kAbsent) return false;
    *out = m.bySymbol[symbol].*field;
    return true;
}

struct ParamCbank {
    bool present = false;
    uint32_t symbol = 0, offset = 0, size = 0;
};

Status readThree(const nvinfo::Record& r, uint32_t out[3]) {
    if (r.format != nvinfo::kSval) return CUDA_ERROR_INVALID_IMAGE;
    for (size_t i = 0; i < 3; ++i)
        if (!nvinfo::word(r, i, &out[i])) return CUDA_ERROR_INVALID_IMAGE;
    return kOk;
}

// The per-kernel .nv.info.<kernel> records.
Status readKernelInfo(Bytes section, Kernel& k, ParamCbank* cbank) {
    int64_t cbankParamSize = -1;
    for (uint64_t off = 0; off < section.size();) {
        NVL_ASSIGN_OR_RETURN(nvinfo::Record r, nvinfo::next(section, &off));
        switch (r.attribute) {
        case nvinfo::kKparamInfo:
        case nvinfo::kKparamInfoV2: {
            if (r.format != nvinfo::kSval || r.payload.size() < 12) return CUDA_ERROR_INVALID_IMAGE;
            KernelParam p;
            p.ordinal = readLe<uint16_t>(r.payload.data() + 4);
            p.offset = readLe<uint16_t>(r.payload.data() + 6);
            if (r.attribute == nvinfo::kKparamInfo) p.size = readLe<uint32_t>(r.payload.data() + 8) >> 18;
            else p.size = readLe<uint16_t>(r.payload.data() + 8);
            k.params.push_back(p);
            break;
        }
        case nvinfo::kParamCbank:
            if (r.format != nvinfo::kSval || r.payload.size() < 8) return CUDA_ERROR_INVALID_IMAGE;
            cbank->present = true;
            cbank->symbol = readLe<uint32_t>(r.payload.data());
            cbank->offset = readLe<uint16_t>(r.payload.data() + 4);
            cbank->size = readLe<uint16_t>(r.payload.data() + 6);
            break;
        case nvinfo::kCbankParamSize:
            if (r.format != nvinfo::kHval) return CUDA_ERROR_INVALID_IMAGE;
            cbankParamSize = r.value;
            break;
        case nvinfo::kMaxThreads: NVL_TRY(readThree(r, k.maxThreads)); break;
        case nvinfo::kReqntid: NVL_TRY(readThree(r, k.requiredBlock)); break;
        case nvinfo::kCtaPerCluster: NVL_TRY(readThree(r, k.clusterDims)); break;
        case nvinfo::kExplicitCluster: k.explicitCluster = true; break;
        case nvinfo::kNumBarriers:
            if (r.format == nvinfo::kSval) return CUDA_ERROR_INVALID_IMAGE;
            k.numBarriers = r.value;
            break;
        default: break;
        }
    }
    if (cbankParamSize >= 0 && (!cbank->present || cbank->size != cbankParamSize)) return CUDA_ERROR_INVALID_IMAGE;
    return kOk;
}

Status checkParams(Kernel& k) {
    if (k.paramBytes > kMaxParamBytes) return CUDA_ERROR_INVALID_IMAGE;
    std::sort(k.params.begin(), k.params.end(),
              [](const KernelParam& a, const KernelParam& b) { return a.ordinal < b.ordinal; });
    for (size_t i = 0; i < k.params.size(); ++i) {
        const KernelParam& p = k.params[i];
        if (p.ordinal != i || !inBounds(p.offset, p.size, k.paramBytes)) return CUDA_ERROR_INVALID_IMAGE;
    }
    if (k.constBank0Bytes && !inBounds(k.paramBase, k.paramBytes, k.constBank0Bytes)) return CUDA_ERROR_INVALID_IMAGE;
    return kOk;
}

// Does the per-kernel section .nv.constantN.<kernel> belong to the kernel
// whose code is section 'text'? sh_info links it; the name is the fallback.
bool ownedBy(const ElfSection& s, uint32_t bank, uint32_t text, const std::string& kernel) {
    if (s.info != 0) return s.info == text;
    return s.name == ".nv.constant" + std::to_string(bank) + "." + kernel;
}

Status readBanks(const ElfFile& elf, const Layout& layout, uint32_t text, const ParamCbank& cbank, Kernel& k) {
    const ElfSection* bank0 = nullptr;
    if (cbank.present) {
        const auto& syms = elf.symbols();
        if (cbank.symbol >= syms.size()) return CUDA_ERROR_INVALID_IMAGE;
        bank0 = elf.section(syms[cbank.symbol].section);
    }
    std::array<std::optional<ConstantBank>, kMaxBanks> banks;  // by bank number
    for (const ElfSection& s : elf.sections()) {
        uint32_t bank;
        bool perKernel;
        if (!layout.placed(s.index) || layout.placement[s.index] != Placement::Constant) continue;
        if (!constantBankOf(s.name, &bank, &perKernel)) continue;
        if (perKernel && !ownedBy(s, bank, text, k.name)) continue;
        if (s.size > kMaxBankBytes || bank >= kMaxBanks) return CUDA_ERROR_INVALID_IMAGE;
        if (bank == 0) {
            if (perKernel && !cbank.present) bank0 = &s;
            continue;
        }
        // A kernel's own bank wins over a module one.
        if (perKernel || !banks[bank]) banks[bank] = ConstantBank{bank, layout.offset[s.index], s.size};
    }
    if (bank0) {
        uint32_t b;
        bool perKernel;
        if (!layout.placed(bank0->index) || !constantBankOf(bank0->name, &b, &perKernel) || b != 0)
            return CUDA_ERROR_INVALID_IMAGE;
        k.constBank0Bytes = static_cast<uint32_t>(bank0->size);
        k.constBank0ImageOffset = layout.offset[bank0->index];
    }
    for (const std::optional<ConstantBank>& b : banks)
        if (b) k.banks.push_back(*b);
    return kOk;
}

void readShared(const ElfFile& elf, bool reserved, uint32_t text, Kernel& k) {
    constexpr std::string_view kPrefix = ".nv.shared.";
    uint64_t window = 0;
    for (const ElfSection& s : elf.sections()) {
        if (s.type != SHT_NOBITS || !s.name.starts_with(kPrefix) || s.name.starts_with(".nv.shared.reserved."))
            continue;
        if (std::string_view(s.name).substr(kPrefix.size()) == k.name || s.info == text) {
            window = s.size;
            break;
        }
    }
    // The SM keeps 1 KiB at the start of every block's window. A cubin with
    // .nv.shared.reserved.* counts it in the kernel's section; otherwise the
    // section is the program's own and the reserved part comes on top.
    window = std::min<uint64_t>(window, UINT32_MAX - kReservedSharedBytes);
    k.staticSharedBytes = static_cast<uint32_t>(reserved ? window - std::min<uint64_t>(window, kReservedSharedBytes) : window);
    k.reservedSharedBytes = kReservedSharedBytes;
    k.sharedWindowBytes = k.staticSharedBytes + kReservedSharedBytes;
}

}  // namespace

Status readKernels(const ElfFile& elf, const Layout& layout, Image& image) {
    ModuleInfo module;
    NVL_TRY(readModuleInfo(elf, &module));
    const bool reserved = reservesShared(elf);
    const auto& syms = elf.symbols();
    for (uint32_t i = 0; i < syms.size(); ++i) {
        const ElfSymbol& sym = syms[i];
        if (sym.type != STT_FUNC || !(sym.other & kStoCudaEntry)) continue;
        if (!layout.placed(sym.section) || layout.placement[sym.section] != Placement::Text)
            return CUDA_ERROR_INVALID_IMAGE;
        const ElfSection& text = *elf.section(sym.section);
        Kernel k;
        k.name = sym.name;
        if (k.name.empty() || image.findKernel(k.name)) return CUDA_ERROR_INVALID_IMAGE;
        uint64_t start = text.relative(sym.value);
        if (start > text.size) return CUDA_ERROR_INVALID_IMAGE;
        uint64_t size = sym.size ? sym.size : text.size - start;
        if (!inBounds(start, size, text.size)) return CUDA_ERROR_INVALID_IMAGE;
        k.textOffset = layout.offset[text.index] + start;
        k.textSize = size;

        if (!lookup(module, &ModuleInfo::Values::registers, i, &k.registers))
            k.registers = text.info >> 24;  // pre-sm_90 cubins
        if (k.registers > kMaxRegisters) return CUDA_ERROR_INVALID_IMAGE;
        lookup(module, &ModuleInfo::Values::frame, i, &k.frameBytes);
        if (!lookup(module, &ModuleInfo::Values::minStack, i, &k.localBytesPerThread))
            k.localBytesPerThread = k.frameBytes;

        ParamCbank cbank;
        for (const ElfSection& s : elf.sections()) {
            if (s.type == nvinfo::kShtCudaInfo && s.info == text.index) {
                NVL_TRY(readKernelInfo(s.data, k, &cbank));
                break;
            }
        }
        NVL_TRY(readBanks(elf, layout, text.index, cbank, k));
        if (cbank.present) {
            k.paramBase = cbank.offset;
            k.paramBytes = cbank.size;
        } else {
            if (!k.params.empty()) return CUDA_ERROR_INVALID_IMAGE;
            k.paramBase = k.constBank0Bytes;
        }
        NVL_TRY(checkParams(k));
        if (k.maxThreads[0] || k.maxThreads[1] || k.maxThreads[2]) {
            uint64_t product = uint64_t{std::max(k.maxThreads[0], 1u)} * std::max(k.maxThreads[1], 1u) *
                               std::max(k.maxThreads[2], 1u);
            k.maxThreadsPerBlock = static_cast<uint32_t>(std::min<uint64_t>(product, UINT32_MAX));
        }
        readShared(elf, reserved, text.index, k);
        if (k.numBarriers > kMaxBarriers || k.sharedWindowBytes > kMaxSharedBytes) return CUDA_ERROR_INVALID_IMAGE;
        if (trace::driver())
            trace::print("loader: kernel %s: %u regs, %u B shared, %u B local, %zu params (%u B at 0x%x)",
                         k.name.c_str(), k.registers, k.staticSharedBytes, k.localBytesPerThread, k.params.size(),
                         k.paramBytes, k.paramBase);
        image.kernels.push_back(std::move(k));
    }
    return kOk;
}

}  // namespace nvl::loader
