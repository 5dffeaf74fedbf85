/*
 * Device queries: cuDeviceGetCount, cuDeviceGet, cuDeviceGetName,
 * cuDeviceTotalMem, cuDeviceGetAttribute, cuDeviceGetUuid (_v2 and the
 * legacy name), cuDeviceGetPCIBusId and cuDeviceGetByPCIBusId.
 *
 * Expected codes: libcuda 580 on an H200 (tests/compat/expected/
 * libcuda_devices.txt); where the probe is silent, CUDA's documentation.
 * Values must be plausible and consistent with each other on any GPU; on
 * the simulator (NVLITE_DEVICE=sim) they must be those of
 * lib/kdrv/sim/sim_gpu_config.h, copied below.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

/* The legacy export: same answer as cuDeviceGetUuid_v2 without MIG. */
#undef cuDeviceGetUuid
CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);

/* lib/kdrv/sim/sim_gpu_config.h, the simulated H200. */
#define SIM_NAME "nvlite simulated Hopper"
#define SIM_PCI_DOMAIN 0
#define SIM_PCI_BUS 0x1b
#define SIM_PCI_DEVICE 0
#define SIM_PCI_DEVICE_ID 0x2335u    /* kPciDeviceId */
#define SIM_PCI_SUBSYSTEM 0x18bf10deu /* kPciSubSystemId */
#define SIM_UUID "nvlite-sim-h200!"
#define SIM_DEFAULT_VIDMEM_MIB 16384ull
#define SIM_BUS_WIDTH 5120
#define SIM_L2_BYTES (50 << 20)
#define SIM_SM_CLOCK_KHZ 1980000
#define SIM_MEM_CLOCK_KHZ 3201000
#define SIM_SM_COUNT 132
#define SIM_MAX_WARPS_PER_SM 64
#define SIM_WARP 32
#define SIM_COPY_ENGINES 10

static int attr(CUdevice_attribute a) {
    int v = -12345;
    assert_cu_ok(cuDeviceGetAttribute(&v, a, 0));
    return v;
}

static int device_count(void) {
    int n = -1;
    assert_cu_ok(cuDeviceGetCount(&n));
    return n;
}

/* ------------------------------------------------------------ count / get */

static void test_device_count(void **state) {
    (void)state;
    int n = device_count();
    assert_true(n >= 1);
    if (ts_on_simulator()) assert_int_equal(n, 1);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetCount(NULL));
}

static void test_device_get(void **state) {
    (void)state;
    int n = device_count();
    for (int i = 0; i < n; ++i) {
        CUdevice d = -7;
        assert_cu_ok(cuDeviceGet(&d, i));
        assert_int_equal(d, i);
    }
    CUdevice d = -7;
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&d, -1));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&d, n));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&d, 99));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&d, INT_MIN));
    assert_int_equal(d, -7);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGet(NULL, 0));
}

/* ------------------------------------------------------------ name */

static void test_device_name(void **state) {
    (void)state;
    char name[256];
    memset(name, 'x', sizeof name);
    assert_cu_ok(cuDeviceGetName(name, sizeof name, 0));
    size_t len = strnlen(name, sizeof name);
    assert_true(len > 0 && len < sizeof name);
    for (size_t i = 0; i < len; ++i) assert_true(isprint((unsigned char)name[i]));
    if (ts_on_simulator()) assert_string_equal(name, SIM_NAME);
    print_message("device 0: %s\n", name);

    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetName(NULL, 256, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetName(name, sizeof name, 99));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetName(name, sizeof name, -1));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetName(name, sizeof name, device_count()));
}

/* A short buffer gets the truncated, terminated name and nothing past len. */
static void test_device_name_truncated(void **state) {
    (void)state;
    char full[256];
    assert_cu_ok(cuDeviceGetName(full, sizeof full, 0));
    assert_true(strlen(full) >= 5);

    char small[64];
    memset(small, 'x', sizeof small);
    assert_cu_ok(cuDeviceGetName(small, 5, 0));
    assert_memory_equal(small, full, 4);
    assert_int_equal(small[4], 0);
    for (size_t i = 5; i < sizeof small; ++i) assert_int_equal(small[i], 'x');

    /* Exactly the name's length: all but its last character. */
    size_t len = strlen(full);
    memset(small, 'x', sizeof small);
    if (len < sizeof small - 1) {
        assert_cu_ok(cuDeviceGetName(small, (int)len, 0));
        assert_memory_equal(small, full, len - 1);
        assert_int_equal(small[len - 1], 0);
        assert_int_equal(small[len], 'x');
        /* And one more: the whole name. */
        assert_cu_ok(cuDeviceGetName(small, (int)len + 1, 0));
        assert_string_equal(small, full);
        assert_int_equal(small[len + 1], 'x');
    }

    memset(small, 'x', sizeof small);
    assert_cu_ok(cuDeviceGetName(small, 1, 0));
    assert_int_equal(small[0], 0);
    assert_int_equal(small[1], 'x');
}

/* ------------------------------------------------------------ total memory */

static void test_device_total_mem(void **state) {
    (void)state;
    size_t total = 0;
    assert_cu_ok(cuDeviceTotalMem(&total, 0));
    assert_true(total >= ((size_t)1 << 30));
    if (ts_on_simulator()) {
        unsigned long long mib = SIM_DEFAULT_VIDMEM_MIB;
        const char *env = getenv("NVLITE_SIM_VIDMEM_MB");
        if (env && *env) mib = strtoull(env, NULL, 10);
        assert_true(total == (size_t)(mib << 20));
    }
    size_t again = 0;
    assert_cu_ok(cuDeviceTotalMem(&again, 0));
    assert_true(again == total);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceTotalMem(NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceTotalMem(&total, 99));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceTotalMem(&total, -1));
}

/* ------------------------------------------------------------ attributes */

/* Every attribute of the enum answers; outside it, CUDA_ERROR_INVALID_VALUE
 * and the output is left alone. */
static void test_attribute_every_valid_one(void **state) {
    (void)state;
    for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; ++a) {
        int v = -12345;
        CUresult r = cuDeviceGetAttribute(&v, (CUdevice_attribute)a, 0);
        if (r != CUDA_SUCCESS) fail_msg("attribute %d returned %s", a, ts_cu_name(r));
        if (v == -12345) fail_msg("attribute %d: SUCCESS without a value", a);
    }
}

static void test_attribute_invalid(void **state) {
    (void)state;
    const int bad[] = {0, CU_DEVICE_ATTRIBUTE_MAX, CU_DEVICE_ATTRIBUTE_MAX + 1, -1, 1000, INT_MAX, INT_MIN};
    for (size_t i = 0; i < TS_ARRAY_SIZE(bad); ++i) {
        int v = -12345;
        CUresult r = cuDeviceGetAttribute(&v, (CUdevice_attribute)bad[i], 0);
        if (r != CUDA_ERROR_INVALID_VALUE) fail_msg("attribute %d returned %s", bad[i], ts_cu_name(r));
        assert_int_equal(v, -12345);
    }
    int v = 0;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetAttribute(NULL, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 99));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, -1));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, device_count()));
}

static int is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

/* The attributes a CUDA program sizes its launches and buffers by: plausible
 * on any GPU and consistent with each other. */
static void test_attribute_values_plausible(void **state) {
    (void)state;
    const int major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    const int minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    const int sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    const int warp = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    const int tpb = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    const int tpsm = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    const int bx = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
    const int by = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    const int bz = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    const int gx = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    const int gy = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    const int gz = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    const int smem = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    const int smem_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    const int smem_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    const int regs = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    const int regs_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    const int clock = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    const int mclock = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    const int bus = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    const int l2 = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    const int cmem = attr(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
    const int uva = attr(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
    const int integrated = attr(CU_DEVICE_ATTRIBUTE_INTEGRATED);
    const int concurrent = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS);
    const int mode = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
    print_message("cc %d.%d, %d SMs, warp %d, %d threads/block, %d threads/SM, block %dx%dx%d, grid %dx%dx%d\n",
                  major, minor, sms, warp, tpb, tpsm, bx, by, bz, gx, gy, gz);
    print_message("smem %d/block (%d opt-in) %d/SM, regs %d/block %d/SM, clocks %d/%d kHz, bus %d bits, L2 %d, "
                  "const %d, uva %d, integrated %d, concurrent %d, mode %d\n",
                  smem, smem_optin, smem_sm, regs, regs_sm, clock, mclock, bus, l2, cmem, uva, integrated, concurrent,
                  mode);

    assert_in_range(major, 3, 20);
    assert_in_range(minor, 0, 9);
    assert_true(sms > 0);
    assert_int_equal(warp, 32);
    assert_true(is_pow2(tpb) && tpb >= 512);
    assert_true(tpsm >= tpb && tpsm % warp == 0);
    assert_true(bx >= 512 && by >= 512 && bz >= 64);
    assert_true(bx <= tpb && by <= tpb && bz <= tpb);
    assert_int_equal(gx, INT_MAX);
    assert_int_equal(gy, 65535);
    assert_int_equal(gz, 65535);
    assert_int_equal(smem, 48 * 1024);
    assert_true(smem_optin >= smem && smem_optin <= smem_sm);
    assert_true(regs >= 32 * 1024 && regs <= regs_sm);
    assert_true(clock > 100 * 1000 && clock < 10 * 1000 * 1000);   /* kHz */
    assert_true(mclock > 100 * 1000 && mclock < 50 * 1000 * 1000); /* kHz */
    assert_true(bus >= 32 && bus % 32 == 0);
    assert_true(l2 >= 256 * 1024);
    assert_int_equal(cmem, 64 * 1024);
    assert_int_equal(uva, 1);         /* always on 64-bit Linux */
    assert_int_equal(integrated, 0);  /* NVIDIA's discrete GPUs; the sim is one */
    assert_int_equal(concurrent, 1);
    assert_true(mode == CU_COMPUTEMODE_DEFAULT || mode == CU_COMPUTEMODE_PROHIBITED ||
                mode == CU_COMPUTEMODE_EXCLUSIVE_PROCESS);
    /* A device whose compute is prohibited could not run these tests. */
    assert_int_not_equal(mode, CU_COMPUTEMODE_PROHIBITED);

    assert_true(attr(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE) <= l2);
    /* Every resident block holds at least one warp. */
    assert_in_range(attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR), 1, tpsm / warp);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY), 1);
}

/* PCI location attributes agree with cuDeviceGetPCIBusId. */
static void test_attribute_pci_matches_bus_id(void **state) {
    (void)state;
    char id[64];
    assert_cu_ok(cuDeviceGetPCIBusId(id, sizeof id, 0));
    unsigned domain = 99, bus = 99, device = 99, function = 99;
    assert_int_equal(sscanf(id, "%x:%x:%x.%x", &domain, &bus, &device, &function), 4);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID), (int)domain);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID), (int)bus);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID), (int)device);
    assert_in_range(attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID), 0, 255);
    assert_in_range(attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID), 0, 31);
    /* (device id << 16) | vendor id, NVIDIA's vendor id being 0x10de. */
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID) & 0xffff, 0x10de);
}

/* Architecture limits: on a compute capability 9.0 device, what libcuda 580
 * reports on the H200 (libcuda_devices.txt) for every attribute that is a
 * property of the architecture rather than of the board or of an optional
 * feature. */
static void test_attribute_arch_limits_cc90(void **state) {
    (void)state;
    if (attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) != 9 ||
        attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) != 0)
        ts_skip("the reference values are those of a compute capability 9.0 device");
    static const int expected[][2] = {
        {1, 1024},      {2, 1024},       {3, 1024},     {4, 64},         {5, 2147483647}, {6, 65535},
        {7, 65535},     {8, 49152},      {9, 65536},    {10, 32},        {11, 2147483647}, {12, 65536},
        {14, 512},      {15, 1},         {19, 1},       {21, 131072},    {22, 131072},    {23, 65536},
        {24, 16384},    {25, 16384},     {26, 16384},   {27, 32768},     {28, 32768},     {29, 2048},
        {30, 512},      {31, 1},         {39, 2048},    {41, 1},         {42, 32768},     {43, 2048},
        {44, 1},        {45, 32768},     {46, 32768},   {47, 8192},      {48, 8192},      {49, 32768},
        {51, 32},       {52, 32768},     {53, 32768},   {54, 2046},      {55, 32768},     {56, 131072},
        {57, 65536},    {58, 16384},     {59, 16384},   {60, 16384},     {61, 32768},     {62, 2048},
        {63, 32768},    {64, 32768},     {65, 2048},    {66, 32768},     {67, 32768},     {68, 2046},
        {69, 268435456}, {70, 131072},   {71, 65000},   {72, 2097120},   {73, 32768},     {74, 32768},
        {77, 32768},    {78, 1},         {79, 1},       {80, 1},         {81, 233472},    {82, 65536},
        {87, 2},        {90, 1},         {91, 1},       {97, 232448},    {99, 1},         {106, 32},
        {109, 134217728}, {111, 1024},   {113, 1},      {126, 4},        {129, 1},
    };
    int wrong = 0;
    for (size_t i = 0; i < TS_ARRAY_SIZE(expected); ++i) {
        int v = attr((CUdevice_attribute)expected[i][0]);
        if (v != expected[i][1]) {
            print_error("attribute %d: %d, libcuda on the H200: %d\n", expected[i][0], v, expected[i][1]);
            ++wrong;
        }
    }
    assert_int_equal(wrong, 0);
}

/* On the simulator: the values of sim_gpu_config.h. */
static void test_attribute_simulator_config(void **state) {
    (void)state;
    if (!ts_on_simulator()) ts_skip("NVLITE_DEVICE is not sim: no configuration to compare with");
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), 9);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR), 0);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), SIM_SM_COUNT);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE), SIM_WARP);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR), SIM_MAX_WARPS_PER_SM * SIM_WARP);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE), SIM_SM_CLOCK_KHZ);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE), SIM_MEM_CLOCK_KHZ);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH), SIM_BUS_WIDTH);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE), SIM_L2_BYTES);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID), SIM_PCI_DOMAIN);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID), SIM_PCI_BUS);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID), SIM_PCI_DEVICE);
    assert_int_equal((unsigned)attr(CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID), (SIM_PCI_DEVICE_ID << 16) | 0x10deu);
    assert_int_equal((unsigned)attr(CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID), SIM_PCI_SUBSYSTEM);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_MODE), CU_COMPUTEMODE_DEFAULT);
    assert_int_equal(attr(CU_DEVICE_ATTRIBUTE_INTEGRATED), 0);
}

/* Copy engines that work beside compute: a discrete GPU has some (libcuda: 3
 * on the H200; the simulator has COPY0..COPY9). */
static void test_attribute_async_engine_count(void **state) {
    (void)state;
    int engines = attr(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
    print_message("async engines: %d\n", engines);
    assert_in_range(engines, 1, ts_on_simulator() ? SIM_COPY_ENGINES : 64);
}

/* ------------------------------------------------------------ UUID */

static void test_uuid(void **state) {
    (void)state;
    CUuuid v2, v1;
    memset(&v2, 0, sizeof v2);
    memset(&v1, 0xff, sizeof v1);
    assert_cu_ok(cuDeviceGetUuid_v2(&v2, 0));
    assert_cu_ok(cuDeviceGetUuid(&v1, 0));
    assert_memory_equal(v1.bytes, v2.bytes, 16);
    static const char zeros[16];
    assert_memory_not_equal(v2.bytes, zeros, 16);
    if (ts_on_simulator()) assert_memory_equal(v2.bytes, SIM_UUID, 16);
    /* Stable. */
    CUuuid again;
    assert_cu_ok(cuDeviceGetUuid_v2(&again, 0));
    assert_memory_equal(again.bytes, v2.bytes, 16);

    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetUuid_v2(NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetUuid(NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetUuid_v2(&v2, 99));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetUuid(&v1, 99));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetUuid_v2(&v2, -1));
}

/* ------------------------------------------------------------ PCI bus id */

static void canonical_bus_id(char *id, size_t size) {
    memset(id, 'x', size);
    assert_cu_ok(cuDeviceGetPCIBusId(id, (int)size, 0));
}

/* "dddd:bb:dd.f", hexadecimal, 12 characters (13 with the terminator, the
 * size CUDA's documentation asks for). */
static void test_pci_bus_id_format(void **state) {
    (void)state;
    char id[64];
    canonical_bus_id(id, sizeof id);
    print_message("PCI bus id: %s\n", id);
    assert_int_equal(strlen(id), 12);
    for (int i = 0; i < 12; ++i) {
        if (i == 4 || i == 7)
            assert_int_equal(id[i], ':');
        else if (i == 10)
            assert_int_equal(id[i], '.');
        else
            assert_true(isxdigit((unsigned char)id[i]));
    }
    if (ts_on_simulator()) assert_string_equal(id, "0000:1b:00.0");
    char exact[13];
    assert_cu_ok(cuDeviceGetPCIBusId(exact, sizeof exact, 0));
    assert_string_equal(exact, id);
}

/* Too short for the id and its terminator: CUDA_ERROR_INVALID_VALUE, and
 * nothing written past the length given. */
static void test_pci_bus_id_short_buffer(void **state) {
    (void)state;
    const int lens[] = {12, 8, 1};
    for (size_t i = 0; i < TS_ARRAY_SIZE(lens); ++i) {
        char buf[32];
        memset(buf, 'x', sizeof buf);
        CUresult r = cuDeviceGetPCIBusId(buf, lens[i], 0);
        if (r != CUDA_ERROR_INVALID_VALUE) fail_msg("len %d: %s", lens[i], ts_cu_name(r));
        for (size_t k = (size_t)lens[i]; k < sizeof buf; ++k)
            if (buf[k] != 'x') fail_msg("len %d: byte %zu written", lens[i], k);
    }
    char buf[32];
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetPCIBusId(buf, 0, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetPCIBusId(buf, -1, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetPCIBusId(NULL, 64, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetPCIBusId(buf, sizeof buf, 99));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetPCIBusId(buf, sizeof buf, -1));
}

static void expect_device_for(const char *id, CUdevice want) {
    CUdevice d = -7;
    CUresult r = cuDeviceGetByPCIBusId(&d, id);
    if (r != CUDA_SUCCESS || d != want)
        fail_msg("cuDeviceGetByPCIBusId(\"%s\") returned %s, device %d (expected device %d)", id, ts_cu_name(r), d,
                 want);
}

/* The forms CUDA documents: [domain]:[bus]:[device].[function],
 * [domain]:[bus]:[device] and [bus]:[device].[function], hexadecimal in
 * either case (libcuda: canonical, lowercase and without domain). */
static void test_pci_bus_id_round_trip(void **state) {
    (void)state;
    int n = device_count();
    for (CUdevice dev = 0; dev < n; ++dev) {
        char canon[64], text[80];
        memset(canon, 0, sizeof canon);
        assert_cu_ok(cuDeviceGetPCIBusId(canon, sizeof canon, dev));
        expect_device_for(canon, dev);

        size_t len = strlen(canon);
        for (size_t i = 0; i <= len; ++i) text[i] = (char)tolower((unsigned char)canon[i]);
        expect_device_for(text, dev);
        for (size_t i = 0; i <= len; ++i) text[i] = (char)toupper((unsigned char)canon[i]);
        expect_device_for(text, dev);

        expect_device_for(canon + 5, dev); /* bus:device.function */

        snprintf(text, sizeof text, "0000%s", canon); /* 8-digit domain, as nvidia-smi writes it */
        expect_device_for(text, dev);
    }
}

static void test_pci_bus_id_without_function(void **state) {
    (void)state;
    char canon[64];
    canonical_bus_id(canon, sizeof canon);
    if (canon[11] != '0') ts_skip("device 0 is not function 0");
    canon[10] = 0; /* domain:bus:device */
    expect_device_for(canon, 0);
}

static void test_pci_bus_id_bad(void **state) {
    (void)state;
    char canon[64];
    canonical_bus_id(canon, sizeof canon);
    CUdevice d = -7;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(&d, "hello"));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(&d, ""));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(&d, NULL));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(NULL, canon));
    assert_int_equal(d, -7);
    /* Well formed, but no GPU there. */
    const char *absent = strcmp(canon, "0000:ff:1f.0") == 0 ? "0000:fe:1f.0" : "0000:ff:1f.0";
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetByPCIBusId(&d, absent));
    char other_domain[64];
    snprintf(other_domain, sizeof other_domain, "0%c%s", canon[1] == '7' ? '6' : '7', canon + 2);
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetByPCIBusId(&d, other_domain));
    assert_int_equal(d, -7);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_count),
        cmocka_unit_test(test_device_get),
        cmocka_unit_test(test_device_name),
        cmocka_unit_test(test_device_name_truncated),
        cmocka_unit_test(test_device_total_mem),
        cmocka_unit_test(test_attribute_every_valid_one),
        cmocka_unit_test(test_attribute_invalid),
        cmocka_unit_test(test_attribute_values_plausible),
        cmocka_unit_test(test_attribute_pci_matches_bus_id),
        cmocka_unit_test(test_attribute_arch_limits_cc90),
        cmocka_unit_test(test_attribute_simulator_config),
        cmocka_unit_test(test_attribute_async_engine_count),
        cmocka_unit_test(test_uuid),
        cmocka_unit_test(test_pci_bus_id_format),
        cmocka_unit_test(test_pci_bus_id_short_buffer),
        cmocka_unit_test(test_pci_bus_id_round_trip),
        cmocka_unit_test(test_pci_bus_id_without_function),
        cmocka_unit_test(test_pci_bus_id_bad),
    };
    return cmocka_run_group_tests_name("device", tests, ts_group_init, NULL);
}
