#include "core/runtime.h"

#include <pthread.h>

#include <cstdlib>
#include <cstring>

#include "core/device.h"
#include "core/visibility.h"

namespace nvl::core {

Runtime& Runtime::get() {
    // Never destroyed: contexts and memory may still be in use while the
    // process exits (other threads, atexit handlers); the kernel cleans up.
    static Runtime* runtime = new Runtime();
    return *runtime;
}

Runtime::~Runtime() = default;

// In the child of a fork (its only thread): nothing of the parent's driver
// state may be used, and none of it is torn down (the Runtime is never
// destroyed; the kernel drops the child's references to the files at exit).
void Runtime::forkedChild() {
    Runtime& rt = get();
    if (!rt.initialized_.load(std::memory_order_relaxed)) return;
    rt.forkedAfterInit_.store(true, std::memory_order_release);
    rt.initialized_.store(false, std::memory_order_release);
}

Status Runtime::init(unsigned flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    // Checked before the lock: another thread of the parent may have held it.
    if (forkedAfterInit_.load(std::memory_order_acquire)) return CUDA_ERROR_NOT_INITIALIZED;
    std::lock_guard lock(initMutex_);
    if (initDone_) return initStatus_;
    initDone_ = true;
    const char* blocking = std::getenv("CUDA_LAUNCH_BLOCKING");
    launchBlocking_ = blocking && blocking[0] == '1';
    auto driver = hw::Driver::open();
    if (!driver) {
        initStatus_ = driver.status();
        return initStatus_;
    }
    driver_ = std::move(*driver);
    // libcuda's order and CUDA_VISIBLE_DEVICES (read once, here).
    std::vector<GpuIdentity> ids(driver_->gpuCount());
    for (size_t i = 0; i < ids.size(); ++i) {
        const hw::GpuInfo& gi = driver_->gpu(i).info();
        ids[i].pciDomain = gi.pciDomain;
        ids[i].pciBus = gi.pciBus;
        ids[i].pciDevice = gi.pciDevice;
        ids[i].pciFunction = gi.pciFunction;
        std::memcpy(ids[i].uuid, gi.uuid, sizeof ids[i].uuid);
        ids[i].speed = uint64_t{gi.smCount} * gi.smClockKhz;
    }
    for (size_t i : visibleOrder(ids, std::getenv("CUDA_DEVICE_ORDER"), std::getenv("CUDA_VISIBLE_DEVICES")))
        devices_.push_back(std::make_unique<Device>(static_cast<int>(devices_.size()), driver_->gpu(i)));
    if (devices_.empty()) {
        initStatus_ = CUDA_ERROR_NO_DEVICE;
        return initStatus_;
    }
    initialized_.store(true, std::memory_order_release);
    static const int registered = pthread_atfork(nullptr, nullptr, &Runtime::forkedChild);
    (void)registered;
    return kOk;
}

Device* Runtime::device(int ordinal) const {
    if (ordinal < 0 || ordinal >= static_cast<int>(devices_.size())) return nullptr;
    return devices_[static_cast<size_t>(ordinal)].get();
}

}  // namespace nvl::core
