#include "kdrv/sim/sim_gpu.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <utility>

#include "defs/compute_cbc0.h"
#include "defs/copy_c8b5.h"
#include "defs/host_c86f.h"
#include "defs/rm_classes.h"

namespace nvl::kdrv::sim {
namespace {

constexpr uint32_t kDwordBudget = 4096;                    // per channel per round
constexpr auto kSpinTime = std::chrono::microseconds(50);  // busy-poll after work
constexpr uint32_t kMinSleepUs = 5;
constexpr uint32_t kMaxSleepUs = 200;

constexpr size_t kGpGetOffset = offsetof(nv::Nvc86fControl, GPGet);
constexpr size_t kGpPutOffset = offsetof(nv::Nvc86fControl, GPPut);
constexpr size_t kReferenceOffset = offsetof(nv::Nvc86fControl, Reference);
// The NvNotification::status krcErrorSetNotifier writes for an RC error.
constexpr uint16_t kNotifierStatusError = 0xffff;

uint64_t clockNs(clockid_t id) {
    timespec ts{};
    ::clock_gettime(id, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The engine type RM reports for errors on a channel.
uint32_t channelEngineType(const Channel& ch) {
    if (ch.engineType) return ch.engineType;
    if (ch.hasEngineClass(nv::HOPPER_DMA_COPY_A) && !ch.hasEngineClass(nv::HOPPER_COMPUTE_A))
        return nv::NV2080_ENGINE_TYPE_COPY0;
    return nv::NV2080_ENGINE_TYPE_GRAPHICS;
}

}  // namespace

GpuEngine::GpuEngine(std::mutex& lock) : lock_(lock) {
    timeBaseReal_ = clockNs(CLOCK_REALTIME);
    timeBaseMono_ = clockNs(CLOCK_MONOTONIC);
}

GpuEngine::~GpuEngine() {
    std::vector<std::thread> join;
    {
        std::lock_guard<std::mutex> g(lock_);
        stopWorkerLocked();
        join.swap(retired_);
    }
    for (auto& t : join)
        if (t.joinable()) t.join();
}

// ------------------------------------------------------------- channels

void GpuEngine::addChannel(std::shared_ptr<Channel> ch) {
    channels_.push_back(std::move(ch));
    if (!exiting_ && workerId_ == 0) startWorkerLocked();
    kick();
}

void GpuEngine::removeChannel(const Channel* ch) {
    channels_.erase(std::remove_if(channels_.begin(), channels_.end(),
                                   [&](const std::shared_ptr<Channel>& c) { return c.get() == ch; }),
                    channels_.end());
    if (channels_.empty()) stopWorkerLocked();
}

Channel* GpuEngine::findChannel(uint32_t hClient, uint32_t hChannel) {
    for (auto& c : channels_)
        if (c->hClient == hClient && c->hChannel == hChannel) return c.get();
    return nullptr;
}

void GpuEngine::addDoorbell(std::shared_ptr<Backing> page, bool viaBar1) {
    doorbells_.push_back({std::move(page), viaBar1});
}

void GpuEngine::removeDoorbell(const Backing* page) {
    doorbells_.erase(std::remove_if(doorbells_.begin(), doorbells_.end(),
                                    [&](const Doorbell& d) { return d.page.get() == page; }),
                     doorbells_.end());
}

void GpuEngine::clearAll() {
    channels_.clear();
    doorbells_.clear();
    stopWorkerLocked();
    counters_ = Counters{};
    launches_.clear();
    launchSequence_ = 0;
    anyCopyError_ = 0;
    anyLaunchError_ = 0;
}

std::thread GpuEngine::takeRetired() {
    if (retired_.empty()) return {};
    std::thread t = std::move(retired_.back());
    retired_.pop_back();
    return t;
}

void GpuEngine::kick() {
    kicked_ = true;
    cv_.notify_all();
}

// --------------------------------------------------------------- worker

void GpuEngine::startWorkerLocked() {
    const uint64_t id = ++nextWorkerId_;
    workerId_ = id;
    try {
        worker_ = std::thread([this, id] { run(id); });
    } catch (...) {
        // No thread: fall back to pumping from the ioctl path.
        workerId_ = 0;
        exiting_ = true;
    }
}

void GpuEngine::stopWorkerLocked() {
    if (workerId_ == 0) return;
    workerId_ = 0;
    cv_.notify_all();
    if (worker_.joinable()) retired_.push_back(std::move(worker_));
}

void GpuEngine::shutdownForExit() {
    std::vector<std::thread> join;
    {
        std::lock_guard<std::mutex> g(lock_);
        // Let the work already submitted finish (bounded), like a GPU would
        // while the process exits; then stop for good.
        for (int i = 0; i < 100000 && pumpOnce(); ++i) {
        }
        exiting_ = true;
        stopWorkerLocked();
        join.swap(retired_);
    }
    for (auto& t : join)
        if (t.joinable()) t.join();
}

void GpuEngine::run(uint64_t id) {
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);  // 1 us: short sleeps stay short
    ::pthread_setname_np(::pthread_self(), "nvlite-sim-gpu");
    using Clock = std::chrono::steady_clock;
    std::unique_lock<std::mutex> lk(lock_);
    auto lastWork = Clock::now();
    uint32_t sleepUs = 0;
    while (workerId_ == id) {
        const bool hint = pollDoorbells();
        updateTimers();
        const bool completed = completeGrids();  // the grids scheduled during the last pass
        const bool progressed = pumpChannels() || completed;
        if (progressed || hint || kicked_) {
            kicked_ = false;
            lastWork = Clock::now();
            sleepUs = 0;
            if (progressed) {
                // Let ioctls in between rounds.
                lk.unlock();
                std::this_thread::yield();
                lk.lock();
                continue;
            }
        }
        if (Clock::now() - lastWork < kSpinTime) {
            lk.unlock();
            std::this_thread::yield();
            lk.lock();
            continue;
        }
        sleepUs = sleepUs ? std::min(sleepUs * 2, kMaxSleepUs) : kMinSleepUs;
        cv_.wait_for(lk, std::chrono::microseconds(sleepUs), [&] { return kicked_ || workerId_ != id; });
    }
}

bool GpuEngine::pollDoorbells() {
    bool viaBar1 = false, viaBar0 = false;
    for (auto& d : doorbells_) {
        uint32_t v = 0;
        if (d.page->load32(nv::NVC361_NOTIFY_CHANNEL_PENDING, &v) && v != 0) {
            d.page->store32(nv::NVC361_NOTIFY_CHANNEL_PENDING, 0);
            ++counters_.doorbells;
            (d.viaBar1 ? viaBar1 : viaBar0) = true;
        }
    }
    for (auto& c : channels_) {
        Channel& ch = *c;
        uint32_t put = 0;
        if (!ch.userd || !ch.userd->load32(ch.userdOffset + kGpPutOffset, &put)) continue;
        // Through BAR1 Host reads the GP_PUT stored before the doorbell;
        // through BAR0 possibly only the one before that round's stores.
        const uint32_t seen = viaBar1 ? put : ch.lastPut;
        if ((viaBar1 || viaBar0) && ch.gpfifoEntries) {
            const uint32_t n = ch.gpfifoEntries;
            auto ahead = [&](uint32_t p) { return (p % n + n - ch.gpGet % n) % n; };
            if (seen >= n || ahead(seen) > ahead(ch.notifiedPut)) ch.notifiedPut = seen;  // past the ring: a fault
        }
        ch.lastPut = put;
    }
    return viaBar1 || viaBar0;
}

void GpuEngine::updateTimers() {
    if (doorbells_.empty()) return;
    const uint64_t t = now();
    for (auto& d : doorbells_) {
        d.page->store32(nv::NVC361_TIME_1, nv::NV_USERMODE_TIME_1_NSEC.value(t >> 32));
        d.page->store32(nv::NVC361_TIME_0, static_cast<uint32_t>(t) & 0xffffffe0u);
    }
}

uint64_t GpuEngine::now() {
    uint64_t t = timeBaseReal_ + (clockNs(CLOCK_MONOTONIC) - timeBaseMono_);
    if (t <= lastTime_) t = lastTime_ + 1;
    lastTime_ = t;
    return t;
}

// ----------------------------------------------------------- processing

bool GpuEngine::completeGrids(const Channel* scope) {
    struct Due {
        Channel* ch;
        InFlightGrid grid;
    };
    std::vector<Due> due;
    for (auto& c : channels_) {
        Channel& ch = *c;
        if (ch.grids.empty()) continue;
        const bool inScope = !scope || &ch == scope || (scope->hGroup != 0 && ch.hGroup == scope->hGroup);
        if (!inScope) continue;
        for (const InFlightGrid& g : ch.grids) due.push_back({&ch, g});
        ch.grids.clear();
    }
    if (due.empty()) return false;
    // Earlier epochs first; within one, the newest grid first.
    std::sort(due.begin(), due.end(), [](const Due& a, const Due& b) {
        return a.grid.epoch != b.grid.epoch ? a.grid.epoch < b.grid.epoch : a.grid.order > b.grid.order;
    });
    for (const Due& d : due)
        if (!d.ch->faulted) completeGrid(*this, *d.ch, d.grid.qmdVa);
    return true;
}

bool GpuEngine::pumpOnce() {
    // The grids scheduled during the last pass complete first.
    const bool completed = completeGrids();
    const bool rung = pollDoorbells();
    return pumpChannels() || rung || completed;
}

bool GpuEngine::pumpChannels() {
    bool any = false;
    const size_t n = channels_.size();
    for (size_t i = 0; i < n && i < channels_.size(); ++i) {
        // Hold a reference: a method never frees channels, but be safe.
        std::shared_ptr<Channel> ch = channels_[(rr_ + i) % n];
        if (step(*ch)) any = true;
    }
    rr_ = n ? (rr_ + 1) % n : 0;
    return any;
}

bool GpuEngine::hasRunnableWork() {
    for (auto& d : doorbells_) {  // a doorbell Host has not read yet
        uint32_t v = 0;
        if (d.page->load32(nv::NVC361_NOTIFY_CHANNEL_PENDING, &v) && v != 0) return true;
    }
    for (auto& c : channels_) {
        Channel& ch = *c;
        if (!ch.grids.empty()) return true;
        if (ch.faulted || !ch.scheduled) continue;
        if (ch.waiting) {
            bool faulted = false;
            if (acquireSatisfied(ch, &faulted) || faulted) return true;
            continue;
        }
        if (ch.segPos < ch.segment.size()) return true;
        if (ch.notifiedPut != ch.gpGet) return true;
    }
    return false;
}

bool GpuEngine::step(Channel& ch) {
    if (ch.faulted || !ch.scheduled) return false;
    bool progressed = false;
    if (ch.waiting) {
        bool faulted = false;
        if (!acquireSatisfied(ch, &faulted)) return faulted;
        ch.waiting = false;
        ++counters_.semaphoreAcquires;
        progressed = true;
    }
    uint32_t budget = kDwordBudget;
    while (budget > 0 && !ch.faulted && !ch.waiting) {
        if (ch.segPos >= ch.segment.size()) {
            ch.segment.clear();
            ch.segPos = 0;
            if (!fetchEntry(ch)) break;
            progressed = true;
            continue;
        }
        const uint32_t w = ch.segment[ch.segPos++];
        --budget;
        progressed = true;
        if (ch.mode != Channel::Mode::None) {
            method(ch, ch.mthdSubch, ch.mthdAddr, w);
            if (ch.mode == Channel::Mode::Inc) {
                ch.mthdAddr += 4;
            } else if (ch.mode == Channel::Mode::OneInc) {
                ch.mthdAddr += 4;
                ch.mode = Channel::Mode::NonInc;
            }
            if (--ch.mthdCount == 0) ch.mode = Channel::Mode::None;
            continue;
        }
        // A method header.
        const uint32_t op = static_cast<uint32_t>(nv::NVC86F_DMA_SEC_OP.get(w));
        const uint32_t subch = static_cast<uint32_t>(nv::NVC86F_DMA_METHOD_SUBCHANNEL.get(w));
        const uint32_t addr = static_cast<uint32_t>(nv::NVC86F_DMA_METHOD_ADDRESS.get(w)) << 2;
        const uint32_t count = static_cast<uint32_t>(nv::NVC86F_DMA_METHOD_COUNT.get(w));
        switch (op) {
        case nv::NVC86F_DMA_SEC_OP_INC_METHOD:
        case nv::NVC86F_DMA_SEC_OP_NON_INC_METHOD:
        case nv::NVC86F_DMA_SEC_OP_ONE_INC:
            if (count == 0) break;
            ch.mode = op == nv::NVC86F_DMA_SEC_OP_INC_METHOD       ? Channel::Mode::Inc
                      : op == nv::NVC86F_DMA_SEC_OP_NON_INC_METHOD ? Channel::Mode::NonInc
                                                                   : Channel::Mode::OneInc;
            ch.mthdAddr = addr;
            ch.mthdSubch = subch;
            ch.mthdCount = count;
            break;
        case nv::NVC86F_DMA_SEC_OP_IMMD_DATA_METHOD:
            method(ch, subch, addr, static_cast<uint32_t>(nv::NVC86F_DMA_IMMD_DATA.get(w)));
            break;
        case nv::NVC86F_DMA_SEC_OP_END_PB_SEGMENT:
            ch.segPos = ch.segment.size();
            break;
        case nv::NVC86F_DMA_SEC_OP_GRP0_USE_TERT:
            // NOP (all zero) or a subdevice-mask operation (single GPU: ignored).
            if (w != nv::NVC86F_DMA_NOP && nv::NVC86F_DMA_TERT_OP.get(w) == nv::NVC86F_DMA_TERT_OP_GRP0_INC_METHOD)
                fault(ch, nv::ROBUST_CHANNEL_PBDMA_ERROR, 0, channelEngineType(ch));
            break;
        default:  // GRP2 (old non-incrementing format) and RESERVED6: invalid on Hopper
            fault(ch, nv::ROBUST_CHANNEL_PBDMA_ERROR, 0, channelEngineType(ch));
            break;
        }
    }
    return progressed;
}

bool GpuEngine::fetchEntry(Channel& ch) {
    uint32_t live = 0;
    if (!ch.userd || !ch.userd->load32(ch.userdOffset + kGpPutOffset, &live)) {
        fault(ch, nv::ROBUST_CHANNEL_PBDMA_ERROR, 0, channelEngineType(ch));
        return false;
    }
    const uint32_t put = ch.notifiedPut;  // what the doorbells told Host (sim_gpu.h)
    if (put == ch.gpGet) return false;
    if (put >= ch.gpfifoEntries) {  // GP_PUT past the ring: the PBDMA flags it
        fault(ch, nv::ROBUST_CHANNEL_PBDMA_ERROR, 0, channelEngineType(ch));
        return false;
    }
    uint64_t entry = 0, faultVa = 0;
    if (!ch.va->read(ch.gpfifoVa + uint64_t{ch.gpGet} * nv::NVC86F_GP_ENTRY__SIZE, &entry, sizeof entry, &faultVa)) {
        fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, channelEngineType(ch));
        return false;
    }
    ch.gpGet = (ch.gpGet + 1) % ch.gpfifoEntries;
    ch.userd->store32(ch.userdOffset + kGpGetOffset, ch.gpGet);
    ++counters_.gpfifoEntries;

    const uint32_t e0 = static_cast<uint32_t>(entry);
    const uint32_t e1 = static_cast<uint32_t>(entry >> 32);
    const uint32_t length = static_cast<uint32_t>(nv::NVC86F_GP_ENTRY1_LENGTH.get(e1));
    if (length == 0) return true;  // control entry (NOP)
    const uint64_t pb = (nv::NVC86F_GP_ENTRY0_GET.get(e0) << 2) | (nv::NVC86F_GP_ENTRY1_GET_HI.get(e1) << 32);
    ch.segment.resize(length);
    ch.segPos = 0;
    if (!ch.va->read(pb, ch.segment.data(), size_t{length} * 4, &faultVa)) {
        ch.segment.clear();
        fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, channelEngineType(ch));
        return false;
    }
    return true;
}

// -------------------------------------------------------------- methods

void GpuEngine::method(Channel& ch, uint32_t subch, uint32_t addr, uint32_t data) {
    ++counters_.methods;
    if (addr == nv::NVC86F_SET_OBJECT) {
        const uint32_t cls = static_cast<uint32_t>(nv::NVC86F_SET_OBJECT_NVCLASS.get(data));
        if (nv::NVC86F_SET_OBJECT_ENGINE.get(data) == nv::NVC86F_SET_OBJECT_ENGINE_SW) return;
        if (!ch.hasEngineClass(cls)) {
            // No such object on the channel.
            fault(ch, nv::ROBUST_CHANNEL_GR_CLASS_ERROR, 0, channelEngineType(ch));
            return;
        }
        ch.subchClass[subch] = cls;
        return;
    }
    if (addr < 0x100) {
        hostMethod(ch, addr, data);
        return;
    }
    switch (ch.subchClass[subch]) {
    case nv::HOPPER_DMA_COPY_A:
        copyEngineMethod(*this, ch, addr, data);
        break;
    case nv::HOPPER_COMPUTE_A:
        computeMethod(*this, ch, addr, data);
        break;
    default:  // nothing bound to the subchannel
        fault(ch, nv::ROBUST_CHANNEL_PBDMA_ERROR, 0, channelEngineType(ch));
        break;
    }
}

void GpuEngine::hostMethod(Channel& ch, uint32_t addr, uint32_t data) {
    switch (addr) {
    case nv::NVC86F_SEM_ADDR_LO:
        ch.semAddrLo = data;
        break;
    case nv::NVC86F_SEM_ADDR_HI:
        ch.semAddrHi = data;
        break;
    case nv::NVC86F_SEM_PAYLOAD_LO:
        ch.semPayloadLo = data;
        break;
    case nv::NVC86F_SEM_PAYLOAD_HI:
        ch.semPayloadHi = data;
        break;
    case nv::NVC86F_SEM_EXECUTE:
        semExecute(ch, data);
        break;
    case nv::NVC86F_NON_STALL_INTERRUPT:
        nonStallInterrupt(ch);
        break;
    case nv::NVC86F_WFI:
        // The engine goes idle before the channel's next method: its grids
        // (the sim does not tell VEIDs apart: those of the channel's TSG).
        completeGrids(&ch);
        break;
    case nv::NVC86F_SET_REFERENCE:
        if (ch.userd) ch.userd->store32(ch.userdOffset + kReferenceOffset, data);
        break;
    default:
        // NOP, MEM_OP_A..D (membars, TLB/L2 maintenance), YIELD: all work is
        // already visible in the sim, so these have nothing to do.
        break;
    }
}

void GpuEngine::semExecute(Channel& ch, uint32_t data) {
    const uint64_t va = (nv::NVC86F_SEM_ADDR_HI_OFFSET.get(ch.semAddrHi) << 32) |
                        (nv::NVC86F_SEM_ADDR_LO_OFFSET.get(ch.semAddrLo) << 2);
    const bool payload64 = nv::NVC86F_SEM_EXECUTE_PAYLOAD_SIZE.get(data) == nv::NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT;
    const uint64_t payload = payload64 ? (uint64_t{ch.semPayloadHi} << 32) | ch.semPayloadLo : ch.semPayloadLo;
    const uint32_t op = static_cast<uint32_t>(nv::NVC86F_SEM_EXECUTE_OPERATION.get(data));
    const bool timestamp =
        nv::NVC86F_SEM_EXECUTE_RELEASE_TIMESTAMP.get(data) == nv::NVC86F_SEM_EXECUTE_RELEASE_TIMESTAMP_EN;
    const uint32_t engine = channelEngineType(ch);
    // Semaphores must be naturally aligned: 8 bytes for 64-bit payloads, 16 with a timestamp.
    if ((payload64 && (va & 7)) || (op == nv::NVC86F_SEM_EXECUTE_OPERATION_RELEASE && timestamp && (va & 15))) {
        fault(ch, nv::ROBUST_CHANNEL_PBDMA_ERROR, va, engine);
        return;
    }
    const bool releases =
        op == nv::NVC86F_SEM_EXECUTE_OPERATION_RELEASE || op == nv::NVC86F_SEM_EXECUTE_OPERATION_REDUCTION;
    // RELEASE_WFI_EN: the host waits for the engine's grids first; without
    // it the release happens now, whatever still runs.
    if (releases && nv::NVC86F_SEM_EXECUTE_RELEASE_WFI.get(data) == nv::NVC86F_SEM_EXECUTE_RELEASE_WFI_EN) {
        completeGrids(&ch);
        if (ch.faulted) return;
    }
    switch (op) {
    case nv::NVC86F_SEM_EXECUTE_OPERATION_RELEASE:
        release(ch, va, payload, payload64, timestamp, engine);
        break;
    case nv::NVC86F_SEM_EXECUTE_OPERATION_ACQUIRE:
    case nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ:
    case nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ:
    case nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_AND:
    case nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_NOR: {
        ch.acquire = PendingAcquire{va, payload, op, payload64};
        bool faulted = false;
        if (acquireSatisfied(ch, &faulted))
            ++counters_.semaphoreAcquires;
        else if (!faulted)
            ch.waiting = true;  // parked at this method; other channels go on
        break;
    }
    case nv::NVC86F_SEM_EXECUTE_OPERATION_REDUCTION:
        reduce(ch, va, payload, payload64, static_cast<uint32_t>(nv::NVC86F_SEM_EXECUTE_REDUCTION.get(data)),
               nv::NVC86F_SEM_EXECUTE_REDUCTION_FORMAT.get(data) == nv::NVC86F_SEM_EXECUTE_REDUCTION_FORMAT_SIGNED,
               engine);
        break;
    default:
        fault(ch, nv::ROBUST_CHANNEL_PBDMA_ERROR, va, engine);
        break;
    }
}

bool GpuEngine::acquireSatisfied(Channel& ch, bool* faulted) {
    const PendingAcquire& a = ch.acquire;
    uint64_t v = 0, faultVa = 0;
    Translation t;
    bool ok;
    if (ch.va->translate(a.va, &t) && t.len >= (a.payload64 ? 8u : 4u)) {
        if (a.payload64) {
            ok = t.mem->load64(t.offset, &v);
        } else {
            uint32_t v32 = 0;
            ok = t.mem->load32(t.offset, &v32);
            v = v32;
        }
        faultVa = a.va;
    } else {
        ok = ch.va->read(a.va, &v, a.payload64 ? 8 : 4, &faultVa);
    }
    if (!ok) {
        *faulted = true;
        fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, channelEngineType(ch));
        return false;
    }
    const uint64_t mask = a.payload64 ? ~0ull : 0xffffffffull;
    v &= mask;
    const uint64_t p = a.payload & mask;
    switch (a.operation) {
    case nv::NVC86F_SEM_EXECUTE_OPERATION_ACQUIRE:
        return v == p;
    case nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ:
        return v >= p;
    case nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ:
        return a.payload64 ? static_cast<int64_t>(v - p) >= 0
                           : static_cast<int32_t>(static_cast<uint32_t>(v - p)) >= 0;
    case nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_AND:
        return (v & p) != 0;
    case nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_NOR:
        return (~(v | p) & mask) != 0;
    default:
        return true;
    }
}

// ----------------------------------------------------- shared helpers

namespace {

bool storeVa(GpuVaSpace& va, uint64_t addr, uint64_t v, bool is64, uint64_t* faultVa) {
    Translation t;
    const uint64_t n = is64 ? 8 : 4;
    if (va.translate(addr, &t) && t.len >= n)
        return is64 ? t.mem->store64(t.offset, v) : t.mem->store32(t.offset, static_cast<uint32_t>(v));
    if (is64) return va.write(addr, &v, 8, faultVa);
    const uint32_t v32 = static_cast<uint32_t>(v);
    return va.write(addr, &v32, 4, faultVa);
}

bool loadVa(GpuVaSpace& va, uint64_t addr, uint64_t* v, bool is64, uint64_t* faultVa) {
    Translation t;
    *v = 0;
    if (va.translate(addr, &t) && t.len >= (is64 ? 8u : 4u)) {
        if (is64) return t.mem->load64(t.offset, v);
        uint32_t v32 = 0;
        if (!t.mem->load32(t.offset, &v32)) return false;
        *v = v32;
        return true;
    }
    return va.read(addr, v, is64 ? 8 : 4, faultVa);
}

}  // namespace

bool GpuEngine::release(Channel& ch, uint64_t va, uint64_t payload, bool payload64, bool timestamp,
                        uint32_t engineType) {
    uint64_t faultVa = va;
    // Writing the whole structure must not fault half way: check first.
    if (!ch.va->mapped(va, timestamp ? 16 : (payload64 ? 8 : 4), &faultVa)) {
        fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, engineType);
        return false;
    }
    bool ok = true;
    if (timestamp) {
        // Four-word structure: 64-bit payload slot, then the timestamp; the
        // payload goes last so a waiter that sees it also sees the time.
        ok = storeVa(*ch.va, va + 8, now(), true, &faultVa) && storeVa(*ch.va, va, payload, true, &faultVa);
    } else {
        ok = storeVa(*ch.va, va, payload, payload64, &faultVa);
    }
    if (!ok) {
        fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, engineType);
        return false;
    }
    ++counters_.semaphoreReleases;
    return true;
}

uint64_t GpuEngine::applyReduction(uint64_t old, uint64_t payload, uint32_t op, bool payload64, bool isSigned) {
    const uint64_t mask = payload64 ? ~0ull : 0xffffffffull;
    old &= mask;
    payload &= mask;
    auto sext = [&](uint64_t v) -> int64_t {
        return payload64 ? static_cast<int64_t>(v) : static_cast<int64_t>(static_cast<int32_t>(v));
    };
    uint64_t r = old;
    switch (op) {
    case nv::NVC86F_SEM_EXECUTE_REDUCTION_IMIN:
        r = isSigned ? (sext(payload) < sext(old) ? payload : old) : std::min(old, payload);
        break;
    case nv::NVC86F_SEM_EXECUTE_REDUCTION_IMAX:
        r = isSigned ? (sext(payload) > sext(old) ? payload : old) : std::max(old, payload);
        break;
    case nv::NVC86F_SEM_EXECUTE_REDUCTION_IXOR:
        r = old ^ payload;
        break;
    case nv::NVC86F_SEM_EXECUTE_REDUCTION_IAND:
        r = old & payload;
        break;
    case nv::NVC86F_SEM_EXECUTE_REDUCTION_IOR:
        r = old | payload;
        break;
    case nv::NVC86F_SEM_EXECUTE_REDUCTION_IADD:
        r = old + payload;
        break;
    case nv::NVC86F_SEM_EXECUTE_REDUCTION_INC:  // wrapping increment, like atomicInc
        r = old >= payload ? 0 : old + 1;
        break;
    case nv::NVC86F_SEM_EXECUTE_REDUCTION_DEC:  // like atomicDec
        r = (old == 0 || old > payload) ? payload : old - 1;
        break;
    default:
        break;
    }
    return r & mask;
}

bool GpuEngine::reduce(Channel& ch, uint64_t va, uint64_t payload, bool payload64, uint32_t op, bool isSigned,
                       uint32_t engineType) {
    uint64_t old = 0, faultVa = va;
    if (!loadVa(*ch.va, va, &old, payload64, &faultVa) ||
        !storeVa(*ch.va, va, applyReduction(old, payload, op, payload64, isSigned), payload64, &faultVa)) {
        fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, engineType);
        return false;
    }
    ++counters_.semaphoreReleases;
    return true;
}

void GpuEngine::fault(Channel& ch, uint32_t errorCode, uint64_t faultVa, uint32_t engineType) {
    if (ch.faulted) return;
    stop(ch, errorCode, faultVa, engineType);
    // RC recovery tears down the channel's TSG: the engine context is the
    // group's, so every channel of the group stops and is told the same error
    // (krcErrorSetNotifier with RC_NOTIFIER_SCOPE_TSG). Other TSGs go on.
    if (ch.hGroup == 0) return;
    for (auto& other : channels_)
        if (other.get() != &ch && other->hClient == ch.hClient && other->hGroup == ch.hGroup && !other->faulted)
            stop(*other, errorCode, 0, engineType);
}

void GpuEngine::stop(Channel& ch, uint32_t errorCode, uint64_t faultVa, uint32_t engineType) {
    ch.faulted = true;
    ch.errorCode = errorCode;
    ch.faultAddress = faultVa;
    ch.waiting = false;
    ch.segment.clear();
    ch.segPos = 0;
    ch.mode = Channel::Mode::None;
    ++counters_.faults;
    if (!ch.errorNotifier) return;
    // What RM's notifyFillNvNotification writes (note its time word order),
    // status last.
    nv::NvNotification n{};
    const uint64_t t = now();
    n.timeStamp.nanoseconds[0] = static_cast<uint32_t>(t >> 32);
    n.timeStamp.nanoseconds[1] = static_cast<uint32_t>(t);
    n.info32 = errorCode;
    n.info16 = static_cast<uint16_t>(engineType);
    const uint64_t base = uint64_t{nv::NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR} * sizeof(nv::NvNotification);
    ch.errorNotifier->write(base, &n, offsetof(nv::NvNotification, status));
    ch.errorNotifier->store16(base + offsetof(nv::NvNotification, status), kNotifierStatusError);  // release
}

uint32_t GpuEngine::takeInjectedCopyError(Channel& ch) {
    uint32_t& armed = ch.injectCopyError ? ch.injectCopyError : anyCopyError_;
    return std::exchange(armed, 0);
}

uint32_t GpuEngine::takeInjectedLaunchError(Channel& ch) {
    uint32_t& armed = ch.injectLaunchError ? ch.injectLaunchError : anyLaunchError_;
    return std::exchange(armed, 0);
}

void GpuEngine::nonStallInterrupt(Channel& ch) {
    ++counters_.nonStallInterrupts;
    if (nonStallHook) nonStallHook(ch);
}

}  // namespace nvl::kdrv::sim
