// The simulated driver with two GPUs (NVLITE_SIM_GPUS=2, set before the sim
// starts): what RM tells about each (card info, ids, device instances, UUIDs,
// video memory), peer-to-peer capabilities, NV50_P2P links and the rule that
// maps one GPU's video memory into the other's address space only as a peer
// mapping over a link. Raw ioctls, as in test_sim.cpp.
#include <fcntl.h>

#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "defs/nv_ioctl.h"
#include "defs/nv_status.h"
#include "defs/rm_classes.h"
#include "defs/rm_controls.h"
#include "kdrv/kdrv.h"
#include "kdrv/sim/sim_control.h"
#include "kdrv/sim/sim_gpu_config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}

#include "sim/sim_rm_calls.h"

using namespace nvl;
namespace cfg = nvl::kdrv::sim::config;

namespace {

using simtest::esc;
using simtest::K;

struct Gpu {
    uint32_t device = 0, subdevice = 0, vaspace = 0, virtmem = 0;
};

struct State {
    int ctl = -1;
    uint32_t client = 0;
    Gpu gpu[2];
} S;

// The calls of sim_rm_calls.h on this client's control fd.
uint32_t rmAlloc(uint32_t parent, uint32_t cls, void* params, uint32_t* handle) {
    return simtest::rmAlloc(S.ctl, S.client, parent, cls, params, handle);
}

uint32_t rmFree(uint32_t handle) { return simtest::rmFree(S.ctl, S.client, handle); }

template <class P>
uint32_t rmControl(uint32_t obj, uint32_t cmd, P& params) {
    return simtest::rmControl(S.ctl, S.client, obj, cmd, params);
}

uint32_t allocVideo(int g, uint64_t size) {
    nv::NV_MEMORY_ALLOCATION_PARAMS p{};
    p.owner = S.client;
    p.type = nv::NVOS32_TYPE_IMAGE;
    p.flags = nv::NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED | nv::NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE;
    p.attr = nv::NVOS32_ATTR_PAGE_SIZE.value(nv::NVOS32_ATTR_PAGE_SIZE_HUGE);
    p.attr2 = nv::NVOS32_ATTR2_PAGE_SIZE_HUGE.value(nv::NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB);
    p.size = size;
    p.alignment = 2ull << 20;
    uint32_t h = 0;
    assert_int_equal(rmAlloc(S.gpu[g].device, nv::NV01_MEMORY_LOCAL_USER, &p, &h), nv::NV_OK);
    return h;
}

// Maps hMemory into GPU g's address space at va; the NVOS46 status.
uint32_t mapInto(int g, uint32_t hMemory, uint64_t va, uint64_t length, bool peer) {
    nv::NVOS46_PARAMETERS d{};
    d.hClient = S.client;
    d.hDevice = S.gpu[g].device;
    d.hDma = S.gpu[g].virtmem;
    d.hMemory = hMemory;
    d.length = length;
    d.flags = nv::NVOS46_FLAGS_DMA_OFFSET_FIXED.value(1) |
              (peer ? nv::NVOS46_FLAGS_P2P_ENABLE.value(nv::NVOS46_FLAGS_P2P_ENABLE_NOSLI) : 0);
    d.dmaOffset = va;
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_MAP_MEMORY_DMA, d), 0);
    return d.status;
}

uint32_t unmapFrom(int g, uint32_t hMemory, uint64_t va) {
    nv::NVOS47_PARAMETERS u{};
    u.hClient = S.client;
    u.hDevice = S.gpu[g].device;
    u.hDma = S.gpu[g].virtmem;
    u.hMemory = hMemory;
    u.dmaOffset = va;
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_UNMAP_MEMORY_DMA, u), 0);
    return u.status;
}

uint64_t fbFreeKb(int g) {
    auto fb = std::make_unique<nv::NV2080_CTRL_FB_GET_INFO_V2_PARAMS>();
    std::memset(fb.get(), 0, sizeof *fb);
    fb->fbInfoListSize = 1;
    fb->fbInfoList[0].index = nv::NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE;
    assert_int_equal(rmControl(S.gpu[g].subdevice, nv::NV2080_CTRL_CMD_FB_GET_INFO_V2, *fb), nv::NV_OK);
    return fb->fbInfoList[0].data;
}

int setup(void**) {
    S.ctl = K().open("/dev/nvidiactl", O_RDWR);
    if (S.ctl < 0) return -1;
    nv::NVOS21_PARAMETERS p{};
    p.hClass = nv::NV01_ROOT_CLIENT;
    if (esc(S.ctl, nv::NV_ESC_RM_ALLOC, p) != 0 || p.status != nv::NV_OK) return -1;
    S.client = p.hObjectNew;
    return 0;
}

// ================================================================= tests

void test_two_cards(void**) {
    std::vector<nv::nv_ioctl_card_info_t> cards(32);
    assert_int_equal(
        K().ioctl(S.ctl, nv::nvIoctlRequest(nv::NV_ESC_CARD_INFO, sizeof(cards[0]) * cards.size()), cards.data()), 0);
    for (uint32_t k = 0; k < 2; ++k) {
        assert_int_equal(cards[k].valid, 1);
        assert_int_equal(cards[k].minor_number, k);
        assert_int_equal(cards[k].pci_info.bus, cfg::kPciBuses[k]);
        assert_int_equal(cards[k].gpu_id, cfg::gpuIdOf(k));
    }
    assert_int_equal(cards[1].pci_info.bus, 0x0c);  // below GPU 0's 0x1b
    assert_int_equal(cards[2].valid, 0);
    // Room for one entry is not enough for two GPUs.
    assert_int_equal(K().ioctl(S.ctl, nv::nvIoctlRequest(nv::NV_ESC_CARD_INFO, sizeof(cards[0])), cards.data()),
                     -EINVAL);
    // /dev/nvidia1 exists, /dev/nvidia2 does not.
    int fd = K().open("/dev/nvidia1", O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(K().close(fd), 0);
    assert_true(K().open("/dev/nvidia2", O_RDWR) < 0);
    assert_true(K().open("/dev/nvidia01", O_RDWR) < 0);

    nv::NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS att{};
    assert_int_equal(rmControl(S.client, nv::NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS, att), nv::NV_OK);
    assert_int_equal(att.gpuIds[0], cfg::gpuIdOf(0));
    assert_int_equal(att.gpuIds[1], cfg::gpuIdOf(1));
    assert_int_equal(att.gpuIds[2], nv::NV0000_CTRL_GPU_INVALID_ID);

    // Device instances, devices and subdevices of both.
    for (int k = 0; k < 2; ++k) {
        nv::NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS id{};
        id.gpuId = cfg::gpuIdOf(static_cast<uint32_t>(k));
        assert_int_equal(rmControl(S.client, nv::NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, id), nv::NV_OK);
        assert_int_equal(id.deviceInstance, k);
        nv::NV0080_ALLOC_PARAMETERS dp{};
        dp.deviceId = id.deviceInstance;
        assert_int_equal(rmAlloc(S.client, nv::NV01_DEVICE_0, &dp, &S.gpu[k].device), nv::NV_OK);
        nv::NV2080_ALLOC_PARAMETERS sp{};
        assert_int_equal(rmAlloc(S.gpu[k].device, nv::NV20_SUBDEVICE_0, &sp, &S.gpu[k].subdevice), nv::NV_OK);
        nv::NV_VASPACE_ALLOCATION_PARAMETERS vas{};
        vas.vaBase = 0x1000;
        vas.vaSize = 1ull << 47;
        assert_int_equal(rmAlloc(S.gpu[k].device, nv::FERMI_VASPACE_A, &vas, &S.gpu[k].vaspace), nv::NV_OK);
        nv::NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS vm{};
        vm.limit = (1ull << 47) - 1;
        vm.hVASpace = S.gpu[k].vaspace;
        assert_int_equal(rmAlloc(S.gpu[k].device, nv::NV01_MEMORY_VIRTUAL, &vm, &S.gpu[k].virtmem), nv::NV_OK);
        // Each its own UUID: byte 14 is '0' + k.
        nv::NV2080_CTRL_GPU_GET_GID_INFO_PARAMS gid{};
        gid.flags = nv::NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY;
        assert_int_equal(rmControl(S.gpu[k].subdevice, nv::NV2080_CTRL_CMD_GPU_GET_GID_INFO, gid), nv::NV_OK);
        assert_int_equal(gid.data[cfg::kUuidGpuByte], '0' + k);
        assert_memory_equal(gid.data, cfg::kUuid, cfg::kUuidGpuByte);
        nv::NV2080_CTRL_GPU_GET_GID_INFO_PARAMS text{};
        text.flags = nv::NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_ASCII;
        assert_int_equal(rmControl(S.gpu[k].subdevice, nv::NV2080_CTRL_CMD_GPU_GET_GID_INFO, text), nv::NV_OK);
        assert_string_equal(reinterpret_cast<char*>(text.data),
                            k == 0 ? "GPU-6e766c69-7465-2d73-696d-2d6832303021"
                                   : "GPU-6e766c69-7465-2d73-696d-2d6832303121");
    }
    nv::NV0080_ALLOC_PARAMETERS third{};
    third.deviceId = 2;
    uint32_t h = 0;
    assert_int_equal(rmAlloc(S.client, nv::NV01_DEVICE_0, &third, &h), nv::NV_ERR_INVALID_DEVICE);
}

void test_peer_caps(void**) {
    auto q = std::make_unique<nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS>();
    std::memset(q.get(), 0, sizeof *q);
    q->gpuIds[0] = cfg::gpuIdOf(0);
    q->gpuIds[1] = cfg::gpuIdOf(1);
    q->gpuCount = 2;
    assert_int_equal(rmControl(S.client, nv::NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2, *q), nv::NV_OK);
    assert_true(nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_READS_SUPPORTED.get(q->p2pCaps));
    assert_true(nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_WRITES_SUPPORTED.get(q->p2pCaps));
    assert_true(nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_NVLINK_SUPPORTED.get(q->p2pCaps));
    assert_true(nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_ATOMICS_SUPPORTED.get(q->p2pCaps));
    assert_int_equal(q->busPeerIds[0 * 2 + 1], 1);
    assert_int_equal(q->busPeerIds[1 * 2 + 0], 0);
    assert_int_equal(q->busPeerIds[0], nv::NV0000_CTRL_SYSTEM_GET_P2P_CAPS_INVALID_PEER);
    // A GPU with itself, an unknown id, no ids.
    q->gpuIds[1] = cfg::gpuIdOf(0);
    assert_int_equal(rmControl(S.client, nv::NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2, *q), nv::NV_OK);
    assert_int_equal(q->p2pCaps, 0);
    assert_int_equal(q->p2pCapsStatus[0], nv::NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED);
    q->gpuIds[1] = 0x4200;
    assert_int_equal(rmControl(S.client, nv::NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2, *q),
                     nv::NV_ERR_INVALID_ARGUMENT);
    q->gpuCount = 0;
    assert_int_equal(rmControl(S.client, nv::NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2, *q),
                     nv::NV_ERR_INVALID_ARGUMENT);
}

void test_peer_mappings(void**) {
    const uint64_t size = 4ull << 20, va = 0x2000000000ull;
    const uint64_t free1 = fbFreeKb(1), free0 = fbFreeKb(0);
    const uint32_t mem1 = allocVideo(1, size);
    // Video memory is per GPU.
    assert_int_equal(fbFreeKb(1), free1 - (size >> 10));
    assert_int_equal(fbFreeKb(0), free0);
    // Its own GPU maps it as usual.
    assert_int_equal(mapInto(1, mem1, va, size, false), nv::NV_OK);
    // Another GPU: only as a peer mapping, only over a link.
    assert_int_equal(mapInto(0, mem1, va, size, false), nv::NV_ERR_INVALID_ARGUMENT);
    assert_int_equal(mapInto(0, mem1, va, size, true), nv::NV_ERR_INVALID_STATE);
    nv::NV503B_ALLOC_PARAMETERS link{};
    link.hSubDevice = S.gpu[0].subdevice;
    link.hPeerSubDevice = S.gpu[0].subdevice;
    uint32_t hLink = 0;
    assert_int_equal(rmAlloc(S.client, nv::NV50_P2P, &link, &hLink), nv::NV_ERR_NOT_SUPPORTED);  // one GPU
    link.hPeerSubDevice = S.gpu[0].device;
    assert_int_equal(rmAlloc(S.client, nv::NV50_P2P, &link, &hLink), nv::NV_ERR_INVALID_OBJECT_HANDLE);
    link.hPeerSubDevice = S.gpu[1].subdevice;
    assert_int_equal(rmAlloc(S.gpu[0].device, nv::NV50_P2P, &link, &hLink), nv::NV_ERR_INVALID_OBJECT_PARENT);
    assert_int_equal(rmAlloc(S.client, nv::NV50_P2P, &link, &hLink), nv::NV_OK);
    assert_int_equal(mapInto(0, mem1, va, size, true), nv::NV_OK);
    // The mapping is GPU 0's own: unmapping it from GPU 1 leaves GPU 0's.
    assert_int_equal(unmapFrom(1, mem1, va), nv::NV_OK);
    assert_int_equal(unmapFrom(1, mem1, va), nv::NV_ERR_OBJECT_NOT_FOUND);
    assert_int_equal(unmapFrom(0, mem1, va), nv::NV_OK);
    assert_int_equal(mapInto(0, mem1, va, size, true), nv::NV_OK);
    // A VA space of another GPU than the device named is refused.
    nv::NVOS46_PARAMETERS d{};
    d.hClient = S.client;
    d.hDevice = S.gpu[0].device;
    d.hDma = S.gpu[1].virtmem;
    d.hMemory = mem1;
    d.length = size;
    d.flags = nv::NVOS46_FLAGS_DMA_OFFSET_FIXED.value(1);
    d.dmaOffset = va + size;
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_MAP_MEMORY_DMA, d), 0);
    assert_int_equal(d.status, nv::NV_ERR_INVALID_OBJECT_HANDLE);
    // Freeing the memory takes the peer mapping with it.
    assert_int_equal(rmFree(mem1), nv::NV_OK);
    assert_int_equal(unmapFrom(0, mem1, va), nv::NV_ERR_OBJECT_NOT_FOUND);
    assert_int_equal(fbFreeKb(1), free1);
    assert_int_equal(rmFree(hLink), nv::NV_OK);
    // Without the link a new peer mapping is refused again.
    const uint32_t again = allocVideo(1, size);
    assert_int_equal(mapInto(0, again, va, size, true), nv::NV_ERR_INVALID_STATE);
    assert_int_equal(rmFree(again), nv::NV_OK);
}

}  // namespace

int main() {
    setenv("NVLITE_SIM_GPUS", "2", 1);
    unsetenv("NVLITE_SIM_P2P");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_cards),
        cmocka_unit_test(test_peer_caps),
        cmocka_unit_test(test_peer_mappings),
    };
    return cmocka_run_group_tests(tests, setup, nullptr);
}
