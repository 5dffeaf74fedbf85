// .nv.info / .nv.info.<kernel> sections: a stream of EIATTR records
// {u8 format, u8 attribute, u16 value-or-size, payload}.
//
// Where the numbers come from: the EIATTR enumeration order in public cubin
// tools (a Zig cubin parser listing EIATTR_ERROR=0x00 .. EIATTR_INSTR_REG_MAP
// =0x40, and a public SASS disassembler's table { 0x0, "EIATTR_ERROR" } ..
// { 0x5a, "EIATTR_MERCURY_FINALIZER_OPTIONS" }), tinygrad's ops_nv.py
// (PARAM_CBANK 0xa, MIN_STACK_SIZE 0x12, REGCOUNT 0x2f), and cuobjdump -elf
// (CUDA 13.0, run on the H200 box) naming every record in nvcc 13/NVRTC
// sm_90 cubins, which also gave 0x5f = EIATTR_MERCURY_ISA_VERSION. Payload
// layouts below were read off real cubins and checked against cuobjdump.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "loader/bytes.h"

namespace nvl::loader::nvinfo {

// Section types of the records and of the call graph (SHT_CUDA_INFO,
// SHT_CUDA_CALLGRAPH in the public section-type table of cubin tools).
inline constexpr uint32_t kShtCudaInfo = 0x70000000;
inline constexpr uint32_t kShtCudaCallgraph = 0x70000001;  // u32 pairs (caller, callee symbol index)

// Record formats (EIFMT_*): NVAL has no value, BVAL/HVAL carry it in the
// 16-bit field, SVAL is followed by that many payload bytes.
enum Format : uint8_t { kNval = 1, kBval = 2, kHval = 3, kSval = 4 };

enum Attribute : uint8_t {
    kMaxThreads = 0x05,       // SVAL u32 x, y, z: __launch_bounds__ / .maxntid
    kParamCbank = 0x0a,       // SVAL u32 sym of .nv.constant0.<k>, u16 offset, u16 size
    kExterns = 0x0f,          // SVAL u32[] undefined functions the kernel calls (symbol indices)
    kReqntid = 0x10,          // SVAL u32 x, y, z: .reqntid
    kFrameSize = 0x11,        // SVAL u32 sym, u32 bytes (module .nv.info)
    kMinStackSize = 0x12,     // SVAL u32 sym, u32 bytes (module .nv.info)
    kKparamInfo = 0x17,       // SVAL u32 index, u16 ordinal, u16 offset, u32 flags (size = flags >> 18)
    kCbankParamSize = 0x19,   // HVAL parameter bytes
    kMaxregCount = 0x1b,      // HVAL
    kExitInstrOffsets = 0x1c, // SVAL u32[]
    kCrsStackSize = 0x1e,     // SVAL u32
    kMaxStackSize = 0x23,     // SVAL u32 sym, u32 bytes
    kRegcount = 0x2f,         // SVAL u32 sym, u32 registers (module .nv.info)
    kSwWar = 0x36,
    kCudaApiVersion = 0x37,   // SVAL u32 (0x82 = 13.0)
    kCtaPerCluster = 0x3d,    // SVAL u32 x, y, z: __cluster_dims__
    kExplicitCluster = 0x3e,  // NVAL
    kMaxClusterRank = 0x3f,   // SVAL u32
    kKparamInfoV2 = 0x45,     // SVAL u32 index, u16 ordinal, u16 offset, u16 size, u16 flags (large params)
    kNumBarriers = 0x4c,      // BVAL
    kSparseMmaMask = 0x50,
    kMercuryIsaVersion = 0x5f,
};

struct Record {
    uint8_t format;
    uint8_t attribute;
    uint16_t value;  // the 16-bit field: the value, or the payload size for SVAL
    Bytes payload;   // SVAL only
};

// Reads the record at *offset and moves *offset past it. CUDA_ERROR_INVALID_-
// IMAGE when the record runs past the end or has an unknown format. Loops
// over a section with it allocate nothing:
//   for (uint64_t off = 0; off < s.size();) { NVL_ASSIGN_OR_RETURN(Record r, next(s, &off)); ... }
Result<Record> next(Bytes section, uint64_t* offset);

// Splits a section into records (next() over the whole section).
Result<std::vector<Record>> parse(Bytes section);

// u32 number 'index' of an SVAL payload; false when the payload is shorter.
inline bool word(const Record& r, size_t index, uint32_t* out) {
    return readAt<uint32_t>(r.payload, index * 4, out);
}

}  // namespace nvl::loader::nvinfo
