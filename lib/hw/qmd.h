// Launch descriptors (QMDs) built in host memory, field by field with the
// hardware's names, then copied whole to where the GPU reads them. Hopper
// uses version 4, Ampere and Ada version 3: a QmdLayout says where each
// field the launch path writes sits in one of them.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "common/assert.h"
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
    // Thread block clusters (V04): QMD_TYPE GRID_GPC_CGA and the cluster's shape.
    bool hasCluster;
    uint32_t qmdTypeGridGpcCga;
    Field gpcCgaWidth, gpcCgaHeight, gpcCgaDepth;
    bool hasGlobalCaching;  // V03: SM_GLOBAL_CACHING_ENABLE
    Field smGlobalCaching;
    Field groupId, sassVersion, programLower, programUpper;
    Field prefetchLowerShifted, prefetchUpperShifted, prefetchSize;
    Field registerCount, barrierCount, apiVisibleCallLimit, samplerIndex;
    uint32_t apiVisibleCallLimitNoCheck, samplerIndexViaHeaderIndex;
    Field invalidateTextureHeader, invalidateTextureSampler, invalidateTextureData, invalidateShaderData;
    Field cwdMembarType;
    uint32_t cwdMembarSysmembar;
    Field minSmConfig, maxSmConfig, targetSmConfig, sharedMemorySize, localMemoryHighSize;
    Field gridWidth, gridHeight, gridDepth, ctaDim0, ctaDim1, ctaDim2;
    IndexedField cbufValid, cbufInvalidate, cbufAddrLower, cbufAddrUpper, cbufSizeShifted4;
    uint32_t cbufAddrShift;  // constant buffer addresses: >> 6 in V04, plain in V03
    // Release semaphore 0, written when the grid completes (V04; the V03 path
    // signals completion with a host release after wait-for-idle instead).
    bool hasRelease;
    Field releaseEnable, releaseStructureSize, releasePayload64;
    uint32_t releaseStructureTwoWords;
    Field releaseAddrLower, releaseAddrUpper, releasePayloadLower, releasePayloadUpper;
};

inline constexpr QmdLayout kQmdV04 = {
    .bytes = nv::NVCBC0_QMDV04_00_SIZE_BYTES,
    .majorVersion = nv::NVCBC0_QMDV04_00_QMD_MAJOR_VERSION,
    .majorVersionValue = nv::NVCBC0_QMDV04_00_QMD_MAJOR_VERSION_4,
    .hasQmdType = true,
    .qmdType = nv::NVCBC0_QMDV04_00_QMD_TYPE,
    .qmdTypeGridCta = nv::NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA,
    .hasCluster = true,
    .qmdTypeGridGpcCga = nv::NVCBC0_QMDV04_00_QMD_TYPE_GRID_GPC_CGA,
    .gpcCgaWidth = nv::NVCBC0_QMDV04_00_GPC_CGA_WIDTH,
    .gpcCgaHeight = nv::NVCBC0_QMDV04_00_GPC_CGA_HEIGHT,
    .gpcCgaDepth = nv::NVCBC0_QMDV04_00_GPC_CGA_DEPTH,
    .hasGlobalCaching = false,
    .smGlobalCaching = {},
    .groupId = nv::NVCBC0_QMDV04_00_QMD_GROUP_ID,
    .sassVersion = nv::NVCBC0_QMDV04_00_SASS_VERSION,
    .programLower = nv::NVCBC0_QMDV04_00_PROGRAM_ADDRESS_LOWER,
    .programUpper = nv::NVCBC0_QMDV04_00_PROGRAM_ADDRESS_UPPER,
    .prefetchLowerShifted = nv::NVCBC0_QMDV04_00_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED,
    .prefetchUpperShifted = nv::NVCBC0_QMDV04_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED,
    .prefetchSize = nv::NVCBC0_QMDV04_00_PROGRAM_PREFETCH_SIZE,
    .registerCount = nv::NVCBC0_QMDV04_00_REGISTER_COUNT,
    .barrierCount = nv::NVCBC0_QMDV04_00_BARRIER_COUNT,
    .apiVisibleCallLimit = nv::NVCBC0_QMDV04_00_API_VISIBLE_CALL_LIMIT,
    .samplerIndex = nv::NVCBC0_QMDV04_00_SAMPLER_INDEX,
    .apiVisibleCallLimitNoCheck = nv::NVCBC0_QMDV04_00_API_VISIBLE_CALL_LIMIT_NO_CHECK,
    .samplerIndexViaHeaderIndex = nv::NVCBC0_QMDV04_00_SAMPLER_INDEX_VIA_HEADER_INDEX,
    .invalidateTextureHeader = nv::NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_HEADER_CACHE,
    .invalidateTextureSampler = nv::NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_SAMPLER_CACHE,
    .invalidateTextureData = nv::NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_DATA_CACHE,
    .invalidateShaderData = nv::NVCBC0_QMDV04_00_INVALIDATE_SHADER_DATA_CACHE,
    .cwdMembarType = nv::NVCBC0_QMDV04_00_CWD_MEMBAR_TYPE,
    .cwdMembarSysmembar = nv::NVCBC0_QMDV04_00_CWD_MEMBAR_TYPE_L1_SYSMEMBAR,
    .minSmConfig = nv::NVCBC0_QMDV04_00_MIN_SM_CONFIG_SHARED_MEM_SIZE,
    .maxSmConfig = nv::NVCBC0_QMDV04_00_MAX_SM_CONFIG_SHARED_MEM_SIZE,
    .targetSmConfig = nv::NVCBC0_QMDV04_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE,
    .sharedMemorySize = nv::NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE,
    .localMemoryHighSize = nv::NVCBC0_QMDV04_00_SHADER_LOCAL_MEMORY_HIGH_SIZE,
    .gridWidth = nv::NVCBC0_QMDV04_00_GRID_WIDTH,
    .gridHeight = nv::NVCBC0_QMDV04_00_GRID_HEIGHT,
    .gridDepth = nv::NVCBC0_QMDV04_00_GRID_DEPTH,
    .ctaDim0 = nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0,
    .ctaDim1 = nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION1,
    .ctaDim2 = nv::NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION2,
    .cbufValid = nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID,
    .cbufInvalidate = nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_INVALIDATE,
    .cbufAddrLower = nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6,
    .cbufAddrUpper = nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6,
    .cbufSizeShifted4 = nv::NVCBC0_QMDV04_00_CONSTANT_BUFFER_SIZE_SHIFTED4,
    .cbufAddrShift = 6,
    .hasRelease = true,
    .releaseEnable = nv::NVCBC0_QMDV04_00_RELEASE_ENABLE(0),
    .releaseStructureSize = nv::NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE(0),
    .releasePayload64 = nv::NVCBC0_QMDV04_00_RELEASE_PAYLOAD64B(0),
    .releaseStructureTwoWords = nv::NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE_SEMAPHORE_TWO_WORDS,
    .releaseAddrLower = nv::NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_ADDR_LOWER(0),
    .releaseAddrUpper = nv::NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_ADDR_UPPER(0),
    .releasePayloadLower = nv::NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_PAYLOAD_LOWER(0),
    .releasePayloadUpper = nv::NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_PAYLOAD_UPPER(0),
};

inline constexpr QmdLayout kQmdV03 = {
    .bytes = nv::NVC6C0_QMDV03_00_SIZE_BYTES,
    .majorVersion = nv::NVC6C0_QMDV03_00_QMD_MAJOR_VERSION,
    .majorVersionValue = nv::NVC6C0_QMDV03_00_QMD_MAJOR_VERSION_3,
    .hasQmdType = false,
    .qmdType = {},
    .qmdTypeGridCta = 0,
    .hasCluster = false,
    .qmdTypeGridGpcCga = 0,
    .gpcCgaWidth = {},
    .gpcCgaHeight = {},
    .gpcCgaDepth = {},
    .hasGlobalCaching = true,
    .smGlobalCaching = nv::NVC6C0_QMDV03_00_SM_GLOBAL_CACHING_ENABLE,
    .groupId = nv::NVC6C0_QMDV03_00_QMD_GROUP_ID,
    .sassVersion = nv::NVC6C0_QMDV03_00_SASS_VERSION,
    .programLower = nv::NVC6C0_QMDV03_00_PROGRAM_ADDRESS_LOWER,
    .programUpper = nv::NVC6C0_QMDV03_00_PROGRAM_ADDRESS_UPPER,
    .prefetchLowerShifted = nv::NVC6C0_QMDV03_00_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED,
    .prefetchUpperShifted = nv::NVC6C0_QMDV03_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED,
    .prefetchSize = nv::NVC6C0_QMDV03_00_PROGRAM_PREFETCH_SIZE,
    .registerCount = nv::NVC6C0_QMDV03_00_REGISTER_COUNT_V,
    .barrierCount = nv::NVC6C0_QMDV03_00_BARRIER_COUNT,
    .apiVisibleCallLimit = nv::NVC6C0_QMDV03_00_API_VISIBLE_CALL_LIMIT,
    .samplerIndex = nv::NVC6C0_QMDV03_00_SAMPLER_INDEX,
    .apiVisibleCallLimitNoCheck = nv::NVC6C0_QMDV03_00_API_VISIBLE_CALL_LIMIT_NO_CHECK,
    .samplerIndexViaHeaderIndex = nv::NVC6C0_QMDV03_00_SAMPLER_INDEX_VIA_HEADER_INDEX,
    .invalidateTextureHeader = nv::NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_HEADER_CACHE,
    .invalidateTextureSampler = nv::NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_SAMPLER_CACHE,
    .invalidateTextureData = nv::NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_DATA_CACHE,
    .invalidateShaderData = nv::NVC6C0_QMDV03_00_INVALIDATE_SHADER_DATA_CACHE,
    .cwdMembarType = nv::NVC6C0_QMDV03_00_CWD_MEMBAR_TYPE,
    .cwdMembarSysmembar = nv::NVC6C0_QMDV03_00_CWD_MEMBAR_TYPE_L1_SYSMEMBAR,
    .minSmConfig = nv::NVC6C0_QMDV03_00_MIN_SM_CONFIG_SHARED_MEM_SIZE,
    .maxSmConfig = nv::NVC6C0_QMDV03_00_MAX_SM_CONFIG_SHARED_MEM_SIZE,
    .targetSmConfig = nv::NVC6C0_QMDV03_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE,
    .sharedMemorySize = nv::NVC6C0_QMDV03_00_SHARED_MEMORY_SIZE,
    .localMemoryHighSize = nv::NVC6C0_QMDV03_00_SHADER_LOCAL_MEMORY_HIGH_SIZE,
    .gridWidth = nv::NVC6C0_QMDV03_00_CTA_RASTER_WIDTH,
    .gridHeight = nv::NVC6C0_QMDV03_00_CTA_RASTER_HEIGHT,
    .gridDepth = nv::NVC6C0_QMDV03_00_CTA_RASTER_DEPTH,
    .ctaDim0 = nv::NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION0,
    .ctaDim1 = nv::NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION1,
    .ctaDim2 = nv::NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION2,
    .cbufValid = nv::NVC6C0_QMDV03_00_CONSTANT_BUFFER_VALID,
    .cbufInvalidate = nv::NVC6C0_QMDV03_00_CONSTANT_BUFFER_INVALIDATE,
    .cbufAddrLower = nv::NVC6C0_QMDV03_00_CONSTANT_BUFFER_ADDR_LOWER,
    .cbufAddrUpper = nv::NVC6C0_QMDV03_00_CONSTANT_BUFFER_ADDR_UPPER,
    .cbufSizeShifted4 = nv::NVC6C0_QMDV03_00_CONSTANT_BUFFER_SIZE_SHIFTED4,
    .cbufAddrShift = 0,
    .hasRelease = false,
    .releaseEnable = {},
    .releaseStructureSize = {},
    .releasePayload64 = {},
    .releaseStructureTwoWords = 0,
    .releaseAddrLower = {},
    .releaseAddrUpper = {},
    .releasePayloadLower = {},
    .releasePayloadUpper = {},
};

// The layout a compute class takes (HOPPER_COMPUTE_A: V04; Ampere/Ada: V03).
const QmdLayout& qmdLayoutFor(uint32_t computeClass);

class Qmd {
public:
    static constexpr size_t kMaxBytes = nv::NVCBC0_QMDV04_00_SIZE_BYTES;

    // Sets a field (up to 64 bits wide, possibly spanning words), a word at
    // a time: this runs for every launch. (nv::qmdGet/qmdSet, bit by bit,
    // serve the simulator and tests reading raw QMD bytes.) The value must
    // fit: the launch path checks what users give before it gets here, and
    // checked builds stop on a value the field would cut.
    void set(Field f, uint64_t value) {
        NVL_ASSERT(f.holds(value) && f.hi < kMaxBytes * 8);
        uint32_t bit = f.lo;
        uint32_t left = f.width();
        while (left > 0) {
            const uint32_t word = bit / 32, shift = bit % 32;
            const uint32_t n = left < 32 - shift ? left : 32 - shift;
            const uint32_t mask = (n == 32 ? ~0u : ((1u << n) - 1)) << shift;
            w_[word] = (w_[word] & ~mask) | ((static_cast<uint32_t>(value) << shift) & mask);
            value >>= n;
            bit += n;
            left -= n;
        }
    }
    const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(w_.data()); }

private:
    std::array<uint32_t, kMaxBytes / 4> w_{};
};

}  // namespace nvl::hw
