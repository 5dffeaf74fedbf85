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

// 2-D and 3-D copies (cuMemcpy2D/3D and their Async and Peer forms).
// How the caller named one side's memory: CU_MEMORYTYPE_HOST, _DEVICE or _UNIFIED.
enum class Naming { Host, Device, Unified };
struct CopySide {
    Naming naming = Naming::Device;
    uint64_t address = 0;     // of the first byte copied (the origin already applied)
    uint64_t pitch = 0;       // bytes from one line to the next
    uint64_t slicePitch = 0;  // bytes from one slice to the next
};
struct Extent {
    uint64_t width = 0;  // bytes per line
    uint64_t height = 0;
    uint64_t depth = 1;
};
// Every line of every slice must lie inside one allocation on the sides
// named Device (CUDA_ERROR_INVALID_VALUE otherwise); pageable host memory is
// staged, pinned memory and device memory go to the copy engine directly.
Status copy3D(Stream& st, const CopySide& dst, const CopySide& src, const Extent& extent, Sync sync);
// cuMemsetD2D8/16/32: 'height' lines of 'width' elements, 'pitch' bytes apart.
Status fill2D(Stream& st, uint64_t dst, uint64_t pitch, uint32_t value, uint32_t elementSize, uint64_t width,
              uint64_t height, Sync sync);
// Device memory the library owns and has not published in the address map
// (a module image being placed): 'bytes' from the host, then 'zeroBytes' of
// zeros after them; returns once both are done.
Status uploadToDevice(Context& ctx, uint64_t dst, const void* src, uint64_t bytes, uint64_t zeroBytes);

}  // namespace nvl::core
