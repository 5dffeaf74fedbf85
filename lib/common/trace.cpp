#include "common/trace.h"

#include <cstdio>
#include <cstdlib>

namespace nvl::trace {

int level() {
    static const int value = [] {
        const char* s = std::getenv("NVLITE_TRACE");
        return s ? std::atoi(s) : 0;
    }();
    return value;
}

void print(const char* fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "nvlite: %s\n", line);
}

}  // namespace nvl::trace
