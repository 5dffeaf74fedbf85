#include "loader/builtin_image.h"

// NVL_BUILTIN_DIR (set by the Makefile for this file alone): the build
// folder holding kernels_sm80.cubin ... kernels_sm90.cubin.
#ifndef NVL_BUILTIN_DIR
#error "NVL_BUILTIN_DIR must name the folder of the built-in kernels' cubins"
#endif

#define NVL_BUILTIN_EMBED(name, file)                         \
    ".section .rodata.nvl_builtin,\"a\",@progbits\n"          \
    ".balign 16\n"                                            \
    ".hidden " #name "_begin\n"                               \
    ".hidden " #name "_end\n"                                 \
    ".globl " #name "_begin\n"                                \
    ".globl " #name "_end\n" #name "_begin:\n"                \
    ".incbin \"" NVL_BUILTIN_DIR "/" file "\"\n" #name "_end:\n" \
    ".previous\n"

asm(NVL_BUILTIN_EMBED(nvl_builtin_sm80, "kernels_sm80.cubin") NVL_BUILTIN_EMBED(nvl_builtin_sm86, "kernels_sm86.cubin")
        NVL_BUILTIN_EMBED(nvl_builtin_sm89, "kernels_sm89.cubin") NVL_BUILTIN_EMBED(nvl_builtin_sm90, "kernels_sm90.cubin"));

extern "C" {
extern const uint8_t nvl_builtin_sm80_begin[], nvl_builtin_sm80_end[];
extern const uint8_t nvl_builtin_sm86_begin[], nvl_builtin_sm86_end[];
extern const uint8_t nvl_builtin_sm89_begin[], nvl_builtin_sm89_end[];
extern const uint8_t nvl_builtin_sm90_begin[], nvl_builtin_sm90_end[];
}

namespace nvl::loader::builtin {
namespace {

struct Embedded {
    uint32_t sm;
    const uint8_t* begin;
    const uint8_t* end;
};

const Embedded kCubins[] = {
    {80, nvl_builtin_sm80_begin, nvl_builtin_sm80_end},
    {86, nvl_builtin_sm86_begin, nvl_builtin_sm86_end},
    {89, nvl_builtin_sm89_begin, nvl_builtin_sm89_end},
    {90, nvl_builtin_sm90_begin, nvl_builtin_sm90_end},
};

}  // namespace

Bytes embeddedCubin(uint32_t sm) {
    const Embedded* best = nullptr;
    for (const Embedded& e : kCubins)
        if (e.sm / 10 == sm / 10 && e.sm <= sm) best = &e;
    if (!best) return {};
    return Bytes(best->begin, static_cast<size_t>(best->end - best->begin));
}

}  // namespace nvl::loader::builtin
