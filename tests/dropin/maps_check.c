/*
 * maps_check: a preload library for the drop-in runs. When a process that had
 * a CUDA driver library mapped (looked at when it starts, before each dlclose
 * and at the end) ends (exit, return from main, or _exit as Python's os._exit
 * and pytest-xdist workers use), it appends one line to the file named by
 * NVLITE_MAPS_LOG:
 *
 *   pid=123 exe=/path/prog libcuda5=no nvlite=yes driver=/path/libnvlite.so.0.1.0
 *
 * "libcuda5=yes" means NVIDIA's libcuda.so.5xx was mapped: the process did not
 * run on nvlite alone. Processes that mapped neither are not recorded.
 *
 *   LD_PRELOAD=build/dropin/libmaps_check.so NVLITE_MAPS_LOG=/tmp/maps.txt prog
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_done;
static char g_real[512], g_ours[512];  /* first NVIDIA libcuda.so.5xx / libnvlite seen mapped */

/* Note which driver libraries are mapped now. */
static void scan(void) {
    FILE* maps = fopen("/proc/self/maps", "re");
    if (!maps) return;
    char line[1024];
    while (fgets(line, sizeof line, maps)) {
        char* file = strchr(line, '/');
        if (!file) continue;
        file[strcspn(file, "\n")] = 0;
        const char* base = strrchr(file, '/') + 1;
        if (!g_real[0] && strncmp(base, "libcuda.so.5", 12) == 0) snprintf(g_real, sizeof g_real, "%s", file);
        if (!g_ours[0] && strstr(base, "libnvlite")) snprintf(g_ours, sizeof g_ours, "%s", file);
    }
    fclose(maps);
}

static void record(void) {
    if (__atomic_exchange_n(&g_done, 1, __ATOMIC_SEQ_CST)) return;
    const char* path = getenv("NVLITE_MAPS_LOG");
    if (!path || !*path) return;
    scan();
    if (!g_real[0] && !g_ours[0]) return;
    char exe[512] = "?";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) exe[n] = 0;
    char out[1700];
    int len = snprintf(out, sizeof out, "pid=%d exe=%s libcuda5=%s nvlite=%s driver=%s\n", (int)getpid(), exe,
                       g_real[0] ? "yes" : "no", g_ours[0] ? "yes" : "no", g_real[0] ? g_real : g_ours);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    /* one write per line: processes running side by side do not mix their lines */
    ssize_t w = write(fd, out, (size_t)(len < (int)sizeof out ? len : (int)sizeof out - 1));
    (void)w;
    close(fd);
}

__attribute__((constructor)) static void at_load(void) {
    if (getenv("NVLITE_MAPS_LOG")) scan();
}

__attribute__((destructor)) static void at_unload(void) { record(); }

/* A library that gives up on the driver may unload it before exit (cudart
 * does): look before it goes. */
int dlclose(void* handle) {
    if (!g_done) scan();
    int (*real)(void*) = (int (*)(void*))dlsym(RTLD_NEXT, "dlclose");
    return real ? real(handle) : -1;
}

/* _exit skips destructors: record first, then the real one. */
void _exit(int status) {
    record();
    void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
    if (real) real(status);
    _Exit(status);
}
