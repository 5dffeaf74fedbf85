// Access to memory the library hands the simulated driver.
//
// The real driver never trusts a user pointer: it copies ioctl arguments in
// and out (copy_from_user/copy_to_user) and a bad pointer becomes -EFAULT or
// NV_ERR_INVALID_POINTER instead of a crash. The sim does the same through
// process_vm_readv/writev on its own process, which fail cleanly on unmapped
// memory. Where those system calls are not allowed (seccomp), it falls back to
// plain copies after checking that the pages are mapped.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nvl::kdrv::sim {

// Copy len bytes from the user address into dst. False if any byte is not readable.
bool copyFromUser(void* dst, uint64_t userAddr, size_t len);
// Copy len bytes from src to the user address. False if any byte is not writable.
bool copyToUser(uint64_t userAddr, const void* src, size_t len);
// Are all pages of [addr, addr+len) mapped in this process?
bool userRangeMapped(uint64_t addr, size_t len);

}  // namespace nvl::kdrv::sim
