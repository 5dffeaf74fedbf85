// The tables profiling tools reach cudart through:
//   TOOLS_RUNTIME_CALLBACK_HOOKS (a094798c-2e74-2e74-93f2-0800200c0a66), 7 slots
//   TOOLS_TLS                    (42d85a81-23f6-cb47-8298-f6e78a3aecdc), 3 slots
// No tool ever attaches to nvlite (tools attach to libcuda), so the hooks
// stay empty.
#include <cstdint>

#include "api/entry.h"
#include "api/private_tables.h"
#include "core/context.h"
#include "core/runtime.h"

namespace nvl::api::tables {
namespace {

constexpr char kHooks[] = "TOOLS_RUNTIME_CALLBACK_HOOKS";
constexpr char kTls[] = "TOOLS_TLS";

// Two areas cudart asks for at start-up ([2] and [6]) and reads while it
// runs: with libcuda 580 it got 1024 and 14 entries, zero-filled while no
// tool is attached. Their entries are taken as 8 bytes wide (the most a
// flag or a function pointer needs).
constexpr size_t kHookArea1Entries = 1024;
constexpr size_t kHookArea2Entries = 14;
uint64_t hookArea1[kHookArea1Entries];
uint64_t hookArea2[kHookArea2Entries];

void giveArea(const char* name, void** ptr, size_t* size, uint64_t* area, size_t entries) noexcept {
    (void)call(
        name,
        [&]() -> Status {
            if (ptr) *ptr = area;
            if (size) *size = entries;
            return kOk;
        },
        ptr, size);
}

// [2] and [6]: where the hooks are and how many.
void hookArea1Of(void** ptr, size_t* size) noexcept {
    giveArea("TOOLS_RUNTIME_CALLBACK_HOOKS[2] hookArea", ptr, size, hookArea1, kHookArea1Entries);
}
void hookArea2Of(void** ptr, size_t* size) noexcept {
    giveArea("TOOLS_RUNTIME_CALLBACK_HOOKS[6] hookArea", ptr, size, hookArea2, kHookArea2Entries);
}

}  // namespace

const void* const* toolsCallbackHooks() {
    static const void* const table[] = {
        sizeSlot<7>(),
        reinterpret_cast<const void*>(&unknown<kHooks, 1>),
        reinterpret_cast<const void*>(&hookArea1Of),
        reinterpret_cast<const void*>(&unknown<kHooks, 3>),
        reinterpret_cast<const void*>(&unknown<kHooks, 4>),
        reinterpret_cast<const void*>(&unknown<kHooks, 5>),
        reinterpret_cast<const void*>(&hookArea2Of),
    };
    static_assert(sizeof table == 7 * sizeof(void*));
    return table;
}

// TOOLS_TLS [2](CUcontext* out, ...): the context current on the calling
// thread. cuBLAS and cuBLASLt call it before their GEMMs and pass what it
// wrote to cuBLAS's own table (21318c60). Every call seen on libcuda 580
// (CuPy, PyTorch) wrote the current context's handle to the first argument
// and returned 0, whatever the other arguments held (they differ from call
// to call: taken as not looked at). With no context current NULL is written,
// as cuCtxGetCurrent does.
CUresult currentContextOf(CUcontext* out) noexcept {
    return call(
        "TOOLS_TLS[2] currentContext",
        [&]() -> Status {
            NVL_TRY(core::Runtime::get().checkInit());
            if (!out) return CUDA_ERROR_INVALID_VALUE;
            core::Context* c = core::current::top();
            *out = c ? c->handle() : nullptr;
            return kOk;
        },
        out);
}

const void* const* toolsTls() {
    static const void* const table[] = {
        sizeSlot<3>(),
        reinterpret_cast<const void*>(&unknown<kTls, 1>),
        reinterpret_cast<const void*>(&currentContextOf),
    };
    static_assert(sizeof table == 3 * sizeof(void*));
    return table;
}

}  // namespace nvl::api::tables
