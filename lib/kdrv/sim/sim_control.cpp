// The test-control API (sim_control.h).
#include "kdrv/sim/sim_control.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "defs/host_c86f.h"
#include "defs/rm_classes.h"
#include "kdrv/kdrv.h"
#include "kdrv/sim/sim_state.h"
#include "nvlite/nvlite.h"

namespace nvl::kdrv::sim {

std::vector<LaunchRecord> launches() {
    Sim& s = Sim::get();
    std::lock_guard<std::mutex> g(s.lock());
    const auto& log = s.gpu().launches();
    return {log.begin(), log.end()};
}

void setKernelBody(KernelBody body) {
    Sim& s = Sim::get();
    std::lock_guard<std::mutex> g(s.lock());
    s.gpu().kernelBody = std::move(body);
}

void clearLaunches() {
    Sim& s = Sim::get();
    std::lock_guard<std::mutex> g(s.lock());
    s.gpu().launches().clear();
}

Counters counters() {
    Sim& s = Sim::get();
    std::lock_guard<std::mutex> g(s.lock());
    return s.gpu().counters();
}

std::vector<ChannelInfo> channels() {
    Sim& s = Sim::get();
    std::lock_guard<std::mutex> g(s.lock());
    std::vector<ChannelInfo> out;
    for (const auto& ch : s.gpu().channels()) {
        ChannelInfo i;
        i.hClient = ch->hClient;
        i.hChannel = ch->hChannel;
        i.workSubmitToken = ch->workSubmitToken;
        i.gpGet = ch->gpGet;
        if (ch->userd) ch->userd->load32(ch->userdOffset + offsetof(nv::Nvc86fControl, GPPut), &i.gpPut);
        i.waiting = ch->waiting;
        i.faulted = ch->faulted;
        i.errorCode = ch->errorCode;
        i.faultAddress = ch->faultAddress;
        out.push_back(i);
    }
    return out;
}

namespace {

uint32_t rcErrorOf(InjectedFault fault) {
    return fault == InjectedFault::NextLaunchTrap ? nv::ROBUST_CHANNEL_GR_EXCEPTION
                                                  : nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT;
}

}  // namespace

bool injectFault(uint32_t hClient, uint32_t hChannel, InjectedFault fault) {
    Sim& s = Sim::get();
    std::lock_guard<std::mutex> g(s.lock());
    Channel* ch = s.gpu().findChannel(hClient, hChannel);
    if (!ch) return false;
    if (fault == InjectedFault::NextCopy)
        ch->injectCopyError = rcErrorOf(fault);
    else
        ch->injectLaunchError = rcErrorOf(fault);
    return true;
}

void injectFaultAnyChannel(InjectedFault fault) {
    Sim& s = Sim::get();
    std::lock_guard<std::mutex> g(s.lock());
    if (fault == InjectedFault::NextCopy)
        s.gpu().injectAnyCopyError(rcErrorOf(fault));
    else
        s.gpu().injectAnyLaunchError(rcErrorOf(fault));
}

void clearInjectedFaults() {
    Sim& s = Sim::get();
    std::lock_guard<std::mutex> g(s.lock());
    s.gpu().injectAnyCopyError(0);
    s.gpu().injectAnyLaunchError(0);
    for (const auto& ch : s.gpu().channels()) {
        ch->injectCopyError = 0;
        ch->injectLaunchError = 0;
    }
}

}  // namespace nvl::kdrv::sim

// The exported C form of injectFaultAnyChannel (include/nvlite/nvlite.h);
// libnvlite_sim.so exports it, libnvlite.so does not.
extern "C" __attribute__((visibility("default"))) CUresult nvliteSimInjectFault(nvliteSimFault fault) {
    using nvl::kdrv::sim::InjectedFault;
    if (!nvl::kdrv::sim::inUse()) return CUDA_ERROR_NOT_SUPPORTED;
    // Read as the int a program may pass (a value outside the enum is undefined as the enum type).
    int which;
    static_assert(sizeof which == sizeof fault);
    std::memcpy(&which, &fault, sizeof which);
    switch (which) {
    case NVLITE_SIM_FAULT_NONE:
        nvl::kdrv::sim::clearInjectedFaults();
        return CUDA_SUCCESS;
    case NVLITE_SIM_FAULT_COPY_MMU:
        nvl::kdrv::sim::injectFaultAnyChannel(InjectedFault::NextCopy);
        return CUDA_SUCCESS;
    case NVLITE_SIM_FAULT_LAUNCH_MMU:
        nvl::kdrv::sim::injectFaultAnyChannel(InjectedFault::NextLaunch);
        return CUDA_SUCCESS;
    case NVLITE_SIM_FAULT_LAUNCH_TRAP:
        nvl::kdrv::sim::injectFaultAnyChannel(InjectedFault::NextLaunchTrap);
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

namespace nvl::kdrv::sim {

bool waitIdle(int timeoutMs) {
    Sim& s = Sim::get();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    for (;;) {
        {
            std::lock_guard<std::mutex> g(s.lock());
            if (s.gpu().exiting()) {
                for (int i = 0; i < 100000 && s.gpu().pumpOnce(); ++i) {
                }
            }
            if (!s.gpu().hasRunnableWork()) return true;
            s.gpu().kick();
        }
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
}

uint64_t vidmemTotal() { return Sim::get().vidmemTotal(); }

uint64_t vidmemUsed() {
    Sim& s = Sim::get();
    std::lock_guard<std::mutex> g(s.lock());
    return s.vidmemUsed();
}

void reset() {
    Sim& s = Sim::get();
    std::vector<std::thread> retired;
    {
        std::lock_guard<std::mutex> g(s.lock());
        s.resetLocked();
        s.collectRetiredLocked(retired);
    }
    s.joinRetired(retired);
}

void Sim::resetLocked() {
    clients_.clear();
    uvm_.clear();
    osEvents_.clear();
    channelIds_.clear();
    for (auto& g : gpus_) g->va.clear();
    gpu_.clearAll();
    for (auto& [fd, f] : files_) {
        f.linkedCtl = -1;
        f.mmap = MmapContext{};
        f.uvmVaSpace = false;
        f.uvmFlags = 0;
        f.uvmMm = false;
        f.uvmMmSet = false;
    }
}

}  // namespace nvl::kdrv::sim
