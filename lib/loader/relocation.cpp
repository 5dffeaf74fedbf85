#include "loader/relocation.h"

#include "common/trace.h"
#include "loader/bytes.h"
#include "loader/image.h"

namespace nvl::loader {

namespace reloc {

namespace {

// Sets 'width' bits of the 128-bit little-endian word at 'site' starting at bit 'pos'.
void setBits128(uint8_t* site, unsigned pos, unsigned width, uint64_t value) {
    for (unsigned i = 0; i < width; ++i) {
        unsigned bit = pos + i;
        uint8_t mask = static_cast<uint8_t>(1u << (bit % 8));
        if ((value >> i) & 1) site[bit / 8] |= mask;
        else site[bit / 8] &= static_cast<uint8_t>(~mask);
    }
}

bool fits32(uint64_t v) { return v <= UINT32_MAX; }

}  // namespace

uint32_t patchWidth(uint32_t type) {
    switch (type) {
    case k32: case kG32: case k32Lo: case k32Hi: return 4;
    case k64: case kG64: case kFuncDesc64: case kAbs32_32: case kAbs32Lo32: case kAbs32Hi32:
    case kFuncDesc32_32: case kFuncDesc32Lo32: case kFuncDesc32Hi32: return 8;
    case kAbs55_16_34: return 16;
    default: return 0;
    }
}

bool implicitAddend(uint32_t type, const uint8_t* site, int64_t* out) {
    switch (type) {
    case k32: case kG32: *out = readLe<uint32_t>(site); return true;
    case k64: case kG64: case kFuncDesc64: *out = readLe<int64_t>(site); return true;
    default: return false;
    }
}

bool apply(uint32_t type, uint8_t* site, uint64_t value) {
    switch (type) {
    case k32: case kG32:
        if (!fits32(value)) return false;
        writeLe<uint32_t>(site, static_cast<uint32_t>(value));
        return true;
    case k64: case kG64: case kFuncDesc64: writeLe<uint64_t>(site, value); return true;
    case kAbs32_32: case kFuncDesc32_32:
        if (!fits32(value)) return false;
        writeLe<uint32_t>(site + 4, static_cast<uint32_t>(value));
        return true;
    case kAbs32Lo32: case kFuncDesc32Lo32: writeLe<uint32_t>(site + 4, static_cast<uint32_t>(value)); return true;
    case kAbs32Hi32: case kFuncDesc32Hi32: writeLe<uint32_t>(site + 4, static_cast<uint32_t>(value >> 32)); return true;
    case k32Lo: writeLe<uint32_t>(site, static_cast<uint32_t>(value)); return true;
    case k32Hi: writeLe<uint32_t>(site, static_cast<uint32_t>(value >> 32)); return true;
    case kAbs55_16_34:
        // A call target: instruction-aligned and within the 57 bits the fields hold.
        if ((value & 3) != 0 || (value >> 57) != 0) return false;
        setBits128(site, 16, 8, (value >> 2) & 0xff);
        setBits128(site, 34, 47, value >> 10);
        return true;
    default: return false;
    }
}

const char* name(uint32_t type) {
    switch (type) {
    case kNone: return "R_CUDA_NONE";
    case k32: return "R_CUDA_32";
    case k64: return "R_CUDA_64";
    case kG32: return "R_CUDA_G32";
    case kG64: return "R_CUDA_G64";
    case kFuncDesc64: return "R_CUDA_FUNC_DESC_64";
    case kAbs32_32: return "R_CUDA_ABS32_32";
    case kAbs32Lo32: return "R_CUDA_ABS32_LO_32";
    case kAbs32Hi32: return "R_CUDA_ABS32_HI_32";
    case kFuncDesc32_32: return "R_CUDA_FUNC_DESC32_32";
    case kFuncDesc32Lo32: return "R_CUDA_FUNC_DESC32_LO_32";
    case kFuncDesc32Hi32: return "R_CUDA_FUNC_DESC32_HI_32";
    case kYieldOpcode9_0: return "R_CUDA_YIELD_OPCODE9_0";
    case kYieldClearPred4_87: return "R_CUDA_YIELD_CLEAR_PRED4_87";
    case k32Lo: return "R_CUDA_32_LO";
    case k32Hi: return "R_CUDA_32_HI";
    case kAbs55_16_34: return "R_CUDA_ABS55_16_34";
    default: return "unsupported";
    }
}

}  // namespace reloc

Status relocate(Image& image, uint64_t base) {
    if (image.alignment == 0 || base % image.alignment != 0) return CUDA_ERROR_INVALID_VALUE;
    for (const Relocation& r : image.relocations) {
        uint32_t width = reloc::patchWidth(r.type);
        if (width == 0 || !inBounds(r.imageOffset, width, image.bytes.size())) {
            if (trace::driver())
                trace::print("loader: relocation type %u at 0x%llx cannot be applied", r.type,
                             static_cast<unsigned long long>(r.imageOffset));
            return CUDA_ERROR_INVALID_IMAGE;
        }
        uint64_t value = base + r.targetImageOffset + static_cast<uint64_t>(r.addend);
        if (!reloc::apply(r.type, image.bytes.data() + r.imageOffset, value)) {
            if (trace::driver())
                trace::print("loader: %s at 0x%llx: value 0x%llx does not fit", reloc::name(r.type),
                             static_cast<unsigned long long>(r.imageOffset), static_cast<unsigned long long>(value));
            return CUDA_ERROR_INVALID_IMAGE;
        }
    }
    return kOk;
}

}  // namespace nvl::loader
