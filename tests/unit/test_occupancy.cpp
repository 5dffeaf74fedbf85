// The occupancy calculator's arithmetic (core::blocksPerSm, what
// cuOccupancyMaxActiveBlocksPerMultiprocessor, cooperative launches' size
// check and the launch's shared-memory carveout all use) against the
// toolkit's reference calculator, cuda_occupancy.h, for an H200's SM:
//   - a fixed table of answers cuda_occupancy.h (CUDA 13.0) gave, always;
//   - a sweep of registers x threads x shared memory x barriers compared with
//     the header itself where the build found it (CUDA_HOME/include; CI has
//     no toolkit, the sweep says so and the table still runs).
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <random>

#include "core/occupancy.h"

#if defined(NVL_CUDA_OCCUPANCY_H)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include NVL_CUDA_OCCUPANCY_H
#pragma GCC diagnostic pop
#endif

// cmocka last: it declares its functions without extern "C".
#include <setjmp.h>
#include <stdarg.h>
extern "C" {
#include <cmocka.h>
}

using namespace nvl;

namespace {

// An H200's SM, as its device attributes say (tests/api/test_module.c checks
// the simulator reports the same).
constexpr core::SmLimits kH200{2048, 32, 65536, 228 * 1024, 1024, 9};
constexpr int kSharedPerBlockOptin = 227 * 1024;

struct Row {
    uint32_t registers;
    int threads;
    uint32_t barriers;
    size_t shared;
    int blocks;  // cuda_occupancy.h's activeBlocksPerMultiprocessor
};

// cuda_occupancy.h (CUDA 13.0), sm_90, 228 KiB per SM, 1 KiB reserved per
// block, the function allowed the opt-in maximum of dynamic shared memory.
constexpr Row kReference[] = {
    {16, 128, 1, 0, 16},        {32, 128, 1, 0, 16},         {33, 128, 1, 0, 12},      {40, 96, 1, 0, 16},
    {72, 256, 1, 0, 3},         {128, 128, 1, 0, 4},         {168, 384, 1, 0, 1},      {255, 128, 1, 0, 2},
    {255, 256, 1, 0, 1},        {24, 1, 1, 0, 32},           {24, 33, 1, 0, 32},       {24, 1000, 1, 0, 2},
    {64, 1024, 1, 0, 1},        {65, 1024, 1, 0, 0},         {32, 96, 3, 0, 21},       {32, 64, 5, 0, 12},
    {32, 32, 16, 0, 4},         {20, 160, 2, 513, 12},       {32, 128, 1, 7167, 16},   {32, 128, 1, 10369, 16},
    {48, 200, 1, 49153, 4},     {30, 128, 1, 102400, 2},     {30, 128, 1, 113664, 2},  {30, 128, 1, 114688, 2},
    {30, 32, 1, 6144, 32},      {30, 32, 1, 7168, 28},       {30, 64, 1, 232448, 1},   {30, 64, 1, 232449, 0},
    {100, 640, 1, 3333, 0},     {8, 32, 1, 0, 32},
};

void test_blocks_per_sm_reference_table(void**) {
    for (const Row& r : kReference) {
        const int got = core::blocksPerSm(kH200, {r.threads, r.registers, r.barriers, r.shared});
        if (got != r.blocks)
            fail_msg("%u registers, %d threads, %u barriers, %zu bytes of shared memory: %d blocks, cuda_occupancy.h %d",
                     r.registers, r.threads, r.barriers, r.shared, got, r.blocks);
    }
}

// The grid a test of a cooperative launch sizes by the calculator fits the
// carveout the launch asks for (lib/hw/compute.cpp): 128 threads of 32
// registers, 1 KiB each (the reservation) -> 16 blocks, 16 KiB.
void test_blocks_per_sm_numba_cooperative_kernel(void**) {
    assert_int_equal(core::blocksPerSm(kH200, {128, 32, 1, 0}), 16);
    assert_int_equal(core::blocksPerSm(kH200, {128, 40, 1, 0}), 12);
    assert_int_equal(core::blocksPerSm(kH200, {0, 32, 1, 0}), 0);
    assert_int_equal(core::blocksPerSm(kH200, {1025, 32, 1, 0}), 0);
}

#if defined(NVL_CUDA_OCCUPANCY_H)
int reference(uint32_t registers, int threads, uint32_t barriers, size_t shared) {
    cudaOccDeviceProp p;
    p.computeMajor = kH200.major;
    p.computeMinor = 0;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsPerMultiprocessor = kH200.maxThreads;
    p.regsPerBlock = 65536;
    p.regsPerMultiprocessor = kH200.registers;
    p.warpSize = 32;
    p.sharedMemPerBlock = 48 * 1024;
    p.sharedMemPerMultiprocessor = static_cast<size_t>(kH200.sharedBytes);
    p.numSms = 132;
    p.sharedMemPerBlockOptin = kSharedPerBlockOptin;
    p.reservedSharedMemPerBlock = static_cast<size_t>(kH200.reservedShared);
    cudaOccFuncAttributes a;
    a.maxThreadsPerBlock = 1024;
    a.numRegs = static_cast<int>(registers);
    a.sharedSizeBytes = 0;
    a.partitionedGCConfig = PARTITIONED_GC_OFF;
    a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    a.maxDynamicSharedSizeBytes = kSharedPerBlockOptin;
    a.numBlockBarriers = static_cast<int>(barriers);
    cudaOccDeviceState s;
    cudaOccResult res;
    if (cudaOccMaxActiveBlocksPerMultiprocessor(&res, &p, &a, &s, threads, shared) != CUDA_OCC_SUCCESS) return -1;
    return res.activeBlocksPerMultiprocessor;
}

void test_blocks_per_sm_matches_cuda_occupancy_h(void**) {
    std::mt19937 rng(0x0cc0);
    size_t compared = 0;
    auto check = [&](uint32_t regs, int threads, uint32_t bars, size_t shared) {
        const int want = reference(regs, threads, bars, shared);
        assert_true(want >= 0);
        const int got = core::blocksPerSm(kH200, {threads, regs, bars, shared});
        if (got != want)
            fail_msg("%u registers, %d threads, %u barriers, %zu bytes of shared memory: %d blocks, cuda_occupancy.h %d",
                     regs, threads, bars, shared, got, want);
        ++compared;
    };
    // Every register count and block size of a warp's step (and one thread
    // more), without and with shared memory, one barrier.
    for (uint32_t regs = 1; regs <= 255; ++regs)
        for (int threads = 32; threads <= 1024; threads += 32) {
            check(regs, threads, 1, 0);
            check(regs, threads - 31, 1, 4097);
        }
    // Random triples: odd sizes, barriers 1..16.
    std::uniform_int_distribution<uint32_t> regsD(1, 255), barsD(1, 16);
    std::uniform_int_distribution<int> threadsD(1, 1024);
    std::uniform_int_distribution<size_t> sharedD(0, kSharedPerBlockOptin);
    for (int i = 0; i < 200000; ++i) {
        const size_t shared = (i & 3) == 0 ? 0 : sharedD(rng) >> (rng() % 8);
        check(regsD(rng), threadsD(rng), barsD(rng), shared);
    }
    printf("blocksPerSm: %zu configurations agree with cuda_occupancy.h\n", compared);
}
#else
void test_blocks_per_sm_matches_cuda_occupancy_h(void**) {
    printf("no cuda_occupancy.h in CUDA_HOME/include when this was built: only the fixed table was compared\n");
    skip();
}
#endif

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_per_sm_reference_table),
        cmocka_unit_test(test_blocks_per_sm_numba_cooperative_kernel),
        cmocka_unit_test(test_blocks_per_sm_matches_cuda_occupancy_h),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
