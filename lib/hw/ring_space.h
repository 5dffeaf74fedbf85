// Space in a ring buffer the GPU reads from: handed out in order, and
// reused only once the submission that last used it has completed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "common/status.h"

namespace nvl::hw {

class RingSpace {
public:
    explicit RingSpace(size_t capacity = 0) : capacity_(capacity) {}
    size_t capacity() const { return capacity_; }

    // Offset of 'n' free units ('align' a power of two). 'done(v)' says
    // whether timeline value v completed; 'wait(v)' waits for it.
    template <class Done, class Wait>
    Result<size_t> reserve(size_t n, size_t align, Done&& done, Wait&& wait) {
        if (n > capacity_ / 2) return Status(CUDA_ERROR_INVALID_VALUE, 0, "ring reservation too large");
        size_t begin = (head_ + align - 1) & ~(align - 1);
        if (begin + n > capacity_) begin = 0;
        while (!inFlight_.empty()) {
            const Use& u = inFlight_.front();
            const bool overlaps = u.begin < begin + n && begin < u.end;
            if (done(u.value)) {
                inFlight_.pop_front();
            } else if (overlaps) {
                NVL_TRY(wait(u.value));
                inFlight_.pop_front();
            } else {
                break;
            }
        }
        return begin;
    }
    // Records [begin, begin+n) as used by the submission with 'value'.
    void commit(size_t begin, size_t n, uint64_t value) {
        if (n == 0) return;
        inFlight_.push_back({begin, begin + n, value});
        head_ = begin + n;
    }

private:
    struct Use {
        size_t begin, end;
        uint64_t value;
    };
    size_t capacity_;
    size_t head_ = 0;
    std::deque<Use> inFlight_;
};

}  // namespace nvl::hw
