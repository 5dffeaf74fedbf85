#include "loader/image.h"

namespace nvl::loader {

const Kernel* Image::findKernel(std::string_view name) const {
    for (const Kernel& k : kernels)
        if (k.name == name) return &k;
    return nullptr;
}

const Global* Image::findGlobal(std::string_view name) const {
    for (const Global& g : globals)
        if (g.name == name) return &g;
    return nullptr;
}

}  // namespace nvl::loader
