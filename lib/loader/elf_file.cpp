#include "loader/elf_file.h"

#include <elf.h>

#include <cstring>

static_assert(nvl::loader::kShtNobits == SHT_NOBITS);

namespace nvl::loader {

namespace {

// A header of the image, wherever it sits (the bytes may have any alignment).
template <class T>
T readHeaderAt(Bytes file, uint64_t offset) {
    T v;
    std::memcpy(&v, file.data() + offset, sizeof v);
    return v;
}

// The NUL-terminated string at 'offset' of a string table, or false when the
// offset is outside it or no NUL ends the string inside it.
bool stringAt(const ElfSection& table, uint64_t offset, std::string_view* out) {
    if (table.type != SHT_STRTAB || offset >= table.data.size()) return false;
    const auto* start = reinterpret_cast<const char*>(table.data.data()) + offset;
    const void* nul = std::memchr(start, 0, table.data.size() - offset);
    if (!nul) return false;
    *out = std::string_view(start, static_cast<const char*>(nul) - start);
    return true;
}

}  // namespace

Result<std::unique_ptr<ElfFile>> ElfFile::open(Bytes bytes) {
    if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
        return CUDA_ERROR_INVALID_IMAGE;
    std::unique_ptr<ElfFile> f(new ElfFile);
    f->file_ = bytes;
    NVL_TRY(f->load());
    return f;
}

const ElfSection* ElfFile::find(std::string_view name) const {
    for (const auto& s : sections_)
        if (s.name == name) return &s;
    return nullptr;
}

Status ElfFile::load() {
    const Bytes file = file_;
    const uint64_t fileSize = file.size();
    const auto eh = readHeaderAt<Elf64_Ehdr>(file, 0);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_ident[EI_VERSION] != EV_CURRENT)
        return CUDA_ERROR_INVALID_IMAGE;
    if (eh.e_shoff == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) || !inBounds(eh.e_shoff, sizeof(Elf64_Shdr), fileSize))
        return CUDA_ERROR_INVALID_IMAGE;
    // Extended numbering: more sections than e_shnum holds, or a name table
    // index past SHN_LORESERVE, are kept in section 0's header.
    const auto first = readHeaderAt<Elf64_Shdr>(file, eh.e_shoff);
    const uint64_t count = eh.e_shnum ? eh.e_shnum : first.sh_size;
    const uint64_t strndx = eh.e_shstrndx == SHN_XINDEX ? first.sh_link : eh.e_shstrndx;
    if (count == 0 || count > 65535 || strndx >= count) return CUDA_ERROR_INVALID_IMAGE;
    if (!inBounds(eh.e_shoff, count * sizeof(Elf64_Shdr), fileSize)) return CUDA_ERROR_INVALID_IMAGE;
    // Program headers are not used, but a table past the end means a cut file.
    if (eh.e_phnum && (eh.e_phentsize != sizeof(Elf64_Phdr) ||
                       !inBounds(eh.e_phoff, uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr), fileSize)))
        return CUDA_ERROR_INVALID_IMAGE;

    // Headers and file ranges first (the name table may come after the
    // sections it names), then the names.
    sections_.resize(count);
    for (size_t i = 0; i < count; ++i) {
        const auto sh = readHeaderAt<Elf64_Shdr>(file, eh.e_shoff + i * sizeof(Elf64_Shdr));
        ElfSection& s = sections_[i];
        s.index = static_cast<uint32_t>(i);
        s.type = sh.sh_type;
        s.flags = sh.sh_flags;
        s.addr = sh.sh_addr;
        s.size = sh.sh_size;
        s.align = sh.sh_addralign;
        s.link = sh.sh_link;
        s.info = sh.sh_info;
        if (i == 0 || !hasFileBytes(s.type)) continue;
        if (!inBounds(sh.sh_offset, sh.sh_size, fileSize)) return CUDA_ERROR_INVALID_IMAGE;
        s.data = file.subspan(sh.sh_offset, sh.sh_size);
    }
    const ElfSection& names = sections_[strndx];
    for (size_t i = 1; i < count; ++i) {
        const auto sh = readHeaderAt<Elf64_Shdr>(file, eh.e_shoff + i * sizeof(Elf64_Shdr));
        if (!stringAt(names, sh.sh_name, &sections_[i].name)) return CUDA_ERROR_INVALID_IMAGE;
    }

    for (const ElfSection& s : sections_) {
        if (s.type != SHT_SYMTAB) continue;
        if (s.size % sizeof(Elf64_Sym) != 0 || s.link == 0 || s.link >= count ||
            sections_[s.link].type != SHT_STRTAB)
            return CUDA_ERROR_INVALID_IMAGE;
        const ElfSection& strings = sections_[s.link];
        const size_t n = s.size / sizeof(Elf64_Sym);
        symbols_.resize(n);
        for (size_t i = 0; i < n; ++i) {
            Elf64_Sym sym;
            std::memcpy(&sym, s.data.data() + i * sizeof sym, sizeof sym);
            ElfSymbol& out = symbols_[i];
            if (!stringAt(strings, sym.st_name, &out.name)) return CUDA_ERROR_INVALID_IMAGE;
            out.section = sym.st_shndx;
            out.value = sym.st_value;
            out.size = sym.st_size;
            out.type = ELF64_ST_TYPE(sym.st_info);
            out.bind = ELF64_ST_BIND(sym.st_info);
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
    if ((s.type != SHT_RELA && s.type != SHT_REL) || s.size % entry != 0 || s.data.size() != s.size)
        return CUDA_ERROR_INVALID_IMAGE;
    std::vector<ElfRelocation> out;
    const size_t n = s.size / entry;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* at = s.data.data() + i * entry;
        if (rela) {
            Elf64_Rela e;
            std::memcpy(&e, at, sizeof e);
            out.push_back({e.r_offset, static_cast<uint32_t>(ELF64_R_TYPE(e.r_info)),
                           static_cast<uint32_t>(ELF64_R_SYM(e.r_info)), e.r_addend, true});
        } else {
            Elf64_Rel e;
            std::memcpy(&e, at, sizeof e);
            out.push_back({e.r_offset, static_cast<uint32_t>(ELF64_R_TYPE(e.r_info)),
                           static_cast<uint32_t>(ELF64_R_SYM(e.r_info)), 0, false});
        }
    }
    return out;
}

}  // namespace nvl::loader
