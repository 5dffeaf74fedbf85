#include "hw/driver.h"

#include "common/trace.h"
#include "kdrv/kdrv.h"

namespace nvl::hw {
namespace {

// Where we ask for the GPU VA reservation: low enough for 40-bit GPU
// addresses in GPFIFO entries and QMD pointers, away from where Linux puts
// the program, its heap and its libraries.
constexpr uint64_t kVaBase = 0x1000000000ull;   // 64 GiB
constexpr uint64_t kVaSize = 0xE000000000ull;   // 896 GiB

}  // namespace

Result<std::unique_ptr<Driver>> Driver::open() {
    if (!kdrv::get().present()) return CUDA_ERROR_NO_DEVICE;
    std::unique_ptr<Driver> d(new Driver());
    auto rm = RmClient::open();
    if (!rm) return rm.status().code() == CUDA_ERROR_OUT_OF_MEMORY ? rm.status() : Status(CUDA_ERROR_NO_DEVICE);
    d->rm_ = std::move(*rm);
    NVL_ASSIGN_OR_RETURN(auto cards, d->rm_->cardInfo());
    for (const auto& card : cards) {
        auto gpu = Gpu::attach(*d, card);
        if (!gpu) {
            if (trace::api()) trace::print("skipping GPU minor %u (error %d)", card.minor_number, gpu.status().code());
            continue;
        }
        d->gpus_.push_back(std::move(*gpu));
    }
    if (d->gpus_.empty()) return CUDA_ERROR_NO_DEVICE;
    return d;
}

Driver::~Driver() = default;

Result<Uvm*> Driver::uvm() {
    std::lock_guard lock(lazyMutex_);
    if (!uvm_) {
        NVL_ASSIGN_OR_RETURN(uvm_, Uvm::open());
    }
    return uvm_.get();
}

Result<VaSpace*> Driver::vaSpace() {
    std::lock_guard lock(lazyMutex_);
    if (!vaSpace_) {
        NVL_ASSIGN_OR_RETURN(vaSpace_, VaSpace::reserve(kVaBase, kVaSize));
    }
    return vaSpace_.get();
}

}  // namespace nvl::hw
