#include "core/runtime.h"

#include <cstdlib>

#include "core/device.h"

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
    for (size_t i = 0; i < driver_->gpuCount(); ++i)
        devices_.push_back(std::make_unique<Device>(static_cast<int>(i), driver_->gpu(i)));
    initialized_.store(true, std::memory_order_release);
    return kOk;
}

Device* Runtime::device(int ordinal) const {
    if (ordinal < 0 || ordinal >= static_cast<int>(devices_.size())) return nullptr;
    return devices_[static_cast<size_t>(ordinal)].get();
}

}  // namespace nvl::core
