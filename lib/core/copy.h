// Copies and fills in a stream, with the synchronisation rules of libcuda's
// synchronous forms (always given the legacy stream) and asynchronous ones.
#pragma once

#include <cstdint>

#include "common/status.h"

namespace nvl::core {

class Context;
class Stream;

enum class Sync { Blocking, Async };

Status copyHostToDevice(Stream& st, uint64_t dst, const void* src, uint64_t bytes, Sync sync);
Status copyDeviceToHost(Stream& st, void* dst, uint64_t src, uint64_t bytes, Sync sync);
Status copyDeviceToDevice(Stream& st, uint64_t dst, uint64_t src, uint64_t bytes, Sync sync);
// cuMemcpy: either side may be device memory, pinned host memory or
// pageable host memory, told apart by address.
Status copyUnified(Stream& st, uint64_t dst, uint64_t src, uint64_t bytes, Sync sync);
// cuMemsetD8/16/32: 'count' elements of 'elementSize' bytes.
Status fill(Stream& st, uint64_t dst, uint32_t value, uint32_t elementSize, uint64_t count, Sync sync);
// Device memory the library owns and has not published in the address map
// (a module image being placed): 'bytes' from the host, then 'zeroBytes' of
// zeros after them; returns once both are done.
Status uploadToDevice(Context& ctx, uint64_t dst, const void* src, uint64_t bytes, uint64_t zeroBytes);

}  // namespace nvl::core
