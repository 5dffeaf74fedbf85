// Images embedded in the library at build time (the built-in kernels' and
// the device runtime's cubins): packed by tools/pack_images, put in the
// library by the assembler, unpacked once per process on first use.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "loader/bytes.h"

// Assembler text that embeds the file at 'path' in section 'section', between
// the hidden symbols <name>_begin and <name>_end.
#define NVL_EMBED_FILE(section, name, path)      \
    ".section " section ",\"a\",@progbits\n"      \
    ".balign 16\n"                                \
    ".hidden " #name "_begin\n"                   \
    ".hidden " #name "_end\n"                     \
    ".globl " #name "_begin\n"                    \
    ".globl " #name "_end\n" #name "_begin:\n"    \
    ".incbin \"" path "\"\n" #name "_end:\n"      \
    ".previous\n"

namespace nvl::loader {

// The images of one packed stream, unpacked: 'sizes' (recorded at build
// time) are the images' sizes in the order they were packed. A stream that
// is not 'packedSize' bytes or does not unpack to exactly the images (or
// memory that cannot be had) leaves every image empty.
class Unpacked {
public:
    Unpacked(Bytes packed, uint32_t packedSize, std::span<const uint32_t> sizes);
    Unpacked(const Unpacked&) = delete;
    Unpacked& operator=(const Unpacked&) = delete;

    // Image 'i', or an empty span.
    Bytes image(size_t i) const;

private:
    std::unique_ptr<uint8_t[]> data_;
    std::span<const uint32_t> sizes_;
};

}  // namespace nvl::loader
