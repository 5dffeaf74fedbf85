#include "loader/nv_info.h"

namespace nvl::loader::nvinfo {

Result<Record> next(Bytes section, uint64_t* offset) {
    uint64_t off = *offset;
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
    *offset = off;
    return r;
}

Result<std::vector<Record>> parse(Bytes section) {
    std::vector<Record> records;
    for (uint64_t off = 0; off < section.size();) {
        NVL_ASSIGN_OR_RETURN(Record r, next(section, &off));
        records.push_back(r);
    }
    return records;
}

}  // namespace nvl::loader::nvinfo
