// nvlite-jit: the process libnvlite runs NVIDIA's JIT (nvJitLink) in, so
// that a crash or a stall of the JIT cannot take the program down
// (lib/loader/jit_process.h). libnvlite starts it with its end of a socket
// as fd 3; it is not meant to be run by hand.
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "loader/jit_process.h"

int main(int argc, char** argv) {
    if (argc != 2 || std::strcmp(argv[1], "--serve") != 0) {
        std::fprintf(stderr, "nvlite-jit: libnvlite starts this program to run nvJitLink outside its user's process;\n"
                             "it takes no commands.\n");
        return 2;
    }
    ::close_range(4, ~0u, 0);  // nothing of the program that started us
    nvl::loader::jitproc::serve(3);
}
