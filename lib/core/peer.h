// Several GPUs: which devices reach each other's memory, peer access between
// contexts (cuCtxEnablePeerAccess), and copies whose sides live on
// different devices.
//
// Every device address is unique in the process (one VaSpace holds them
// all), so a peer mapping puts another GPU's video memory at its own address
// in this GPU's space: pointers mean the same on every device. Pinned host
// memory is mapped for each GPU that uses it (unified addressing makes it
// every context's).
#pragma once

#include <cstdint>

#include "common/status.h"
#include "hw/driver.h"

namespace nvl::core {

class Context;
class Device;
class Stream;

// RM's peer capabilities between two devices; none for a device and itself,
// and none when UVM owns the GPU address spaces (NVLITE_VA=uvm: nvlite maps
// peers through RM only).
Result<hw::Driver::PeerCaps> peerCaps(Device& a, Device& b);

// cuCtxEnablePeerAccess / cuCtxDisablePeerAccess from 'ctx' to 'peer', with
// libcuda's errors. Enabling maps the peer's device memory (cuMemAlloc's,
// now and later) into ctx's GPU.
Status enablePeerAccess(Context& ctx, Context& peer, unsigned flags);
Status disablePeerAccess(Context& ctx, Context& peer);
// A context going away: the mappings it asked for go.
void dropPeerAccess(Context& ctx);

// For a copy on 'st' whose side [addr, addr+len) belongs to another device's
// context 'owner': made reachable from st's GPU (pinned memory mapped for it;
// device memory mapped over the peer link, which stays for later copies).
// False when it cannot be (no peer link, or memory that is not a context's
// cuMemAlloc memory): such a copy is staged through the host.
Result<bool> reachFrom(Stream& st, Context& owner, bool deviceMemory, uint64_t addr, uint64_t len);

}  // namespace nvl::core
