/* Prints what cuInit returns (tests/libs/check_libs.sh). Linked without an
 * rpath: it takes libnvlite.so.0 from LD_LIBRARY_PATH. */
#include <stdio.h>

#include "cuda.h"

int main(void) {
    printf("cuInit=%d\n", (int)cuInit(0));
    return 0;
}
