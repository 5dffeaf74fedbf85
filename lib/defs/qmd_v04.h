// Hopper's launch descriptor, QMD version 4 (HOPPER_COMPUTE_A): field
// positions and helpers to read and write them in a 384-byte image.
// Facts from open-gpu-doc classes/compute/clcbc0qmd.h.
#pragma once

#include <cstdint>

#include "defs/bits.h"

namespace nvl::nv {

// Hopper QMD, version 4 (open-gpu-doc classes/compute/clcbc0qmd.h,
// NVCBC0_QMDV04_00_*): 3072 bits = 384 bytes. Bit positions count from bit 0
// of the QMD (NVIDIA's MW(hi:lo)).
inline constexpr uint32_t NVCBC0_QMDV04_00_SIZE_BYTES = 384;
inline constexpr MultiWordField NVCBC0_QMDV04_00_QMD_TYPE{25, 23};
inline constexpr MultiWordField NVCBC0_QMDV04_00_QMD_MAJOR_VERSION{583, 580};
inline constexpr MultiWordField NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE{601, 584};
inline constexpr MultiWordField NVCBC0_QMDV04_00_GRID_WIDTH{1055, 1024};
inline constexpr MultiWordField NVCBC0_QMDV04_00_GRID_HEIGHT{1071, 1056};
inline constexpr MultiWordField NVCBC0_QMDV04_00_GRID_DEPTH{1103, 1088};
inline constexpr MultiWordField NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0{1167, 1152};
inline constexpr MultiWordField NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION1{1183, 1168};
inline constexpr MultiWordField NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION2{1199, 1184};
inline constexpr MultiWordField NVCBC0_QMDV04_00_REGISTER_COUNT{1208, 1200};
inline constexpr MultiWordField NVCBC0_QMDV04_00_PROGRAM_ADDRESS_LOWER{1247, 1216};
inline constexpr MultiWordField NVCBC0_QMDV04_00_PROGRAM_ADDRESS_UPPER{1272, 1248};
inline constexpr MultiWordField NVCBC0_QMDV04_00_DEPENDENT_QMD0_POINTER{479, 448};
inline constexpr MultiWordField NVCBC0_QMDV04_00_DEPENDENT_QMD1_POINTER{511, 480};
constexpr MultiWordField NVCBC0_QMDV04_00_RELEASE_ENABLE(uint32_t i) { return {320 + i * 16, 320 + i * 16}; }
constexpr MultiWordField NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE(uint32_t i) { return {322 + i * 16, 321 + i * 16}; }
inline constexpr uint32_t NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE_SEMAPHORE_FOUR_WORDS = 0x0;
inline constexpr uint32_t NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE_SEMAPHORE_ONE_WORD = 0x1;
inline constexpr uint32_t NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE_SEMAPHORE_TWO_WORDS = 0x2;
constexpr MultiWordField NVCBC0_QMDV04_00_RELEASE_REDUCTION_ENABLE(uint32_t i) { return {324 + i * 16, 324 + i * 16}; }
constexpr MultiWordField NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP(uint32_t i) { return {327 + i * 16, 325 + i * 16}; }
inline constexpr uint32_t NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_ADD = 0x0;
inline constexpr uint32_t NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_MIN = 0x1;
inline constexpr uint32_t NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_MAX = 0x2;
inline constexpr uint32_t NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_INC = 0x3;
inline constexpr uint32_t NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_DEC = 0x4;
inline constexpr uint32_t NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_AND = 0x5;
inline constexpr uint32_t NVCBC0_QMDV04_00_RELEASE_REDUCTION_OP_RED_OR = 0x6;
constexpr MultiWordField NVCBC0_QMDV04_00_RELEASE_REDUCTION_FORMAT(uint32_t i) { return {329 + i * 16, 328 + i * 16}; }
inline constexpr uint32_t NVCBC0_QMDV04_00_RELEASE_REDUCTION_FORMAT_SIGNED = 0x1;
constexpr MultiWordField NVCBC0_QMDV04_00_RELEASE_PAYLOAD64B(uint32_t i) { return {332 + i * 16, 332 + i * 16}; }
// RELEASE_SEMAPHORE{0,1,2}_ADDR_LOWER/UPPER and PAYLOAD_LOWER/UPPER: 128 bits apart.
constexpr MultiWordField NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_ADDR_LOWER(uint32_t i) { return {671 + i * 128, 640 + i * 128}; }
constexpr MultiWordField NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_ADDR_UPPER(uint32_t i) { return {696 + i * 128, 672 + i * 128}; }
constexpr MultiWordField NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_PAYLOAD_LOWER(uint32_t i) { return {735 + i * 128, 704 + i * 128}; }
constexpr MultiWordField NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_PAYLOAD_UPPER(uint32_t i) { return {767 + i * 128, 736 + i * 128}; }
constexpr MultiWordField NVCBC0_QMDV04_00_DEPENDENT_QMD_ENABLE(uint32_t i) { return {368 + i * 5, 368 + i * 5}; }
constexpr MultiWordField NVCBC0_QMDV04_00_DEPENDENT_QMD_ACTION(uint32_t i) { return {371 + i * 5, 369 + i * 5}; }
inline constexpr uint32_t NVCBC0_QMDV04_00_DEPENDENT_QMD_ACTION_QMD_SCHEDULE = 0x1;
constexpr MultiWordField NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID(uint32_t i) { return {416 + i * 4, 416 + i * 4}; }
constexpr MultiWordField NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(uint32_t i) { return {1567 + i * 64, 1536 + i * 64}; }
constexpr MultiWordField NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(uint32_t i) { return {1586 + i * 64, 1568 + i * 64}; }
constexpr MultiWordField NVCBC0_QMDV04_00_CONSTANT_BUFFER_SIZE_SHIFTED4(uint32_t i) { return {1599 + i * 64, 1587 + i * 64}; }

// Launch configuration fields the launch path writes.
inline constexpr uint32_t NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA = 0x2;
// Thread block clusters: a grid of GPC-level CGAs of GPC_CGA_WIDTH x HEIGHT x DEPTH CTAs.
inline constexpr uint32_t NVCBC0_QMDV04_00_QMD_TYPE_GRID_GPC_CGA = 0x3;
inline constexpr MultiWordField NVCBC0_QMDV04_00_GPC_CGA_WIDTH{2149, 2144};
inline constexpr MultiWordField NVCBC0_QMDV04_00_GPC_CGA_HEIGHT{2157, 2152};
inline constexpr MultiWordField NVCBC0_QMDV04_00_GPC_CGA_DEPTH{2165, 2160};
inline constexpr uint32_t NVCBC0_QMDV04_00_QMD_MAJOR_VERSION_4 = 0x4;
inline constexpr MultiWordField NVCBC0_QMDV04_00_QMD_GROUP_ID{21, 16};
inline constexpr MultiWordField NVCBC0_QMDV04_00_SHADER_LOCAL_MEMORY_LOW_SIZE{535, 512};
inline constexpr MultiWordField NVCBC0_QMDV04_00_SASS_VERSION{543, 536};
inline constexpr MultiWordField NVCBC0_QMDV04_00_SHADER_LOCAL_MEMORY_HIGH_SIZE{567, 544};
inline constexpr MultiWordField NVCBC0_QMDV04_00_API_VISIBLE_CALL_LIMIT{568, 568};
inline constexpr uint32_t NVCBC0_QMDV04_00_API_VISIBLE_CALL_LIMIT_NO_CHECK = 0x1;
inline constexpr MultiWordField NVCBC0_QMDV04_00_SAMPLER_INDEX{569, 569};
inline constexpr uint32_t NVCBC0_QMDV04_00_SAMPLER_INDEX_VIA_HEADER_INDEX = 0x1;
inline constexpr MultiWordField NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_HEADER_CACHE{602, 602};
inline constexpr MultiWordField NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_SAMPLER_CACHE{603, 603};
inline constexpr MultiWordField NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_DATA_CACHE{604, 604};
inline constexpr MultiWordField NVCBC0_QMDV04_00_INVALIDATE_SHADER_DATA_CACHE{605, 605};
inline constexpr MultiWordField NVCBC0_QMDV04_00_MIN_SM_CONFIG_SHARED_MEM_SIZE{613, 608};
inline constexpr MultiWordField NVCBC0_QMDV04_00_MAX_SM_CONFIG_SHARED_MEM_SIZE{619, 614};
inline constexpr MultiWordField NVCBC0_QMDV04_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE{625, 620};
inline constexpr MultiWordField NVCBC0_QMDV04_00_CWD_MEMBAR_TYPE{1137, 1136};
inline constexpr uint32_t NVCBC0_QMDV04_00_CWD_MEMBAR_TYPE_L1_SYSMEMBAR = 0x1;
inline constexpr MultiWordField NVCBC0_QMDV04_00_BARRIER_COUNT{1215, 1211};
inline constexpr MultiWordField NVCBC0_QMDV04_00_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED{1375, 1344};
inline constexpr MultiWordField NVCBC0_QMDV04_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED{1392, 1376};
inline constexpr MultiWordField NVCBC0_QMDV04_00_PROGRAM_PREFETCH_SIZE{1401, 1393};
constexpr MultiWordField NVCBC0_QMDV04_00_CONSTANT_BUFFER_INVALIDATE(uint32_t i) { return {419 + i * 4, 419 + i * 4}; }

// Reads a multi-word field (at most 64 bits wide) from a QMD image.
inline uint64_t qmdGet(const uint8_t* qmd, MultiWordField f) {
    uint64_t v = 0;
    for (uint32_t bit = f.hi + 1; bit-- > f.lo;) v = (v << 1) | ((qmd[bit >> 3] >> (bit & 7)) & 1u);
    return v;
}
// Writes one (for tests building QMDs).
inline void qmdSet(uint8_t* qmd, MultiWordField f, uint64_t v) {
    NVL_ASSERT(f.holds(v));
    for (uint32_t bit = f.lo; bit <= f.hi; ++bit, v >>= 1) {
        const uint8_t mask = static_cast<uint8_t>(1u << (bit & 7));
        qmd[bit >> 3] = static_cast<uint8_t>((v & 1) ? (qmd[bit >> 3] | mask) : (qmd[bit >> 3] & ~mask));
    }
}

}  // namespace nvl::nv
