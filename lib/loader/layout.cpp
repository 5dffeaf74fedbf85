#include "loader/layout.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

namespace nvl::loader {

namespace {

// Constant banks may also carry these section types (SHT_CUDA_CONSTANT_B0..B17
// in the public sht table of cubin tools); nvcc 13 writes SHT_PROGBITS.
constexpr uint32_t kShtCudaConstantB0 = 0x70000064, kShtCudaConstantB17 = 0x70000075;

constexpr uint64_t kMaxAlign = 1 << 16;
constexpr uint64_t kMaxBytes = 1ull << 31;      // stored part of an image
constexpr uint64_t kMaxZeroFill = 1ull << 40;   // __device__ data without initialiser
constexpr uint64_t kMaxPadding = 1ull << 20;     // alignment between stored sections, beyond the file's size


Placement classify(const ElfSection& s) {
    if (s.index == 0 || !(s.flags & SHF_ALLOC)) return Placement::None;
    uint32_t bank;
    bool perKernel;
    bool constantType = s.type == SHT_PROGBITS || (s.type >= kShtCudaConstantB0 && s.type <= kShtCudaConstantB17);
    if (constantType && constantBankOf(s.name, &bank, &perKernel)) return Placement::Constant;
    if (s.type == SHT_PROGBITS) return (s.flags & SHF_EXECINSTR) ? Placement::Text : Placement::Data;
    if (s.type == SHT_NOBITS && s.name.starts_with(".nv.global")) return Placement::ZeroFill;
    return Placement::None;  // .nv.shared.*, .nv.local.*: per-CTA / per-thread memory, not image memory
}

}  // namespace

bool constantBankOf(std::string_view name, uint32_t* bank, bool* perKernel) {
    static const char kPrefix[] = ".nv.constant";
    if (!name.starts_with(kPrefix)) return false;
    size_t i = sizeof kPrefix - 1, start = i;
    uint32_t n = 0;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9' && i - start < 3) n = n * 10 + (name[i++] - '0');
    if (i == start) return false;
    if (i == name.size()) *perKernel = false;
    else if (name[i] == '.' && i + 1 < name.size()) *perKernel = true;
    else return false;
    *bank = n;
    return true;
}

Result<Layout> layOut(const ElfFile& elf, Image& image) {
    const auto& sections = elf.sections();
    Layout layout;
    layout.placement.resize(sections.size(), Placement::None);
    layout.offset.resize(sections.size(), 0);
    uint64_t alignment = kDataAlign;

    auto alignOf = [](const ElfSection& s, uint64_t minimum, uint64_t* out) {
        uint64_t a = s.align > 1 ? s.align : 1;
        if ((a & (a - 1)) != 0 || a > kMaxAlign) return false;
        *out = std::max(a, minimum);
        return true;
    };

    // Stored sections: code first, then constant banks, then initialised data.
    uint64_t cursor = 0;
    for (Placement pass : {Placement::Text, Placement::Constant, Placement::Data}) {
        for (const ElfSection& s : sections) {
            if (classify(s) != pass) continue;
            uint64_t align;
            if (!alignOf(s, pass == Placement::Text ? kTextAlign : kDataAlign, &align)) return CUDA_ERROR_INVALID_IMAGE;
            cursor = alignUp(cursor, align);
            if (!addOk(cursor, s.size, &cursor) || cursor > kMaxBytes) return CUDA_ERROR_INVALID_IMAGE;
            layout.placement[s.index] = pass;
            layout.offset[s.index] = cursor - s.size;
            alignment = std::max(alignment, align);
        }
    }
    uint64_t stored = alignUp(cursor + kCodeSlack, kDataAlign);
    // What is stored comes from the file, with some alignment between
    // sections: far more than the file is alignment claims of a corrupt image
    // (65535 sections aligned to 64 KiB would take 4 GiB from a 4 MiB file).
    if (stored > 2 * uint64_t{elf.size()} + kMaxPadding) return CUDA_ERROR_INVALID_IMAGE;

    // Zero-filled sections follow the stored bytes and are not stored.
    uint64_t end = stored;
    for (const ElfSection& s : sections) {
        if (classify(s) != Placement::ZeroFill) continue;
        uint64_t align;
        if (!alignOf(s, kDataAlign, &align)) return CUDA_ERROR_INVALID_IMAGE;
        end = alignUp(end, align);
        if (!addOk(end, s.size, &end) || end - stored > kMaxZeroFill) return CUDA_ERROR_INVALID_IMAGE;
        layout.placement[s.index] = Placement::ZeroFill;
        layout.offset[s.index] = end - s.size;
        alignment = std::max(alignment, align);
    }

    image.bytes.assign(stored, 0);
    for (const ElfSection& s : sections) {
        Placement p = layout.placement[s.index];
        if (p == Placement::None || p == Placement::ZeroFill || s.data.empty()) continue;
        std::memcpy(image.bytes.data() + layout.offset[s.index], s.data.data(), s.data.size());
    }
    image.zeroFillBytes = end - stored;
    image.alignment = alignment;
    return layout;
}

}  // namespace nvl::loader
