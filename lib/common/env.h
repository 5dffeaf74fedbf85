// Settings read from the environment (the NVLITE_* tuning knobs).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace nvl::env {

// The variable's value, or nullptr when it is unset or empty.
inline const char* value(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

// A byte count ("65536", "64k", "4m", "1g"), 'never' for "off"/"never"
// (UINT64_MAX), else 'fallback' (unset or unreadable).
inline uint64_t bytes(const char* name, uint64_t fallback) {
    const char* v = value(name);
    if (!v) return fallback;
    if (!std::strcmp(v, "off") || !std::strcmp(v, "never")) return UINT64_MAX;
    char* end = nullptr;
    unsigned long long n = std::strtoull(v, &end, 0);
    if (end == v) return fallback;
    switch (*end) {
    case 'k': case 'K': n <<= 10; ++end; break;
    case 'm': case 'M': n <<= 20; ++end; break;
    case 'g': case 'G': n <<= 30; ++end; break;
    default: break;
    }
    return *end ? fallback : n;
}

// True when the variable is set to "1", "on" or "yes"; false for "0",
// "off" or "no"; 'fallback' otherwise.
inline bool flag(const char* name, bool fallback) {
    const char* v = value(name);
    if (!v) return fallback;
    if (!std::strcmp(v, "1") || !std::strcmp(v, "on") || !std::strcmp(v, "yes")) return true;
    if (!std::strcmp(v, "0") || !std::strcmp(v, "off") || !std::strcmp(v, "no")) return false;
    return fallback;
}

}  // namespace nvl::env
