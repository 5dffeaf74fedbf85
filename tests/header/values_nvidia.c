/* Tables for NVIDIA's cuda.h: build with -I/usr/local/cuda/include (and not
 * -I<repo>/include), -I<the configuration's folder> and -DHV_VARIANT=nvidia. */
#include <cuda.h>

#include "hv_tables.inc"
