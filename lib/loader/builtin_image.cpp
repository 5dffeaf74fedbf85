#include "loader/builtin_image.h"

#include <iterator>

#include "loader/embedded.h"
#include "loader/packed_builtin.h"  // generated: the packed cubins' sizes

// NVL_BUILTIN_DIR (set by the Makefile for this file alone): the build
// folder holding kernels.packed, the cubins of kernels_sm80.cubin ...
// kernels_sm90.cubin packed by tools/pack_images (in this order).
#ifndef NVL_BUILTIN_DIR
#error "NVL_BUILTIN_DIR must name the folder of the built-in kernels' packed cubins"
#endif

asm(NVL_EMBED_FILE(".rodata.nvl_builtin", nvl_builtin_packed, NVL_BUILTIN_DIR "/kernels.packed"));

extern "C" {
extern const uint8_t nvl_builtin_packed_begin[], nvl_builtin_packed_end[];
}

namespace nvl::loader::builtin {
namespace {

constexpr uint32_t kArchs[] = {80, 86, 89, 90};
static_assert(std::size(kArchs) == std::size(packed::kImageSizes));

}  // namespace

Bytes embeddedCubin(uint32_t sm) {
    size_t best = std::size(kArchs);
    for (size_t i = 0; i < std::size(kArchs); i++)
        if (kArchs[i] / 10 == sm / 10 && kArchs[i] <= sm) best = i;
    if (best == std::size(kArchs)) return {};
    static const Unpacked images(Bytes(nvl_builtin_packed_begin, nvl_builtin_packed_end), packed::kPackedSize,
                                 packed::kImageSizes);
    return images.image(best);
}

}  // namespace nvl::loader::builtin
