// The simulated GPU's stand-in for nvlite's built-in kernels (sim_builtin.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "kdrv/sim/sim_control.h"
#include "kdrv/sim/sim_gpu.h"

namespace nvl::kdrv::sim {

enum class BuiltinRun { NotBuiltin, Done, Faulted };

// Does the work of a launch of a built-in kernel, recognised by its
// parameter block in constant bank 0, in the launching channel's address
// space 'va'; NotBuiltin for any other kernel.
// Faulted: an address was not mapped (*faultVa), or the launch is not one the
// kernel can run (its code not mapped, a block of another size, a thread
// split the kernel's indexing cannot take, an empty box). Lock held.
BuiltinRun runBuiltinKernel(GpuVaSpace& va, const LaunchRecord& launch, uint64_t* faultVa);

}  // namespace nvl::kdrv::sim
