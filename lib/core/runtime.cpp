#include "core/runtime.h"

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

Status Runtime::init(unsigned flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
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
    return kOk;
}

Device* Runtime::device(int ordinal) const {
    if (ordinal < 0 || ordinal >= static_cast<int>(devices_.size())) return nullptr;
    return devices_[static_cast<size_t>(ordinal)].get();
}

}  // namespace nvl::core
