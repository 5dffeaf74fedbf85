// cuStream* and cuEvent*.
#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>

#include "api/api_internal.h"
#include "api/entry.h"
#include "core/context.h"
#include "core/event.h"
#include "core/runtime.h"
#include "core/stream.h"

// The old names (libcuda still exports them) next to the _v2 ones.
#undef cuStreamDestroy
#undef cuEventDestroy
#undef cuEventElapsedTime

using namespace nvl;
using nvl::api::entry;
using core::Context;
using core::Event;
using core::Stream;

namespace {

// Stream priorities: lower numbers are higher priorities (as libcuda on this
// GPU generation). They are kept and reported; the hardware runs every lane
// of a context at the same priority.
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;

// Handles of recently destroyed events: libcuda answers them with
// CUDA_ERROR_CONTEXT_IS_DESTROYED, other unknown handles with
// CUDA_ERROR_INVALID_HANDLE (a bounded memory of the last ones).
class DestroyedEvents {
public:
    void add(const void* h) {
        std::lock_guard lock(mutex_);
        ring_[next_++ % ring_.size()] = h;
    }
    bool contains(const void* h) const {
        std::lock_guard lock(mutex_);
        return std::find(ring_.begin(), ring_.end(), h) != ring_.end();
    }

private:
    mutable std::mutex mutex_;
    std::array<const void*, 256> ring_{};
    size_t next_ = 0;
};
DestroyedEvents& destroyedEvents() {
    static auto* d = new DestroyedEvents();
    return *d;
}

Result<Event*> eventFor(CUevent h) {
    NVL_TRY(core::Runtime::get().checkInit());
    Event* e = Event::fromHandle(h);
    if (!e) return h && destroyedEvents().contains(h) ? CUDA_ERROR_CONTEXT_IS_DESTROYED : CUDA_ERROR_INVALID_HANDLE;
    if (!core::CallScope::use(e->context())) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (CUresult sticky = e->context().stickyError(); sticky != CUDA_SUCCESS) return sticky;
    return e;
}

Status createStream(CUstream* ph, unsigned flags, int priority) {
    NVL_TRY(core::Runtime::get().checkInit());
    // Arguments before the context, as libcuda.
    if (!ph) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    // Out-of-range priorities are clamped, as libcuda does.
    if (priority < kGreatestPriority) priority = kGreatestPriority;
    if (priority > kLeastPriority) priority = kLeastPriority;
    NVL_ASSIGN_OR_RETURN(Stream * st, ctx->createStream(flags, priority));
    *ph = reinterpret_cast<CUstream>(st);
    return kOk;
}

// 'perThread': a NULL handle means the calling thread's default stream (the
// _ptsz entry points).
Status streamQuery(CUstream h, bool perThread = false) {
    NVL_ASSIGN_OR_RETURN(Stream * st, api::resolveStream(h));
    const bool own = h == CU_STREAM_PER_THREAD || (perThread && h == nullptr);
    return st->context().noted(st->query(!own));
}

Status streamSynchronize(CUstream h, bool perThread = false) {
    NVL_ASSIGN_OR_RETURN(Stream * st, api::resolveStream(h));
    const bool own = h == CU_STREAM_PER_THREAD || (perThread && h == nullptr);
    return st->context().noted(st->synchronize(!own));
}

Status streamWaitEvent(CUstream h, CUevent ev, unsigned flags) {
    NVL_ASSIGN_OR_RETURN(Stream * st, api::resolveStream(h));
    NVL_ASSIGN_OR_RETURN(Event * e, eventFor(ev));
    if (flags & ~static_cast<unsigned>(CU_EVENT_WAIT_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
    // External waits belong to stream capture, which nvlite does not do (libcuda: illegal state).
    if (flags & CU_EVENT_WAIT_EXTERNAL) return CUDA_ERROR_ILLEGAL_STATE;
    // An event of another context: its semaphore is not the stream's
    // context's to acquire (that context may fault or go away, or sit on
    // another GPU), so the host waits for it instead.
    if (&e->context() != &st->context()) return e->context().noted(e->synchronize());
    return st->context().noted(st->waitFor(e->point()));
}

Status streamGetPriority(CUstream h, int* priority) {
    NVL_ASSIGN_OR_RETURN(Stream * st, api::resolveStream(h));
    if (!priority) return CUDA_ERROR_INVALID_VALUE;
    *priority = st->priority();
    return kOk;
}

Status streamGetFlags(CUstream h, unsigned* flags) {
    NVL_ASSIGN_OR_RETURN(Stream * st, api::resolveStream(h));
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    *flags = st->flags();
    return kOk;
}

Status streamGetCtx(CUstream h, CUcontext* pctx) {
    NVL_ASSIGN_OR_RETURN(Stream * st, api::resolveStream(h));
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = st->context().handle();
    return kOk;
}

Status eventRecord(CUevent ev, CUstream h, unsigned flags) {
    NVL_ASSIGN_OR_RETURN(Event * e, eventFor(ev));
    if (flags & ~static_cast<unsigned>(CU_EVENT_RECORD_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
    if (flags & CU_EVENT_RECORD_EXTERNAL) return CUDA_ERROR_ILLEGAL_STATE;  // capture only (libcuda)
    // NULL is the current context's legacy stream: an event of another
    // context does not go there.
    NVL_ASSIGN_OR_RETURN(Stream * st, api::resolveStream(h));
    if (&st->context() != &e->context()) return CUDA_ERROR_INVALID_HANDLE;
    return e->context().noted(e->record(*st));
}

#define PTR(p) static_cast<const void*>(p)

}  // namespace

// ------------------------------------------------------------------ streams

NVL_EXPORT CUresult cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
    return entry("cuCtxGetStreamPriorityRange", [&]() -> Status {
        NVL_TRY(core::requireCurrent().status());
        if (leastPriority) *leastPriority = kLeastPriority;
        if (greatestPriority) *greatestPriority = kGreatestPriority;
        return kOk;
    }, "%p, %p", PTR(leastPriority), PTR(greatestPriority));
}

NVL_EXPORT CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) {
    return entry("cuStreamCreate", [&] { return createStream(phStream, Flags, kLeastPriority); }, "%p, %u",
                 PTR(phStream), Flags);
}

NVL_EXPORT CUresult cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
    return entry("cuStreamCreateWithPriority", [&] { return createStream(phStream, flags, priority); }, "%p, %u, %d",
                 PTR(phStream), flags, priority);
}

NVL_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream) {
    return entry("cuStreamDestroy_v2", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        // Not found, of a context being destroyed, or destroyed by another
        // thread meanwhile: CUDA_ERROR_INVALID_HANDLE.
        Stream* st = Stream::fromHandle(hStream);
        if (!st || !core::CallScope::use(st->context()) || !st->context().destroyStream(st))
            return CUDA_ERROR_INVALID_HANDLE;
        return kOk;
    }, "%p", PTR(hStream));
}

NVL_EXPORT CUresult cuStreamDestroy(CUstream hStream) { return cuStreamDestroy_v2(hStream); }

NVL_EXPORT CUresult cuStreamQuery(CUstream hStream) {
    return entry("cuStreamQuery", [&] { return streamQuery(hStream); }, "%p", PTR(hStream));
}
NVL_EXPORT CUresult cuStreamQuery_ptsz(CUstream hStream) {
    return entry("cuStreamQuery_ptsz", [&] { return streamQuery(hStream, true); }, "%p", PTR(hStream));
}

NVL_EXPORT CUresult cuStreamSynchronize(CUstream hStream) {
    return entry("cuStreamSynchronize", [&] { return streamSynchronize(hStream); }, "%p", PTR(hStream));
}
NVL_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream) {
    return entry("cuStreamSynchronize_ptsz", [&] { return streamSynchronize(hStream, true); }, "%p", PTR(hStream));
}

NVL_EXPORT CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
    return entry("cuStreamWaitEvent", [&] { return streamWaitEvent(hStream, hEvent, Flags); }, "%p, %p, %u",
                 PTR(hStream), PTR(hEvent), Flags);
}
NVL_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags) {
    return entry("cuStreamWaitEvent_ptsz", [&] { return streamWaitEvent(hStream, hEvent, Flags); }, "%p, %p, %u",
                 PTR(hStream), PTR(hEvent), Flags);
}

NVL_EXPORT CUresult cuStreamGetPriority(CUstream hStream, int* priority) {
    return entry("cuStreamGetPriority", [&] { return streamGetPriority(hStream, priority); }, "%p, %p", PTR(hStream),
                 PTR(priority));
}
NVL_EXPORT CUresult cuStreamGetPriority_ptsz(CUstream hStream, int* priority) {
    return entry("cuStreamGetPriority_ptsz", [&] { return streamGetPriority(hStream, priority); }, "%p, %p",
                 PTR(hStream), PTR(priority));
}

NVL_EXPORT CUresult cuStreamGetFlags(CUstream hStream, unsigned int* flags) {
    return entry("cuStreamGetFlags", [&] { return streamGetFlags(hStream, flags); }, "%p, %p", PTR(hStream),
                 PTR(flags));
}
NVL_EXPORT CUresult cuStreamGetFlags_ptsz(CUstream hStream, unsigned int* flags) {
    return entry("cuStreamGetFlags_ptsz", [&] { return streamGetFlags(hStream, flags); }, "%p, %p", PTR(hStream),
                 PTR(flags));
}

NVL_EXPORT CUresult cuStreamGetCtx(CUstream hStream, CUcontext* pctx) {
    return entry("cuStreamGetCtx", [&] { return streamGetCtx(hStream, pctx); }, "%p, %p", PTR(hStream), PTR(pctx));
}
NVL_EXPORT CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext* pctx) {
    return entry("cuStreamGetCtx_ptsz", [&] { return streamGetCtx(hStream, pctx); }, "%p, %p", PTR(hStream),
                 PTR(pctx));
}

// ------------------------------------------------------------------ events

NVL_EXPORT CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
    return entry("cuEventCreate", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
        if (!phEvent) return CUDA_ERROR_INVALID_VALUE;
        constexpr unsigned kKnown = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
        if (Flags & ~kKnown) return CUDA_ERROR_INVALID_VALUE;
        // An interprocess event must not be timed.
        if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(Event * e, Event::create(*ctx, Flags));
        *phEvent = reinterpret_cast<CUevent>(e);
        return kOk;
    }, "%p, %u", PTR(phEvent), Flags);
}

NVL_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
    return entry("cuEventRecord", [&] { return eventRecord(hEvent, hStream, 0); }, "%p, %p", PTR(hEvent), PTR(hStream));
}
NVL_EXPORT CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) {
    return entry("cuEventRecord_ptsz", [&] { return eventRecord(hEvent, hStream, 0); }, "%p, %p", PTR(hEvent),
                 PTR(hStream));
}

NVL_EXPORT CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
    return entry("cuEventRecordWithFlags", [&] { return eventRecord(hEvent, hStream, flags); }, "%p, %p, %u",
                 PTR(hEvent), PTR(hStream), flags);
}
NVL_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags) {
    return entry("cuEventRecordWithFlags_ptsz", [&] { return eventRecord(hEvent, hStream, flags); }, "%p, %p, %u",
                 PTR(hEvent), PTR(hStream), flags);
}

NVL_EXPORT CUresult cuEventQuery(CUevent hEvent) {
    return entry("cuEventQuery", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Event * e, eventFor(hEvent));
        return e->context().noted(e->query());
    }, "%p", PTR(hEvent));
}

NVL_EXPORT CUresult cuEventSynchronize(CUevent hEvent) {
    return entry("cuEventSynchronize", [&]() -> Status {
        NVL_ASSIGN_OR_RETURN(Event * e, eventFor(hEvent));
        return e->context().noted(e->synchronize());
    }, "%p", PTR(hEvent));
}

NVL_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent) {
    return entry("cuEventDestroy_v2", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        Event* e = Event::fromHandle(hEvent);
        if (!e)
            return hEvent && destroyedEvents().contains(hEvent) ? CUDA_ERROR_CONTEXT_IS_DESTROYED
                                                                : CUDA_ERROR_INVALID_HANDLE;
        // Of a context being destroyed: gone with it.
        if (!core::CallScope::use(e->context())) return CUDA_ERROR_INVALID_HANDLE;
        // Destroyed by another thread meanwhile: as libcuda answers a destroyed event.
        if (!Event::destroy(e)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
        destroyedEvents().add(hEvent);
        return kOk;
    }, "%p", PTR(hEvent));
}

NVL_EXPORT CUresult cuEventDestroy(CUevent hEvent) { return cuEventDestroy_v2(hEvent); }

NVL_EXPORT CUresult cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
    return entry("cuEventElapsedTime_v2", [&]() -> Status {
        NVL_TRY(core::Runtime::get().checkInit());
        // libcuda answers a missing result pointer with CUDA_ERROR_INVALID_HANDLE.
        if (!pMilliseconds) return CUDA_ERROR_INVALID_HANDLE;
        NVL_ASSIGN_OR_RETURN(Event * a, eventFor(hStart));
        NVL_ASSIGN_OR_RETURN(Event * b, eventFor(hEnd));
        if (&a->context() != &b->context()) return CUDA_ERROR_INVALID_HANDLE;
        NVL_ASSIGN_OR_RETURN(*pMilliseconds, Event::elapsedMs(*a, *b));
        return kOk;
    }, "%p, %p, %p", PTR(pMilliseconds), PTR(hStart), PTR(hEnd));
}

NVL_EXPORT CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
    return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}
