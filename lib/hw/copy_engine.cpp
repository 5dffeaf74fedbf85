#include "hw/copy_engine.h"

#include "defs/copy_c8b5.h"

namespace nvl::hw {
namespace {

// LINE_LENGTH_IN is 32 bits; keep each piece a round 2 GiB.
constexpr uint64_t kMaxPiece = 1ull << 31;
// What copy() and fill() write per piece (offsets, length, LAUNCH_DMA), and
// fill()'s remap set-up once.
constexpr size_t kCopyPieceDwords = PushWriter::dwordsFor(4) + PushWriter::dwordsFor(1) + PushWriter::dwordsFor(1);
constexpr size_t kFillPieceDwords = PushWriter::dwordsFor(2) + PushWriter::dwordsFor(1) + PushWriter::dwordsFor(1);
constexpr size_t kFillSetupDwords = PushWriter::dwordsFor(2);
// copy2D() per piece (offsets, pitches, length, line count; LAUNCH_DMA) and
// fill2D() per piece (destination, pitches, length, line count; LAUNCH_DMA).
constexpr size_t kCopy2DPieceDwords = PushWriter::dwordsFor(8) + PushWriter::dwordsFor(1);
constexpr size_t kFill2DPieceDwords = PushWriter::dwordsFor(6) + PushWriter::dwordsFor(1);

uint32_t launchFlags(bool first, bool remap, bool multiLine = false) {
    using namespace nv;
    return NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE.value(first ? NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED
                                                            : NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_PIPELINED) |
           NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT.value(NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH) |
           NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT.value(NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH) |
           NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE.value(multiLine ? NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE_TRUE
                                                               : NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE_FALSE) |
           NVC8B5_LAUNCH_DMA_REMAP_ENABLE.value(remap ? NVC8B5_LAUNCH_DMA_REMAP_ENABLE_TRUE
                                                      : NVC8B5_LAUNCH_DMA_REMAP_ENABLE_FALSE) |
           NVC8B5_LAUNCH_DMA_SRC_TYPE.value(NVC8B5_LAUNCH_DMA_SRC_TYPE_VIRTUAL) |
           NVC8B5_LAUNCH_DMA_DST_TYPE.value(NVC8B5_LAUNCH_DMA_DST_TYPE_VIRTUAL) |
           NVC8B5_LAUNCH_DMA_DISABLE_PLC.value(NVC8B5_LAUNCH_DMA_DISABLE_PLC_TRUE);
}

uint64_t pieces(uint64_t n) { return n == 0 ? 0 : (n + kMaxPiece - 1) / kMaxPiece; }
uint64_t linePieces(uint64_t lines) { return lines == 0 ? 0 : (lines + kMaxLines - 1) / kMaxLines; }

// SET_REMAP_CONST_B and SET_REMAP_COMPONENTS for a fill with 'value'.
void setFillValue(PushWriter& w, uint32_t value, uint32_t elementSize) {
    using namespace nv;
    const uint32_t size = elementSize == 4   ? NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_FOUR
                          : elementSize == 2 ? NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_TWO
                                             : NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_ONE;
    w.inc(NVC8B5_SET_REMAP_CONST_B(value),
          NVC8B5_SET_REMAP_COMPONENTS(NVC8B5_SET_REMAP_COMPONENTS_DST_X.value(NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_B) |
                                      NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE.value(size) |
                                      NVC8B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS.value(
                                          NVC8B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_ONE)));
}

}  // namespace

size_t copyDwords(uint64_t bytes) { return static_cast<size_t>(pieces(bytes)) * kCopyPieceDwords; }

size_t fillDwords(uint64_t bytes, uint32_t elementSize) {
    // fill() writes kMaxPiece / elementSize elements a piece, kMaxPiece bytes.
    const uint64_t count = bytes / elementSize, perPiece = kMaxPiece / elementSize;
    return kFillSetupDwords + static_cast<size_t>((count + perPiece - 1) / perPiece) * kFillPieceDwords;
}

void copy(PushWriter& w, uint64_t dst, uint64_t src, uint64_t bytes) {
    bool first = true;
    while (bytes > 0) {
        const uint64_t n = bytes < kMaxPiece ? bytes : kMaxPiece;
        w.inc(nv::NVC8B5_OFFSET_IN_UPPER(nv::NVC8B5_OFFSET_IN_UPPER_UPPER.value(hi32(src))),
              nv::NVC8B5_OFFSET_IN_LOWER(lo32(src)),
              nv::NVC8B5_OFFSET_OUT_UPPER(nv::NVC8B5_OFFSET_OUT_UPPER_UPPER.value(hi32(dst))),
              nv::NVC8B5_OFFSET_OUT_LOWER(lo32(dst)));
        w.inc(nv::NVC8B5_LINE_LENGTH_IN(static_cast<uint32_t>(n)));
        w.inc(nv::NVC8B5_LAUNCH_DMA(launchFlags(first, false)));
        first = false;
        src += n;
        dst += n;
        bytes -= n;
    }
}

void fill(PushWriter& w, uint64_t dst, uint32_t value, uint32_t elementSize, uint64_t count) {
    using namespace nv;
    setFillValue(w, value, elementSize);
    bool first = true;
    const uint64_t maxElements = kMaxPiece / elementSize;
    while (count > 0) {
        const uint64_t n = count < maxElements ? count : maxElements;
        w.inc(NVC8B5_OFFSET_OUT_UPPER(NVC8B5_OFFSET_OUT_UPPER_UPPER.value(hi32(dst))), NVC8B5_OFFSET_OUT_LOWER(lo32(dst)));
        w.inc(NVC8B5_LINE_LENGTH_IN(static_cast<uint32_t>(n)));
        w.inc(NVC8B5_LAUNCH_DMA(launchFlags(first, true)));
        first = false;
        dst += n * elementSize;
        count -= n;
    }
}

size_t copy2DDwords(uint64_t lines) { return static_cast<size_t>(linePieces(lines)) * kCopy2DPieceDwords; }

void copy2D(PushWriter& w, uint64_t dst, uint64_t dstPitch, uint64_t src, uint64_t srcPitch, uint64_t width,
            uint64_t lines) {
    bool first = true;
    while (lines > 0) {
        const uint64_t n = lines < kMaxLines ? lines : kMaxLines;
        // OFFSET_IN/OUT, PITCH_IN/OUT, LINE_LENGTH_IN and LINE_COUNT are consecutive methods.
        w.inc(nv::NVC8B5_OFFSET_IN_UPPER(nv::NVC8B5_OFFSET_IN_UPPER_UPPER.value(hi32(src))),
              nv::NVC8B5_OFFSET_IN_LOWER(lo32(src)),
              nv::NVC8B5_OFFSET_OUT_UPPER(nv::NVC8B5_OFFSET_OUT_UPPER_UPPER.value(hi32(dst))),
              nv::NVC8B5_OFFSET_OUT_LOWER(lo32(dst)), nv::NVC8B5_PITCH_IN(static_cast<uint32_t>(srcPitch)),
              nv::NVC8B5_PITCH_OUT(static_cast<uint32_t>(dstPitch)),
              nv::NVC8B5_LINE_LENGTH_IN(static_cast<uint32_t>(width)), nv::NVC8B5_LINE_COUNT(static_cast<uint32_t>(n)));
        w.inc(nv::NVC8B5_LAUNCH_DMA(launchFlags(first, false, true)));
        first = false;
        src += n * srcPitch;
        dst += n * dstPitch;
        lines -= n;
    }
}

size_t fill2DDwords(uint64_t lines) {
    return kFillSetupDwords + static_cast<size_t>(linePieces(lines)) * kFill2DPieceDwords;
}

void fill2D(PushWriter& w, uint64_t dst, uint64_t pitch, uint32_t value, uint32_t elementSize, uint64_t count,
            uint64_t lines) {
    setFillValue(w, value, elementSize);
    bool first = true;
    while (lines > 0) {
        const uint64_t n = lines < kMaxLines ? lines : kMaxLines;
        // With remapping LINE_LENGTH_IN counts elements. Nothing is read, but
        // the engine still checks the source side of a multi-line transfer:
        // PITCH_IN 0 (shorter than a line) is a method error on the H200
        // (Xid 39, CE class c8b5), so PITCH_IN is the line pitch, as Mesa's
        // nvk does for its remapped buffer fills.
        w.inc(nv::NVC8B5_OFFSET_OUT_UPPER(nv::NVC8B5_OFFSET_OUT_UPPER_UPPER.value(hi32(dst))),
              nv::NVC8B5_OFFSET_OUT_LOWER(lo32(dst)), nv::NVC8B5_PITCH_IN(static_cast<uint32_t>(pitch)),
              nv::NVC8B5_PITCH_OUT(static_cast<uint32_t>(pitch)),
              nv::NVC8B5_LINE_LENGTH_IN(static_cast<uint32_t>(count)), nv::NVC8B5_LINE_COUNT(static_cast<uint32_t>(n)));
        w.inc(nv::NVC8B5_LAUNCH_DMA(launchFlags(first, true, true)));
        first = false;
        dst += n * pitch;
        lines -= n;
    }
}

}  // namespace nvl::hw
