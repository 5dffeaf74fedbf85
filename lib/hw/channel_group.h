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

    Gpu& gpu() const { return gpu_; }
    uint32_t engineType() const { return engineType_; }

private:
    ChannelGroup(Gpu& gpu, uint32_t engineType) : gpu_(gpu), engineType_(engineType) {}

    Gpu& gpu_;
    uint32_t engineType_;
    RmObject group_;
    RmObject contextShare_;
    // Destroyed before the group and context share they live in.
    std::vector<std::unique_ptr<Channel>> channels_;
};

// The channels of one CUDA context: compute on the graphics runlist, copies
// on an asynchronous copy engine of their own (so copies overlap kernels and
// reach the copy engines' full bandwidth), or on the graphics runlist's copy
// engine when the GPU offers no other.
class ContextChannels {
public:
    static Result<std::unique_ptr<ContextChannels>> create(Gpu& gpu);

    Channel& compute() { return *compute_; }
    Channel& copy() { return *copy_; }

private:
    std::unique_ptr<ChannelGroup> graphics_;
    std::unique_ptr<ChannelGroup> copyGroup_;  // empty when copies share the graphics group
    Channel* compute_ = nullptr;
    Channel* copy_ = nullptr;
};

}  // namespace nvl::hw
