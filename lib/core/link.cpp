#include "core/link.h"

#include <mutex>
#include <unordered_set>

#include "core/context.h"
#include "core/device.h"

namespace nvl::core {
namespace {

std::mutex& registryMutex() {
    static auto* m = new std::mutex();
    return *m;
}
std::unordered_set<Link*>& registry() {
    static auto* s = new std::unordered_set<Link*>();
    return *s;
}

}  // namespace

Result<Link*> Link::create(Context& ctx, const loader::JitOptions& jit) {
    const hw::GpuInfo& gi = ctx.device().info();
    NVL_ASSIGN_OR_RETURN(auto linker, loader::Linker::create(gi.smMajor, gi.smMinor, jit));
    auto* link = new Link(std::move(linker));
    std::lock_guard lock(registryMutex());
    registry().insert(link);
    return link;
}

Link* Link::fromHandle(CUlinkState s) {
    auto* link = reinterpret_cast<Link*>(s);
    std::lock_guard lock(registryMutex());
    return registry().count(link) ? link : nullptr;
}

void Link::destroy(Link* link) {
    {
        std::lock_guard lock(registryMutex());
        registry().erase(link);
    }
    delete link;
}

Status Link::add(CUjitInputType type, const void* data, size_t size, const char* name) {
    return linker_->add(type, data, size, name);
}

Status Link::addFile(CUjitInputType type, const char* path) { return linker_->addFile(type, path); }

Status Link::complete(void** cubin, size_t* size) {
    NVL_ASSIGN_OR_RETURN(const std::vector<uint8_t>* out, linker_->complete());
    *cubin = const_cast<uint8_t*>(out->data());
    *size = out->size();
    return kOk;
}

}  // namespace nvl::core
