// The Linux implementation of the seam: plain system calls.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "kdrv/kdrv.h"

namespace nvl::kdrv {
namespace {

class LinuxKdrv final : public Kdrv {
public:
    bool present() override { return ::access("/dev/nvidiactl", F_OK) == 0; }

    int open(const char* path, int flags) override {
        int fd;
        do {
            fd = ::open(path, flags | O_CLOEXEC);
        } while (fd < 0 && errno == EINTR);
        return fd < 0 ? -errno : fd;
    }

    int close(int fd) override { return ::close(fd) < 0 ? -errno : 0; }

    int ioctl(int fd, unsigned long request, void* arg) override {
        int rc;
        do {
            rc = ::ioctl(fd, request, arg);
        } while (rc < 0 && errno == EINTR);
        return rc < 0 ? -errno : 0;
    }

    void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override {
        return ::mmap(addr, length, prot, flags, fd, offset);
    }

    int munmap(void* addr, size_t length) override {
        return ::munmap(addr, length) < 0 ? -errno : 0;
    }

    const char* name() const override { return "linux"; }
};

}  // namespace

Kdrv& linuxKdrv() {
    // Never destroyed: cudart's atexit teardown releases contexts through it
    // after the library's static destructors would have run.
    static auto* instance = new LinuxKdrv();
    return *instance;
}

}  // namespace nvl::kdrv
