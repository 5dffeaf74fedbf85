// The private table cuBLAS 13 and cuBLASLt ask libcuda for before their
// GEMMs: 21318c60-9714-3248-8ca6-41ff7324c8f2, 93 slots (slot 0: its size).
// Without it cublasSgemm answers CUBLAS_STATUS_NOT_SUPPORTED.
//
// No public source names the table or its slots. What is known is every call
// CuPy's and PyTorch's cuBLAS made into libcuda 580's table on the H200
// (tools/etrace, coordinator's run1: cupy.log, torch.log), always with the
// current context as the first argument (TOOLS_TLS[2]'s answer):
//   [4](ctx, u64* out, ...)            wrote 1 to *out, returned 0 (cuBLASLt,
//                                      before each GEMM's heuristics)
//   [51](ctx, NULL, void** out)        wrote a pointer to a driver object
//                                      whose first word is 1, returned 0
//   [39](ctx, object, u64* out, ...)   with [51]'s object: wrote 7, returned 0
// nvlite answers these three as libcuda 580 did — the same answer every time
// it was seen — for a context that exists; what other answers would mean is
// not known, so nothing else is claimed. Every other slot traces its call and
// answers CUDA_ERROR_NOT_SUPPORTED.
#include <array>
#include <cstdint>
#include <utility>

#include "api/entry.h"
#include "api/private_tables.h"
#include "core/context.h"
#include "core/runtime.h"

namespace nvl::api::tables {
namespace {

constexpr char kCublas[] = "CUBLAS_21318c60";
constexpr int kSlots = 93;

// The current context or the one named; a destroyed one is refused.
Status checkContext(CUcontext ctx) {
    NVL_TRY(core::Runtime::get().checkInit());
    core::Context* c = ctx ? core::Context::fromHandle(ctx) : core::current::top();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    return kOk;
}

// [51]'s object: only [39] is given it back. Its first word is 1 as in
// libcuda's; the rest is zero (cuBLAS was not seen reading it).
alignas(16) const uint64_t kContextObject[8] = {1, 0, 0, 0, 0, 0, 0, 0};

CUresult slot4(CUcontext ctx, uint64_t* out) noexcept {
    return call(
        "CUBLAS_21318c60[4]",
        [&]() -> Status {
            NVL_TRY(checkContext(ctx));
            if (!out) return CUDA_ERROR_INVALID_VALUE;
            *out = 1;
            return kOk;
        },
        ctx, out);
}

CUresult slot51(CUcontext ctx, void* unused, const void** out) noexcept {
    return call(
        "CUBLAS_21318c60[51]",
        [&]() -> Status {
            NVL_TRY(checkContext(ctx));
            if (!out) return CUDA_ERROR_INVALID_VALUE;
            *out = kContextObject;
            return kOk;
        },
        ctx, unused, out);
}

CUresult slot39(CUcontext ctx, const void* object, uint64_t* out) noexcept {
    return call(
        "CUBLAS_21318c60[39]",
        [&]() -> Status {
            NVL_TRY(checkContext(ctx));
            if (object != kContextObject || !out) return CUDA_ERROR_INVALID_VALUE;
            *out = 7;
            return kOk;
        },
        ctx, object, out);
}

template <size_t... I>
constexpr auto unknownSlots(std::index_sequence<I...>) {
    return std::array<const void*, sizeof...(I)>{reinterpret_cast<const void*>(&unknown<kCublas, static_cast<int>(I)>)...};
}

}  // namespace

const void* const* cublasTable() {
    static const auto table = [] {
        auto t = unknownSlots(std::make_index_sequence<kSlots>{});
        t[0] = sizeSlot<kSlots>();
        t[4] = reinterpret_cast<const void*>(&slot4);
        t[39] = reinterpret_cast<const void*>(&slot39);
        t[51] = reinterpret_cast<const void*>(&slot51);
        return t;
    }();
    static_assert(sizeof table == kSlots * sizeof(void*));
    return table.data();
}

}  // namespace nvl::api::tables
