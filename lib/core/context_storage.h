// Context-local storage: values that libraries above the driver (cudart,
// cuBLAS) keep per context under keys of their own (their private table
// c693336e), each with an optional destructor the driver calls when the
// context goes away: destroyed, or a primary context released for the last
// time or reset.
#pragma once

#include <mutex>
#include <vector>

#include "common/status.h"
#include "nvlite/cuda.h"

namespace nvl::core {

class ContextStorage {
public:
    // Called as destructor(context, key, value).
    using Destructor = void (*)(CUcontext, void*, void*);

    // Sets the key's value and destructor (replacing an earlier one).
    void put(void* key, void* value, Destructor destructor);
    // CUDA_ERROR_INVALID_HANDLE when the key holds nothing.
    Status erase(void* key);
    Result<void*> get(void* key) const;

    // Empties the storage, then calls each destructor (in the order the keys
    // were put), outside any lock: they may call the driver.
    void destroyAll(CUcontext context);

private:
    struct Entry {
        void* key;
        void* value;
        Destructor destructor;
    };
    mutable std::mutex mutex_;
    std::vector<Entry> entries_;  // a few keys per context
};

}  // namespace nvl::core
