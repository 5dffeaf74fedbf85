// NVLITE_TRACE: 1 prints every API call with its arguments, result and
// duration; 2 also prints every driver call (RM/UVM) with its status name.
#pragma once

#include <cstdarg>

namespace nvl::trace {

int level();  // read once from NVLITE_TRACE
inline bool api() { return level() >= 1; }
inline bool driver() { return level() >= 2; }

// printf-style line to stderr, prefixed with "nvlite: ".
void print(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace nvl::trace
