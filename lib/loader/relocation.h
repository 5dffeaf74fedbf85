// R_CUDA_* relocations: the ones the loader applies, and how.
//
// Numbers: the R_CUDA_* name table of a public SASS disassembler
// ("/* 38 */ R_CUDA_ABS32_LO_32", ...) and a public table extracted from
// ptxas 13.0 (name, handler, bit fields), both agreeing with cuobjdump -elf
// (CUDA 13.0) on our test cubins, and with tinygrad's ops_nv.py (2 = R_CUDA_64,
// 0x38/0x39 = low/high 32 bits at byte offset 4).
//
// Types seen in sm_90 cubins from nvcc 13 and NVRTC 13 (test kernels with
// __device__/__constant__ data, function pointers, device calls, large
// local arrays; whole-program and -rdc + nvlink/nvJitLink):
//   R_CUDA_64 (2)            .nv.constant4 (addresses of __device__ variables),
//                            .nv.global.init (function pointers, -rdc)
//   R_CUDA_G64 (4)           .nv.global.init (pointer initialisers: int* p = &x[3])
//   R_CUDA_ABS32_LO_32 (0x38), R_CUDA_ABS32_HI_32 (0x39)
//                            code (-rdc): variable addresses, return addresses
//   R_CUDA_ABS55_16_34 (0x4b) code (-rdc): CALL to a device function
// The other types below have unambiguous fields (a plain 32/64-bit word);
// everything else is rejected with CUDA_ERROR_INVALID_IMAGE.
#pragma once

#include <cstdint>

namespace nvl::loader::reloc {

enum Type : uint32_t {
    kNone = 0x00,
    k32 = 0x01,          // bits[0..31]   = S+A (must fit)
    k64 = 0x02,          // bits[0..63]   = S+A
    kG32 = 0x03,         // bits[0..31]   = generic address (= virtual address for global memory)
    kG64 = 0x04,         // bits[0..63]   = generic address
    // A function descriptor (the driver's to fill): in libcudadevrt's data,
    // the kernels its own device-side copies and fills start. nvlite's
    // descriptor is the function's address.
    kFuncDesc64 = 0x23,  // bits[0..63]   = descriptor of S, + A
    kAbs32_32 = 0x37,    // bits[32..63]  = S+A (must fit)
    kAbs32Lo32 = 0x38,   // bits[32..63]  = low 32 bits of S+A
    kAbs32Hi32 = 0x39,   // bits[32..63]  = high 32 bits of S+A
    // A function descriptor in an instruction's immediate: the address a
    // device-side launch names its kernel by (cudaGetParameterBufferV2's
    // first argument). nvlite's descriptor is the function's address, as for
    // R_CUDA_FUNC_DESC_64; the host maps it back (core/device_launch.cpp).
    kFuncDesc32_32 = 0x3d,   // bits[32..63] = descriptor of S, + A (must fit)
    kFuncDesc32Lo32 = 0x3e,  // bits[32..63] = its low 32 bits
    kFuncDesc32Hi32 = 0x3f,  // bits[32..63] = its high 32 bits
    // sm_80 code: hints that let a linker turn YIELD instructions off
    // (bits[0..8] opcode, bits[87..90] predicate); not patched.
    kYieldOpcode9_0 = 0x44,
    kYieldClearPred4_87 = 0x45,
    k32Lo = 0x46,        // bits[0..31]   = low 32 bits
    k32Hi = 0x47,        // bits[0..31]   = high 32 bits
    // Hopper CALL target: bits[16..23] = (S+A) >> 2 (8 bits), bits[34..80] =
    // (S+A) >> 10 (47 bits). The split was checked on the H200: libcuda's
    // patched CALL in a loaded module decodes to the callee's address, and the
    // relocation fields are the only bytes libcuda changes in the code.
    kAbs55_16_34 = 0x4b,
};

// Bytes from the relocation offset that the patch touches; 0 for a type the
// loader does not apply.
uint32_t patchWidth(uint32_t type);

// The implicit addend a SHT_REL entry keeps at its site. Only data words
// have one the loader can read; false for every other type.
bool implicitAddend(uint32_t type, const uint8_t* site, int64_t* out);

// Writes 'value' into the field(s) at 'site' (patchWidth bytes). false when
// the type is unknown or the value does not fit the field.
bool apply(uint32_t type, uint8_t* site, uint64_t value);

const char* name(uint32_t type);

}  // namespace nvl::loader::reloc
