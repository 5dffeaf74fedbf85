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

// One argument of a traced call, as its type says to print it.
struct Arg {
    enum class Kind : uint8_t { String, Pointer, Signed, Unsigned, Hex, Double, Opaque };
    Kind kind = Kind::Opaque;
    union {
        const char* s;
        const void* p;
        long long i;
        unsigned long long u;
        double d;
    };
};

template <class T>
Arg toArg(const T& v) {
    Arg a;
    if constexpr (std::is_same_v<T, const char*>) {
        a.kind = Arg::Kind::String;
        a.s = v;
    } else if constexpr (std::is_pointer_v<T> && std::is_function_v<std::remove_pointer_t<T>>) {
        a.kind = Arg::Kind::Pointer;
        a.p = reinterpret_cast<const void*>(v);
    } else if constexpr (std::is_pointer_v<T>) {
        a.kind = Arg::Kind::Pointer;
        a.p = static_cast<const void*>(v);
    } else if constexpr (std::is_enum_v<T> || (std::is_integral_v<T> && std::is_signed_v<T>)) {
        a.kind = Arg::Kind::Signed;
        a.i = static_cast<long long>(v);
    } else if constexpr (std::is_floating_point_v<T>) {
        a.kind = Arg::Kind::Double;
        a.d = static_cast<double>(v);
    } else if constexpr (std::is_integral_v<T>) {
        // 64-bit unsigned values are device pointers or flag words: hex.
        a.kind = std::is_same_v<T, unsigned long long> ? Arg::Kind::Hex : Arg::Kind::Unsigned;
        a.u = static_cast<unsigned long long>(v);
    } else {
        a.kind = Arg::Kind::Opaque;  // a structure passed by value
        a.u = 0;
    }
    return a;
}

// An entry point's body, called through one pointer type: the code that
// runs a call (scope, exceptions, tracing) is written once, out of line,
// instead of once per entry point.
using Invoke = CUresult (*)(void* body);

template <class Body>
CUresult invoke(void* body) {
    return static_cast<Status>((*static_cast<Body*>(body))()).code();
}

// Runs invoke(body) in a CallScope, with NULL naming the calling thread's
// default stream when 'perThread'; an exception becomes
// CUDA_ERROR_OUT_OF_MEMORY (std::bad_alloc) or CUDA_ERROR_UNKNOWN.
CUresult run(Invoke invoke, void* body, bool perThread) noexcept;
// The same, timed, and printed under 'name' with its 'count' arguments.
CUresult runTraced(const char* name, Invoke invoke, void* body, bool perThread, const Arg* args, size_t count) noexcept;

}  // namespace detail

// True inside a _ptds/_ptsz entry point: a NULL stream is the calling
// thread's default stream.
inline bool perThreadDefaultStream() { return detail::perThreadDefault; }

// Runs one entry point: 'body' returns a Status or a CUresult. What the
// call looks up stays valid until it returns (core::CallScope: a destroy
// racing it waits for it or answers it).
template <DefaultStream D = DefaultStream::Legacy, class Body, class... Args>
CUresult call(const char* name, Body&& body, const Args&... args) noexcept {
    using B = std::remove_reference_t<Body>;
    void* b = const_cast<void*>(static_cast<const void*>(&body));
    constexpr bool perThread = D == DefaultStream::PerThread;
    if (!trace::api()) [[likely]]
        return detail::run(&detail::invoke<B>, b, perThread);
    const detail::Arg argv[sizeof...(Args) + 1] = {detail::toArg(args)...};
    return detail::runTraced(name, &detail::invoke<B>, b, perThread, argv, sizeof...(Args));
}

// The stub rule of the entry points nvlite does not provide (README): after
// cuInit, a NULL output pointer is CUDA_ERROR_INVALID_VALUE, anything else
// CUDA_ERROR_NOT_SUPPORTED. 'outputs' are the symbol's output pointers.
Status notProvided(const char* name, std::initializer_list<const void*> outputs);
// The first ABI's forms with 32-bit device pointers and sizes: after cuInit,
// CUDA_ERROR_INVALID_CONTEXT, libcuda's answer for contexts of the current ABI.
Status firstAbi();

}  // namespace nvl::api
