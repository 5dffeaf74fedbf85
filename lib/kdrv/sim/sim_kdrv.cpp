// The simulated driver behind the kernel-driver seam (NVLITE_DEVICE=sim):
// the Kdrv implementation, the sim's file descriptors and the ioctl
// dispatch, mmap of RM memory, and process-exit handling.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "defs/nv_ioctl.h"
#include "defs/nv_status.h"
#include "kdrv/kdrv.h"
#include "kdrv/sim/sim_control.h"
#include "kdrv/sim/sim_gpu_config.h"
#include "kdrv/sim/sim_state.h"
#include "kdrv/sim/sim_user_memory.h"

namespace nvl::kdrv::sim {
namespace {

constexpr uint32_t kMaxIoctlSize = 16384;  // NV_ABSOLUTE_MAX_IOCTL_SIZE
std::atomic<Sim*> g_sim{nullptr};

uint64_t vidmemBytesFromEnv() {
    uint64_t mib = config::kDefaultVidmemMiB;
    if (const char* e = std::getenv("NVLITE_SIM_VIDMEM_MB")) {
        char* end = nullptr;
        unsigned long long v = std::strtoull(e, &end, 10);
        if (end != e && *end == '\0' && v > 0 && v <= (1ull << 24)) mib = v;
    }
    return mib << 20;
}

// The pump for after process exit began: no GPFIFO thread any more, so each
// call into the sim runs what the channels can do.
void pumpIfExiting(GpuEngine& gpu) {
    if (!gpu.exiting()) return;
    for (int i = 0; i < 100000 && gpu.pumpOnce(); ++i) {
    }
}

// NVLITE_SIM_GPUS: how many GPUs the sim has (1 to config::kMaxGpus).
uint32_t gpuCountFromEnv() {
    if (const char* e = std::getenv("NVLITE_SIM_GPUS")) {
        char* end = nullptr;
        unsigned long v = std::strtoul(e, &end, 10);
        if (end != e && *end == '\0' && v >= 1 && v <= config::kMaxGpus) return static_cast<uint32_t>(v);
    }
    return 1;
}

}  // namespace

Sim::Sim() : gpu_(mu_) {
    vidmemBytes_ = vidmemBytesFromEnv();
    const uint32_t count = gpuCountFromEnv();
    for (uint32_t i = 0; i < count; ++i) {
        auto g = std::make_unique<SimGpu>();
        g->index = i;
        char name[32];
        std::snprintf(name, sizeof name, "nvlite-sim-vidmem%u", i);
        g->vidmem = std::make_unique<PhysPool>(name, vidmemBytes_, 0);
        gpus_.push_back(std::move(g));
    }
    const char* p2p = std::getenv("NVLITE_SIM_P2P");
    p2p_ = !(p2p && std::strcmp(p2p, "0") == 0);
    sysmem_ = std::make_unique<PhysPool>("nvlite-sim-sysmem", config::kSysmemPoolBytes, config::kSysmemPhysBase);
    gpu_.nonStallHook = [this](Channel& ch) { signalNonStall(ch); };
}

Sim& Sim::get() {
    // Never destroyed: the GPFIFO thread and late static destructors may still call in.
    static Sim* sim = [] {
        Sim* s = new Sim();
        g_sim.store(s, std::memory_order_release);
        return s;
    }();
    return *sim;
}

void Sim::collectRetiredLocked(std::vector<std::thread>& out) {
    for (std::thread t = gpu_.takeRetired(); t.joinable(); t = gpu_.takeRetired()) out.push_back(std::move(t));
}

void Sim::joinRetired(std::vector<std::thread>& threads) {
    for (auto& t : threads)
        if (t.joinable()) t.join();
    threads.clear();
}

SimFile* Sim::findFile(int fd) {
    auto it = files_.find(fd);
    return it == files_.end() ? nullptr : &it->second;
}

// ------------------------------------------------------------ open/close

int Sim::open(const char* path, int flags) {
    (void)flags;
    if (!path) return -EFAULT;
    FileType type;
    // /dev/nvidia<minor> of one of the GPUs, written as the driver names it.
    auto isGpuNode = [&] {
        for (size_t k = 0; k < gpus_.size(); ++k) {
            char node[32];
            std::snprintf(node, sizeof node, "/dev/nvidia%zu", k);
            if (std::strcmp(path, node) == 0) return true;
        }
        return false;
    };
    if (std::strcmp(path, "/dev/nvidiactl") == 0)
        type = FileType::Ctl;
    else if (std::strcmp(path, "/dev/nvidia-uvm") == 0)
        type = FileType::Uvm;
    else if (isGpuNode())
        type = FileType::Device;
    else
        return -ENOENT;
    std::lock_guard<std::mutex> g(mu_);
    if (nextFd_ == INT32_MAX) return -EMFILE;
    const int fd = nextFd_++;
    SimFile f;
    f.type = type;
    files_[fd] = f;
    return fd;
}

int Sim::close(int fd) {
    std::vector<std::thread> retired;
    {
        std::unique_lock<std::mutex> g(mu_);
        if (!files_.count(fd)) {
            // Not ours: a real descriptor.
            g.unlock();
            return ::close(fd) < 0 ? -errno : 0;
        }
        closeFileLocked(fd);
        files_.erase(fd);
        pumpIfExiting(gpu_);
        collectRetiredLocked(retired);
    }
    joinRetired(retired);
    return 0;
}

void Sim::closeFileLocked(int fd) {
    SimFile& f = files_[fd];
    switch (f.type) {
    case FileType::Ctl: {
        // RM frees the clients a control fd allocated when it is closed.
        std::vector<uint32_t> owned;
        for (auto& [h, c] : clients_)
            if (c.ownerFd == fd) owned.push_back(h);
        for (uint32_t h : owned) freeClient(h);
        break;
    }
    case FileType::Uvm:
        uvmDestroy(fd);
        break;
    case FileType::Device:
        break;
    }
    f.mmap = MmapContext{};
}

// ----------------------------------------------------------------- ioctl

int Sim::ioctl(int fd, unsigned long request, void* arg) {
    std::vector<std::thread> retired;
    int rc;
    {
        std::unique_lock<std::mutex> g(mu_);
        SimFile* file = findFile(fd);
        if (!file) {
            g.unlock();
            return ::ioctl(fd, request, arg) < 0 ? -errno : 0;
        }
        ++gpu_.counters().ioctls;
        if (file->type == FileType::Uvm) {
            rc = uvmIoctl(fd, *file, request, arg);
        } else {
            uint32_t nr = _IOC_NR(request);
            uint32_t size = _IOC_SIZE(request);
            uint64_t user = reinterpret_cast<uint64_t>(arg);
            rc = 0;
            if (nr == nv::NV_ESC_IOCTL_XFER_CMD) {
                nv::nv_ioctl_xfer_t xfer{};
                if (size != sizeof xfer)
                    rc = -EINVAL;
                else if (!copyFromUser(&xfer, user, sizeof xfer))
                    rc = -EFAULT;
                else if (xfer.size > kMaxIoctlSize)
                    rc = -EINVAL;
                nr = xfer.cmd;
                size = xfer.size;
                user = xfer.ptr;
            }
            if (rc == 0) {
                std::vector<uint8_t> buf(size);
                if (!copyFromUser(buf.data(), user, size)) {
                    rc = -EFAULT;
                } else {
                    rc = escape(fd, *file, nr, buf.data(), size);
                    // The driver copies the block back even when the escape failed.
                    if (!copyToUser(user, buf.data(), size)) rc = -EFAULT;
                }
            }
        }
        pumpIfExiting(gpu_);
        collectRetiredLocked(retired);
    }
    joinRetired(retired);
    return rc;
}

int Sim::escape(int fd, SimFile& file, uint32_t nr, void* data, uint32_t size) {
    // RM escapes: a non-NV_OK status from the escape layer is -EINVAL (the
    // parameter block's own status carries RM's answer otherwise).
    auto rm = [](uint32_t status) { return status == nv::NV_OK ? 0 : -EINVAL; };
    switch (nr) {
    case nv::NV_ESC_CARD_INFO:
        return cardInfo(file, data, size);
    case nv::NV_ESC_REGISTER_FD:
        return registerFd(fd, file, data, size);
    case nv::NV_ESC_ALLOC_OS_EVENT:
        return osEvent(fd, file, true, data, size);
    case nv::NV_ESC_FREE_OS_EVENT:
        return osEvent(fd, file, false, data, size);
    case nv::NV_ESC_CHECK_VERSION_STR:
        return checkVersion(file, data, size);
    case nv::NV_ESC_STATUS_CODE:
        return statusCode(file, data, size);
    case nv::NV_ESC_SYS_PARAMS:
        return (file.type == FileType::Ctl && size == sizeof(nv::nv_ioctl_sys_params_t)) ? 0 : -EINVAL;
    case nv::NV_ESC_RM_ALLOC:
        return rm(rmAlloc(fd, file, data, size));
    case nv::NV_ESC_RM_FREE:
        return rm(rmFree(fd, file, data, size));
    case nv::NV_ESC_RM_CONTROL:
        return rm(rmControl(fd, file, data, size));
    case nv::NV_ESC_RM_ALLOC_MEMORY:
        return rm(allocMemory(fd, file, data, size));
    case nv::NV_ESC_RM_MAP_MEMORY:
        return rm(mapMemory(fd, file, data, size));
    case nv::NV_ESC_RM_UNMAP_MEMORY:
        return rm(unmapMemory(fd, file, data, size));
    case nv::NV_ESC_RM_MAP_MEMORY_DMA:
        return rm(mapMemoryDma(fd, file, data, size));
    case nv::NV_ESC_RM_UNMAP_MEMORY_DMA:
        return rm(unmapMemoryDma(fd, file, data, size));
    default:
        // "unknown NVRM ioctl command": RmIoctl answers NV_ERR_GENERIC.
        return -EINVAL;
    }
}

// ------------------------------------------------------------- mmap

void* Sim::mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
    MmapContext ctx;
    {
        std::unique_lock<std::mutex> g(mu_);
        SimFile* file = findFile(fd);
        if (!file) {
            g.unlock();
            return ::mmap(addr, length, prot, flags, fd, offset);
        }
        // nvidia_mmap_helper: a context from NV_ESC_RM_MAP_MEMORY, offset 0,
        // and for a GPU fd exactly the mapped size.
        if (file->type == FileType::Uvm || !file->mmap.valid || offset != 0) {
            errno = EINVAL;
            return MAP_FAILED;
        }
        ctx = file->mmap;
        const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
        const uint64_t rounded = (uint64_t{length} + page - 1) / page * page;
        if (file->type == FileType::Device && rounded != ctx.size) {
            errno = ENXIO;
            return MAP_FAILED;
        }
        if (file->type == FileType::Ctl && (length == 0 || rounded > ctx.size)) {
            errno = ERANGE;
            return MAP_FAILED;
        }
    }
    if (!ctx.mem || ctx.mem->mapFd() < 0) {
        errno = EINVAL;
        return MAP_FAILED;
    }
    if (!ctx.writable) prot &= ~PROT_WRITE;
    const int passFlags = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_POPULATE | MAP_NORESERVE | MAP_LOCKED);
    return ::mmap(addr, length, prot, MAP_SHARED | passFlags, ctx.mem->mapFd(),
                  static_cast<off_t>(ctx.mem->mapOffset() + ctx.offset));
}

int Sim::munmap(void* addr, size_t length) {
    // CPU mappings of sim memory are ordinary mappings of its memfds.
    return ::munmap(addr, length) < 0 ? -errno : 0;
}

// ------------------------------------------------------------ the seam

namespace {

class SimKdrv final : public Kdrv {
public:
    bool present() override { return true; }
    int open(const char* path, int flags) override { return Sim::get().open(path, flags); }
    int close(int fd) override { return Sim::get().close(fd); }
    int ioctl(int fd, unsigned long request, void* arg) override { return Sim::get().ioctl(fd, request, arg); }
    void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override {
        return Sim::get().mmap(addr, length, prot, flags, fd, offset);
    }
    int munmap(void* addr, size_t length) override { return Sim::get().munmap(addr, length); }
    const char* name() const override { return "sim"; }
};

// Runs after the program's static destructors and atexit handlers: let the
// submitted work finish, then stop and join the GPFIFO thread. Anything
// calling into the sim later still works (it pumps the channels itself).
__attribute__((destructor)) void simProcessExit() {
    if (Sim* s = g_sim.load(std::memory_order_acquire)) s->gpu().shutdownForExit();
}

}  // namespace

}  // namespace nvl::kdrv::sim

namespace nvl::kdrv {

Kdrv& simKdrv() {
    static Kdrv* instance = new sim::SimKdrv();  // never destroyed, like the Sim
    return *instance;
}

namespace sim {

std::atomic<bool> g_seamInUse{false};

bool inUse() { return g_seamInUse.load(std::memory_order_acquire); }

}  // namespace sim

}  // namespace nvl::kdrv

// The library's entry point (kdrv.h): libnvlite.so calls it when it picks the
// simulated driver.
extern "C" __attribute__((visibility("default"))) nvl::kdrv::Kdrv* nvliteSimKdrv(uint32_t abiVersion) {
    if (abiVersion != nvl::kdrv::kSimAbiVersion) return nullptr;
    nvl::kdrv::sim::g_seamInUse.store(true, std::memory_order_release);
    return &nvl::kdrv::simKdrv();
}
