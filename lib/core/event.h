// A CUDA event: a point in a stream's work, with the GPU's time there.
//
// Recording submits, in the stream, a release of a 16-byte timestamp slot
// (payload and GPU time in ns) after the stream's earlier work; the event's
// point is that submission on its channel's timeline. Completion is a load of
// that channel's timeline, the elapsed time a difference of two GPU times.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "common/status.h"
#include "core/context.h"
#include "core/stream.h"

namespace nvl::core {

class Event {
public:
    static Result<Event*> create(Context& ctx, unsigned flags);
    // The live event behind a handle (kept for the calling API call), or nullptr.
    static Event* fromHandle(const void* handle);
    // cuEventDestroy: the GPU may still be about to write the slot, so the
    // slot goes back to the pool only once the recorded work is done. False
    // when another thread destroyed it first.
    static bool destroy(Event* e);
    // Its context is being destroyed: the handle goes.
    static void forget(Event& e);
    // Whether 'handle' was one of the last events a context's destroy took
    // (libcuda answers them with CUDA_ERROR_CONTEXT_IS_DESTROYED).
    static bool goneWithContext(const void* handle);

    Context& context() const { return ctx_; }
    unsigned flags() const { return flags_; }
    bool timed() const { return !(flags_ & CU_EVENT_DISABLE_TIMING); }

    Status record(Stream& stream);
    // OK when done (or never recorded), CUDA_ERROR_NOT_READY, or a fault.
    Status query() const;
    Status synchronize() const;
    // The recorded point (none when never recorded).
    Point point() const {
        std::lock_guard lock(mutex_);
        return point_;
    }
    // What the recorded point is known to come after (the recording
    // stream's known set then): a stream waiting for the event follows it too.
    Dependencies known() const {
        std::lock_guard lock(mutex_);
        return known_;
    }
    // cuEventElapsedTime: milliseconds from 'start' to 'end'.
    static Result<float> elapsedMs(const Event& start, const Event& end);

    // The context is going away: forget its resources without touching them.
    void detach() {
        std::lock_guard lock(mutex_);
        slot_ = {};
        point_ = {};
        destroyed_ = true;
    }

private:
    Event(Context& ctx, unsigned flags) : ctx_(ctx), flags_(flags) {}

    Context& ctx_;
    std::shared_ptr<Context> keep_;  // the object, not its resources
    const unsigned flags_;
    bool destroyed_ = false;  // under mutex_: no record after cuEventDestroy
    Context::TimestampSlot slot_;
    mutable std::mutex mutex_;
    Point point_;
    Dependencies known_;
    uint64_t sequence_ = 0;  // payload of the newest record
};

}  // namespace nvl::core
