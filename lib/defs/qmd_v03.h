// Ampere/Ada launch descriptor, QMD version 3 (AMPERE_COMPUTE_B, ADA_COMPUTE_A):
// the fields the launch path writes. Facts from open-gpu-doc
// classes/compute/clc6c0qmd.h (NVC6C0_QMDV03_00_*, MW(hi:lo) over 256 bytes).
#pragma once

#include <cstdint>

#include "defs/bits.h"

namespace nvl::nv {

inline constexpr uint32_t NVC6C0_QMDV03_00_SIZE_BYTES = 256;
inline constexpr MultiWordField NVC6C0_QMDV03_00_QMD_GROUP_ID{133, 128};
inline constexpr MultiWordField NVC6C0_QMDV03_00_SM_GLOBAL_CACHING_ENABLE{134, 134};
inline constexpr MultiWordField NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_HEADER_CACHE{186, 186};
inline constexpr MultiWordField NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_SAMPLER_CACHE{187, 187};
inline constexpr MultiWordField NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_DATA_CACHE{188, 188};
inline constexpr MultiWordField NVC6C0_QMDV03_00_INVALIDATE_SHADER_DATA_CACHE{189, 189};
inline constexpr MultiWordField NVC6C0_QMDV03_00_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED{287, 256};
inline constexpr MultiWordField NVC6C0_QMDV03_00_CWD_MEMBAR_TYPE{369, 368};
inline constexpr uint32_t NVC6C0_QMDV03_00_CWD_MEMBAR_TYPE_L1_SYSMEMBAR = 0x1;
inline constexpr MultiWordField NVC6C0_QMDV03_00_API_VISIBLE_CALL_LIMIT{378, 378};
inline constexpr uint32_t NVC6C0_QMDV03_00_API_VISIBLE_CALL_LIMIT_NO_CHECK = 0x1;
inline constexpr MultiWordField NVC6C0_QMDV03_00_SAMPLER_INDEX{382, 382};
inline constexpr uint32_t NVC6C0_QMDV03_00_SAMPLER_INDEX_VIA_HEADER_INDEX = 0x1;
inline constexpr MultiWordField NVC6C0_QMDV03_00_CTA_RASTER_WIDTH{415, 384};
inline constexpr MultiWordField NVC6C0_QMDV03_00_CTA_RASTER_HEIGHT{431, 416};
inline constexpr MultiWordField NVC6C0_QMDV03_00_CTA_RASTER_DEPTH{463, 448};
inline constexpr MultiWordField NVC6C0_QMDV03_00_SHARED_MEMORY_SIZE{561, 544};
inline constexpr MultiWordField NVC6C0_QMDV03_00_MIN_SM_CONFIG_SHARED_MEM_SIZE{567, 562};
inline constexpr MultiWordField NVC6C0_QMDV03_00_MAX_SM_CONFIG_SHARED_MEM_SIZE{574, 569};
inline constexpr MultiWordField NVC6C0_QMDV03_00_QMD_MAJOR_VERSION{583, 580};
inline constexpr uint32_t NVC6C0_QMDV03_00_QMD_MAJOR_VERSION_3 = 0x3;
inline constexpr MultiWordField NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION0{607, 592};
inline constexpr MultiWordField NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION1{623, 608};
inline constexpr MultiWordField NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION2{639, 624};
constexpr MultiWordField NVC6C0_QMDV03_00_CONSTANT_BUFFER_VALID(uint32_t i) { return {640 + i, 640 + i}; }
inline constexpr MultiWordField NVC6C0_QMDV03_00_REGISTER_COUNT_V{656, 648};
inline constexpr MultiWordField NVC6C0_QMDV03_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE{662, 657};
inline constexpr MultiWordField NVC6C0_QMDV03_00_BARRIER_COUNT{767, 763};
constexpr MultiWordField NVC6C0_QMDV03_00_CONSTANT_BUFFER_ADDR_LOWER(uint32_t i) { return {1055 + i * 64, 1024 + i * 64}; }
constexpr MultiWordField NVC6C0_QMDV03_00_CONSTANT_BUFFER_ADDR_UPPER(uint32_t i) { return {1072 + i * 64, 1056 + i * 64}; }
constexpr MultiWordField NVC6C0_QMDV03_00_CONSTANT_BUFFER_INVALIDATE(uint32_t i) { return {1074 + i * 64, 1074 + i * 64}; }
constexpr MultiWordField NVC6C0_QMDV03_00_CONSTANT_BUFFER_SIZE_SHIFTED4(uint32_t i) { return {1087 + i * 64, 1075 + i * 64}; }
inline constexpr MultiWordField NVC6C0_QMDV03_00_PROGRAM_ADDRESS_LOWER{1567, 1536};
inline constexpr MultiWordField NVC6C0_QMDV03_00_PROGRAM_ADDRESS_UPPER{1584, 1568};
inline constexpr MultiWordField NVC6C0_QMDV03_00_SHADER_LOCAL_MEMORY_HIGH_SIZE{1623, 1600};
inline constexpr MultiWordField NVC6C0_QMDV03_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED{1640, 1632};
inline constexpr MultiWordField NVC6C0_QMDV03_00_PROGRAM_PREFETCH_SIZE{1649, 1641};
inline constexpr MultiWordField NVC6C0_QMDV03_00_SASS_VERSION{1663, 1656};

}  // namespace nvl::nv
