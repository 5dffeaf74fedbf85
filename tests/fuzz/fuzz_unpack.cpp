// libFuzzer target: the unpacker of the embedded images (lib/loader/unpack.h)
// on streams it never saw. The first two bytes are the output's size (the
// library's is fixed at build time; here any up to 64 KiB), the rest the
// packed stream. The output buffer is exactly that size, so a write past it
// is ASan's to see; an accepted stream must unpack the same way twice.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "loader/unpack.h"

using namespace nvl::loader;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const size_t outSize = data[0] | static_cast<size_t>(data[1]) << 8;
    // A copy the size of the stream: an over-read is ASan's to see too.
    const std::vector<uint8_t> packed(data + 2, data + size);
    std::vector<uint8_t> out(outSize), again(outSize);
    const bool ok = unpack(Bytes(packed.data(), packed.size()), out);
    if (ok != unpack(Bytes(packed.data(), packed.size()), again)) __builtin_trap();
    if (ok && outSize > 0 && std::memcmp(out.data(), again.data(), outSize) != 0) __builtin_trap();
    return 0;
}
