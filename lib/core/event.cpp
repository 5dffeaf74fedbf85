#include "core/event.h"

#include "core/handle_registry.h"

namespace nvl::core {

Result<Event*> Event::create(Context& ctx, unsigned flags) {
    Event* e = new Event(ctx, flags);
    if (e->timed()) {
        auto slot = ctx.allocTimestamp();
        if (!slot) {
            delete e;
            return slot.status();
        }
        e->slot_ = *slot;
    }
    ctx.addEvent(e);
    HandleRegistry<Event>::get().add(e);
    return e;
}

void Event::destroy(Event* e) {
    HandleRegistry<Event>::get().remove(e);
    e->ctx_.removeEvent(e);
    // A slot the GPU may still write goes back to the pool once it is written.
    if (e->slot_.cpu) e->ctx_.freeTimestamp(e->slot_, e->point());
    delete e;
}

Status Event::record(Stream& stream) {
    std::lock_guard lock(mutex_);
    hw::Channel& ch = stream.lastChannelOr(stream.computeChannel());
    const uint64_t seq = sequence_ + 1;
    const uint64_t va = slot_.va;
    // A record still pending on another channel writes the same slot: this
    // one's write must come after it (and so must its completion).
    const Point previous = point_;
    const bool afterPrevious = va && previous.channel && previous.channel != &ch && !previous.done();
    NVL_ASSIGN_OR_RETURN(uint64_t value, stream.submit(
                                             ch, slot_.cpu ? hw::Channel::kTimestampDwords : 0,
                                             [&](hw::PushWriter& w) {
                                                 if (va) ch.writeTimestamp(w, va, seq);
                                             },
                                             afterPrevious ? &previous : nullptr));
    sequence_ = seq;
    point_ = {&ch, value};
    known_ = stream.known();
    return kOk;
}

Status Event::query() const {
    Point p = point();
    if (p.done()) return kOk;
    NVL_TRY(p.channel->scopeError());
    return CUDA_ERROR_NOT_READY;
}

Status Event::synchronize() const {
    Point p = point();
    if (!p.channel) return kOk;
    Status s = (flags_ & CU_EVENT_BLOCKING_SYNC) ? p.channel->wait(p.value, hw::WaitMode::Block) : p.channel->wait(p.value);
    ctx_.flushDeviceOutput();
    return s;
}

Result<float> Event::elapsedMs(const Event& start, const Event& end) {
    if (!start.timed() || !end.timed()) return CUDA_ERROR_INVALID_HANDLE;
    const Point a = start.point(), b = end.point();
    if (!a.channel || !b.channel) return CUDA_ERROR_INVALID_HANDLE;
    NVL_TRY(start.query());
    NVL_TRY(end.query());
    // Timestamps are in the slot's second quadword.
    const uint64_t t0 = start.slot_.cpu[1];
    const uint64_t t1 = end.slot_.cpu[1];
    const double ms = (static_cast<double>(t1) - static_cast<double>(t0)) / 1e6;
    return static_cast<float>(ms);
}

}  // namespace nvl::core
