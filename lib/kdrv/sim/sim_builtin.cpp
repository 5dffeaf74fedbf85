// nvlite's built-in kernels (builtin/kernels.cu) on the simulated GPU: it
// does not run GPU code, so it does what those kernels do, from their
// parameter block (lib/common/builtin_abi.h), and copies and fills stay
// correct in tests on the simulator. Other kernels are only recorded.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/builtin_abi.h"
#include "kdrv/sim/sim_builtin.h"

namespace nvl::kdrv::sim {
namespace {

// Where sm_90 code finds its parameters in constant bank 0 (the cubin's
// EIATTR_PARAM_CBANK; REFERENCES.md).
constexpr size_t kParamBase = 0x210;
constexpr uint64_t kPiece = 64 * 1024;

// Copies one line of 'n' bytes between GPU addresses (false: *faultVa).
bool copyLine(GpuVaSpace& va, uint64_t dst, uint64_t src, uint64_t n, std::vector<uint8_t>& bounce, uint64_t* faultVa) {
    for (uint64_t done = 0; done < n;) {
        const uint64_t c = std::min(n - done, kPiece);
        bounce.resize(c);
        if (!va.read(src + done, bounce.data(), c, faultVa) || !va.write(dst + done, bounce.data(), c, faultVa))
            return false;
        done += c;
    }
    return true;
}

bool fillLine(GpuVaSpace& va, uint64_t dst, uint64_t bytes, const std::vector<uint8_t>& pattern, bool zero,
              uint64_t* faultVa) {
    // Zero: the memory's own fill, which drops whole pages instead of writing them.
    if (zero) return va.fill(dst, 0, bytes, faultVa);
    for (uint64_t done = 0; done < bytes;) {
        const uint64_t c = std::min<uint64_t>(bytes - done, pattern.size());
        if (!va.write(dst + done, pattern.data(), c, faultVa)) return false;
        done += c;
    }
    return true;
}

}  // namespace

BuiltinRun runBuiltinKernel(GpuVaSpace& va, const LaunchRecord& launch, uint64_t* faultVa) {
    const std::vector<uint8_t>& cb0 = launch.cb0;
    builtin::Args a;
    if (cb0.size() < kParamBase + sizeof a) return BuiltinRun::NotBuiltin;
    std::memcpy(&a, cb0.data() + kParamBase, sizeof a);
    if (a.magic != builtin::kMagic || a.op < builtin::kOpCopy || a.op > builtin::kOpFillLine)
        return BuiltinRun::NotBuiltin;
    // What the kernel's indexing takes for granted (builtin_abi.h).
    uint8_t code[16];
    if (!va.read(launch.programAddress, code, sizeof code, faultVa)) return BuiltinRun::Faulted;
    const uint64_t threads = uint64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2] * launch.block[0] *
                             launch.block[1] * launch.block[2];
    const bool line = a.op == builtin::kOpCopyLine || a.op == builtin::kOpFillLine;
    const bool pow2 = a.lineThreads != 0 && (a.lineThreads & (a.lineThreads - 1)) == 0;
    if (line) {
        // Line kernels: whole warps, one dimension, one line; the head and
        // tail bytes (up to 15 each) need that many threads, which one warp has.
        if (launch.block[0] % 32 != 0 || launch.block[0] == 0 || launch.block[0] > builtin::kLineMaxThreads ||
            launch.block[1] != 1 || launch.block[2] != 1 || launch.grid[0] == 0 || launch.grid[1] != 1 ||
            launch.grid[2] != 1 || a.lines != 1 || a.slices != 1 || a.width == 0 ||
            (a.flags & ~builtin::kFlagStream) != 0)
            return BuiltinRun::Faulted;
    } else if (launch.block[0] != builtin::kBlockThreads || launch.block[1] != 1 || launch.block[2] != 1 ||
        launch.grid[1] != 1 || launch.grid[2] != 1 || !pow2 || a.lineThreads < 32 || threads % a.lineThreads != 0 ||
        a.lines == 0 || a.slices == 0 || a.lines > UINT32_MAX || a.slices > UINT32_MAX || a.width == 0)
        return BuiltinRun::Faulted;
    std::vector<uint8_t> buffer;
    const bool copy = a.op == builtin::kOpCopy || a.op == builtin::kOpCopyLine;
    bool zero = false;
    if (!copy) {
        if (a.elementSize != 1 && a.elementSize != 2 && a.elementSize != 4) return BuiltinRun::Faulted;
        // A piece of the pattern, a whole number of elements long.
        zero = (uint64_t{a.value} & ((uint64_t{1} << (8 * a.elementSize)) - 1)) == 0;
        buffer.resize(kPiece);
        for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<uint8_t>(a.value >> (8 * (i % a.elementSize)));
    }
    for (uint64_t z = 0; z < a.slices; ++z) {
        for (uint64_t y = 0; y < a.lines; ++y) {
            const uint64_t dst = a.dst + z * a.dstSlicePitch + y * a.dstPitch;
            const bool ok = copy
                                ? copyLine(va, dst, a.src + z * a.srcSlicePitch + y * a.srcPitch, a.width, buffer, faultVa)
                                : fillLine(va, dst, a.width * a.elementSize, buffer, zero, faultVa);
            if (!ok) return BuiltinRun::Faulted;
        }
    }
    return BuiltinRun::Done;
}

}  // namespace nvl::kdrv::sim
