#include "core/occupancy.h"

#include <algorithm>

#include "common/align.h"
#include "core/context.h"
#include "core/device.h"
#include "core/module.h"
#include "hw/compute.h"
#include "hw/gpu_info.h"

namespace nvl::core {
namespace {

Result<SmLimits> limitsFor(const Device& d) {
    SmLimits l;
    NVL_ASSIGN_OR_RETURN(l.maxThreads, d.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR));
    NVL_ASSIGN_OR_RETURN(l.maxBlocks, d.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR));
    NVL_ASSIGN_OR_RETURN(l.registers, d.attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR));
    NVL_ASSIGN_OR_RETURN(l.sharedBytes, d.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
    NVL_ASSIGN_OR_RETURN(l.reservedShared, d.attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK));
    NVL_ASSIGN_OR_RETURN(l.major, d.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
    return l;
}

}  // namespace

int blocksPerSm(const SmLimits& sm, const BlockUse& b) {
    constexpr int kWarpSize = 32, kSchedulers = 4, kRegisterUnit = 256, kSharedUnit = 128, kMaxRegisters = 256;
    constexpr int kRegistersPerBlock = 65536;  // CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK
    if (b.threads <= 0 || b.threads > 1024 || b.registers > kMaxRegisters) return 0;
    const int warps = (b.threads + kWarpSize - 1) / kWarpSize;
    int blocks = std::min(sm.maxBlocks, sm.maxThreads / kWarpSize / warps);
    // Registers go to warps in 256-register units, each scheduler its quarter
    // of the file; a block's warps count in fours against the block limit.
    const int perWarp = static_cast<int>(alignUp(std::max<uint32_t>(b.registers, 1) * kWarpSize, kRegisterUnit));
    const int schedulerWarps = (kSchedulers - 1 + warps) / kSchedulers * kSchedulers;
    if (perWarp * schedulerWarps > kRegistersPerBlock) return 0;
    blocks = std::min(blocks, sm.registers / kSchedulers / perWarp * kSchedulers / warps);
    // Named barriers (sm_90 on): an SM has two for each block it may hold,
    // and a block takes as many as the kernel uses (at least one, the QMD's
    // BARRIER_COUNT).
    if (sm.major >= 9) blocks = std::min(blocks, 2 * sm.maxBlocks / static_cast<int>(std::max<uint32_t>(b.barriers, 1)));
    // Shared memory, 128-byte units, with the per-block reservation.
    const size_t perBlock = alignUp(b.sharedBytes + static_cast<size_t>(sm.reservedShared), kSharedUnit);
    if (perBlock > static_cast<size_t>(sm.sharedBytes)) return 0;
    blocks = std::min<int>(blocks, static_cast<int>(static_cast<size_t>(sm.sharedBytes) / perBlock));
    return std::max(blocks, 0);
}

namespace {

// With the function's dynamic shared-memory limit as read by the caller.
Result<int> activeBlocksUnderLimit(const Function& f, int blockSize, size_t dynamicSmemBytes, unsigned flags,
                                   uint32_t maxDynamicShared) {
    if (blockSize <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~static_cast<unsigned>(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) return CUDA_ERROR_INVALID_VALUE;
    // libcuda: what the registers allow counts, a __launch_bounds__ bound does not;
    // dynamic shared memory beyond the function's limit gives no block at all.
    if (static_cast<uint32_t>(blockSize) > f.maxThreadsByRegisters()) return 0;
    if (dynamicSmemBytes > maxDynamicShared) return 0;
    NVL_ASSIGN_OR_RETURN(const SmLimits sm, limitsFor(f.module().context().device()));
    const loader::Kernel& k = f.kernel();
    return blocksPerSm(sm, {blockSize, k.registers, k.numBarriers, k.staticSharedBytes + dynamicSmemBytes});
}

}  // namespace

Result<int> maxActiveBlocksPerSm(const Function& f, int blockSize, size_t dynamicSmemBytes, unsigned flags) {
    return activeBlocksUnderLimit(f, blockSize, dynamicSmemBytes, flags,
                                  f.settings.maxDynamicSharedBytes.load(std::memory_order_relaxed));
}

Result<int> launchBlocksPerSm(Function& f, int blockSize, size_t dynamicSmemBytes) {
    // The memo: 1 (valid) | block size (11 bits) | dynamic shared (18) |
    // the function's dynamic shared limit (18) | the answer (16). Inputs
    // that do not fit are not memoised.
    constexpr uint64_t kSharedBits = 18, kAnswerBits = 16;
    const uint32_t limit = f.settings.maxDynamicSharedBytes.load(std::memory_order_relaxed);
    const bool memoisable = blockSize > 0 && blockSize <= 1024 && dynamicSmemBytes < (uint64_t{1} << kSharedBits) &&
                            limit < (uint64_t{1} << kSharedBits);
    const uint64_t key = (uint64_t{1} << 63) | (static_cast<uint64_t>(blockSize) << (2 * kSharedBits + kAnswerBits)) |
                         (static_cast<uint64_t>(dynamicSmemBytes) << (kSharedBits + kAnswerBits)) |
                         (static_cast<uint64_t>(limit) << kAnswerBits);
    constexpr uint64_t kAnswerMask = (uint64_t{1} << kAnswerBits) - 1;
    if (memoisable) {
        const uint64_t memo = f.launchOccupancy.load(std::memory_order_relaxed);
        if ((memo & ~kAnswerMask) == key) return static_cast<int>(memo & kAnswerMask);
    }
    // The limit read above is the one the answer is filed under (a change
    // meanwhile gives a key no later launch with the new limit matches).
    NVL_ASSIGN_OR_RETURN(const int blocks, activeBlocksUnderLimit(f, blockSize, dynamicSmemBytes, 0, limit));
    if (memoisable && blocks >= 0 && static_cast<uint64_t>(blocks) <= kAnswerMask)
        f.launchOccupancy.store(key | static_cast<uint64_t>(blocks), std::memory_order_relaxed);
    return blocks;
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

// ------------------------------------------------------------------ clusters

namespace {

// Eight blocks per cluster are portable; sixteen when the kernel allows more
// (as for launches, lib/core/launch.cpp).
int clusterLimit(const Function& f) {
    return f.settings.nonPortableClusterSizeAllowed.load(std::memory_order_relaxed) ? 16 : 8;
}

// The shape the query gives, else the one the kernel requires (compiled in,
// or set at run time); a given shape must match a required one.
Result<uint64_t> clusterBlocks(const Function& f, const ClusterQuery& q) {
    const loader::Kernel& k = f.kernel();
    uint32_t runtime[3];
    for (int i = 0; i < 3; ++i) runtime[i] = f.settings.requiredCluster[i].load(std::memory_order_relaxed);
    const uint32_t* required = k.clusterDims[0]                          ? k.clusterDims
                               : (runtime[0] || runtime[1] || runtime[2]) ? runtime
                                                                          : nullptr;
    const bool given = q.cluster[0] || q.cluster[1] || q.cluster[2];
    if (!given && !required) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    if (given && required)
        for (int i = 0; i < 3; ++i)
            if (required[i] && q.cluster[i] != required[i]) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    const uint32_t* c = given ? q.cluster : required;
    uint64_t blocks = 1;
    for (int i = 0; i < 3; ++i) {
        if (c[i] == 0) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
        blocks *= c[i];
    }
    if (blocks > static_cast<uint64_t>(clusterLimit(f))) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    return blocks;
}

Status checkClusters(const Device& d) {
    NVL_ASSIGN_OR_RETURN(int clusters, d.attribute(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH));
    return clusters ? kOk : Status(CUDA_ERROR_NOT_SUPPORTED);
}

}  // namespace

// A cluster runs inside one GPC. The SMs are taken as spread evenly over the
// GPCs (RM gives the counts, not each GPC's), and each holds as many of the
// kernel's blocks as the occupancy calculator allows.
Result<int> maxActiveClusters(const Function& f, const ClusterQuery& q) {
    const Device& d = f.module().context().device();
    NVL_TRY(checkClusters(d));
    NVL_ASSIGN_OR_RETURN(const uint64_t size, clusterBlocks(f, q));
    NVL_ASSIGN_OR_RETURN(const int perSm, maxActiveBlocksPerSm(f, q.blockSize, q.dynamicSmemBytes, 0));
    const hw::GpuInfo& gi = d.info();
    const uint64_t gpcs = std::max<uint32_t>(gi.gpcCount, 1);
    uint64_t clusters = 0;
    for (uint64_t g = 0; g < gpcs; ++g) {
        const uint64_t sms = gi.smCount / gpcs + (g < gi.smCount % gpcs ? 1 : 0);
        clusters += sms * static_cast<uint64_t>(perSm) / size;
    }
    return static_cast<int>(std::min<uint64_t>(clusters, INT32_MAX));
}

Result<int> maxPotentialClusterSize(const Function& f, const ClusterQuery& q) {
    const Device& d = f.module().context().device();
    NVL_TRY(checkClusters(d));
    // The configuration's shape is not looked at. A shape compiled into the
    // kernel (__cluster_dims__) is the only one it may have; one set with
    // REQUIRED_CLUSTER_* does not count (libcuda 580 answered 16 for a kernel
    // allowed non-portable sizes after REQUIRED_CLUSTER_WIDTH 2 was set).
    const loader::Kernel& k = f.kernel();
    if (k.clusterDims[0]) return static_cast<int>(std::max(k.clusterDims[0], 1u) * std::max(k.clusterDims[1], 1u) * std::max(k.clusterDims[2], 1u));
    NVL_ASSIGN_OR_RETURN(const int perSm, maxActiveBlocksPerSm(f, q.blockSize, q.dynamicSmemBytes, 0));
    const hw::GpuInfo& gi = d.info();
    const uint64_t smallestGpc = gi.smCount / std::max<uint32_t>(gi.gpcCount, 1);
    return static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(perSm) * smallestGpc, clusterLimit(f)));
}

}  // namespace nvl::core
