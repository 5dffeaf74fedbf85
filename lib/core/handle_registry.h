// The live objects of one type behind C handles. A handle is followed only
// after it is found here, so a stale, foreign or other-type handle (a
// CUmodule passed as a CUfunction) is answered with an error instead of
// being dereferenced.
//
// The registry owns one reference to each live object (std::shared_ptr); a
// lookup hands out another, which the API call keeps until it returns
// (CallScope::keep). Destroying a handle removes it here: calls racing the
// destroy either found it before (and finish on an object that stays valid
// until they return) or do not find it (CUDA_ERROR_INVALID_HANDLE or their
// type's answer). Nothing is freed under a call that uses it.
//
// With Retired > 0 the last Retired removed objects stay reachable through
// retired(): a destroyed context can still be made current, and its handle
// answered with CUDA_ERROR_CONTEXT_IS_DESTROYED, as libcuda does. Older ones
// are forgotten (memory stays bounded however many handles a program makes).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace nvl::core {

template <class T, size_t Retired = 0>
class HandleRegistry {
public:
    // One registry per type, never destroyed (handles may be checked from
    // atexit handlers and other threads while the process ends).
    static HandleRegistry& get() {
        static auto* r = new HandleRegistry();
        return *r;
    }

    void add(std::shared_ptr<T> p) {
        const void* key = p.get();
        std::shared_ptr<T> dropped;  // freed outside the lock
        std::unique_lock lock(mutex_);
        for (auto& r : retired_)
            if (r.get() == key) dropped = std::move(r);  // the address is a live object again
        live_[key] = std::move(p);
    }
    // Takes 'handle' out (it joins the retired ones); nullptr when it was not live.
    std::shared_ptr<T> remove(const void* handle) {
        std::shared_ptr<T> out;
        std::shared_ptr<T> dropped;  // freed outside the lock
        std::unique_lock lock(mutex_);
        auto it = live_.find(handle);
        if (it == live_.end()) return nullptr;
        out = std::move(it->second);
        live_.erase(it);
        if constexpr (Retired > 0) {
            auto& slot = retired_[nextRetired_++ % Retired];
            dropped = std::move(slot);
            slot = out;
        }
        return out;
    }
    // The live object behind 'handle', or nullptr when it is not one of ours.
    std::shared_ptr<T> find(const void* handle) const {
        if (!handle) return nullptr;
        std::shared_lock lock(mutex_);
        auto it = live_.find(handle);
        return it == live_.end() ? nullptr : it->second;
    }
    // A recently removed object behind 'handle', or nullptr.
    std::shared_ptr<T> retired(const void* handle) const {
        if (!handle) return nullptr;
        std::shared_lock lock(mutex_);
        for (const auto& r : retired_)
            if (r.get() == handle) return r;
        return nullptr;
    }
    size_t liveCount() const {
        std::shared_lock lock(mutex_);
        return live_.size();
    }

private:
    HandleRegistry() = default;
    mutable std::shared_mutex mutex_;
    std::unordered_map<const void*, std::shared_ptr<T>> live_;
    std::array<std::shared_ptr<T>, Retired> retired_;
    size_t nextRetired_ = 0;
};

}  // namespace nvl::core
