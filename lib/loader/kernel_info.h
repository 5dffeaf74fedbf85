// Kernels of a cubin: entry symbols, their .nv.info attributes, shared
// memory, constant banks and parameters.
#pragma once

#include "common/status.h"
#include "loader/elf_file.h"
#include "loader/image.h"
#include "loader/layout.h"

namespace nvl::loader {

// Adds one Kernel per entry symbol (STT_FUNC with STO_CUDA_ENTRY) to
// image.kernels. CUDA_ERROR_INVALID_IMAGE for inconsistent attributes
// (parameters outside the parameter area, duplicate ordinals, ...).
Status readKernels(const ElfFile& elf, const Layout& layout, Image& image);

}  // namespace nvl::loader
