// Writing methods into a push buffer.
//
// A method header names the subchannel, the method's byte offset and how
// the data words that follow are applied (host class NVC86F_DMA_* format).
// Logic passes hardware method names from lib/defs, never bare numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "defs/host_c86f.h"

namespace nvl::hw {

// Subchannels our channels bind their engine object to.
enum class Subchannel : uint32_t {
    Host = 0,     // host methods (semaphores, SET_OBJECT) are taken on any subchannel
    Compute = 1,
    Copy = 4,
};

class PushWriter {
public:
    PushWriter() = default;
    PushWriter(uint32_t* begin, size_t capacityDwords) : begin_(begin), cur_(begin), end_(begin + capacityDwords) {}

    // Data words go to method, method + 4, method + 8, ...
    void inc(Subchannel sub, uint32_t method, std::initializer_list<uint32_t> data) {
        header(nv::NVC86F_DMA_SEC_OP_INC_METHOD, sub, method, static_cast<uint32_t>(data.size()));
        for (uint32_t d : data) *cur_++ = d;
    }
    // All data words go to the same method.
    void nonInc(Subchannel sub, uint32_t method, std::initializer_list<uint32_t> data) {
        header(nv::NVC86F_DMA_SEC_OP_NON_INC_METHOD, sub, method, static_cast<uint32_t>(data.size()));
        for (uint32_t d : data) *cur_++ = d;
    }
    // One method with a small value (13 bits) carried in the header itself.
    void immediate(Subchannel sub, uint32_t method, uint32_t value) {
        *cur_++ = nv::NVC86F_DMA_SEC_OP.value(nv::NVC86F_DMA_SEC_OP_IMMD_DATA_METHOD) |
                  nv::NVC86F_DMA_IMMD_DATA.value(value) |
                  nv::NVC86F_DMA_METHOD_SUBCHANNEL.value(static_cast<uint32_t>(sub)) |
                  nv::NVC86F_DMA_METHOD_ADDRESS.value(method >> 2);
    }

    size_t dwords() const { return static_cast<size_t>(cur_ - begin_); }
    size_t remaining() const { return static_cast<size_t>(end_ - cur_); }
    uint32_t* begin() const { return begin_; }

private:
    void header(uint32_t secOp, Subchannel sub, uint32_t method, uint32_t count) {
        *cur_++ = nv::NVC86F_DMA_SEC_OP.value(secOp) | nv::NVC86F_DMA_METHOD_COUNT.value(count) |
                  nv::NVC86F_DMA_METHOD_SUBCHANNEL.value(static_cast<uint32_t>(sub)) |
                  nv::NVC86F_DMA_METHOD_ADDRESS.value(method >> 2);
    }

    uint32_t* begin_ = nullptr;
    uint32_t* cur_ = nullptr;
    uint32_t* end_ = nullptr;
};

inline uint32_t lo32(uint64_t v) { return static_cast<uint32_t>(v); }
inline uint32_t hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

}  // namespace nvl::hw
