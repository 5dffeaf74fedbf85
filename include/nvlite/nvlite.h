/*
 * nvlite's own extras, beside the CUDA driver API of cuda.h.
 *
 * Simulated driver (NVLITE_DEVICE=sim) test control:
 *
 *   nvliteSimInjectFault(kind)   makes the simulated GPU fault on the next
 *                                copy-engine transfer or kernel launch of the
 *                                process, the way the real GPU does for a bad
 *                                address or a trap: the channel's TSG stops,
 *                                RM's error notifier gets the RC error, the
 *                                faulting work never completes. The program
 *                                then sees what libcuda reports for such a
 *                                fault (CUDA_ERROR_ILLEGAL_ADDRESS, or
 *                                CUDA_ERROR_LAUNCH_FAILED for a trap) from its
 *                                next synchronising call.
 *
 * Returns CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE for an unknown kind, or
 * CUDA_ERROR_NOT_SUPPORTED when the simulated driver is not in use.
 *
 * The simulated driver is libnvlite_sim.so, beside libnvlite.so (which loads
 * it for NVLITE_DEVICE=sim); nvliteSimInjectFault is exported by it, not by
 * libnvlite.so: link with -lnvlite_sim (or look it up with dlsym).
 */
#ifndef NVLITE_NVLITE_H
#define NVLITE_NVLITE_H

#include "cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nvliteSimFault_enum {
    NVLITE_SIM_FAULT_NONE = 0,        /* disarm what was injected and has not struck yet */
    NVLITE_SIM_FAULT_COPY_MMU = 1,    /* next copy touches an unmapped address (MMU fault, Xid 31) */
    NVLITE_SIM_FAULT_LAUNCH_MMU = 2,  /* next kernel writes to an unmapped or freed address (MMU fault, Xid 31) */
    NVLITE_SIM_FAULT_LAUNCH_TRAP = 3  /* next kernel executes __trap() (SM exception, Xid 13) */
} nvliteSimFault;

CUresult nvliteSimInjectFault(nvliteSimFault fault);

#ifdef __cplusplus
}
#endif

#endif /* NVLITE_NVLITE_H */
