// Legacy PTX headers that libcuda still JITs but CUDA 13's compiler rejects.
#pragma once

#include <string>

namespace nvl::loader {

// Rewrites, in place, the module header of PTX written for early toolkits
// (CUDA 2.x-4.x) so that nvJitLink accepts it, as libcuda's own JIT does:
//  - ".target ..., map_f64_to_f32": the option only ever applied to GPUs
//    below sm_13 and ptxas rejects it for every GPU it builds for; dropped.
//  - ".version 1.x" with a ".target sm_20" or newer: PTX 1.x predates Fermi
//    and ptxas refuses the pair; raised to 2.0, the first ISA with sm_20
//    (ptxas builds the same code: 64-bit addressing is the default then).
// Only the header (directives and comments before the first statement) is
// read; only those bytes change. Returns true when something was changed.
bool normalizeLegacyPtxHeader(std::string& ptx);

}  // namespace nvl::loader
