/* A PTX module with the header early toolkits (CUDA 3.x/4.x, nvopencc) wrote:
 * ".version 1.4" with ".target sm_20, map_f64_to_f32", no .address_size, 16-bit
 * special-register reads. libcuda JITs such modules (cuda-samples'
 * matrixMulDynlinkJIT ships one); CUDA 13's ptxas rejects the header as is.
 * Written for nvlite's tests: legacy_scale(out, in, k, n): out[i] = in[i] * k
 * for i < n, one thread per element. */
#ifndef NVLITE_TESTS_LEGACY_PTX_H
#define NVLITE_TESTS_LEGACY_PTX_H

static const char kLegacyHeaderPtx[] =
    "\t.version 1.4\n"
    "\t.target sm_20, map_f64_to_f32\n"
    "\t// nvlite test module in the style of nvopencc 4.0 output\n"
    "\n"
    "\t.entry legacy_scale (\n"
    "\t\t.param .u64 __cudaparm_legacy_scale_out,\n"
    "\t\t.param .u64 __cudaparm_legacy_scale_in,\n"
    "\t\t.param .f32 __cudaparm_legacy_scale_k,\n"
    "\t\t.param .s32 __cudaparm_legacy_scale_n)\n"
    "\t{\n"
    "\t.reg .u32 %r<8>;\n"
    "\t.reg .u64 %rd<8>;\n"
    "\t.reg .f32 %f<4>;\n"
    "\t.reg .pred %p<2>;\n"
    "\tcvt.u32.u16 \t%r1, %ntid.x;\n"
    "\tcvt.u32.u16 \t%r2, %ctaid.x;\n"
    "\tmul.lo.u32 \t%r3, %r2, %r1;\n"
    "\tcvt.u32.u16 \t%r4, %tid.x;\n"
    "\tadd.u32 \t%r5, %r4, %r3;\n"
    "\tld.param.s32 \t%r6, [__cudaparm_legacy_scale_n];\n"
    "\tsetp.ge.s32 \t%p1, %r5, %r6;\n"
    "\t@%p1 bra \t$Lt_0_exit;\n"
    "\tcvt.u64.u32 \t%rd1, %r5;\n"
    "\tmul.lo.u64 \t%rd2, %rd1, 4;\n"
    "\tld.param.u64 \t%rd3, [__cudaparm_legacy_scale_in];\n"
    "\tadd.u64 \t%rd4, %rd3, %rd2;\n"
    "\tld.global.f32 \t%f1, [%rd4+0];\n"
    "\tld.param.f32 \t%f2, [__cudaparm_legacy_scale_k];\n"
    "\tmul.f32 \t%f3, %f1, %f2;\n"
    "\tld.param.u64 \t%rd5, [__cudaparm_legacy_scale_out];\n"
    "\tadd.u64 \t%rd6, %rd5, %rd2;\n"
    "\tst.global.f32 \t[%rd6+0], %f3;\n"
    "$Lt_0_exit:\n"
    "\texit;\n"
    "\t}\n";

#endif
