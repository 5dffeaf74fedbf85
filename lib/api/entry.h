// What every C entry point shares: export, tracing, and the guarantee that
// no exception crosses the ABI.
#pragma once

#include <cstdio>
#include <cstring>
#include <new>
#include <utility>

#include "common/status.h"
#include "common/trace.h"
#include "common/clock.h"
#include "core/call_scope.h"
#include "nvlite/cuda.h"

#define NVL_EXPORT extern "C" __attribute__((visibility("default")))

namespace nvl::api {

const char* errorName(CUresult r);

// The value a program passed in an enum-typed parameter, read as the int it
// is: programs pass values outside the enum (errors to answer), and reading
// such a value as the enum type is undefined in C++ (UBSan's enum check).
template <class E>
int enumValue(const E& e) {
    static_assert(sizeof(E) == sizeof(int));
    int v;
    std::memcpy(&v, &e, sizeof v);
    return v;
}


// Runs one API call: returns its CUresult, maps escaping exceptions to
// CUresults, and with NVLITE_TRACE=1 prints the call, its arguments, its
// result and its duration. What the call looks up stays valid until it
// returns (core::CallScope: a destroy racing it waits or answers it).
template <class Body, class... Args>
CUresult entry(const char* name, Body&& body, const char* fmt, Args... args) noexcept {
    auto run = [&]() noexcept -> CUresult {
        core::CallScope scope;
        CUresult r;
        try {
            r = static_cast<Status>(body()).code();
        } catch (const std::bad_alloc&) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } catch (...) {
            r = CUDA_ERROR_UNKNOWN;
        }
        return r;
    };
    if (!trace::api()) return run();
    const uint64_t t0 = monotonicNs();
    CUresult r = run();
    const uint64_t t1 = monotonicNs();
    char argText[512];
    if constexpr (sizeof...(Args) > 0) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"
        std::snprintf(argText, sizeof argText, fmt, args...);
#pragma GCC diagnostic pop
    } else {
        (void)fmt;
        argText[0] = 0;
    }
    trace::print("%s(%s) = %s (%.1f us)", name, argText, errorName(r), static_cast<double>(t1 - t0) / 1000.0);
    return r;
}

}  // namespace nvl::api
