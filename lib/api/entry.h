// What every exported entry point shares (the generated thunks of
// lib/api/entry_points.txt call it): the implementation runs, no exception
// crosses the ABI, and with NVLITE_TRACE=1 the call, its arguments, its
// result and its duration are printed under the exported symbol's name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include "common/clock.h"
#include "common/status.h"
#include "common/trace.h"
#include "core/call_scope.h"
#include "nvlite/cuda.h"

#define NVL_EXPORT __attribute__((visibility("default")))

namespace nvl::api {

const char* errorName(CUresult r);

// Which stream NULL names inside an entry point: the legacy default stream,
// or (the _ptds/_ptsz symbols) the calling thread's per-thread default stream.
enum class DefaultStream { Legacy, PerThread };

namespace detail {
inline thread_local bool perThreadDefault = false;

class PerThreadScope {
public:
    PerThreadScope() : saved_(perThreadDefault) { perThreadDefault = true; }
    ~PerThreadScope() { perThreadDefault = saved_; }
    PerThreadScope(const PerThreadScope&) = delete;
    PerThreadScope& operator=(const PerThreadScope&) = delete;

private:
    bool saved_;
};

// The argument list of a traced call, as text.
class ArgText {
public:
    void add(const char* s);                   // a string argument, quoted
    void add(const void* p);                   // any pointer or handle
    void add(long long v);                     // signed integers, enums
    void add(unsigned long long v, bool hex);  // unsigned integers
    void add(double v);
    void opaque();  // a structure passed by value
    const char* text() const { return buf_; }

private:
    void next();
    char buf_[512] = {};
    size_t n_ = 0;
};

template <class T>
void addArg(ArgText& t, const T& v) {
    if constexpr (std::is_same_v<T, const char*>) {
        t.add(v);
    } else if constexpr (std::is_pointer_v<T> && std::is_function_v<std::remove_pointer_t<T>>) {
        t.add(reinterpret_cast<const void*>(v));
    } else if constexpr (std::is_pointer_v<T>) {
        t.add(static_cast<const void*>(v));
    } else if constexpr (std::is_enum_v<T>) {
        t.add(static_cast<long long>(v));
    } else if constexpr (std::is_floating_point_v<T>) {
        t.add(static_cast<double>(v));
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        t.add(static_cast<long long>(v));
    } else if constexpr (std::is_integral_v<T>) {
        // 64-bit unsigned values are device pointers or flag words: hex.
        t.add(static_cast<unsigned long long>(v), std::is_same_v<T, unsigned long long>);
    } else {
        t.opaque();
    }
}

void traceCall(const char* name, const char* args, CUresult r, uint64_t ns);

}  // namespace detail

// True inside a _ptds/_ptsz entry point: a NULL stream is the calling
// thread's default stream.
inline bool perThreadDefaultStream() { return detail::perThreadDefault; }

// Runs one entry point: 'body' returns a Status or a CUresult. What the
// call looks up stays valid until it returns (core::CallScope: a destroy
// racing it waits for it or answers it).
template <DefaultStream D = DefaultStream::Legacy, class Body, class... Args>
CUresult call(const char* name, Body&& body, const Args&... args) noexcept {
    auto run = [&]() noexcept -> CUresult {
        core::CallScope scope;
        try {
            if constexpr (D == DefaultStream::PerThread) {
                detail::PerThreadScope scope;
                return static_cast<Status>(body()).code();
            } else {
                return static_cast<Status>(body()).code();
            }
        } catch (const std::bad_alloc&) {
            return CUDA_ERROR_OUT_OF_MEMORY;
        } catch (...) {
            return CUDA_ERROR_UNKNOWN;
        }
    };
    if (!trace::api()) [[likely]]
        return run();
    const uint64_t t0 = monotonicNs();
    const CUresult r = run();
    const uint64_t t1 = monotonicNs();
    detail::ArgText text;
    (detail::addArg(text, args), ...);
    detail::traceCall(name, text.text(), r, t1 - t0);
    return r;
}

// The stub rule of the entry points nvlite does not provide (README): after
// cuInit, a NULL output pointer is CUDA_ERROR_INVALID_VALUE, anything else
// CUDA_ERROR_NOT_SUPPORTED. 'outputs' are the symbol's output pointers.
Status notProvided(const char* name, std::initializer_list<const void*> outputs);
// The first ABI's forms with 32-bit device pointers and sizes: after cuInit,
// CUDA_ERROR_INVALID_CONTEXT, libcuda's answer for contexts of the current ABI.
Status firstAbi();

}  // namespace nvl::api
