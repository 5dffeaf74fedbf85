// A channel group (TSG): channels that share a runlist entry and a context
// share (their view of the GPU's VA space). One per engine a context uses.
#pragma once

#include <memory>
#include <vector>

#include "common/status.h"
#include "hw/channel.h"
#include "hw/gpu.h"

namespace nvl::hw {

class ChannelGroup {
public:
    // A TSG on the runlist of 'engineType' (NV2080_ENGINE_TYPE_*).
    static Result<std::unique_ptr<ChannelGroup>> create(Gpu& gpu, uint32_t engineType);
    ~ChannelGroup();

    // Adds a channel with its engine object; before schedule().
    Result<Channel*> addChannel(EngineKind kind);
    // Lets the scheduler run the group, binds every engine object to its
    // subchannel (compute also gets its memory windows) and waits for that.
    Status schedule();
    // After schedule(): one more channel, running and bound when this returns.
    Result<Channel*> addScheduledChannel(EngineKind kind, WaitMode mode);
    // Destroys the newest channel (one that could not be used).
    void removeNewest() { channels_.pop_back(); }

    Gpu& gpu() const { return gpu_; }
    uint32_t engineType() const { return engineType_; }

private:
    ChannelGroup(Gpu& gpu, uint32_t engineType) : gpu_(gpu), engineType_(engineType) {}
    Status enable();
    Status bindEngines(const std::vector<Channel*>& channels);

    Gpu& gpu_;
    uint32_t engineType_;
    bool scheduled_ = false;
    RmObject group_;
    RmObject contextShare_;
    // Destroyed before the group and context share they live in.
    std::vector<std::unique_ptr<Channel>> channels_;
};

// The channels of one CUDA context, in lanes: a lane is a compute channel on
// the graphics runlist (all of them in one TSG) and a copy channel on an
// asynchronous copy engine (its own TSG), or on the graphics runlist's copy
// engine when the GPU offers no other. Lane 0 exists from the start; streams
// get more on demand.
// Kernels of different lanes run side by side: a compute channel waits for
// idle only while no other lane's compute channel has work in flight (that
// would stall the whole TSG while a kernel runs); its launches release the
// timeline from the launch descriptor when the grid completes, and otherwise
// each submission first acquires the previous one's value (launch order
// 'auto', Channel::LaunchOrder).
class ContextChannels {
public:
    struct Lane {
        Channel* compute = nullptr;
        Channel* copy = nullptr;
    };
    static Result<std::unique_ptr<ContextChannels>> create(Gpu& gpu, WaitMode mode);

    Channel& compute() { return *lanes_[0].compute; }
    Channel& copy() { return *lanes_[0].copy; }
    // Not thread-safe: the owner serialises lane creation and lookups.
    size_t laneCount() const { return lanes_.size(); }
    Lane lane(size_t i) const { return lanes_[i]; }
    Result<Lane> addLane();
    // Every lane's channels, and the lanes added later, wait in 'mode'.
    void setWaitMode(WaitMode mode);

private:
    WaitMode mode_ = WaitMode::Auto;
    bool launchesRelease_ = false;  // the QMD has release semaphores (compute channels order by acquire)
    // A fault stops only its own TSG, but the context's other channels may wait
    // for the dead one: every channel's waits give up with the first fault of
    // any of them. Declared first: destroyed after the channels.
    FaultScope faultScope_;
    std::unique_ptr<ChannelGroup> graphics_;
    std::unique_ptr<ChannelGroup> copyGroup_;  // empty when copies share the graphics group
    // The copy channels of lanes 1.. on the asynchronous copy engine, each in
    // a TSG of its own (since be25554: a copy channel joining the running
    // copy TSG had its first entry not fetched for 20-30 s on the H200). The
    // same stall then remained in the event race with separate TSGs: a
    // channel's newest entry written, GP_PUT stored, the doorbell rung, and
    // Host never fetching it. That is what a BAR0 doorbell overtaking the
    // BAR1 store of GP_PUT does (Gpu::DoorbellPath), which explains both;
    // separate TSGs stay (a failed acquire switches TSGs, so lanes never
    // wait behind each other's acquires) until the H200 says whether they
    // still matter.
    std::vector<std::unique_ptr<ChannelGroup>> laneCopyGroups_;
    std::vector<Lane> lanes_;
};

}  // namespace nvl::hw
