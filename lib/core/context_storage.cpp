#include "core/context_storage.h"

#include <algorithm>

#include "common/trace.h"

namespace nvl::core {

void ContextStorage::put(void* key, void* value, Destructor destructor) {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.key == key; });
    if (it != entries_.end()) {
        it->value = value;
        it->destructor = destructor;
    } else {
        entries_.push_back({key, value, destructor});
    }
}

Status ContextStorage::erase(void* key) {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.key == key; });
    if (it == entries_.end()) return CUDA_ERROR_INVALID_HANDLE;
    entries_.erase(it);
    return kOk;
}

Result<void*> ContextStorage::get(void* key) const {
    std::lock_guard lock(mutex_);
    for (const Entry& e : entries_)
        if (e.key == key) return e.value;
    return CUDA_ERROR_INVALID_HANDLE;
}

void ContextStorage::destroyAll(CUcontext context) {
    std::vector<Entry> taken;
    {
        std::lock_guard lock(mutex_);
        taken.swap(entries_);
    }
    for (const Entry& e : taken) {
        if (!e.destructor) continue;
        if (trace::api())
            trace::print("context %p goes: context-local storage destructor %p(key %p, value %p)",
                         static_cast<void*>(context), reinterpret_cast<void*>(e.destructor), e.key, e.value);
        e.destructor(context, e.key, e.value);
    }
}

}  // namespace nvl::core
