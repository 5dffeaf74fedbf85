// The occupancy calculator: how many blocks of a kernel fit on one SM, from
// its registers, shared memory and block size and the SM's limits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class Function;

// What an SM holds, as the device reports it.
struct SmLimits {
    int maxThreads;
    int maxBlocks;
    int registers;
    int sharedBytes;     // largest carveout
    int reservedShared;  // per block
    int major;           // compute capability
};

// What one block of a kernel takes.
struct BlockUse {
    int threads;
    uint32_t registers;    // per thread
    uint32_t barriers;     // named barriers (EIATTR_NUM_BARRIERS; 0 counts as 1)
    size_t sharedBytes;    // static + dynamic, without the SM's reservation
};

// How many such blocks one SM holds at once, by the rules of the toolkit's
// occupancy calculator (cuda_occupancy.h: warps, registers in 256-register
// units per warp and four warp schedulers, shared memory in 128-byte units
// with the per-block reservation, block barriers from sm_90 on); 0 when one
// block does not fit.
int blocksPerSm(const SmLimits& sm, const BlockUse& b);

// cuOccupancyMaxActiveBlocksPerMultiprocessor(WithFlags).
Result<int> maxActiveBlocksPerSm(const Function& f, int blockSize, size_t dynamicSmemBytes, unsigned flags);

// The same for a launch (flags 0), answered from the function's memo of
// its last (block size, dynamic shared memory, shared-memory limit) when
// they are the same: launches repeat their geometry.
Result<int> launchBlocksPerSm(Function& f, int blockSize, size_t dynamicSmemBytes);

struct PotentialBlockSize {
    int minGridSize;
    int blockSize;
};
// cuOccupancyMaxPotentialBlockSize(WithFlags).
Result<PotentialBlockSize> maxPotentialBlockSize(const Function& f, CUoccupancyB2DSize smemForBlock,
                                                 size_t dynamicSmemBytes, int blockSizeLimit, unsigned flags);

// cuOccupancyAvailableDynamicSMemPerBlock: the dynamic shared memory each of
// 'numBlocks' blocks of 'blockSize' threads may have so that they fit on one SM.
Result<size_t> availableDynamicSharedPerBlock(const Function& f, int numBlocks, int blockSize);

// Thread block clusters (sm_90): 'cluster' is the shape asked for (zeros:
// none, the kernel's own is taken), as in cuOccupancyMaxActiveClusters's and
// cuOccupancyMaxPotentialClusterSize's launch configuration.
struct ClusterQuery {
    int blockSize = 0;
    size_t dynamicSmemBytes = 0;
    uint32_t cluster[3] = {0, 0, 0};
};
// How many clusters of the shape fit on the device at once.
Result<int> maxActiveClusters(const Function& f, const ClusterQuery& q);
// The largest cluster (in blocks) the kernel may be launched with.
Result<int> maxPotentialClusterSize(const Function& f, const ClusterQuery& q);

}  // namespace nvl::core
