/* Tables for NVIDIA's cuda.h.  Build with -I/usr/local/cuda/include (and NOT
 * -I<repo>/include) and -DHV_VARIANT=nvidia (or nvidia_ptds plus
 * -DCUDA_API_PER_THREAD_DEFAULT_STREAM). */
#include <cuda.h>

/* CU_IPC_HANDLE_SIZE exists only in NVIDIA's header: make sure we got it. */
#ifndef CU_IPC_HANDLE_SIZE
#error "values_nvidia.c must be built against NVIDIA's cuda.h"
#endif

#include "hv_tables.inc"
