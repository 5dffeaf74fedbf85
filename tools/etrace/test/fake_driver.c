/*
 * A stand-in "libcuda.so.1" for etrace's test: cuInit, cuGetProcAddress(_v2)
 * and cuGetExportTable serving made-up tables (fake_tables.h). The tables are
 * const, so they end up read-only after relocation, as libcuda's are.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fake_tables.h"

#define EXPORT __attribute__((visibility("default")))

static void* const kSized[] = FAKE_SIZED_TABLE;
static void* const kPlain[] = FAKE_PLAIN_TABLE;
static void* const kIntegrity[] = {(void*)(3 * sizeof(void*)), (void*)fake_out, (void*)fake_ratio};
static const uint8_t kSizedId[16] = FAKE_SIZED_UUID;
static const uint8_t kPlainId[16] = FAKE_PLAIN_UUID;
static const uint8_t kIntegrityId[16] = FAKE_INTEGRITY_UUID;

EXPORT int cuInit(unsigned flags) { return flags == 0 ? 0 : 1; }

EXPORT int cuGetExportTable(const void** table, const void* id) {
    if (!table || !id) return 1;
    *table = NULL;
    if (memcmp(id, kSizedId, 16) == 0) *table = kSized;
    else if (memcmp(id, kPlainId, 16) == 0) *table = kPlain;
    else if (memcmp(id, kIntegrityId, 16) == 0) *table = kIntegrity;
    return *table ? 0 : 1;
}

EXPORT int cuGetProcAddress_v2(const char* name, void** pfn, int version, uint64_t flags, int* status);

EXPORT int cuGetProcAddress(const char* name, void** pfn, int version, uint64_t flags) {
    (void)version; (void)flags;
    if (!name || !pfn) return 1;
    *pfn = NULL;
    if (strcmp(name, "cuInit") == 0) *pfn = (void*)cuInit;
    else if (strcmp(name, "cuGetExportTable") == 0) *pfn = (void*)cuGetExportTable;
    else if (strcmp(name, "cuGetProcAddress") == 0) *pfn = (void*)cuGetProcAddress;
    return *pfn ? 0 : 500;
}

EXPORT int cuGetProcAddress_v2(const char* name, void** pfn, int version, uint64_t flags, int* status) {
    int rc = cuGetProcAddress(name, pfn, version, flags);
    if (rc == 0 && strcmp(name, "cuGetProcAddress") == 0 && version >= 12000) *pfn = (void*)cuGetProcAddress_v2;
    if (status) *status = rc == 0 ? 0 : 1;
    return rc == 500 ? 0 : rc;
}
