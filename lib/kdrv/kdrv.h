// The kernel-driver seam.
//
// Every open/ioctl/mmap/munmap/close of an NVIDIA device file goes through a
// Kdrv. The Linux implementation makes the system calls; the simulated one
// (NVLITE_DEVICE=sim) emulates an NVIDIA driver and a Hopper GPU in-process.
// Everything above this seam runs unchanged on both.
//
// The simulated driver is not part of libnvlite.so: it is libnvlite_sim.so
// (lib/kdrv/sim), loaded with dlopen the first time the seam is chosen with
// NVLITE_DEVICE=sim, and entered through kSimEntryName.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace nvl::kdrv {

class Kdrv {
public:
    virtual ~Kdrv() = default;

    // Device files present (the driver is loaded)?
    virtual bool present() = 0;
    // Returns a file descriptor, or -errno.
    virtual int open(const char* path, int flags) = 0;
    // Returns 0, or -errno.
    virtual int close(int fd) = 0;
    // Returns 0, or -errno. 'request' is the full ioctl number.
    virtual int ioctl(int fd, unsigned long request, void* arg) = 0;
    // Returns the mapping, or MAP_FAILED (errno set).
    virtual void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) = 0;
    // Returns 0, or -errno.
    virtual int munmap(void* addr, size_t length) = 0;
    // Short name for traces: "linux" or "sim".
    virtual const char* name() const = 0;
};

// The process-wide seam, chosen once: NVLITE_DEVICE=sim selects the simulated
// driver, anything else the Linux one.
Kdrv& get();

// The Linux implementation (linux/).
Kdrv& linuxKdrv();

// The entry point libnvlite_sim.so exports: returns its Kdrv, or nullptr when
// 'abiVersion' is not the one it was built with (a library of another
// build: the Kdrv class and the definitions it passes must match).
inline constexpr const char* kSimEntryName = "nvliteSimKdrv";
inline constexpr const char* kSimLibraryName = "libnvlite_sim.so.0";
inline constexpr uint32_t kSimAbiVersion = 1;
using SimEntry = Kdrv* (*)(uint32_t abiVersion);

// An owned file descriptor of the seam.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    Fd& operator=(Fd&& o) noexcept {
        if (this != &o) {
            reset();
            fd_ = std::exchange(o.fd_, -1);
        }
        return *this;
    }
    ~Fd() { reset(); }

    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }
    void reset() {
        if (fd_ >= 0) nvl::kdrv::get().close(fd_);
        fd_ = -1;
    }

private:
    int fd_ = -1;
};

// An owned mapping made through the seam.
class Mapping {
public:
    Mapping() = default;
    Mapping(void* addr, size_t length) : addr_(addr), length_(length) {}
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    Mapping(Mapping&& o) noexcept
        : addr_(std::exchange(o.addr_, nullptr)), length_(std::exchange(o.length_, 0)) {}
    Mapping& operator=(Mapping&& o) noexcept {
        if (this != &o) {
            reset();
            addr_ = std::exchange(o.addr_, nullptr);
            length_ = std::exchange(o.length_, 0);
        }
        return *this;
    }
    ~Mapping() { reset(); }

    void* get() const { return addr_; }
    size_t length() const { return length_; }
    template <class T>
    T* as() const { return static_cast<T*>(addr_); }
    void reset() {
        if (addr_) nvl::kdrv::get().munmap(addr_, length_);
        addr_ = nullptr;
        length_ = 0;
    }
    // Give up ownership (the caller takes over the munmap).
    void* release() {
        length_ = 0;
        return std::exchange(addr_, nullptr);
    }

private:
    void* addr_ = nullptr;
    size_t length_ = 0;
};

}  // namespace nvl::kdrv
