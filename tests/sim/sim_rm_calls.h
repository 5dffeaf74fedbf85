// Raw RM calls on the simulated driver, for the simulator's own tests
// (test_sim.cpp, test_sim_multigpu.cpp): the ioctls a client makes on its
// control fd, each returning RM's status and failing the test when the
// ioctl itself fails. Include after <cmocka.h>.
#pragma once

#include <stdint.h>

#include "defs/nv_ioctl.h"
#include "defs/nv_status.h"
#include "kdrv/kdrv.h"

namespace simtest {

inline nvl::kdrv::Kdrv& K() { return nvl::kdrv::simKdrv(); }

// An NV_ESC_* ioctl with its parameters; the ioctl's return value.
template <class P>
int esc(int fd, uint32_t nr, P& p) {
    return K().ioctl(fd, nvl::nv::nvIoctlRequest(nr, sizeof p), &p);
}

// NV_ESC_RM_ALLOC of class 'cls' under 'parent' in client 'hRoot';
// *handle: the handle asked for (0: RM picks one), then the new object's.
inline uint32_t rmAlloc(int ctl, uint32_t hRoot, uint32_t parent, uint32_t cls, void* params, uint32_t* handle) {
    nvl::nv::NVOS21_PARAMETERS p{};
    p.hRoot = hRoot;
    p.hObjectParent = parent;
    p.hObjectNew = *handle;
    p.hClass = cls;
    p.pAllocParms = reinterpret_cast<uint64_t>(params);
    assert_int_equal(esc(ctl, nvl::nv::NV_ESC_RM_ALLOC, p), 0);
    if (p.status == nvl::nv::NV_OK) *handle = p.hObjectNew;
    return p.status;
}

// NV_ESC_RM_FREE of 'handle' in client 'hRoot'.
inline uint32_t rmFree(int ctl, uint32_t hRoot, uint32_t handle) {
    nvl::nv::NVOS00_PARAMETERS p{};
    p.hRoot = hRoot;
    p.hObjectOld = handle;
    assert_int_equal(esc(ctl, nvl::nv::NV_ESC_RM_FREE, p), 0);
    return p.status;
}

// NV_ESC_RM_CONTROL 'cmd' on object 'obj' of 'client', with 'params'.
template <class P>
uint32_t rmControl(int ctl, uint32_t client, uint32_t obj, uint32_t cmd, P& params) {
    nvl::nv::NVOS54_PARAMETERS p{};
    p.hClient = client;
    p.hObject = obj;
    p.cmd = cmd;
    p.params = reinterpret_cast<uint64_t>(&params);
    p.paramsSize = sizeof params;
    assert_int_equal(esc(ctl, nvl::nv::NV_ESC_RM_CONTROL, p), 0);
    return p.status;
}

}  // namespace simtest
