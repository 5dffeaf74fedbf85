// The code loader: turns what a program hands to cuModuleLoad*, cuModuleLoad-
// FatBinary and cuLink* into an Image the core layer places in GPU memory.
//
// The loader never touches the GPU. An Image is position independent until
// relocate() patches it for the GPU address it will be copied to.
//
// Layout of an Image (all offsets relative to the base the core chooses,
// which must be a multiple of Image::alignment):
//
//   [.text.* sections, 128-byte aligned]      code of kernels and device functions
//   [constant banks, 256-byte aligned]        .nv.constantN[.<kernel>] (bank 0 templates too)
//   [initialised data, 256-byte aligned]      .nv.global.init
//   [4 KiB of zeros]                          slack: instruction prefetch past the code
//   [device runtime, 256-byte aligned]        only for cubins calling vprintf, malloc, ...:
//                                             its code, its State slot, 4 KiB slack (devrt_link.h)
//   --- end of Image::bytes ---
//   [zero-filled data, zeroFillBytes]         .nv.global (__device__ without initialiser)
//
// The GPU allocation is allocationBytes() long; its tail past bytes.size()
// must read as zeros (it is not stored, so a 1 GiB __device__ array costs no
// host memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "loader/jit_options.h"

namespace nvl::loader {

// EIATTR_KPARAM_INFO / _V2: offset is relative to the start of the parameters.
struct KernelParam {
    uint32_t ordinal, offset, size;
};

// A constant bank the kernel uses, stored in the image: its QMD constant
// buffer is [base + imageOffset, +size).
// The bank of the program's __constant__ data (.nv.constant3); the others
// are the compiler's.
inline constexpr uint32_t kUserConstantBank = 3;

struct ConstantBank {
    uint32_t bank;
    uint64_t imageOffset;
    uint64_t size;
};

struct Kernel {
    std::string name;
    uint64_t textOffset = 0, textSize = 0;  // entry point and size of .text.<name>
    uint32_t registers = 0;                 // EIATTR_REGCOUNT (callees included), else sh_info >> 24
    // Shared memory: staticSharedBytes is what the program declared (what
    // libcuda reports as SHARED_SIZE_BYTES); sharedWindowBytes is the size of
    // the block's window: the 1 KiB the SM reserves at its start
    // (reservedSharedBytes) and the static part after it. The QMD needs
    // sharedWindowBytes + dynamic shared memory.
    uint32_t staticSharedBytes = 0;
    uint32_t sharedWindowBytes = 0;
    uint32_t reservedSharedBytes = 0;
    // Per-thread local memory: EIATTR_MIN_STACK_SIZE, the kernel's frame plus
    // its deepest call chain (what libcuda reports as LOCAL_SIZE_BYTES). It is
    // 0 for recursive call graphs: the context's CU_LIMIT_STACK_SIZE must
    // cover those, so allocate max(localBytesPerThread, stack limit).
    uint32_t localBytesPerThread = 0;
    uint32_t frameBytes = 0;                // EIATTR_FRAME_SIZE of the kernel alone
    uint32_t maxThreadsPerBlock = 0;        // product of EIATTR_MAX_THREADS (__launch_bounds__), 0 if none
    uint32_t maxThreads[3] = {0, 0, 0};     // EIATTR_MAX_THREADS
    uint32_t requiredBlock[3] = {0, 0, 0};  // EIATTR_REQNTID (.reqntid), zeros if none
    uint32_t clusterDims[3] = {0, 0, 0};    // EIATTR_CTA_PER_CLUSTER (__cluster_dims__), zeros if none
    bool explicitCluster = false;           // EIATTR_EXPLICIT_CLUSTER: launch must give a cluster
    uint32_t numBarriers = 0;               // EIATTR_NUM_BARRIERS (named barriers used; 0 if absent)
    // Parameters live in constant bank 0 at [paramBase, paramBase + paramBytes)
    // (EIATTR_PARAM_CBANK; 0x210 on sm_90). Below paramBase is the driver area.
    uint32_t paramBase = 0, paramBytes = 0;
    std::vector<KernelParam> params;        // in ordinal order, ordinals 0..n-1
    // Bank 0 is built per launch: constBank0Bytes long (driver area + params),
    // starting from the template at constBank0ImageOffset (all zeros in
    // nvcc/NVRTC output).
    uint32_t constBank0Bytes = 0;
    uint64_t constBank0ImageOffset = 0;
    std::vector<ConstantBank> banks;        // every bank other than 0 (1..7), sorted by bank number
    // What of nvlite's device runtime the kernel calls (DevrtUse bits, set
    // by devrt::link): the context must provide the printf FIFO / the heap.
    uint8_t devrtUses = 0;
};

enum DevrtUse : uint8_t { kDevrtFifo = 1, kDevrtHeap = 2, kDevrtLaunch = 4 };

// A __device__ or __constant__ variable (cuModuleGetGlobal). __constant__
// variables live inside a constant bank placed in the image: writing them is
// writing image memory, no separate upload.
struct Global {
    std::string name;
    uint64_t imageOffset;
    uint64_t size;
    bool managed = false;  // __managed__ (cuLibraryGetManaged)
};

struct Relocation {
    uint64_t imageOffset;        // where the patch goes (inside bytes)
    uint32_t type;               // R_CUDA_* (relocation.h)
    uint64_t targetImageOffset;  // the symbol
    int64_t addend;
};

// A relocation against a symbol the cubin does not define (vprintf, malloc,
// ...): resolved against the device runtime by devrt::link.
struct ExternRelocation {
    uint64_t imageOffset;
    uint32_t type;
    std::string symbol;
    int64_t addend;
};

struct Image {
    std::vector<uint8_t> bytes;
    uint64_t zeroFillBytes = 0;  // zero-initialised data after bytes (see above)
    uint64_t alignment = 256;    // the base address must be a multiple of this
    uint32_t smVersion = 0;      // architecture of the machine code, e.g. 90
    // CU_FUNC_ATTRIBUTE_PTX_VERSION / BINARY_VERSION as libcuda reports them:
    // the virtual architecture the code was compiled from (.note.nv.cuinfo:
    // 90 for compute_90, 80 for compute_80 code built for sm_90) and the
    // machine architecture (90).
    uint32_t ptxVersion = 0, binaryVersion = 0;
    std::vector<Kernel> kernels;
    std::vector<Global> globals;
    std::vector<Relocation> relocations;
    std::vector<ExternRelocation> externs;  // empty once devrt::link ran
    // With the device runtime linked in: where the 8-byte address of the
    // context's devrt State goes (the core writes it before placing the image).
    static constexpr uint64_t kNoDevrt = UINT64_MAX;
    uint64_t devrtStateOffset = kNoDevrt;

    uint64_t allocationBytes() const { return bytes.size() + zeroFillBytes; }
    const Kernel* findKernel(std::string_view name) const;
    const Global* findGlobal(std::string_view name) const;
};

// 'size' value for a bare pointer (cuModuleLoadData, cuModuleLoadFatBinary).
inline constexpr size_t kUnknownSize = SIZE_MAX;

// Detects the input (ELF cubin, fatbin container, the __fatBinC_Wrapper_t
// struct cuModuleLoadFatBinary gets, PTX text) and produces the image for a
// GPU of compute capability smMajor.smMinor: SASS for that GPU if present,
// else the best PTX, JIT-compiled through nvJitLink. With kUnknownSize the
// extent is read from the headers (or the NUL ending PTX), as libcuda does.
// Writes jit's logs (empty when nothing was compiled).
Result<Image> load(const void* data, size_t size, uint32_t smMajor, uint32_t smMinor, JitOptions& jit);
// cuModuleLoad: the file may be a cubin, a fatbin or PTX.
// CUDA_ERROR_FILE_NOT_FOUND when it cannot be read.
Result<Image> loadFile(const char* path, uint32_t smMajor, uint32_t smMinor, JitOptions& jit);
// Patches bytes for the image placed at 'base' (every relocation; an unknown
// type or a patch out of range is CUDA_ERROR_INVALID_IMAGE). Idempotent: each
// patch overwrites its field, so an image can be relocated again for another base.
Status relocate(Image& image, uint64_t base);

}  // namespace nvl::loader
