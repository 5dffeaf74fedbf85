#include "loader/cubin.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

#include "common/trace.h"
#include "loader/devrt_link.h"
#include "loader/elf_file.h"
#include "loader/kernel_info.h"
#include "loader/layout.h"
#include "loader/nv_info.h"
#include "loader/relocation.h"

namespace nvl::loader::cubin {

namespace {

constexpr uint64_t kMaxImageBytes = 1ull << 30;
// Limits no real cubin comes near: larger claims are corrupt images.
constexpr uint64_t kMaxSections = 1u << 16;
constexpr uint64_t kMaxSymbols = 1u << 22;
constexpr uint64_t kMaxAlign = 1u << 16;
constexpr uint64_t kMaxNobitsBytes = 1ull << 40;
constexpr uint32_t kShtCudaInfo = 0x70000000;  // .nv.info sections
// .nv.info attributes whose payload starts with a symbol index (nv_info.h).
bool namesSymbol(uint8_t attribute) {
    switch (attribute) {
    case nvinfo::kParamCbank: case nvinfo::kFrameSize: case nvinfo::kMinStackSize: case nvinfo::kMaxStackSize:
    case nvinfo::kRegcount:
        return true;
    default:
        return false;
    }
}

// .note.nv.cuinfo: owner "NVIDIA Corp", type 1000, desc {u16 version,
// u16 virtual arch, u32 CUDA version}: 2, 90, 130 in nvcc 13 sm_90 output;
// 80 when compute_80 PTX was compiled for sm_90, which libcuda then reports
// as CU_FUNC_ATTRIBUTE_PTX_VERSION (checked on the H200).
constexpr uint32_t kNoteCuinfo = 1000;

uint32_t virtualArch(const ElfFile& elf) {
    for (const ElfSection& s : elf.sections()) {
        if (s.type != SHT_NOTE) continue;
        uint64_t off = 0;
        while (inBounds(off, 12, s.data.size())) {
            uint32_t namesz = readLe<uint32_t>(s.data.data() + off);
            uint32_t descsz = readLe<uint32_t>(s.data.data() + off + 4);
            uint32_t type = readLe<uint32_t>(s.data.data() + off + 8);
            uint64_t name = off + 12, desc = name + alignUp(namesz, 4);
            if (!inBounds(name, alignUp(namesz, 4), s.data.size()) || !inBounds(desc, descsz, s.data.size())) break;
            static const char kOwner[] = "NVIDIA Corp";
            if (type == kNoteCuinfo && namesz == sizeof kOwner && descsz >= 4 &&
                std::memcmp(s.data.data() + name, kOwner, sizeof kOwner) == 0)
                return readLe<uint16_t>(s.data.data() + desc + 2);
            off = desc + alignUp(descsz, 4);
        }
    }
    return 0;
}

Status readGlobals(const ElfFile& elf, const Layout& layout, Image& image) {
    for (const ElfSymbol& sym : elf.symbols()) {
        if (sym.type != STT_OBJECT || sym.name.empty() || !layout.placed(sym.section)) continue;
        Placement p = layout.placement[sym.section];
        if (p == Placement::Text) continue;
        const ElfSection& s = *elf.section(sym.section);
        uint64_t rel = s.relative(sym.value);
        if (!inBounds(rel, sym.size, s.size)) return CUDA_ERROR_INVALID_IMAGE;
        if (image.findGlobal(sym.name)) continue;
        // st_other bit 2 marks __managed__ variables (nvcc 13 and NVRTC 13 cubins).
        constexpr uint8_t kStoCudaManaged = 0x04;
        image.globals.push_back(
            {std::string(sym.name), layout.offset[sym.section] + rel, sym.size, (sym.other & kStoCudaManaged) != 0});
    }
    return kOk;
}

Status readRelocations(const ElfFile& elf, const Layout& layout, Image& image) {
    const auto& syms = elf.symbols();
    for (const ElfSection& s : elf.sections()) {
        if (s.type != SHT_RELA && s.type != SHT_REL) continue;
        if (!layout.placed(s.info)) continue;  // .debug_frame and other unloaded sections
        const ElfSection& target = *elf.section(s.info);
        if (layout.placement[target.index] == Placement::ZeroFill) return CUDA_ERROR_INVALID_IMAGE;
        // A cubin has one symbol table, and relocations name its symbols
        // whatever sh_link says: cuBLAS 13's cubins link theirs to .nv.info,
        // and libcuda 580 loads them.
        if (syms.empty()) return CUDA_ERROR_INVALID_IMAGE;
        NVL_ASSIGN_OR_RETURN(auto entries, elf.relocations(s));
        for (const ElfRelocation& r : entries) {
            if (r.type == reloc::kNone) continue;
            uint32_t width = reloc::patchWidth(r.type);
            if (width == 0) {
                if (trace::driver()) trace::print("loader: unsupported relocation type 0x%x in %s", r.type, s.name.data());
                return CUDA_ERROR_INVALID_IMAGE;
            }
            uint64_t site = target.relative(r.offset);
            if (!inBounds(site, width, target.size)) return CUDA_ERROR_INVALID_IMAGE;
            if (r.symbol == 0 || r.symbol >= syms.size()) return CUDA_ERROR_INVALID_IMAGE;
            const ElfSymbol& sym = syms[r.symbol];
            uint64_t at = layout.offset[target.index] + site;
            int64_t addend = r.addend;
            if (!r.explicitAddend && !reloc::implicitAddend(r.type, image.bytes.data() + at, &addend))
                return CUDA_ERROR_INVALID_IMAGE;
            if (sym.section == SHN_UNDEF && !sym.name.empty()) {
                // vprintf, malloc, ...: the device runtime's (devrt::link).
                image.externs.push_back({at, r.type, std::string(sym.name), addend});
                continue;
            }
            if (!layout.placed(sym.section)) {
                if (trace::driver()) trace::print("loader: relocation against unresolved symbol '%s'", sym.name.data());
                return CUDA_ERROR_INVALID_IMAGE;
            }
            const ElfSection& home = *elf.section(sym.section);
            uint64_t rel = home.relative(sym.value);
            if (rel > home.size) return CUDA_ERROR_INVALID_IMAGE;
            image.relocations.push_back({at, r.type, layout.offset[home.index] + rel, addend});
        }
    }
    return kOk;
}

Status checkSection(const ElfFile& elf, const ElfSection& s) {
    const size_t count = elf.sections().size();
    if (s.link >= count) return CUDA_ERROR_INVALID_IMAGE;
    if (s.align > kMaxAlign || (s.align & (s.align - 1)) != 0) return CUDA_ERROR_INVALID_IMAGE;
    if (!hasFileBytes(s.type) && s.size > kMaxNobitsBytes) return CUDA_ERROR_INVALID_IMAGE;
    if (s.type == SHT_STRTAB && !s.data.empty() && s.data.back() != 0) return CUDA_ERROR_INVALID_IMAGE;
    if (s.type == SHT_SYMTAB && s.index != elf.symtabIndex()) return CUDA_ERROR_INVALID_IMAGE;  // one table only
    if (s.type == SHT_REL || s.type == SHT_RELA) {
        // Relocations name the one symbol table whatever sh_link says (cuBLAS
        // 13's cubins link theirs to .nv.info; libcuda 580 loads them).
        if (s.info == 0 || s.info >= count || elf.symbols().empty()) return CUDA_ERROR_INVALID_IMAGE;
        const ElfSection& target = *elf.section(s.info);
        NVL_ASSIGN_OR_RETURN(auto entries, elf.relocations(s));
        for (const ElfRelocation& r : entries) {
            if (r.type == reloc::kNone) continue;
            if (!hasFileBytes(target.type) || r.symbol >= elf.symbols().size()) return CUDA_ERROR_INVALID_IMAGE;
            // Types the loader does not apply still patch at least a byte.
            const uint32_t width = std::max<uint32_t>(reloc::patchWidth(r.type), 1);
            if (!inBounds(target.relative(r.offset), width, target.size)) return CUDA_ERROR_INVALID_IMAGE;
        }
    }
    if (s.type == kShtCudaInfo) {
        if (s.info >= count) return CUDA_ERROR_INVALID_IMAGE;
        for (uint64_t off = 0; off < s.data.size();) {
            NVL_ASSIGN_OR_RETURN(nvinfo::Record r, nvinfo::next(s.data, &off));
            uint32_t sym;
            if (r.format == nvinfo::kSval && namesSymbol(r.attribute) &&
                (!nvinfo::word(r, 0, &sym) || sym >= elf.symbols().size()))
                return CUDA_ERROR_INVALID_IMAGE;
        }
    }
    return kOk;
}

Status checkSymbol(const ElfFile& elf, const ElfSymbol& sym) {
    if (sym.section == SHN_UNDEF || sym.section == SHN_ABS || sym.section == SHN_COMMON) return kOk;
    if (sym.section >= elf.sections().size()) return CUDA_ERROR_INVALID_IMAGE;  // SHN_XINDEX included
    const ElfSection& home = *elf.section(sym.section);
    if (sym.type == STT_SECTION) return kOk;
    // Code and data are inside their section; symbols of memory that only
    // exists at run time (shared, local, uninitialised global) may sit
    // after the part the section covers (shared variables after the block's
    // reserved bytes), within reason.
    if (home.type == SHT_PROGBITS) {
        if (!inBounds(home.relative(sym.value), sym.size, home.size)) return CUDA_ERROR_INVALID_IMAGE;
    } else if (!inBounds(home.relative(sym.value), sym.size, kMaxNobitsBytes)) {
        return CUDA_ERROR_INVALID_IMAGE;
    }
    return kOk;
}

}  // namespace

Status validate(const ElfFile& elf) {
    if (elf.sections().size() > kMaxSections || elf.symbols().size() > kMaxSymbols) return CUDA_ERROR_INVALID_IMAGE;
    for (const ElfSection& s : elf.sections())
        if (s.index != 0) NVL_TRY(checkSection(elf, s));
    for (const ElfSymbol& sym : elf.symbols()) NVL_TRY(checkSymbol(elf, sym));
    return kOk;
}

Status validate(Bytes bytes) {
    NVL_ASSIGN_OR_RETURN(Header h, readHeader(bytes));
    if (h.type != ET_EXEC && h.type != ET_REL) return CUDA_ERROR_INVALID_IMAGE;
    NVL_ASSIGN_OR_RETURN(auto elf, ElfFile::open(bytes));
    return validate(*elf);
}

Result<Header> readHeader(Bytes elf) {
    if (elf.size() < sizeof(Elf64_Ehdr) || std::memcmp(elf.data(), ELFMAG, SELFMAG) != 0)
        return CUDA_ERROR_INVALID_IMAGE;
    if (elf[EI_CLASS] != ELFCLASS64 || elf[EI_DATA] != ELFDATA2LSB) return CUDA_ERROR_INVALID_IMAGE;
    Elf64_Ehdr eh;
    std::memcpy(&eh, elf.data(), sizeof eh);
    if (eh.e_machine != kMachineCuda) return CUDA_ERROR_INVALID_IMAGE;
    Header h{};
    h.type = eh.e_type;
    if (eh.e_ident[EI_ABIVERSION] >= 8) {
        h.sm = (eh.e_flags >> 8) & 0xff;
    } else {
        h.sm = eh.e_flags & 0xff;
        h.virtualSm = (eh.e_flags >> 16) & 0xff;
    }
    if (h.sm == 0) return CUDA_ERROR_INVALID_IMAGE;
    return h;
}

Result<size_t> measure(const uint8_t* p) {
    Bytes header(p, sizeof(Elf64_Ehdr));
    NVL_TRY(readHeader(header).status());
    Elf64_Ehdr eh;
    std::memcpy(&eh, p, sizeof eh);
    uint64_t end = sizeof eh, e;
    auto extend = [&](uint64_t off, uint64_t count, uint64_t entry) {
        uint64_t bytes;
        if (__builtin_mul_overflow(count, entry, &bytes) || !addOk(off, bytes, &e) || e > kMaxImageBytes) return false;
        end = std::max(end, e);
        return true;
    };
    if (!extend(eh.e_phoff, eh.e_phnum, eh.e_phentsize) || !extend(eh.e_shoff, eh.e_shnum, eh.e_shentsize))
        return CUDA_ERROR_INVALID_IMAGE;
    if (eh.e_shentsize != sizeof(Elf64_Shdr)) return CUDA_ERROR_INVALID_IMAGE;
    for (uint32_t i = 0; i < eh.e_shnum; ++i) {
        Elf64_Shdr sh;
        std::memcpy(&sh, p + eh.e_shoff + uint64_t{i} * sizeof sh, sizeof sh);
        if (hasFileBytes(sh.sh_type) && !extend(sh.sh_offset, 1, sh.sh_size)) return CUDA_ERROR_INVALID_IMAGE;
    }
    return static_cast<size_t>(end);
}

Result<Image> parse(Bytes bytes) {
    NVL_ASSIGN_OR_RETURN(Header h, readHeader(bytes));
    if (h.type != ET_EXEC) return CUDA_ERROR_INVALID_IMAGE;
    NVL_ASSIGN_OR_RETURN(auto elf, ElfFile::open(bytes));
    NVL_TRY(validate(*elf));
    Image image;
    image.smVersion = image.binaryVersion = h.sm;
    NVL_ASSIGN_OR_RETURN(Layout layout, layOut(*elf, image));
    uint32_t vsm = virtualArch(*elf);
    image.ptxVersion = vsm ? vsm : (h.virtualSm ? h.virtualSm : h.sm);
    NVL_TRY(readGlobals(*elf, layout, image));
    NVL_TRY(readKernels(*elf, layout, image));
    NVL_TRY(readRelocations(*elf, layout, image));
    if (!image.externs.empty()) NVL_TRY(devrt::link(*elf, image));
    if (trace::driver())
        trace::print("loader: cubin sm_%u (from compute_%u): %zu kernels, %zu globals, %zu relocations, %zu+%llu bytes",
                     image.smVersion, image.ptxVersion, image.kernels.size(), image.globals.size(),
                     image.relocations.size(), image.bytes.size(), static_cast<unsigned long long>(image.zeroFillBytes));
    return image;
}

}  // namespace nvl::loader::cubin
