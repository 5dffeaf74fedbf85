// cuGetExportTable: libcuda's private tables, asked for by UUID (NVRTC,
// cudart and profiling tools ask for some). This file is the one place
// tables are registered: one that nvlite serves gets its 'table'; one it
// knows but does not serve is named here only so traces say what was
// asked for. Every other UUID, or none, is CUDA_ERROR_INVALID_VALUE with a
// NULL table, as in libcuda 580.
#include <cstdio>
#include <cstring>

#include "api/entry.h"

namespace nvl::api {
namespace {

struct ExportTable {
    unsigned char id[16];  // the UUID's bytes in textual order
    const char* name;
    const void* table;  // nullptr: not served
};

// UUIDs from what NVRTC 13 and cudart 13 ask libcuda 580 for (recorded on
// the H200), names as ZLUDA documents them.
constexpr ExportTable kTables[] = {
    // NVRTC 13 asks for it after cuInit and compiles without it.
    {{0xda, 0x91, 0x51, 0xd3, 0x3a, 0xe6, 0xcc, 0x41, 0xa5, 0xc0, 0x4f, 0x26, 0xd5, 0x33, 0xe3, 0x28},
     "NVRTC's",
     nullptr},
    // cudart's (a later issue serves them).
    {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9},
     "cudart's CUDART_INTERFACE", nullptr},
    {{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc},
     "cudart's TOOLS_TLS", nullptr},
    {{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66},
     "cudart's TOOLS_RUNTIME_CALLBACK_HOOKS", nullptr},
    {{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93},
     "cudart's CONTEXT_LOCAL_STORAGE_INTERFACE_V0301", nullptr},
    {{0x0c, 0xa5, 0x0b, 0x8c, 0x10, 0x04, 0x92, 0x9a, 0x89, 0xa7, 0xd0, 0xdf, 0x10, 0xe7, 0x72, 0x86},
     "CTX_CREATE_BYPASS", nullptr},
    {{0x19, 0x5b, 0xcb, 0xf4, 0xd6, 0x7d, 0x02, 0x4a, 0xac, 0xc5, 0x1d, 0x29, 0xce, 0xa6, 0x31, 0xae},
     "HEAP_ACCESS", nullptr},
    {{0xb1, 0x05, 0x41, 0xe1, 0xf7, 0xc7, 0xc7, 0x4a, 0x9f, 0x64, 0xf2, 0x23, 0xbe, 0x99, 0xf1, 0xe2},
     "DEVICE_EXTENDED_RT", nullptr},
};

const ExportTable* lookup(const CUuuid& id) {
    for (const ExportTable& t : kTables)
        if (std::memcmp(t.id, id.bytes, sizeof t.id) == 0) return &t;
    return nullptr;
}

}  // namespace

Status getExportTable(const void** ppExportTable, const CUuuid* pExportTableId) {
    if (ppExportTable) *ppExportTable = nullptr;
    if (!pExportTableId) {
        if (trace::api()) trace::print("cuGetExportTable: no UUID -> CUDA_ERROR_INVALID_VALUE");
        return CUDA_ERROR_INVALID_VALUE;
    }
    const ExportTable* t = lookup(*pExportTableId);
    if (trace::api()) {
        const auto* b = reinterpret_cast<const unsigned char*>(pExportTableId->bytes);
        char uuid[40];
        std::snprintf(uuid, sizeof uuid, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                      b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
        trace::print("cuGetExportTable: %s (%s) -> %s", uuid, t ? t->name : "unknown",
                     t && t->table ? "served" : "not provided by nvlite");
    }
    if (!ppExportTable || !t || !t->table) return CUDA_ERROR_INVALID_VALUE;
    *ppExportTable = t->table;
    return kOk;
}

}  // namespace nvl::api
