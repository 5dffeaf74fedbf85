#include "core/visibility.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <numeric>
#include <string_view>

namespace nvl::core {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool startsWithNoCase(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
            return false;
    return true;
}

// The GPU (position in 'sorted') an entry names, or -1.
long resolve(std::string_view entry, const std::vector<GpuIdentity>& gpus, const std::vector<size_t>& sorted) {
    if (entry.empty()) return -1;
    if (std::all_of(entry.begin(), entry.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        if (entry.size() > 9) return -1;
        const long index = std::stol(std::string(entry));
        return index < static_cast<long>(sorted.size()) ? index : -1;
    }
    if (!startsWithNoCase(entry, "GPU-") || entry.size() <= 4) return -1;  // MIG- and anything else
    long found = -1;
    for (size_t i = 0; i < sorted.size(); ++i) {
        if (!startsWithNoCase(uuidString(gpus[sorted[i]].uuid), entry)) continue;
        if (found >= 0) return -1;  // ambiguous prefix
        found = static_cast<long>(i);
    }
    return found;
}

}  // namespace

std::string uuidString(const uint8_t u[16]) {
    char s[48];
    std::snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                  u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    return s;
}

std::vector<size_t> visibleOrder(const std::vector<GpuIdentity>& gpus, const char* order, const char* visible) {
    std::vector<size_t> sorted(gpus.size());
    std::iota(sorted.begin(), sorted.end(), size_t{0});
    auto pciLess = [&](size_t a, size_t b) {
        const GpuIdentity &x = gpus[a], &y = gpus[b];
        if (x.pciDomain != y.pciDomain) return x.pciDomain < y.pciDomain;
        if (x.pciBus != y.pciBus) return x.pciBus < y.pciBus;
        if (x.pciDevice != y.pciDevice) return x.pciDevice < y.pciDevice;
        return x.pciFunction < y.pciFunction;
    };
    const bool byBus = order && std::string_view(order) == "PCI_BUS_ID";
    std::stable_sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
        if (!byBus && gpus[a].speed != gpus[b].speed) return gpus[a].speed > gpus[b].speed;
        return pciLess(a, b);
    });
    if (!visible) return sorted;

    std::vector<size_t> picked;
    std::vector<bool> taken(sorted.size(), false);
    std::string_view rest(visible);
    while (true) {
        const size_t comma = rest.find(',');
        const long i = resolve(trim(rest.substr(0, comma)), gpus, sorted);
        if (i < 0 || taken[static_cast<size_t>(i)]) break;
        taken[static_cast<size_t>(i)] = true;
        picked.push_back(sorted[static_cast<size_t>(i)]);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return picked;
}

}  // namespace nvl::core
