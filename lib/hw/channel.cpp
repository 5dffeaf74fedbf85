#include "hw/channel.h"

#include <cstdlib>
#include <cstring>

#include "common/env.h"
#include "common/trace.h"
#include "defs/compute_cbc0.h"
#include "defs/copy_c8b5.h"
#include "defs/host_c86f.h"
#include "defs/rm_classes.h"
#include "defs/rm_controls.h"
#include "hw/cpu.h"
#include "hw/channel_error.h"
#include "hw/driver_error.h"
#include "hw/uvm.h"
#include "hw/va_space.h"

namespace nvl::hw {
namespace {

// Layout of the channel's video-memory area: GPFIFO ring, USERD, push-buffer
// ring, and for compute channels a data ring (QMDs, constant buffers).
constexpr uint32_t kEntries = 2048;                 // GPFIFO entries (8 bytes each)
constexpr size_t kUserdOffset = kEntries * 8;       // USERD control page after the ring
constexpr size_t kPushOffset = 64 * 1024;           // push-buffer ring after that
constexpr size_t kPushEnd = 2 * 1024 * 1024;
constexpr size_t kComputeAreaSize = 8 * 1024 * 1024;  // data ring: the 6 MiB after the push ring
constexpr uint64_t kUvmChannelVaSize = 64ull << 20;  // VA UVM may use for the channel's buffers

}  // namespace

Result<std::unique_ptr<Channel>> Channel::create(Gpu& gpu, uint32_t hChannelGroup, uint32_t hContextShare,
                                                 uint32_t engineType, EngineKind kind) {
    std::unique_ptr<Channel> ch(new Channel(gpu, kind));
    NVL_TRY(ch->init(hChannelGroup, hContextShare, engineType));
    return ch;
}

Status Channel::init(uint32_t hChannelGroup, uint32_t hContextShare, uint32_t engineType) {
    RmClient& rm = gpu_.rm();
    const GpuInfo& info = gpu_.info();

    VideoMemoryOptions areaOpts;
    areaOpts.cpuMapped = true;
    areaOpts.contiguous = true;
    const size_t areaSize = kind_ == EngineKind::Compute ? kComputeAreaSize : kPushEnd;
    NVL_ASSIGN_OR_RETURN(area_, gpu_.allocVideo(areaSize, areaOpts));
    auto* base = static_cast<uint8_t*>(area_->cpu());
    std::memset(base + kUserdOffset, 0, kPushOffset - kUserdOffset);
    ring_ = reinterpret_cast<volatile uint64_t*>(base);
    userd_ = reinterpret_cast<volatile uint32_t*>(base + kUserdOffset);
    gpPut_ = reinterpret_cast<volatile uint32_t*>(base + kUserdOffset + nv::NVC86F_USERD_GP_PUT_OFFSET);
    entries_ = kEntries;
    push_ = reinterpret_cast<uint32_t*>(base + kPushOffset);
    pushVa_ = area_->va() + kPushOffset;
    pushSpace_ = RingSpace((kPushEnd - kPushOffset) / 4, kEntries);
    if (areaSize > kPushEnd) {
        data_ = base + kPushEnd;
        dataVa_ = area_->va() + kPushEnd;
        dataSpace_ = RingSpace(areaSize - kPushEnd, kEntries);
    }

    NVL_ASSIGN_OR_RETURN(semaphoreMemory_, gpu_.allocHost(4096));
    semaphore_ = static_cast<uint64_t*>(semaphoreMemory_->cpu());
    std::memset(semaphore_, 0, 4096);

    // Error notifier: system memory RM writes when the channel faults.
    nv::NV_MEMORY_ALLOCATION_PARAMS np{};
    np.owner = rm.handle();
    np.type = nv::NVOS32_TYPE_NOTIFIER;
    np.flags = nv::NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED | nv::NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED |
               nv::NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE | nv::NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT;
    np.attr = nv::NVOS32_ATTR_LOCATION.value(nv::NVOS32_ATTR_LOCATION_PCI) |
              nv::NVOS32_ATTR_PHYSICALITY.value(nv::NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS);
    np.attr2 = nv::NVOS32_ATTR2_GPU_CACHEABLE.value(nv::NVOS32_ATTR2_GPU_CACHEABLE_NO) |
               nv::NVOS32_ATTR2_ZBC.value(nv::NVOS32_ATTR2_ZBC_PREFER_NO_ZBC);
    np.format = nv::NV_MMU_PTE_KIND_GENERIC_MEMORY;
    np.size = 4096;
    np.alignment = 4096;
    np.limit = 4095;
    NVL_ASSIGN_OR_RETURN(notifier_, allocObject(rm, gpu_.hDevice(), nv::NV01_MEMORY_SYSTEM, &np));
    NVL_ASSIGN_OR_RETURN(notifierMapping_,
                         rm.mapMemory(RmClient::MapVia::Control, info.minor, gpu_.hDevice(), notifier_.handle(), 0, 4096, 0, nullptr));
    std::memset(notifierMapping_.map.get(), 0, 4096);

    nv::NV_CHANNEL_ALLOC_PARAMS cp{};
    cp.hObjectError = notifier_.handle();
    cp.hObjectBuffer = area_->handle();
    cp.gpFifoOffset = area_->va();
    cp.gpFifoEntries = kEntries;
    cp.hContextShare = hContextShare;
    cp.hUserdMemory[0] = area_->handle();
    cp.userdOffset[0] = kUserdOffset;
    cp.engineType = engineType;
    NVL_ASSIGN_OR_RETURN(object_, allocObject(rm, hChannelGroup, info.channelClass, &cp));

    const uint32_t engineClass = kind_ == EngineKind::Copy ? info.copyClass : info.computeClass;
    NVL_ASSIGN_OR_RETURN(engine_, allocObject(rm, object_.handle(), engineClass));

    nv::NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS tokenParams{};
    tokenParams.workSubmitToken = ~0u;
    NVL_TRY(rm.control(object_.handle(), nv::NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, tokenParams));
    token_ = tokenParams.workSubmitToken;

    // With UVM owning the VA space, UVM maps the channel's context buffers
    // (graphics channels only; RM does it itself otherwise).
    if (gpu_.usesUvm() && engineType == nv::NV2080_ENGINE_TYPE_GRAPHICS) {
        NVL_ASSIGN_OR_RETURN(uvmChannelVa_, gpu_.vaSpace().alloc(kUvmChannelVaSize, 2ull << 20, VaSpace::Use::GpuOnly));
        NVL_TRY(gpu_.uvm().registerChannel(gpu_.uuid(), rm.ctlFd(), rm.handle(), object_.handle(), uvmChannelVa_,
                                           kUvmChannelVaSize));
        uvmRegistered_ = true;
    }
    return kOk;
}

Channel::~Channel() {
    // Nothing may still be running on the channel when its memory goes away
    // (unless a fault stopped it, or stopped what it waits for).
    if (scopeError().ok()) (void)wait(lastSubmitted());
    if (FaultScope* scope = scope_.load(std::memory_order_acquire)) scope->remove(this);
    engine_.reset();
    if (uvmRegistered_) (void)gpu_.uvm().unregisterChannel(gpu_.uuid(), gpu_.rm().handle(), object_.handle());
    object_.reset();
    if (uvmChannelVa_) gpu_.vaSpace().free(uvmChannelVa_, kUvmChannelVaSize);
}

Result<Channel::Reserved> Channel::beginLocked(size_t dwords, size_t dataBytes, bool waitsOnOthers) {
    auto done = [this](uint64_t v) { return isDone(v); };
    auto waitFor = [this](uint64_t v) { return wait(v); };
    Reserved r;
    NVL_ASSIGN_OR_RETURN(size_t pushAt, pushSpace_.reserve(dwords, 1, done, waitFor));
    if (dataBytes) {
        if (!data_) return Status(CUDA_ERROR_INVALID_VALUE, 0, "channel has no data ring");
        dataBytes = (dataBytes + kDataAlign - 1) & ~(kDataAlign - 1);
        NVL_ASSIGN_OR_RETURN(r.dataOffset, dataSpace_.reserve(dataBytes, kDataAlign, done, waitFor));
        r.dataBytes = dataBytes;
        r.data = DataSlot{data_ + r.dataOffset, dataVa_ + r.dataOffset};
    }
    // And a GPFIFO slot the GPU has fetched. At most entries - 1 may be
    // outstanding: with all of them, GP_PUT would equal GP_GET (an empty ring).
    if (put_ + 1 >= entries_) NVL_TRY(wait(put_ + 2 - entries_));
    r.writer = PushWriter(push_ + pushAt, dwords);
    const uint64_t previous = lastSubmitted_.load(std::memory_order_relaxed);
    r.data.timelineVa = semaphoreVa();
    r.data.timelineValue = previous + 1;
    releaseAfterIdle_ = false;
    // Launches do not wait for each other on the GPU: keep the channel's order
    // (and its timeline's) by waiting for the previous submission first.
    if (orderedByAcquire_ && !isDone(previous)) writeOrder(r.writer, previous, waitsOnOthers);
    return r;
}

void Channel::writeOrder(PushWriter& w, uint64_t previous, bool waitsOnOthers) {
    LaunchOrder order = launchOrder();
    if (order == LaunchOrder::Auto) {
        // The engine's wait-for-idle is the cheapest order (no memory round
        // trip) but waits for every grid of the TSG: only when this channel's
        // are the only ones in flight. Before waits for other channels it
        // made the H200 slower than an acquire (a kernel and a copy
        // alternating on one stream: 13.4 us per pair instead of 7.3).
        const FaultScope* scope = scope_.load(std::memory_order_acquire);
        const bool alone = !waitsOnOthers && scope && !scope->otherComputeBusy(*this);
        order = alone ? LaunchOrder::WaitForIdle : LaunchOrder::Acquire;
    }
    switch (order) {
    case LaunchOrder::Auto:  // resolved above
    case LaunchOrder::Acquire: writeWait(w, previous); break;
    case LaunchOrder::AcquireSpin: writeAcquire(w, semaphoreVa(), previous, false); break;
    case LaunchOrder::WaitForIdle:
        w.inc(nv::NVCBC0_WAIT_FOR_IDLE(0));
        releaseAfterIdle_ = true;
        break;
    case LaunchOrder::HostWaitForIdle:
        w.inc(nv::NVC86F_WFI(nv::NVC86F_WFI_SCOPE.value(nv::NVC86F_WFI_SCOPE_CURRENT_VEID)));
        releaseAfterIdle_ = true;
        break;
    case LaunchOrder::Unordered: releaseAfterIdle_ = true; break;
    }
}

Channel::LaunchOrder Channel::parseLaunchOrder(const char* v) {
    if (!v) return LaunchOrder::Auto;
    if (!std::strcmp(v, "acquire")) return LaunchOrder::Acquire;
    if (!std::strcmp(v, "acquire-spin")) return LaunchOrder::AcquireSpin;
    if (!std::strcmp(v, "wfi")) return LaunchOrder::WaitForIdle;
    if (!std::strcmp(v, "host-wfi")) return LaunchOrder::HostWaitForIdle;
    if (!std::strcmp(v, "unordered")) return LaunchOrder::Unordered;
    return LaunchOrder::Auto;
}

Channel::LaunchOrder Channel::launchOrder() {
    static const LaunchOrder order = parseLaunchOrder(env::value("NVLITE_LAUNCH_ORDER"));
    return order;
}

void Channel::writeWait(PushWriter& w, uint64_t value) const { writeAcquire(w, semaphoreVa(), value); }

void writeAcquire(PushWriter& w, uint64_t va, uint64_t value, bool switchTsg) {
    w.inc(nv::NVC86F_SEM_ADDR_LO(lo32(va)), nv::NVC86F_SEM_ADDR_HI(hi32(va)), nv::NVC86F_SEM_PAYLOAD_LO(lo32(value)),
          nv::NVC86F_SEM_PAYLOAD_HI(hi32(value)),
          nv::NVC86F_SEM_EXECUTE(
              nv::NVC86F_SEM_EXECUTE_OPERATION.value(nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ) |
              nv::NVC86F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG.value(switchTsg ? nv::NVC86F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG_EN
                                                                        : nv::NVC86F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG_DIS) |
              nv::NVC86F_SEM_EXECUTE_PAYLOAD_SIZE.value(nv::NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT)));
}

namespace {

// The copy engine's semaphore release of 'payload' at 'va' once its copies
// have landed (flushed to system memory); 'type' says whether the GPU time
// comes with it (the four-word form) or not.
void writeCopySemaphore(PushWriter& w, uint64_t va, uint64_t payload, uint32_t type) {
    w.inc(nv::NVC8B5_SET_SEMAPHORE_A(nv::NVC8B5_SET_SEMAPHORE_A_UPPER.value(hi32(va))), nv::NVC8B5_SET_SEMAPHORE_B(lo32(va)),
          nv::NVC8B5_SET_SEMAPHORE_PAYLOAD(lo32(payload)), nv::NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER(hi32(payload)));
    w.inc(nv::NVC8B5_LAUNCH_DMA(nv::NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE.value(nv::NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE) |
                                nv::NVC8B5_LAUNCH_DMA_FLUSH_ENABLE.value(nv::NVC8B5_LAUNCH_DMA_FLUSH_ENABLE_TRUE) |
                                nv::NVC8B5_LAUNCH_DMA_FLUSH_TYPE.value(nv::NVC8B5_LAUNCH_DMA_FLUSH_TYPE_SYS) |
                                nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE.value(type) |
                                nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE.value(
                                    nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD)));
}

}  // namespace

void Channel::writeHostRelease(PushWriter& w, uint64_t va, uint64_t payload, uint32_t executeFlags) const {
    w.inc(nv::NVC86F_SEM_ADDR_LO(lo32(va)), nv::NVC86F_SEM_ADDR_HI(hi32(va)), nv::NVC86F_SEM_PAYLOAD_LO(lo32(payload)),
          nv::NVC86F_SEM_PAYLOAD_HI(hi32(payload)),
          nv::NVC86F_SEM_EXECUTE(nv::NVC86F_SEM_EXECUTE_OPERATION.value(nv::NVC86F_SEM_EXECUTE_OPERATION_RELEASE) |
                                 nv::NVC86F_SEM_EXECUTE_RELEASE_WFI.value(releaseWfi()) |
                                 nv::NVC86F_SEM_EXECUTE_PAYLOAD_SIZE.value(nv::NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT) |
                                 executeFlags));
}

uint32_t Channel::releaseWfi() const {
    // Only a submission that acquired its predecessor's value (released by
    // the grid when it completes), or whose predecessor was done, may release
    // without waiting for idle: the other orders leave the host running ahead
    // of the grids, and a release passing a running grid would be overwritten
    // by that grid's smaller timeline value when it completes (a waiter for
    // the larger one never returns: bench_events under
    // NVLITE_LAUNCH_ORDER=wfi on the H200).
    return orderedByAcquire_ && !releaseAfterIdle_ ? nv::NVC86F_SEM_EXECUTE_RELEASE_WFI_DIS
                                                   : nv::NVC86F_SEM_EXECUTE_RELEASE_WFI_EN;
}

void Channel::writeTimestamp(PushWriter& w, uint64_t va, uint64_t payload) const {
    if (kind_ == EngineKind::Copy) {
        // The copy engine's four-word release: payload, then its time, after its copies.
        writeCopySemaphore(w, va, payload, nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE);
    } else {
        // Host semaphore with the time, after the channel's earlier work.
        writeHostRelease(w, va, payload,
                         nv::NVC86F_SEM_EXECUTE_RELEASE_TIMESTAMP.value(nv::NVC86F_SEM_EXECUTE_RELEASE_TIMESTAMP_EN));
    }
}

void Channel::writeRelease(PushWriter& w, uint64_t value) {
    const uint64_t va = semaphoreVa();
    if (kind_ == EngineKind::Copy) {
        // The copy engine releases after its copies land (flush to system memory).
        writeCopySemaphore(w, va, value, nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_SEMAPHORE_NO_TIMESTAMP);
    } else {
        // Host semaphore after the channel's earlier work: behind the acquire
        // of the previous submission (whose launches release on completion),
        // or after wait-for-idle.
        writeHostRelease(w, va, value, 0);
    }
}

Result<uint64_t> Channel::endLocked(Reserved& r, Completion completion) {
    PushWriter& w = r.writer;
    const uint64_t value = lastSubmitted_.load(std::memory_order_relaxed) + 1;
    if (completion == Completion::Channel) writeRelease(w, value);

    const size_t begin = static_cast<size_t>(w.begin() - push_);
    const size_t length = w.dwords();
    const uint64_t segmentVa = pushVa_ + begin * 4;
    const uint64_t entry =
        nv::NVC86F_GP_ENTRY0_GET.value(lo32(segmentVa) >> 2) |
        (static_cast<uint64_t>(nv::NVC86F_GP_ENTRY1_GET_HI.value(hi32(segmentVa)) |
                               nv::NVC86F_GP_ENTRY1_LENGTH.value(static_cast<uint32_t>(length)))
         << 32);
    ring_[put_ % entries_] = entry;
    pushSpace_.commit(begin, length, value);
    dataSpace_.commit(r.dataOffset, r.dataBytes, value);
    ++put_;

    storeFence();  // push buffer and ring entry before GP_PUT
    *gpPut_ = static_cast<uint32_t>(put_ % entries_);
    ringDoorbell();
    lastSubmitted_.store(value, std::memory_order_release);
    return value;
}

void Channel::ringDoorbell() const {
    if (gpu_.doorbellPath() == Gpu::DoorbellPath::Bar0Flush) {
        // A BAR0 doorbell may overtake the BAR1 writes before it: reading
        // GP_PUT back through BAR1 returns once they have landed (Gpu::DoorbellPath).
        writeBarrier();
        (void)*gpPut_;
    } else {
        storeFence();  // GP_PUT before the doorbell (through BAR1: kept behind it on the way)
    }
    __atomic_store_n(gpu_.doorbell(), token_, __ATOMIC_RELEASE);  // one register, written by every channel
}

namespace {

// NVLITE_HANG_REPORT=<seconds>: a wait on the GPU lasting that long reports
// where it is stuck (once per wait); unset or 0, never.
uint64_t hangReportNs() {
    static const uint64_t ns = [] {
        const char* v = env::value("NVLITE_HANG_REPORT");
        const unsigned long long s = v ? std::strtoull(v, nullptr, 10) : 0;
        return s > 0 && s < 86400 ? static_cast<uint64_t>(s) * 1000000000ull : 0ull;
    }();
    return ns;
}

// NVLITE_HANG_REPORT_RING=1: after a hang report, ring the channel's doorbell
// again and say whether that ended the wait (a diagnosis: a doorbell Host
// missed, or work that is stuck for another reason).
bool hangReportRings() {
    static const bool on = [] {
        const char* v = env::value("NVLITE_HANG_REPORT_RING");
        return v && *v && std::strcmp(v, "0") != 0;
    }();
    return on;
}

}  // namespace

Status Channel::wait(uint64_t value, WaitMode mode) {
    Backoff backoff(mode);
    uint32_t n = 0;
    uint64_t since = 0;    // when the report's clock started (0: not yet; UINT64_MAX: reported or off)
    uint64_t rangAt = 0;   // when a hang report rang the doorbell again
    while (!isDone(value)) {
        if ((++n & 255) == 0) {
            NVL_TRY(scopeError());
            if (since != UINT64_MAX) {
                const uint64_t limit = hangReportNs();
                const uint64_t now = monotonicNs();
                if (!limit) since = UINT64_MAX;
                else if (!since) since = now;
                else if (now - since >= limit) {
                    if (!isDone(value)) {
                        reportStuck(value, now - since);
                        if (hangReportRings()) {
                            ringDoorbell();
                            rangAt = monotonicNs();
                        }
                    }
                    since = UINT64_MAX;
                }
            }
        }
        backoff.pause();
    }
    if (rangAt)
        trace::print("hang report: channel 0x%x reached %llu %.3f ms after its doorbell was rung again", handle(),
                     static_cast<unsigned long long>(value), static_cast<double>(monotonicNs() - rangAt) / 1e6);
    return kOk;
}

void Channel::reportStuck(uint64_t value, uint64_t waitedNs) const {
    const uint64_t reached = completed(), submitted = lastSubmitted();
    const uint32_t gpGet = userd_ ? __atomic_load_n(userd_ + nv::NVC86F_USERD_GP_GET_OFFSET / 4, __ATOMIC_RELAXED) : 0;
    const uint32_t gpPut = __atomic_load_n(gpPut_, __ATOMIC_RELAXED);
    trace::print("hang report: channel 0x%x (%s) waited for %.0f s for timeline value %llu: reached %llu, "
                 "submitted %llu, GP_PUT %u, USERD GP_GET %u",
                 handle(), kind_ == EngineKind::Copy ? "copy" : "compute", static_cast<double>(waitedNs) / 1e9,
                 static_cast<unsigned long long>(value), static_cast<unsigned long long>(reached),
                 static_cast<unsigned long long>(submitted), gpPut, gpGet);
    if (reached >= submitted) return;
    // The first unfinished submission: its GPFIFO entry and push segment stay
    // untouched until it completes (submission n is entry n - 1).
    const uint64_t stuck = reached + 1;
    const uint64_t entry = ring_[(stuck - 1) % entries_];
    const uint64_t segmentVa = (nv::NVC86F_GP_ENTRY0_GET.get(entry) << 2) |
                               (nv::NVC86F_GP_ENTRY1_GET_HI.get(entry >> 32) << 32);
    const size_t length = nv::NVC86F_GP_ENTRY1_LENGTH.get(entry >> 32);
    const size_t pushDwords = pushSpace_.capacity();
    if (segmentVa < pushVa_ || (segmentVa - pushVa_) / 4 + length > pushDwords) {
        trace::print("hang report:   submission %llu: GPFIFO entry 0x%016llx is not in the push ring",
                     static_cast<unsigned long long>(stuck), static_cast<unsigned long long>(entry));
        return;
    }
    const uint32_t* words = push_ + (segmentVa - pushVa_) / 4;
    // The host semaphore methods of the segment (they take any subchannel).
    uint64_t semVa = 0, payload = 0;
    unsigned acquires = 0;
    auto method = [&](uint32_t address, uint32_t data) {
        switch (address) {
        case nv::NVC86F_SEM_ADDR_LO: semVa = (semVa & ~0xffffffffull) | (data & ~3u); break;
        case nv::NVC86F_SEM_ADDR_HI:
            semVa = (semVa & 0xffffffffull) | (nv::NVC86F_SEM_ADDR_HI_OFFSET.get(data) << 32);
            break;
        case nv::NVC86F_SEM_PAYLOAD_LO: payload = (payload & ~0xffffffffull) | data; break;
        case nv::NVC86F_SEM_PAYLOAD_HI: payload = (payload & 0xffffffffull) | (uint64_t{data} << 32); break;
        case nv::NVC86F_SEM_EXECUTE: {
            const uint64_t op = nv::NVC86F_SEM_EXECUTE_OPERATION.get(data);
            if (op == nv::NVC86F_SEM_EXECUTE_OPERATION_RELEASE || op == nv::NVC86F_SEM_EXECUTE_OPERATION_REDUCTION) break;
            ++acquires;
            const FaultScope* scope = scope_.load(std::memory_order_acquire);
            const Channel* owner = semVa == semaphoreVa() ? this : scope ? scope->withSemaphore(semVa) : nullptr;
            if (owner)
                trace::print("hang report:   submission %llu acquires %llu (operation %llu) of channel 0x%x (%s): "
                             "reached %llu, submitted %llu",
                             static_cast<unsigned long long>(stuck), static_cast<unsigned long long>(payload),
                             static_cast<unsigned long long>(op), owner->handle(),
                             owner->kind_ == EngineKind::Copy ? "copy" : "compute",
                             static_cast<unsigned long long>(owner->completed()),
                             static_cast<unsigned long long>(owner->lastSubmitted()));
            else
                trace::print("hang report:   submission %llu acquires %llu (operation %llu) at 0x%llx (no channel of this context's)",
                             static_cast<unsigned long long>(stuck), static_cast<unsigned long long>(payload),
                             static_cast<unsigned long long>(op), static_cast<unsigned long long>(semVa));
            break;
        }
        default: break;
        }
    };
    for (size_t i = 0; i < length;) {
        const uint32_t header = words[i++];
        const uint64_t op = nv::NVC86F_DMA_SEC_OP.get(header);
        uint32_t address = static_cast<uint32_t>(nv::NVC86F_DMA_METHOD_ADDRESS.get(header)) << 2;
        const size_t count = nv::NVC86F_DMA_METHOD_COUNT.get(header);
        if (op == nv::NVC86F_DMA_SEC_OP_IMMD_DATA_METHOD) {
            method(address, static_cast<uint32_t>(nv::NVC86F_DMA_IMMD_DATA.get(header)));
            continue;
        }
        if (op == nv::NVC86F_DMA_SEC_OP_END_PB_SEGMENT) break;
        for (size_t k = 0; k < count && i < length; ++k, ++i) {
            method(address, words[i]);
            if (op == nv::NVC86F_DMA_SEC_OP_INC_METHOD || (op == nv::NVC86F_DMA_SEC_OP_ONE_INC && k == 0)) address += 4;
        }
    }
    if (!acquires)
        trace::print("hang report:   submission %llu (%zu dwords) acquires nothing",
                     static_cast<unsigned long long>(stuck), length);
}

Status Channel::scopeError() const {
    // A member's scope covers its own notifier too.
    const FaultScope* scope = scope_.load(std::memory_order_acquire);
    return scope ? scope->error() : error();
}

bool Channel::joinFaultScope(FaultScope& scope) {
    FaultScope* none = nullptr;
    if (!scope.add(this)) return false;
    if (!scope_.compare_exchange_strong(none, &scope, std::memory_order_acq_rel)) {
        scope.remove(this);  // already in one
        return false;
    }
    return true;
}

bool FaultScope::add(const Channel* ch) {
    std::lock_guard lock(joinMutex_);
    // A slot a destroyed channel left, else a new one.
    const size_t used = used_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < used; ++i) {
        if (!members_[i].load(std::memory_order_relaxed)) {
            members_[i].store(ch, std::memory_order_release);
            return true;
        }
    }
    if (used == kMaxChannels) return false;
    members_[used].store(ch, std::memory_order_release);
    used_.store(used + 1, std::memory_order_release);
    return true;
}

void FaultScope::remember(const Status& s) const {
    std::lock_guard lock(firstMutex_);
    if (hasFirst_.load(std::memory_order_relaxed)) return;
    first_ = s;
    hasFirst_.store(true, std::memory_order_release);
}

void FaultScope::remove(const Channel* ch) {
    if (Status s = ch->error(); !s.ok()) remember(s);
    std::lock_guard lock(joinMutex_);
    const size_t used = used_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < used; ++i)
        if (members_[i].load(std::memory_order_relaxed) == ch) members_[i].store(nullptr, std::memory_order_release);
}

const Channel* FaultScope::withSemaphore(uint64_t va) const {
    const size_t used = used_.load(std::memory_order_acquire);
    for (size_t i = 0; i < used; ++i) {
        const Channel* ch = members_[i].load(std::memory_order_acquire);
        if (ch && ch->semaphoreVa() == va) return ch;
    }
    return nullptr;
}

bool FaultScope::otherComputeBusy(const Channel& self) const {
    const size_t used = used_.load(std::memory_order_acquire);
    for (size_t i = 0; i < used; ++i) {
        const Channel* ch = members_[i].load(std::memory_order_acquire);
        if (ch && ch != &self && ch->kind() == EngineKind::Compute && !ch->isDone(ch->lastSubmitted())) return true;
    }
    return false;
}

Status FaultScope::error() const {
    if (hasFirst_.load(std::memory_order_acquire)) return first_;
    const size_t used = used_.load(std::memory_order_acquire);
    for (size_t i = 0; i < used; ++i) {
        const Channel* ch = members_[i].load(std::memory_order_acquire);
        if (!ch) continue;
        if (Status s = ch->error(); !s.ok()) {
            remember(s);
            return first_;
        }
    }
    return kOk;
}

Status Channel::error() const {
    // NvNotification[NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR]: when RM tears
    // the channel (its TSG) down it writes info32 (the RC error), info16 and
    // the time, then a nonzero status. Polled while waiting: one load when
    // all is well.
    const auto* n = notifierMapping_.map.as<nv::NvNotification>();
    if (!n) return kOk;
    const nv::NvNotification& e = n[nv::NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR];
    if (__atomic_load_n(&e.status, __ATOMIC_ACQUIRE) == 0) return kOk;
    const uint32_t rcError = __atomic_load_n(&e.info32, __ATOMIC_RELAXED);
    if (trace::api() && !errorTraced_.exchange(true, std::memory_order_relaxed)) {
        const char* name = rcErrorName(rcError);
        trace::print("channel 0x%x stopped by RC error %u (%s), engine 0x%x", object_.handle(), rcError,
                     name ? name : "unnamed", __atomic_load_n(&e.info16, __ATOMIC_RELAXED));
    }
    return channelErrorStatus(rcError);
}

}  // namespace nvl::hw
