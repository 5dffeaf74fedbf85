// The live objects of one type behind C handles. A handle is followed only
// after it is found here, so a stale, foreign or other-type handle (a
// CUmodule passed as a CUfunction) is answered with an error instead of
// being dereferenced.
#pragma once

#include <mutex>
#include <shared_mutex>
#include <unordered_set>

namespace nvl::core {

template <class T>
class HandleRegistry {
public:
    // One registry per type, never destroyed (handles may be checked from
    // atexit handlers and other threads while the process ends).
    static HandleRegistry& get() {
        static auto* r = new HandleRegistry();
        return *r;
    }

    void add(const T* p) {
        std::unique_lock lock(mutex_);
        live_.insert(p);
    }
    // False when 'p' was not registered (already removed).
    bool remove(const T* p) {
        std::unique_lock lock(mutex_);
        return live_.erase(p) != 0;
    }
    // The object behind 'handle', or nullptr when it is not one of ours.
    T* find(const void* handle) const {
        std::shared_lock lock(mutex_);
        return live_.count(static_cast<const T*>(handle)) ? static_cast<T*>(const_cast<void*>(handle)) : nullptr;
    }

private:
    HandleRegistry() = default;
    mutable std::shared_mutex mutex_;
    std::unordered_set<const T*> live_;
};

}  // namespace nvl::core
