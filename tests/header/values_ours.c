/* Tables for include/nvlite/cuda.h: build with -I<repo>/include,
 * -I<the configuration's folder> and -DHV_VARIANT=ours. */
#include "nvlite/cuda.h"

#include "hv_tables.inc"
