// The simulated driver's state: its file descriptors, the RM clients and
// objects, UVM address spaces, the memory pools and the GPU. One instance per
// process (Sim::get()), guarded by one lock; never destroyed, so the GPFIFO
// thread and late static destructors can always reach it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "kdrv/sim/sim_channel.h"
#include "kdrv/sim/sim_gpu.h"
#include "kdrv/sim/sim_memory.h"

namespace nvl::kdrv::sim {

inline constexpr int kFirstSimFd = 0x40000000;

// Handles RM keeps for itself (clientValidateNewResourceHandle's restricted range).
bool handleRestricted(uint32_t handle);

enum class FileType { Ctl, Device, Uvm };

// What a following mmap() of a /dev/nvidia* fd maps (NV_ESC_RM_MAP_MEMORY).
struct MmapContext {
    bool valid = false;
    std::shared_ptr<Backing> mem;
    uint64_t offset = 0;  // page-aligned offset into mem
    uint64_t size = 0;    // the length mmap() must ask for
    bool writable = true;
};

struct SimFile {
    FileType type = FileType::Ctl;
    int linkedCtl = -1;  // NV_ESC_REGISTER_FD on a device fd
    MmapContext mmap;
    // /dev/nvidia-uvm
    bool uvmVaSpace = false;  // UVM_INITIALIZE done: this fd is a VA space
    uint64_t uvmFlags = 0;
    bool uvmMm = false;       // this fd was made the VA space's mm fd
    bool uvmMmSet = false;    // (on the VA space fd) UVM_MM_INITIALIZE done
};

enum class ObjKind {
    Client,
    Device,
    Subdevice,
    Usermode,
    VaSpace,
    VirtualMemory,
    Memory,
    ChannelGroup,
    ContextShare,
    Channel,
    Engine,
    Event,
    Debugger,
    P2p,  // NV50_P2P: a peer link between two subdevices
};

struct RmObject {
    uint32_t handle = 0;
    uint32_t hClass = 0;
    uint32_t hParent = 0;
    ObjKind kind = ObjKind::Client;
    // The GPU (device instance) the object belongs to: set by a device from
    // its deviceId, inherited by what is allocated under it; -1 for none.
    int gpu = -1;
    // P2p: the other GPU of the link (gpu is the first).
    int peerGpu = -1;
    std::vector<uint32_t> children;
    // Memory, Usermode (the doorbell page), Channel (RM-allocated USERD)
    std::shared_ptr<Backing> mem;
    std::vector<uint64_t> cpuMappings;  // pLinearAddress values handed out by RM_MAP_MEMORY
    // Channel
    std::shared_ptr<Channel> channel;
    // VaSpace / VirtualMemory: [vaBase, vaLimit]
    uint64_t vaBase = 0;
    uint64_t vaLimit = 0;
    // Usermode: the doorbell page is reached through BAR1 (bBar1Mapping)
    bool doorbellViaBar1 = false;
    // ChannelGroup
    uint32_t engineType = 0;
    bool scheduled = false;
    // ContextShare
    uint32_t hVaSpace = 0;
    uint32_t subctxId = 0;
    // Event
    uint32_t eventSource = 0;
    uint32_t notifyIndex = 0;
    uint64_t eventData = 0;
    uint64_t eventsSignalled = 0;
};

struct RmClient {
    uint32_t handle = 0;
    int ownerFd = -1;  // the /dev/nvidiactl fd that allocated it
    std::map<uint32_t, RmObject> objects;  // includes the client object itself
    uint32_t handleSeq = 0;
};

struct UvmRange {
    uint64_t size = 0;
    bool channel = false;  // reserved by UVM_REGISTER_CHANNEL
    uint32_t hClient = 0;
    uint32_t hChannel = 0;
};

// One UVM VA space (one initialized /dev/nvidia-uvm fd).
struct UvmVaSpace {
    uint32_t gpuRegistered = 0;  // a bit per GPU index
    uint32_t gpuVaSpace = 0;
    uint32_t vaClient = 0;
    uint32_t vaHandle = 0;
    std::map<uint64_t, UvmRange> ranges;  // start -> range
};

// One simulated GPU: its video memory and the GPU virtual address space its
// channels see (RM and UVM mappings alike).
struct SimGpu {
    uint32_t index = 0;  // minor number and RM device instance
    std::unique_ptr<PhysPool> vidmem;
    GpuVaSpace va;
};

class Sim {
public:
    static Sim& get();

    // ---- Kdrv entry points (take the lock).
    int open(const char* path, int flags);
    int close(int fd);
    int ioctl(int fd, unsigned long request, void* arg);
    void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset);
    int munmap(void* addr, size_t length);

    // ---- Called by the test-control API and at exit.
    std::mutex& lock() { return mu_; }
    GpuEngine& gpu() { return gpu_; }
    // Video memory of GPU 0 (every GPU has as much).
    uint64_t vidmemTotal() const { return vidmemBytes_; }
    uint64_t vidmemUsed() const { return vidmemUsed(0); }
    uint64_t vidmemUsed(size_t gpu) const { return gpus_[gpu]->vidmem ? gpus_[gpu]->vidmem->used() : 0; }
    size_t gpuCount() const { return gpus_.size(); }
    void resetLocked();
    // Joins workers retired while the lock was held (call without the lock).
    void joinRetired(std::vector<std::thread>& threads);
    void collectRetiredLocked(std::vector<std::thread>& out);

private:
    Sim();

    // ---- sim_kdrv.cpp: dispatch
    int escape(int fd, SimFile& file, uint32_t nr, void* data, uint32_t size);
    void closeFileLocked(int fd);

    // ---- sim_rm.cpp: escapes other than alloc/free/control
    int cardInfo(SimFile& file, void* data, uint32_t size);
    int registerFd(int fd, SimFile& file, void* data, uint32_t size);
    int checkVersion(SimFile& file, void* data, uint32_t size);
    int osEvent(int fd, SimFile& file, bool alloc, void* data, uint32_t size);
    int statusCode(SimFile& file, void* data, uint32_t size);
    uint32_t allocMemory(int fd, SimFile& file, void* data, uint32_t size);  // NVOS02
    uint32_t mapMemory(int fd, SimFile& file, void* data, uint32_t size);    // NVOS33
    uint32_t unmapMemory(int fd, SimFile& file, void* data, uint32_t size);  // NVOS34
    uint32_t mapMemoryDma(int fd, SimFile& file, void* data, uint32_t size);
    uint32_t unmapMemoryDma(int fd, SimFile& file, void* data, uint32_t size);

    // ---- sim_rm_objects.cpp
    uint32_t rmAlloc(int fd, SimFile& file, void* data, uint32_t size);  // NVOS21/64
    uint32_t rmFree(int fd, SimFile& file, void* data, uint32_t size);   // NVOS00
    uint32_t allocObject(RmClient& c, uint32_t hParent, uint32_t* hObject, uint32_t hClass, uint64_t pParams);
    void freeObject(RmClient& c, uint32_t handle);
    void freeClient(uint32_t hClient);
    uint32_t newHandle(RmClient& c);
    void signalNonStall(Channel& ch);

    // ---- sim_rm_controls.cpp
    uint32_t rmControl(int fd, SimFile& file, void* data, uint32_t size);  // NVOS54
    uint32_t control(RmClient& c, RmObject& obj, uint32_t cmd, uint64_t pParams, uint32_t paramsSize);

    // ---- sim_uvm.cpp
    int uvmIoctl(int fd, SimFile& file, unsigned long cmd, void* arg);
    void uvmDestroy(int fd);

    // ---- helpers (sim_rm.cpp)
public:
    RmClient* findClient(uint32_t hClient);
    RmObject* findObject(RmClient& c, uint32_t handle);
    // The ctl fd an RM call on `fd` acts for (a registered device fd acts for its ctl fd).
    int clientOwnerFd(int fd, const SimFile& file) const;
    SimFile* findFile(int fd);
    PhysPool* sysmem() { return sysmem_.get(); }
    SimGpu& simGpu(size_t i) { return *gpus_[i]; }
    // The GPU of a UUID (UVM names GPUs so), or -1.
    int gpuOfUuid(const uint8_t uuid[16]) const;
    // Whether a P2P object of client 'c' links GPUs a and b (either way).
    bool p2pLinked(const RmClient& c, int a, int b) const;
    bool p2pSupported() const { return p2p_; }

private:
    friend struct SimAccess;
    std::mutex mu_;
    std::map<int, SimFile> files_;
    int nextFd_ = kFirstSimFd;
    std::map<uint32_t, RmClient> clients_;
    uint32_t clientSeq_ = 0;
    std::map<int, UvmVaSpace> uvm_;  // by /dev/nvidia-uvm fd
    uint64_t vidmemBytes_ = 0;
    std::vector<std::unique_ptr<SimGpu>> gpus_;
    bool p2p_ = true;
    std::unique_ptr<PhysPool> sysmem_;
    GpuEngine gpu_;
    std::set<uint32_t> channelIds_;  // in use; the work-submit token is the id
    // NV_ESC_ALLOC_OS_EVENT registrations: (hClient, fd) -> times signalled
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> osEvents_;
    uint32_t nextSubctx_ = 0;
};

}  // namespace nvl::kdrv::sim
