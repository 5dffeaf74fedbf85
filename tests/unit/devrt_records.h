// printf FIFO records written by hand, the way the device runtime writes
// them (lib/core/devrt_abi.h), for the tests of the host side.
#pragma once

#include <stdint.h>
#include <string.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/devrt_abi.h"

namespace devrttest {

// A record's items.
struct Items {
    std::vector<uint8_t> bytes;
    void number(uint64_t v) {
        const size_t at = bytes.size();
        bytes.resize(at + 8);
        memcpy(bytes.data() + at, &v, 8);
    }
    void number(int32_t v) { number(static_cast<uint64_t>(static_cast<int64_t>(v))); }  // as read from 4 bytes
    void number(double d) {
        uint64_t v;
        memcpy(&v, &d, 8);
        number(v);
    }
    void string(std::string_view s) {
        number(static_cast<uint64_t>(s.size()));
        bytes.insert(bytes.end(), s.begin(), s.end());
        bytes.resize((bytes.size() + 7) & ~size_t{7}, 0);
    }
};

inline Items text(std::string_view s) {
    Items it;
    it.string(s);
    return it;
}

inline Items assertion(const char* file, uint32_t line, const char* function, const char* expression,
                       const uint32_t block[3], const uint32_t thread[3]) {
    Items it;
    it.number(uint64_t{line});
    for (int i = 0; i < 3; ++i) it.number(uint64_t{block[i]});
    for (int i = 0; i < 3; ++i) it.number(uint64_t{thread[i]});
    it.string(file);
    it.string(function);
    it.string(expression);
    return it;
}

// Writes records into a ring as the device does: header word 1 and the
// items first, word 0 (position + 1) last with a release store.
struct RingWriter {
    uint8_t* ring = nullptr;
    uint64_t bytes = 0;  // a power of two
    uint64_t head = 0;   // the next record's position

    static uint64_t recordBytes(const Items& it) { return nvl::devrt::kRecordHeaderBytes + it.bytes.size(); }

    // Returns the record's position.
    uint64_t put(uint32_t kind, const Items& it, bool publish = true) {
        const uint64_t n = recordBytes(it);
        std::vector<uint8_t> rec(n, 0);
        const uint64_t w1 = n | (static_cast<uint64_t>(kind) << 32);
        memcpy(rec.data() + 8, &w1, 8);
        memcpy(rec.data() + 16, it.bytes.data(), it.bytes.size());
        for (uint64_t i = 8; i < n; ++i) ring[(head + i) & (bytes - 1)] = rec[i];
        const uint64_t at = head;
        head += n;
        if (publish) this->publish(at);
        return at;
    }
    void publish(uint64_t position) {
        __atomic_store_n(reinterpret_cast<uint64_t*>(ring + (position & (bytes - 1))), position + 1, __ATOMIC_RELEASE);
    }
};

}  // namespace devrttest
