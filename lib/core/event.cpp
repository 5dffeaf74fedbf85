#include "core/event.h"

#include <array>
#include <mutex>

#include "core/handle_registry.h"

namespace nvl::core {

Result<Event*> Event::create(Context& ctx, unsigned flags) {
    std::shared_ptr<Event> e(new Event(ctx, flags));
    e->keep_ = ctx.shared_from_this();
    if (e->timed()) {
        NVL_ASSIGN_OR_RETURN(e->slot_, ctx.allocTimestamp());
    }
    Event* raw = e.get();
    ctx.addEvent(e);
    HandleRegistry<Event>::get().add(std::move(e));
    return raw;
}

Event* Event::fromHandle(const void* handle) {
    std::shared_ptr<Event> e = HandleRegistry<Event>::get().find(handle);
    Event* raw = e.get();
    CallScope::keep(std::move(e));
    return raw;
}

bool Event::destroy(Event* e) {
    if (!HandleRegistry<Event>::get().remove(e)) return false;
    Context::TimestampSlot slot;
    Point pending;
    {
        std::lock_guard lock(e->mutex_);
        e->destroyed_ = true;
        slot = e->slot_;
        pending = e->point_;
        e->slot_ = {};
    }
    // A slot the GPU may still write goes back to the pool once it is written.
    if (slot.cpu) e->ctx_.freeTimestamp(slot, pending);
    e->ctx_.removeEvent(e);
    return true;
}

namespace {

// Handles of the last events their contexts' destroys took (addresses only).
struct Forgotten {
    std::mutex mutex;
    std::array<const void*, 256> handles{};
    size_t next = 0;
};
Forgotten& forgotten() {
    static auto* f = new Forgotten();
    return *f;
}

}  // namespace

void Event::forget(Event& e) {
    HandleRegistry<Event>::get().remove(&e);
    Forgotten& f = forgotten();
    std::lock_guard lock(f.mutex);
    f.handles[f.next++ % f.handles.size()] = &e;
}

bool Event::goneWithContext(const void* handle) {
    if (!handle) return false;
    Forgotten& f = forgotten();
    std::lock_guard lock(f.mutex);
    for (const void* h : f.handles)
        if (h == handle) return true;
    return false;
}

Status Event::record(Stream& stream) {
    std::lock_guard lock(mutex_);
    if (destroyed_) return CUDA_ERROR_INVALID_HANDLE;  // destroyed while this call ran
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
    // Timestamps are in the slot's second quadword (read under the lock: a
    // destroy on another thread takes the slot away).
    auto stamp = [](const Event& e, uint64_t* t) {
        std::lock_guard lock(e.mutex_);
        if (!e.slot_.cpu) return false;
        *t = e.slot_.cpu[1];
        return true;
    };
    uint64_t t0 = 0, t1 = 0;
    if (!stamp(start, &t0) || !stamp(end, &t1)) return CUDA_ERROR_INVALID_HANDLE;
    const double ms = (static_cast<double>(t1) - static_cast<double>(t0)) / 1e6;
    return static_cast<float>(ms);
}

}  // namespace nvl::core
