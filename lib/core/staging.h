// Copies between pageable host memory and the GPU, through a ring of pinned
// buffers: the CPU fills (or drains) one buffer while the copy engine moves
// the others. Rectangles are packed: a buffer holds whole lines back to back
// (or a piece of one line wider than a buffer), and the copy engine writes
// or reads them at the GPU side's pitch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "common/status.h"
#include "core/copy_rect.h"
#include "hw/gpu_memory.h"

namespace nvl::hw {
class Channel;
}

namespace nvl::core {

class Context;
class Stream;

class Staging {
public:
    explicit Staging(Context& ctx) : ctx_(ctx) {}
    ~Staging();

    // Copies in 'stream' on the copy channel 'channel'.
    // 'r.src' is pageable host memory, 'r.dst' GPU memory. Returns once the
    // source is in pinned buffers (the DMA may still run).
    Status toDevice(Stream& stream, hw::Channel& channel, const Rect& r);
    // 'r.src' is GPU memory, 'r.dst' pageable host memory. Returns once the
    // data is in 'r.dst'.
    Status fromDevice(Stream& stream, hw::Channel& channel, const Rect& r);

    Status toDevice(Stream& stream, hw::Channel& channel, uint64_t dst, const void* src, uint64_t bytes) {
        return toDevice(stream, channel, Rect::linear(dst, reinterpret_cast<uint64_t>(src), bytes));
    }
    Status fromDevice(Stream& stream, hw::Channel& channel, void* dst, uint64_t src, uint64_t bytes) {
        return fromDevice(stream, channel, Rect::linear(reinterpret_cast<uint64_t>(dst), src, bytes));
    }

    // The channels are going away (the context waited for them, or they
    // faulted): the buffers must not wait for them any more.
    void forgetChannels();

    static constexpr size_t kBuffers = 4;
    static constexpr uint64_t kBufferSize = 8ull << 20;

private:
    struct Buffer {
        std::unique_ptr<hw::GpuMemory> memory;
        hw::Channel* channel = nullptr;  // where its last copy ran
        uint64_t lastUse = 0;            // that copy's timeline value
    };
    // The next buffer, once the GPU is done with it.
    Result<Buffer*> acquire();

    Context& ctx_;
    std::mutex mutex_;
    Buffer buffers_[kBuffers];
    size_t next_ = 0;
};

}  // namespace nvl::core
