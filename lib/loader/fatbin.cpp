#include "loader/fatbin.h"

#include <algorithm>
#include <cstring>

#include "common/trace.h"
#include "loader/decompress.h"

namespace nvl::loader::fatbin {

namespace {

constexpr uint32_t kEntryHeaderBytes = 0x40;
constexpr uint64_t kFlag64Bit = 0x1;
constexpr uint64_t kFlagCompressedOld = 0x1000;  // ZLUDA: an older compressed format (not produced by CUDA 12/13)
constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;
constexpr uint64_t kFlagArchSpecific = 0x100000;

bool sameMajor(uint32_t a, uint32_t b) { return a / 10 == b / 10; }

}  // namespace

Result<size_t> measure(const uint8_t* p) {
    uint32_t magic = readLe<uint32_t>(p);
    uint16_t headerSize = readLe<uint16_t>(p + 6);
    uint64_t size = readLe<uint64_t>(p + 8), total;
    if (magic != kMagic || headerSize < kHeaderBytes || !addOk(headerSize, size, &total) || total > (1ull << 32))
        return CUDA_ERROR_INVALID_IMAGE;
    return static_cast<size_t>(total);
}

Result<std::vector<Entry>> parse(Bytes c) {
    uint32_t magic;
    uint16_t version, headerSize;
    uint64_t size;
    if (!readAt(c, 0, &magic) || !readAt(c, 4, &version) || !readAt(c, 6, &headerSize) || !readAt(c, 8, &size))
        return CUDA_ERROR_INVALID_IMAGE;
    if (magic != kMagic || version != 1 || headerSize < kHeaderBytes || !inBounds(headerSize, size, c.size()))
        return CUDA_ERROR_INVALID_IMAGE;
    std::vector<Entry> entries;
    const uint64_t end = headerSize + size;
    uint64_t off = headerSize;
    while (off < end) {
        if (!inBounds(off, kEntryHeaderBytes, end)) return CUDA_ERROR_INVALID_IMAGE;
        const uint8_t* h = c.data() + off;
        uint16_t kind = readLe<uint16_t>(h);
        uint32_t entryHeader = readLe<uint32_t>(h + 0x04);
        uint64_t padded = readLe<uint64_t>(h + 0x08);
        uint32_t compressed = readLe<uint32_t>(h + 0x10);
        uint64_t flags = readLe<uint64_t>(h + 0x28);
        if (entryHeader < kEntryHeaderBytes || !inBounds(off, entryHeader, end) ||
            !inBounds(off + entryHeader, padded, end))
            return CUDA_ERROR_INVALID_IMAGE;
        Entry e{};
        e.kind = static_cast<Kind>(kind);
        e.ptxIsa = readLe<uint32_t>(h + 0x18);
        e.arch = readLe<uint32_t>(h + 0x1c);
        e.archSpecific = (flags & kFlagArchSpecific) != 0;
        e.uncompressedSize = readLe<uint64_t>(h + 0x38);
        if (flags & kFlagZstd) e.compression = Compression::Zstd;
        else if (flags & kFlagLz4) e.compression = Compression::Lz4;
        else if (flags & kFlagCompressedOld) e.compression = Compression::Unsupported;
        else e.compression = Compression::None;
        uint64_t stored = e.compression == Compression::None ? padded : compressed;
        if (stored > padded) return CUDA_ERROR_INVALID_IMAGE;
        e.payload = c.subspan(off + entryHeader, stored);
        if ((kind == 1 || kind == 2) && (flags & kFlag64Bit)) entries.push_back(e);
        off += entryHeader + padded;
    }
    return entries;
}

Result<const Entry*> select(const std::vector<Entry>& entries, uint32_t sm, bool preferBinary) {
    const Entry* exact = nullptr;
    const Entry* compatible = nullptr;
    const Entry* ptx = nullptr;
    for (const Entry& e : entries) {
        if (e.kind == Kind::Elf) {
            if (e.arch == sm) {
                if (!exact) exact = &e;
            } else if (!e.archSpecific && sameMajor(e.arch, sm) && e.arch < sm) {
                if (!compatible || e.arch > compatible->arch) compatible = &e;
            }
        } else if (e.arch <= sm && (!e.archSpecific || e.arch == sm)) {
            if (!ptx || e.arch > ptx->arch || (e.arch == ptx->arch && e.ptxIsa > ptx->ptxIsa)) ptx = &e;
        }
    }
    const Entry* pick = exact;
    if (!pick) pick = preferBinary ? (compatible ? compatible : ptx) : (ptx ? ptx : compatible);
    if (!pick) return CUDA_ERROR_NO_BINARY_FOR_GPU;
    if (trace::driver())
        trace::print("loader: fatbin: %zu entries, using %s for arch %u", entries.size(),
                     pick->kind == Kind::Elf ? "SASS" : "PTX", pick->arch);
    return pick;
}

Result<std::vector<uint8_t>> contents(const Entry& e) {
    std::vector<uint8_t> out;
    switch (e.compression) {
    case Compression::None: out.assign(e.payload.begin(), e.payload.end()); break;
    case Compression::Zstd: { NVL_ASSIGN_OR_RETURN(out, zstdDecompress(e.payload, e.uncompressedSize)); break; }
    case Compression::Lz4: { NVL_ASSIGN_OR_RETURN(out, lz4Decompress(e.payload, e.uncompressedSize)); break; }
    case Compression::Unsupported: return CUDA_ERROR_INVALID_IMAGE;
    }
    if (e.kind == Kind::Ptx) out.resize(std::find(out.begin(), out.end(), uint8_t{0}) - out.begin());
    return out;
}

}  // namespace nvl::loader::fatbin
