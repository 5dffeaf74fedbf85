#include "core/staging.h"

#include <algorithm>
#include <cstring>

#include "core/context.h"
#include "core/device.h"
#include "core/parallel_copy.h"
#include "core/stream.h"
#include "hw/channel.h"
#include "hw/copy_engine.h"

namespace nvl::core {

Staging::~Staging() {
    for (Buffer& b : buffers_)
        if (b.channel) (void)b.channel->wait(b.lastUse);
}

void Staging::forgetChannels() {
    std::lock_guard lock(mutex_);
    for (Buffer& b : buffers_) b.channel = nullptr;
}

Result<Staging::Buffer*> Staging::acquire() {
    Buffer& b = buffers_[next_];
    next_ = (next_ + 1) % kBuffers;
    if (!b.memory) {
        NVL_ASSIGN_OR_RETURN(b.memory, ctx_.device().gpu().allocHost(kBufferSize));
    }
    if (b.channel) NVL_TRY(b.channel->wait(b.lastUse));
    return &b;
}

Status Staging::toDevice(Stream& stream, hw::Channel& channel, uint64_t dst, const void* src, uint64_t bytes) {
    std::lock_guard lock(mutex_);
    const auto* from = static_cast<const uint8_t*>(src);
    for (uint64_t off = 0; off < bytes;) {
        const uint64_t n = std::min(kBufferSize, bytes - off);
        NVL_ASSIGN_OR_RETURN(Buffer * b, acquire());
        parallelMemcpy(b->memory->cpu(), from + off, n);
        const uint64_t staged = b->memory->va();
        NVL_ASSIGN_OR_RETURN(uint64_t value, stream.submit(channel, hw::copyDwords(n), [&](hw::PushWriter& w) {
            hw::copy(w, dst + off, staged, n);
        }));
        b->channel = &channel;
        b->lastUse = value;
        off += n;
    }
    return kOk;
}

Status Staging::fromDevice(Stream& stream, hw::Channel& channel, void* dst, uint64_t src, uint64_t bytes) {
    std::lock_guard lock(mutex_);
    auto* to = static_cast<uint8_t*>(dst);
    struct Pending {
        Buffer* buffer;
        uint64_t offset, length, value;
    };
    Pending pending[kBuffers];
    size_t head = 0, count = 0;
    uint64_t issued = 0;
    auto issue = [&]() -> Status {
        const uint64_t n = std::min(kBufferSize, bytes - issued);
        NVL_ASSIGN_OR_RETURN(Buffer * b, acquire());
        const uint64_t staged = b->memory->va();
        const uint64_t from = src + issued;
        NVL_ASSIGN_OR_RETURN(uint64_t value, stream.submit(channel, hw::copyDwords(n), [&](hw::PushWriter& w) {
            hw::copy(w, staged, from, n);
        }));
        b->channel = &channel;
        b->lastUse = value;
        pending[(head + count) % kBuffers] = {b, issued, n, value};
        ++count;
        issued += n;
        return kOk;
    };
    while (issued < bytes && count < kBuffers) NVL_TRY(issue());
    while (count > 0) {
        Pending p = pending[head];
        head = (head + 1) % kBuffers;
        --count;
        NVL_TRY(channel.wait(p.value));
        parallelMemcpy(to + p.offset, p.buffer->memory->cpu(), p.length);
        if (issued < bytes) NVL_TRY(issue());
    }
    return kOk;
}

}  // namespace nvl::core
