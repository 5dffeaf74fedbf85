// Fatbin containers: what nvcc -fatbin writes and nvcc embeds in programs.
//
// Layout (little-endian; ZLUDA's FatbinHeader/FatbinFileHeader in
// vosen/ZLUDA, checked field by field against nvcc 13 output): a
// ContainerHeader, then entries, each an EntryHeader (0x40 bytes for ELF, a
// PTX entry's header is 0x50: its headerSize says) and its payload.
// Entry flags: 0x1 64-bit, 0x10 Linux; 0x2000 LZ4 (ZLUDA; nvcc
// -compress-mode=speed), 0x8000 zstd (nvcc 13's default for PTX and
// -compress-mode=size: the payload starts with the zstd frame magic
// 28 b5 2f fd), 0x100000 arch-specific code (set on sm_90a entries, seen in
// nvcc output).
// cuModuleLoadFatBinary may also get the __fatBinC_Wrapper_t nvcc emits:
// {u32 magic 0x466243B1, u32 version 1|2, const void* container, ...}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/status.h"
#include "loader/bytes.h"

namespace nvl::loader::fatbin {

inline constexpr uint32_t kMagic = 0xBA55ED50;
inline constexpr uint32_t kWrapperMagic = 0x466243B1;

// The container header (read with readAt: the bytes are untrusted and unaligned).
struct ContainerHeader {
    uint32_t magic;       // kMagic
    uint16_t version;     // 1
    uint16_t headerSize;  // where the entries start
    uint64_t size;        // bytes of entries after the header
};
static_assert(sizeof(ContainerHeader) == 16);
static_assert(offsetof(ContainerHeader, version) == 4);
static_assert(offsetof(ContainerHeader, headerSize) == 6);
static_assert(offsetof(ContainerHeader, size) == 8);
inline constexpr size_t kHeaderBytes = sizeof(ContainerHeader);

// An entry's header; its payload follows it.
struct EntryHeader {
    uint16_t kind;            // Kind
    uint16_t version;         // 0x101
    uint32_t headerSize;      // 0x40 (ELF), 0x50 (PTX): the payload starts there
    uint64_t paddedSize;      // payload bytes, padding included
    uint32_t compressedSize;  // payload bytes when compressed
    uint32_t reserved14;
    uint32_t ptxIsa;          // PTX: major << 16 | minor; ELF: the ABI
    uint32_t arch;            // 90 for sm_90 / compute_90
    uint32_t nameOffset;
    uint32_t nameLength;
    uint64_t flags;           // kEntryFlag*
    uint64_t reserved30;
    uint64_t uncompressedSize;
};
static_assert(sizeof(EntryHeader) == 0x40);
static_assert(offsetof(EntryHeader, headerSize) == 0x04);
static_assert(offsetof(EntryHeader, paddedSize) == 0x08);
static_assert(offsetof(EntryHeader, compressedSize) == 0x10);
static_assert(offsetof(EntryHeader, ptxIsa) == 0x18);
static_assert(offsetof(EntryHeader, arch) == 0x1c);
static_assert(offsetof(EntryHeader, nameOffset) == 0x20);
static_assert(offsetof(EntryHeader, flags) == 0x28);
static_assert(offsetof(EntryHeader, uncompressedSize) == 0x38);

// EntryHeader::flags.
inline constexpr uint64_t kEntryFlag64Bit = 0x1;
inline constexpr uint64_t kEntryFlagCompressedOld = 0x1000;  // ZLUDA: an older compressed format (not produced by CUDA 12/13)
inline constexpr uint64_t kEntryFlagLz4 = 0x2000;
inline constexpr uint64_t kEntryFlagZstd = 0x8000;
inline constexpr uint64_t kEntryFlagArchSpecific = 0x100000;

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
