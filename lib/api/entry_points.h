// The exported entry points, as cuGetProcAddress searches them: generated
// from lib/api/entry_points.txt (tools/gen_entry_points.py).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace nvl::api {

// 24 bytes and two relocations an entry: the function's name is not a
// pointer of its own but the start of the symbol's.
struct EntryPoint {
    using Fn = void (*)();
    const char* symbol;      // the exported variant: cuMemAlloc_v2
    Fn address;
    int version;             // the CUDA version it appeared in
    uint8_t functionLength;  // the name programs ask for is the symbol's start: cuMemAlloc
    bool perThread;          // a _ptds/_ptsz form

    std::string_view function() const { return {symbol, functionLength}; }
};

// Sorted by function name (strcmp), default forms before per-thread ones,
// oldest first.
extern const EntryPoint kEntryPoints[];
extern const size_t kEntryPointCount;

inline std::span<const EntryPoint> entryPoints() { return {kEntryPoints, kEntryPointCount}; }

}  // namespace nvl::api
