// Negative compile test of the typed push-buffer writer (hw/push_buffer.h),
// run by tests/compile_fail/run.sh: CASE 0 must compile; every other case is
// one wrong method write that must not, for the reason its EXPECT line names
// (a fragment of the compiler's message).
#include <cstdint>

#include "hw/push_buffer.h"

using namespace nvl;

void writes(hw::PushWriter& w, uint32_t v, uint64_t wide) {
    (void)wide;
    // What the library writes: compiles.
    w.inc(nv::NVC8B5_LINE_LENGTH_IN(v), nv::NVC8B5_LINE_COUNT(1u));
    w.incOn<hw::Subchannel::Compute>(nv::NVC86F_SET_OBJECT(v));  // host methods go on any subchannel
    w.nonInc(nv::NVC86F_NON_STALL_INTERRUPT, v, v);
#if CASE == 1
    // EXPECT: methods go to the subchannel its class is bound to
    // A copy-engine method written to the compute subchannel.
    w.incOn<hw::Subchannel::Compute>(nv::NVC8B5_LAUNCH_DMA(v));
#elif CASE == 2
    // EXPECT: methods go to the subchannel its class is bound to
    // A compute method written to the host subchannel.
    w.incOn<hw::Subchannel::Host>(nv::NVCBC0_SEND_PCAS_A(v));
#elif CASE == 3
    // EXPECT: no match for call
    // Two words for a method that takes one.
    w.inc(nv::NVC8B5_LAUNCH_DMA(v, v));
#elif CASE == 4
    // EXPECT: every data word names its method
    // A bare word after a method (one word more than the methods named).
    w.inc(nv::NVC8B5_LINE_LENGTH_IN(v), v);
#elif CASE == 5
    // EXPECT: no matching function
    // A bare method number.
    w.inc(0x300u, v);
#elif CASE == 6
    // EXPECT: consecutive methods of one class
    // A gap in an incrementing run (OFFSET_IN_LOWER left out).
    w.inc(nv::NVC8B5_OFFSET_IN_UPPER(v), nv::NVC8B5_OFFSET_OUT_UPPER(v));
#elif CASE == 7
    // EXPECT: consecutive methods of one class
    // Methods of two classes in one run.
    w.inc(nv::NVC86F_SEM_EXECUTE(v), nv::NVC8B5_LAUNCH_DMA(v));
#elif CASE == 8
    // EXPECT: no match for call
    // A 64-bit value for a 32-bit method word.
    w.inc(nv::NVC8B5_LINE_LENGTH_IN(wide));
#elif CASE != 0
#error unknown CASE
#endif
}
