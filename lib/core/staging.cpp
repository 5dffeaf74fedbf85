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
namespace {

// The part of a rectangle one buffer holds: whole lines packed back to back,
// or a piece of one line wider than a buffer.
struct Piece {
    uint64_t line, lines;    // the first line, how many
    uint64_t offset, width;  // bytes into each line, bytes per line
    uint64_t bytes() const { return lines * width; }
};

class Pieces {
public:
    // 'gpuPitch': the pitch of the GPU side, which the copy engine walks
    // (lines one at a time where it exceeds the engine's pitch field).
    Pieces(const Rect& r, uint64_t capacity, uint64_t gpuPitch)
        : r_(r), capacity_(capacity), maxLines_(gpuPitch > hw::kMaxPitch ? 1 : ~0ull) {
        if (r.width == 0) line_ = r.lines;
    }
    bool done() const { return line_ >= r_.lines; }
    Piece next() {
        Piece p;
        if (r_.width <= capacity_) {
            p = {line_, std::min({capacity_ / r_.width, r_.lines - line_, maxLines_}), 0, r_.width};
            line_ += p.lines;
        } else {
            p = {line_, 1, offset_, std::min(capacity_, r_.width - offset_)};
            offset_ += p.width;
            if (offset_ == r_.width) {
                offset_ = 0;
                ++line_;
            }
        }
        return p;
    }

private:
    const Rect& r_;
    uint64_t capacity_, maxLines_;
    uint64_t line_ = 0, offset_ = 0;
};

// Host lines to or from a packed buffer.
void pack(uint8_t* buffer, uint64_t src, uint64_t srcPitch, const Piece& p) {
    const uint8_t* from = reinterpret_cast<const uint8_t*>(src) + p.line * srcPitch + p.offset;
    if (p.lines == 1 || srcPitch == p.width) {
        parallelMemcpy(buffer, from, p.bytes());
        return;
    }
    for (uint64_t i = 0; i < p.lines; ++i) std::memcpy(buffer + i * p.width, from + i * srcPitch, p.width);
}

void unpack(uint64_t dst, uint64_t dstPitch, const uint8_t* buffer, const Piece& p) {
    uint8_t* to = reinterpret_cast<uint8_t*>(dst) + p.line * dstPitch + p.offset;
    if (p.lines == 1 || dstPitch == p.width) {
        parallelMemcpy(to, buffer, p.bytes());
        return;
    }
    for (uint64_t i = 0; i < p.lines; ++i) std::memcpy(to + i * dstPitch, buffer + i * p.width, p.width);
}

size_t pieceDwords(const Piece& p) { return std::max(hw::copyDwords(p.bytes()), hw::copy2DDwords(p.lines)); }

// Copy-engine methods moving a piece between the GPU side (at its pitch)
// and a packed buffer.
void writePiece(hw::PushWriter& w, uint64_t dst, uint64_t dstPitch, uint64_t src, uint64_t srcPitch, const Piece& p) {
    if (p.lines == 1 || (dstPitch == p.width && srcPitch == p.width)) hw::copy(w, dst, src, p.bytes());
    else hw::copy2D(w, dst, dstPitch, src, srcPitch, p.width, p.lines);
}

}  // namespace

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

Status Staging::toDevice(Stream& stream, hw::Channel& channel, const Rect& r) {
    std::lock_guard lock(mutex_);
    for (Pieces pieces(r, kBufferSize, r.dstPitch); !pieces.done();) {
        const Piece p = pieces.next();
        NVL_ASSIGN_OR_RETURN(Buffer * b, acquire());
        pack(static_cast<uint8_t*>(b->memory->cpu()), r.src, r.srcPitch, p);
        const uint64_t staged = b->memory->va();
        const uint64_t dst = r.dst + p.line * r.dstPitch + p.offset;
        NVL_ASSIGN_OR_RETURN(uint64_t value, stream.submit(channel, pieceDwords(p), [&](hw::PushWriter& w) {
            writePiece(w, dst, r.dstPitch, staged, p.width, p);
        }));
        b->channel = &channel;
        b->lastUse = value;
    }
    return kOk;
}

Status Staging::fromDevice(Stream& stream, hw::Channel& channel, const Rect& r) {
    std::lock_guard lock(mutex_);
    struct Pending {
        Buffer* buffer;
        Piece piece;
        uint64_t value;
    };
    Pending pending[kBuffers];
    size_t head = 0, count = 0;
    Pieces pieces(r, kBufferSize, r.srcPitch);
    auto issue = [&]() -> Status {
        const Piece p = pieces.next();
        NVL_ASSIGN_OR_RETURN(Buffer * b, acquire());
        const uint64_t staged = b->memory->va();
        const uint64_t src = r.src + p.line * r.srcPitch + p.offset;
        NVL_ASSIGN_OR_RETURN(uint64_t value, stream.submit(channel, pieceDwords(p), [&](hw::PushWriter& w) {
            writePiece(w, staged, p.width, src, r.srcPitch, p);
        }));
        b->channel = &channel;
        b->lastUse = value;
        pending[(head + count) % kBuffers] = {b, p, value};
        ++count;
        return kOk;
    };
    while (!pieces.done() && count < kBuffers) NVL_TRY(issue());
    while (count > 0) {
        Pending p = pending[head];
        head = (head + 1) % kBuffers;
        --count;
        NVL_TRY(channel.wait(p.value));
        unpack(r.dst, r.dstPitch, static_cast<const uint8_t*>(p.buffer->memory->cpu()), p.piece);
        if (!pieces.done()) NVL_TRY(issue());
    }
    return kOk;
}

}  // namespace nvl::core
