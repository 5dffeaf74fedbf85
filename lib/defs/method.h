// Typed methods.
//
// A method of a class is a Method<Class, Offset> constant: its type carries
// the class (a tag type per method set: host Nvc86f, copy engine Nvc8b5,
// compute Nvcbc0) and its byte offset. Calling it with one 32-bit data word
// gives a MethodWord, what the push-buffer writer (hw/push_buffer.h) takes:
//
//     w.inc(nv::NVC8B5_LINE_LENGTH_IN(bytes), nv::NVC8B5_LINE_COUNT(1));
//
// A method takes exactly one word, and nothing wider than 32 bits converts.
// Decoders (the simulator) read a method's offset through its conversion to
// uint32_t: `case nv::NVC8B5_LAUNCH_DMA:`.
#pragma once

#include <cstdint>
#include <type_traits>

namespace nvl::nv {

template <class Class, uint32_t Offset>
struct MethodWord {
    uint32_t data;
};

template <class Class, uint32_t Offset>
struct Method {
    // NVC86F_DMA_METHOD_ADDRESS holds the offset >> 2 in 12 bits.
    static_assert(Offset % 4 == 0 && Offset < (1u << 14), "a method offset is a dword offset below 0x4000");
    using ClassType = Class;
    static constexpr uint32_t offset = Offset;

    constexpr operator uint32_t() const { return Offset; }

    template <class Word>
        requires(std::is_integral_v<Word> && !std::is_same_v<Word, bool> && sizeof(Word) <= sizeof(uint32_t))
    constexpr MethodWord<Class, Offset> operator()(Word data) const {
        return {static_cast<uint32_t>(data)};
    }
};

}  // namespace nvl::nv
