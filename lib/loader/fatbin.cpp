#include "loader/fatbin.h"

#include <algorithm>
#include <cstring>

#include "common/trace.h"
#include "loader/decompress.h"

namespace nvl::loader::fatbin {

namespace {

constexpr uint32_t kEntryHeaderBytes = sizeof(EntryHeader);
// Containers larger than this are not taken (nvcc's are far smaller).
constexpr uint64_t kMaxContainerBytes = 1ull << 32;

bool sameMajor(uint32_t a, uint32_t b) { return a / 10 == b / 10; }

}  // namespace

Result<size_t> measure(const uint8_t* p) {
    const ContainerHeader h = readLe<ContainerHeader>(p);
    uint64_t total;
    if (h.magic != kMagic || h.headerSize < kHeaderBytes || !addOk(h.headerSize, h.size, &total) ||
        total > kMaxContainerBytes)
        return CUDA_ERROR_INVALID_IMAGE;
    return static_cast<size_t>(total);
}

Result<std::vector<Entry>> parse(Bytes c) {
    ContainerHeader ch;
    if (!readAt(c, 0, &ch)) return CUDA_ERROR_INVALID_IMAGE;
    if (ch.magic != kMagic || ch.version != 1 || ch.headerSize < kHeaderBytes || !inBounds(ch.headerSize, ch.size, c.size()))
        return CUDA_ERROR_INVALID_IMAGE;
    std::vector<Entry> entries;
    const uint64_t end = ch.headerSize + ch.size;
    uint64_t off = ch.headerSize;
    while (off < end) {
        if (!inBounds(off, kEntryHeaderBytes, end)) return CUDA_ERROR_INVALID_IMAGE;
        const EntryHeader h = readLe<EntryHeader>(c.data() + off);
        if (h.headerSize < kEntryHeaderBytes || !inBounds(off, h.headerSize, end) ||
            !inBounds(off + h.headerSize, h.paddedSize, end))
            return CUDA_ERROR_INVALID_IMAGE;
        Entry e{};
        e.kind = static_cast<Kind>(h.kind);
        e.ptxIsa = h.ptxIsa;
        e.arch = h.arch;
        e.archSpecific = (h.flags & kEntryFlagArchSpecific) != 0;
        e.uncompressedSize = h.uncompressedSize;
        if (h.flags & kEntryFlagZstd) e.compression = Compression::Zstd;
        else if (h.flags & kEntryFlagLz4) e.compression = Compression::Lz4;
        else if (h.flags & kEntryFlagCompressedOld) e.compression = Compression::Unsupported;
        else e.compression = Compression::None;
        const uint64_t stored = e.compression == Compression::None ? h.paddedSize : h.compressedSize;
        if (stored > h.paddedSize) return CUDA_ERROR_INVALID_IMAGE;
        e.payload = c.subspan(off + h.headerSize, stored);
        const bool known = e.kind == Kind::Ptx || e.kind == Kind::Elf;
        if (known && (h.flags & kEntryFlag64Bit)) entries.push_back(e);
        off += h.headerSize + h.paddedSize;
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
