// HOPPER_DMA_COPY_A: pitch copies (1-D and multi-line), remapped copies and
// constant fills (SET_REMAP_*), and the semaphore release at the end of a
// LAUNCH_DMA. Copies work on GPU virtual addresses and are split where the
// source or destination crosses from one mapping to the next.
#include <algorithm>
#include <cstring>
#include <vector>

#include "defs/copy_c8b5.h"
#include "defs/rm_classes.h"
#include "kdrv/sim/sim_gpu.h"

namespace nvl::kdrv::sim {
namespace {

constexpr size_t kBounce = 64 * 1024;

uint32_t ceEngineType(const Channel& ch) {
    return nv::NV2080_ENGINE_TYPE_IS_COPY(ch.engineType) ? ch.engineType : nv::NV2080_ENGINE_TYPE_COPY0;
}

// memmove between two GPU VAs, piecewise across mappings (ranges checked by the caller).
bool copyVa(GpuVaSpace& va, uint64_t dst, uint64_t src, uint64_t len, uint64_t* faultVa) {
    std::vector<uint8_t> bounce;
    while (len) {
        Translation s, d;
        if (!va.translate(src, &s)) {
            *faultVa = src;
            return false;
        }
        if (!va.translate(dst, &d)) {
            *faultVa = dst;
            return false;
        }
        uint64_t c = std::min({len, s.len, d.len});
        if (s.mem->ptr() && d.mem->ptr()) {
            d.mem->prepareWrite(d.offset, c);
            std::memmove(d.mem->ptr() + d.offset, s.mem->ptr() + s.offset, c);
        } else {
            c = std::min<uint64_t>(c, kBounce);
            bounce.resize(c);
            if (!s.mem->read(s.offset, bounce.data(), c)) {
                *faultVa = src;
                return false;
            }
            if (!d.mem->write(d.offset, bounce.data(), c)) {
                *faultVa = dst;
                return false;
            }
        }
        src += c;
        dst += c;
        len -= c;
    }
    return true;
}

struct Remap {
    uint32_t componentSize;  // bytes, 1..4
    uint32_t srcComponents;  // 1..4
    uint32_t dstComponents;  // 1..4
    uint32_t select[4];      // NVC8B5_SET_REMAP_COMPONENTS_DST_?_* per destination component
    uint32_t constA, constB;
    bool needsSource() const {
        for (uint32_t i = 0; i < dstComponents; ++i)
            if (select[i] <= nv::NVC8B5_SET_REMAP_COMPONENTS_DST_X_SRC_W) return true;
        return false;
    }
    bool skipsAny() const {
        for (uint32_t i = 0; i < dstComponents; ++i)
            if (select[i] == nv::NVC8B5_SET_REMAP_COMPONENTS_DST_X_NO_WRITE) return true;
        return false;
    }
};

// One line of a remapped copy: `elements` destination elements at dst, reading
// source elements at src. False with *faultVa on an unmapped address.
bool remapLine(GpuVaSpace& va, const Remap& r, uint64_t dst, uint64_t src, uint64_t elements, uint64_t* faultVa) {
    const uint32_t cs = r.componentSize;
    const uint64_t srcPixel = uint64_t{cs} * r.srcComponents;
    const uint64_t dstPixel = uint64_t{cs} * r.dstComponents;
    const bool needSrc = r.needsSource();
    const bool keepDst = r.skipsAny();
    const uint64_t chunk = std::max<uint64_t>(1, kBounce / std::max(srcPixel, dstPixel));
    std::vector<uint8_t> in, out;
    if (!needSrc && !keepDst) {
        // Constant fill (memset): one pixel, replicated.
        uint8_t pixel[16] = {};
        for (uint32_t c = 0; c < r.dstComponents; ++c) {
            const uint32_t sel = r.select[c];
            if (sel == nv::NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_A) std::memcpy(pixel + c * cs, &r.constA, cs);
            else if (sel == nv::NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_B) std::memcpy(pixel + c * cs, &r.constB, cs);
        }
        if (std::all_of(pixel + 1, pixel + dstPixel, [&](uint8_t b) { return b == pixel[0]; }))
            return va.fill(dst, pixel[0], elements * dstPixel, faultVa);  // populates what it writes
        va.prepareWrite(dst, elements * dstPixel);
        out.resize(std::min(chunk, elements) * dstPixel);
        for (size_t o = 0; o < out.size(); o += dstPixel) std::memcpy(out.data() + o, pixel, dstPixel);
        for (uint64_t done = 0; done < elements;) {
            const uint64_t n = std::min(chunk, elements - done);
            if (!va.write(dst + done * dstPixel, out.data(), n * dstPixel, faultVa)) return false;
            done += n;
        }
        return true;
    }
    va.prepareWrite(dst, elements * dstPixel);
    for (uint64_t done = 0; done < elements;) {
        const uint64_t n = std::min(chunk, elements - done);
        if (needSrc) {
            in.resize(n * srcPixel);
            if (!va.read(src + done * srcPixel, in.data(), in.size(), faultVa)) return false;
        }
        out.resize(n * dstPixel);
        if (keepDst && !va.read(dst + done * dstPixel, out.data(), out.size(), faultVa)) return false;
        for (uint64_t e = 0; e < n; ++e) {
            uint8_t* o = out.data() + e * dstPixel;
            for (uint32_t c = 0; c < r.dstComponents; ++c) {
                const uint32_t sel = r.select[c];
                uint8_t* oc = o + c * cs;
                if (sel <= nv::NVC8B5_SET_REMAP_COMPONENTS_DST_X_SRC_W) {
                    if (sel < r.srcComponents)
                        std::memcpy(oc, in.data() + e * srcPixel + sel * cs, cs);
                    else
                        std::memset(oc, 0, cs);  // component the source does not have
                } else if (sel == nv::NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_A) {
                    std::memcpy(oc, &r.constA, cs);  // little endian: the low cs bytes
                } else if (sel == nv::NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_B) {
                    std::memcpy(oc, &r.constB, cs);
                }  // NO_WRITE: keep what is there
            }
        }
        if (!va.write(dst + done * dstPixel, out.data(), out.size(), faultVa)) return false;
        done += n;
    }
    return true;
}

void launchDma(GpuEngine& gpu, Channel& ch, uint32_t launch) {
    const EngineMethods& m = ch.copy;
    const uint32_t engine = ceEngineType(ch);
    GpuVaSpace& va = *ch.va;
    const uint32_t transfer = static_cast<uint32_t>(nv::NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE.get(launch));

    if (transfer != nv::NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE) {
        const uint64_t src = (nv::NVC8B5_OFFSET_IN_UPPER_UPPER.get(m.get(nv::NVC8B5_OFFSET_IN_UPPER)) << 32) |
                             m.get(nv::NVC8B5_OFFSET_IN_LOWER);
        const uint64_t dst = (nv::NVC8B5_OFFSET_OUT_UPPER_UPPER.get(m.get(nv::NVC8B5_OFFSET_OUT_UPPER)) << 32) |
                             m.get(nv::NVC8B5_OFFSET_OUT_LOWER);
        if (const uint32_t injected = gpu.takeInjectedCopyError(ch)) {
            // As if the source were unmapped: nothing is written, no release.
            gpu.fault(ch, injected, injected == nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT ? src : 0, engine);
            return;
        }
        // Block-linear layouts and physical addressing are not simulated: a
        // copy-engine error rather than silently wrong data.
        if (nv::NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT.get(launch) != nv::NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH ||
            nv::NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT.get(launch) != nv::NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH ||
            nv::NVC8B5_LAUNCH_DMA_SRC_TYPE.get(launch) != nv::NVC8B5_LAUNCH_DMA_SRC_TYPE_VIRTUAL ||
            nv::NVC8B5_LAUNCH_DMA_DST_TYPE.get(launch) != nv::NVC8B5_LAUNCH_DMA_DST_TYPE_VIRTUAL) {
            gpu.fault(ch, nv::ROBUST_CHANNEL_CE_ERROR(nv::NV2080_ENGINE_TYPE_COPY_IDX(engine)), 0, engine);
            return;
        }
        const bool multiLine =
            nv::NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE.get(launch) == nv::NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE_TRUE;
        const uint64_t lineLength = m.get(nv::NVC8B5_LINE_LENGTH_IN);
        const uint64_t lines = multiLine ? m.get(nv::NVC8B5_LINE_COUNT) : 1;
        const uint64_t pitchIn = multiLine ? m.get(nv::NVC8B5_PITCH_IN) : 0;
        const uint64_t pitchOut = multiLine ? m.get(nv::NVC8B5_PITCH_OUT) : 0;
        const bool remap = nv::NVC8B5_LAUNCH_DMA_REMAP_ENABLE.get(launch) == nv::NVC8B5_LAUNCH_DMA_REMAP_ENABLE_TRUE;

        Remap r{};
        uint64_t srcLineBytes = lineLength, dstLineBytes = lineLength;
        if (remap) {
            const uint32_t comps = m.get(nv::NVC8B5_SET_REMAP_COMPONENTS);
            r.componentSize = static_cast<uint32_t>(nv::NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE.get(comps)) + 1;
            r.srcComponents = static_cast<uint32_t>(nv::NVC8B5_SET_REMAP_COMPONENTS_NUM_SRC_COMPONENTS.get(comps)) + 1;
            r.dstComponents = static_cast<uint32_t>(nv::NVC8B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS.get(comps)) + 1;
            r.select[0] = static_cast<uint32_t>(nv::NVC8B5_SET_REMAP_COMPONENTS_DST_X.get(comps));
            r.select[1] = static_cast<uint32_t>(nv::NVC8B5_SET_REMAP_COMPONENTS_DST_Y.get(comps));
            r.select[2] = static_cast<uint32_t>(nv::NVC8B5_SET_REMAP_COMPONENTS_DST_Z.get(comps));
            r.select[3] = static_cast<uint32_t>(nv::NVC8B5_SET_REMAP_COMPONENTS_DST_W.get(comps));
            r.constA = m.get(nv::NVC8B5_SET_REMAP_CONST_A);
            r.constB = m.get(nv::NVC8B5_SET_REMAP_CONST_B);
            // LINE_LENGTH_IN counts elements when remapping.
            srcLineBytes = r.needsSource() ? lineLength * r.componentSize * r.srcComponents : 0;
            dstLineBytes = lineLength * r.componentSize * r.dstComponents;
        }

        // A multi-line transfer whose pitch is shorter than its line, on
        // either side, is a method error (the H200 raised Xid 39 for a
        // remapped fill with PITCH_IN 0, although a fill reads no source).
        if (lines > 1) {
            const uint64_t inLine = remap ? lineLength * r.componentSize * r.srcComponents : lineLength;
            if (pitchIn < inLine || pitchOut < dstLineBytes) {
                gpu.fault(ch, nv::ROBUST_CHANNEL_CE_ERROR(nv::NV2080_ENGINE_TYPE_COPY_IDX(engine)), 0, engine);
                return;
            }
        }

        // Fault before writing anything if any line touches unmapped memory.
        uint64_t faultVa = 0;
        for (uint64_t l = 0; l < lines; ++l) {
            if ((srcLineBytes && !va.mapped(src + l * pitchIn, srcLineBytes, &faultVa)) ||
                !va.mapped(dst + l * pitchOut, dstLineBytes, &faultVa)) {
                gpu.fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, engine);
                return;
            }
        }
        for (uint64_t l = 0; l < lines; ++l) {
            const bool ok = remap ? remapLine(va, r, dst + l * pitchOut, src + l * pitchIn, lineLength, &faultVa)
                                  : copyVa(va, dst + l * pitchOut, src + l * pitchIn, lineLength, &faultVa);
            if (!ok) {
                gpu.fault(ch, nv::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, faultVa, engine);
                return;
            }
        }
        ++gpu.counters().copies;
        gpu.counters().bytesCopied += dstLineBytes * lines;
    }

    const uint32_t semType = static_cast<uint32_t>(nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE.get(launch));
    if (semType != nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_NONE) {
        const uint64_t semVa = (nv::NVC8B5_SET_SEMAPHORE_A_UPPER.get(m.get(nv::NVC8B5_SET_SEMAPHORE_A)) << 32) |
                               m.get(nv::NVC8B5_SET_SEMAPHORE_B);
        const bool payload64 = nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE.get(launch) ==
                               nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD;
        uint64_t payload = m.get(nv::NVC8B5_SET_SEMAPHORE_PAYLOAD);
        if (payload64) payload |= uint64_t{m.get(nv::NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER)} << 32;
        bool ok;
        if (nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE.get(launch)) {
            // Integer reductions share the host's numbering (IMIN..DEC = 0..7);
            // SIGN: 0 signed, 1 unsigned.
            const uint32_t op = static_cast<uint32_t>(nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION.get(launch));
            if (op > 7) {
                gpu.fault(ch, nv::ROBUST_CHANNEL_CE_ERROR(nv::NV2080_ENGINE_TYPE_COPY_IDX(engine)), semVa, engine);
                return;
            }
            ok = gpu.reduce(ch, semVa, payload, payload64, op,
                            nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN.get(launch) == 0, engine);
        } else {
            const bool fourWord = semType == nv::NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE;
            ok = gpu.release(ch, semVa, payload, payload64, fourWord, engine);
        }
        if (!ok) return;
    }
    if (nv::NVC8B5_LAUNCH_DMA_INTERRUPT_TYPE.get(launch) != nv::NVC8B5_LAUNCH_DMA_INTERRUPT_TYPE_NONE)
        gpu.nonStallInterrupt(ch);
}

}  // namespace

void copyEngineMethod(GpuEngine& gpu, Channel& ch, uint32_t method, uint32_t data) {
    ch.copy.set(method, data);
    if (method == nv::NVC8B5_LAUNCH_DMA) launchDma(gpu, ch, data);
}

}  // namespace nvl::kdrv::sim
