// A stream: work that runs in order, whichever engine's channel it goes to.
// When consecutive operations use different channels (a copy after a
// kernel), the later one first waits for the earlier one's timeline value
// on the GPU — the CPU never waits to keep the order.
//
// Each stream submits to the channels of one lane of its context (lane 0 is
// the legacy stream's), so streams on different lanes run side by side on
// the GPU (kernels with kernels, copies with kernels). The legacy (NULL) stream and the blocking streams order themselves
// against each other as in libcuda: an operation in the legacy stream waits
// for the work of every blocking stream submitted before it, an operation in
// a blocking stream waits for the legacy stream's work. Non-blocking streams
// wait for nothing but themselves (and the events they are told to).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "common/status.h"
#include "hw/channel.h"
#include "hw/channel_group.h"

namespace nvl::core {

class Context;
class DeviceLaunchQueue;

// A context's lanes: 0 is the legacy stream's, 1 .. kStreamLanes the ones
// streams take in turn, the last the grids kernels launch
// (core/device_launch.h).
inline constexpr size_t kStreamLanes = 7;
inline constexpr size_t kDeviceLaunchLane = kStreamLanes + 1;
inline constexpr size_t kMaxLanes = kDeviceLaunchLane + 1;

// A place on one channel's timeline: the work before it is done once the
// channel reaches 'value'.
struct Point {
    hw::Channel* channel = nullptr;
    uint64_t value = 0;
    bool done() const { return !channel || channel->isDone(value); }
};

// The points an operation waits for, at most one per channel (the latest).
class Dependencies {
public:
    void add(Point p);
    // The points to wait for before work on 'ch' (bit i: the i-th point):
    // those not reached and not on 'ch' (its own order covers them).
    uint32_t open(const hw::Channel& ch) const;
    const Point& operator[](size_t i) const { return points_[i]; }
    // Drops the points already reached.
    void pruneDone();
    // Adds every point of 'other'.
    void merge(const Dependencies& other) {
        for (const Point& p : other) add(p);
    }
    // Every point of 'other' is at or before a point of this set on its
    // channel ('reachedCount': or already reached).
    bool covers(const Dependencies& other, bool reachedCount = true) const;
    void clear() { count_ = 0; }
    size_t size() const { return count_; }
    const Point* begin() const { return points_; }
    const Point* end() const { return points_ + count_; }

private:
    // At most one point per channel: two channels per lane.
    static constexpr size_t kMax = 2 * kMaxLanes;
    static_assert(kMax <= 32, "open() answers in 32 bits");
    Point points_[kMax];
    size_t count_ = 0;
};

class Stream {
public:
    enum class Kind { Legacy, Blocking, NonBlocking };
    Stream(Context& ctx, Kind kind, unsigned flags, int priority)
        : ctx_(ctx), kind_(kind), flags_(flags), priority_(priority), id_(newId()) {}
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    // The live stream behind a handle (kept for the calling API call), or nullptr.
    static Stream* fromHandle(const void* handle);

    Context& context() const { return ctx_; }
    // A created stream keeps its context's object alive (not its resources).
    void keepContext(std::shared_ptr<Context> c) { keep_ = std::move(c); }
    Kind kind() const { return kind_; }
    unsigned flags() const { return flags_; }
    int priority() const { return priority_; }
    // Unique in the process (cuStreamGetId).
    uint64_t id() const { return id_; }

    // The channels the stream submits to (set once, before any work).
    void setLane(size_t index, hw::ContextChannels::Lane lane) {
        laneIndex_ = index;
        lane_ = lane;
    }
    size_t laneIndex() const { return laneIndex_; }
    hw::Channel& copyChannel() const { return *lane_.copy; }
    hw::Channel& computeChannel() const { return *lane_.compute; }

    // Submits on 'ch' after everything this stream must follow (its own
    // work, the implicit legacy/blocking order and 'extra' when given).
    template <class Fill>
    Result<uint64_t> submit(hw::Channel& ch, size_t dwords, Fill&& fill, const Point* extra = nullptr) {
        return submitWithData(
            ch, dwords, 0, [&](hw::PushWriter& w, const hw::Channel::DataSlot&) { fill(w); }, extra);
    }
    // 'waited', when given, receives everything the submission comes after
    // (its own channel's earlier work included).
    template <class Fill>
    Result<uint64_t> submitWithData(hw::Channel& ch, size_t dwords, size_t dataBytes, Fill&& fill,
                                    const Point* extra = nullptr,
                                    hw::Channel::Completion completion = hw::Channel::Completion::Channel,
                                    const Dependencies* extraSet = nullptr, Dependencies* waited = nullptr) {
        std::lock_guard lock(submitMutex_);
        if (retired_) return CUDA_ERROR_INVALID_HANDLE;  // destroyed while this call ran
        Dependencies deps;
        collect(deps, extra, true);
        if (extraSet) deps.merge(*extraSet);
        if (waited) *waited = deps;
        const uint32_t open = deps.open(ch);
        NVL_ASSIGN_OR_RETURN(uint64_t value,
                             ch.submitWithData(dwords + std::popcount(open) * hw::Channel::kWaitDwords, dataBytes,
                                               [&](hw::PushWriter& w, const hw::Channel::DataSlot& slot) {
                                                   for (uint32_t m = open; m; m &= m - 1) {
                                                       const Point& p = deps[std::countr_zero(m)];
                                                       p.channel->writeWait(w, p.value);
                                                   }
                                                   fill(w, slot);
                                               },
                                               completion, open != 0));
        setLast({&ch, value}, deps);
        NVL_TRY(afterSubmit(ch, value));
        return value;
    }

    // The stream's newest work.
    Point last() const {
        std::lock_guard lock(pointMutex_);
        return last_;
    }
    // The channel the stream's next operation is cheapest on when any will do.
    hw::Channel& lastChannelOr(hw::Channel& fallback) const {
        Point p = last();
        return p.channel ? *p.channel : fallback;
    }
    // Nothing this stream submitted is still running.
    bool idle() const { return last().done(); }
    // Nothing an operation submitted now would wait for is still running
    // (the stream's own work and the implicit order's).
    bool quiet() const;
    // cuStreamQuery: OK when idle, CUDA_ERROR_NOT_READY while work runs, or
    // the fault of the channel the work is on.
    // 'withImplicit': the legacy stream's query and synchronisation also
    // cover the blocking streams' work (libcuda's NULL stream); the
    // per-thread default stream, which nvlite serves with the legacy stream,
    // covers only its own.
    Status query(bool withImplicit = true) const;
    Status synchronize(bool withImplicit = true) const;
    // Makes the stream's later work wait for 'p' (cuStreamWaitEvent).
    Status waitFor(Point p);
    // Makes the stream's later work wait for every point of 'points'.
    Status waitForAll(const Dependencies& points);
    // What the stream's later work is known to come after: the points its
    // submissions waited for (the implicit order's and events' included),
    // its own, and those learnt from the events it waited for.
    Dependencies known() const {
        std::lock_guard lock(pointMutex_);
        return known_;
    }
    // The points an operation submitted now would wait for: the stream's
    // own work and the implicit order's.
    Dependencies upcoming() const {
        Dependencies deps;
        collect(deps, nullptr);
        return deps;
    }
    // Those and what the stream already follows: the stream's later work
    // comes after all of them.
    Dependencies followed() const;
    // Waits on the host for the points upcoming() names.
    Status waitUpcoming() const {
        for (const Point& p : upcoming()) NVL_TRY(p.channel->wait(p.value));
        return kOk;
    }
    // 'points' (an event's known set) precede the stream's later work: the
    // stream waited for them through an event.
    void learn(const Dependencies& points) {
        std::lock_guard lock(pointMutex_);
        known_.merge(points);
    }
    // Forgets the channels (before they are destroyed).
    void reset() {
        std::lock_guard lock(submitMutex_);
        std::lock_guard pointLock(pointMutex_);
        last_ = {};
        known_.clear();
    }
    // The queue its grids' device-side launches go to (core/device_launch.h;
    // set and read under DeviceLaunches' lock).
    std::shared_ptr<DeviceLaunchQueue> deviceLaunchQueue;

    // cuStreamDestroy: no submission after this; returns the newest work.
    Point retire() {
        std::lock_guard lock(submitMutex_);
        retired_ = true;
        return last();
    }

private:
    static uint64_t newId();
    // 'submitting': under submitMutex_, where last_ is read without
    // pointMutex_ (every write of it holds submitMutex_ too).
    void collect(Dependencies& deps, const Point* extra, bool submitting = false) const;
    // CUDA_LAUNCH_BLOCKING=1: every submission returns once it is done
    // (and what its kernel printed is out).
    Status afterSubmit(hw::Channel& ch, uint64_t value) const;
    // The work query() and synchronize() cover.
    Dependencies work(bool withImplicit) const;
    void setLast(Point p, const Dependencies& before) {
        std::lock_guard lock(pointMutex_);
        last_ = p;
        // At most one point per channel: reached ones stay (they are still followed).
        known_.merge(before);
        known_.add(p);
    }

    Context& ctx_;
    std::shared_ptr<Context> keep_;
    const Kind kind_;
    const unsigned flags_;
    const int priority_;
    const uint64_t id_;
    size_t laneIndex_ = 0;
    hw::ContextChannels::Lane lane_;
    // Lock order: submitMutex_, then the context's stream list, then any
    // stream's pointMutex_ (a leaf: held only to read or write last_).
    std::mutex submitMutex_;
    bool retired_ = false;  // under submitMutex_
    mutable std::mutex pointMutex_;
    Point last_;
    Dependencies known_;
};

}  // namespace nvl::core
