#include "hw/channel_group.h"

#include <cstdlib>
#include <cstring>

#include "common/trace.h"
#include "defs/compute_cbc0.h"
#include "defs/host_c86f.h"
#include "defs/rm_classes.h"
#include "defs/rm_controls.h"
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

Status ChannelGroup::schedule() {
    nv::NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS sched{};
    sched.bEnable = 1;
    NVL_TRY(gpu_.rm().control(group_.handle(), nv::NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, sched));

    const GpuInfo& info = gpu_.info();
    const uint64_t shared = gpu_.vaSpace().sharedWindow();
    const uint64_t local = gpu_.vaSpace().localWindow();
    std::vector<std::pair<Channel*, uint64_t>> ready;
    for (auto& ch : channels_) {
        Result<uint64_t> r = ch->submit(16, [&](PushWriter& w) {
            if (ch->kind() == EngineKind::Compute) {
                w.inc(Subchannel::Compute, nv::NVC86F_SET_OBJECT, {info.computeClass});
                w.inc(Subchannel::Compute, nv::NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A, {hi32(shared), lo32(shared)});
                w.inc(Subchannel::Compute, nv::NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A, {hi32(local), lo32(local)});
            } else {
                w.inc(Subchannel::Copy, nv::NVC86F_SET_OBJECT, {info.copyClass});
            }
        });
        if (!r) return r.status();
        ready.emplace_back(ch.get(), *r);
    }
    for (auto [ch, value] : ready) NVL_TRY(ch->wait(value));
    return kOk;
}

Result<std::unique_ptr<ContextChannels>> ContextChannels::create(Gpu& gpu) {
    std::unique_ptr<ContextChannels> c(new ContextChannels());
    NVL_ASSIGN_OR_RETURN(c->graphics_, ChannelGroup::create(gpu, nv::NV2080_ENGINE_TYPE_GRAPHICS));
    NVL_ASSIGN_OR_RETURN(c->compute_, c->graphics_->addChannel(EngineKind::Compute));

    // NVLITE_COPY_ENGINE=grce keeps copies on the graphics runlist (for comparison).
    const char* choice = std::getenv("NVLITE_COPY_ENGINE");
    const bool useAsync = !(choice && std::strcmp(choice, "grce") == 0) && !gpu.info().asyncCopyEngines.empty();
    if (useAsync) {
        const uint32_t engine = gpu.info().asyncCopyEngines.front();
        auto group = ChannelGroup::create(gpu, engine);
        if (group) {
            auto ch = (*group)->addChannel(EngineKind::Copy);
            Status s = ch ? (*group)->schedule() : ch.status();
            if (s.ok()) {
                c->copyGroup_ = std::move(*group);
                c->copy_ = *ch;
            } else if (trace::api()) {
                trace::print("copy engine 0x%x unavailable (error %d); copies use the graphics runlist", engine, s.code());
            }
        }
    }
    if (!c->copy_) {
        NVL_ASSIGN_OR_RETURN(c->copy_, c->graphics_->addChannel(EngineKind::Copy));
    }
    NVL_TRY(c->graphics_->schedule());
    return c;
}

}  // namespace nvl::hw
