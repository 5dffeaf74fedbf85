// Process-wide driver state: cuInit, the devices, the driver connection.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "hw/driver.h"

namespace nvl::core {

class Device;

// True on the library's thread while it runs a host function (core/host_func.h).
bool insideHostFunction();

class Runtime {
public:
    static Runtime& get();

    // cuInit: opens the driver once; later calls return the first result.
    Status init(unsigned flags);
    bool initialized() const { return initialized_.load(std::memory_order_acquire); }
    // CUDA_ERROR_NOT_INITIALIZED before a successful cuInit;
    // CUDA_ERROR_NOT_PERMITTED inside a host function (libcuda's rule).
    Status checkInit() const {
        if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
        if (insideHostFunction()) return CUDA_ERROR_NOT_PERMITTED;
        return kOk;
    }

    int deviceCount() const { return static_cast<int>(devices_.size()); }
    // nullptr when the ordinal is out of range.
    Device* device(int ordinal) const;
    hw::Driver& driver() { return *driver_; }
    // CUDA_LAUNCH_BLOCKING=1 (read at cuInit): every launch and copy returns
    // only once it is done.
    bool launchBlocking() const { return launchBlocking_; }

private:
    Runtime() = default;
    ~Runtime();

    std::mutex initMutex_;
    bool initDone_ = false;
    Status initStatus_;
    std::atomic<bool> initialized_{false};
    bool launchBlocking_ = false;
    std::unique_ptr<hw::Driver> driver_;
    std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace nvl::core
