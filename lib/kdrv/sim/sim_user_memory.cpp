#include "kdrv/sim/sim_user_memory.h"

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace nvl::kdrv::sim {
namespace {

// 1: process_vm_* works, 0: not tried yet, -1: not available (use the fallback).
std::atomic<int> g_vmCallsWork{0};

}  // namespace

bool userRangeMapped(uint64_t addr, size_t len) {
    if (len == 0) return true;
    if (addr + len < addr) return false;
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t start = addr & ~(page - 1);
    const uint64_t end = (addr + len + page - 1) & ~(page - 1);
    unsigned char vec[64];
    for (uint64_t p = start; p < end;) {
        const uint64_t chunkPages = std::min<uint64_t>((end - p) / page, sizeof vec);
        // mincore fails with ENOMEM on unmapped pages.
        if (::mincore(reinterpret_cast<void*>(p), chunkPages * page, vec) != 0) return false;
        p += chunkPages * page;
    }
    return true;
}

namespace {

// Returns true/false for success, or sets *unavailable when the system call is not allowed.
bool vmCopy(bool write, void* local, uint64_t remote, size_t len, bool* unavailable) {
    size_t done = 0;
    while (done < len) {
        iovec l{static_cast<char*>(local) + done, len - done};
        iovec r{reinterpret_cast<void*>(remote + done), len - done};
        ssize_t n = write ? ::process_vm_writev(::getpid(), &l, 1, &r, 1, 0)
                          : ::process_vm_readv(::getpid(), &l, 1, &r, 1, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == ENOSYS || errno == EPERM) *unavailable = true;
            return false;
        }
        if (n == 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

bool copy(bool write, void* local, uint64_t remote, size_t len) {
    if (len == 0) return true;
    if (remote == 0 || remote + len < remote) return false;
    if (g_vmCallsWork.load(std::memory_order_relaxed) >= 0) {
        bool unavailable = false;
        if (vmCopy(write, local, remote, len, &unavailable)) {
            g_vmCallsWork.store(1, std::memory_order_relaxed);
            return true;
        }
        if (!unavailable) return false;
        g_vmCallsWork.store(-1, std::memory_order_relaxed);
    }
    if (!userRangeMapped(remote, len)) return false;
    if (write)
        std::memcpy(reinterpret_cast<void*>(remote), local, len);
    else
        std::memcpy(local, reinterpret_cast<const void*>(remote), len);
    return true;
}

}  // namespace

bool copyFromUser(void* dst, uint64_t userAddr, size_t len) { return copy(false, dst, userAddr, len); }

bool copyToUser(uint64_t userAddr, const void* src, size_t len) {
    return copy(true, const_cast<void*>(src), userAddr, len);
}

}  // namespace nvl::kdrv::sim
