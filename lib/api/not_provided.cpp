// What the entry points nvlite does not provide answer (entry.h): the stub
// rule, and the first ABI's 32-bit forms.
#include "api/entry.h"
#include "core/runtime.h"

namespace nvl::api {

Status notProvided(const char* name, std::initializer_list<const void*> outputs) {
    NVL_TRY(core::Runtime::get().checkInit());
    for (const void* p : outputs)
        if (!p) return CUDA_ERROR_INVALID_VALUE;
    if (trace::api()) trace::print("%s: not provided by nvlite", name);
    return CUDA_ERROR_NOT_SUPPORTED;
}

Status firstAbi() {
    NVL_TRY(core::Runtime::get().checkInit());
    return CUDA_ERROR_INVALID_CONTEXT;
}

}  // namespace nvl::api
