// cuGetErrorName, cuGetErrorString.
#include "api/entry.h"

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

const ErrorText* lookup(int r) {
    for (const ErrorText& e : kErrors)
        if (e.value == r) return &e;
    return nullptr;
}

}  // namespace

const char* errorName(CUresult r) {
    const ErrorText* e = lookup(enumValue(r));
    return e ? e->name : "CUDA_ERROR_UNKNOWN_CODE";
}

}  // namespace nvl::api

using namespace nvl;

NVL_EXPORT CUresult cuGetErrorName(CUresult error, const char** pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    const api::ErrorText* e = api::lookup(api::enumValue(error));
    *pStr = e ? e->name : nullptr;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

NVL_EXPORT CUresult cuGetErrorString(CUresult error, const char** pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    const api::ErrorText* e = api::lookup(api::enumValue(error));
    *pStr = e ? e->description : nullptr;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
