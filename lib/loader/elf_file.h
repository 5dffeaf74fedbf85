// A validated view of an ELF64 little-endian image: sections with their
// names and bytes, symbols, relocation entries. Of CUDA it knows only which
// sections have no bytes in the file.
//
// It reads the headers itself (memcpy of each header: the bytes may sit at
// any alignment) and borrows the bytes: names and section contents point
// into them, so they must outlive the ElfFile (every user opens one for the
// duration of a call). Nothing is copied and nothing but the section and
// symbol tables is allocated: a module load parses a cubin in microseconds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "loader/bytes.h"

namespace nvl::loader {

// Relocatable cubins give uninitialised globals and shared memory section
// types of their own (SHT_CUDA_GLOBAL, SHT_CUDA_SHARED in the public
// section-type table of cubin tools); like SHT_NOBITS they occupy no bytes of
// the file. Executable cubins use SHT_NOBITS.
inline constexpr uint32_t kShtNobits = 8;  // SHT_NOBITS (elf.h, not included here)
inline constexpr uint32_t kShtCudaGlobal = 0x70000007;
inline constexpr uint32_t kShtCudaShared = 0x7000000a;
inline bool hasFileBytes(uint32_t sectionType) {
    return sectionType != kShtNobits && sectionType != kShtCudaGlobal && sectionType != kShtCudaShared;
}

struct ElfSection {
    uint32_t index = 0;
    std::string_view name;   // NUL-terminated in the image (name.data() is a C string)
    uint32_t type = 0;
    uint64_t flags = 0;
    uint64_t addr = 0;
    uint64_t size = 0;       // sh_size (also for SHT_NOBITS)
    uint64_t align = 0;      // sh_addralign (0 or 1: none)
    uint32_t link = 0, info = 0;
    Bytes data;              // the section's bytes; empty without file bytes (hasFileBytes)

    // Offset of 'value' (a symbol value or r_offset) inside the section: the
    // value itself, or value - sh_addr when the section has an address.
    uint64_t relative(uint64_t value) const { return addr != 0 && value >= addr ? value - addr : value; }
};

struct ElfSymbol {
    std::string_view name;   // NUL-terminated in the image
    uint32_t section = 0;    // st_shndx (0: undefined; >= SHN_LORESERVE: special)
    uint64_t value = 0, size = 0;
    uint8_t type = 0, bind = 0, other = 0;
};

struct ElfRelocation {
    uint64_t offset;
    uint32_t type;
    uint32_t symbol;
    int64_t addend;
    bool explicitAddend;     // SHT_RELA
};

class ElfFile {
public:
    // Checks the header, the section header table, every section's file
    // range and names, the symbol table. CUDA_ERROR_INVALID_IMAGE when any is
    // off. 'bytes' must outlive the ElfFile.
    static Result<std::unique_ptr<ElfFile>> open(Bytes bytes);
    ~ElfFile() = default;
    ElfFile(const ElfFile&) = delete;
    ElfFile& operator=(const ElfFile&) = delete;

    // Bytes of the image.
    size_t size() const { return file_.size(); }
    const std::vector<ElfSection>& sections() const { return sections_; }
    const ElfSection* section(uint32_t index) const {
        return index < sections_.size() ? &sections_[index] : nullptr;
    }
    const ElfSection* find(std::string_view name) const;
    // The SHT_SYMTAB symbols (index 0 is the null symbol); empty without one.
    const std::vector<ElfSymbol>& symbols() const { return symbols_; }
    uint32_t symtabIndex() const { return symtab_; }
    // Entries of a SHT_REL or SHT_RELA section.
    Result<std::vector<ElfRelocation>> relocations(const ElfSection& s) const;

private:
    ElfFile() = default;
    Status load();

    Bytes file_;
    std::vector<ElfSection> sections_;
    std::vector<ElfSymbol> symbols_;
    uint32_t symtab_ = 0;
};

}  // namespace nvl::loader
