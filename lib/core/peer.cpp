#include "core/peer.h"

#include <algorithm>

#include "core/context.h"
#include "core/device.h"
#include "core/memory.h"
#include "core/runtime.h"

namespace nvl::core {
namespace {

// Links the GPUs (NV50_P2P) and maps owner's heap into 'into's GPU.
// internal: a mapping nvlite keeps for its own copies (held once per GPU).
Status mapHeap(Context& owner, Device& into, bool internal) {
    hw::Gpu& gpu = into.gpu();
    NVL_TRY(gpu.open());
    NVL_TRY(Runtime::get().driver().linkPeers(owner.device().gpu(), gpu));
    return internal ? owner.heap().ensurePeer(gpu) : owner.heap().addPeer(gpu);
}

}  // namespace

Result<hw::Driver::PeerCaps> peerCaps(Device& a, Device& b) {
    if (&a == &b || &a.gpu() == &b.gpu() || hw::Gpu::uvmRequested()) return hw::Driver::PeerCaps{};
    return Runtime::get().driver().peerCaps(a.gpu(), b.gpu());
}

Status enablePeerAccess(Context& ctx, Context& peer, unsigned flags) {
    if (&ctx == &peer) return CUDA_ERROR_INVALID_CONTEXT;
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    NVL_ASSIGN_OR_RETURN(hw::Driver::PeerCaps caps, peerCaps(ctx.device(), peer.device()));
    if (!caps.access) return CUDA_ERROR_INVALID_DEVICE;
    std::lock_guard lock(ctx.peerMutex);
    // Entries of contexts destroyed (or primary contexts reset) since are gone.
    std::erase_if(ctx.peers, [](const Context::PeerEntry& e) { return e.context->generation() != e.generation; });
    for (const auto& e : ctx.peers)
        if (e.context == &peer) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    NVL_TRY(mapHeap(peer, ctx.device(), false));
    ctx.peers.push_back({&peer, peer.generation()});
    return kOk;
}

Status disablePeerAccess(Context& ctx, Context& peer) {
    std::lock_guard lock(ctx.peerMutex);
    for (auto it = ctx.peers.begin(); it != ctx.peers.end(); ++it) {
        if (it->context != &peer) continue;
        const bool live = peer.active() && peer.generation() == it->generation;
        ctx.peers.erase(it);
        if (!live) break;
        peer.heap().removePeer(ctx.device().gpu());
        return kOk;
    }
    return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
}

void dropPeerAccess(Context& ctx) {
    std::lock_guard lock(ctx.peerMutex);
    for (const auto& e : ctx.peers)
        if (e.context->active() && e.context->generation() == e.generation)
            e.context->heap().removePeer(ctx.device().gpu());
    ctx.peers.clear();
}

Result<bool> reachFrom(Stream& st, Context& owner, bool deviceMemory, uint64_t addr, uint64_t len) {
    Device& here = st.context().device();
    if (!deviceMemory) {
        NVL_TRY(owner.host().mapOn(here.gpu(), addr, len));
        return true;
    }
    NVL_ASSIGN_OR_RETURN(hw::Driver::PeerCaps caps, peerCaps(here, owner.device()));
    if (!caps.access) return false;
    NVL_TRY(mapHeap(owner, here, true));
    return true;
}

}  // namespace nvl::core
