// The packer of tools/pack_images.c as a function, for the unit test of the
// library's unpacker (tests/unit/test_unpack.cpp).
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Packs 'size' bytes at 'in' (lib/loader/unpack.h has the format); *out is
// the packed stream (malloc'ed, NULL when it is empty; the caller frees it),
// the result its size. Exits the process when memory runs out.
size_t packImages(const uint8_t* in, size_t size, uint8_t** out);

#ifdef __cplusplus
}
#endif
