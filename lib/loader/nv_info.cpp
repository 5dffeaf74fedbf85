#include "loader/nv_info.h"

namespace nvl::loader::nvinfo {

Result<std::vector<Record>> parse(Bytes section) {
    std::vector<Record> records;
    uint64_t off = 0;
    while (off < section.size()) {
        if (!inBounds(off, 4, section.size())) return CUDA_ERROR_INVALID_IMAGE;
        Record r{};
        r.format = section[off];
        r.attribute = section[off + 1];
        r.value = readLe<uint16_t>(section.data() + off + 2);
        off += 4;
        switch (r.format) {
        case kNval: case kBval: case kHval: break;
        case kSval:
            if (!inBounds(off, r.value, section.size())) return CUDA_ERROR_INVALID_IMAGE;
            r.payload = section.subspan(off, r.value);
            off += r.value;
            break;
        default: return CUDA_ERROR_INVALID_IMAGE;
        }
        records.push_back(r);
    }
    return records;
}

}  // namespace nvl::loader::nvinfo
