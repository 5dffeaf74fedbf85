#include "loader/elf_file.h"

#include <gelf.h>
#include <libelf.h>

static_assert(nvl::loader::kShtNobits == SHT_NOBITS);

namespace nvl::loader {

Result<std::unique_ptr<ElfFile>> ElfFile::open(Bytes bytes) {
    static const bool libelfReady = elf_version(EV_CURRENT) != EV_NONE;
    if (!libelfReady) return CUDA_ERROR_UNKNOWN;
    if (bytes.size() < sizeof(Elf64_Ehdr)) return CUDA_ERROR_INVALID_IMAGE;
    std::unique_ptr<ElfFile> f(new ElfFile);
    f->buffer_.assign(bytes.begin(), bytes.end());
    f->elf_ = elf_memory(f->buffer_.data(), f->buffer_.size());
    if (!f->elf_ || elf_kind(f->elf_) != ELF_K_ELF) return CUDA_ERROR_INVALID_IMAGE;
    NVL_TRY(f->load());
    return f;
}

ElfFile::~ElfFile() {
    if (elf_) elf_end(elf_);
}

const ElfSection* ElfFile::find(const std::string& name) const {
    for (const auto& s : sections_)
        if (s.name == name) return &s;
    return nullptr;
}

Status ElfFile::load() {
    const uint64_t fileSize = buffer_.size();
    Bytes file(reinterpret_cast<const uint8_t*>(buffer_.data()), buffer_.size());
    GElf_Ehdr eh;
    if (gelf_getclass(elf_) != ELFCLASS64 || !gelf_getehdr(elf_, &eh)) return CUDA_ERROR_INVALID_IMAGE;
    if (eh.e_ident[EI_DATA] != ELFDATA2LSB) return CUDA_ERROR_INVALID_IMAGE;
    size_t count = 0, strndx = 0;
    if (elf_getshdrnum(elf_, &count) != 0 || elf_getshdrstrndx(elf_, &strndx) != 0) return CUDA_ERROR_INVALID_IMAGE;
    if (count == 0 || count > 65535 || strndx >= count) return CUDA_ERROR_INVALID_IMAGE;
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || !inBounds(eh.e_shoff, count * sizeof(Elf64_Shdr), fileSize))
        return CUDA_ERROR_INVALID_IMAGE;
    // Program headers are not used, but a table past the end means a cut file.
    if (eh.e_phnum && (eh.e_phentsize != sizeof(Elf64_Phdr) ||
                       !inBounds(eh.e_phoff, uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr), fileSize)))
        return CUDA_ERROR_INVALID_IMAGE;

    sections_.resize(count);
    for (size_t i = 0; i < count; ++i) {
        Elf_Scn* scn = elf_getscn(elf_, i);
        GElf_Shdr sh;
        if (!scn || !gelf_getshdr(scn, &sh)) return CUDA_ERROR_INVALID_IMAGE;
        ElfSection& s = sections_[i];
        s.index = static_cast<uint32_t>(i);
        s.type = sh.sh_type;
        s.flags = sh.sh_flags;
        s.addr = sh.sh_addr;
        s.size = sh.sh_size;
        s.align = sh.sh_addralign;
        s.link = sh.sh_link;
        s.info = sh.sh_info;
        if (i == 0) continue;
        if (hasFileBytes(s.type)) {
            if (!inBounds(sh.sh_offset, sh.sh_size, fileSize)) return CUDA_ERROR_INVALID_IMAGE;
            s.data = file.subspan(sh.sh_offset, sh.sh_size);
        }
        const char* name = elf_strptr(elf_, strndx, sh.sh_name);
        if (!name) return CUDA_ERROR_INVALID_IMAGE;
        s.name = name;
    }

    for (const ElfSection& s : sections_) {
        if (s.type != SHT_SYMTAB) continue;
        if (s.size % sizeof(Elf64_Sym) != 0 || s.link == 0 || s.link >= count ||
            sections_[s.link].type != SHT_STRTAB)
            return CUDA_ERROR_INVALID_IMAGE;
        Elf_Data* data = elf_getdata(elf_getscn(elf_, s.index), nullptr);
        if (!data) return CUDA_ERROR_INVALID_IMAGE;
        size_t n = s.size / sizeof(Elf64_Sym);
        symbols_.resize(n);
        for (size_t i = 0; i < n; ++i) {
            GElf_Sym sym;
            if (!gelf_getsym(data, static_cast<int>(i), &sym)) return CUDA_ERROR_INVALID_IMAGE;
            const char* name = elf_strptr(elf_, s.link, sym.st_name);
            if (!name) return CUDA_ERROR_INVALID_IMAGE;
            ElfSymbol& out = symbols_[i];
            out.name = name;
            out.section = sym.st_shndx;
            out.value = sym.st_value;
            out.size = sym.st_size;
            out.type = GELF_ST_TYPE(sym.st_info);
            out.bind = GELF_ST_BIND(sym.st_info);
            out.other = sym.st_other;
        }
        symtab_ = s.index;
        break;  // one symbol table per cubin
    }
    return kOk;
}

Result<std::vector<ElfRelocation>> ElfFile::relocations(const ElfSection& s) const {
    const bool rela = s.type == SHT_RELA;
    const size_t entry = rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
    if ((s.type != SHT_RELA && s.type != SHT_REL) || s.size % entry != 0) return CUDA_ERROR_INVALID_IMAGE;
    std::vector<ElfRelocation> out;
    if (s.size == 0) return out;
    Elf_Data* data = elf_getdata(elf_getscn(elf_, s.index), nullptr);
    if (!data) return CUDA_ERROR_INVALID_IMAGE;
    size_t n = s.size / entry;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        ElfRelocation r{};
        if (rela) {
            GElf_Rela e;
            if (!gelf_getrela(data, static_cast<int>(i), &e)) return CUDA_ERROR_INVALID_IMAGE;
            r = {e.r_offset, static_cast<uint32_t>(GELF_R_TYPE(e.r_info)), static_cast<uint32_t>(GELF_R_SYM(e.r_info)),
                 e.r_addend, true};
        } else {
            GElf_Rel e;
            if (!gelf_getrel(data, static_cast<int>(i), &e)) return CUDA_ERROR_INVALID_IMAGE;
            r = {e.r_offset, static_cast<uint32_t>(GELF_R_TYPE(e.r_info)), static_cast<uint32_t>(GELF_R_SYM(e.r_info)), 0,
                 false};
        }
        out.push_back(r);
    }
    return out;
}

}  // namespace nvl::loader
