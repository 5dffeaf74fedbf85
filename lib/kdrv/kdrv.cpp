#include "kdrv/kdrv.h"

#include <cstdlib>
#include <cstring>

namespace nvl::kdrv {

Kdrv& get() {
    static Kdrv& selected = [] () -> Kdrv& {
        const char* dev = std::getenv("NVLITE_DEVICE");
        if (dev && std::strcmp(dev, "sim") == 0) return simKdrv();
        return linuxKdrv();
    }();
    return selected;
}

}  // namespace nvl::kdrv
