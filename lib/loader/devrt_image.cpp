#include "loader/devrt_image.h"

#include <iterator>

#include "loader/embedded.h"
#include "loader/packed_devrt.h"  // generated: the packed cubins' sizes

// NVL_DEVRT_DIR (set by the Makefile for this file alone): the build folder
// holding devrt.packed, devrt_sm80.cubin and devrt_sm90.cubin packed by
// tools/pack_images (in this order).
#ifndef NVL_DEVRT_DIR
#error "NVL_DEVRT_DIR must name the folder of the device runtime's packed cubins"
#endif

asm(NVL_EMBED_FILE(".rodata.nvl_devrt", nvl_devrt_packed, NVL_DEVRT_DIR "/devrt.packed"));

extern "C" {
extern const uint8_t nvl_devrt_packed_begin[], nvl_devrt_packed_end[];
}

namespace nvl::loader::devrt {

Bytes embeddedCubin(uint32_t sm) {
    static_assert(std::size(packed::kImageSizes) == 2, "devrt_sm80 and devrt_sm90");
    size_t index;
    switch (sm / 10) {
    case 8: index = 0; break;
    case 9: index = 1; break;
    default: return {};
    }
    static const Unpacked images(Bytes(nvl_devrt_packed_begin, nvl_devrt_packed_end), packed::kPackedSize,
                                 packed::kImageSizes);
    return images.image(index);
}

}  // namespace nvl::loader::devrt
