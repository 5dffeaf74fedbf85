// Compute-engine work: kernel launches (constant bank 0 + QMD in the
// channel's data ring, then SEND_PCAS), local-memory configuration and cache
// invalidation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hw/channel.h"
#include "hw/push_buffer.h"
#include "hw/qmd.h"

namespace nvl::hw {

struct ConstantBankBinding {
    uint32_t index;
    uint64_t va;
    uint32_t bytes;
};

// What the launch path needs to know about a kernel, fixed once its module
// is placed in GPU memory.
struct KernelDescriptor {
    uint64_t programVa = 0;
    uint32_t programBytes = 0;
    uint32_t registers = 0;
    uint32_t barriers = 1;
    uint32_t sharedWindowBytes = 0;  // static shared memory window, the SM's reserved part included
    // Where parameters start in constant bank 0: at least driverAreaBytes()
    // (acceptsKernel() checks it before a descriptor is used).
    uint32_t paramBase = 0;
    uint32_t cbuf0Bytes = 0;  // constant bank 0: driver area and parameters
    std::vector<ConstantBankBinding> banks;  // module constant banks (not 0)
    // The generic address of the program's __constant__ data (constant bank
    // 3), what cvta.const adds offsets to; 0 when the module has none.
    uint64_t userConstantsVa = 0;
};

struct LaunchGeometry {
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t dynamicSharedBytes;
    // A thread block cluster shape given at launch (CTAs per cluster in each
    // dimension; zeros: none, each block its own cluster of one).
    uint32_t cluster[3] = {0, 0, 0};
    // Cooperative launch: the grid gets a workspace for cooperative groups'
    // grid-wide barrier.
    bool cooperative = false;
    uint64_t gridId = 0;  // %gridid
    // How many of its blocks an SM holds at once by the occupancy calculator
    // (threads, registers, barriers, shared memory): the shared-memory
    // carveout the launch asks for holds that many (a cooperative grid
    // sized by cuOccupancyMaxActiveBlocksPerMultiprocessor must be resident
    // all at once; the smallest carveout for one block held 8 blocks of 1 KiB
    // where 16 were promised, and the grid barrier waited forever).
    uint32_t blocksPerSm = 1;
};

// What constant bank 0 and the QMD need from the context and the GPU.
struct ComputeState {
    uint64_t sharedWindow = 0;
    uint64_t localWindow = 0;
    uint32_t localBytesPerThread = 0;  // what SET_SHADER_LOCAL_MEMORY provides
    uint32_t smVersion = 0x90;         // SASS version, e.g. 0x90
    uint32_t maxSmSharedKiB = 228;     // largest shared-memory carveout of the SM
    uint32_t smCount = 0;              // %nsmid
    const QmdLayout* qmd = &kQmdV04;   // the compute class's QMD version
};

class Launch {
public:
    // Bytes of constant bank 0 before the parameters that belong to the
    // launch (block and grid sizes, memory windows, ...): 0x210 on sm_90,
    // 0x160 on sm_7x/sm_8x, where compilers place the first parameter.
    static uint32_t driverAreaBytes(const ComputeState& s);
    // Constant banks are at most 64 KiB.
    static constexpr uint32_t kMaxConstantBankBytes = 64 * 1024;
    // Whether a launch of 'k' can be written: its parameters start after the
    // driver area and its constant bank 0 fits a bank. A kernel image that
    // says otherwise is corrupt.
    static bool acceptsKernel(const KernelDescriptor& k, const ComputeState& s);
    // The QMD fields that depend on the kernel only.
    static Qmd makeTemplate(const KernelDescriptor& k, const ComputeState& s);
    // Bytes of data-ring space one launch of 'k' takes (with geometry 'g').
    static size_t dataBytes(const KernelDescriptor& k, const ComputeState& s);
    static size_t dataBytes(const KernelDescriptor& k, const ComputeState& s, const LaunchGeometry& g);
    // Writes constant bank 0's driver area and the QMD into 'slot'; the
    // caller writes the parameters at 'params'.
    struct Written {
        uint64_t qmdVa;
        uint8_t* params;  // slot.cpu + k.paramBase
    };
    static Written write(const Channel::DataSlot& slot, const Qmd& tmpl, const KernelDescriptor& k,
                         const LaunchGeometry& g, const ComputeState& s);
    // The methods that start it.
    static constexpr size_t kPushDwords = 2 * PushWriter::dwordsFor(1);
    static void push(PushWriter& w, uint64_t qmdVa);
    // Shared memory a block gets (the static window + dynamic).
    static uint32_t sharedBytes(const KernelDescriptor& k, uint32_t dynamicSharedBytes);
};

// Methods that make the compute engine see new code, constants and data.
constexpr size_t kInvalidateCachesDwords = PushWriter::dwordsFor(1);
void invalidateShaderCaches(PushWriter& w);

// Points the compute engine at a local-memory (stack) buffer.
constexpr size_t kLocalMemoryDwords = PushWriter::dwordsFor(2) + PushWriter::dwordsFor(3);
void setLocalMemory(PushWriter& w, uint64_t va, uint64_t bytesPerTpc);

// Local memory a GPU needs so that every thread can have 'bytesPerThread':
// the per-TPC size SET_SHADER_LOCAL_MEMORY_NON_THROTTLED takes, and the total.
struct LocalMemorySize {
    uint64_t bytesPerTpc;
    uint64_t totalBytes;
};
LocalMemorySize localMemorySize(uint32_t bytesPerThread, uint32_t maxWarpsPerSm, uint32_t smPerTpc,
                                uint32_t maxTpcPerGpc, uint32_t gpcCount);

}  // namespace nvl::hw
