// Checked builds.
//
// NVL_ASSERT(condition) states an invariant of nvlite's own code: a push
// staying inside its budget, a value fitting its hardware field, a Result
// read only when it holds a value. Checked builds (NVLITE_CHECKED: the build
// the tests link, build/checked, and every sanitizer build) stop at the first
// broken one with its place; release builds compile the checks out (the
// condition is not evaluated).
//
// Never for what users pass in: bad input gets an error value (a CUresult),
// and no input may reach a failing assertion.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace nvl {

#if defined(NVLITE_CHECKED) && NVLITE_CHECKED
inline constexpr bool kChecked = true;
#else
inline constexpr bool kChecked = false;
#endif

[[noreturn]] inline void assertionFailed(const char* condition, const char* file, int line, const char* function) {
    std::fprintf(stderr, "nvlite: assertion failed: %s (%s:%d, %s)\n", condition, file, line, function);
    std::abort();
}

}  // namespace nvl

#if defined(NVLITE_CHECKED) && NVLITE_CHECKED
#define NVL_ASSERT(condition) \
    ((condition) ? static_cast<void>(0) : ::nvl::assertionFailed(#condition, __FILE__, __LINE__, __func__))
#else
#define NVL_ASSERT(condition) static_cast<void>(sizeof(!(condition)))
#endif
