// HOPPER_COMPUTE_A (class CBC0): the compute-engine methods nvlite uses to set
// up local/shared memory windows, launch QMDs and release semaphores. Facts from
// NVIDIA open-gpu-doc classes/compute/clcbc0.h (580.142's clcbc0.h holds only
// the class id).
#pragma once

#include <cstddef>
#include <cstdint>

#include "defs/bits.h"

namespace nvl::nv {

// The class id, HOPPER_COMPUTE_A, is in rm_classes.h. Method offsets are byte offsets.

// Bind the class to a subchannel.
inline constexpr uint32_t NVCBC0_SET_OBJECT = 0x0;
inline constexpr BitField NVCBC0_SET_OBJECT_CLASS_ID{15, 0};
inline constexpr BitField NVCBC0_SET_OBJECT_ENGINE_ID{20, 16};

// Wait until the engine is idle.
inline constexpr uint32_t NVCBC0_WAIT_FOR_IDLE = 0x110;
inline constexpr BitField NVCBC0_WAIT_FOR_IDLE_V{31, 0};

// Shader local memory: backing store (A/B), its size per SM when not throttled (A-C), and where
// the local/shared windows sit in the generic address space.
inline constexpr uint32_t NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A = 0x2A0;
inline constexpr BitField NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER{16, 0};
inline constexpr uint32_t NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_B = 0x2A4;
inline constexpr BitField NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_B_BASE_ADDRESS{31, 0};
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A = 0x2E4;
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER{7, 0};
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B = 0x2E8;
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B_SIZE_LOWER{31, 0};
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C = 0x2EC;
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT{8, 0};
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_PLURAL_TPC_GPC_COUNT{23, 16};
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SINGLETON_TPC_GPC_COUNT{31, 24};
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_A = 0x790;
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER{24, 0};
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_B = 0x794;
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_B_ADDRESS_LOWER{31, 0};
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A = 0x7B0;
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER{16, 0};
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_B = 0x7B4;
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_B_BASE_ADDRESS{31, 0};

// Launch: SEND_PCAS_A takes the QMD address >> 8, SEND_SIGNALING_PCAS2_B says what to do with it.
inline constexpr uint32_t NVCBC0_SEND_PCAS_A = 0x2B4;
inline constexpr BitField NVCBC0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8{31, 0};
inline constexpr uint32_t NVCBC0_SEND_PCAS_B = 0x2B8;
inline constexpr BitField NVCBC0_SEND_PCAS_B_FROM{23, 0};
inline constexpr BitField NVCBC0_SEND_PCAS_B_DELTA{31, 24};
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B = 0x2C0;
inline constexpr BitField NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION{3, 0};
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_NOP = 0x0;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE = 0x1;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_SCHEDULE = 0x2;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE = 0x3;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INCREMENT_PUT = 0x6;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_DECREMENT_DEPENDENCE = 0x7;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH = 0x8;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE = 0x9;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE = 0xA;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_PREFETCH_COPY_FORCE_REQUIRE_SCHEDULING = 0xB;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INCREMENT_DEPENDENCE = 0xC;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INCREMENT_CWD_REF_COUNTER = 0xD;
inline constexpr BitField NVCBC0_SEND_SIGNALING_PCAS2_B_SELECT{13, 8};
inline constexpr BitField NVCBC0_SEND_SIGNALING_PCAS2_B_OFFSET_MINUS_ONE{23, 14};

// Inline QMD: the address (>> 8) of a QMD whose bytes follow in LOAD_INLINE_QMD_DATA(i).
inline constexpr uint32_t NVCBC0_SET_INLINE_QMD_ADDRESS_A = 0x318;
inline constexpr BitField NVCBC0_SET_INLINE_QMD_ADDRESS_A_QMD_ADDRESS_SHIFTED8_UPPER{8, 0};
inline constexpr BitField NVCBC0_SET_INLINE_QMD_ADDRESS_A_INLINE_SIZE{30, 30};
inline constexpr uint32_t NVCBC0_SET_INLINE_QMD_ADDRESS_A_INLINE_SIZE_INLINE_256 = 0x0;
inline constexpr uint32_t NVCBC0_SET_INLINE_QMD_ADDRESS_A_INLINE_SIZE_INLINE_384 = 0x1;
inline constexpr uint32_t NVCBC0_SET_INLINE_QMD_ADDRESS_B = 0x31C;
inline constexpr BitField NVCBC0_SET_INLINE_QMD_ADDRESS_B_QMD_ADDRESS_SHIFTED8_LOWER{31, 0};
inline constexpr BitField NVCBC0_LOAD_INLINE_QMD_DATA_V{31, 0};

constexpr uint32_t NVCBC0_LOAD_INLINE_QMD_DATA(uint32_t i) { return 0x0320 + i * 4; }

// Invalidate shader caches without waiting for idle.
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI = 0x1698;
inline constexpr BitField NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION{0, 0};
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION_FALSE = 0x0;
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION_TRUE = 0x1;
inline constexpr BitField NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA{4, 4};
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA_FALSE = 0x0;
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA_TRUE = 0x1;
inline constexpr BitField NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT{12, 12};
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT_FALSE = 0x0;
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT_TRUE = 0x1;

// Report semaphore: address (A upper, B lower), payload (C), then D releases it.
// STRUCTURE_SIZE_ONE_WORD writes 4 bytes; FOUR_WORDS writes 16: payload, 0, 64-bit ns timestamp.
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_ADDRESS_LOWER = 0x160;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_ADDRESS_LOWER_LOWER{31, 0};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_ADDRESS_UPPER = 0x164;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_ADDRESS_UPPER_UPPER{24, 0};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_A = 0x1B00;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_A_OFFSET_UPPER{24, 0};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_B = 0x1B04;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_B_OFFSET_LOWER{31, 0};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_C = 0x1B08;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_C_PAYLOAD{31, 0};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D = 0x1B0C;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_OPERATION{1, 0};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_OPERATION_RELEASE = 0x0;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_OPERATION_TRAP = 0x3;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_AWAKEN_ENABLE{20, 20};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_AWAKEN_ENABLE_FALSE = 0x0;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_AWAKEN_ENABLE_TRUE = 0x1;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_STRUCTURE_SIZE{28, 28};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_STRUCTURE_SIZE_FOUR_WORDS = 0x0;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_STRUCTURE_SIZE_ONE_WORD = 0x1;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_FLUSH_DISABLE{2, 2};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_FLUSH_DISABLE_FALSE = 0x0;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_FLUSH_DISABLE_TRUE = 0x1;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_ENABLE{3, 3};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_ENABLE_FALSE = 0x0;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_ENABLE_TRUE = 0x1;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_OP{11, 9};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_OP_RED_ADD = 0x0;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_OP_RED_MIN = 0x1;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_OP_RED_MAX = 0x2;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_OP_RED_INC = 0x3;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_OP_RED_DEC = 0x4;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_OP_RED_AND = 0x5;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_OP_RED_OR = 0x6;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_OP_RED_XOR = 0x7;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_FORMAT{18, 17};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_FORMAT_UNSIGNED_32 = 0x0;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_REDUCTION_FORMAT_SIGNED_32 = 0x1;
inline constexpr BitField NVCBC0_SET_REPORT_SEMAPHORE_D_CONDITIONAL_TRAP{19, 19};
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_CONDITIONAL_TRAP_FALSE = 0x0;
inline constexpr uint32_t NVCBC0_SET_REPORT_SEMAPHORE_D_CONDITIONAL_TRAP_TRUE = 0x1;

// HOPPER_COMPUTE_A methods not in compute_cbc0.h (open-gpu-doc classes/compute/clcbc0.h)
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS_B = 0x2BC;
inline constexpr BitField NVCBC0_SEND_SIGNALING_PCAS_B_SCHEDULE{1, 1};
// Inline-to-memory ("I2M") uploads: LAUNCH_DMA then LOAD_INLINE_DATA words.
inline constexpr uint32_t NVCBC0_LINE_LENGTH_IN = 0x180;
inline constexpr uint32_t NVCBC0_LINE_COUNT = 0x184;
inline constexpr uint32_t NVCBC0_OFFSET_OUT_UPPER = 0x188;
inline constexpr BitField NVCBC0_OFFSET_OUT_UPPER_VALUE{24, 0};
inline constexpr uint32_t NVCBC0_OFFSET_OUT = 0x18C;
inline constexpr uint32_t NVCBC0_PITCH_OUT = 0x190;
inline constexpr uint32_t NVCBC0_LAUNCH_DMA = 0x1B0;
inline constexpr BitField NVCBC0_LAUNCH_DMA_DST_MEMORY_LAYOUT{0, 0};
inline constexpr uint32_t NVCBC0_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH = 0x1;
inline constexpr BitField NVCBC0_LAUNCH_DMA_COMPLETION_TYPE{5, 4};
inline constexpr uint32_t NVCBC0_LAUNCH_DMA_COMPLETION_TYPE_RELEASE_SEMAPHORE = 0x2;
inline constexpr BitField NVCBC0_LAUNCH_DMA_INTERRUPT_TYPE{9, 8};
inline constexpr uint32_t NVCBC0_LAUNCH_DMA_INTERRUPT_TYPE_INTERRUPT = 0x1;
inline constexpr BitField NVCBC0_LAUNCH_DMA_SEMAPHORE_STRUCT_SIZE{12, 12};
inline constexpr uint32_t NVCBC0_LAUNCH_DMA_SEMAPHORE_STRUCT_SIZE_FOUR_WORDS = 0x0;
inline constexpr uint32_t NVCBC0_LOAD_INLINE_DATA = 0x1B4;
inline constexpr uint32_t NVCBC0_SET_I2M_SEMAPHORE_A = 0x1DC;
inline constexpr BitField NVCBC0_SET_I2M_SEMAPHORE_A_OFFSET_UPPER{24, 0};
inline constexpr uint32_t NVCBC0_SET_I2M_SEMAPHORE_B = 0x1E0;
inline constexpr uint32_t NVCBC0_SET_I2M_SEMAPHORE_C = 0x1E4;

}  // namespace nvl::nv
