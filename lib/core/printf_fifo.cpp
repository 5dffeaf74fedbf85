#include "core/printf_fifo.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/devrt_abi.h"

namespace nvl::core::fifo {

namespace {

constexpr size_t kFlushBytes = 64 * 1024;

// Buffers text and hands it to the Output in pieces of about kFlushBytes.
class Text {
public:
    explicit Text(Output& out) : out_(out) {}
    ~Text() { flush(); }
    void append(const char* p, size_t n) {
        buffer_.append(p, n);
        if (buffer_.size() >= kFlushBytes) flush();
    }
    void append(std::string_view s) { append(s.data(), s.size()); }
    void append(char c) { append(&c, 1); }
    void flush() {
        if (!buffer_.empty()) out_.write(buffer_.data(), buffer_.size());
        buffer_.clear();
    }

private:
    Output& out_;
    std::string buffer_;
};

// The items of a record (devrt_abi.h), every read bounded by the payload.
class Items {
public:
    explicit Items(std::span<const uint8_t> p) : p_(p) {}
    bool number(uint64_t* v) {
        if (p_.size() - pos_ < 8) return false;
        std::memcpy(v, p_.data() + pos_, 8);
        pos_ += 8;
        return true;
    }
    bool string(std::string_view* s) {
        uint64_t n;
        if (!number(&n) || n > p_.size() - pos_) return false;
        const uint64_t padded = (n + 7) & ~uint64_t{7};
        *s = std::string_view(reinterpret_cast<const char*>(p_.data() + pos_), n);
        pos_ += std::min<uint64_t>(padded, p_.size() - pos_);
        return true;
    }

private:
    std::span<const uint8_t> p_;
    size_t pos_ = 0;
};

bool isFlag(char c) { return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

// snprintf into 'text' with a specification built by this file.
template <class T>
void put(Text& text, const std::string& spec, T value) {
    char small[512];
    int n = std::snprintf(small, sizeof small, spec.c_str(), value);
    if (n < 0) return;
    if (static_cast<size_t>(n) < sizeof small) {
        text.append(small, static_cast<size_t>(n));
        return;
    }
    std::vector<char> big(static_cast<size_t>(n) + 1);
    n = std::snprintf(big.data(), big.size(), spec.c_str(), value);
    if (n > 0) text.append(big.data(), std::min<size_t>(static_cast<size_t>(n), big.size() - 1));
}

// One conversion as parsed: flags, width, precision, length.
struct Spec {
    std::string flags;
    int64_t width = -1;      // -1: none
    int64_t precision = -1;  // -1: none
    int lengthBits = 32;     // 8 (hh), 16 (h), 32, 64 (l, ll, j, z, t, q)

    // "%<flags><width>[.<precision>]<length><conv>" with only the flags
    // 'allowed' keeps.
    std::string build(const char* allowed, const char* length, char conv, bool withPrecision = true) const {
        std::string s = "%";
        for (char f : flags)
            if (std::strchr(allowed, f) && s.find(f) == std::string::npos) s += f;
        if (width >= 0) s += std::to_string(width);
        if (withPrecision && precision >= 0) s += "." + std::to_string(precision);
        s += length;
        s += conv;
        return s;
    }
};

uint32_t clampWidth(uint64_t v) { return static_cast<uint32_t>(std::min<uint64_t>(v, kMaxWidth)); }

// Digits of a width or precision, bounded.
uint32_t readDigits(std::string_view fmt, size_t* i) {
    uint64_t v = 0;
    while (*i < fmt.size() && isDigit(fmt[*i])) {
        v = std::min<uint64_t>(v * 10 + static_cast<uint64_t>(fmt[*i] - '0'), kMaxWidth);
        ++*i;
    }
    return static_cast<uint32_t>(v);
}

// printf's format against the record's items (the grammar devrt.cu walks).
bool formatPrintf(Items& items, Text& text) {
    std::string_view fmt;
    if (!items.string(&fmt)) return false;
    size_t i = 0;
    while (i < fmt.size()) {
        const size_t start = i;
        // Plain text up to the next '%' (C stops at a NUL, so do we).
        while (i < fmt.size() && fmt[i] != '%' && fmt[i] != '\0') ++i;
        if (i > start) text.append(fmt.substr(start, i - start));
        if (i >= fmt.size() || fmt[i] == '\0') break;
        const size_t specStart = i++;
        if (i < fmt.size() && fmt[i] == '%') {
            text.append('%');
            ++i;
            continue;
        }
        Spec spec;
        while (i < fmt.size() && isFlag(fmt[i])) spec.flags += fmt[i++];
        if (i < fmt.size() && fmt[i] == '*') {
            ++i;
            uint64_t v;
            if (!items.number(&v)) return false;
            const int64_t w = static_cast<int32_t>(v);
            if (w < 0) spec.flags += '-';  // a negative width is the '-' flag
            spec.width = clampWidth(w < 0 ? -static_cast<uint64_t>(w) : static_cast<uint64_t>(w));
        } else if (i < fmt.size() && isDigit(fmt[i])) {
            spec.width = readDigits(fmt, &i);
        }
        if (i < fmt.size() && fmt[i] == '.') {
            ++i;
            if (i < fmt.size() && fmt[i] == '*') {
                ++i;
                uint64_t v;
                if (!items.number(&v)) return false;
                const int64_t p = static_cast<int32_t>(v);
                spec.precision = p < 0 ? int64_t{-1} : int64_t{clampWidth(static_cast<uint64_t>(p))};  // negative: as if omitted
            } else {
                spec.precision = readDigits(fmt, &i);
            }
        }
        int h = 0;
        while (i < fmt.size()) {
            const char c = fmt[i];
            if (c == 'l' || c == 'z' || c == 'j' || c == 't' || c == 'q') spec.lengthBits = 64;
            else if (c == 'h') ++h;
            else if (c != 'L') break;
            ++i;
        }
        if (spec.lengthBits != 64 && h) spec.lengthBits = h >= 2 ? 8 : 16;
        if (i >= fmt.size()) {
            text.append(fmt.substr(specStart));  // an unfinished specification, as it stands
            break;
        }
        const char conv = fmt[i++];
        uint64_t v = 0;
        switch (conv) {
        case 'd':
        case 'i': {
            if (!items.number(&v)) return false;
            int64_t s = static_cast<int64_t>(v);
            if (spec.lengthBits == 8) s = static_cast<signed char>(v);
            else if (spec.lengthBits == 16) s = static_cast<int16_t>(v);
            else if (spec.lengthBits == 32) s = static_cast<int32_t>(v);
            put(text, spec.build("-+ 0", "ll", 'd'), static_cast<long long>(s));
            break;
        }
        case 'u':
        case 'o':
        case 'x':
        case 'X': {
            if (!items.number(&v)) return false;
            if (spec.lengthBits == 8) v = static_cast<uint8_t>(v);
            else if (spec.lengthBits == 16) v = static_cast<uint16_t>(v);
            else if (spec.lengthBits == 32) v = static_cast<uint32_t>(v);
            put(text, spec.build(conv == 'u' ? "-0" : "-#0", "ll", conv), static_cast<unsigned long long>(v));
            break;
        }
        case 'c':
            if (!items.number(&v)) return false;
            put(text, spec.build("-", "", 'c', false), static_cast<int>(static_cast<unsigned char>(v)));
            break;
        case 'f':
        case 'F':
        case 'e':
        case 'E':
        case 'g':
        case 'G':
        case 'a':
        case 'A': {
            if (!items.number(&v)) return false;
            double d;
            std::memcpy(&d, &v, sizeof d);
            put(text, spec.build("-+ #0", "", conv), d);
            break;
        }
        case 'p':
            if (!items.number(&v)) return false;
            put(text, spec.build("-", "", 'p', false), reinterpret_cast<void*>(static_cast<uintptr_t>(v)));
            break;
        case 'n':
            if (!items.number(&v)) return false;  // nothing to store into on the host
            break;
        case 's': {
            std::string_view s;
            if (!items.string(&s)) return false;
            const std::string copy(s.substr(0, s.find('\0')));
            put(text, spec.build("-", "", 's'), copy.c_str());
            break;
        }
        default:
            text.append(fmt.substr(specStart, i - specStart));  // not a conversion: as it stands
            break;
        }
    }
    return true;
}

bool formatAssert(Items& items, Text& text) {
    uint64_t n[7];
    for (uint64_t& v : n)
        if (!items.number(&v)) return false;
    std::string_view file, function, expression;
    if (!items.string(&file) || !items.string(&function) || !items.string(&expression)) return false;
    auto u = [](uint64_t v) { return std::to_string(static_cast<uint32_t>(v)); };
    std::string line;
    line.reserve(file.size() + function.size() + expression.size() + 96);
    line.append(file).append(":").append(u(n[0])).append(": ").append(function);
    line.append(": block: [").append(u(n[1])).append(",").append(u(n[2])).append(",").append(u(n[3]));
    line.append("], thread: [").append(u(n[4])).append(",").append(u(n[5])).append(",").append(u(n[6]));
    line.append("] Assertion `").append(expression).append("` failed.\n");
    text.append(line);
    return true;
}

// Ring words are read with acquire/relaxed loads: the GPU writes them.
uint64_t loadWord(const uint8_t* p, int order) {
    return __atomic_load_n(reinterpret_cast<const uint64_t*>(p), order);
}

}  // namespace

bool formatRecord(uint32_t kind, std::span<const uint8_t> payload, Output& out) {
    Items items(payload);
    Text text(out);
    switch (kind) {
    case devrt::kRecordPrintf: return formatPrintf(items, text);
    case devrt::kRecordAssert: return formatAssert(items, text);
    default: return false;
    }
}

DrainResult drain(const Ring& ring, uint64_t* tail, Output& out) {
    DrainResult result;
    const uint64_t size = ring.bytes;
    if (!ring.base || size < devrt::kRecordHeaderBytes || (size & (size - 1)) != 0) return result;
    const uint64_t mask = size - 1;
    std::vector<uint8_t> record;
    // Each record is at least a header: the loop ends within one lap.
    for (uint64_t seen = 0; seen < size; ) {
        const uint64_t at = *tail & mask;
        if ((at & 7) != 0) {
            result.stuck = true;
            break;
        }
        if (loadWord(ring.base + at, __ATOMIC_ACQUIRE) != *tail + 1) break;  // not written (yet)
        const uint64_t word1 = loadWord(ring.base + ((at + 8) & mask), __ATOMIC_RELAXED);
        const uint64_t bytes = static_cast<uint32_t>(word1);
        const uint32_t kind = static_cast<uint32_t>(word1 >> 32);
        if (bytes < devrt::kRecordHeaderBytes || bytes % 8 != 0 || bytes > size - seen) {
            result.stuck = true;
            break;
        }
        // A private copy (the ring may wrap), then give the space back.
        record.resize(bytes);
        const uint64_t first = std::min(bytes, size - at);
        std::memcpy(record.data(), ring.base + at, first);
        std::memcpy(record.data() + first, ring.base, bytes - first);
        std::memset(ring.base + at, 0, first);
        std::memset(ring.base, 0, bytes - first);
        *tail += bytes;
        seen += bytes;
        ++result.records;
        if (kind == devrt::kRecordAssert) result.asserted = true;
        const std::span<const uint8_t> payload(record.data() + devrt::kRecordHeaderBytes,
                                               bytes - devrt::kRecordHeaderBytes);
        if (!formatRecord(kind, payload, out)) result.malformed = true;
    }
    return result;
}

}  // namespace nvl::core::fifo
