/* Tables for include/nvlite/cuda.h.  Build with -I<repo>/include and
 * -DHV_VARIANT=ours (or ours_ptds plus -DCUDA_API_PER_THREAD_DEFAULT_STREAM). */
#include "nvlite/cuda.h"

/* CU_IPC_HANDLE_SIZE exists only in NVIDIA's header: make sure we got ours. */
#ifdef CU_IPC_HANDLE_SIZE
#error "values_ours.c was built against NVIDIA's cuda.h"
#endif

#include "hv_tables.inc"
