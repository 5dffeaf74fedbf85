// A stream: work that runs in order, whichever engine's channel it goes to.
// When consecutive operations use different channels (a copy after a
// kernel), the later one first waits for the earlier one's timeline value
// on the GPU — the CPU never waits to keep the order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "common/status.h"
#include "hw/channel.h"

namespace nvl::core {

class Stream {
public:
    Stream() = default;

    // Submits on 'ch' after everything submitted to this stream before.
    template <class Fill>
    Result<uint64_t> submit(hw::Channel& ch, size_t dwords, Fill&& fill) {
        return submitWithData(ch, dwords, 0, [&](hw::PushWriter& w, const hw::Channel::DataSlot&) { fill(w); });
    }
    template <class Fill>
    Result<uint64_t> submitWithData(hw::Channel& ch, size_t dwords, size_t dataBytes, Fill&& fill) {
        std::lock_guard lock(mutex_);
        hw::Channel* prevChannel = last_.channel;
        const uint64_t prevValue = last_.value;
        const bool mustWait = prevChannel && prevChannel != &ch && !prevChannel->isDone(prevValue);
        NVL_ASSIGN_OR_RETURN(uint64_t value,
                             ch.submitWithData(dwords + hw::Channel::kWaitDwords, dataBytes,
                                               [&](hw::PushWriter& w, const hw::Channel::DataSlot& slot) {
                                                   if (mustWait) prevChannel->writeWait(w, prevValue);
                                                   fill(w, slot);
                                               }));
        last_ = {&ch, value};
        return value;
    }

    bool idle() const {
        Point p = last();
        return !p.channel || p.channel->isDone(p.value);
    }
    Status synchronize() const {
        Point p = last();
        return p.channel ? p.channel->wait(p.value) : kOk;
    }
    // Forgets the channels (before they are destroyed).
    void reset() {
        std::lock_guard lock(mutex_);
        last_ = {};
    }

private:
    // The stream's newest work.
    struct Point {
        hw::Channel* channel = nullptr;
        uint64_t value = 0;
    };
    Point last() const {
        std::lock_guard lock(mutex_);
        return last_;
    }

    mutable std::mutex mutex_;
    Point last_;
};

}  // namespace nvl::core
