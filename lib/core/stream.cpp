#include "core/stream.h"

#include <atomic>

#include "core/context.h"
#include "core/handle_registry.h"
#include "core/runtime.h"

namespace nvl::core {

Stream* Stream::fromHandle(const void* handle) {
    std::shared_ptr<Stream> s = HandleRegistry<Stream>::get().find(handle);
    Stream* raw = s.get();
    CallScope::keep(std::move(s));
    return raw;
}

void Dependencies::add(Point p) {
    if (!p.channel) return;
    for (size_t i = 0; i < count_; ++i) {
        if (points_[i].channel == p.channel) {
            if (p.value > points_[i].value) points_[i].value = p.value;
            return;
        }
    }
    if (count_ < kMax) points_[count_++] = p;
}

uint32_t Dependencies::open(const hw::Channel& ch) const {
    uint32_t mask = 0;
    for (size_t i = 0; i < count_; ++i)
        if (points_[i].channel != &ch && !points_[i].done()) mask |= uint32_t{1} << i;
    return mask;
}

void Dependencies::pruneDone() {
    size_t kept = 0;
    for (size_t i = 0; i < count_; ++i)
        if (!points_[i].done()) points_[kept++] = points_[i];
    count_ = kept;
}

bool Dependencies::covers(const Dependencies& other, bool reachedCount) const {
    for (const Point& p : other) {
        if (reachedCount && p.done()) continue;
        bool found = false;
        for (const Point& q : *this)
            if (q.channel == p.channel && q.value >= p.value) found = true;
        if (!found) return false;
    }
    return true;
}

uint64_t Stream::newId() {
    static std::atomic<uint64_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

void Stream::collect(Dependencies& deps, const Point* extra, bool submitting) const {
    deps.add(submitting ? last_ : last());
    if (kind_ == Kind::Legacy) ctx_.addBlockingStreamPoints(deps);
    else if (kind_ == Kind::Blocking) deps.add(ctx_.nullStream().last());
    if (extra) deps.add(*extra);
}

bool Stream::quiet() const {
    Dependencies deps;
    collect(deps, nullptr);
    for (const Point& p : deps)
        if (!p.done()) return false;
    return true;
}

Status Stream::afterSubmit(hw::Channel& ch, uint64_t value) const {
    if (!Runtime::get().launchBlocking()) return kOk;
    Status s = ch.wait(value);
    ctx_.flushDeviceOutput();
    return s;
}

// The legacy stream's work includes, as in libcuda, what the blocking streams
// submitted before it was asked: its query and synchronisation cover them.
Dependencies Stream::work(bool withImplicit) const {
    Dependencies deps;
    deps.add(last());
    if (kind_ == Kind::Legacy && withImplicit) ctx_.addBlockingStreamPoints(deps);
    return deps;
}

Status Stream::query(bool withImplicit) const {
    for (const Point& p : work(withImplicit)) {
        if (p.done()) continue;
        NVL_TRY(p.channel->scopeError());
        return CUDA_ERROR_NOT_READY;
    }
    return kOk;
}

Status Stream::synchronize(bool withImplicit) const {
    Status s = kOk;
    for (const Point& p : work(withImplicit)) {
        s = p.channel->wait(p.value);
        if (!s.ok()) break;
    }
    ctx_.flushDeviceOutput();
    return s;
}

Status Stream::waitFor(Point p) {
    if (p.done()) return kOk;
    hw::Channel& ch = lastChannelOr(computeChannel());
    return submit(ch, 0, [](hw::PushWriter&) {}, &p).status();
}

Status Stream::waitForAll(const Dependencies& points) {
    Dependencies open = points;
    open.pruneDone();
    if (open.size() == 0) return kOk;
    hw::Channel& ch = lastChannelOr(computeChannel());
    return submitWithData(
               ch, 0, 0, [](hw::PushWriter&, const hw::Channel::DataSlot&) {}, nullptr,
               hw::Channel::Completion::Channel, &open)
        .status();
}

Dependencies Stream::followed() const {
    Dependencies deps = upcoming();
    deps.merge(known());
    return deps;
}

}  // namespace nvl::core
