#include "hw/driver.h"

#include <cstring>

#include "common/trace.h"
#include "defs/rm_classes.h"
#include "defs/rm_controls.h"
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

namespace {
std::pair<uint32_t, uint32_t> pairOf(const Gpu& a, const Gpu& b) {
    const uint32_t x = a.info().gpuId, y = b.info().gpuId;
    return x < y ? std::make_pair(x, y) : std::make_pair(y, x);
}
}  // namespace

Result<Driver::PeerCaps> Driver::peerCaps(Gpu& a, Gpu& b) {
    if (&a == &b) return PeerCaps{};
    std::lock_guard lock(peerMutex_);
    const auto key = pairOf(a, b);
    if (auto it = peerCaps_.find(key); it != peerCaps_.end()) return it->second;
    auto q = std::make_unique<nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS>();
    std::memset(q.get(), 0, sizeof *q);
    q->gpuIds[0] = a.info().gpuId;
    q->gpuIds[1] = b.info().gpuId;
    q->gpuCount = 2;
    PeerCaps caps;
    if (Status s = rm_->control(rm_->handle(), nv::NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2, *q); s.ok()) {
        caps.access = nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_READS_SUPPORTED.get(q->p2pCaps) &&
                      nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_WRITES_SUPPORTED.get(q->p2pCaps);
        caps.atomics = caps.access && nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_ATOMICS_SUPPORTED.get(q->p2pCaps);
        caps.nvlink = caps.access && nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_NVLINK_SUPPORTED.get(q->p2pCaps);
    } else if (trace::api()) {
        trace::print("P2P caps of GPUs 0x%x and 0x%x: error %d (no peer access)", a.info().gpuId, b.info().gpuId,
                     s.code());
    }
    if (trace::api())
        trace::print("P2P caps 0x%x <-> 0x%x: 0x%x (access %d atomics %d nvlink %d)", a.info().gpuId,
                     b.info().gpuId, q->p2pCaps, caps.access, caps.atomics, caps.nvlink);
    peerCaps_[key] = caps;
    return caps;
}

Status Driver::linkPeers(Gpu& a, Gpu& b) {
    std::lock_guard lock(peerMutex_);
    const auto key = pairOf(a, b);
    if (peerLinks_.count(key)) return kOk;
    nv::NV503B_ALLOC_PARAMETERS p{};
    p.hSubDevice = a.hSubdevice();
    p.hPeerSubDevice = b.hSubdevice();
    NVL_ASSIGN_OR_RETURN(RmObject link, allocObject(*rm_, rm_->handle(), nv::NV50_P2P, &p));
    peerLinks_.emplace(key, std::move(link));
    return kOk;
}

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
