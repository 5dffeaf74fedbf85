// libcuda's private tables that nvlite serves through cuGetExportTable
// (export_tables.cpp registers them). cudart 13 asks for them before its
// first call does anything; cuBLAS and CuPy ask for some of them too.
//
// A table is an array of slots: slot 0 of most holds the table's size in
// bytes, the others functions. What each slot means comes from ZLUDA's
// dark_api (github.com/vosen/ZLUDA) and from the calls cudart, CuPy and
// PyTorch made into libcuda 580's tables on the H200 (tools/etrace,
// coordinator's run1). A slot whose meaning is unknown answers
// CUDA_ERROR_NOT_SUPPORTED and, with NVLITE_TRACE=1, says it was called.
#pragma once

#include "common/status.h"
#include "nvlite/cuda.h"

namespace nvl::api::tables {

const void* const* cudartInterface();        // 6bd5fb6c CUDART_INTERFACE
const void* const* toolsCallbackHooks();     // a094798c TOOLS_RUNTIME_CALLBACK_HOOKS
const void* const* toolsTls();               // 42d85a81 TOOLS_TLS
const void* const* contextLocalStorage();    // c693336e CONTEXT_LOCAL_STORAGE_INTERFACE_V0301
const void* const* contextChecks();          // 263e8860 CONTEXT_CHECKS
const void* const* integrityCheck();         // d4082055 INTEGRITY_CHECK
const void* const* cublasTable();            // 21318c60 cuBLAS's (cublas_table.cpp)

// The call of a slot nvlite does not know the meaning of: traced, and
// answered with CUDA_ERROR_NOT_SUPPORTED.
CUresult unknownSlot(const char* table, int slot) noexcept;

template <const char* Table, int Slot>
CUresult unknown() noexcept {
    return unknownSlot(Table, Slot);
}

// A table's slot 0: its size in bytes.
template <size_t N>
inline const void* sizeSlot() {
    return reinterpret_cast<const void*>(N * sizeof(void*));
}

}  // namespace nvl::api::tables
