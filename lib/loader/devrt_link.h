// Linking nvlite's device runtime (devrt/devrt.cu) into a module.
//
// A cubin that calls printf, assert, malloc or free has undefined symbols
// (vprintf, __assertfail, malloc, free) that the driver resolves at load
// time. How nvcc 13 / NVRTC 13 / nvJitLink output refers to them (sm_90,
// seen with readelf on their output):
//   - whole-program cubins: R_CUDA_64 in .nv.constant4 against the undefined
//     symbol; the kernel loads the address from c[0x4][...] and calls it
//     (an ABI call: arguments from R4, return address in R20/R21);
//   - -rdc code linked by nvlink/nvJitLink: R_CUDA_ABS55_16_34 on the CALL
//     instruction itself (and R_CUDA_ABS32_LO/HI_32 for its return address);
//   - the kernel's .nv.info lists the callees in EIATTR_EXTERNS and the call
//     sites in EIATTR_SYSCALL_OFFSETS (nothing there needs patching: the
//     call goes through the relocated address), .nv.callgraph has the edges;
//     its EIATTR_REGCOUNT and MIN_STACK_SIZE count the kernel alone.
// Either way the symbol needs an address inside the module. link() appends
// the runtime's code and its data after the image's stored bytes (one copy
// per module, like a static library), resolves those relocations against
// it, and makes every kernel that calls it cover the callee: registers =
// max(kernel's, callee's) and the callee's stack frame on top of the
// kernel's (nvlink does the same for the functions it links; the kernel's
// EIATTR_EXTERNS and .nv.callgraph say which it calls).
//
// The runtime's cubins are relocatable (ET_REL) and ours: the library is
// parsed once per architecture and must keep to devrt.cu's rules (no
// constant banks, no shared memory, no calls between its functions, only
// relocations against its own data).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "loader/bytes.h"
#include "loader/elf_file.h"
#include "loader/image.h"

namespace nvl::loader::devrt {

struct Library {
    struct Function {
        std::string cudaName;  // the symbol a cubin calls (vprintf, ...)
        uint64_t offset = 0;   // entry point in 'block'
        uint32_t registers = 0;
        uint32_t stackBytes = 0;
        uint8_t uses = 0;      // DevrtUse bits
    };
    struct Fixup {
        uint64_t offset;       // in 'block'
        uint32_t type;         // R_CUDA_*
        uint64_t target;       // in 'block'
        int64_t addend;
    };
    std::vector<uint8_t> block;  // code, data, then kCodeSlack of zeros
    std::vector<Function> functions;
    std::vector<Fixup> relocations;
    uint64_t stateSlot = 0;      // the 8-byte State pointer (nvl_devrt_state)

    const Function* find(std::string_view cudaName) const;
};

// Parses a relocatable runtime cubin. CUDA_ERROR_INVALID_IMAGE when it is
// not one or breaks the rules above.
Result<Library> parseLibrary(Bytes cubin);

// The embedded runtime for code of sm_<sm>, parsed on first use.
// CUDA_ERROR_NOT_SUPPORTED when nvlite has none for that architecture.
Result<const Library*> libraryFor(uint32_t sm);

// Resolves image.externs (collected by cubin::parse from 'elf') against the
// runtime for image.smVersion and places it in the image (see above).
// CUDA_ERROR_INVALID_IMAGE for a symbol the runtime does not define.
Status link(const ElfFile& elf, Image& image);
// The same against a given library (tests).
Status linkWith(const Library& lib, const ElfFile& elf, Image& image);

}  // namespace nvl::loader::devrt
