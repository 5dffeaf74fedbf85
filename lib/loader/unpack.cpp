#include "loader/unpack.h"

#include <cstring>

namespace nvl::loader {

namespace {

constexpr uint8_t kCopyFlag = 0x80;
constexpr uint8_t kLengthMask = 0x7f;  // also the mark that a varint follows
constexpr size_t kLiteralBias = 1;
constexpr size_t kCopyBias = 3;
constexpr unsigned kVarintMaxBytes = 5;  // 35 bits: every size below 4 GiB

class Reader {
public:
    explicit Reader(Bytes in) : in_(in) {}
    bool done() const { return at_ == in_.size(); }
    size_t left() const { return in_.size() - at_; }
    bool byte(uint8_t* v) {
        if (at_ >= in_.size()) return false;
        *v = in_[at_++];
        return true;
    }
    bool varint(size_t* v) {
        *v = 0;
        for (unsigned i = 0; i < kVarintMaxBytes; i++) {
            uint8_t b;
            if (!byte(&b)) return false;
            *v |= static_cast<size_t>(b & 0x7f) << (7 * i);
            if (!(b & 0x80)) return true;
        }
        return false;
    }
    const uint8_t* take(size_t n) {
        if (n > left()) return nullptr;
        const uint8_t* p = in_.data() + at_;
        at_ += n;
        return p;
    }

private:
    Bytes in_;
    size_t at_ = 0;
};

}  // namespace

bool unpack(Bytes packed, std::span<uint8_t> out) {
    Reader in(packed);
    size_t pos = 0;
    while (!in.done()) {
        uint8_t c;
        size_t n = 0;
        if (!in.byte(&c)) return false;
        if ((c & kLengthMask) == kLengthMask && !in.varint(&n)) return false;
        n += c & kLengthMask;
        if (c & kCopyFlag) {
            size_t distance;
            if (!in.varint(&distance)) return false;
            n += kCopyBias;
            if (distance == 0 || distance > pos || n > out.size() - pos) return false;
            uint8_t* dst = out.data() + pos;
            const uint8_t* src = dst - distance;
            if (distance >= n)
                std::memcpy(dst, src, n);
            else
                for (size_t i = 0; i < n; i++) dst[i] = src[i];  // overlapping: repeats the last 'distance' bytes
            pos += n;
        } else {
            n += kLiteralBias;
            const uint8_t* src = in.take(n);
            if (!src || n > out.size() - pos) return false;
            std::memcpy(out.data() + pos, src, n);
            pos += n;
        }
    }
    return pos == out.size();
}

}  // namespace nvl::loader
