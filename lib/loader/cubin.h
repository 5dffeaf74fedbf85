// CUDA ELF (cubin): header checks and the parse into an Image.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "loader/bytes.h"
#include "loader/elf_file.h"
#include "loader/image.h"

namespace nvl::loader::cubin {

inline constexpr uint16_t kMachineCuda = 190;  // EM_CUDA

struct Header {
    uint16_t type;        // ET_EXEC (loadable) or ET_REL (needs a link)
    uint32_t sm;          // machine architecture, e.g. 90
    uint32_t virtualSm;   // from e_flags on ELF ABI 7 cubins, else 0
};

// Checks that the bytes start with a 64-bit little-endian CUDA ELF header
// that fits, and reads the architecture from e_flags (bits 8..15 on ELF ABI
// version 8, CUDA 12.8+/13; bits 0..7, virtual arch in bits 16..23, before).
Result<Header> readHeader(Bytes elf);

// Checks the structure of a cubin, executable or relocatable, before anyone
// else reads it (nvJitLink among them): the header, every section's range,
// links and alignment, the string tables, every symbol's section and range,
// every relocation's symbol and place, the .nv.info records and the symbols
// they name. CUDA_ERROR_INVALID_IMAGE when anything is off.
Status validate(Bytes elf);
Status validate(const ElfFile& elf);

// Parses an executable cubin (ET_EXEC) into an unrelocated Image. Every
// offset, size and index is validated: a corrupt image gives
// CUDA_ERROR_INVALID_IMAGE, never an out-of-bounds read.
Result<Image> parse(Bytes elf);

// Bytes an ELF image spans according to its own headers, read from a bare
// pointer (cuModuleLoadData has no size). The caller trusts the pointer.
Result<size_t> measure(const uint8_t* p);

}  // namespace nvl::loader::cubin
