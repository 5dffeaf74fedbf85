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
    // Unique to this description in the process (the core numbers them), so
    // a launch image built for it can be reused (Launch::Image); 0: never.
    uint64_t serial = 0;
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
    // A kernel that launches kernels (core/device_launch.h): its launch
    // queue's address and the grid's nesting depth, in %envreg3..5.
    uint64_t launchQueue = 0;
    uint32_t launchDepth = 0;
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
    // Writes constant bank 0 (the driver area, then the parameters
    // 'params(out)' writes at 'out': the block's k.cbuf0Bytes - k.paramBase
    // bytes, every one) and the QMD into 'slot'; returns the QMD's address.
    // The slot is write-combined memory: both are built in a local staging
    // copy first (the parameters too, unless constant bank 0 is larger than
    // it) and go to the slot in whole 64-byte lines, in address order, each
    // byte once.
    // 'img' holds that copy; it is kept between launches (one per thread):
    // a launch of the kernel (KernelDescriptor::serial), geometry and local
    // memory it was last built for only patches the fields every launch
    // changes (%gridid, the addresses in the slot, the release payload).
    class Image {
        friend class Launch;
        // What the image was built for.
        struct Key {
            uint64_t serial = 0;  // 0: nothing reusable
            uint32_t grid[3] = {}, block[3] = {}, cluster[3] = {};
            uint32_t dynamicSharedBytes = 0, blocksPerSm = 0, localBytesPerThread = 0;
            uint64_t launchQueue = 0;
            uint32_t launchDepth = 0;
            bool cooperative = false;
            bool operator==(const Key&) const = default;
        };
        alignas(64) uint8_t bank[4096];
        alignas(64) Qmd qmd;
        Key key;
    };
    template <class Params>
    static uint64_t write(Image& img, const Channel::DataSlot& slot, const Qmd& tmpl, const KernelDescriptor& k,
                          const LaunchGeometry& g, const ComputeState& s, Params&& params) {
        params(stage(img, slot, tmpl, k, g, s));
        return commit(img, slot, k, g, s);
    }
    // The methods that start it.
    static constexpr size_t kPushDwords = 2 * PushWriter::dwordsFor(1);
    static void push(PushWriter& w, uint64_t qmdVa);
    // Shared memory a block gets (the static window + dynamic).
    static uint32_t sharedBytes(const KernelDescriptor& k, uint32_t dynamicSharedBytes);

private:
    // Constant bank 0 of up to this many bytes is staged whole (the
    // parameters of almost every kernel: up to 3.5 KiB on sm_90).
    static constexpr uint32_t kStagedBankBytes = sizeof(Image::bank);
    // Builds (or patches) the driver area and the QMD in 'img'; returns
    // where the parameters go (in 'img', else in the slot).
    static uint8_t* stage(Image& img, const Channel::DataSlot& slot, const Qmd& tmpl, const KernelDescriptor& k,
                          const LaunchGeometry& g, const ComputeState& s);
    // What stays the same between launches of one kernel and geometry.
    static void build(Image& img, const Qmd& tmpl, const KernelDescriptor& k, const LaunchGeometry& g,
                      const ComputeState& s);
    // Copies what 'img' holds to the slot.
    static uint64_t commit(const Image& img, const Channel::DataSlot& slot, const KernelDescriptor& k,
                           const LaunchGeometry& g, const ComputeState& s);
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
