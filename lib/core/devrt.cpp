#include "core/devrt.h"

#include <bit>
#include <cstdio>
#include <cstring>

#include "common/trace.h"
#include "core/context.h"
#include "core/device.h"
#include "core/memory.h"
#include "hw/cpu.h"
#include "loader/image.h"

namespace nvl::core {

namespace {

// The ring is a power of two (the device masks positions) of at least this.
constexpr uint64_t kMinRingBytes = 256;
constexpr uint64_t kMaxRingBytes = uint64_t{1} << 40;

// One field of the State through the CPU mapping (the GPU may be updating others).
template <class T>
void writeField(devrt::State* state, T devrt::State::*field, const T& value) {
    std::memcpy(static_cast<void*>(&(state->*field)), &value, sizeof value);
}

class StdoutOutput final : public fifo::Output {
public:
    void write(const char* text, size_t bytes) override { std::fwrite(text, 1, bytes, stdout); }
};

}  // namespace

DeviceRuntime::~DeviceRuntime() = default;

Status DeviceRuntime::setFifoLimit(size_t bytes) {
    std::lock_guard lock(mutex_);
    if (launched_.load(std::memory_order_acquire) & loader::kDevrtFifo) return CUDA_ERROR_INVALID_VALUE;
    if (bytes > kMaxRingBytes) return CUDA_ERROR_INVALID_VALUE;
    if (ready_.load(std::memory_order_acquire)) {
        // No launched kernel has used the ring: a new one replaces it.
        uint64_t ringBytes;
        NVL_ASSIGN_OR_RETURN(auto host, makeRing(bytes, &ringBytes));
        host_ = std::move(host);
        ringBytes_ = ringBytes;
        writeRing();
    }
    fifoLimit_.store(bytes, std::memory_order_release);
    return kOk;
}

Status DeviceRuntime::setHeapLimit(size_t bytes) {
    std::lock_guard lock(mutex_);
    if (launched_.load(std::memory_order_acquire) & loader::kDevrtHeap) return CUDA_ERROR_INVALID_VALUE;
    if (bytes > devrt::kMaxHeapBytes) return CUDA_ERROR_INVALID_VALUE;
    if (heapMade_) {
        const uint64_t old = heapVa_;
        NVL_TRY(makeHeap(bytes));
        if (old) ctx_.heap().free(old);
        writeHeap();
    }
    heapLimit_.store(bytes, std::memory_order_release);
    return kOk;
}

Result<std::unique_ptr<hw::GpuMemory>> DeviceRuntime::makeRing(size_t limit, uint64_t* ringBytes) {
    // The largest power of two the limit holds (ring arithmetic), never more than asked.
    const uint64_t bytes = std::bit_floor(std::max<uint64_t>(limit, kMinRingBytes));
    NVL_ASSIGN_OR_RETURN(auto host, ctx_.device().gpu().allocHost(devrt::kHostBlockBytes + bytes));
    std::memset(host->cpu(), 0, devrt::kHostBlockBytes + bytes);
    *ringBytes = bytes;
    return host;
}

// Sets heapVa_/heapBytes_ (the old heap, if any, is the caller's to free).
Status DeviceRuntime::makeHeap(size_t limit) {
    uint64_t va = 0;
    if (limit != 0) {  // a heap of 0 bytes: malloc returns NULL
        NVL_ASSIGN_OR_RETURN(DeviceHeap::Block b, ctx_.heap().alloc(limit));
        va = b.va;
    }
    heapVa_ = va;
    heapBytes_ = va ? limit : 0;
    heapMade_ = true;
    return kOk;
}

// Only while no launched kernel uses the FIFO: nothing is reserved.
void DeviceRuntime::writeRing() {
    writeField(stateCpu_, &devrt::State::ringAddress, host_->va() + devrt::kHostBlockBytes);
    writeField(stateCpu_, &devrt::State::ringBytes, ringBytes_);
    writeField(stateCpu_, &devrt::State::hostBlock, host_->va());
    writeField(stateCpu_, &devrt::State::head, uint64_t{0});
    hw::writeBarrier();
}

// Only while no launched kernel uses the heap: nothing is handed out.
void DeviceRuntime::writeHeap() {
    const uint64_t none[devrt::kHeapClasses] = {};
    std::memcpy(static_cast<void*>(stateCpu_->freeLists), none, sizeof none);
    writeField(stateCpu_, &devrt::State::heapTop, uint64_t{0});
    writeField(stateCpu_, &devrt::State::heapBytes, heapBytes_);
    writeField(stateCpu_, &devrt::State::heapAddress, heapVa_);
    hw::writeBarrier();
}

Status DeviceRuntime::allocate() {
    // The State takes device atomics: video memory, written through the CPU
    // mapping small allocations have.
    NVL_ASSIGN_OR_RETURN(DeviceHeap::Block state, ctx_.heap().alloc(sizeof(devrt::State)));
    if (!state.cpuVisible) {
        ctx_.heap().free(state.va);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    uint64_t ringBytes = 0;
    auto host = makeRing(fifoLimit(), &ringBytes);
    if (!host) {
        ctx_.heap().free(state.va);
        return host.status();
    }
    stateVa_ = state.va;
    stateCpu_ = reinterpret_cast<devrt::State*>(state.va);
    host_ = std::move(*host);
    ringBytes_ = ringBytes;
    heapVa_ = heapBytes_ = 0;
    heapMade_ = false;
    const devrt::State empty{};
    std::memcpy(static_cast<void*>(stateCpu_), &empty, sizeof empty);
    writeRing();
    ready_.store(true, std::memory_order_release);
    if (trace::api())
        trace::print("device runtime: state 0x%llx, printf FIFO %llu bytes", static_cast<unsigned long long>(stateVa_),
                     static_cast<unsigned long long>(ringBytes_));
    return kOk;
}

Result<uint64_t> DeviceRuntime::stateAddress(uint8_t uses) {
    std::lock_guard lock(mutex_);
    if (!ready_.load(std::memory_order_acquire)) NVL_TRY(allocate());
    if ((uses & loader::kDevrtHeap) && !heapMade_) {
        NVL_TRY(makeHeap(heapLimit()));
        writeHeap();
        if (trace::api())
            trace::print("device runtime: heap %llu bytes at 0x%llx", static_cast<unsigned long long>(heapBytes_),
                         static_cast<unsigned long long>(heapVa_));
    }
    return stateVa_;
}

void DeviceRuntime::noteFirstLaunch(uint8_t uses) {
    // Under the lock: a limit change either happened before (and the kernel
    // uses its buffers) or is refused.
    std::lock_guard lock(mutex_);
    launched_.fetch_or(uses, std::memory_order_acq_rel);
}

void DeviceRuntime::drainLocked() {
    devrt::HostBlock* hb = static_cast<devrt::HostBlock*>(host_->cpu());
    uint64_t tail = __atomic_load_n(&hb->tail, __ATOMIC_RELAXED);
    StdoutOutput out;
    fifo::Output& sink = output_ ? *output_ : static_cast<fifo::Output&>(out);
    const fifo::Ring ring{static_cast<uint8_t*>(host_->cpu()) + devrt::kHostBlockBytes, ringBytes_};
    const fifo::DrainResult r = fifo::drain(ring, &tail, sink);
    if (r.records) {
        // The space is free again once the device sees the new tail.
        __atomic_store_n(&hb->tail, tail, __ATOMIC_RELEASE);
        if (!output_) std::fflush(stdout);
    }
    if (trace::api()) {
        if (r.malformed) trace::print("device runtime: a printf record could not be formatted in full");
        if (__atomic_exchange_n(&hb->overflowed, 0u, __ATOMIC_ACQ_REL))
            trace::print("device runtime: the printf FIFO was full, output was lost (CU_LIMIT_PRINTF_FIFO_SIZE)");
        if (r.stuck && !stuckReported_) trace::print("device runtime: the printf FIFO is corrupt, output stops here");
    }
    if (r.stuck) stuckReported_ = true;
}

void DeviceRuntime::flush() {
    if (!ready_.load(std::memory_order_acquire)) return;
    std::lock_guard lock(mutex_);
    if (ready_.load(std::memory_order_relaxed)) drainLocked();
}

bool DeviceRuntime::asserted() {
    if (!ready_.load(std::memory_order_acquire)) return false;
    std::lock_guard lock(mutex_);
    if (!ready_.load(std::memory_order_relaxed)) return false;
    drainLocked();
    return __atomic_load_n(&static_cast<devrt::HostBlock*>(host_->cpu())->asserted, __ATOMIC_ACQUIRE) != 0;
}

void DeviceRuntime::release() {
    std::lock_guard lock(mutex_);
    if (ready_.load(std::memory_order_relaxed)) {
        drainLocked();
        ready_.store(false, std::memory_order_release);
        if (heapVa_) ctx_.heap().free(heapVa_);
        ctx_.heap().free(stateVa_);
        host_.reset();
    }
    stateVa_ = heapVa_ = heapBytes_ = ringBytes_ = 0;
    heapMade_ = false;
    stateCpu_ = nullptr;
    stuckReported_ = false;
    launched_.store(0, std::memory_order_release);
    fifoLimit_.store(kDefaultFifoBytes, std::memory_order_release);
    heapLimit_.store(kDefaultHeapBytes, std::memory_order_release);
}

DeviceRuntime::Buffers DeviceRuntime::buffers() {
    std::lock_guard lock(mutex_);
    Buffers b;
    if (!ready_.load(std::memory_order_relaxed)) return b;
    b.host = static_cast<devrt::HostBlock*>(host_->cpu());
    b.ring = static_cast<uint8_t*>(host_->cpu()) + devrt::kHostBlockBytes;
    b.ringBytes = ringBytes_;
    b.state = stateVa_;
    b.stateCpu = stateCpu_;
    b.heap = heapVa_;
    b.heapBytes = heapBytes_;
    return b;
}

void DeviceRuntime::setOutput(fifo::Output* out) {
    std::lock_guard lock(mutex_);
    output_ = out;
}

}  // namespace nvl::core
