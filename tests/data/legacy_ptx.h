/* PTX modules with the headers early toolkits wrote. The first, as CUDA 3.x/4.x (nvopencc) did:
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

/* The second as CUDA 5-era nvcc wrote (PTX ISA 3.0, .file/.loc, no map_f64_to_f32), which
 * nvJitLink also refuses ("'Compile only(-c)' requires PTX ISA .version 3.1 or later"):
 * legacy_iota(out, n): out[i] = 3 * i + 1 for i < n. */
static const char kLegacyV30Ptx[] =
    "//\n"
    "// nvlite test module in the style of CUDA 5 nvcc output\n"
    "//\n"
    "\n"
    ".version 3.0\n"
    ".target sm_20\n"
    ".address_size 64\n"
    "\n"
    "\t.file\t1 \"legacy_iota.cu\"\n"
    "\n"
    ".visible .entry legacy_iota(\n"
    "\t.param .u64 legacy_iota_param_0,\n"
    "\t.param .u32 legacy_iota_param_1\n"
    ")\n"
    "{\n"
    "\t.reg .pred %p<2>;\n"
    "\t.reg .s32 %r<8>;\n"
    "\t.reg .s64 %rl<5>;\n"
    "\n"
    "\tld.param.u64 %rl1, [legacy_iota_param_0];\n"
    "\tld.param.u32 %r1, [legacy_iota_param_1];\n"
    "\tcvta.to.global.u64 %rl2, %rl1;\n"
    "\t.loc 1 3 1\n"
    "\tmov.u32 %r2, %ntid.x;\n"
    "\tmov.u32 %r3, %ctaid.x;\n"
    "\tmov.u32 %r4, %tid.x;\n"
    "\tmad.lo.s32 %r5, %r3, %r2, %r4;\n"
    "\tsetp.ge.s32 %p1, %r5, %r1;\n"
    "\t@%p1 bra BB0_2;\n"
    "\t.loc 1 4 1\n"
    "\tmad.lo.s32 %r6, %r5, 3, 1;\n"
    "\tmul.wide.s32 %rl3, %r5, 4;\n"
    "\tadd.s64 %rl4, %rl2, %rl3;\n"
    "\tst.global.u32 [%rl4], %r6;\n"
    "BB0_2:\n"
    "\t.loc 1 5 2\n"
    "\tret;\n"
    "}\n";

#endif
