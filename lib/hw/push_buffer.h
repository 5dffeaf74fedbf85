// Writing methods into a push buffer.
//
// A method header names the subchannel, the method's byte offset and how the
// data words that follow are applied (host class NVC86F_DMA_* format).
// Methods are typed (defs/method.h): nv::NVC8B5_LAUNCH_DMA(flags) is the data
// word of LAUNCH_DMA of the copy class, and the class decides the subchannel
// (SubchannelOf below, bound by ChannelGroup with SET_OBJECT). So, at compile
// time (tests/compile_fail):
//   - a method goes to the subchannel of its class; only host methods may be
//     written to another (incOn);
//   - a method takes exactly one word, no wider than 32 bits, and an
//     incrementing write is a run of consecutive methods of one class: its
//     count is the number of methods named;
//   - logic never passes a bare method number.
// In checked builds (common/assert.h) every write also checks that it stays
// inside the space the submission reserved for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/assert.h"
#include "defs/compute_cbc0.h"
#include "defs/copy_c8b5.h"
#include "defs/host_c86f.h"
#include "defs/method.h"

namespace nvl::hw {

// Subchannels our channels bind their engine object to.
enum class Subchannel : uint32_t {
    Host = 0,  // host methods (semaphores) go here; they are taken on any subchannel
    Compute = 1,
    Copy = 4,
};

// The subchannel a class's methods go to.
template <class Class>
struct SubchannelOf;
template <>
struct SubchannelOf<nv::Nvc86f> {
    static constexpr Subchannel value = Subchannel::Host;
    static constexpr bool any = true;  // host methods: any subchannel takes them
};
template <>
struct SubchannelOf<nv::Nvcbc0> {
    static constexpr Subchannel value = Subchannel::Compute;
    static constexpr bool any = false;
};
template <>
struct SubchannelOf<nv::Nvc8b5> {
    static constexpr Subchannel value = Subchannel::Copy;
    static constexpr bool any = false;
};

// Whether method words follow each other: each one's offset 4 past the one
// before, all of class C.
template <class C, uint32_t Next, class... Words>
struct ConsecutiveMethods : std::true_type {};
template <class C, uint32_t Next, class C2, uint32_t Offset, class... Rest>
struct ConsecutiveMethods<C, Next, nv::MethodWord<C2, Offset>, Rest...>
    : std::bool_constant<std::is_same_v<C, C2> && Offset == Next && ConsecutiveMethods<C, Next + 4, Rest...>::value> {};

template <class T>
inline constexpr bool kIsMethodWord = false;
template <class C, uint32_t Offset>
inline constexpr bool kIsMethodWord<nv::MethodWord<C, Offset>> = true;

class PushWriter {
public:
    PushWriter() = default;
    PushWriter(uint32_t* begin, size_t capacityDwords) : begin_(begin), cur_(begin), end_(begin + capacityDwords) {}

    // Dwords an incrementing or non-incrementing write of 'words' data words takes.
    static constexpr size_t dwordsFor(size_t words) { return 1 + words; }

    // An incrementing write on the subchannel of the methods' class: 'first'
    // and the words after it go to consecutive methods.
    template <class C, uint32_t Offset, class... Rest>
    void inc(nv::MethodWord<C, Offset> first, Rest... rest) {
        incOn<SubchannelOf<C>::value>(first, rest...);
    }
    // The same on subchannel S: for host methods, which every subchannel takes
    // (SET_OBJECT binds a class to the subchannel it is written on).
    template <Subchannel S, class C, uint32_t Offset, class... Rest>
    void incOn(nv::MethodWord<C, Offset> first, Rest... rest) {
        static_assert(SubchannelOf<C>::any || SubchannelOf<C>::value == S,
                      "this class's methods go to the subchannel its class is bound to");
        static_assert((kIsMethodWord<Rest> && ...), "every data word names its method: nv::METHOD(value)");
        static_assert(ConsecutiveMethods<C, Offset + 4, Rest...>::value,
                      "an incrementing write names consecutive methods of one class");
        constexpr uint32_t count = 1 + sizeof...(Rest);
        header(nv::NVC86F_DMA_SEC_OP_INC_METHOD, S, Offset, count);
        *cur_++ = first.data;
        ((*cur_++ = rest.data), ...);
    }
    // A non-incrementing write: every word goes to method 'm'.
    template <class C, uint32_t Offset, class... Words>
    void nonInc(nv::Method<C, Offset> m, Words... words) {
        static_assert(sizeof...(Words) > 0, "a method write has data");
        static_assert(((std::is_integral_v<Words> && sizeof(Words) <= sizeof(uint32_t)) && ...),
                      "method data words are 32-bit");
        (void)m;
        header(nv::NVC86F_DMA_SEC_OP_NON_INC_METHOD, SubchannelOf<C>::value, Offset,
               static_cast<uint32_t>(sizeof...(Words)));
        ((*cur_++ = static_cast<uint32_t>(words)), ...);
    }
    // One method with a small value (13 bits) carried in the header itself.
    template <class C, uint32_t Offset>
    void immediate(nv::MethodWord<C, Offset> w) {
        NVL_ASSERT(remaining() >= 1);
        *cur_++ = nv::NVC86F_DMA_SEC_OP.value(nv::NVC86F_DMA_SEC_OP_IMMD_DATA_METHOD) |
                  nv::NVC86F_DMA_IMMD_DATA.value(w.data) |
                  nv::NVC86F_DMA_METHOD_SUBCHANNEL.value(static_cast<uint32_t>(SubchannelOf<C>::value)) |
                  nv::NVC86F_DMA_METHOD_ADDRESS.value(Offset >> 2);
    }

    size_t dwords() const { return static_cast<size_t>(cur_ - begin_); }
    size_t remaining() const { return static_cast<size_t>(end_ - cur_); }
    uint32_t* begin() const { return begin_; }

private:
    // The header, once the whole write is known to fit the reserved space.
    void header(uint32_t secOp, Subchannel sub, uint32_t method, uint32_t count) {
        NVL_ASSERT(remaining() >= dwordsFor(count));
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
