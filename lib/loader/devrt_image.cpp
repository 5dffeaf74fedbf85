#include "loader/devrt_image.h"

// NVL_DEVRT_DIR (set by the Makefile for this file alone): the build folder
// holding devrt_sm80.cubin and devrt_sm90.cubin.
#ifndef NVL_DEVRT_DIR
#error "NVL_DEVRT_DIR must name the folder of the device runtime's cubins"
#endif

#define NVL_DEVRT_EMBED(name, file)                         \
    ".section .rodata.nvl_devrt,\"a\",@progbits\n"          \
    ".balign 16\n"                                          \
    ".hidden " #name "_begin\n"                             \
    ".hidden " #name "_end\n"                               \
    ".globl " #name "_begin\n"                              \
    ".globl " #name "_end\n" #name "_begin:\n"              \
    ".incbin \"" NVL_DEVRT_DIR "/" file "\"\n" #name "_end:\n" \
    ".previous\n"

asm(NVL_DEVRT_EMBED(nvl_devrt_sm80, "devrt_sm80.cubin") NVL_DEVRT_EMBED(nvl_devrt_sm90, "devrt_sm90.cubin"));

extern "C" {
extern const uint8_t nvl_devrt_sm80_begin[], nvl_devrt_sm80_end[];
extern const uint8_t nvl_devrt_sm90_begin[], nvl_devrt_sm90_end[];
}

namespace nvl::loader::devrt {

Bytes embeddedCubin(uint32_t sm) {
    switch (sm / 10) {
    case 8: return Bytes(nvl_devrt_sm80_begin, static_cast<size_t>(nvl_devrt_sm80_end - nvl_devrt_sm80_begin));
    case 9: return Bytes(nvl_devrt_sm90_begin, static_cast<size_t>(nvl_devrt_sm90_end - nvl_devrt_sm90_begin));
    default: return {};
    }
}

}  // namespace nvl::loader::devrt
