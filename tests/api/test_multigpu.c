/*
 * Several GPUs: enumeration (libcuda's order, CUDA_VISIBLE_DEVICES,
 * CUDA_DEVICE_ORDER), one context, primary context and memory per device,
 * cuDeviceGetByPCIBusId across them, peer capabilities and attributes,
 * cuCtxEnable/DisablePeerAccess with libcuda's errors, and copies between
 * devices (cuMemcpyPeer(Async), unified-address copies, memsets) with odd
 * sizes and offsets, ordered with both devices' streams and events.
 *
 * On the simulated driver the test asks for two GPUs (NVLITE_SIM_GPUS=2
 * unless set): GPU 1 sits on a lower PCI bus than GPU 0 (sim_gpu_config.h),
 * so device 0 must be /dev/nvidia1. On a real machine it uses what is there
 * and skips, saying so, what needs two GPUs.
 *
 * Runs that need another environment (CUDA_VISIBLE_DEVICES, no peer link)
 * re-run this binary with --enumerate / --copy-staged in a child process:
 * the driver reads its environment once, at cuInit.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/test_support.h"

#define MAX_GPUS 8

static int g_count;
static char g_bus[MAX_GPUS][32];
static char g_uuid[MAX_GPUS][48];
static int g_sim;

static void uuid_string(const CUuuid *u, char *out) {
    const unsigned char *b = (const unsigned char *)u->bytes;
    sprintf(out, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3],
            b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* --enumerate: cuInit's result, then one line per device: PCI bus id and UUID. */
static int child_enumerate(void) {
    CUresult r = cuInit(0);
    printf("init %d\n", (int)r);
    if (r != CUDA_SUCCESS) return 0;
    int n = 0;
    if (cuDeviceGetCount(&n) != CUDA_SUCCESS) return 1;
    for (int i = 0; i < n; ++i) {
        char bus[32];
        CUuuid u;
        char us[48];
        if (cuDeviceGetPCIBusId(bus, sizeof bus, i) != CUDA_SUCCESS || cuDeviceGetUuid_v2(&u, i) != CUDA_SUCCESS)
            return 1;
        uuid_string(&u, us);
        printf("%s %s\n", bus, us);
    }
    return 0;
}

/* Runs this binary with 'mode' and the given environment changes (NAME=VALUE,
 * or NAME alone to unset); returns its output. */
static char *run_child(const char *mode, const char *const *env) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        for (; env && *env; ++env) {
            const char *eq = strchr(*env, '=');
            if (eq) {
                char name[64];
                snprintf(name, sizeof name, "%.*s", (int)(eq - *env), *env);
                setenv(name, eq + 1, 1);
            } else {
                unsetenv(*env);
            }
        }
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) _exit(127);
        exe[n] = 0;
        execl(exe, exe, mode, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    ssize_t got;
    while ((got = read(fds[0], out + len, cap - len - 1)) > 0) {
        len += (size_t)got;
        if (cap - len < 2) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
    }
    out[len] = 0;
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("child %s failed: status 0x%x, output:\n%s", mode, status, out);
    return out;
}

/* What the child saw with CUDA_VISIBLE_DEVICES=visible must be exactly
 * 'expected' (indices into the parent's enumeration), or cuInit's 'init'. */
static void check_visible(const char *visible, const char *order, int init, const int *expected, int n) {
    char var[256], ord[64];
    snprintf(var, sizeof var, "CUDA_VISIBLE_DEVICES=%s", visible);
    snprintf(ord, sizeof ord, "CUDA_DEVICE_ORDER=%s", order ? order : "");
    const char *env[] = {var, order ? ord : "CUDA_DEVICE_ORDER", NULL};
    char *out = run_child("--enumerate", env);
    char want[2048];
    int len = snprintf(want, sizeof want, "init %d\n", init);
    for (int i = 0; i < n; ++i)
        len += snprintf(want + len, sizeof want - (size_t)len, "%s %s\n", g_bus[expected[i]], g_uuid[expected[i]]);
    if (strcmp(out, want) != 0)
        fail_msg("CUDA_VISIBLE_DEVICES='%s': expected\n%sgot\n%s", visible, want, out);
    free(out);
}

static int skip_unless_two(void) {
    if (g_count >= 2) return 0;
    print_message("skipped: needs two GPUs, this machine has %d\n", g_count);
    skip();
    return 1;
}

/* ------------------------------------------------------------ enumeration */

static void test_enumeration_in_pci_order(void **state) {
    (void)state;
    if (g_sim) {
        /* sim_gpu_config.h: /dev/nvidia1 is on bus 0x0c, /dev/nvidia0 on 0x1b. */
        assert_int_equal(g_count, 2);
        assert_string_equal(g_bus[0], "0000:0c:00.0");
        assert_string_equal(g_bus[1], "0000:1b:00.0");
        assert_string_equal(g_uuid[0], "GPU-6e766c69-7465-2d73-696d-2d6832303121");
        assert_string_equal(g_uuid[1], "GPU-6e766c69-7465-2d73-696d-2d6832303021");
    }
    for (int i = 0; i < g_count; ++i) {
        for (int j = i + 1; j < g_count; ++j) {
            assert_true(strcmp(g_uuid[i], g_uuid[j]) != 0);
            /* Identical GPUs: FASTEST_FIRST falls back to PCI order. */
            assert_true(strcmp(g_bus[i], g_bus[j]) < 0);
        }
        CUdevice d = -1;
        assert_cu_ok(cuDeviceGetByPCIBusId(&d, g_bus[i]));
        assert_int_equal(d, i);
        char upper[32];
        for (size_t k = 0; k <= strlen(g_bus[i]); ++k) upper[k] = (char)toupper((unsigned char)g_bus[i][k]);
        assert_cu_ok(cuDeviceGetByPCIBusId(&d, upper + 5)); /* bus:device.function */
        assert_int_equal(d, i);
    }
    CUdevice d;
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetByPCIBusId(&d, "0000:ff:1f.7"));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&d, g_count));
}

static void test_visible_devices(void **state) {
    (void)state;
    char list[512];
    /* Unset: everything in order. */
    {
        int all[MAX_GPUS];
        for (int i = 0; i < g_count; ++i) all[i] = i;
        const char *env[] = {"CUDA_VISIBLE_DEVICES", NULL};
        char *out = run_child("--enumerate", env);
        char want[2048];
        int len = snprintf(want, sizeof want, "init 0\n");
        for (int i = 0; i < g_count; ++i)
            len += snprintf(want + len, sizeof want - (size_t)len, "%s %s\n", g_bus[all[i]], g_uuid[all[i]]);
        assert_string_equal(out, want);
        free(out);
    }
    const int first[] = {0};
    check_visible("0", NULL, 0, first, 1);
    check_visible("", NULL, CUDA_ERROR_NO_DEVICE, NULL, 0);
    check_visible("MIG-6e766c69-7465-2d73-696d-2d6832303021", NULL, CUDA_ERROR_NO_DEVICE, NULL, 0);
    check_visible("-1", NULL, CUDA_ERROR_NO_DEVICE, NULL, 0);
    check_visible("0,0", NULL, 0, first, 1);                 /* a second mention ends the list */
    snprintf(list, sizeof list, "0,%d,0", g_count);            /* past the last GPU: the list ends there */
    check_visible(list, NULL, 0, first, 1);
    check_visible(g_uuid[0], NULL, 0, first, 1);             /* a whole UUID */
    snprintf(list, sizeof list, "%.12s", g_uuid[0]);          /* "GPU-" and 8 digits */
    if (g_count == 1) check_visible(list, NULL, 0, first, 1);
    check_visible("GPU-", NULL, CUDA_ERROR_NO_DEVICE, NULL, 0);
    check_visible("0", "PCI_BUS_ID", 0, first, 1);
    if (g_count < 2) {
        print_message("multi-GPU cases skipped: one GPU here\n");
        return;
    }
    const int swapped[] = {1, 0};
    check_visible("1,0", NULL, 0, swapped, 2);
    check_visible(" 1 , 0 ", NULL, 0, swapped, 2);  /* blanks around entries */
    snprintf(list, sizeof list, "%s,%s", g_uuid[1], g_uuid[0]);
    check_visible(list, NULL, 0, swapped, 2);
    snprintf(list, sizeof list, "%s,junk,0", g_uuid[1]);
    const int second[] = {1};
    check_visible(list, NULL, 0, second, 1);
    int all[MAX_GPUS];
    for (int i = 0; i < g_count; ++i) all[i] = i;
    check_visible("0,1,2,3,4,5,6,7", "PCI_BUS_ID", 0, all, g_count);
    if (g_sim) {
        /* A prefix that names both GPUs names none. */
        check_visible("GPU-6e766c69", NULL, CUDA_ERROR_NO_DEVICE, NULL, 0);
        check_visible("gpu-6E766C69-7465-2d73-696d-2d683230", NULL, CUDA_ERROR_NO_DEVICE, NULL, 0);
        check_visible("GPU-6e766c69-7465-2d73-696d-2d683230303121", NULL, CUDA_ERROR_NO_DEVICE, NULL, 0);
        /* Case does not matter; a unique prefix is enough. */
        check_visible("gpu-6E766C69-7465-2d73-696d-2d68323030", NULL, 0, second, 1);
    }
}

/* ------------------------------------------------------------ contexts and memory per device */

static void test_contexts_and_memory_per_device(void **state) {
    (void)state;
    if (skip_unless_two()) return;
    CUcontext p0, p1;
    assert_cu_ok(cuDevicePrimaryCtxRetain(&p0, 0));
    assert_cu_ok(cuDevicePrimaryCtxRetain(&p1, 1));
    assert_ptr_not_equal(p0, p1);
    assert_cu_ok(cuCtxPushCurrent(p1));
    CUdevice d = -1;
    assert_cu_ok(cuCtxGetDevice(&d));
    assert_int_equal(d, 1);
    size_t free0, total0, free1a, total1, free1b;
    assert_cu_ok(cuMemGetInfo(&free1a, &total1));
    CUdeviceptr big;
    const size_t bigBytes = (size_t)1 << 30;
    assert_cu_ok(cuMemAlloc(&big, bigBytes));
    assert_cu_ok(cuMemGetInfo(&free1b, &total1));
    assert_true(free1a - free1b >= bigBytes);
    int ordinal = -1;
    assert_cu_ok(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, big));
    assert_int_equal(ordinal, 1);
    CUcontext owner = NULL;
    assert_cu_ok(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, big));
    assert_ptr_equal(owner, p1);
    assert_cu_ok(cuCtxPopCurrent(NULL));
    assert_cu_ok(cuCtxPushCurrent(p0));
    assert_cu_ok(cuMemGetInfo(&free0, &total0));
    if (g_sim) assert_true(free0 > free1b); /* device 0's memory is its own */
    assert_cu_ok(cuCtxPopCurrent(NULL));
    assert_cu_ok(cuMemFree(big));
    assert_cu_ok(cuDevicePrimaryCtxRelease(1));
    assert_cu_ok(cuDevicePrimaryCtxRelease(0));
}

/* ------------------------------------------------------------ peers */

static void test_peer_capabilities(void **state) {
    (void)state;
    int v = -1;
    assert_cu_ok(cuDeviceCanAccessPeer(&v, 0, 0));
    assert_int_equal(v, 0);
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceCanAccessPeer(NULL, 0, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceCanAccessPeer(&v, 0, g_count));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetP2PAttribute(&v, (CUdevice_P2PAttribute)99, 0, 0));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetP2PAttribute(NULL, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 0));
    if (skip_unless_two()) return;
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetP2PAttribute(&v, (CUdevice_P2PAttribute)99, 0, 1));
    assert_cu(CUDA_ERROR_INVALID_VALUE, cuDeviceGetP2PAttribute(&v, (CUdevice_P2PAttribute)0, 1, 0));
    assert_cu_ok(cuDeviceCanAccessPeer(&v, 0, 1));
    const int access = v;
    if (g_sim) assert_int_equal(access, 1);
    assert_cu_ok(cuDeviceCanAccessPeer(&v, 1, 0));
    assert_int_equal(v, access);
    assert_cu_ok(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1));
    assert_int_equal(v, access);
    assert_cu_ok(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, 1, 0));
    if (g_sim) assert_int_equal(v, 1); /* NVLink */
    assert_cu_ok(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 0, 1));
    if (g_sim) assert_int_equal(v, 0);
    assert_cu_ok(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED, 0, 1));
    assert_int_equal(v, 0); /* CUDA arrays are not provided */
}

static void test_peer_access_errors(void **state) {
    (void)state;
    if (skip_unless_two()) return;
    int access = 0;
    assert_cu_ok(cuDeviceCanAccessPeer(&access, 0, 1));
    CUcontext c0, c1, c0b;
    assert_cu_ok(cuCtxCreate(&c0, NULL, 0, 0));
    assert_cu_ok(cuCtxCreate(&c1, NULL, 0, 1));
    assert_cu_ok(cuCtxCreate(&c0b, NULL, 0, 0));
    /* No current context: the creations pushed three. */
    for (int i = 0; i < 3; ++i) assert_cu_ok(cuCtxPopCurrent(NULL));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxEnablePeerAccess(c1, 0));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxDisablePeerAccess(c1));
    assert_cu_ok(cuCtxSetCurrent(c0));
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxEnablePeerAccess(c0, 0));        /* itself */
    assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxEnablePeerAccess(NULL, 0));
    assert_cu(CUDA_ERROR_INVALID_DEVICE, cuCtxEnablePeerAccess(c0b, 0));       /* same device */
    assert_cu(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, cuCtxDisablePeerAccess(c1));
    if (!access) {
        assert_cu(CUDA_ERROR_INVALID_DEVICE, cuCtxEnablePeerAccess(c1, 0));
        print_message("no peer link between devices 0 and 1: enable cases skipped\n");
    } else {
        assert_cu(CUDA_ERROR_INVALID_VALUE, cuCtxEnablePeerAccess(c1, 1));
        assert_cu_ok(cuCtxEnablePeerAccess(c1, 0));
        assert_cu(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, cuCtxEnablePeerAccess(c1, 0));
        /* One direction only. */
        assert_cu_ok(cuCtxSetCurrent(c1));
        assert_cu(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, cuCtxDisablePeerAccess(c0));
        assert_cu_ok(cuCtxEnablePeerAccess(c0, 0));
        assert_cu_ok(cuCtxDisablePeerAccess(c0));
        assert_cu_ok(cuCtxSetCurrent(c0));
        assert_cu_ok(cuCtxDisablePeerAccess(c1));
        assert_cu(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, cuCtxDisablePeerAccess(c1));
        /* Enabled again, then the peer goes: the access goes with it. */
        assert_cu_ok(cuCtxEnablePeerAccess(c1, 0));
        assert_cu_ok(cuCtxDestroy(c1));
        assert_cu_ok(cuCtxSetCurrent(c0));
        assert_cu(CUDA_ERROR_INVALID_CONTEXT, cuCtxEnablePeerAccess(c1, 0));
        c1 = NULL;
    }
    assert_cu_ok(cuCtxDestroy(c0b));
    if (c1) assert_cu_ok(cuCtxDestroy(c1));
    assert_cu_ok(cuCtxDestroy(c0));
}

/* ------------------------------------------------------------ copies between devices */

typedef struct {
    CUcontext c0, c1;
    CUdeviceptr a0, a1; /* kBytes on device 0 and on device 1 */
    unsigned char *host, *want, *got;
} peer_fixture;

enum { kBytes = (1 << 20) + 4099 };

static peer_fixture *peer_setup(void) {
    peer_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_cu_ok(cuCtxCreate(&f->c1, NULL, 0, 1));
    assert_cu_ok(cuMemAlloc(&f->a1, kBytes));
    assert_cu_ok(cuCtxCreate(&f->c0, NULL, 0, 0));
    assert_cu_ok(cuMemAlloc(&f->a0, kBytes));
    f->host = malloc(kBytes);
    f->want = malloc(kBytes);
    f->got = malloc(kBytes);
    assert_non_null(f->host);
    assert_non_null(f->want);
    assert_non_null(f->got);
    return f;
}

static void peer_teardown(peer_fixture *f) {
    assert_cu_ok(cuCtxDestroy(f->c0));
    assert_cu_ok(cuCtxDestroy(f->c1));
    assert_cu_ok(cuCtxSetCurrent(NULL));
    free(f->host);
    free(f->want);
    free(f->got);
    free(f);
}

/* Device 1's bytes, read through its own context. */
static void read_device1(peer_fixture *f, CUdeviceptr src, size_t n) {
    assert_cu_ok(cuCtxPushCurrent(f->c1));
    assert_cu_ok(cuMemcpyDtoH(f->got, src, n));
    assert_cu_ok(cuCtxPopCurrent(NULL));
}

static void copies_between_devices(int expect_staged) {
    peer_fixture *f = peer_setup();
    ts_rng rng;
    ts_rng_init(&rng, 0x5eed14);
    /* Device 0 holds random bytes; device 1 a different pattern. */
    ts_fill_random(f->want, kBytes, 1401);
    ts_fill_random(f->host, kBytes, 1402);
    assert_cu_ok(cuCtxSetCurrent(f->c0));
    assert_cu_ok(cuMemcpyHtoD(f->a0, f->want, kBytes));
    assert_cu_ok(cuCtxPushCurrent(f->c1));
    assert_cu_ok(cuMemcpyHtoD(f->a1, f->host, kBytes));
    assert_cu_ok(cuCtxPopCurrent(NULL));
    memcpy(f->got, f->host, kBytes);

    /* cuMemcpyPeer, odd sizes at odd offsets, device 0 -> device 1. */
    unsigned char *model = malloc(kBytes);
    assert_non_null(model);
    memcpy(model, f->host, kBytes);
    for (int i = 0; i < 12; ++i) {
        size_t n = 1 + (size_t)ts_rng_below(&rng, i < 6 ? 4097 : kBytes / 2);
        size_t so = (size_t)ts_rng_below(&rng, kBytes - n + 1), d = (size_t)ts_rng_below(&rng, kBytes - n + 1);
        assert_cu_ok(cuMemcpyPeer(f->a1 + d, f->c1, f->a0 + so, f->c0, n));
        memcpy(model + d, f->want + so, n);
    }
    read_device1(f, f->a1, kBytes);
    assert_bytes_named(model, f->got, kBytes, "device 1 after cuMemcpyPeer from device 0");

    /* Back: device 1 -> device 0 with the async form on a device-1 stream,
     * ordered after an event of a device-0 stream. */
    CUstream s0, s1;
    CUevent e0, e1;
    assert_cu_ok(cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING));
    assert_cu_ok(cuEventCreate(&e0, CU_EVENT_DISABLE_TIMING));
    assert_cu_ok(cuMemsetD8Async(f->a0, 0x5a, kBytes, s0));
    assert_cu_ok(cuEventRecord(e0, s0));
    assert_cu_ok(cuCtxPushCurrent(f->c1));
    assert_cu_ok(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    assert_cu_ok(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
    assert_cu_ok(cuStreamWaitEvent(s1, e0, 0));
    assert_cu_ok(cuMemcpyPeerAsync(f->a0 + 3, f->c0, f->a1 + 5, f->c1, kBytes - 8, s1));
    assert_cu_ok(cuEventRecord(e1, s1));
    assert_cu_ok(cuCtxPopCurrent(NULL));
    assert_cu_ok(cuStreamWaitEvent(s0, e1, 0));
    assert_cu_ok(cuMemcpyDtoHAsync(f->got, f->a0, kBytes, s0));
    assert_cu_ok(cuStreamSynchronize(s0));
    unsigned char *expect0 = malloc(kBytes);
    assert_non_null(expect0);
    memset(expect0, 0x5a, kBytes);
    memcpy(expect0 + 3, model + 5, kBytes - 8);
    assert_bytes_named(expect0, f->got, kBytes, "device 0 after cuMemcpyPeerAsync from device 1");

    /* Unified addresses: cuMemcpy / DtoD / memset from device 0's context on
     * device 1's memory, pinned memory of device 1's context used by device 0. */
    assert_cu_ok(cuMemcpyDtoD(f->a1 + 17, f->a0 + 1, 65537));
    memcpy(model + 17, expect0 + 1, 65537);
    assert_cu_ok(cuMemcpy(f->a0 + 100, f->a1 + 99, 4001));
    memcpy(expect0 + 100, model + 99, 4001);
    if (expect_staged) {
        /* A fill has no host side to stage through. */
        assert_cu(CUDA_ERROR_NOT_SUPPORTED, cuMemsetD8(f->a1 + 200001, 0xc3, 77777));
    } else {
        assert_cu_ok(cuMemsetD8(f->a1 + 200001, 0xc3, 77777));
        memset(model + 200001, 0xc3, 77777);
    }
    void *pinned1 = NULL;
    assert_cu_ok(cuCtxPushCurrent(f->c1));
    assert_cu_ok(cuMemAllocHost(&pinned1, 8191));
    assert_cu_ok(cuCtxPopCurrent(NULL));
    ts_fill_random(pinned1, 8191, 1403);
    assert_cu_ok(cuMemcpyHtoD(f->a0 + 9, pinned1, 8191));
    memcpy(expect0 + 9, pinned1, 8191);
    assert_cu_ok(cuMemcpyHtoD(f->a1 + 300007, pinned1, 8191));
    memcpy(model + 300007, pinned1, 8191);
    assert_cu_ok(cuCtxSynchronize());
    assert_cu_ok(cuMemcpyDtoH(f->got, f->a0, kBytes));
    assert_bytes_named(expect0, f->got, kBytes, "device 0 after unified copies");
    read_device1(f, f->a1, kBytes);
    assert_bytes_named(model, f->got, kBytes, "device 1 after unified copies");

    /* 3-D peer copy of a small box between the devices (needs the peer link). */
    CUDA_MEMCPY3D_PEER p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p.srcDevice = f->a0 + 11;
    p.srcPitch = 1000;
    p.srcHeight = 7;
    p.srcContext = f->c0;
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.dstDevice = f->a1 + 13;
    p.dstPitch = 900;
    p.dstHeight = 6;
    p.dstContext = f->c1;
    p.WidthInBytes = 333;
    p.Height = 5;
    p.Depth = 3;
    CUresult r3 = cuMemcpy3DPeer(&p);
    if (expect_staged) {
        assert_cu(CUDA_ERROR_NOT_SUPPORTED, r3);
    } else {
        assert_cu_ok(r3);
        for (size_t z = 0; z < 3; ++z)
            for (size_t y = 0; y < 5; ++y)
                memcpy(model + 13 + z * 900 * 6 + y * 900, expect0 + 11 + z * 1000 * 7 + y * 1000, 333);
        read_device1(f, f->a1, kBytes);
        assert_bytes_named(model, f->got, kBytes, "device 1 after cuMemcpy3DPeer");
    }

    assert_cu_ok(cuCtxSetCurrent(f->c0));
    assert_cu_ok(cuStreamDestroy(s0));
    assert_cu_ok(cuEventDestroy(e0));
    assert_cu_ok(cuCtxPushCurrent(f->c1));
    assert_cu_ok(cuStreamDestroy(s1));
    assert_cu_ok(cuEventDestroy(e1));
    assert_cu_ok(cuMemFreeHost(pinned1));
    assert_cu_ok(cuCtxPopCurrent(NULL));
    free(model);
    free(expect0);
    peer_teardown(f);
}

static void test_copies_between_devices(void **state) {
    (void)state;
    if (skip_unless_two()) return;
    int access = 0;
    assert_cu_ok(cuDeviceCanAccessPeer(&access, 0, 1));
    copies_between_devices(!access);
}

/* Without a peer link (NVLITE_SIM_P2P=0) copies go through the host. */
static void test_copies_without_peer_link(void **state) {
    (void)state;
    if (!g_sim) {
        print_message("skipped: the simulator's NVLITE_SIM_P2P=0 models GPUs without a peer link\n");
        skip();
        return;
    }
    const char *env[] = {"NVLITE_SIM_P2P=0", NULL};
    char *out = run_child("--copy-staged", env);
    assert_string_equal(out, "staged copies ok\n");
    free(out);
}

static int child_copy_staged(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_copies_between_devices)};
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&g_count) != CUDA_SUCCESS) return 1;
    int access = -1;
    if (cuDeviceCanAccessPeer(&access, 0, 1) != CUDA_SUCCESS || access != 0) return 1;
    /* cmocka prints to stdout: keep its report out of the answer. */
    fflush(stdout);
    int saved = dup(1);
    if (saved < 0 || dup2(2, 1) < 0) return 1;
    int failed = cmocka_run_group_tests_name("staged", tests, NULL, NULL);
    fflush(stdout);
    dup2(saved, 1);
    if (failed) return 1;
    printf("staged copies ok\n");
    return 0;
}

int main(int argc, char **argv) {
    const char *dev = getenv("NVLITE_DEVICE");
    g_sim = dev && strcmp(dev, "sim") == 0;
    if (g_sim && !getenv("NVLITE_SIM_GPUS")) setenv("NVLITE_SIM_GPUS", "2", 1);
    if (argc > 1 && strcmp(argv[1], "--enumerate") == 0) return child_enumerate();
    if (argc > 1 && strcmp(argv[1], "--copy-staged") == 0) return child_copy_staged();

    if (cuInit(0) != CUDA_SUCCESS) {
        fprintf(stderr, "cuInit failed\n");
        return 1;
    }
    assert_cu_ok(cuDeviceGetCount(&g_count));
    if (g_count > MAX_GPUS) g_count = MAX_GPUS;
    for (int i = 0; i < g_count; ++i) {
        CUuuid u;
        if (cuDeviceGetPCIBusId(g_bus[i], sizeof g_bus[i], i) != CUDA_SUCCESS ||
            cuDeviceGetUuid_v2(&u, i) != CUDA_SUCCESS)
            return 1;
        uuid_string(&u, g_uuid[i]);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enumeration_in_pci_order),
        cmocka_unit_test(test_visible_devices),
        cmocka_unit_test(test_contexts_and_memory_per_device),
        cmocka_unit_test(test_peer_capabilities),
        cmocka_unit_test(test_peer_access_errors),
        cmocka_unit_test(test_copies_between_devices),
        cmocka_unit_test(test_copies_without_peer_link),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
