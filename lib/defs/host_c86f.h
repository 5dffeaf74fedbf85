// HOPPER_CHANNEL_GPFIFO_A (class C86F): host methods, the GPFIFO entry and
// push-buffer method-header formats, the USERD control area, and the
// usermode doorbell page. Facts from open-gpu-kernel-modules 580.142,
// src/common/sdk/nvidia/inc/class/clc86f.h; what the published Hopper header
// leaves out (NON_STALL_INTERRUPT, SET_REFERENCE, semaphore reduction, the
// NVC?6F_DMA_* header format) is taken from AMPERE_CHANNEL_GPFIFO_A, clc56f.h
// of the same tree, under NVC86F_ names: host methods keep their numbers across
// these classes. Usermode page: class/clc361.h, and the field from NVIDIA
// open-gpu-doc manuals/turing/tu104/dev_usermode.ref.txt.
#pragma once

#include <cstddef>
#include <cstdint>

#include "defs/bits.h"

namespace nvl::nv {

// Bind an engine object to a subchannel (method offsets are byte offsets).
inline constexpr uint32_t NVC86F_SET_OBJECT = 0x0;

inline constexpr uint32_t NVC86F_NUMBER_OF_SUBCHANNELS = 8;
inline constexpr BitField NVC86F_SET_OBJECT_NVCLASS{15, 0};
inline constexpr BitField NVC86F_SET_OBJECT_ENGINE{20, 16};
inline constexpr uint32_t NVC86F_SET_OBJECT_ENGINE_SW = 0x1F;

// Non-stall interrupt and reference count (from C56F).
inline constexpr uint32_t NVC86F_NON_STALL_INTERRUPT = 0x20;
inline constexpr BitField NVC86F_NON_STALL_INTERRUPT_HANDLE{31, 0};
inline constexpr uint32_t NVC86F_SET_REFERENCE = 0x50;
inline constexpr BitField NVC86F_SET_REFERENCE_COUNT{31, 0};

// Memory operations: MEM_OP_A..C set operands, MEM_OP_D names the operation and runs it (membars,
// TLB invalidates, L2 flush/invalidate).
inline constexpr uint32_t NVC86F_MEM_OP_A = 0x28;
inline constexpr BitField NVC86F_MEM_OP_A_TLB_INVALIDATE_CANCEL_TARGET_CLIENT_UNIT_ID{5, 0};
inline constexpr BitField NVC86F_MEM_OP_A_TLB_INVALIDATE_INVALIDATION_SIZE{5, 0};
inline constexpr BitField NVC86F_MEM_OP_A_TLB_INVALIDATE_CANCEL_TARGET_GPC_ID{10, 6};
inline constexpr BitField NVC86F_MEM_OP_A_TLB_INVALIDATE_INVAL_SCOPE{7, 6};
inline constexpr uint32_t NVC86F_MEM_OP_A_TLB_INVALIDATE_INVAL_SCOPE_ALL_TLBS = 0;
inline constexpr uint32_t NVC86F_MEM_OP_A_TLB_INVALIDATE_INVAL_SCOPE_LINK_TLBS = 1;
inline constexpr uint32_t NVC86F_MEM_OP_A_TLB_INVALIDATE_INVAL_SCOPE_NON_LINK_TLBS = 2;
inline constexpr uint32_t NVC86F_MEM_OP_A_TLB_INVALIDATE_INVAL_SCOPE_RSVRVD = 3;
inline constexpr BitField NVC86F_MEM_OP_A_TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID{8, 0};
inline constexpr BitField NVC86F_MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR{11, 11};
inline constexpr uint32_t NVC86F_MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR_EN = 0x1;
inline constexpr uint32_t NVC86F_MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR_DIS = 0x0;
inline constexpr BitField NVC86F_MEM_OP_A_TLB_INVALIDATE_TARGET_ADDR_LO{31, 12};
inline constexpr uint32_t NVC86F_MEM_OP_B = 0x2C;
inline constexpr BitField NVC86F_MEM_OP_B_TLB_INVALIDATE_TARGET_ADDR_HI{31, 0};
inline constexpr uint32_t NVC86F_MEM_OP_C = 0x30;
inline constexpr BitField NVC86F_MEM_OP_C_MEMBAR_TYPE{2, 0};
inline constexpr uint32_t NVC86F_MEM_OP_C_MEMBAR_TYPE_SYS_MEMBAR = 0x0;
inline constexpr uint32_t NVC86F_MEM_OP_C_MEMBAR_TYPE_MEMBAR = 0x1;
inline constexpr BitField NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB{0, 0};
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_ONE = 0x0;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_ALL = 0x1;
inline constexpr BitField NVC86F_MEM_OP_C_TLB_INVALIDATE_GPC{1, 1};
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_GPC_ENABLE = 0x0;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_GPC_DISABLE = 0x1;
inline constexpr BitField NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY{4, 2};
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY_NONE = 0x0;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY_START = 0x1;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY_START_ACK_ALL = 0x2;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY_CANCEL_TARGETED = 0x3;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY_CANCEL_GLOBAL = 0x4;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY_CANCEL_VA_GLOBAL = 0x5;
inline constexpr BitField NVC86F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE{6, 5};
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE_NONE = 0x0;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE_GLOBALLY = 0x1;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE_INTRANODE = 0x2;
inline constexpr BitField NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE{9, 7};
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_READ = 0;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_WRITE = 1;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_ATOMIC_STRONG = 2;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_RSVRVD = 3;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_ATOMIC_WEAK = 4;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_ATOMIC_ALL = 5;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_WRITE_AND_ATOMIC = 6;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_ALL = 7;
inline constexpr BitField NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL{9, 7};
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL_ALL = 0x0;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL_PTE_ONLY = 0x1;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL_UP_TO_PDE0 = 0x2;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL_UP_TO_PDE1 = 0x3;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL_UP_TO_PDE2 = 0x4;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL_UP_TO_PDE3 = 0x5;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL_UP_TO_PDE4 = 0x6;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL_UP_TO_PDE5 = 0x7;
inline constexpr BitField NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE{11, 10};
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE_VID_MEM = 0x0;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE_SYS_MEM_COHERENT = 0x2;
inline constexpr uint32_t NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE_SYS_MEM_NONCOHERENT = 0x3;
inline constexpr BitField NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_ADDR_LO{31, 12};
inline constexpr BitField NVC86F_MEM_OP_C_ACCESS_COUNTER_CLR_TARGETED_NOTIFY_TAG{19, 0};
inline constexpr uint32_t NVC86F_MEM_OP_D = 0x34;
inline constexpr BitField NVC86F_MEM_OP_D_TLB_INVALIDATE_PDB_ADDR_HI{26, 0};
inline constexpr BitField NVC86F_MEM_OP_D_OPERATION{31, 27};
inline constexpr uint32_t NVC86F_MEM_OP_D_OPERATION_MEMBAR = 0x5;
inline constexpr uint32_t NVC86F_MEM_OP_D_OPERATION_MMU_TLB_INVALIDATE = 0x9;
inline constexpr uint32_t NVC86F_MEM_OP_D_OPERATION_MMU_TLB_INVALIDATE_TARGETED = 0xA;
inline constexpr uint32_t NVC86F_MEM_OP_D_OPERATION_MMU_OPERATION = 0xB;
inline constexpr uint32_t NVC86F_MEM_OP_D_OPERATION_L2_PEERMEM_INVALIDATE = 0xD;
inline constexpr uint32_t NVC86F_MEM_OP_D_OPERATION_L2_SYSMEM_INVALIDATE = 0xE;
inline constexpr uint32_t NVC86F_MEM_OP_B_OPERATION_L2_INVALIDATE_CLEAN_LINES = 0xE;
inline constexpr uint32_t NVC86F_MEM_OP_D_OPERATION_L2_CLEAN_COMPTAGS = 0xF;
inline constexpr uint32_t NVC86F_MEM_OP_D_OPERATION_L2_FLUSH_DIRTY = 0x10;
inline constexpr uint32_t NVC86F_MEM_OP_D_OPERATION_L2_WAIT_FOR_SYS_PENDING_READS = 0x15;
inline constexpr uint32_t NVC86F_MEM_OP_D_OPERATION_ACCESS_COUNTER_CLR = 0x16;
inline constexpr BitField NVC86F_MEM_OP_D_ACCESS_COUNTER_CLR_TYPE{1, 0};
inline constexpr uint32_t NVC86F_MEM_OP_D_ACCESS_COUNTER_CLR_TYPE_MIMC = 0x0;
inline constexpr uint32_t NVC86F_MEM_OP_D_ACCESS_COUNTER_CLR_TYPE_MOMC = 0x1;
inline constexpr uint32_t NVC86F_MEM_OP_D_ACCESS_COUNTER_CLR_TYPE_ALL = 0x2;
inline constexpr uint32_t NVC86F_MEM_OP_D_ACCESS_COUNTER_CLR_TYPE_TARGETED = 0x3;
inline constexpr BitField NVC86F_MEM_OP_D_ACCESS_COUNTER_CLR_TARGETED_TYPE{2, 2};
inline constexpr uint32_t NVC86F_MEM_OP_D_ACCESS_COUNTER_CLR_TARGETED_TYPE_MIMC = 0x0;
inline constexpr uint32_t NVC86F_MEM_OP_D_ACCESS_COUNTER_CLR_TARGETED_TYPE_MOMC = 0x1;
inline constexpr BitField NVC86F_MEM_OP_D_ACCESS_COUNTER_CLR_TARGETED_BANK{6, 3};
inline constexpr BitField NVC86F_MEM_OP_D_MMU_OPERATION_TYPE{23, 20};
inline constexpr uint32_t NVC86F_MEM_OP_D_MMU_OPERATION_TYPE_RESERVED = 0x0;
inline constexpr uint32_t NVC86F_MEM_OP_D_MMU_OPERATION_TYPE_VIDMEM_ACCESS_BIT_DUMP = 0x1;

// Semaphore methods: address, 64-bit payload, then SEM_EXECUTE runs the operation.
inline constexpr uint32_t NVC86F_SEM_ADDR_LO = 0x5C;
inline constexpr BitField NVC86F_SEM_ADDR_LO_OFFSET{31, 2};
inline constexpr uint32_t NVC86F_SEM_ADDR_HI = 0x60;
inline constexpr BitField NVC86F_SEM_ADDR_HI_OFFSET{24, 0};
inline constexpr uint32_t NVC86F_SEM_PAYLOAD_LO = 0x64;
inline constexpr uint32_t NVC86F_SEM_PAYLOAD_HI = 0x68;
inline constexpr uint32_t NVC86F_SEM_EXECUTE = 0x6C;
inline constexpr BitField NVC86F_SEM_EXECUTE_OPERATION{2, 0};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_ACQUIRE = 0x0;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_RELEASE = 0x1;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ = 0x3;
inline constexpr BitField NVC86F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG{12, 12};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG_EN = 0x1;
inline constexpr BitField NVC86F_SEM_EXECUTE_RELEASE_WFI{20, 20};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_RELEASE_WFI_DIS = 0x0;
inline constexpr BitField NVC86F_SEM_EXECUTE_PAYLOAD_SIZE{24, 24};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_32BIT = 0x0;
inline constexpr BitField NVC86F_SEM_EXECUTE_RELEASE_TIMESTAMP{25, 25};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_RELEASE_TIMESTAMP_DIS = 0x0;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_RELEASE_TIMESTAMP_EN = 0x1;

// SEM_EXECUTE values and fields that clc86f.h leaves out (from C56F).
inline constexpr BitField NVC86F_SEM_PAYLOAD_LO_PAYLOAD{31, 0};
inline constexpr BitField NVC86F_SEM_PAYLOAD_HI_PAYLOAD{31, 0};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ = 0x2;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_ACQ_AND = 0x4;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_ACQ_NOR = 0x5;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_REDUCTION = 0x6;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG_DIS = 0x0;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_RELEASE_WFI_EN = 0x1;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT = 0x1;
inline constexpr BitField NVC86F_SEM_EXECUTE_REDUCTION{30, 27};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_REDUCTION_IMIN = 0x0;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_REDUCTION_IMAX = 0x1;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_REDUCTION_IXOR = 0x2;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_REDUCTION_IAND = 0x3;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_REDUCTION_IOR = 0x4;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_REDUCTION_IADD = 0x5;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_REDUCTION_INC = 0x6;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_REDUCTION_DEC = 0x7;
inline constexpr BitField NVC86F_SEM_EXECUTE_REDUCTION_FORMAT{31, 31};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_REDUCTION_FORMAT_SIGNED = 0x0;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_REDUCTION_FORMAT_UNSIGNED = 0x1;

// Semaphore memory: a release writes the payload at SEM_ADDR, 4 bytes
// (PAYLOAD_SIZE_32BIT) or 8 bytes (64BIT, address 8-byte aligned). With
// RELEASE_TIMESTAMP_EN it writes 16 bytes, address 16-byte aligned: payload in
// bytes 0-7, then the 64-bit GPU time in ns in bytes 8-15 (NvGpuSemaphore's
// layout). An acquire compares PAYLOAD_SIZE bytes at SEM_ADDR with the payload.
// (open-gpu-doc manuals/ampere/ga100/dev_pbdma.ref.txt, "Host Semaphore Methods")

// Wait for idle before the next methods.
inline constexpr uint32_t NVC86F_WFI = 0x78;
inline constexpr BitField NVC86F_WFI_SCOPE{0, 0};
inline constexpr uint32_t NVC86F_WFI_SCOPE_CURRENT_SCG_TYPE = 0x0;
inline constexpr uint32_t NVC86F_WFI_SCOPE_CURRENT_VEID = 0x0;
inline constexpr uint32_t NVC86F_WFI_SCOPE_ALL = 0x1;

// GPFIFO entry: two 32-bit words pointing at a push-buffer segment (LENGTH in 32-bit words; GET is
// address bits 31:2, GET_HI bits 39:32).
inline constexpr uint32_t NVC86F_GP_ENTRY__SIZE = 8;
inline constexpr BitField NVC86F_GP_ENTRY0_FETCH{0, 0};
inline constexpr uint32_t NVC86F_GP_ENTRY0_FETCH_UNCONDITIONAL = 0x0;
inline constexpr uint32_t NVC86F_GP_ENTRY0_FETCH_CONDITIONAL = 0x1;
inline constexpr BitField NVC86F_GP_ENTRY0_GET{31, 2};
inline constexpr BitField NVC86F_GP_ENTRY0_OPERAND{31, 0};
inline constexpr BitField NVC86F_GP_ENTRY0_PB_EXTENDED_BASE_OPERAND{24, 8};
inline constexpr BitField NVC86F_GP_ENTRY1_GET_HI{7, 0};
inline constexpr BitField NVC86F_GP_ENTRY1_LEVEL{9, 9};
inline constexpr uint32_t NVC86F_GP_ENTRY1_LEVEL_MAIN = 0x0;
inline constexpr uint32_t NVC86F_GP_ENTRY1_LEVEL_SUBROUTINE = 0x1;
inline constexpr BitField NVC86F_GP_ENTRY1_LENGTH{30, 10};
inline constexpr BitField NVC86F_GP_ENTRY1_SYNC{31, 31};
inline constexpr uint32_t NVC86F_GP_ENTRY1_SYNC_PROCEED = 0x0;
inline constexpr uint32_t NVC86F_GP_ENTRY1_SYNC_WAIT = 0x1;
inline constexpr BitField NVC86F_GP_ENTRY1_OPCODE{7, 0};
inline constexpr uint32_t NVC86F_GP_ENTRY1_OPCODE_NOP = 0x0;
inline constexpr uint32_t NVC86F_GP_ENTRY1_OPCODE_ILLEGAL = 0x1;
inline constexpr uint32_t NVC86F_GP_ENTRY1_OPCODE_GP_CRC = 0x2;
inline constexpr uint32_t NVC86F_GP_ENTRY1_OPCODE_PB_CRC = 0x3;
inline constexpr uint32_t NVC86F_GP_ENTRY1_OPCODE_SET_PB_SEGMENT_EXTENDED_BASE = 0x4;

// Push-buffer method header (from C56F): SEC_OP in 31:29, count or immediate data in 28:16,
// subchannel in 15:13, method address (byte offset >> 2) in 11:0.
inline constexpr BitField NVC86F_DMA_METHOD_ADDRESS{11, 0};
inline constexpr BitField NVC86F_DMA_SUBDEVICE_MASK{15, 4};
inline constexpr BitField NVC86F_DMA_METHOD_SUBCHANNEL{15, 13};
inline constexpr BitField NVC86F_DMA_TERT_OP{17, 16};
inline constexpr uint32_t NVC86F_DMA_TERT_OP_GRP0_INC_METHOD = 0x0;
inline constexpr uint32_t NVC86F_DMA_TERT_OP_GRP0_SET_SUB_DEV_MASK = 0x1;
inline constexpr uint32_t NVC86F_DMA_TERT_OP_GRP0_STORE_SUB_DEV_MASK = 0x2;
inline constexpr uint32_t NVC86F_DMA_TERT_OP_GRP0_USE_SUB_DEV_MASK = 0x3;
inline constexpr uint32_t NVC86F_DMA_TERT_OP_GRP2_NON_INC_METHOD = 0x0;
inline constexpr BitField NVC86F_DMA_METHOD_COUNT{28, 16};
inline constexpr BitField NVC86F_DMA_IMMD_DATA{28, 16};
inline constexpr BitField NVC86F_DMA_SEC_OP{31, 29};
inline constexpr uint32_t NVC86F_DMA_SEC_OP_GRP0_USE_TERT = 0x0;
inline constexpr uint32_t NVC86F_DMA_SEC_OP_INC_METHOD = 0x1;
inline constexpr uint32_t NVC86F_DMA_SEC_OP_GRP2_USE_TERT = 0x2;
inline constexpr uint32_t NVC86F_DMA_SEC_OP_NON_INC_METHOD = 0x3;
inline constexpr uint32_t NVC86F_DMA_SEC_OP_IMMD_DATA_METHOD = 0x4;
inline constexpr uint32_t NVC86F_DMA_SEC_OP_ONE_INC = 0x5;
inline constexpr uint32_t NVC86F_DMA_SEC_OP_RESERVED6 = 0x6;
inline constexpr uint32_t NVC86F_DMA_SEC_OP_END_PB_SEGMENT = 0x7;

// The same header, per opcode (from C56F).
inline constexpr BitField NVC86F_DMA_INCR_ADDRESS{11, 0};
inline constexpr BitField NVC86F_DMA_INCR_SUBCHANNEL{15, 13};
inline constexpr BitField NVC86F_DMA_INCR_COUNT{28, 16};
inline constexpr BitField NVC86F_DMA_INCR_OPCODE{31, 29};
inline constexpr uint32_t NVC86F_DMA_INCR_OPCODE_VALUE = 0x1;
inline constexpr BitField NVC86F_DMA_INCR_DATA{31, 0};
inline constexpr BitField NVC86F_DMA_NONINCR_ADDRESS{11, 0};
inline constexpr BitField NVC86F_DMA_NONINCR_SUBCHANNEL{15, 13};
inline constexpr BitField NVC86F_DMA_NONINCR_COUNT{28, 16};
inline constexpr BitField NVC86F_DMA_NONINCR_OPCODE{31, 29};
inline constexpr uint32_t NVC86F_DMA_NONINCR_OPCODE_VALUE = 0x3;
inline constexpr BitField NVC86F_DMA_NONINCR_DATA{31, 0};
inline constexpr BitField NVC86F_DMA_ONEINCR_ADDRESS{11, 0};
inline constexpr BitField NVC86F_DMA_ONEINCR_SUBCHANNEL{15, 13};
inline constexpr BitField NVC86F_DMA_ONEINCR_COUNT{28, 16};
inline constexpr BitField NVC86F_DMA_ONEINCR_OPCODE{31, 29};
inline constexpr uint32_t NVC86F_DMA_ONEINCR_OPCODE_VALUE = 0x5;
inline constexpr BitField NVC86F_DMA_ONEINCR_DATA{31, 0};
inline constexpr uint32_t NVC86F_DMA_NOP = 0x0;
inline constexpr BitField NVC86F_DMA_IMMD_ADDRESS{11, 0};
inline constexpr BitField NVC86F_DMA_IMMD_SUBCHANNEL{15, 13};
inline constexpr BitField NVC86F_DMA_IMMD_OPCODE{31, 29};
inline constexpr uint32_t NVC86F_DMA_IMMD_OPCODE_VALUE = 0x4;
inline constexpr BitField NVC86F_DMA_ENDSEG_OPCODE{31, 29};
inline constexpr uint32_t NVC86F_DMA_ENDSEG_OPCODE_VALUE = 0x7;

// USERD: the channel's control area (GPPut is what software advances; GPGet
// is where host has fetched to). Nvc86fControl / HopperAControlGPFifo.
struct Nvc86fControl {
    uint32_t Ignored00[0x010];
    uint32_t Put;
    uint32_t Get;
    uint32_t Reference;
    uint32_t PutHi;
    uint32_t Ignored01[0x002];
    uint32_t TopLevelGet;
    uint32_t TopLevelGetHi;
    uint32_t GetHi;
    uint32_t Ignored02[0x007];
    uint32_t Ignored03;
    uint32_t Ignored04[0x001];
    uint32_t GPGet;
    uint32_t GPPut;
    uint32_t Ignored05[0x5c];
};
static_assert(sizeof(Nvc86fControl) == 512);
static_assert(offsetof(Nvc86fControl, Put) == 64);
static_assert(offsetof(Nvc86fControl, TopLevelGet) == 88);
static_assert(offsetof(Nvc86fControl, GPGet) == 136);
static_assert(offsetof(Nvc86fControl, Ignored05) == 144);
using HopperAControlGPFifo = Nvc86fControl;
// nvlite name: where GPPut sits in USERD.
inline constexpr uint32_t NVC86F_USERD_GP_PUT_OFFSET = offsetof(Nvc86fControl, GPPut);
static_assert(NVC86F_USERD_GP_PUT_OFFSET == 0x8C);

// Usermode page (VOLTA_USERMODE_A layout, also HOPPER_USERMODE_A): map NVC361_NV_USERMODE__SIZE
// bytes; a channel is kicked by writing its work-submit token
// (NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN) to NOTIFY_CHANNEL_PENDING.
inline constexpr uint32_t NVC361_NV_USERMODE__SIZE = 65536;
inline constexpr uint32_t NVC361_TIME_0 = 0x80;
inline constexpr uint32_t NVC361_TIME_1 = 0x84;
inline constexpr uint32_t NVC361_NOTIFY_CHANNEL_PENDING = 0x90;

// NOTIFY_CHANNEL_PENDING takes the whole token (dev_usermode.ref.txt: HANDLE 31:0).
inline constexpr BitField NV_USERMODE_NOTIFY_CHANNEL_PENDING_HANDLE{31, 0};

// TIME_0/TIME_1: the GPU nanosecond timer, TIME_0 holding bits 31:5 and TIME_1 bits 60:32 (swref
// volta/gv100/dev_usermode.h); read TIME_1, TIME_0, TIME_1 again to catch a carry.
inline constexpr BitField NV_USERMODE_TIME_0_NSEC{31, 5};
inline constexpr BitField NV_USERMODE_TIME_1_NSEC{28, 0};

}  // namespace nvl::nv
