// HOPPER_COMPUTE_A (class CBC0): the compute-engine methods nvlite uses to set
// up local/shared memory windows, launch QMDs and release semaphores. Facts from
// NVIDIA open-gpu-doc classes/compute/clcbc0.h (580.142's clcbc0.h holds only
// the class id).
#pragma once

#include <cstddef>
#include <cstdint>

#include "defs/bits.h"
#include "defs/method.h"

namespace nvl::nv {

// HOPPER_COMPUTE_A's methods (method.h: typed by this tag; offsets in bytes).
// The Ampere and Ada compute classes have the same ones for what we use.
struct Nvcbc0 {};

// Shader local memory: backing store (A/B), its size per SM when not throttled (A-C), and where
// the local/shared windows sit in the generic address space.
inline constexpr Method<Nvcbc0, 0x2A0> NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A{};
inline constexpr BitField NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER{16, 0};
inline constexpr Method<Nvcbc0, 0x2A4> NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_B{};
inline constexpr Method<Nvcbc0, 0x2E4> NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A{};
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER{7, 0};
inline constexpr Method<Nvcbc0, 0x2E8> NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B{};
inline constexpr Method<Nvcbc0, 0x2EC> NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C{};
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT{8, 0};
inline constexpr Method<Nvcbc0, 0x790> NVCBC0_SET_SHADER_LOCAL_MEMORY_A{};
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER{24, 0};
inline constexpr Method<Nvcbc0, 0x794> NVCBC0_SET_SHADER_LOCAL_MEMORY_B{};
inline constexpr Method<Nvcbc0, 0x7B0> NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A{};
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER{16, 0};
inline constexpr Method<Nvcbc0, 0x7B4> NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_B{};

// Launch: SEND_PCAS_A takes the QMD address >> 8, SEND_SIGNALING_PCAS2_B says what to do with it.
inline constexpr Method<Nvcbc0, 0x2B4> NVCBC0_SEND_PCAS_A{};
inline constexpr BitField NVCBC0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8{31, 0};
inline constexpr Method<Nvcbc0, 0x2C0> NVCBC0_SEND_SIGNALING_PCAS2_B{};
inline constexpr BitField NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION{3, 0};
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_SCHEDULE = 0x2;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE = 0x3;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE = 0x9;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE = 0xA;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_PREFETCH_COPY_FORCE_REQUIRE_SCHEDULING = 0xB;

// Inline QMD: the address (>> 8) of a QMD whose bytes follow in LOAD_INLINE_QMD_DATA(i).
inline constexpr Method<Nvcbc0, 0x318> NVCBC0_SET_INLINE_QMD_ADDRESS_A{};
inline constexpr BitField NVCBC0_SET_INLINE_QMD_ADDRESS_A_QMD_ADDRESS_SHIFTED8_UPPER{8, 0};
inline constexpr BitField NVCBC0_SET_INLINE_QMD_ADDRESS_A_INLINE_SIZE{30, 30};
inline constexpr uint32_t NVCBC0_SET_INLINE_QMD_ADDRESS_A_INLINE_SIZE_INLINE_384 = 0x1;
inline constexpr Method<Nvcbc0, 0x31C> NVCBC0_SET_INLINE_QMD_ADDRESS_B{};

constexpr uint32_t NVCBC0_LOAD_INLINE_QMD_DATA(uint32_t i) { return 0x0320 + i * 4; }

// Invalidate shader caches without waiting for idle.
inline constexpr Method<Nvcbc0, 0x1698> NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI{};
inline constexpr BitField NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION{0, 0};
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION_TRUE = 0x1;
inline constexpr BitField NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA{4, 4};
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA_TRUE = 0x1;
inline constexpr BitField NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT{12, 12};
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT_TRUE = 0x1;

// Report semaphore: address (A upper, B lower), payload (C), then D releases it.
// STRUCTURE_SIZE_ONE_WORD writes 4 bytes; FOUR_WORDS writes 16: payload, 0, 64-bit ns timestamp.
inline constexpr Method<Nvcbc0, 0x1B00> NVCBC0_SET_REPORT_SEMAPHORE_A{};
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_A_OFFSET_UPPER{24, 0};
inline constexpr Method<Nvcbc0, 0x1B04> NVCBC0_SET_REPORT_SEMAPHORE_B{};
inline constexpr Method<Nvcbc0, 0x1B08> NVCBC0_SET_REPORT_SEMAPHORE_C{};
inline constexpr Method<Nvcbc0, 0x1B0C> NVCBC0_SET_REPORT_SEMAPHORE_D{};
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_OPERATION{1, 0};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_OPERATION_RELEASE = 0x0;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_AWAKEN_ENABLE{20, 20};
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_STRUCTURE_SIZE{28, 28};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_STRUCTURE_SIZE_FOUR_WORDS = 0x0;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_ENABLE{3, 3};
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_OP{11, 9};
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_FORMAT{18, 17};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_FORMAT_SIGNED_32 = 0x1;

// The older launch method, and inline-to-memory uploads (what the simulator decodes).
inline constexpr Method<Nvcbc0, 0x2BC> NVCBC0_SEND_SIGNALING_PCAS_B{};
inline constexpr BitField NVCBC0_SEND_SIGNALING_PCAS_B_SCHEDULE{1, 1};
// Inline-to-memory ("I2M") uploads: LAUNCH_DMA then LOAD_INLINE_DATA words.
inline constexpr Method<Nvcbc0, 0x180> NVCBC0_LINE_LENGTH_IN{};
inline constexpr Method<Nvcbc0, 0x184> NVCBC0_LINE_COUNT{};
inline constexpr Method<Nvcbc0, 0x188> NVCBC0_OFFSET_OUT_UPPER{};
inline constexpr BitField NVCBC0_OFFSET_OUT_UPPER_VALUE{24, 0};
inline constexpr Method<Nvcbc0, 0x18C> NVCBC0_OFFSET_OUT{};
inline constexpr Method<Nvcbc0, 0x190> NVCBC0_PITCH_OUT{};
inline constexpr Method<Nvcbc0, 0x1B0> NVCBC0_LAUNCH_DMA{};
inline constexpr BitField NVCBC0_LAUNCH_DMA_DST_MEMORY_LAYOUT{0, 0};
inline constexpr uint32_t NVCBC0_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH = 0x1;
inline constexpr BitField NVCBC0_LAUNCH_DMA_COMPLETION_TYPE{5, 4};
inline constexpr uint32_t NVCBC0_LAUNCH_DMA_COMPLETION_TYPE_RELEASE_SEMAPHORE = 0x2;
inline constexpr BitField NVCBC0_LAUNCH_DMA_INTERRUPT_TYPE{9, 8};
inline constexpr uint32_t NVCBC0_LAUNCH_DMA_INTERRUPT_TYPE_INTERRUPT = 0x1;
inline constexpr BitField NVCBC0_LAUNCH_DMA_SEMAPHORE_STRUCT_SIZE{12, 12};
inline constexpr uint32_t NVCBC0_LAUNCH_DMA_SEMAPHORE_STRUCT_SIZE_FOUR_WORDS = 0x0;
inline constexpr Method<Nvcbc0, 0x1B4> NVCBC0_LOAD_INLINE_DATA{};
inline constexpr Method<Nvcbc0, 0x1DC> NVCBC0_SET_I2M_SEMAPHORE_A{};
inline constexpr BitField NVCBC0_SET_I2M_SEMAPHORE_A_OFFSET_UPPER{24, 0};
inline constexpr Method<Nvcbc0, 0x1E0> NVCBC0_SET_I2M_SEMAPHORE_B{};
inline constexpr Method<Nvcbc0, 0x1E4> NVCBC0_SET_I2M_SEMAPHORE_C{};

}  // namespace nvl::nv
