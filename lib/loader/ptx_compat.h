// Legacy PTX headers that libcuda still JITs but CUDA 13's compiler rejects.
#pragma once

#include <string>

namespace nvl::loader {

// Rewrites, in place, the module header of PTX written for early toolkits
// so that nvJitLink accepts it, as libcuda's own JIT does:
//  - ".target ..., map_f64_to_f32": the option only ever applied to GPUs
//    below sm_13 and ptxas rejects it for every GPU it builds for; dropped.
//  - ".version" below 3.1: nvJitLink compiles PTX separately ("-c"), which
//    needs PTX ISA 3.1 or later ("PTX .version 1.4 does not support .target
//    sm_20" and "'Compile only(-c)' requires PTX ISA .version 3.1 or later"
//    otherwise); raised to 3.1. ptxas builds the same code for these modules
//    (64-bit addressing is the default without .address_size).
// Only the header (directives and comments before the first statement) is
// read; only those bytes change. Returns true when something was changed.
bool normalizeLegacyPtxHeader(std::string& ptx);

}  // namespace nvl::loader
