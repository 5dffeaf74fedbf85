#include "hw/channel_group.h"

#include <cstdlib>
#include <cstring>

#include "common/trace.h"
#include "defs/compute_cbc0.h"
#include "defs/host_c86f.h"
#include "defs/rm_classes.h"
#include "defs/rm_controls.h"
#include "hw/qmd.h"
#include "hw/va_space.h"

namespace nvl::hw {

Result<std::unique_ptr<ChannelGroup>> ChannelGroup::create(Gpu& gpu, uint32_t engineType) {
    NVL_TRY(gpu.open());
    std::unique_ptr<ChannelGroup> g(new ChannelGroup(gpu, engineType));
    RmClient& rm = gpu.rm();

    nv::NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS gp{};
    gp.engineType = engineType;
    NVL_ASSIGN_OR_RETURN(g->group_, allocObject(rm, gpu.hDevice(), nv::KEPLER_CHANNEL_GROUP_A, &gp));

    nv::NV_CTXSHARE_ALLOCATION_PARAMETERS cs{};
    cs.hVASpace = gpu.hVaSpace();
    cs.flags = nv::NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC;
    NVL_ASSIGN_OR_RETURN(g->contextShare_, allocObject(rm, g->group_.handle(), nv::FERMI_CONTEXT_SHARE_A, &cs));
    return g;
}

ChannelGroup::~ChannelGroup() {
    while (!channels_.empty()) channels_.pop_back();
}

Result<Channel*> ChannelGroup::addChannel(EngineKind kind) {
    NVL_ASSIGN_OR_RETURN(auto ch, Channel::create(gpu_, group_.handle(), contextShare_.handle(), engineType_, kind));
    channels_.push_back(std::move(ch));
    return channels_.back().get();
}

Status ChannelGroup::enable() {
    nv::NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS sched{};
    sched.bEnable = 1;
    NVL_TRY(gpu_.rm().control(group_.handle(), nv::NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, sched));
    scheduled_ = true;
    return kOk;
}

Status ChannelGroup::bindEngines(const std::vector<Channel*>& channels) {
    const GpuInfo& info = gpu_.info();
    const uint64_t shared = gpu_.vaSpace().sharedWindow();
    const uint64_t local = gpu_.vaSpace().localWindow();
    std::vector<std::pair<Channel*, uint64_t>> ready;
    // SET_OBJECT, then (compute) the shared and local memory windows.
    constexpr size_t kBindDwords = PushWriter::dwordsFor(1) + 2 * PushWriter::dwordsFor(2);
    for (Channel* ch : channels) {
        Result<uint64_t> r = ch->submit(kBindDwords, [&](PushWriter& w) {
            using namespace nv;
            if (ch->kind() == EngineKind::Compute) {
                w.incOn<Subchannel::Compute>(NVC86F_SET_OBJECT(NVC86F_SET_OBJECT_NVCLASS.value(info.computeClass)));
                w.inc(NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A(
                          NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER.value(hi32(shared))),
                      NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_B(lo32(shared)));
                w.inc(NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A(
                          NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER.value(hi32(local))),
                      NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_B(lo32(local)));
            } else {
                w.incOn<Subchannel::Copy>(NVC86F_SET_OBJECT(NVC86F_SET_OBJECT_NVCLASS.value(info.copyClass)));
            }
        });
        if (!r) return r.status();
        ready.emplace_back(ch, *r);
    }
    for (auto [ch, value] : ready) NVL_TRY(ch->wait(value));
    return kOk;
}

Status ChannelGroup::schedule() {
    NVL_TRY(enable());
    std::vector<Channel*> all;
    for (auto& ch : channels_) all.push_back(ch.get());
    return bindEngines(all);
}

Result<Channel*> ChannelGroup::addScheduledChannel(EngineKind kind, WaitMode mode) {
    NVL_ASSIGN_OR_RETURN(Channel * ch, addChannel(kind));
    ch->setWaitMode(mode);
    Status s = scheduled_ ? enable() : kOk;  // scheduling the group again takes in its new channel
    if (s.ok()) s = bindEngines({ch});
    if (!s.ok()) {
        channels_.pop_back();
        return s;
    }
    return ch;
}

Result<std::unique_ptr<ContextChannels>> ContextChannels::create(Gpu& gpu, WaitMode mode) {
    std::unique_ptr<ContextChannels> c(new ContextChannels());
    c->mode_ = mode;
    NVL_ASSIGN_OR_RETURN(c->graphics_, ChannelGroup::create(gpu, nv::NV2080_ENGINE_TYPE_GRAPHICS));
    Lane first;
    NVL_ASSIGN_OR_RETURN(first.compute, c->graphics_->addChannel(EngineKind::Compute));

    // Copies go to the async copy engine with the most physical engines behind
    // it. NVLITE_COPY_ENGINE=grce keeps them on the graphics runlist and
    // NVLITE_COPY_ENGINE=<n> picks the n-th async engine (for comparison).
    const GpuInfo& info = gpu.info();
    const char* choice = std::getenv("NVLITE_COPY_ENGINE");
    const bool useAsync = !(choice && std::strcmp(choice, "grce") == 0) && !info.asyncCopyEngines.empty();
    if (useAsync) {
        size_t pick = 0;
        for (size_t i = 1; i < info.asyncCopyEngines.size(); ++i)
            if (i < info.asyncCopyPces.size() && info.asyncCopyPces[i] > info.asyncCopyPces[pick]) pick = i;
        if (choice && *choice >= '0' && *choice <= '9')
            pick = static_cast<size_t>(std::atoi(choice)) % info.asyncCopyEngines.size();
        const uint32_t engine = info.asyncCopyEngines[pick];
        if (trace::api()) trace::print("copies use copy engine 0x%x", engine);
        auto group = ChannelGroup::create(gpu, engine);
        if (group) {
            auto ch = (*group)->addChannel(EngineKind::Copy);
            Status s = ch ? (*group)->schedule() : ch.status();
            if (s.ok()) {
                c->copyGroup_ = std::move(*group);
                first.copy = *ch;
            } else if (trace::api()) {
                trace::print("copy engine 0x%x unavailable (error %d); copies use the graphics runlist", engine, s.code());
            }
        }
    }
    if (!first.copy) {
        NVL_ASSIGN_OR_RETURN(first.copy, c->graphics_->addChannel(EngineKind::Copy));
    }
    NVL_TRY(c->graphics_->schedule());
    c->launchesRelease_ = qmdLayoutFor(info.computeClass).hasRelease;
    first.compute->setOrderedByAcquire(c->launchesRelease_);
    first.compute->setWaitMode(mode);
    first.copy->setWaitMode(mode);
    first.compute->joinFaultScope(c->faultScope_);
    first.copy->joinFaultScope(c->faultScope_);
    c->lanes_.push_back(first);
    return c;
}

void ContextChannels::setWaitMode(WaitMode mode) {
    mode_ = mode;
    for (Lane& lane : lanes_) {
        lane.compute->setWaitMode(mode);
        lane.copy->setWaitMode(mode);
    }
}

Result<ContextChannels::Lane> ContextChannels::addLane() {
    // A faulted TSG takes no new channel (RM would not tell it of the fault).
    NVL_TRY(faultScope_.error());
    Lane lane;
    NVL_ASSIGN_OR_RETURN(lane.compute, graphics_->addScheduledChannel(EngineKind::Compute, mode_));
    lane.compute->setOrderedByAcquire(launchesRelease_);
    Result<Channel*> copy = CUDA_ERROR_UNKNOWN;
    if (copyGroup_) {
        // A TSG of its own on the asynchronous copy engine (laneCopyGroups_).
        auto group = ChannelGroup::create(copyGroup_->gpu(), copyGroup_->engineType());
        if (group) {
            copy = (*group)->addChannel(EngineKind::Copy);
            if (copy) {
                (*copy)->setWaitMode(mode_);
                Status s = (*group)->schedule();
                if (s.ok()) laneCopyGroups_.push_back(std::move(*group));
                else copy = s;
            }
        } else {
            copy = group.status();
        }
    } else {
        copy = graphics_->addScheduledChannel(EngineKind::Copy, mode_);
    }
    if (!copy) {
        graphics_->removeNewest();  // the lane's compute channel, unused
        return copy.status();
    }
    lane.copy = *copy;
    lane.compute->joinFaultScope(faultScope_);
    lane.copy->joinFaultScope(faultScope_);
    lanes_.push_back(lane);
    return lane;
}

}  // namespace nvl::hw
