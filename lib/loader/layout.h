// Where each loadable section of a cubin goes in the Image (see image.h for
// the order and alignments).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "loader/elf_file.h"
#include "loader/image.h"

namespace nvl::loader {

enum class Placement : uint8_t { None, Text, Constant, Data, ZeroFill };

inline constexpr uint64_t kTextAlign = 128;      // .text.* sh_addralign in nvcc output
inline constexpr uint64_t kDataAlign = 256;      // QMD constant buffer addresses are 64-byte units; libcuda places data at 256
inline constexpr uint64_t kCodeSlack = 4096;     // instruction prefetch past the last instruction

struct Layout {
    std::vector<Placement> placement;  // per section index
    std::vector<uint64_t> offset;      // per section index, valid when placement != None
    bool placed(uint32_t index) const { return index < placement.size() && placement[index] != Placement::None; }
};

// ".nv.constant<N>[.<kernel>]" -> N; false for any other name.
bool constantBankOf(std::string_view name, uint32_t* bank, bool* perKernel);

// Chooses the placement, copies the section bytes into image.bytes and sets
// zeroFillBytes and alignment. CUDA_ERROR_INVALID_IMAGE for absurd sizes or
// alignments.
Result<Layout> layOut(const ElfFile& elf, Image& image);

}  // namespace nvl::loader
