// Fatbin containers: what nvcc -fatbin writes and nvcc embeds in programs.
//
// Layout (little-endian; ZLUDA's FatbinHeader/FatbinFileHeader in
// vosen/ZLUDA, checked field by field against nvcc 13 output):
//   container header, 16 bytes: u32 magic 0xBA55ED50, u16 version 1,
//     u16 header size, u64 size of the entries that follow
//   entry header (0x40 bytes for ELF, 0x50 for PTX):
//     0x00 u16 kind (1 PTX, 2 ELF)   0x02 u16 version 0x101
//     0x04 u32 header size           0x08 u64 padded payload size
//     0x10 u32 compressed size       0x18 u32 PTX ISA (major << 16 | minor) / ELF ABI
//     0x1c u32 arch (90)             0x20 u32 name offset, 0x24 u32 name length
//     0x28 u64 flags                 0x38 u64 uncompressed size
//   flags: 0x1 64-bit, 0x10 Linux; 0x2000 LZ4 (ZLUDA; nvcc -compress-mode=
//   speed), 0x8000 zstd (nvcc 13's default for PTX and -compress-mode=size:
//   the payload starts with the zstd frame magic 28 b5 2f fd),
//   0x100000 arch-specific code (set on sm_90a entries, seen in nvcc output).
//   The payload follows the entry header.
// cuModuleLoadFatBinary may also get the __fatBinC_Wrapper_t nvcc emits:
// {u32 magic 0x466243B1, u32 version 1|2, const void* container, ...}.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "loader/bytes.h"

namespace nvl::loader::fatbin {

inline constexpr uint32_t kMagic = 0xBA55ED50;
inline constexpr uint32_t kWrapperMagic = 0x466243B1;
inline constexpr size_t kHeaderBytes = 16;

enum class Kind : uint16_t { Ptx = 1, Elf = 2 };
enum class Compression { None, Lz4, Zstd, Unsupported };

struct Entry {
    Kind kind;
    uint32_t arch;          // 90 for sm_90 / compute_90
    bool archSpecific;      // sm_90a
    uint32_t ptxIsa;        // PTX entries: major << 16 | minor
    Compression compression;
    Bytes payload;          // as stored (compressed or not)
    uint64_t uncompressedSize;
};

// The container's entries (64-bit, PTX or ELF; others are skipped).
// CUDA_ERROR_INVALID_IMAGE when a header or size does not fit.
Result<std::vector<Entry>> parse(Bytes container);

// Bytes a container spans according to its header (bare pointer).
Result<size_t> measure(const uint8_t* p);

// The entry to load on a GPU of architecture 'sm' (major*10+minor): SASS for
// exactly this GPU; else the highest PTX not above it (JIT); else SASS of
// the same major and a lower minor (first, with preferBinary).
// CUDA_ERROR_NO_BINARY_FOR_GPU when there is none.
Result<const Entry*> select(const std::vector<Entry>& entries, uint32_t sm, bool preferBinary);

// The payload decompressed; PTX without the NUL padding.
Result<std::vector<uint8_t>> contents(const Entry& e);

}  // namespace nvl::loader::fatbin
