// cuStream* and cuEvent*.
#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>

#include "api/api_internal.h"
#include "api/entry.h"
#include "api/entry_impls.h"
#include "core/context.h"
#include "core/device.h"
#include "core/event.h"
#include "core/handle_registry.h"
#include "core/host_func.h"
#include "core/mem_pool.h"
#include "core/runtime.h"
#include "core/stream.h"

namespace nvl::api {

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
    if (!e) return h && (destroyedEvents().contains(h) || Event::goneWithContext(h)) ? CUDA_ERROR_CONTEXT_IS_DESTROYED : CUDA_ERROR_INVALID_HANDLE;
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

// Whether a handle names the calling thread's default stream, whose own
// work is all a query or synchronisation covers (the legacy stream's also
// covers the blocking streams).
bool threadDefault(CUstream h) { return h == CU_STREAM_PER_THREAD || (h == nullptr && perThreadDefaultStream()); }

Status record(CUevent ev, CUstream h, unsigned flags) {
    NVL_ASSIGN_OR_RETURN(Event * e, eventFor(ev));
    if (flags & ~static_cast<unsigned>(CU_EVENT_RECORD_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
    if (flags & CU_EVENT_RECORD_EXTERNAL) return CUDA_ERROR_ILLEGAL_STATE;  // capture only (libcuda)
    // NULL is the current context's legacy stream: an event of another
    // context does not go there.
    NVL_ASSIGN_OR_RETURN(Stream * st, resolveStream(h));
    if (&st->context() != &e->context()) return CUDA_ERROR_INVALID_HANDLE;
    return e->context().noted(e->record(*st));
}

}  // namespace

// ------------------------------------------------------------------ streams

Status ctxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
    NVL_TRY(core::requireCurrent().status());
    if (leastPriority) *leastPriority = kLeastPriority;
    if (greatestPriority) *greatestPriority = kGreatestPriority;
    return kOk;
}

Status streamCreate(CUstream* phStream, unsigned int Flags) { return createStream(phStream, Flags, kLeastPriority); }

Status streamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
    return createStream(phStream, flags, priority);
}

Status streamDestroy(CUstream hStream) {
    NVL_TRY(core::Runtime::get().checkInit());
    // Not found, of a context being destroyed, or destroyed by another
    // thread meanwhile: CUDA_ERROR_INVALID_HANDLE.
    Stream* st = Stream::fromHandle(hStream);
    if (!st || !core::CallScope::use(st->context()) || !st->context().destroyStream(st))
        return CUDA_ERROR_INVALID_HANDLE;
    return kOk;
}

Status streamQuery(CUstream hStream) {
    NVL_ASSIGN_OR_RETURN(Stream * st, resolveStream(hStream));
    return st->context().noted(st->query(!threadDefault(hStream)));
}

Status synchronized(Context& ctx, Status s) {
    // Work that failed without a fault of a channel (a device-side launch
    // the host could not make, core/device_launch.h) left the context failed.
    if (s.ok()) {
        if (CUresult sticky = ctx.stickyError(); sticky != CUDA_SUCCESS) return sticky;
        core::MemPools::get().afterSynchronize(ctx.device());
    }
    return s;
}

Status streamSynchronize(CUstream hStream) {
    NVL_ASSIGN_OR_RETURN(Stream * st, resolveStream(hStream));
    return synchronized(st->context(), st->context().noted(st->synchronize(!threadDefault(hStream))));
}

Status streamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
    NVL_ASSIGN_OR_RETURN(Stream * st, resolveStream(hStream));
    NVL_ASSIGN_OR_RETURN(Event * e, eventFor(hEvent));
    if (Flags & ~static_cast<unsigned>(CU_EVENT_WAIT_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
    // External waits belong to stream capture, which nvlite does not do (libcuda: illegal state).
    if (Flags & CU_EVENT_WAIT_EXTERNAL) return CUDA_ERROR_ILLEGAL_STATE;
    // An event of another context: its semaphore is not the stream's
    // context's to acquire (that context may fault or go away, or sit on
    // another GPU), so the host waits for it instead.
    if (&e->context() != &st->context()) return e->context().noted(e->synchronize());
    NVL_TRY(st->context().noted(st->waitFor(e->point())));
    st->learn(e->known());  // what the event followed, the stream now follows (stream-ordered reuse)
    return kOk;
}

Status streamGetPriority(CUstream hStream, int* priority) {
    NVL_ASSIGN_OR_RETURN(Stream * st, resolveStream(hStream));
    if (!priority) return CUDA_ERROR_INVALID_VALUE;
    *priority = st->priority();
    return kOk;
}

Status streamGetFlags(CUstream hStream, unsigned int* flags) {
    NVL_ASSIGN_OR_RETURN(Stream * st, resolveStream(hStream));
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    *flags = st->flags();
    return kOk;
}

Status streamGetCtx(CUstream hStream, CUcontext* pctx) {
    NVL_ASSIGN_OR_RETURN(Stream * st, resolveStream(hStream));
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = st->context().handle();
    return kOk;
}

// nvlite has no green contexts: the stream's context, and no green one.
Status streamGetCtxV2(CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx) {
    NVL_ASSIGN_OR_RETURN(Stream * st, resolveStream(hStream));
    if (!pCtx || !pGreenCtx) return CUDA_ERROR_INVALID_VALUE;
    *pCtx = st->context().handle();
    *pGreenCtx = nullptr;
    return kOk;
}

// CU_STREAM_PER_THREAD is served by the legacy stream (README): one id.
Status streamGetId(CUstream hStream, unsigned long long* streamId) {
    NVL_ASSIGN_OR_RETURN(Stream * st, resolveStream(hStream));
    if (!streamId) return CUDA_ERROR_INVALID_VALUE;
    *streamId = st->id();
    return kOk;
}

Status streamGetDevice(CUstream hStream, CUdevice* device) {
    NVL_ASSIGN_OR_RETURN(Stream * st, resolveStream(hStream));
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    *device = st->context().device().ordinal();
    return kOk;
}

// Stream capture is not something nvlite does (cuStreamBeginCapture is not
// provided): every stream answers "not capturing", and the other results
// are left alone, as libcuda leaves them when the status is not ACTIVE.
Status streamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
    NVL_TRY(resolveStream(hStream).status());
    if (!captureStatus) return CUDA_ERROR_INVALID_VALUE;
    *captureStatus = CU_STREAM_CAPTURE_STATUS_NONE;
    return kOk;
}

Status streamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out) {
    (void)id_out;
    return streamIsCapturing(hStream, captureStatus_out);
}

Status streamGetCaptureInfoV2(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out,
                              CUgraph* graph_out, const CUgraphNode** dependencies_out, size_t* numDependencies_out) {
    (void)graph_out, (void)dependencies_out, (void)numDependencies_out;
    return streamGetCaptureInfo(hStream, captureStatus_out, id_out);
}

Status streamGetCaptureInfoV3(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out,
                              CUgraph* graph_out, const CUgraphNode** dependencies_out,
                              const CUgraphEdgeData** edgeData_out, size_t* numDependencies_out) {
    if (edgeData_out && !dependencies_out) return CUDA_ERROR_INVALID_VALUE;
    return streamGetCaptureInfoV2(hStream, captureStatus_out, id_out, graph_out, dependencies_out,
                                  numDependencies_out);
}

// ------------------------------------------------------------------ host functions

Status launchHostFunc(CUstream hStream, CUhostFn fn, void* userData) {
    NVL_ASSIGN_OR_RETURN(Stream * st, resolveStream(hStream));
    if (!fn) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::HostFunctions * hf, st->context().hostFunctions());
    core::HostFunctions::Call call;
    call.function = fn;
    call.userData = userData;
    return st->context().noted(hf->enqueue(*st, call));
}

Status streamAddCallback(CUstream hStream, CUstreamCallback callback, void* userData, unsigned int flags) {
    NVL_ASSIGN_OR_RETURN(Stream * st, resolveStream(hStream));
    if (!callback || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(core::HostFunctions * hf, st->context().hostFunctions());
    core::HostFunctions::Call call;
    call.callback = callback;
    call.stream = hStream;
    call.userData = userData;
    return st->context().noted(hf->enqueue(*st, call));
}

// ------------------------------------------------------------------ events

Status eventCreate(CUevent* phEvent, unsigned int Flags) {
    NVL_ASSIGN_OR_RETURN(Context * ctx, core::requireCurrent());
    if (!phEvent) return CUDA_ERROR_INVALID_VALUE;
    constexpr unsigned kKnown = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (Flags & ~kKnown) return CUDA_ERROR_INVALID_VALUE;
    // An interprocess event must not be timed.
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(Event * e, Event::create(*ctx, Flags));
    *phEvent = reinterpret_cast<CUevent>(e);
    return kOk;
}

Status eventRecord(CUevent hEvent, CUstream hStream) { return record(hEvent, hStream, 0); }

Status eventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
    return record(hEvent, hStream, flags);
}

Status eventQuery(CUevent hEvent) {
    NVL_ASSIGN_OR_RETURN(Event * e, eventFor(hEvent));
    return e->context().noted(e->query());
}

Status eventSynchronize(CUevent hEvent) {
    NVL_ASSIGN_OR_RETURN(Event * e, eventFor(hEvent));
    return synchronized(e->context(), e->context().noted(e->synchronize()));
}

Status eventDestroy(CUevent hEvent) {
    NVL_TRY(core::Runtime::get().checkInit());
    Event* e = Event::fromHandle(hEvent);
    if (!e)
        return hEvent && (destroyedEvents().contains(hEvent) || Event::goneWithContext(hEvent)) ? CUDA_ERROR_CONTEXT_IS_DESTROYED
                                                            : CUDA_ERROR_INVALID_HANDLE;
    // Of a context being destroyed: gone with it.
    if (!core::CallScope::use(e->context())) return CUDA_ERROR_INVALID_HANDLE;
    // Destroyed by another thread meanwhile: as libcuda answers a destroyed event.
    if (!Event::destroy(e)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    destroyedEvents().add(hEvent);
    return kOk;
}

Status eventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
    NVL_TRY(core::Runtime::get().checkInit());
    // libcuda answers a missing result pointer with CUDA_ERROR_INVALID_HANDLE.
    if (!pMilliseconds) return CUDA_ERROR_INVALID_HANDLE;
    NVL_ASSIGN_OR_RETURN(Event * a, eventFor(hStart));
    NVL_ASSIGN_OR_RETURN(Event * b, eventFor(hEnd));
    if (&a->context() != &b->context()) return CUDA_ERROR_INVALID_HANDLE;
    NVL_ASSIGN_OR_RETURN(*pMilliseconds, Event::elapsedMs(*a, *b));
    return kOk;
}

}  // namespace nvl::api
