// Decompression of fatbin entries with the system's libzstd / liblz4.
//
// Both are dlopen'ed on first use rather than linked: only compressed fatbin
// entries need them, the library keeps no link-time dependency beyond libelf
// (CI installs no -dev packages for them), and the runtime libraries
// (libzstd.so.1, liblz4.so.1) are on every Debian/Ubuntu system (apt itself
// depends on libzstd1, systemd on liblz4-1).
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "loader/bytes.h"

namespace nvl::loader {

// Decompresses exactly 'expected' bytes. CUDA_ERROR_INVALID_IMAGE when the
// library is missing, the data is corrupt or its size differs, or when
// 'expected' is beyond what 'src' can plausibly hold (maxDecompressed()):
// the claim comes from the image and is not trusted. Memory is taken for
// what the data really decompresses to, never zero-filled ahead.
Result<std::vector<uint8_t>> zstdDecompress(Bytes src, uint64_t expected);
Result<std::vector<uint8_t>> lz4Decompress(Bytes src, uint64_t expected);

// The largest output accepted from 'compressedBytes' of input: a ratio far
// above what CUDA images reach (cubins 3-10x, PTX about 10x), plus 1 MiB,
// and never more than 1 GiB.
uint64_t maxDecompressed(uint64_t compressedBytes);

}  // namespace nvl::loader
