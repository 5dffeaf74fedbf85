// The host side of the printf FIFO: reads the records the device runtime
// wrote (layout in core/devrt_abi.h) and formats them as printf would.
//
// The FIFO is memory any kernel can scribble on, so nothing in it is
// trusted: every length is checked against what is left, the ring is only
// read inside its bounds, a malformed record stops the drain (its text up to
// the fault is printed), widths and precisions are capped (kMaxWidth), and
// the text goes out in bounded pieces. Formatting goes through the C
// library's snprintf with a conversion specification built here from the
// parsed pieces, never with bytes from the FIFO as a format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace nvl::core::fifo {

// Where text goes (stdout in the library, a string in tests).
class Output {
public:
    virtual ~Output() = default;
    virtual void write(const char* text, size_t bytes) = 0;
};

class StringOutput final : public Output {
public:
    void write(const char* text, size_t bytes) override { text_.append(text, bytes); }
    const std::string& text() const { return text_; }

private:
    std::string text_;
};

// Largest field width or precision honoured (larger ones are cut to this).
inline constexpr uint32_t kMaxWidth = 4096;

// Formats the payload of one record (what follows its 16-byte header) of
// 'kind' (devrt::kRecordPrintf or kRecordAssert). Returns false when the
// record is malformed or of another kind; the text formatted before the
// fault has been written.
bool formatRecord(uint32_t kind, std::span<const uint8_t> payload, Output& out);

struct Ring {
    uint8_t* base = nullptr;  // host view of the ring
    uint64_t bytes = 0;       // a power of two (>= 16), else nothing is read
};

struct DrainResult {
    uint64_t records = 0;    // complete records consumed
    bool asserted = false;   // one of them was a failed assert
    bool malformed = false;  // one of them could not be formatted in full
    bool stuck = false;      // the next record's header is impossible: nothing after it is read
};

// Consumes the complete records from *tail on, in order: formats each to
// 'out', zeroes its bytes and moves *tail past it. Stops at the first
// record that is not complete yet.
DrainResult drain(const Ring& ring, uint64_t* tail, Output& out);

}  // namespace nvl::core::fifo
