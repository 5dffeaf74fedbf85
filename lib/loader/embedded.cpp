#include "loader/embedded.h"

#include <new>

#include "common/trace.h"
#include "loader/unpack.h"

namespace nvl::loader {

Unpacked::Unpacked(Bytes packed, uint32_t packedSize, std::span<const uint32_t> sizes) : sizes_(sizes) {
    size_t total = 0;
    for (uint32_t s : sizes) total += s;
    if (packed.size() == packedSize) data_.reset(new (std::nothrow) uint8_t[total > 0 ? total : 1]);
    if (data_ && unpack(packed, std::span<uint8_t>(data_.get(), total))) return;
    data_.reset();
    if (trace::driver()) trace::print("loader: an embedded image does not unpack");
}

Bytes Unpacked::image(size_t i) const {
    if (!data_ || i >= sizes_.size()) return {};
    size_t offset = 0;
    for (size_t k = 0; k < i; k++) offset += sizes_[k];
    return Bytes(data_.get() + offset, sizes_[i]);
}

}  // namespace nvl::loader
