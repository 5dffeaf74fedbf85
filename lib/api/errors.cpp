// cuGetErrorName, cuGetErrorString.
#include "api/entry.h"
#include "api/entry_impls.h"

namespace nvl::api {
namespace {

struct ErrorText {
    int value;
    const char* name;
    const char* description;
};

constexpr ErrorText kErrors[] = {
#define X(value, name, description) {value, name, description},
#include "api/error_table.inc"
#undef X
};

const ErrorText* lookup(CUresult r) {
    for (const ErrorText& e : kErrors)
        if (e.value == static_cast<int>(r)) return &e;
    return nullptr;
}

}  // namespace

const char* errorName(CUresult r) {
    const ErrorText* e = lookup(r);
    return e ? e->name : "CUDA_ERROR_UNKNOWN_CODE";
}

Status getErrorName(CUresult error, const char** pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    const ErrorText* e = lookup(error);
    *pStr = e ? e->name : nullptr;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

Status getErrorString(CUresult error, const char** pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    const ErrorText* e = lookup(error);
    *pStr = e ? e->description : nullptr;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

}  // namespace nvl::api
