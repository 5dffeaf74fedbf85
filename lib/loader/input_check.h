// Checks of what goes to nvJitLink, before it reads any of it: nvJitLink
// trusts its input (corrupt cubins crash it or keep it busy for minutes), so
// every input is validated by nvlite first, whatever its kind. What passes
// still runs in a worker process (jit_process.h).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "loader/bytes.h"
#include "nvlite/cuda.h"

namespace nvl::loader {

// PTX is text: no control characters but whitespace.
bool looksLikeText(std::string_view s);

// A cuLinkAddData input of 'type' (a CUjitInputType value): a cubin (executable or relocatable), a
// fatbin container (every entry: decompressed within bounds, its cubin or
// PTX checked), a host object (an ELF whose .nv_fatbin containers pass), a
// library (an ar archive whose objects pass), PTX (text). LTO-IR
// (CU_JIT_INPUT_NVVM) is opaque here and goes to the worker as it is.
// CUDA_ERROR_INVALID_PTX for PTX that is not text, CUDA_ERROR_INVALID_IMAGE
// for the rest, CUDA_ERROR_INVALID_VALUE for an unknown type.
Status checkLinkInput(int type, Bytes data);

// Reads a file named by a program (cuModuleLoad, cuLinkAddFile): a regular
// file whole when it is at most 1 GiB; a device, pipe or /proc file as a
// stream that must look like an image from its first bytes on (PTX text
// ends at its NUL), at most 64 MiB. CUDA_ERROR_FILE_NOT_FOUND when it cannot
// be opened or read (a directory included), CUDA_ERROR_INVALID_IMAGE when it
// is too large or a stream of anything else.
Result<std::vector<uint8_t>> readInputFile(const char* path);

}  // namespace nvl::loader
