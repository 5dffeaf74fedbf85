// cuGetProcAddress: the driver's functions by name and CUDA version, from the
// table of entry points (lib/api/entry_points.txt).
//
// libcuda 580's rules (cuda.h, and what it answered on the H200, recorded in
// tests/data/libcuda/): the answer is the newest variant of the function not
// newer than the requested version; with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
// its _ptds/_ptsz form where there is one; a version above the driver's is
// CUDA_ERROR_INVALID_VALUE; a name the driver does not know, or a version
// older than the function, is CUDA_SUCCESS with a NULL function and the
// reason in the optional status.
#include <algorithm>
#include <cstring>

#include "api/entry.h"
#include "api/entry_points.h"

namespace nvl::api {
namespace {

constexpr int kDriverVersion = CUDA_VERSION;
constexpr cuuint64_t kKnownFlags = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

struct Lookup {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    const EntryPoint* entry = nullptr;
    int oldest = 0;  // the function's first version, when it is too new
};

Lookup find(const char* name, int version, bool perThread) {
    const auto all = entryPoints();
    const std::string_view wanted(name);
    auto it = std::lower_bound(all.begin(), all.end(), wanted,
                               [](const EntryPoint& e, std::string_view n) { return e.function() < n; });
    Lookup r;
    const EntryPoint* variant = nullptr;
    const EntryPoint* perThreadForm = nullptr;
    for (; it != all.end() && it->function() == wanted; ++it) {
        if (!it->perThread && (r.oldest == 0 || it->version < r.oldest)) r.oldest = it->version;
        if (it->version > version) continue;
        (it->perThread ? perThreadForm : variant) = &*it;
    }
    if (r.oldest == 0) return r;
    if (!variant) {
        r.status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return r;
    }
    r.status = CU_GET_PROC_ADDRESS_SUCCESS;
    r.entry = variant;
    // The per-thread form of that same variant (its symbol plus _ptds/_ptsz).
    if (perThread && perThreadForm) {
        const size_t n = std::strlen(variant->symbol);
        if (std::strncmp(perThreadForm->symbol, variant->symbol, n) == 0 && std::strlen(perThreadForm->symbol) == n + 5)
            r.entry = perThreadForm;
    }
    return r;
}

void traceAnswer(const char* api, const char* name, int version, cuuint64_t flags, const Lookup& l) {
    if (!trace::api()) return;
    switch (l.status) {
    case CU_GET_PROC_ADDRESS_SUCCESS:
        trace::print("%s: %s @%d flags %llu -> %s", api, name, version, static_cast<unsigned long long>(flags),
                     l.entry->symbol);
        break;
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT:
        trace::print("%s: %s @%d flags %llu -> none: it appeared in CUDA %d", api, name, version,
                     static_cast<unsigned long long>(flags), l.oldest);
        break;
    default:
        trace::print("%s: %s @%d flags %llu -> not found: nvlite does not know this function", api, name, version,
                     static_cast<unsigned long long>(flags));
    }
}

}  // namespace

Status getProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                      CUdriverProcAddressQueryResult* symbolStatus) {
    if (pfn) *pfn = nullptr;
    if (!symbol || !pfn || (flags & ~kKnownFlags)) return CUDA_ERROR_INVALID_VALUE;
    if (cudaVersion > kDriverVersion) {
        if (trace::api())
            trace::print("cuGetProcAddress_v2: %s @%d: above the driver's CUDA %d", symbol, cudaVersion,
                         kDriverVersion);
        return CUDA_ERROR_INVALID_VALUE;
    }
    const Lookup l = find(symbol, cudaVersion, flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    traceAnswer("cuGetProcAddress_v2", symbol, cudaVersion, flags, l);
    if (l.entry) *pfn = reinterpret_cast<void*>(l.entry->address);
    if (symbolStatus) *symbolStatus = l.status;
    return kOk;
}

// The CUDA 11.3 form: no status; a function it cannot give is CUDA_ERROR_NOT_FOUND.
Status getProcAddressV1(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
    if (pfn) *pfn = nullptr;
    if (!symbol || !pfn || (flags & ~kKnownFlags)) return CUDA_ERROR_INVALID_VALUE;
    if (cudaVersion > kDriverVersion) return CUDA_ERROR_INVALID_VALUE;
    const Lookup l = find(symbol, cudaVersion, flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    traceAnswer("cuGetProcAddress", symbol, cudaVersion, flags, l);
    if (!l.entry) return CUDA_ERROR_NOT_FOUND;
    *pfn = reinterpret_cast<void*>(l.entry->address);
    return kOk;
}

}  // namespace nvl::api
