#include "core/occupancy.h"

#include <algorithm>

#include "common/align.h"
#include "core/context.h"
#include "core/device.h"
#include "core/module.h"
#include "hw/compute.h"

namespace nvl::core {
namespace {

// What an SM holds, as the device reports it.
struct SmLimits {
    int maxThreads;
    int maxBlocks;
    int registers;
    int sharedBytes;     // largest carveout
    int reservedShared;  // per block
};

Result<SmLimits> limitsFor(const Device& d) {
    SmLimits l;
    NVL_ASSIGN_OR_RETURN(l.maxThreads, d.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR));
    NVL_ASSIGN_OR_RETURN(l.maxBlocks, d.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR));
    NVL_ASSIGN_OR_RETURN(l.registers, d.attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR));
    NVL_ASSIGN_OR_RETURN(l.sharedBytes, d.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
    NVL_ASSIGN_OR_RETURN(l.reservedShared, d.attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK));
    return l;
}

}  // namespace

Result<int> maxActiveBlocksPerSm(const Function& f, int blockSize, size_t dynamicSmemBytes, unsigned flags) {
    if (blockSize <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~static_cast<unsigned>(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) return CUDA_ERROR_INVALID_VALUE;
    // libcuda: what the registers allow counts, a __launch_bounds__ bound does not;
    // dynamic shared memory beyond the function's limit gives no block at all.
    if (static_cast<uint32_t>(blockSize) > f.maxThreadsByRegisters()) return 0;
    if (dynamicSmemBytes > f.settings.maxDynamicSharedBytes.load(std::memory_order_relaxed)) return 0;
    NVL_ASSIGN_OR_RETURN(const SmLimits sm, limitsFor(f.module().context().device()));
    const loader::Kernel& k = f.kernel();
    const int warps = (blockSize + 31) / 32;
    int blocks = std::min(sm.maxBlocks, sm.maxThreads / (warps * 32));
    blocks = std::min(blocks, static_cast<int>(f.warpsByRegisters(static_cast<uint32_t>(sm.registers))) / warps);
    // Shared memory, 128-byte granules, with the per-block reservation.
    const size_t smem = k.staticSharedBytes + dynamicSmemBytes;
    const size_t perBlock = alignUp(smem + sm.reservedShared, 128);
    if (perBlock > static_cast<size_t>(sm.sharedBytes)) return 0;
    blocks = std::min<int>(blocks, static_cast<int>(sm.sharedBytes / perBlock));
    return std::max(blocks, 0);
}

Result<size_t> availableDynamicSharedPerBlock(const Function& f, int numBlocks, int blockSize) {
    if (numBlocks <= 0) return CUDA_ERROR_INVALID_VALUE;
    // libcuda 580: more blocks than the threads and registers let an SM hold
    // is a value error.
    NVL_ASSIGN_OR_RETURN(int fit, maxActiveBlocksPerSm(f, blockSize, 0, 0));
    if (fit < numBlocks) return CUDA_ERROR_INVALID_VALUE;
    const Device& dev = f.module().context().device();
    NVL_ASSIGN_OR_RETURN(const SmLimits sm, limitsFor(dev));
    NVL_ASSIGN_OR_RETURN(int perBlock, dev.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
    NVL_ASSIGN_OR_RETURN(int optin, dev.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
    const size_t staticBytes = f.kernel().staticSharedBytes;
    const size_t maxDynamic = f.settings.maxDynamicSharedBytes.load(std::memory_order_relaxed);
    // A block's limit (with its reservation): the default, or the opt-in one
    // when the function asked for more. One block may have all of it; more
    // share the SM's largest carveout, in 128-byte granules (the values
    // libcuda 580 answers on an H200).
    const size_t limit =
        static_cast<size_t>(staticBytes + maxDynamic > static_cast<size_t>(perBlock) ? optin : perBlock) +
        static_cast<size_t>(sm.reservedShared);
    size_t avail = numBlocks == 1 ? limit : static_cast<size_t>(sm.sharedBytes) / static_cast<size_t>(numBlocks);
    avail = std::min(avail / 128 * 128, limit);
    avail = avail > staticBytes ? avail - staticBytes : 0;
    return std::min(avail, maxDynamic);
}

Result<PotentialBlockSize> maxPotentialBlockSize(const Function& f, CUoccupancyB2DSize smemForBlock,
                                                 size_t dynamicSmemBytes, int blockSizeLimit, unsigned flags) {
    const int smCount = static_cast<int>(f.module().context().device().info().smCount);
    // The block-size search does keep to the kernel's own bound (libcuda).
    int limit = static_cast<int>(f.maxThreadsPerBlock());
    if (blockSizeLimit > 0) limit = std::min(limit, blockSizeLimit);
    PotentialBlockSize best{0, 0};
    int bestOccupancy = -1;
    for (int size = limit; size > 0; size = size > 32 ? (size - 1) / 32 * 32 : size - 1) {
        const size_t smem = smemForBlock ? smemForBlock(size) : dynamicSmemBytes;
        NVL_ASSIGN_OR_RETURN(int blocks, maxActiveBlocksPerSm(f, size, smem, flags));
        const int occupancy = blocks * size;  // threads resident per SM
        if (blocks > 0 && occupancy > bestOccupancy) {
            bestOccupancy = occupancy;
            best = {blocks * smCount, size};
        }
    }
    return best;
}

}  // namespace nvl::core
