// The exported entry points, as cuGetProcAddress searches them: generated
// from lib/api/entry_points.txt (tools/gen_entry_points.py).
#pragma once

#include <cstddef>
#include <span>

namespace nvl::api {

struct EntryPoint {
    using Fn = void (*)();
    const char* function;  // the name programs ask for: cuMemAlloc
    const char* symbol;    // the exported variant: cuMemAlloc_v2
    int version;           // the CUDA version it appeared in
    bool perThread;        // a _ptds/_ptsz form
    Fn address;
};

// Sorted by function name (strcmp), default forms before per-thread ones,
// oldest first.
extern const EntryPoint kEntryPoints[];
extern const size_t kEntryPointCount;

inline std::span<const EntryPoint> entryPoints() { return {kEntryPoints, kEntryPointCount}; }

}  // namespace nvl::api
