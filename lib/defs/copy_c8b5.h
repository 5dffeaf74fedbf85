// HOPPER_DMA_COPY_A (class C8B5), the copy engine: semaphore, launch and
// copy-geometry methods with their fields. Facts from NVIDIA open-gpu-doc
// classes/dma-copy/clc8b5.h (a superset of open-gpu-kernel-modules 580.142
// src/common/sdk/nvidia/inc/class/clc8b5.h, which agrees where both define).
#pragma once

#include <cstddef>
#include <cstdint>

#include "defs/bits.h"
#include "defs/method.h"

namespace nvl::nv {

// The copy engine's methods (method.h: typed by this tag; offsets in bytes).
// The Ampere and Ada copy classes (C6B5, C7B5) have the same ones.
struct Nvc8b5 {};

// Semaphore address (A: upper bits, B: lower) and 64-bit payload, used by LAUNCH_DMA.
inline constexpr Method<Nvc8b5, 0x240> NVC8B5_SET_SEMAPHORE_A{};
inline constexpr BitField NVC8B5_SET_SEMAPHORE_A_UPPER{24, 0};
inline constexpr Method<Nvc8b5, 0x244> NVC8B5_SET_SEMAPHORE_B{};
inline constexpr Method<Nvc8b5, 0x248> NVC8B5_SET_SEMAPHORE_PAYLOAD{};
inline constexpr Method<Nvc8b5, 0x24C> NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER{};

// LAUNCH_DMA: starts the copy described by the methods below.
inline constexpr Method<Nvc8b5, 0x300> NVC8B5_LAUNCH_DMA{};
inline constexpr BitField NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE{1, 0};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE = 0x0;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_PIPELINED = 0x1;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED = 0x2;
inline constexpr BitField NVC8B5_LAUNCH_DMA_FLUSH_ENABLE{2, 2};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_FLUSH_ENABLE_TRUE = 0x1;
inline constexpr BitField NVC8B5_LAUNCH_DMA_FLUSH_TYPE{25, 25};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_FLUSH_TYPE_SYS = 0x0;
inline constexpr BitField NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE{4, 3};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_NONE = 0x0;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_SEMAPHORE_NO_TIMESTAMP = 0x1;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE = 0x1;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE = 0x2;
inline constexpr BitField NVC8B5_LAUNCH_DMA_INTERRUPT_TYPE{6, 5};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_INTERRUPT_TYPE_NONE = 0x0;
inline constexpr BitField NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT{7, 7};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH = 0x1;
inline constexpr BitField NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT{8, 8};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH = 0x1;
inline constexpr BitField NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE{9, 9};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE_FALSE = 0x0;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE_TRUE = 0x1;
inline constexpr BitField NVC8B5_LAUNCH_DMA_REMAP_ENABLE{10, 10};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_REMAP_ENABLE_FALSE = 0x0;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_REMAP_ENABLE_TRUE = 0x1;
inline constexpr BitField NVC8B5_LAUNCH_DMA_SRC_TYPE{12, 12};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_SRC_TYPE_VIRTUAL = 0x0;
inline constexpr BitField NVC8B5_LAUNCH_DMA_DST_TYPE{13, 13};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_DST_TYPE_VIRTUAL = 0x0;
inline constexpr BitField NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION{17, 14};
inline constexpr BitField NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN{18, 18};
inline constexpr BitField NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE{19, 19};
inline constexpr BitField NVC8B5_LAUNCH_DMA_DISABLE_PLC{26, 26};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_DISABLE_PLC_TRUE = 0x1;
inline constexpr BitField NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE{27, 27};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD = 0x1;

// Source/destination addresses, pitches and the copy size (LINE_LENGTH_IN bytes x LINE_COUNT
// lines).
inline constexpr Method<Nvc8b5, 0x400> NVC8B5_OFFSET_IN_UPPER{};
inline constexpr BitField NVC8B5_OFFSET_IN_UPPER_UPPER{24, 0};
inline constexpr Method<Nvc8b5, 0x404> NVC8B5_OFFSET_IN_LOWER{};
inline constexpr Method<Nvc8b5, 0x408> NVC8B5_OFFSET_OUT_UPPER{};
inline constexpr BitField NVC8B5_OFFSET_OUT_UPPER_UPPER{24, 0};
inline constexpr Method<Nvc8b5, 0x40C> NVC8B5_OFFSET_OUT_LOWER{};
inline constexpr Method<Nvc8b5, 0x410> NVC8B5_PITCH_IN{};
inline constexpr Method<Nvc8b5, 0x414> NVC8B5_PITCH_OUT{};
inline constexpr Method<Nvc8b5, 0x418> NVC8B5_LINE_LENGTH_IN{};
inline constexpr Method<Nvc8b5, 0x41C> NVC8B5_LINE_COUNT{};

// Remapping (with LAUNCH_DMA_REMAP_ENABLE): constant fills and component swizzles.
inline constexpr Method<Nvc8b5, 0x700> NVC8B5_SET_REMAP_CONST_A{};
inline constexpr Method<Nvc8b5, 0x704> NVC8B5_SET_REMAP_CONST_B{};
inline constexpr Method<Nvc8b5, 0x708> NVC8B5_SET_REMAP_COMPONENTS{};
inline constexpr BitField NVC8B5_SET_REMAP_COMPONENTS_DST_X{2, 0};
inline constexpr uint32_t NVC8B5_SET_REMAP_COMPONENTS_DST_X_SRC_X = 0x0;
inline constexpr uint32_t NVC8B5_SET_REMAP_COMPONENTS_DST_X_SRC_Y = 0x1;
inline constexpr uint32_t NVC8B5_SET_REMAP_COMPONENTS_DST_X_SRC_W = 0x3;
inline constexpr uint32_t NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_A = 0x4;
inline constexpr uint32_t NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_B = 0x5;
inline constexpr uint32_t NVC8B5_SET_REMAP_COMPONENTS_DST_X_NO_WRITE = 0x6;
inline constexpr BitField NVC8B5_SET_REMAP_COMPONENTS_DST_Y{6, 4};
inline constexpr BitField NVC8B5_SET_REMAP_COMPONENTS_DST_Z{10, 8};
inline constexpr BitField NVC8B5_SET_REMAP_COMPONENTS_DST_W{14, 12};
inline constexpr BitField NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE{17, 16};
inline constexpr uint32_t NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_ONE = 0x0;
inline constexpr uint32_t NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_TWO = 0x1;
inline constexpr uint32_t NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_FOUR = 0x3;
inline constexpr BitField NVC8B5_SET_REMAP_COMPONENTS_NUM_SRC_COMPONENTS{21, 20};
inline constexpr BitField NVC8B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS{25, 24};
inline constexpr uint32_t NVC8B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_ONE = 0x0;

}  // namespace nvl::nv
