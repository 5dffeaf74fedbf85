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
#include "defs/method.h"

namespace nvl::nv {

// Host methods (method.h: typed by this tag; offsets in bytes). They are
// taken on any subchannel.
struct Nvc86f {};

// Bind an engine object to the subchannel the method is written on.
inline constexpr Method<Nvc86f, 0x0> NVC86F_SET_OBJECT{};

inline constexpr BitField NVC86F_SET_OBJECT_NVCLASS{15, 0};
inline constexpr BitField NVC86F_SET_OBJECT_ENGINE{20, 16};
inline constexpr uint32_t NVC86F_SET_OBJECT_ENGINE_SW = 0x1F;

// Non-stall interrupt and reference count (from C56F).
inline constexpr Method<Nvc86f, 0x20> NVC86F_NON_STALL_INTERRUPT{};
inline constexpr Method<Nvc86f, 0x50> NVC86F_SET_REFERENCE{};

// Semaphore methods: address, 64-bit payload, then SEM_EXECUTE runs the operation.
inline constexpr Method<Nvc86f, 0x5C> NVC86F_SEM_ADDR_LO{};
inline constexpr BitField NVC86F_SEM_ADDR_LO_OFFSET{31, 2};
inline constexpr Method<Nvc86f, 0x60> NVC86F_SEM_ADDR_HI{};
inline constexpr BitField NVC86F_SEM_ADDR_HI_OFFSET{24, 0};
inline constexpr Method<Nvc86f, 0x64> NVC86F_SEM_PAYLOAD_LO{};
inline constexpr Method<Nvc86f, 0x68> NVC86F_SEM_PAYLOAD_HI{};
inline constexpr Method<Nvc86f, 0x6C> NVC86F_SEM_EXECUTE{};
inline constexpr BitField NVC86F_SEM_EXECUTE_OPERATION{2, 0};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_ACQUIRE = 0x0;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_RELEASE = 0x1;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ = 0x3;
inline constexpr BitField NVC86F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG{12, 12};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG_DIS = 0x0;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG_EN = 0x1;
inline constexpr BitField NVC86F_SEM_EXECUTE_RELEASE_WFI{20, 20};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_RELEASE_WFI_DIS = 0x0;
inline constexpr BitField NVC86F_SEM_EXECUTE_PAYLOAD_SIZE{24, 24};
inline constexpr BitField NVC86F_SEM_EXECUTE_RELEASE_TIMESTAMP{25, 25};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_RELEASE_TIMESTAMP_EN = 0x1;
// Host wait for idle: the channel's later methods wait until the engine it
// last sent methods to is idle for the channel's VEID (CURRENT_VEID) or for
// every VEID of its context (ALL).
inline constexpr Method<Nvc86f, 0x78> NVC86F_WFI{};
inline constexpr BitField NVC86F_WFI_SCOPE{0, 0};
inline constexpr uint32_t NVC86F_WFI_SCOPE_CURRENT_VEID = 0x0;

// SEM_EXECUTE values and fields that clc86f.h leaves out (from C56F).
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ = 0x2;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_ACQ_AND = 0x4;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_ACQ_NOR = 0x5;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_REDUCTION = 0x6;
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

// GPFIFO entry: two 32-bit words pointing at a push-buffer segment (LENGTH in 32-bit words; GET is
// address bits 31:2, GET_HI bits 39:32).
inline constexpr uint32_t NVC86F_GP_ENTRY__SIZE = 8;
inline constexpr BitField NVC86F_GP_ENTRY0_GET{31, 2};
inline constexpr BitField NVC86F_GP_ENTRY1_GET_HI{7, 0};
inline constexpr BitField NVC86F_GP_ENTRY1_LENGTH{30, 10};

// Push-buffer method header (from C56F): SEC_OP in 31:29, count or immediate data in 28:16,
// subchannel in 15:13, method address (byte offset >> 2) in 11:0.
inline constexpr BitField NVC86F_DMA_METHOD_ADDRESS{11, 0};
inline constexpr BitField NVC86F_DMA_METHOD_SUBCHANNEL{15, 13};
inline constexpr BitField NVC86F_DMA_TERT_OP{17, 16};
inline constexpr uint32_t NVC86F_DMA_TERT_OP_GRP0_INC_METHOD = 0x0;
inline constexpr BitField NVC86F_DMA_METHOD_COUNT{28, 16};
inline constexpr BitField NVC86F_DMA_IMMD_DATA{28, 16};
inline constexpr BitField NVC86F_DMA_SEC_OP{31, 29};
inline constexpr uint32_t NVC86F_DMA_SEC_OP_GRP0_USE_TERT = 0x0;
inline constexpr uint32_t NVC86F_DMA_SEC_OP_INC_METHOD = 0x1;
inline constexpr uint32_t NVC86F_DMA_SEC_OP_NON_INC_METHOD = 0x3;
inline constexpr uint32_t NVC86F_DMA_SEC_OP_IMMD_DATA_METHOD = 0x4;
inline constexpr uint32_t NVC86F_DMA_SEC_OP_ONE_INC = 0x5;
inline constexpr uint32_t NVC86F_DMA_SEC_OP_END_PB_SEGMENT = 0x7;

// The same header, per opcode (from C56F).
inline constexpr uint32_t NVC86F_DMA_NOP = 0x0;

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
// nvlite name: where GPPut sits in USERD.
inline constexpr uint32_t NVC86F_USERD_GP_PUT_OFFSET = offsetof(Nvc86fControl, GPPut);
static_assert(NVC86F_USERD_GP_PUT_OFFSET == 0x8C);
// nvlite name: where host reports the GPFIFO entries it has fetched.
inline constexpr uint32_t NVC86F_USERD_GP_GET_OFFSET = offsetof(Nvc86fControl, GPGet);

// Usermode page (VOLTA_USERMODE_A layout, also HOPPER_USERMODE_A): map NVC361_NV_USERMODE__SIZE
// bytes; a channel is kicked by writing its work-submit token
// (NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN) to NOTIFY_CHANNEL_PENDING.
inline constexpr uint32_t NVC361_NV_USERMODE__SIZE = 65536;
inline constexpr uint32_t NVC361_TIME_0 = 0x80;
inline constexpr uint32_t NVC361_TIME_1 = 0x84;
inline constexpr uint32_t NVC361_NOTIFY_CHANNEL_PENDING = 0x90;

// TIME_0/TIME_1: the GPU nanosecond timer, TIME_0 holding bits 31:5 and TIME_1 bits 60:32 (swref
// volta/gv100/dev_usermode.h); read TIME_1, TIME_0, TIME_1 again to catch a carry.
inline constexpr BitField NV_USERMODE_TIME_1_NSEC{28, 0};

}  // namespace nvl::nv
