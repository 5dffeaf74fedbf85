// The occupancy calculator: how many blocks of a kernel fit on one SM, from
// its registers, shared memory and block size and the SM's limits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class Function;

// cuOccupancyMaxActiveBlocksPerMultiprocessor(WithFlags).
Result<int> maxActiveBlocksPerSm(const Function& f, int blockSize, size_t dynamicSmemBytes, unsigned flags);

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

}  // namespace nvl::core
