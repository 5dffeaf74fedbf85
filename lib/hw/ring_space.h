// Space in a ring buffer the GPU reads from: handed out in order, and
// reused only once the submission that last used it has completed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/status.h"

namespace nvl::hw {

class RingSpace {
public:
    RingSpace() = default;
    // 'maxUses': how many submissions can be in flight at once (the
    // channel's GPFIFO bounds it); their records live in a fixed array, so
    // reserving never allocates.
    RingSpace(size_t capacity, size_t maxUses) : capacity_(capacity), uses_(maxUses + 1) {}
    size_t capacity() const { return capacity_; }

    // Offset of 'n' free units ('align' a power of two). 'done(v)' says
    // whether timeline value v completed; 'wait(v)' waits for it.
    template <class Done, class Wait>
    Result<size_t> reserve(size_t n, size_t align, Done&& done, Wait&& wait) {
        if (n > capacity_ / 2) return Status(CUDA_ERROR_INVALID_VALUE, 0, "ring reservation too large");
        size_t begin = (head_ + align - 1) & ~(align - 1);
        const bool wraps = begin + n > capacity_;
        if (wraps) begin = 0;
        // Uses are retired oldest first; the oldest lie just ahead of head_
        // (ring order). A reservation that wraps skips the tail after head_:
        // the uses there are older than any at the start, so they go first.
        while (count_ > 0) {
            const Use& u = uses_[first_];
            const bool inSkippedTail = wraps && u.begin >= head_;
            const bool overlaps = u.begin < begin + n && begin < u.end;
            if (!done(u.value)) {
                if (!overlaps && !inSkippedTail) break;
                NVL_TRY(wait(u.value));
            }
            first_ = (first_ + 1) % uses_.size();
            --count_;
        }
        return begin;
    }
    // Records [begin, begin+n) as used by the submission with 'value'.
    void commit(size_t begin, size_t n, uint64_t value) {
        if (n == 0) return;
        if (count_ == uses_.size()) grow();  // only if the in-flight bound was wrong
        uses_[(first_ + count_) % uses_.size()] = {begin, begin + n, value};
        ++count_;
        head_ = begin + n;
    }

private:
    struct Use {
        size_t begin, end;
        uint64_t value;
    };
    void grow() {
        std::vector<Use> bigger(uses_.size() * 2 + 1);
        for (size_t i = 0; i < count_; ++i) bigger[i] = uses_[(first_ + i) % uses_.size()];
        uses_ = std::move(bigger);
        first_ = 0;
    }

    size_t capacity_ = 0;
    size_t head_ = 0;
    std::vector<Use> uses_ = std::vector<Use>(1);  // circular: count_ records from first_
    size_t first_ = 0, count_ = 0;
};

}  // namespace nvl::hw
