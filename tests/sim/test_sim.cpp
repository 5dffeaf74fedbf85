// Tests of the simulated NVIDIA driver (lib/kdrv/sim), driven directly
// through nvl::kdrv::simKdrv() with raw ioctls, the way the hw layer (and
// tinygrad's NV backend) talks to the real driver.
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <vector>

#include "defs/compute_cbc0.h"
#include "defs/copy_c8b5.h"
#include "defs/host_c86f.h"
#include "defs/nv_ioctl.h"
#include "defs/nv_status.h"
#include "defs/rm_classes.h"
#include "defs/rm_controls.h"
#include "defs/uvm_ioctl.h"
#include "kdrv/kdrv.h"
#include "kdrv/sim/sim_control.h"
#include "defs/qmd_v04.h"
#include "kdrv/sim/sim_gpu_config.h"

// cmocka last: its macros (fail, ...) clash with the standard library
// headers; and cmocka 1.1 declares its functions without extern "C".
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

constexpr uint64_t kHuge = 2ull << 20;
constexpr uint32_t kSubchCompute = 1;
constexpr uint32_t kSubchCopy = 4;

template <class P>
uint32_t uvmCall(int fd, unsigned long cmd, P& p) {
    int rc = K().ioctl(fd, cmd, &p);
    assert_int_equal(rc, 0);
    return p.rmStatus;
}

uint64_t nowNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// ------------------------------------------------------------------ state

struct Buffer {
    uint32_t handle = 0;
    uint64_t va = 0;  // GPU VA == CPU address
    uint64_t size = 0;
    uint8_t* cpu = nullptr;
};

struct TestChannel {
    uint32_t handle = 0;
    uint32_t engine = 0;  // object handle of the copy/compute object
    uint32_t token = 0;
    Buffer area;                  // ring at 0, USERD at kUserd, push buffers from kPush
    Buffer notifier;              // error notifier (system memory)
    uint32_t entries = 512;
    uint32_t put = 0;
    uint64_t pushHead = 0;
    static constexpr uint64_t kUserd = 0x1000;
    static constexpr uint64_t kPush = 0x10000;
};

struct State {
    int ctl = -1, dev = -1, uvm = -1, uvm2 = -1;
    uint32_t client = 0, device = 0, subdevice = 0, usermode = 0, virtmem = 0, vaspace = 0, group = 0, ctxshare = 0;
    nv::NvProcessorUuid uuid{};
    volatile uint32_t* doorbell = nullptr;
    Buffer sem;  // host memory for semaphores
    TestChannel copy, copy2, compute;
} S;

// ------------------------------------------------------------- RM helpers

// The calls of sim_rm_calls.h on this client's control fd.
uint32_t rmAlloc(uint32_t parent, uint32_t cls, void* params, uint32_t* handle, uint32_t hRoot = 0) {
    return simtest::rmAlloc(S.ctl, hRoot ? hRoot : S.client, parent, cls, params, handle);
}

uint32_t rmFree(uint32_t handle) { return simtest::rmFree(S.ctl, S.client, handle); }

template <class P>
uint32_t rmControl(uint32_t obj, uint32_t cmd, P& params, uint32_t client = 0) {
    return simtest::rmControl(S.ctl, client ? client : S.client, obj, cmd, params);
}

int openDev() {
    int fd = K().open("/dev/nvidia0", O_RDWR);
    assert_true(fd >= 0);
    nv::nv_ioctl_register_fd_t reg{};
    reg.ctl_fd = S.ctl;
    assert_int_equal(esc(fd, nv::NV_ESC_REGISTER_FD, reg), 0);
    return fd;
}

// Maps [offset, offset+length) of an RM memory object for the CPU at `at` (or anywhere).
void* rmMapCpu(uint32_t hMemory, uint64_t length, void* at, bool system) {
    int fd = system ? K().open("/dev/nvidiactl", O_RDWR) : openDev();
    assert_true(fd >= 0);
    nv::nv_ioctl_nvos33_parameters_with_fd p{};
    p.params.hClient = S.client;
    p.params.hDevice = S.device;
    p.params.hMemory = hMemory;
    p.params.length = length;
    p.fd = fd;
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_MAP_MEMORY, p), 0);
    assert_int_equal(p.params.status, nv::NV_OK);
    void* m = K().mmap(at, length, PROT_READ | PROT_WRITE, MAP_SHARED | (at ? MAP_FIXED : 0), fd, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(K().close(fd), 0);  // the mapping outlives the fd
    return m;
}

uint32_t uvmRange(uint64_t va, uint64_t size) {
    nv::UVM_CREATE_EXTERNAL_RANGE_PARAMS r{};
    r.base = va;
    r.length = size;
    return uvmCall(S.uvm, nv::UVM_CREATE_EXTERNAL_RANGE, r);
}

uint32_t uvmMap(uint64_t va, uint64_t size, uint32_t hMemory, uint64_t offset = 0) {
    auto* p = new nv::UVM_MAP_EXTERNAL_ALLOCATION_PARAMS{};
    p->base = va;
    p->length = size;
    p->offset = offset;
    p->perGpuAttributes[0].gpuUuid = S.uuid;
    p->perGpuAttributes[0].gpuMappingType = nv::UvmGpuMappingTypeReadWriteAtomic;
    p->gpuAttributesCount = 1;
    p->rmCtrlFd = S.ctl;
    p->hClient = S.client;
    p->hMemory = hMemory;
    uint32_t s = uvmCall(S.uvm, nv::UVM_MAP_EXTERNAL_ALLOCATION, *p);
    delete p;
    return s;
}

uint32_t uvmFree(uint64_t va, uint64_t size) {
    nv::UVM_FREE_PARAMS f{};
    f.base = va;
    f.length = size;
    return uvmCall(S.uvm, nv::UVM_FREE, f);
}

nv::NV_MEMORY_ALLOCATION_PARAMS videoParams(uint64_t size, bool contiguous) {
    nv::NV_MEMORY_ALLOCATION_PARAMS p{};
    p.owner = S.client;
    p.type = nv::NVOS32_TYPE_IMAGE;
    p.flags = nv::NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED | nv::NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED |
              nv::NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE | nv::NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT;
    p.attr = nv::NVOS32_ATTR_PAGE_SIZE.value(nv::NVOS32_ATTR_PAGE_SIZE_HUGE) |
             nv::NVOS32_ATTR_PHYSICALITY.value(contiguous ? nv::NVOS32_ATTR_PHYSICALITY_CONTIGUOUS
                                                          : nv::NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS);
    p.attr2 = nv::NVOS32_ATTR2_PAGE_SIZE_HUGE.value(nv::NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB);
    p.format = 6;
    p.size = size;
    p.alignment = kHuge;
    p.limit = size - 1;
    return p;
}

// A GPU VA reservation that is also a CPU address (like the hw layer's
// VaSpace). Below 1 TiB: GPFIFO entries address push buffers with 40 bits and
// SEND_PCAS_A takes QMD addresses >> 8 in 32 bits. (Under ASan, whose shadow
// covers 2 GiB..16 TiB, only the low 2 GiB are left for that.)
uint64_t reserveVa(uint64_t size, bool low = true) {
#if defined(__SANITIZE_ADDRESS__)
    static uint64_t next = 0x40000000ull;
    const uint64_t limit = 0x7fff0000ull;
#else
    static uint64_t next = 0x2000000000ull;
    const uint64_t limit = 1ull << 40;
#endif
    size = (size + kHuge - 1) & ~(kHuge - 1);
    if (!low) {
        void* p = mmap(nullptr, size + kHuge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        assert_true(p != MAP_FAILED);
        return (reinterpret_cast<uint64_t>(p) + kHuge - 1) & ~(kHuge - 1);
    }
    for (;;) {
        assert_true(next + size <= limit);
        void* want = reinterpret_cast<void*>(next);
        void* p = mmap(want, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        const uint64_t at = next;
        next += size + kHuge;  // a guard gap
        if (p == want) return at;
        if (p != MAP_FAILED) munmap(p, size);
    }
}

// Video memory at a fresh VA, mapped for the GPU (UVM) and optionally the CPU (BAR1).
Buffer allocVideo(uint64_t size, bool cpu, uint64_t va = 0) {
    Buffer b;
    b.size = (size + kHuge - 1) & ~(kHuge - 1);
    nv::NV_MEMORY_ALLOCATION_PARAMS p = videoParams(b.size, true);
    assert_int_equal(rmAlloc(S.device, nv::NV01_MEMORY_LOCAL_USER, &p, &b.handle), nv::NV_OK);
    b.va = va ? va : reserveVa(b.size);
    if (cpu) b.cpu = static_cast<uint8_t*>(rmMapCpu(b.handle, b.size, reinterpret_cast<void*>(b.va), false));
    assert_int_equal(uvmRange(b.va, b.size), nv::NV_OK);
    assert_int_equal(uvmMap(b.va, b.size, b.handle), nv::NV_OK);
    return b;
}

// Host memory (shared anonymous), described to RM and mapped at its own address.
Buffer allocHost(uint64_t size) {
    Buffer b;
    b.size = (size + 4095) & ~4095ull;
    // At a reserved low address (QMD and push-buffer pointers are 40-bit).
    void* at = reinterpret_cast<void*>(reserveVa(b.size));
    void* m = mmap(at, b.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    assert_true(m == at);
    b.cpu = static_cast<uint8_t*>(m);
    b.va = reinterpret_cast<uint64_t>(m);
    nv::nv_ioctl_nvos02_parameters_with_fd p{};
    p.params.hRoot = S.client;
    p.params.hObjectParent = S.device;
    p.params.hClass = nv::NV01_MEMORY_SYSTEM_OS_DESCRIPTOR;
    p.params.flags = nv::NVOS02_FLAGS_PHYSICALITY.value(nv::NVOS02_FLAGS_PHYSICALITY_NONCONTIGUOUS) |
                     nv::NVOS02_FLAGS_COHERENCY.value(nv::NVOS02_FLAGS_COHERENCY_CACHED) |
                     nv::NVOS02_FLAGS_MAPPING.value(nv::NVOS02_FLAGS_MAPPING_NO_MAP);
    p.params.pMemory = b.va;
    p.params.limit = b.size - 1;
    p.fd = -1;
    assert_int_equal(esc(S.dev, nv::NV_ESC_RM_ALLOC_MEMORY, p), 0);
    assert_int_equal(p.params.status, nv::NV_OK);
    b.handle = p.params.hObjectNew;
    assert_int_equal(uvmRange(b.va, b.size), nv::NV_OK);
    assert_int_equal(uvmMap(b.va, b.size, b.handle), nv::NV_OK);
    return b;
}

Buffer allocSystemNotifier() {
    Buffer b;
    b.size = 4096;
    nv::NV_MEMORY_ALLOCATION_PARAMS p{};
    p.owner = S.client;
    p.type = nv::NVOS32_TYPE_NOTIFIER;
    p.flags = nv::NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED | nv::NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED;
    p.attr = nv::NVOS32_ATTR_LOCATION.value(nv::NVOS32_ATTR_LOCATION_PCI);
    p.size = 4096;
    p.limit = 4095;
    assert_int_equal(rmAlloc(S.device, nv::NV01_MEMORY_SYSTEM, &p, &b.handle), nv::NV_OK);
    b.cpu = static_cast<uint8_t*>(rmMapCpu(b.handle, 4096, nullptr, true));
    std::memset(b.cpu, 0, 4096);
    return b;
}

// ------------------------------------------------------------ push buffers

struct Push {
    std::vector<uint32_t> w;
    void header(uint32_t op, uint32_t subch, uint32_t method, uint32_t count) {
        w.push_back(nv::NVC86F_DMA_SEC_OP.value(op) | nv::NVC86F_DMA_METHOD_COUNT.value(count) |
                    nv::NVC86F_DMA_METHOD_SUBCHANNEL.value(subch) | nv::NVC86F_DMA_METHOD_ADDRESS.value(method >> 2));
    }
    Push& inc(uint32_t subch, uint32_t method, std::initializer_list<uint32_t> data) {
        header(nv::NVC86F_DMA_SEC_OP_INC_METHOD, subch, method, static_cast<uint32_t>(data.size()));
        w.insert(w.end(), data);
        return *this;
    }
    Push& nonInc(uint32_t subch, uint32_t method, std::initializer_list<uint32_t> data) {
        header(nv::NVC86F_DMA_SEC_OP_NON_INC_METHOD, subch, method, static_cast<uint32_t>(data.size()));
        w.insert(w.end(), data);
        return *this;
    }
    Push& oneInc(uint32_t subch, uint32_t method, std::initializer_list<uint32_t> data) {
        header(nv::NVC86F_DMA_SEC_OP_ONE_INC, subch, method, static_cast<uint32_t>(data.size()));
        w.insert(w.end(), data);
        return *this;
    }
    Push& immd(uint32_t subch, uint32_t method, uint32_t value) {
        w.push_back(nv::NVC86F_DMA_SEC_OP.value(nv::NVC86F_DMA_SEC_OP_IMMD_DATA_METHOD) |
                    nv::NVC86F_DMA_IMMD_DATA.value(value) | nv::NVC86F_DMA_METHOD_SUBCHANNEL.value(subch) |
                    nv::NVC86F_DMA_METHOD_ADDRESS.value(method >> 2));
        return *this;
    }
    // Host semaphore operations.
    Push& semRelease(uint64_t va, uint64_t value, bool b64, bool timestamp) {
        return inc(0, nv::NVC86F_SEM_ADDR_LO,
                   {uint32_t(va), uint32_t(va >> 32), uint32_t(value), uint32_t(value >> 32),
                    nv::NVC86F_SEM_EXECUTE_OPERATION.value(nv::NVC86F_SEM_EXECUTE_OPERATION_RELEASE) |
                        nv::NVC86F_SEM_EXECUTE_RELEASE_WFI.value(nv::NVC86F_SEM_EXECUTE_RELEASE_WFI_EN) |
                        nv::NVC86F_SEM_EXECUTE_PAYLOAD_SIZE.value(b64 ? 1 : 0) |
                        nv::NVC86F_SEM_EXECUTE_RELEASE_TIMESTAMP.value(timestamp ? 1 : 0)});
    }
    Push& semAcquire(uint64_t va, uint64_t value, uint32_t op, bool b64) {
        return inc(0, nv::NVC86F_SEM_ADDR_LO,
                   {uint32_t(va), uint32_t(va >> 32), uint32_t(value), uint32_t(value >> 32),
                    nv::NVC86F_SEM_EXECUTE_OPERATION.value(op) | nv::NVC86F_SEM_EXECUTE_PAYLOAD_SIZE.value(b64 ? 1 : 0)});
    }
    // Copy engine: a 1-D (or multi-line) pitch copy.
    Push& copy(uint64_t dst, uint64_t src, uint32_t bytes, uint32_t lines = 1, uint32_t pitchIn = 0,
               uint32_t pitchOut = 0) {
        inc(kSubchCopy, nv::NVC8B5_OFFSET_IN_UPPER,
            {uint32_t(src >> 32), uint32_t(src), uint32_t(dst >> 32), uint32_t(dst), pitchIn, pitchOut, bytes, lines});
        return inc(kSubchCopy, nv::NVC8B5_LAUNCH_DMA,
                   {nv::NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE.value(nv::NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED) |
                    nv::NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT.value(nv::NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH) |
                    nv::NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT.value(nv::NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH) |
                    nv::NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE.value(lines > 1 ? 1 : 0)});
    }
    // Copy engine: remapped transfer (fill when no source component is used).
    Push& remap(uint64_t dst, uint64_t src, uint32_t elements, uint32_t components, uint32_t constA,
                uint32_t constB) {
        inc(kSubchCopy, nv::NVC8B5_SET_REMAP_CONST_A, {constA, constB, components});
        inc(kSubchCopy, nv::NVC8B5_OFFSET_IN_UPPER, {uint32_t(src >> 32), uint32_t(src), uint32_t(dst >> 32), uint32_t(dst)});
        inc(kSubchCopy, nv::NVC8B5_LINE_LENGTH_IN, {elements, 1});
        return inc(kSubchCopy, nv::NVC8B5_LAUNCH_DMA,
                   {nv::NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE.value(nv::NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED) |
                    nv::NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT.value(nv::NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH) |
                    nv::NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT.value(nv::NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH) |
                    nv::NVC8B5_LAUNCH_DMA_REMAP_ENABLE.value(1)});
    }
    // Copy engine: semaphore release at the end of a LAUNCH_DMA.
    Push& ceRelease(uint64_t va, uint64_t value, bool fourWord, bool payload64) {
        inc(kSubchCopy, nv::NVC8B5_SET_SEMAPHORE_A, {uint32_t(va >> 32), uint32_t(va), uint32_t(value), uint32_t(value >> 32)});
        return inc(kSubchCopy, nv::NVC8B5_LAUNCH_DMA,
                   {nv::NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE.value(nv::NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE) |
                    nv::NVC8B5_LAUNCH_DMA_FLUSH_ENABLE.value(1) |
                    nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE.value(
                        fourWord ? nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE
                                 : nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE) |
                    nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE.value(payload64 ? 1 : 0)});
    }
};

// Writes p's GPFIFO entry and GP_PUT, then rings 'doorbell' (none: nullptr).
void submit(TestChannel& ch, const Push& p, volatile uint32_t* doorbell = S.doorbell) {
    const uint64_t bytes = p.w.size() * 4;
    if (ch.pushHead + bytes > ch.area.size - TestChannel::kPush) ch.pushHead = 0;
    const uint64_t off = TestChannel::kPush + ch.pushHead;
    std::memcpy(ch.area.cpu + off, p.w.data(), bytes);
    ch.pushHead = (ch.pushHead + bytes + 255) & ~255ull;
    const uint64_t va = ch.area.va + off;
    const uint64_t entry = nv::NVC86F_GP_ENTRY0_GET.value(uint32_t(va) >> 2) |
                           (uint64_t(nv::NVC86F_GP_ENTRY1_GET_HI.value(va >> 32) |
                                     nv::NVC86F_GP_ENTRY1_LENGTH.value(static_cast<uint32_t>(p.w.size())))
                            << 32);
    auto* ring = reinterpret_cast<volatile uint64_t*>(ch.area.cpu);
    ring[ch.put % ch.entries] = entry;
    ++ch.put;
    auto* gpPut = reinterpret_cast<uint32_t*>(ch.area.cpu + TestChannel::kUserd + offsetof(nv::Nvc86fControl, GPPut));
    __atomic_store_n(gpPut, ch.put % ch.entries, __ATOMIC_RELEASE);
    if (doorbell) *doorbell = ch.token;
}

uint32_t* sem32(uint64_t off) { return reinterpret_cast<uint32_t*>(S.sem.cpu + off); }
uint64_t* sem64(uint64_t off) { return reinterpret_cast<uint64_t*>(S.sem.cpu + off); }

// Polls host memory the GPU writes, with a timeout.
bool waitValue64(const uint64_t* p, uint64_t value, int timeoutMs = 5000) {
    const uint64_t end = nowNs() + uint64_t(timeoutMs) * 1000000ull;
    while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != value) {
        if (nowNs() > end) return false;
        usleep(10);
    }
    return true;
}
uint64_t g_fence = 0;  // a running semaphore value for "everything before is done"

// Submits p followed by a host release of a fresh value at sem[0], then waits for it.
void runAndWait(TestChannel& ch, Push p) {
    const uint64_t v = ++g_fence;
    p.semRelease(S.sem.va, v, true, false);
    submit(ch, p);
    if (!waitValue64(sem64(0), v)) {
        for (const auto& ci : kdrv::sim::channels())
            std::fprintf(stderr, "channel 0x%x: waiting=%d faulted=%d error=%u faultVa=0x%llx get=%u put=%u\n", ci.hChannel,
                         ci.waiting, ci.faulted, ci.errorCode, static_cast<unsigned long long>(ci.faultAddress), ci.gpGet,
                         ci.gpPut);
        fail();
    }
}

// A channel group (TSG) with its context share.
struct TestGroup {
    uint32_t group = 0;
    uint32_t ctxshare = 0;
};

TestGroup makeGroup(uint32_t engineType = nv::NV2080_ENGINE_TYPE_GRAPHICS) {
    TestGroup g;
    nv::NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS gp{};
    gp.engineType = engineType;
    assert_int_equal(rmAlloc(S.device, nv::KEPLER_CHANNEL_GROUP_A, &gp, &g.group), nv::NV_OK);
    nv::NV_CTXSHARE_ALLOCATION_PARAMETERS cs{};
    cs.hVASpace = S.vaspace;
    cs.flags = nv::NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC;
    assert_int_equal(rmAlloc(g.group, nv::FERMI_CONTEXT_SHARE_A, &cs, &g.ctxshare), nv::NV_OK);
    return g;
}

// A channel in 'g' (the shared group by default) with its engine bound.
TestChannel makeChannel(uint32_t engineClass, uint32_t subch, TestGroup g = TestGroup{S.group, S.ctxshare}) {
    TestChannel ch;
    ch.area = allocVideo(kHuge, true);
    std::memset(ch.area.cpu, 0, TestChannel::kPush);
    ch.notifier = allocSystemNotifier();
    nv::NV_CHANNEL_ALLOC_PARAMS cp{};
    cp.hObjectError = ch.notifier.handle;
    cp.hObjectBuffer = ch.area.handle;
    cp.gpFifoOffset = ch.area.va;
    cp.gpFifoEntries = ch.entries;
    cp.hContextShare = g.ctxshare;
    cp.hUserdMemory[0] = ch.area.handle;
    cp.userdOffset[0] = TestChannel::kUserd;
    assert_int_equal(rmAlloc(g.group, nv::HOPPER_CHANNEL_GPFIFO_A, &cp, &ch.handle), nv::NV_OK);
    assert_int_equal(rmAlloc(ch.handle, engineClass, nullptr, &ch.engine), nv::NV_OK);
    nv::NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS tok{};
    tok.workSubmitToken = ~0u;
    assert_int_equal(rmControl(ch.handle, nv::NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, tok), nv::NV_OK);
    ch.token = tok.workSubmitToken;
    nv::UVM_REGISTER_CHANNEL_PARAMS rc{};
    rc.gpuUuid = S.uuid;
    rc.rmCtrlFd = S.ctl;
    rc.hClient = S.client;
    rc.hChannel = ch.handle;
    rc.base = reserveVa(64ull << 20, false);  // channel VA may be anywhere (57 bits)
    rc.length = 64ull << 20;
    assert_int_equal(uvmCall(S.uvm, nv::UVM_REGISTER_CHANNEL, rc), nv::NV_OK);
    nv::NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS sched{};
    sched.bEnable = 1;
    assert_int_equal(rmControl(g.group, nv::NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, sched), nv::NV_OK);
    Push bind;
    bind.inc(subch, nv::NVC86F_SET_OBJECT, {engineClass});
    runAndWait(ch, bind);
    return ch;
}

const nv::NvNotification& errorNotification(const TestChannel& ch) {
    return reinterpret_cast<const nv::NvNotification*>(ch.notifier.cpu)[nv::NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR];
}

// ======================================================== bring-up (setup)

int bringUp(void**) {
    S.ctl = K().open("/dev/nvidiactl", O_RDWR);
    S.uvm = K().open("/dev/nvidia-uvm", O_RDWR);
    S.uvm2 = K().open("/dev/nvidia-uvm", O_RDWR);
    if (S.ctl < 0 || S.uvm < 0 || S.uvm2 < 0) return -1;
    if (S.ctl < 0x40000000) return -1;  // the sim's private range

    nv::NVOS21_PARAMETERS root{};
    root.hClass = nv::NV01_ROOT_CLIENT;
    if (esc(S.ctl, nv::NV_ESC_RM_ALLOC, root) != 0 || root.status != nv::NV_OK) return -1;
    S.client = root.hObjectNew;
    if ((S.client & 0xfff00000) != 0xc1d00000) return -1;

    S.dev = openDev();
    nv::NV0080_ALLOC_PARAMETERS dp{};
    dp.hClientShare = S.client;
    if (rmAlloc(S.client, nv::NV01_DEVICE_0, &dp, &S.device) != nv::NV_OK) return -1;
    nv::NV2080_ALLOC_PARAMETERS sp{};
    if (rmAlloc(S.device, nv::NV20_SUBDEVICE_0, &sp, &S.subdevice) != nv::NV_OK) return -1;
    if ((S.device & 0xfff00000) != 0xcaf00000) return -1;

    // Doorbell page, through BAR1 (ordered behind the GP_PUT stores, test_doorbells).
    nv::NV_HOPPER_USERMODE_A_PARAMS up{};
    up.bBar1Mapping = 1;
    if (rmAlloc(S.subdevice, nv::HOPPER_USERMODE_A, &up, &S.usermode) != nv::NV_OK) return -1;
    auto* um = static_cast<uint8_t*>(rmMapCpu(S.usermode, nv::NVC361_NV_USERMODE__SIZE, nullptr, false));
    S.doorbell = reinterpret_cast<volatile uint32_t*>(um + nv::NVC361_NOTIFY_CHANNEL_PENDING);

    nv::NV2080_CTRL_GPU_GET_GID_INFO_PARAMS gid{};
    gid.flags = nv::NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY;
    gid.length = 16;
    if (rmControl(S.subdevice, nv::NV2080_CTRL_CMD_GPU_GET_GID_INFO, gid) != nv::NV_OK) return -1;
    std::memcpy(S.uuid.uuid, gid.data, 16);

    nv::NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS vm{};
    vm.limit = 0x1ffffffffffffull;
    if (rmAlloc(S.device, nv::NV01_MEMORY_VIRTUAL, &vm, &S.virtmem) != nv::NV_OK) return -1;
    nv::NV_VASPACE_ALLOCATION_PARAMETERS vas{};
    vas.vaBase = 0x1000;
    vas.vaSize = 0x1fffffb000000ull;
    vas.flags = nv::NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING | nv::NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED;
    if (rmAlloc(S.device, nv::FERMI_VASPACE_A, &vas, &S.vaspace) != nv::NV_OK) return -1;

    nv::UVM_INITIALIZE_PARAMS init{};
    if (K().ioctl(S.uvm, nv::UVM_INITIALIZE, &init) != 0 || init.rmStatus != nv::NV_OK) return -1;
    nv::UVM_MM_INITIALIZE_PARAMS mm{};
    mm.uvmFd = S.uvm;
    if (K().ioctl(S.uvm2, nv::UVM_MM_INITIALIZE, &mm) != 0 || mm.rmStatus != nv::NV_OK) return -1;
    nv::UVM_REGISTER_GPU_PARAMS rg{};
    rg.gpu_uuid = S.uuid;
    rg.rmCtrlFd = -1;
    if (K().ioctl(S.uvm, nv::UVM_REGISTER_GPU, &rg) != 0 || rg.rmStatus != nv::NV_OK) return -1;
    nv::UVM_REGISTER_GPU_VASPACE_PARAMS rv{};
    rv.gpuUuid = S.uuid;
    rv.rmCtrlFd = S.ctl;
    rv.hClient = S.client;
    rv.hVaSpace = S.vaspace;
    if (K().ioctl(S.uvm, nv::UVM_REGISTER_GPU_VASPACE, &rv) != 0 || rv.rmStatus != nv::NV_OK) return -1;

    nv::NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS gp{};
    gp.engineType = nv::NV2080_ENGINE_TYPE_GRAPHICS;
    if (rmAlloc(S.device, nv::KEPLER_CHANNEL_GROUP_A, &gp, &S.group) != nv::NV_OK) return -1;
    nv::NV_CTXSHARE_ALLOCATION_PARAMETERS cs{};
    cs.hVASpace = S.vaspace;
    cs.flags = nv::NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC;
    if (rmAlloc(S.group, nv::FERMI_CONTEXT_SHARE_A, &cs, &S.ctxshare) != nv::NV_OK) return -1;

    S.sem = allocHost(4096);
    std::memset(S.sem.cpu, 0, 4096);
    S.copy = makeChannel(nv::HOPPER_DMA_COPY_A, kSubchCopy);
    S.copy2 = makeChannel(nv::HOPPER_DMA_COPY_A, kSubchCopy);
    S.compute = makeChannel(nv::HOPPER_COMPUTE_A, kSubchCompute);
    return 0;
}

// ================================================================= tests

void test_card_info_and_version(void**) {
    std::vector<nv::nv_ioctl_card_info_t> cards(32);
    int rc = K().ioctl(S.ctl, nv::nvIoctlRequest(nv::NV_ESC_CARD_INFO, sizeof(cards[0]) * cards.size()), cards.data());
    assert_int_equal(rc, 0);
    assert_int_equal(cards[0].valid, 1);
    assert_int_equal(cards[0].pci_info.vendor_id, 0x10de);
    assert_int_equal(cards[0].pci_info.device_id, 0x2335);
    assert_int_equal(cards[0].pci_info.bus, 0x1b);
    assert_int_equal(cards[0].gpu_id, cfg::kGpuId);
    assert_int_equal(cards[0].minor_number, 0);
    assert_true(cards[0].fb_size > 0 && cards[0].reg_size > 0);
    assert_int_equal(cards[1].valid, 0);
    // Card info needs room for every GPU, and only a control fd answers it.
    assert_int_equal(K().ioctl(S.ctl, nv::nvIoctlRequest(nv::NV_ESC_CARD_INFO, 4), cards.data()), -EINVAL);
    assert_int_equal(K().ioctl(S.dev, nv::nvIoctlRequest(nv::NV_ESC_CARD_INFO, sizeof(cards[0])), cards.data()), -EINVAL);

    nv::nv_ioctl_rm_api_version_t ver{};
    ver.cmd = nv::NV_RM_API_VERSION_CMD_QUERY;
    assert_int_equal(esc(S.ctl, nv::NV_ESC_CHECK_VERSION_STR, ver), 0);
    assert_int_equal(ver.reply, nv::NV_RM_API_VERSION_REPLY_RECOGNIZED);
    assert_string_equal(ver.versionString, "580.159.04");

    nv::NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS bv{};
    assert_int_equal(rmControl(S.client, nv::NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, bv), nv::NV_OK);
    assert_string_equal(bv.driverVersionBuffer, "580.159.04");

    nv::NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS id{};
    id.gpuId = cfg::kGpuId;
    assert_int_equal(rmControl(S.client, nv::NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, id), nv::NV_OK);
    assert_int_equal(id.deviceInstance, 0);
    id.gpuId = 0x4200;
    assert_int_equal(rmControl(S.client, nv::NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, id), nv::NV_ERR_INVALID_ARGUMENT);

    nv::NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS att{};
    assert_int_equal(rmControl(S.client, nv::NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS, att), nv::NV_OK);
    assert_int_equal(att.gpuIds[0], cfg::kGpuId);
    assert_int_equal(att.gpuIds[1], nv::NV0000_CTRL_GPU_INVALID_ID);
    nv::NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS probed{};
    assert_int_equal(rmControl(S.client, nv::NV0000_CTRL_CMD_GPU_GET_PROBED_IDS, probed), nv::NV_OK);
    assert_int_equal(probed.gpuIds[0], cfg::kGpuId);
    assert_int_equal(probed.excludedGpuIds[0], nv::NV0000_CTRL_GPU_INVALID_ID);
}

void test_gpu_facts(void**) {
    // Class list: count query, then the fill; and V2.
    nv::NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS cl{};
    assert_int_equal(rmControl(S.device, nv::NV0080_CTRL_CMD_GPU_GET_CLASSLIST, cl), nv::NV_OK);
    assert_true(cl.numClasses > 5);
    std::vector<uint32_t> classes(cl.numClasses);
    cl.classList = reinterpret_cast<uint64_t>(classes.data());
    assert_int_equal(rmControl(S.device, nv::NV0080_CTRL_CMD_GPU_GET_CLASSLIST, cl), nv::NV_OK);
    auto has = [&](uint32_t c) { return std::find(classes.begin(), classes.end(), c) != classes.end(); };
    assert_true(has(nv::HOPPER_CHANNEL_GPFIFO_A) && has(nv::HOPPER_COMPUTE_A) && has(nv::HOPPER_DMA_COPY_A) &&
                has(nv::HOPPER_USERMODE_A));
    assert_false(has(nv::AMPERE_COMPUTE_B));
    cl.numClasses = 2;  // too small: filled as far as it goes, then an error
    assert_int_equal(rmControl(S.device, nv::NV0080_CTRL_CMD_GPU_GET_CLASSLIST, cl), nv::NV_ERR_INVALID_PARAM_STRUCT);
    auto v2 = std::make_unique<nv::NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS>();
    assert_int_equal(rmControl(S.device, nv::NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, *v2), nv::NV_OK);
    assert_int_equal(v2->numClasses, classes.size());

    nv::NV2080_CTRL_GR_INFO gr[] = {
        {nv::NV2080_CTRL_GR_INFO_INDEX_SM_VERSION, 0},          {nv::NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM, 0},
        {nv::NV2080_CTRL_GR_INFO_INDEX_MAX_THREADS_PER_WARP, 0}, {nv::NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_SUB_COUNT, 0},
        {nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC, 0}, {nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS, 0},
        {nv::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC, 0}, {nv::NV2080_CTRL_GR_INFO_INDEX_GPU_CORE_COUNT, 0},
    };
    nv::NV2080_CTRL_GR_GET_INFO_PARAMS gp{};
    gp.grInfoListSize = 8;
    gp.grInfoList = reinterpret_cast<uint64_t>(gr);
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_GR_GET_INFO, gp), nv::NV_OK);
    assert_int_equal(gr[0].data, 0x900);
    assert_int_equal(gr[1].data, 64);
    assert_int_equal(gr[2].data, 32);
    assert_int_equal(gr[3].data * gr[4].data, 132);
    assert_int_equal(gr[5].data, 8);
    assert_int_equal(gr[6].data, 9);
    assert_int_equal(gr[7].data, 132 * 128);
    gr[0].index = 0x3a;  // past the last index
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_GR_GET_INFO, gp), nv::NV_ERR_INVALID_ARGUMENT);
    gp.grInfoList = 8;  // bad embedded pointer
    gr[0].index = 0;
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_GR_GET_INFO, gp), nv::NV_ERR_INVALID_ADDRESS);

    assert_memory_equal(S.uuid.uuid, "nvlite-sim-h200!", 16);
    nv::NV2080_CTRL_GPU_GET_GID_INFO_PARAMS gid{};
    gid.flags = nv::NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_ASCII;
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_GPU_GET_GID_INFO, gid), nv::NV_OK);
    assert_string_equal(reinterpret_cast<char*>(gid.data), cfg::kUuidString);

    nv::NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS name{};
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_GPU_GET_NAME_STRING, name), nv::NV_OK);
    assert_string_equal(reinterpret_cast<char*>(name.gpuNameString.ascii), "nvlite simulated Hopper");

    auto fb = std::make_unique<nv::NV2080_CTRL_FB_GET_INFO_V2_PARAMS>();
    const uint32_t idx[] = {nv::NV2080_CTRL_FB_INFO_INDEX_HEAP_SIZE, nv::NV2080_CTRL_FB_INFO_INDEX_BUS_WIDTH,
                            nv::NV2080_CTRL_FB_INFO_INDEX_L2CACHE_SIZE, nv::NV2080_CTRL_FB_INFO_INDEX_RAM_TYPE,
                            nv::NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE};
    fb->fbInfoListSize = 5;
    for (int i = 0; i < 5; ++i) fb->fbInfoList[i].index = idx[i];
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_FB_GET_INFO_V2, *fb), nv::NV_OK);
    assert_int_equal(uint64_t(fb->fbInfoList[0].data) << 10, kdrv::sim::vidmemTotal());
    assert_int_equal(fb->fbInfoList[1].data, 5120);
    assert_int_equal(fb->fbInfoList[2].data, 50u << 20);
    assert_int_equal(fb->fbInfoList[3].data, nv::NV2080_CTRL_FB_INFO_RAM_TYPE_HBM3);
    assert_int_equal(uint64_t(fb->fbInfoList[4].data) << 10, kdrv::sim::vidmemTotal() - kdrv::sim::vidmemUsed());

    nv::NV2080_CTRL_BUS_GET_PCI_INFO_PARAMS pci{};
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_BUS_GET_PCI_INFO, pci), nv::NV_OK);
    assert_int_equal(pci.pciDeviceId, 0x233510de);

    auto eng = std::make_unique<nv::NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS>();
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_GPU_GET_ENGINES_V2, *eng), nv::NV_OK);
    assert_int_equal(eng->engineCount, 11);
    assert_int_equal(eng->engineList[0], nv::NV2080_ENGINE_TYPE_GRAPHICS);

    nv::NV2080_CTRL_CE_GET_CAPS_V2_PARAMS caps{};
    caps.ceEngineType = nv::NV2080_ENGINE_TYPE_COPY0;
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_CE_GET_CAPS_V2, caps), nv::NV_OK);
    assert_true(caps.capsTbl[nv::NV2080_CTRL_CE_CAPS_CE_GRCE_BYTE] & nv::NV2080_CTRL_CE_CAPS_CE_GRCE_MASK);
    caps.ceEngineType = nv::NV2080_ENGINE_TYPE_COPY2;
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_CE_GET_CAPS_V2, caps), nv::NV_OK);
    assert_false(caps.capsTbl[nv::NV2080_CTRL_CE_CAPS_CE_GRCE_BYTE] & nv::NV2080_CTRL_CE_CAPS_CE_GRCE_MASK);
    caps.ceEngineType = nv::NV2080_ENGINE_TYPE_GRAPHICS;
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_CE_GET_CAPS_V2, caps), nv::NV_ERR_INVALID_ARGUMENT);

    nv::NV2080_CTRL_GPU_GET_COMPUTE_MODE_RULES_PARAMS rules{};
    rules.rules = 7;
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_GPU_GET_COMPUTE_MODE_RULES, rules), nv::NV_OK);
    assert_int_equal(rules.rules, nv::NV2080_CTRL_GPU_COMPUTE_MODE_RULES_NONE);

    nv::NV2080_CTRL_PERF_BOOST_PARAMS boost{};
    boost.duration = 0xffffffff;
    boost.flags = nv::NV2080_CTRL_PERF_BOOST_FLAGS_CMD.value(nv::NV2080_CTRL_PERF_BOOST_FLAGS_CMD_BOOST_TO_MAX);
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_PERF_BOOST, boost), nv::NV_OK);

    nv::NVL_PERF_GET_CLOCKS_PARAMS clk{};
    clk.flags = nv::NVL_PERF_GET_CLOCKS_FLAGS_LIBCUDA;
    clk.numDomains = 2;
    clk.domains[0].clkDomain = nv::NV2080_CTRL_CLK_DOMAIN_GPCCLK;
    clk.domains[1].clkDomain = nv::NV2080_CTRL_CLK_DOMAIN_MCLK;
    assert_int_equal(rmControl(S.subdevice, nv::NVL_CTRL_CMD_PERF_GET_CLOCKS, clk), nv::NV_OK);
    assert_int_equal(clk.domains[0].freqKHz, 1980000);
    assert_int_equal(clk.domains[1].freqKHz, 3201000);
}

void test_copy_random(void**) {
    std::mt19937 rng(12345);
    Buffer host = allocHost(8 << 20);
    Buffer vid = allocVideo(8 << 20, false);
    Buffer back = allocHost(8 << 20);
    for (uint64_t i = 0; i < host.size; ++i) host.cpu[i] = static_cast<uint8_t>(rng());
    std::memset(back.cpu, 0xee, back.size);
    const uint64_t before = kdrv::sim::counters().bytesCopied;
    struct {
        uint64_t src, dst;
        uint32_t n;
    } cases[] = {{0, 0, 1}, {1, 3, 3}, {7, 4097, 4099}, {12345, 1000001, 65537}, {4096, 2 << 20, 1 << 20}};
    uint64_t total = 0;
    for (const auto& c : cases) {
        Push p;
        p.copy(vid.va + c.dst, host.va + c.src, c.n).copy(back.va + c.dst, vid.va + c.dst, c.n);
        runAndWait(S.copy, p);
        assert_memory_equal(back.cpu + c.dst, host.cpu + c.src, c.n);
        total += 2ull * c.n;
    }
    assert_int_equal(kdrv::sim::counters().bytesCopied - before, total);
    // Bytes just outside the copies stayed untouched.
    assert_int_equal(back.cpu[3 + 3], 0xee);
    assert_int_equal(back.cpu[2], 0xee);
}

void test_copy_across_mappings(void**) {
    // Two video allocations mapped back to back: one copy spans both.
    const uint64_t va = reserveVa(4 * kHuge);
    Buffer a = allocVideo(kHuge, false, va);
    Buffer b = allocVideo(kHuge, false, va + kHuge);
    Buffer host = allocHost(4 << 20);
    Buffer back = allocHost(4 << 20);
    std::mt19937 rng(7);
    for (uint64_t i = 0; i < host.size; ++i) host.cpu[i] = static_cast<uint8_t>(rng());
    const uint64_t off = kHuge - 12345, n = 54321;
    Push p;
    p.copy(a.va + off, host.va, n).copy(back.va, a.va + off, n);
    runAndWait(S.copy, p);
    assert_memory_equal(back.cpu, host.cpu, n);
    (void)b;
}

void test_copy_multiline(void**) {
    Buffer src = allocHost(1 << 20);
    Buffer dst = allocHost(1 << 20);
    for (uint64_t i = 0; i < src.size; ++i) src.cpu[i] = static_cast<uint8_t>(i * 7 + 3);
    std::memset(dst.cpu, 0, dst.size);
    const uint32_t lines = 37, len = 333, pin = 1000, pout = 517;
    Push p;
    p.copy(dst.va + 5, src.va + 11, len, lines, pin, pout);
    runAndWait(S.copy, p);
    for (uint32_t l = 0; l < lines; ++l) {
        assert_memory_equal(dst.cpu + 5 + l * pout, src.cpu + 11 + l * pin, len);
        assert_int_equal(dst.cpu[5 + l * pout + len], 0);  // gap untouched
    }
}

// SET_REMAP_COMPONENTS: component size, source and destination component
// counts (minus one), and what each destination component takes.
uint32_t comps(uint32_t size, uint32_t nsrc, uint32_t ndst, uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
    using namespace nv;
    return NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE.value(size) |
           NVC8B5_SET_REMAP_COMPONENTS_NUM_SRC_COMPONENTS.value(nsrc) |
           NVC8B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS.value(ndst) | NVC8B5_SET_REMAP_COMPONENTS_DST_X.value(x) |
           NVC8B5_SET_REMAP_COMPONENTS_DST_Y.value(y) | NVC8B5_SET_REMAP_COMPONENTS_DST_Z.value(z) |
           NVC8B5_SET_REMAP_COMPONENTS_DST_W.value(w);
}

// This process's resident shared-memory pages (the sim's memfds), KiB.
long rssShmemKb() {
    FILE* f = std::fopen("/proc/self/status", "r");
    assert_non_null(f);
    char line[256];
    long kb = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "RssShmem: %ld kB", &kb) == 1) break;
    std::fclose(f);
    assert_true(kb >= 0);
    return kb;
}

// A zero fill over whole pages drops them from the sim's memory instead of
// writing them: zeroing a big object costs the host nothing (a fuzzed
// module's 2 GiB .nv.global once took 2 GiB of RSS on CI and failed the run).
// The partial pages at both ends are written; bytes outside are kept.
void test_zero_fill_drops_pages(void**) {
    const uint64_t size = 48ull << 20;
    Buffer v = allocVideo(size, true);
    std::mt19937_64 rng(9091);
    for (uint64_t o = 0; o < size; o += 8) {
        const uint64_t x = rng() | 1;  // never a zero word
        std::memcpy(v.cpu + o, &x, 8);
    }
    const std::vector<uint8_t> first(v.cpu, v.cpu + 8192), last(v.cpu + size - 8192, v.cpu + size);
    const long before = rssShmemKb();
    const uint64_t head = 4093, len = size - head - 4101;
    using namespace nv;
    const uint32_t A = NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_A;
    Push p;
    p.remap(v.va + head, 0, static_cast<uint32_t>(len), comps(NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_ONE, 0, 0, A, A, A, A),
            0, 0);
    runAndWait(S.copy, p);
    const long after = rssShmemKb();
    assert_true(before - after >= static_cast<long>((size >> 10) - 64));  // nearly all of it went back
    assert_memory_equal(v.cpu, first.data(), head);
    assert_memory_equal(v.cpu + head + len, last.data() + 8192 - (size - head - len), size - head - len);
    for (uint64_t o = head; o < head + 8192; ++o) assert_int_equal(v.cpu[o], 0);
    for (uint64_t o = head + len - 8192; o < head + len; ++o) assert_int_equal(v.cpu[o], 0);
    for (uint64_t o = head; o < head + len; o += 4096 - 7) assert_int_equal(v.cpu[o], 0);
}

void test_remap_fill(void**) {
    Buffer buf = allocHost(1 << 20);
    std::memset(buf.cpu, 0, buf.size);
    using namespace nv;
    const uint32_t A = NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_A, B = NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_B;
    Push p;
    // memset32: 1000 elements of one 4-byte component.
    p.remap(buf.va + 4, 0, 1000, comps(NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_FOUR, 0, 0, A, A, A, A), 0xdeadbeef, 0);
    // memset8: 333 one-byte elements at an odd address.
    p.remap(buf.va + 8001, 0, 333, comps(NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_ONE, 0, 0, A, A, A, A), 0x5a, 0);
    // memset16 pattern with two components: A,B alternating 2-byte values.
    p.remap(buf.va + 16000, 0, 100, comps(NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_TWO, 0, 1, A, B, A, A), 0x1111,
            0x2222);
    runAndWait(S.copy, p);
    for (int i = 0; i < 1000; ++i) assert_int_equal(reinterpret_cast<uint32_t*>(buf.cpu + 4)[i], 0xdeadbeef);
    assert_int_equal(reinterpret_cast<uint32_t*>(buf.cpu)[0], 0);
    assert_int_equal(reinterpret_cast<uint32_t*>(buf.cpu + 4)[1000], 0);
    for (int i = 0; i < 333; ++i) assert_int_equal(buf.cpu[8001 + i], 0x5a);
    assert_int_equal(buf.cpu[8000], 0);
    assert_int_equal(buf.cpu[8001 + 333], 0);
    for (int i = 0; i < 100; ++i) {
        assert_int_equal(reinterpret_cast<uint16_t*>(buf.cpu + 16000)[2 * i], 0x1111);
        assert_int_equal(reinterpret_cast<uint16_t*>(buf.cpu + 16000)[2 * i + 1], 0x2222);
    }
    // Swizzle: swap the two 2-byte components of 64 source elements, keep nothing else.
    for (int i = 0; i < 128; ++i) reinterpret_cast<uint16_t*>(buf.cpu + 65536)[i] = static_cast<uint16_t>(i);
    Push q;
    q.remap(buf.va + 131072, buf.va + 65536, 64,
            comps(NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_TWO, 1, 1, NVC8B5_SET_REMAP_COMPONENTS_DST_X_SRC_Y,
                  NVC8B5_SET_REMAP_COMPONENTS_DST_X_SRC_X, A, A),
            0, 0);
    runAndWait(S.copy, q);
    for (int i = 0; i < 64; ++i) {
        assert_int_equal(reinterpret_cast<uint16_t*>(buf.cpu + 131072)[2 * i], 2 * i + 1);
        assert_int_equal(reinterpret_cast<uint16_t*>(buf.cpu + 131072)[2 * i + 1], 2 * i);
    }
}

void test_semaphores(void**) {
    // Host: 32-bit release.
    Push p;
    p.semRelease(S.sem.va + 64, 0x12345678abcdull, false, false);
    runAndWait(S.copy, p);
    assert_int_equal(*sem32(64), 0x5678abcd);  // only the low word
    assert_int_equal(*sem32(68), 0);
    // Host: 64-bit release with timestamp: payload at +0, ns time at +8.
    const uint64_t t0 = kdrv::sim::counters().semaphoreReleases;
    Push q;
    q.semRelease(S.sem.va + 128, 0x1122334455667788ull, true, true);
    q.semRelease(S.sem.va + 160, 7, true, true);
    runAndWait(S.copy, q);
    assert_int_equal(*sem64(128), 0x1122334455667788ull);
    const uint64_t ts1 = *sem64(136), ts2 = *sem64(168);
    assert_true(ts1 > 1600000000ull * 1000000000ull);  // wall-clock based ns
    assert_true(ts2 > ts1);
    assert_true(kdrv::sim::counters().semaphoreReleases - t0 >= 3);
    // Copy engine: one word (32-bit), four words (payload + timestamp), 64-bit payload.
    Push c;
    c.ceRelease(S.sem.va + 256, 0xfeedface, false, false);
    c.ceRelease(S.sem.va + 272, 0x99, true, false);
    c.ceRelease(S.sem.va + 304, 0xaabbccdd00112233ull, false, true);
    runAndWait(S.copy, c);
    assert_int_equal(*sem32(256), 0xfeedface);
    assert_int_equal(*sem64(272), 0x99);
    assert_true(*sem64(280) >= ts2);
    assert_int_equal(*sem64(304), 0xaabbccdd00112233ull);
    // Host reduction: IADD.
    *sem32(400) = 40;
    Push r;
    r.inc(0, nv::NVC86F_SEM_ADDR_LO,
          {uint32_t(S.sem.va + 400), uint32_t((S.sem.va + 400) >> 32), 2, 0,
           nv::NVC86F_SEM_EXECUTE_OPERATION.value(nv::NVC86F_SEM_EXECUTE_OPERATION_REDUCTION) |
               nv::NVC86F_SEM_EXECUTE_REDUCTION.value(nv::NVC86F_SEM_EXECUTE_REDUCTION_IADD)});
    runAndWait(S.copy, r);
    assert_int_equal(*sem32(400), 42);
    // Immediate and one-increment headers reach the right methods.
    Push m;
    m.inc(0, nv::NVC86F_SEM_ADDR_HI, {uint32_t((S.sem.va + 512) >> 32)})
        .nonInc(0, nv::NVC86F_SEM_ADDR_LO, {uint32_t(S.sem.va + 999), uint32_t(S.sem.va + 512)})  // last wins
        .oneInc(0, nv::NVC86F_SEM_PAYLOAD_LO, {0x77, 0, 0})
        .immd(0, nv::NVC86F_SEM_EXECUTE, nv::NVC86F_SEM_EXECUTE_OPERATION_RELEASE);
    runAndWait(S.copy, m);
    assert_int_equal(*sem32(512), 0x77);
}

void test_acquire_ordering(void**) {
    // Channel copy2 waits on sem[600] and then writes sem[608]; copy releases sem[600] later.
    *sem64(600) = 0;
    *sem64(608) = 0;
    const uint64_t before = kdrv::sim::counters().semaphoreAcquires;
    Push wait;
    wait.semAcquire(S.sem.va + 600, 5, nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ, true)
        .semRelease(S.sem.va + 608, 2, true, false);
    submit(S.copy2, wait);
    assert_true(kdrv::sim::waitIdle(2000));
    bool waiting = false;
    for (const auto& ci : kdrv::sim::channels())
        if (ci.hChannel == S.copy2.handle) waiting = ci.waiting;
    assert_true(waiting);
    assert_int_equal(*sem64(608), 0);
    // Other channels progress meanwhile.
    Push other;
    other.semRelease(S.sem.va + 600, 4, true, false);  // not enough yet
    runAndWait(S.copy, other);
    usleep(2000);
    assert_int_equal(*sem64(608), 0);
    Push go;
    go.semRelease(S.sem.va + 600, 6, true, false);
    runAndWait(S.copy, go);
    if (!waitValue64(sem64(608), 2, 500)) {
        for (const auto& ci : kdrv::sim::channels())
            fprintf(stderr, "DEBUG ch %x waiting=%d faulted=%d err=%u get=%u put=%u sem600=%llu\n", ci.hChannel, ci.waiting, ci.faulted, ci.errorCode, ci.gpGet, ci.gpPut, (unsigned long long)*sem64(600));
    }
    assert_true(waitValue64(sem64(608), 2));
    assert_true(kdrv::sim::counters().semaphoreAcquires > before);

    // The other acquire operations (32-bit).
    struct {
        uint32_t op, payload, memory;
    } ok[] = {
        {nv::NVC86F_SEM_EXECUTE_OPERATION_ACQUIRE, 9, 9},
        {nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ, 9, 10},
        {nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ, 0xfffffff0u, 3},  // wrapped
        {nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_AND, 0x6, 0x4},
        {nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_NOR, ~0x8u, 0x1},  // bit 3 clear in memory
    };
    for (const auto& c : ok) {
        *sem32(700) = c.memory;
        Push p;
        p.semAcquire(S.sem.va + 700, c.payload, c.op, false);
        runAndWait(S.copy2, p);  // would hang (time out) if not satisfied
    }
    // And one that must wait: STRICT_GEQ does not wrap.
    *sem32(700) = 3;
    *sem64(616) = 0;
    Push p;
    p.semAcquire(S.sem.va + 700, 0xfffffff0u, nv::NVC86F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ, false)
        .semRelease(S.sem.va + 616, 1, true, false);
    submit(S.copy2, p);
    assert_true(kdrv::sim::waitIdle(2000));
    assert_int_equal(*sem64(616), 0);
    __atomic_store_n(sem32(700), 0xfffffff5u, __ATOMIC_RELEASE);  // the CPU satisfies it
    assert_true(waitValue64(sem64(616), 1));
}

void test_compute_launch(void**) {
    Buffer q = allocHost(64 << 10);
    std::memset(q.cpu, 0, q.size);
    uint8_t* qmd = q.cpu;  // QMD at offset 0 (256-byte aligned)
    const uint64_t cb0 = q.va + 4096;
    for (int i = 0; i < 64; ++i) q.cpu[4096 + i] = static_cast<uint8_t>(i);
    using namespace nv;
    qmdSet(qmd, NVCBC0_QMDV04_00_QMD_MAJOR_VERSION, 4);
    qmdSet(qmd, NVCBC0_QMDV04_00_GRID_WIDTH, 100);
    qmdSet(qmd, NVCBC0_QMDV04_00_GRID_HEIGHT, 2);
    qmdSet(qmd, NVCBC0_QMDV04_00_GRID_DEPTH, 1);
    qmdSet(qmd, NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0, 256);
    qmdSet(qmd, NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION1, 1);
    qmdSet(qmd, NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION2, 1);
    qmdSet(qmd, NVCBC0_QMDV04_00_PROGRAM_ADDRESS_LOWER, 0x9abc0000);
    qmdSet(qmd, NVCBC0_QMDV04_00_PROGRAM_ADDRESS_UPPER, 0x12);
    qmdSet(qmd, NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID(0), 1);
    qmdSet(qmd, NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0), uint32_t(cb0 >> 6));
    qmdSet(qmd, NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(0), cb0 >> 38);
    qmdSet(qmd, NVCBC0_QMDV04_00_CONSTANT_BUFFER_SIZE_SHIFTED4(0), 64 >> 4);
    const uint64_t rel = S.sem.va + 800;
    *sem64(800) = 0;
    *sem64(808) = 0;
    qmdSet(qmd, NVCBC0_QMDV04_00_RELEASE_ENABLE(0), 1);
    qmdSet(qmd, NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE(0), NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE_SEMAPHORE_FOUR_WORDS);
    qmdSet(qmd, NVCBC0_QMDV04_00_RELEASE_PAYLOAD64B(0), 1);
    qmdSet(qmd, NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_ADDR_LOWER(0), uint32_t(rel));
    qmdSet(qmd, NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_ADDR_UPPER(0), rel >> 32);
    qmdSet(qmd, NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_PAYLOAD_LOWER(0), 0x55667788);
    qmdSet(qmd, NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_PAYLOAD_UPPER(0), 0x11);

    kdrv::sim::clearLaunches();
    Push p;
    p.inc(kSubchCompute, NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A, {0x7294, 0})
        .inc(kSubchCompute, NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A, {0x7293, 0})
        .inc(kSubchCompute, NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI, {1})
        .inc(kSubchCompute, NVCBC0_SEND_PCAS_A, {uint32_t(q.va >> 8)})
        .inc(kSubchCompute, NVCBC0_SEND_SIGNALING_PCAS2_B,
             {NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION.value(NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE)});
    runAndWait(S.compute, p);
    assert_int_equal(*sem64(800), 0x1155667788ull);
    assert_true(*sem64(808) != 0);  // timestamp
    auto l = kdrv::sim::launches();
    assert_int_equal(l.size(), 1);
    assert_int_equal(l[0].hChannel, S.compute.handle);
    assert_int_equal(l[0].qmdVa, q.va);
    assert_int_equal(l[0].qmdMajorVersion, 4);
    assert_int_equal(l[0].grid[0], 100);
    assert_int_equal(l[0].grid[1], 2);
    assert_int_equal(l[0].block[0], 256);
    assert_int_equal(l[0].programAddress, 0x129abc0000ull);
    assert_int_equal(l[0].cb0Va, cb0);
    assert_int_equal(l[0].cb0Size, 64);
    assert_int_equal(l[0].cb0.size(), 64);
    assert_memory_equal(l[0].cb0.data(), q.cpu + 4096, 64);
    assert_memory_equal(l[0].qmd.data(), qmd, 384);
}

void test_errors(void**) {
    uint32_t h = 0;
    // Bad handles.
    nv::NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS name{};
    assert_int_equal(rmControl(0xcafe0bad, nv::NV2080_CTRL_CMD_GPU_GET_NAME_STRING, name), nv::NV_ERR_OBJECT_NOT_FOUND);
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_GPU_GET_NAME_STRING, name, 0xc1d0dead),
                     nv::NV_ERR_INVALID_CLIENT);
    nv::NV2080_ALLOC_PARAMETERS sp{};
    assert_int_equal(rmAlloc(0xcafe0bad, nv::NV20_SUBDEVICE_0, &sp, &h), nv::NV_ERR_OBJECT_NOT_FOUND);
    assert_int_equal(rmAlloc(S.device, nv::NV20_SUBDEVICE_0, &sp, &h, 0xc1d0dead), nv::NV_ERR_INVALID_OBJECT_HANDLE);
    // Wrong parent, bad class, duplicate handle.
    h = 0;
    assert_int_equal(rmAlloc(S.client, nv::NV20_SUBDEVICE_0, &sp, &h), nv::NV_ERR_INVALID_OBJECT_PARENT);
    assert_int_equal(rmAlloc(S.copy.handle, nv::AMPERE_COMPUTE_B, nullptr, &h), nv::NV_ERR_INVALID_CLASS);
    assert_int_equal(rmAlloc(S.device, 0xbeef, nullptr, &h), nv::NV_ERR_INVALID_CLASS);
    h = S.subdevice;
    assert_int_equal(rmAlloc(S.device, nv::NV20_SUBDEVICE_0, &sp, &h), nv::NV_ERR_INSERT_DUPLICATE_NAME);
    h = 0xc9f00001;  // RM keeps this range for itself
    assert_int_equal(rmAlloc(S.device, nv::NV20_SUBDEVICE_0, &sp, &h), nv::NV_ERR_INVALID_OBJECT_HANDLE);
    h = 0x1234;  // a handle the caller picks
    assert_int_equal(rmAlloc(S.device, nv::NV20_SUBDEVICE_0, &sp, &h), nv::NV_OK);
    assert_int_equal(h, 0x1234);
    assert_int_equal(rmFree(h), nv::NV_OK);
    // Required parameters missing.
    h = 0;
    assert_int_equal(rmAlloc(S.device, nv::NV01_MEMORY_LOCAL_USER, nullptr, &h), nv::NV_ERR_INVALID_ARGUMENT);
    // Control: wrong size, not this object's class, unknown command.
    nv::NVOS54_PARAMETERS c{};
    c.hClient = S.client;
    c.hObject = S.subdevice;
    c.cmd = nv::NV2080_CTRL_CMD_GPU_GET_NAME_STRING;
    c.params = reinterpret_cast<uint64_t>(&name);
    c.paramsSize = sizeof name - 4;
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_CONTROL, c), 0);
    assert_int_equal(c.status, nv::NV_ERR_INVALID_ARGUMENT);
    assert_int_equal(rmControl(S.device, nv::NV2080_CTRL_CMD_GPU_GET_NAME_STRING, name), nv::NV_ERR_NOT_SUPPORTED);
    assert_int_equal(rmControl(S.subdevice, 0x2080dead, name), nv::NV_ERR_NOT_SUPPORTED);
    // Bad pointers: the parameter block (-EFAULT) and the params inside (NV_ERR_INVALID_ADDRESS).
    assert_int_equal(K().ioctl(S.ctl, nv::nvIoctlRequest(nv::NV_ESC_RM_CONTROL, sizeof c), reinterpret_cast<void*>(16)),
                     -EFAULT);
    c.paramsSize = sizeof name;
    c.params = 64;
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_CONTROL, c), 0);
    assert_int_equal(c.status, nv::NV_ERR_INVALID_ADDRESS);
    // Escape-level errors: wrong block size, control-device-only on a GPU fd, unknown escape.
    assert_int_equal(K().ioctl(S.ctl, nv::nvIoctlRequest(nv::NV_ESC_RM_CONTROL, sizeof c - 8), &c), -EINVAL);
    nv::NVOS21_PARAMETERS a{};
    a.hClass = nv::NV01_ROOT_CLIENT;
    assert_int_equal(esc(S.dev, nv::NV_ESC_RM_ALLOC, a), -EINVAL);
    assert_int_equal(K().ioctl(S.ctl, nv::nvIoctlRequest(0x77, 8), &a), -EINVAL);
    // Freeing what does not exist is fine (RS_COMPATABILITY_MODE).
    assert_int_equal(rmFree(0xcafe0bad), nv::NV_OK);
    // Paths that are not NVIDIA device files.
    assert_int_equal(K().open("/dev/nvidia7", O_RDWR), -ENOENT);
    assert_int_equal(K().open("/etc/passwd", O_RDWR), -ENOENT);
    // mmap without a mapping context.
    int dev = openDev();
    errno = 0;
    assert_true(K().mmap(nullptr, 4096, PROT_READ, MAP_SHARED, dev, 0) == MAP_FAILED);
    assert_int_equal(errno, EINVAL);
    // System memory maps through a control fd, not a GPU fd.
    Buffer n = S.copy.notifier;
    nv::nv_ioctl_nvos33_parameters_with_fd m{};
    m.params.hClient = S.client;
    m.params.hDevice = S.device;
    m.params.hMemory = n.handle;
    m.params.length = 4096;
    m.fd = dev;
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_MAP_MEMORY, m), 0);
    assert_int_equal(m.params.status, nv::NV_ERR_INVALID_ARGUMENT);
    m.params.length = 8192;
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_MAP_MEMORY, m), 0);
    assert_int_equal(m.params.status, nv::NV_ERR_INVALID_LIMIT);
    assert_int_equal(K().close(dev), 0);
    // An unregistered GPU fd does not act for the client.
    int raw = K().open("/dev/nvidia0", O_RDWR);
    nv::nv_ioctl_nvos02_parameters_with_fd os{};
    os.params.hRoot = S.client;
    os.params.hObjectParent = S.device;
    os.params.hClass = nv::NV01_MEMORY_SYSTEM_OS_DESCRIPTOR;
    os.params.flags = nv::NVOS02_FLAGS_MAPPING.value(nv::NVOS02_FLAGS_MAPPING_NO_MAP) |
                      nv::NVOS02_FLAGS_COHERENCY.value(nv::NVOS02_FLAGS_COHERENCY_CACHED);
    os.params.pMemory = S.sem.va;
    os.params.limit = 4095;
    assert_int_equal(esc(raw, nv::NV_ESC_RM_ALLOC_MEMORY, os), 0);
    assert_int_equal(os.params.status, nv::NV_ERR_INVALID_CLIENT);
    os.params.pMemory = S.sem.va + 8;  // not page aligned
    assert_int_equal(esc(S.dev, nv::NV_ESC_RM_ALLOC_MEMORY, os), 0);
    assert_int_equal(os.params.status, nv::NV_ERR_NOT_SUPPORTED);
    assert_int_equal(K().close(raw), 0);
}

void test_out_of_memory(void**) {
    const uint64_t total = kdrv::sim::vidmemTotal();
    const uint64_t used0 = kdrv::sim::vidmemUsed();
    uint32_t h = 0;
    nv::NV_MEMORY_ALLOCATION_PARAMS p = videoParams(total + kHuge, false);
    assert_int_equal(rmAlloc(S.device, nv::NV01_MEMORY_LOCAL_USER, &p, &h), nv::NV_ERR_NO_MEMORY);
    // A big one fits and is accounted, then given back.
    const uint64_t big = (total - used0) / 2 & ~(kHuge - 1);
    nv::NV_MEMORY_ALLOCATION_PARAMS q = videoParams(big, false);
    h = 0;
    assert_int_equal(rmAlloc(S.device, nv::NV01_MEMORY_LOCAL_USER, &q, &h), nv::NV_OK);
    assert_int_equal(kdrv::sim::vidmemUsed(), used0 + big);
    auto fb = std::make_unique<nv::NV2080_CTRL_FB_GET_INFO_V2_PARAMS>();
    fb->fbInfoListSize = 1;
    fb->fbInfoList[0].index = nv::NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE;
    assert_int_equal(rmControl(S.subdevice, nv::NV2080_CTRL_CMD_FB_GET_INFO_V2, *fb), nv::NV_OK);
    assert_int_equal(uint64_t(fb->fbInfoList[0].data) << 10, total - used0 - big);
    uint32_t h2 = 0;
    nv::NV_MEMORY_ALLOCATION_PARAMS r = videoParams(total - used0 - big + kHuge, false);  // one page too many
    assert_int_equal(rmAlloc(S.device, nv::NV01_MEMORY_LOCAL_USER, &r, &h2), nv::NV_ERR_NO_MEMORY);
    assert_int_equal(rmFree(h), nv::NV_OK);
    assert_int_equal(kdrv::sim::vidmemUsed(), used0);
}

void test_uvm_rules(void**) {
    nv::UVM_FREE_PARAMS f{};
    const uint64_t va = reserveVa(8 * kHuge);
    assert_int_equal(uvmRange(va + 5, 4096), nv::NV_ERR_INVALID_ADDRESS);      // not 4K aligned
    assert_int_equal(uvmRange(va, kHuge), nv::NV_OK);
    assert_int_equal(uvmRange(va + 4096, 4096), nv::NV_ERR_UVM_ADDRESS_IN_USE);  // overlaps
    assert_int_equal(uvmMap(va + kHuge, 4096, S.sem.handle), nv::NV_ERR_INVALID_ADDRESS);  // no range there
    assert_int_equal(uvmMap(va, 8192, S.sem.handle), nv::NV_ERR_INVALID_OFFSET);  // past the memory's end
    assert_int_equal(uvmMap(va, 4096, 0xcafe0bad), nv::NV_ERR_OBJECT_NOT_FOUND);
    assert_int_equal(uvmFree(va, 4096), nv::NV_ERR_INVALID_ADDRESS);  // not the whole range
    assert_int_equal(uvmFree(va, kHuge), nv::NV_OK);
    f.base = va;
    f.length = kHuge;
    assert_int_equal(uvmCall(S.uvm, nv::UVM_FREE, f), nv::NV_ERR_INVALID_ADDRESS);  // already gone
    // Nothing works before UVM_INITIALIZE; the GPU registers once.
    int fresh = K().open("/dev/nvidia-uvm", O_RDWR);
    nv::UVM_CREATE_EXTERNAL_RANGE_PARAMS r{};
    r.base = va;
    r.length = 4096;
    assert_int_equal(uvmCall(fresh, nv::UVM_CREATE_EXTERNAL_RANGE, r), nv::NV_ERR_ILLEGAL_ACTION);
    nv::UVM_REGISTER_GPU_PARAMS rg{};
    rg.gpu_uuid = S.uuid;
    rg.rmCtrlFd = -1;
    assert_int_equal(uvmCall(S.uvm, nv::UVM_REGISTER_GPU, rg), nv::NV_ERR_INVALID_DEVICE);
    nv::UVM_INITIALIZE_PARAMS init{};
    assert_int_equal(uvmCall(fresh, nv::UVM_INITIALIZE, init), nv::NV_OK);
    rg.gpu_uuid.uuid[0] ^= 1;
    assert_int_equal(uvmCall(fresh, nv::UVM_REGISTER_GPU, rg), nv::NV_ERR_GPU_UUID_NOT_FOUND);
    assert_int_equal(K().ioctl(fresh, 0x12345, &init), -EINVAL);
    assert_int_equal(K().close(fresh), 0);
}

// A multi-line transfer whose pitch is shorter than its line is a method
// error, also a remapped fill that reads nothing (the H200: Xid 39 for a 2-D
// fill with PITCH_IN 0); nothing is written.
void test_copy_short_pitch_refused(void**) {
    const TestGroup g = makeGroup();
    TestChannel ch = makeChannel(nv::HOPPER_DMA_COPY_A, kSubchCopy, g);
    Buffer dst = allocHost(1 << 16);
    std::memset(dst.cpu, 0x5a, dst.size);
    Push p;
    // A fill: 3 lines of 100 four-byte elements, PITCH_IN 0, PITCH_OUT 1000.
    p.inc(kSubchCopy, nv::NVC8B5_PITCH_IN, {0u, 1000u, 100u, 3u});
    p.inc(kSubchCopy, nv::NVC8B5_SET_REMAP_CONST_A,
          {0x01020304u, 0u,
           nv::NVC8B5_SET_REMAP_COMPONENTS_DST_X.value(nv::NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_A) |
               nv::NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE.value(nv::NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_FOUR)});
    p.inc(kSubchCopy, nv::NVC8B5_OFFSET_OUT_UPPER, {uint32_t(dst.va >> 32), uint32_t(dst.va)});
    p.inc(kSubchCopy, nv::NVC8B5_LAUNCH_DMA,
          {nv::NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE.value(nv::NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED) |
           nv::NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT.value(nv::NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH) |
           nv::NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT.value(nv::NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH) |
           nv::NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE.value(1) | nv::NVC8B5_LAUNCH_DMA_REMAP_ENABLE.value(1)});
    submit(ch, p);
    const nv::NvNotification& n = errorNotification(ch);
    const uint64_t end = nowNs() + 5000000000ull;
    while (__atomic_load_n(&n.status, __ATOMIC_ACQUIRE) == 0 && nowNs() < end) usleep(10);
    assert_int_equal(n.status, 0xffff);
    assert_int_equal(n.info32, nv::ROBUST_CHANNEL_CE_ERROR(0));
    for (uint64_t i = 0; i < dst.size; ++i)
        if (dst.cpu[i] != 0x5a) fail_msg("byte %llu written", static_cast<unsigned long long>(i));
}

void test_fault_unmapped(void**) {
    // A group of its own: a fault stops every channel of the faulting TSG.
    const TestGroup g = makeGroup();
    TestChannel ch = makeChannel(nv::HOPPER_DMA_COPY_A, kSubchCopy, g);
    const uint64_t faults = kdrv::sim::counters().faults;
    const uint64_t bad = 0x7f0000000000ull;  // nothing mapped there
    Push p;
    p.copy(S.sem.va + 2048, bad, 64);
    submit(ch, p);
    const nv::NvNotification& n = errorNotification(ch);
    const uint64_t end = nowNs() + 5000000000ull;
    while (__atomic_load_n(&n.status, __ATOMIC_ACQUIRE) == 0 && nowNs() < end) usleep(10);
    assert_int_equal(n.status, 0xffff);
    assert_int_equal(n.info32, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT);
    assert_int_equal(n.info16, nv::NV2080_ENGINE_TYPE_COPY0);
    assert_true(n.timeStamp.nanoseconds[0] != 0);
    assert_int_equal(kdrv::sim::counters().faults, faults + 1);
    bool found = false;
    uint32_t gpGet = 0;
    for (const auto& ci : kdrv::sim::channels()) {
        if (ci.hChannel != ch.handle) continue;
        found = true;
        assert_true(ci.faulted);
        assert_int_equal(ci.faultAddress, bad);
        gpGet = ci.gpGet;
    }
    assert_true(found);
    // Further work on the faulted channel is ignored; the others go on.
    *sem64(880) = 0;
    Push more;
    more.semRelease(S.sem.va + 880, 1, true, false);
    submit(ch, more);
    Push other;
    other.semRelease(S.sem.va + 888, 3, true, false);
    runAndWait(S.copy, other);
    assert_true(kdrv::sim::waitIdle(2000));
    assert_int_equal(*sem64(880), 0);
    assert_int_equal(*sem64(888), 3);
    for (const auto& ci : kdrv::sim::channels())
        if (ci.hChannel == ch.handle) assert_int_equal(ci.gpGet, gpGet);
    // Freeing the channel (and its children) works on a faulted channel.
    assert_int_equal(rmFree(ch.handle), nv::NV_OK);
    assert_int_equal(rmFree(g.group), nv::NV_OK);
}

void test_fault_injection_and_bad_pushbuffer(void**) {
    const TestGroup g = makeGroup();
    TestChannel ch = makeChannel(nv::HOPPER_DMA_COPY_A, kSubchCopy, g);
    assert_true(kdrv::sim::injectFault(S.client, ch.handle, kdrv::sim::InjectedFault::NextCopy));
    assert_false(kdrv::sim::injectFault(S.client, 0xcafe0bad, kdrv::sim::InjectedFault::NextCopy));
    Push p;
    p.copy(S.sem.va + 2048, S.sem.va, 16);
    submit(ch, p);
    const nv::NvNotification& n = errorNotification(ch);
    const uint64_t end = nowNs() + 5000000000ull;
    while (__atomic_load_n(&n.status, __ATOMIC_ACQUIRE) == 0 && nowNs() < end) usleep(10);
    assert_int_equal(n.info32, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT);
    assert_int_equal(rmFree(ch.handle), nv::NV_OK);

    // A GPFIFO entry pointing at unmapped push-buffer memory.
    const TestGroup g2 = makeGroup();
    TestChannel c2 = makeChannel(nv::HOPPER_DMA_COPY_A, kSubchCopy, g2);
    auto* ring = reinterpret_cast<volatile uint64_t*>(c2.area.cpu);
    const uint64_t badPb = 0xf100000000ull;  // below 1 TiB (40-bit GPFIFO addresses), unmapped
    ring[c2.put % c2.entries] = nv::NVC86F_GP_ENTRY0_GET.value(uint32_t(badPb) >> 2) |
                                (uint64_t(nv::NVC86F_GP_ENTRY1_GET_HI.value(badPb >> 32) | nv::NVC86F_GP_ENTRY1_LENGTH.value(4)) << 32);
    ++c2.put;
    auto* gpPut = reinterpret_cast<uint32_t*>(c2.area.cpu + TestChannel::kUserd + offsetof(nv::Nvc86fControl, GPPut));
    __atomic_store_n(gpPut, c2.put % c2.entries, __ATOMIC_RELEASE);
    *S.doorbell = c2.token;
    const nv::NvNotification& n2 = errorNotification(c2);
    const uint64_t end2 = nowNs() + 5000000000ull;
    while (__atomic_load_n(&n2.status, __ATOMIC_ACQUIRE) == 0 && nowNs() < end2) usleep(10);
    assert_int_equal(n2.info32, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT);
    for (const auto& ci : kdrv::sim::channels())
        if (ci.hChannel == c2.handle) assert_int_equal(ci.faultAddress, badPb);
    assert_int_equal(rmFree(c2.handle), nv::NV_OK);
    assert_int_equal(rmFree(g.group), nv::NV_OK);
    assert_int_equal(rmFree(g2.group), nv::NV_OK);
}

// Host fetches a channel's entries only after a doorbell, up to the GP_PUT
// it then reads (sim_gpu.h). A doorbell through the BAR1 page comes after the
// GP_PUT store before it; one through the BAR0 page may overtake it (the
// H200's event race: an entry written, GP_PUT advanced, the doorbell rung,
// and Host never fetched it), and then only a later doorbell fetches it.
void test_doorbells(void**) {
    auto released = [](uint64_t v, int ms) { return waitValue64(sem64(0), v, ms); };
    // No doorbell: never fetched.
    {
        Push p;
        const uint64_t v = ++g_fence;
        p.semRelease(S.sem.va, v, true, false);
        submit(S.copy, p, nullptr);
        assert_false(released(v, 50));
        *S.doorbell = S.copy.token;
        assert_true(released(v, 5000));
    }
    // Through BAR1, right behind the GP_PUT store: fetched, every time.
    for (int i = 0; i < 50; ++i) {
        Push p;
        const uint64_t v = ++g_fence;
        p.semRelease(S.sem.va, v, true, false);
        submit(S.copy, p);
        assert_true(released(v, 5000));
    }
    // The privileged page is refused (it needs the BAR1 mapping and a kernel
    // caller); the plain BAR0 page is what a usermode object without
    // parameters gives.
    nv::NV_HOPPER_USERMODE_A_PARAMS priv{};
    priv.bPriv = 1;
    uint32_t refused = 0;
    assert_int_equal(rmAlloc(S.subdevice, nv::HOPPER_USERMODE_A, &priv, &refused), nv::NV_ERR_INVALID_PARAMETER);
    priv.bBar1Mapping = 1;
    assert_int_equal(rmAlloc(S.subdevice, nv::HOPPER_USERMODE_A, &priv, &refused), nv::NV_ERR_INSUFFICIENT_PERMISSIONS);
    uint32_t bar0 = 0;
    assert_int_equal(rmAlloc(S.subdevice, nv::HOPPER_USERMODE_A, nullptr, &bar0), nv::NV_OK);
    auto* page = static_cast<uint8_t*>(rmMapCpu(bar0, nv::NVC361_NV_USERMODE__SIZE, nullptr, false));
    assert_non_null(page);
    auto* bar0Doorbell = reinterpret_cast<volatile uint32_t*>(page + nv::NVC361_NOTIFY_CHANNEL_PENDING);
    // A BAR0 doorbell right behind the GP_PUT store finds the old GP_PUT
    // (unless the sim happened to look between the two stores: try thrice).
    bool missed = false;
    for (int i = 0; i < 3 && !missed; ++i) {
        Push p;
        const uint64_t v = ++g_fence;
        p.semRelease(S.sem.va, v, true, false);
        submit(S.copy, p, bar0Doorbell);
        missed = !released(v, 50);
        if (missed) {
            // Once GP_PUT has landed, another BAR0 doorbell fetches the entry.
            *bar0Doorbell = S.copy.token;
            assert_true(released(v, 5000));
        }
    }
    assert_true(missed);
    assert_int_equal(rmFree(bar0), nv::NV_OK);
}

void test_idle_cpu_and_latency(void**) {
    // Latency: a submission completes quickly after a long idle period.
    usleep(50000);
    const uint64_t t0 = nowNs();
    Push p;
    runAndWait(S.copy, p);
    const uint64_t latency = nowNs() - t0;
    assert_true(latency < 50000000ull);  // 50 ms, generous for loaded CI machines
    // Idle: the GPFIFO thread must not burn a core while nothing happens.
    usleep(20000);
    timespec c0{}, c1{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    const uint64_t w0 = nowNs();
    usleep(300000);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    const uint64_t wall = nowNs() - w0;
    const uint64_t cpu = uint64_t(c1.tv_sec - c0.tv_sec) * 1000000000ull + uint64_t(c1.tv_nsec) - uint64_t(c0.tv_nsec);
    std::printf("idle: %.1f%% of a core, submit-to-done latency %.1f us\n", 100.0 * double(cpu) / double(wall),
                double(latency) / 1000.0);
    assert_true(cpu < wall / 4);
}

void test_client_teardown(void**) {
    // A second client on its own control fd, with a channel, freed by closing the fd.
    int ctl2 = K().open("/dev/nvidiactl", O_RDWR);
    nv::NVOS21_PARAMETERS root{};
    root.hClass = nv::NV01_ROOT_CLIENT;
    assert_int_equal(esc(ctl2, nv::NV_ESC_RM_ALLOC, root), 0);
    assert_int_equal(root.status, nv::NV_OK);
    const uint32_t c2 = root.hObjectNew;
    assert_true(c2 != S.client);
    // The first client's fd cannot act for it.
    nv::NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS bv{};
    assert_int_equal(rmControl(c2, nv::NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, bv, c2), nv::NV_ERR_INVALID_CLIENT);
    const size_t channelsBefore = kdrv::sim::channels().size();
    nv::NV0080_ALLOC_PARAMETERS dp{};
    nv::NVOS21_PARAMETERS d{};
    d.hRoot = c2;
    d.hObjectParent = c2;
    d.hClass = nv::NV01_DEVICE_0;
    d.pAllocParms = reinterpret_cast<uint64_t>(&dp);
    assert_int_equal(esc(ctl2, nv::NV_ESC_RM_ALLOC, d), 0);
    assert_int_equal(d.status, nv::NV_OK);
    assert_int_equal(K().close(ctl2), 0);
    assert_int_equal(kdrv::sim::channels().size(), channelsBefore);
    // Non-sim descriptors pass through to the system.
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    assert_int_equal(K().close(pipefd[0]), 0);
    assert_int_equal(K().close(pipefd[1]), 0);
    assert_int_equal(K().close(pipefd[1]), -EBADF);
}


// Builds a minimal QMD at `qmd` that releases `value` (one word) at `va` when it completes.
void buildQmd(uint8_t* qmd, uint32_t grid, uint64_t releaseVa, uint32_t value) {
    using namespace nv;
    std::memset(qmd, 0, 384);
    qmdSet(qmd, NVCBC0_QMDV04_00_QMD_MAJOR_VERSION, 4);
    qmdSet(qmd, NVCBC0_QMDV04_00_GRID_WIDTH, grid);
    qmdSet(qmd, NVCBC0_QMDV04_00_GRID_HEIGHT, 1);
    qmdSet(qmd, NVCBC0_QMDV04_00_GRID_DEPTH, 1);
    qmdSet(qmd, NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0, 32);
    qmdSet(qmd, NVCBC0_QMDV04_00_RELEASE_ENABLE(1), 1);
    qmdSet(qmd, NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE(1), NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE_SEMAPHORE_ONE_WORD);
    qmdSet(qmd, NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_ADDR_LOWER(1), uint32_t(releaseVa));
    qmdSet(qmd, NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_ADDR_UPPER(1), releaseVa >> 32);
    qmdSet(qmd, NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_PAYLOAD_LOWER(1), value);
}

void test_compute_dependent_inline_and_fault(void**) {
    using namespace nv;
    Buffer q = allocHost(64 << 10);
    std::memset(q.cpu, 0, q.size);
    // A launch whose QMD schedules a dependent QMD when it completes.
    buildQmd(q.cpu, 1, S.sem.va + 1000, 0x111);
    buildQmd(q.cpu + 1024, 2, S.sem.va + 1004, 0x222);
    qmdSet(q.cpu, NVCBC0_QMDV04_00_DEPENDENT_QMD_ENABLE(0), 1);
    qmdSet(q.cpu, NVCBC0_QMDV04_00_DEPENDENT_QMD_ACTION(0), NVCBC0_QMDV04_00_DEPENDENT_QMD_ACTION_QMD_SCHEDULE);
    qmdSet(q.cpu, NVCBC0_QMDV04_00_DEPENDENT_QMD0_POINTER, uint32_t((q.va + 1024) >> 8));
    kdrv::sim::clearLaunches();
    Push p;
    p.inc(kSubchCompute, NVCBC0_SEND_PCAS_A, {uint32_t(q.va >> 8)})
        .inc(kSubchCompute, NVCBC0_SEND_SIGNALING_PCAS2_B,
             {NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION.value(NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_SCHEDULE)});
    runAndWait(S.compute, p);
    assert_int_equal(*sem32(1000), 0x111);
    assert_int_equal(*sem32(1004), 0x222);
    auto l = kdrv::sim::launches();
    assert_int_equal(l.size(), 2);
    assert_int_equal(l[0].grid[0], 1);
    assert_int_equal(l[1].grid[0], 2);
    assert_true(l[1].sequence > l[0].sequence);
    assert_int_equal(l[1].qmdVa, q.va + 1024);

    // Inline QMD: the QMD words travel in the push buffer and land at the address.
    std::vector<uint8_t> image(384);
    buildQmd(image.data(), 7, S.sem.va + 1008, 0x333);
    const uint64_t at = q.va + 4096;
    Push in;
    in.inc(kSubchCompute, NVCBC0_SET_INLINE_QMD_ADDRESS_A,
           {NVCBC0_SET_INLINE_QMD_ADDRESS_A_QMD_ADDRESS_SHIFTED8_UPPER.value(uint32_t(at >> 40)) |
                NVCBC0_SET_INLINE_QMD_ADDRESS_A_INLINE_SIZE.value(NVCBC0_SET_INLINE_QMD_ADDRESS_A_INLINE_SIZE_INLINE_384),
            uint32_t(at >> 8)});
    in.header(NVC86F_DMA_SEC_OP_INC_METHOD, kSubchCompute, NVCBC0_LOAD_INLINE_QMD_DATA(0), 96);
    for (int i = 0; i < 96; ++i) {
        uint32_t w;
        std::memcpy(&w, image.data() + 4 * i, 4);
        in.w.push_back(w);
    }
    runAndWait(S.compute, in);
    assert_int_equal(*sem32(1008), 0x333);
    assert_memory_equal(q.cpu + 4096, image.data(), 384);
    l = kdrv::sim::launches();
    assert_int_equal(l.size(), 3);
    assert_int_equal(l[2].grid[0], 7);

    // An injected fault on the next launch stops that channel's TSG only.
    const TestGroup g = makeGroup();
    TestChannel ch = makeChannel(HOPPER_COMPUTE_A, kSubchCompute, g);
    assert_true(kdrv::sim::injectFault(S.client, ch.handle, kdrv::sim::InjectedFault::NextLaunch));
    submit(ch, p);
    const nv::NvNotification& n = errorNotification(ch);
    const uint64_t end = nowNs() + 5000000000ull;
    while (__atomic_load_n(&n.status, __ATOMIC_ACQUIRE) == 0 && nowNs() < end) usleep(10);
    assert_int_equal(n.info32, ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT);
    assert_int_equal(n.info16, NV2080_ENGINE_TYPE_GRAPHICS);
    assert_int_equal(kdrv::sim::launches().size(), 3);
    assert_int_equal(rmFree(ch.handle), nv::NV_OK);
    assert_int_equal(rmFree(g.group), nv::NV_OK);
}

// Waits (bounded) for a channel's error notifier; returns it.
const nv::NvNotification& awaitError(const TestChannel& ch) {
    const nv::NvNotification& n = errorNotification(ch);
    const uint64_t end = nowNs() + 5000000000ull;
    while (__atomic_load_n(&n.status, __ATOMIC_ACQUIRE) == 0 && nowNs() < end) usleep(10);
    return n;
}

void test_fault_stops_tsg(void**) {
    using namespace nv;
    // Two TSGs: a fault in one stops all its channels (RM's RC recovery
    // tears down the whole channel group), the other goes on.
    const TestGroup bad = makeGroup(), good = makeGroup();
    TestChannel compute = makeChannel(HOPPER_COMPUTE_A, kSubchCompute, bad);
    TestChannel copy = makeChannel(HOPPER_DMA_COPY_A, kSubchCopy, bad);
    TestChannel other = makeChannel(HOPPER_DMA_COPY_A, kSubchCopy, good);
    Buffer q = allocHost(4096);
    buildQmd(q.cpu, 1, S.sem.va + 1200, 0x5151);
    *sem32(1200) = 0;
    *sem64(1208) = 0;
    kdrv::sim::clearLaunches();
    const uint64_t faults = kdrv::sim::counters().faults;

    // __trap(): an SM exception, ROBUST_CHANNEL_GR_EXCEPTION on the graphics engine.
    assert_true(kdrv::sim::injectFault(S.client, compute.handle, kdrv::sim::InjectedFault::NextLaunchTrap));
    Push launch;
    launch.inc(kSubchCompute, NVCBC0_SEND_PCAS_A, {uint32_t(q.va >> 8)})
        .inc(kSubchCompute, NVCBC0_SEND_SIGNALING_PCAS2_B,
             {NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION.value(NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_SCHEDULE)})
        .semRelease(S.sem.va + 1208, 7, true, false);
    submit(compute, launch);
    const NvNotification& n = awaitError(compute);
    assert_int_equal(n.status, 0xffff);
    assert_int_equal(n.info32, ROBUST_CHANNEL_GR_EXCEPTION);
    assert_int_equal(n.info16, NV2080_ENGINE_TYPE_GRAPHICS);
    // The TSG's copy channel got the same notification without doing anything.
    const NvNotification& nc = awaitError(copy);
    assert_int_equal(nc.status, 0xffff);
    assert_int_equal(nc.info32, ROBUST_CHANNEL_GR_EXCEPTION);
    assert_int_equal(nc.info16, NV2080_ENGINE_TYPE_GRAPHICS);
    assert_int_equal(kdrv::sim::counters().faults, faults + 2);
    // Neither the QMD's release nor the release after it happened.
    assert_true(kdrv::sim::waitIdle(2000));
    assert_int_equal(*sem32(1200), 0);
    assert_int_equal(*sem64(1208), 0);
    assert_int_equal(kdrv::sim::launches().size(), 0);
    // Work submitted to the stopped copy channel is dropped; the other TSG runs.
    *sem64(1216) = 0;
    Push more;
    more.semRelease(S.sem.va + 1216, 1, true, false);
    submit(copy, more);
    runAndWait(other, Push{});
    assert_true(kdrv::sim::waitIdle(2000));
    assert_int_equal(*sem64(1216), 0);
    assert_int_equal(errorNotification(other).status, 0);
    for (const auto& ci : kdrv::sim::channels()) {
        if (ci.hChannel == compute.handle || ci.hChannel == copy.handle) {
            assert_true(ci.faulted);
            assert_int_equal(ci.errorCode, ROBUST_CHANNEL_GR_EXCEPTION);
        } else if (ci.hChannel == other.handle) {
            assert_false(ci.faulted);
        }
    }

    // A process-wide injection hits the next copy of whichever channel, once.
    kdrv::sim::injectFaultAnyChannel(kdrv::sim::InjectedFault::NextCopy);
    Push c;
    c.copy(S.sem.va + 2048, S.sem.va + 3072, 16).semRelease(S.sem.va + 1224, 9, true, false);
    *sem64(1224) = 0;
    submit(other, c);
    const NvNotification& no = awaitError(other);
    assert_int_equal(no.info32, ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT);
    assert_int_equal(no.info16, NV2080_ENGINE_TYPE_COPY0);  // the sim names a graphics TSG's copies COPY0
    assert_int_equal(*sem64(1224), 0);
    const TestGroup g2 = makeGroup();
    TestChannel fresh = makeChannel(HOPPER_DMA_COPY_A, kSubchCopy, g2);
    Push ok;
    ok.copy(S.sem.va + 2048, S.sem.va + 3072, 16);
    runAndWait(fresh, ok);  // disarmed after one use
    assert_int_equal(errorNotification(fresh).status, 0);

    // Launch injection on any channel: an MMU fault on the graphics engine.
    kdrv::sim::injectFaultAnyChannel(kdrv::sim::InjectedFault::NextLaunch);
    const TestGroup g3 = makeGroup();
    TestChannel compute2 = makeChannel(HOPPER_COMPUTE_A, kSubchCompute, g3);
    submit(compute2, launch);
    const NvNotification& n3 = awaitError(compute2);
    assert_int_equal(n3.info32, ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT);
    assert_int_equal(n3.info16, NV2080_ENGINE_TYPE_GRAPHICS);
    kdrv::sim::clearInjectedFaults();

    for (uint32_t h : {compute.handle, copy.handle, other.handle, fresh.handle, compute2.handle})
        assert_int_equal(rmFree(h), nv::NV_OK);
    for (uint32_t h : {bad.group, good.group, g2.group, g3.group}) assert_int_equal(rmFree(h), nv::NV_OK);
}

void test_dma_mapping_events_debugger(void**) {
    // NV_ESC_RM_MAP_MEMORY_DMA at a fixed offset makes memory visible to the channels.
    Buffer host = allocHost(1 << 20);
    std::memset(host.cpu, 0, host.size);
    nv::NV_MEMORY_ALLOCATION_PARAMS vp = videoParams(kHuge, true);
    uint32_t vid = 0;
    assert_int_equal(rmAlloc(S.device, nv::NV01_MEMORY_LOCAL_USER, &vp, &vid), nv::NV_OK);
    const uint64_t va = reserveVa(kHuge);
    nv::NVOS46_PARAMETERS d{};
    d.hClient = S.client;
    d.hDevice = S.device;
    d.hDma = S.virtmem;
    d.hMemory = vid;
    d.length = kHuge;
    d.flags = nv::NVOS46_FLAGS_DMA_OFFSET_FIXED.value(1);
    d.dmaOffset = va;
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_MAP_MEMORY_DMA, d), 0);
    assert_int_equal(d.status, nv::NV_OK);
    assert_int_equal(d.dmaOffset, va);
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_MAP_MEMORY_DMA, d), 0);  // the same range again
    assert_int_equal(d.status, nv::NV_ERR_INVALID_ADDRESS);
    for (int i = 0; i < 100; ++i) host.cpu[i] = static_cast<uint8_t>(i + 1);
    Push p;
    p.copy(va + 12, host.va, 100).copy(host.va + 4096, va + 12, 100);
    runAndWait(S.copy, p);
    assert_memory_equal(host.cpu + 4096, host.cpu, 100);
    // A non-fixed mapping gets an offset from the virtual range.
    nv::NVOS46_PARAMETERS d2 = d;
    d2.flags = 0;
    d2.dmaOffset = 0;
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_MAP_MEMORY_DMA, d2), 0);
    assert_int_equal(d2.status, nv::NV_OK);
    assert_true(d2.dmaOffset != 0 && d2.dmaOffset != va);
    nv::NVOS47_PARAMETERS u{};
    u.hClient = S.client;
    u.hDevice = S.device;
    u.hDma = S.virtmem;
    u.hMemory = vid;
    u.dmaOffset = d2.dmaOffset;
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_UNMAP_MEMORY_DMA, u), 0);
    assert_int_equal(u.status, nv::NV_OK);
    assert_int_equal(esc(S.ctl, nv::NV_ESC_RM_UNMAP_MEMORY_DMA, u), 0);
    assert_int_equal(u.status, nv::NV_ERR_OBJECT_NOT_FOUND);
    // Freeing the memory removes its RM mappings: the channel now faults there.
    assert_int_equal(rmFree(vid), nv::NV_OK);
    const TestGroup g = makeGroup();
    TestChannel ch = makeChannel(nv::HOPPER_DMA_COPY_A, kSubchCopy, g);
    Push bad;
    bad.copy(host.va, va, 4);
    submit(ch, bad);
    const nv::NvNotification& n = errorNotification(ch);
    const uint64_t end = nowNs() + 5000000000ull;
    while (__atomic_load_n(&n.status, __ATOMIC_ACQUIRE) == 0 && nowNs() < end) usleep(10);
    assert_int_equal(n.info32, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT);
    assert_int_equal(rmFree(ch.handle), nv::NV_OK);
    assert_int_equal(rmFree(g.group), nv::NV_OK);

    // OS events: registered per (client, fd); an event object on the channel;
    // NON_STALL_INTERRUPT signals it.
    nv::nv_ioctl_alloc_os_event_t ev{};
    ev.hClient = S.client;
    ev.hDevice = S.device;
    ev.fd = static_cast<uint32_t>(S.ctl);
    assert_int_equal(esc(S.ctl, nv::NV_ESC_ALLOC_OS_EVENT, ev), 0);
    assert_int_equal(ev.Status, nv::NV_OK);
    assert_int_equal(esc(S.ctl, nv::NV_ESC_ALLOC_OS_EVENT, ev), 0);
    assert_int_equal(ev.Status, nv::NV_ERR_INVALID_ARGUMENT);  // one per fd
    nv::NV0005_ALLOC_PARAMETERS ep{};
    ep.hParentClient = S.client;
    ep.hSrcResource = S.copy.handle;
    ep.hClass = nv::NV01_EVENT_OS_EVENT;
    ep.notifyIndex = nv::NV01_EVENT_NONSTALL_INTR;
    ep.data = static_cast<uint64_t>(S.ctl);
    uint32_t hEvent = 0;
    assert_int_equal(rmAlloc(S.copy.handle, nv::NV01_EVENT_OS_EVENT, &ep, &hEvent), nv::NV_OK);
    const uint64_t nonStall = kdrv::sim::counters().nonStallInterrupts;
    Push ns;
    ns.inc(0, nv::NVC86F_NON_STALL_INTERRUPT, {0});
    runAndWait(S.copy, ns);
    assert_int_equal(kdrv::sim::counters().nonStallInterrupts, nonStall + 1);
    assert_int_equal(rmFree(hEvent), nv::NV_OK);
    nv::nv_ioctl_free_os_event_t fe{};
    fe.hClient = S.client;
    fe.hDevice = S.device;
    fe.fd = static_cast<uint32_t>(S.ctl);
    assert_int_equal(esc(S.ctl, nv::NV_ESC_FREE_OS_EVENT, fe), 0);
    assert_int_equal(fe.Status, nv::NV_OK);
    assert_int_equal(esc(S.ctl, nv::NV_ESC_FREE_OS_EVENT, fe), 0);
    assert_int_equal(fe.Status, nv::NV_ERR_INVALID_EVENT);

    // The debugger object is accepted.
    nv::NV83DE_ALLOC_PARAMETERS dbg{};
    dbg.hAppClient = S.client;
    dbg.hClass3dObject = S.compute.engine;
    uint32_t hDbg = 0;
    assert_int_equal(rmAlloc(S.device, nv::GT200_DEBUGGER, &dbg, &hDbg), nv::NV_OK);
    assert_int_equal(rmFree(hDbg), nv::NV_OK);
}

void test_reset_and_bring_up_again(void**) {
    kdrv::sim::reset();
    assert_int_equal(kdrv::sim::channels().size(), 0);
    assert_int_equal(kdrv::sim::counters().gpfifoEntries, 0);
    assert_int_equal(kdrv::sim::vidmemUsed(), 0);
    // The old client is gone; the fds still work.
    nv::NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS bv{};
    assert_int_equal(rmControl(S.client, nv::NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, bv), nv::NV_ERR_INVALID_CLIENT);
    for (int fd : {S.ctl, S.dev, S.uvm, S.uvm2}) assert_int_equal(K().close(fd), 0);
    S = State{};
    g_fence = 0;
    assert_int_equal(bringUp(nullptr), 0);
    Push p;
    p.semRelease(S.sem.va + 64, 5, false, false);
    runAndWait(S.copy, p);
    assert_int_equal(*sem32(64), 5);
    // Channels stay alive when the program exits: the sim must stop cleanly then.
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_card_info_and_version),
        cmocka_unit_test(test_gpu_facts),
        cmocka_unit_test(test_copy_random),
        cmocka_unit_test(test_copy_across_mappings),
        cmocka_unit_test(test_copy_multiline),
        cmocka_unit_test(test_remap_fill),
        cmocka_unit_test(test_zero_fill_drops_pages),
        cmocka_unit_test(test_semaphores),
        cmocka_unit_test(test_acquire_ordering),
        cmocka_unit_test(test_compute_launch),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_uvm_rules),
        cmocka_unit_test(test_copy_short_pitch_refused),
        cmocka_unit_test(test_fault_unmapped),
        cmocka_unit_test(test_fault_injection_and_bad_pushbuffer),
        cmocka_unit_test(test_fault_stops_tsg),
        cmocka_unit_test(test_doorbells),
        cmocka_unit_test(test_idle_cpu_and_latency),
        cmocka_unit_test(test_client_teardown),
        cmocka_unit_test(test_compute_dependent_inline_and_fault),
        cmocka_unit_test(test_dma_mapping_events_debugger),
        cmocka_unit_test(test_reset_and_bring_up_again),
    };
    // Channels stay alive at exit on purpose: the sim must stop cleanly then.
    return cmocka_run_group_tests(tests, bringUp, nullptr);
}
