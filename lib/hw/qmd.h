// Launch descriptors (QMDs) built in host memory, field by field with the
// hardware's names, then copied whole to where the GPU reads them. Hopper
// uses version 4, Ampere and Ada version 3: a QmdLayout says where each
// field the launch path writes sits in one of them.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "defs/qmd_v03.h"
#include "defs/qmd_v04.h"

namespace nvl::hw {

using Field = nv::MultiWordField;
using IndexedField = Field (*)(uint32_t);

struct QmdLayout {
    uint32_t bytes;
    Field majorVersion;
    uint32_t majorVersionValue;
    bool hasQmdType;  // V04: GRID_CTA must be said explicitly
    Field qmdType;
    uint32_t qmdTypeGridCta;
    bool hasGlobalCaching;  // V03: SM_GLOBAL_CACHING_ENABLE
    Field smGlobalCaching;
    Field groupId, sassVersion, programLower, programUpper;
    Field prefetchLowerShifted, prefetchUpperShifted, prefetchSize;
    Field registerCount, barrierCount, apiVisibleCallLimit, samplerIndex;
    Field invalidateTextureHeader, invalidateTextureSampler, invalidateTextureData, invalidateShaderData;
    Field cwdMembarType;
    uint32_t cwdMembarSysmembar;
    Field minSmConfig, maxSmConfig, targetSmConfig, sharedMemorySize, localMemoryHighSize;
    Field gridWidth, gridHeight, gridDepth, ctaDim0, ctaDim1, ctaDim2;
    IndexedField cbufValid, cbufInvalidate, cbufAddrLower, cbufAddrUpper, cbufSizeShifted4;
    uint32_t cbufAddrShift;  // constant buffer addresses: >> 6 in V04, plain in V03
};

inline constexpr QmdLayout kQmdV04 = {
    nv::NVCBC0_QMDV04_00_SIZE_BYTES,
    nv::NVCBC0_QMDV04_00_QMD_MAJOR_VERSION, nv::NVCBC0_QMDV04_00_QMD_MAJOR_VERSION_4,
    true, nv::NVCBC0_QMDV04_00_QMD_TYPE, nv::NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA,
    false, {},
    nv::NVCBC0_QMDV04_00_QMD_GROUP_ID, nv::NVCBC0_QMDV04_00_SASS_VERSION,
    nv::NVCBC0_QMDV04_00_PROGRAM_ADDRESS_LOWER, nv::NVCBC0_QMDV04_00_PROGRAM_ADDRESS_UPPER,
    nv::NVCBC0_QMDV04_00_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED, nv::NVCBC0_QMDV04_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED,
    nv::NVCBC0_QMDV04_00_PROGRAM_PREFETCH_SIZE,
    nv::NVCBC0_QMDV04_00_REGISTER_COUNT, nv::NVCBC0_QMDV04_00_BARRIER_COUNT,
    nv::NVCBC0_QMDV04_00_API_VISIBLE_CALL_LIMIT, nv::NVCBC0_QMDV04_00_SAMPLER_INDEX,
    nv::NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_HEADER_CACHE, nv::NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_SAMPLER_CACHE,
    nv::NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_DATA_CACHE, nv::NVCBC0_QMDV04_00_INVALIDATE_SHADER_DATA_CACHE,
    nv::NVCBC0_QMDV04_00_CWD_MEMBAR_TYPE, nv::NVCBC0_QMDV04_00_CWD_MEMBAR_TYPE_L1_SYSMEMBAR,
    nv::NVCBC0_QMDV04_00_MIN_SM_CONFIG_SHARED_MEM_SIZE, nv::NVCBC0_QMDV04_00_MAX_SM_CONFIG_SHARED_MEM_SIZE,
    nv::NVCBC0_QMDV04_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE, nv::NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE,
    nv::NVCBC0_QMDV04_00_SHADER_LOCAL_MEMORY_HIGH_SIZE,
    nv::NVCBC0_QMDV04_00_GRID_WIDTH, nv::NVCBC0_QMDV04_00_GRID_HEIGHT, nv::NVCBC0_QMDV04_00_GRID_DEPTH,
    nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0, nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION1,
    nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION2,
    nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_INVALIDATE,
    nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6, nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6,
    nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_SIZE_SHIFTED4,
    6,
};

inline constexpr QmdLayout kQmdV03 = {
    nv::NVC6C0_QMDV03_00_SIZE_BYTES,
    nv::NVC6C0_QMDV03_00_QMD_MAJOR_VERSION, nv::NVC6C0_QMDV03_00_QMD_MAJOR_VERSION_3,
    false, {}, 0,
    true, nv::NVC6C0_QMDV03_00_SM_GLOBAL_CACHING_ENABLE,
    nv::NVC6C0_QMDV03_00_QMD_GROUP_ID, nv::NVC6C0_QMDV03_00_SASS_VERSION,
    nv::NVC6C0_QMDV03_00_PROGRAM_ADDRESS_LOWER, nv::NVC6C0_QMDV03_00_PROGRAM_ADDRESS_UPPER,
    nv::NVC6C0_QMDV03_00_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED, nv::NVC6C0_QMDV03_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED,
    nv::NVC6C0_QMDV03_00_PROGRAM_PREFETCH_SIZE,
    nv::NVC6C0_QMDV03_00_REGISTER_COUNT_V, nv::NVC6C0_QMDV03_00_BARRIER_COUNT,
    nv::NVC6C0_QMDV03_00_API_VISIBLE_CALL_LIMIT, nv::NVC6C0_QMDV03_00_SAMPLER_INDEX,
    nv::NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_HEADER_CACHE, nv::NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_SAMPLER_CACHE,
    nv::NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_DATA_CACHE, nv::NVC6C0_QMDV03_00_INVALIDATE_SHADER_DATA_CACHE,
    nv::NVC6C0_QMDV03_00_CWD_MEMBAR_TYPE, nv::NVC6C0_QMDV03_00_CWD_MEMBAR_TYPE_L1_SYSMEMBAR,
    nv::NVC6C0_QMDV03_00_MIN_SM_CONFIG_SHARED_MEM_SIZE, nv::NVC6C0_QMDV03_00_MAX_SM_CONFIG_SHARED_MEM_SIZE,
    nv::NVC6C0_QMDV03_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE, nv::NVC6C0_QMDV03_00_SHARED_MEMORY_SIZE,
    nv::NVC6C0_QMDV03_00_SHADER_LOCAL_MEMORY_HIGH_SIZE,
    nv::NVC6C0_QMDV03_00_CTA_RASTER_WIDTH, nv::NVC6C0_QMDV03_00_CTA_RASTER_HEIGHT, nv::NVC6C0_QMDV03_00_CTA_RASTER_DEPTH,
    nv::NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION0, nv::NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION1,
    nv::NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION2,
    nv::NVC6C0_QMDV03_00_CONSTANT_BUFFER_VALID, nv::NVC6C0_QMDV03_00_CONSTANT_BUFFER_INVALIDATE,
    nv::NVC6C0_QMDV03_00_CONSTANT_BUFFER_ADDR_LOWER, nv::NVC6C0_QMDV03_00_CONSTANT_BUFFER_ADDR_UPPER,
    nv::NVC6C0_QMDV03_00_CONSTANT_BUFFER_SIZE_SHIFTED4,
    0,
};

// The layout a compute class takes (HOPPER_COMPUTE_A: V04; Ampere/Ada: V03).
const QmdLayout& qmdLayoutFor(uint32_t computeClass);

class Qmd {
public:
    static constexpr size_t kMaxBytes = nv::NVCBC0_QMDV04_00_SIZE_BYTES;

    // Sets a field (up to 64 bits wide, possibly spanning words).
    void set(Field f, uint64_t value) {
        uint32_t bit = f.lo;
        uint32_t left = f.width();
        while (left > 0) {
            const uint32_t word = bit / 32, shift = bit % 32;
            const uint32_t n = left < 32 - shift ? left : 32 - shift;
            const uint32_t mask = (n == 32 ? ~0u : ((1u << n) - 1)) << shift;
            w_[word] = (w_[word] & ~mask) | ((static_cast<uint32_t>(value) << shift) & mask);
            value = n >= 64 ? 0 : value >> n;
            bit += n;
            left -= n;
        }
    }
    uint64_t get(Field f) const {
        uint64_t out = 0;
        for (uint32_t i = 0; i < f.width(); ++i) {
            const uint32_t b = f.lo + i;
            out |= static_cast<uint64_t>((w_[b / 32] >> (b % 32)) & 1u) << i;
        }
        return out;
    }
    void copyTo(void* dst, size_t bytes) const { std::memcpy(dst, w_.data(), bytes); }

private:
    std::array<uint32_t, kMaxBytes / 4> w_{};
};

}  // namespace nvl::hw
