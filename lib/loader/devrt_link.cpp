#include "loader/devrt_link.h"

#include <elf.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "common/trace.h"
#include "loader/cubin.h"
#include "loader/devrt_image.h"
#include "loader/layout.h"
#include "loader/nv_info.h"
#include "loader/relocation.h"

namespace nvl::loader::devrt {

namespace {


// The CUDA names, and ours behind them (devrt.cu).
struct Export {
    const char* cudaName;
    const char* ownName;
    uint8_t uses;
};
constexpr Export kExports[] = {
    {"vprintf", "nvl_devrt_vprintf", kDevrtFifo},
    {"__assertfail", "nvl_devrt_assertfail", kDevrtFifo},
    {"malloc", "nvl_devrt_malloc", kDevrtHeap},
    {"free", "nvl_devrt_free", kDevrtHeap},
    // libcudadevrt's cooperative-groups calls (numba's grid groups).
    {"__cuda_syscall_CGS_get_intrinsic_handle", "nvl_devrt_cg_handle", 0},
    {"__cuda_syscall_CGS_sync", "nvl_devrt_cg_sync", 0},
    // libcudadevrt's device-side launches: the CDP1 names (what code calling
    // cudaGetParameterBufferV2 / cudaLaunchDeviceV2 directly links to, as
    // libNVVM's device-side-launch sample does) and CDP2's.
    {"cnpGetParameterBufferV2", "nvl_devrt_parameter_buffer", kDevrtLaunch},
    {"cnpLaunchDeviceV2", "nvl_devrt_launch", kDevrtLaunch},
    {"cnpSetLastError", "nvl_devrt_set_last_error", kDevrtLaunch},
    {"cnpGetLastError", "nvl_devrt_get_last_error", kDevrtLaunch},
    {"cnpStreamCreate", "nvl_devrt_stream_create", kDevrtLaunch},
    {"cnpStreamDestroy", "nvl_devrt_stream_destroy", kDevrtLaunch},
    {"__cuda_syscall_cnpv2GetParameterBufferV2", "nvl_devrt_parameter_buffer", kDevrtLaunch},
    {"__cuda_syscall_cnpv2LaunchDeviceV2", "nvl_devrt_launch", kDevrtLaunch},
    {"__cuda_syscall_cnpv2SetLastError", "nvl_devrt_set_last_error", kDevrtLaunch},
    {"__cuda_syscall_cnpv2GetLastError", "nvl_devrt_get_last_error", kDevrtLaunch},
    {"__cuda_syscall_cnpv2StreamCreate", "nvl_devrt_stream_create", kDevrtLaunch},
    {"__cuda_syscall_cnpv2StreamDestroy", "nvl_devrt_stream_destroy", kDevrtLaunch},
};
constexpr char kStateSymbol[] = "nvl_devrt_state";

constexpr uint64_t kMaxLibraryAlign = 256;

bool isText(const ElfSection& s) {
    return s.type == SHT_PROGBITS && (s.flags & SHF_EXECINSTR) && s.name.starts_with(".text.");
}
// .nv.global holds no bytes in the file (zeros), .nv.global.init does.
bool isData(const ElfSection& s) { return s.name == ".nv.global" || s.name == ".nv.global.init"; }

// REL entries keep their addend in the field; the runtime's code has none.
bool implicitAddend(uint32_t type, const uint8_t* site, int64_t* out) {
    if (type == reloc::kAbs32Lo32 || type == reloc::kAbs32Hi32) {
        *out = 0;
        return readLe<uint32_t>(site + 4) == 0;
    }
    return reloc::implicitAddend(type, site, out);
}

// Per-function values of the module-wide .nv.info, keyed by symbol index.
struct FunctionInfo {
    uint32_t registers = 0, frame = 0, minStack = 0;
};

Status readFunctionInfo(const ElfFile& elf, std::map<uint32_t, FunctionInfo>* out) {
    for (const ElfSection& s : elf.sections()) {
        if (s.type != nvinfo::kShtCudaInfo || s.info != 0) continue;
        NVL_ASSIGN_OR_RETURN(auto records, nvinfo::parse(s.data));
        for (const auto& r : records) {
            uint32_t FunctionInfo::*field;
            switch (r.attribute) {
            case nvinfo::kRegcount: field = &FunctionInfo::registers; break;
            case nvinfo::kFrameSize: field = &FunctionInfo::frame; break;
            case nvinfo::kMinStackSize: field = &FunctionInfo::minStack; break;
            default: continue;
            }
            uint32_t sym, value;
            if (r.format != nvinfo::kSval || !nvinfo::word(r, 0, &sym) || !nvinfo::word(r, 1, &value))
                return CUDA_ERROR_INVALID_IMAGE;
            (*out)[sym].*field = value;
        }
    }
    return kOk;
}

Status rejectLibrary(const char* why, std::string_view what) {
    if (trace::driver())
        trace::print("loader: device runtime unusable: %s %.*s", why, static_cast<int>(what.size()), what.data());
    return CUDA_ERROR_INVALID_IMAGE;
}

// ---------------------------------------------------------------- linking

// The undefined functions each kernel calls: its EIATTR_EXTERNS, and what
// the call graph reaches from it.
std::map<std::string, std::set<std::string>> externsByKernel(const ElfFile& elf, const Image& image) {
    const auto& syms = elf.symbols();
    std::multimap<uint32_t, uint32_t> calls;
    for (const ElfSection& s : elf.sections()) {
        if (s.type != nvinfo::kShtCudaCallgraph) continue;
        for (uint64_t off = 0; inBounds(off, 8, s.data.size()); off += 8)
            calls.emplace(readLe<uint32_t>(s.data.data() + off), readLe<uint32_t>(s.data.data() + off + 4));
    }
    auto undefinedName = [&](uint32_t index) -> const std::string_view* {
        if (index == 0 || index >= syms.size() || syms[index].section != SHN_UNDEF || syms[index].name.empty())
            return nullptr;
        return &syms[index].name;
    };
    std::map<std::string, std::set<std::string>> out;
    for (const Kernel& k : image.kernels) {
        std::set<std::string>& names = out[k.name];
        if (const ElfSection* info = elf.find(".nv.info." + k.name)) {
            auto records = nvinfo::parse(info->data);
            if (records) {
                for (const auto& r : *records) {
                    if (r.attribute != nvinfo::kExterns || r.format != nvinfo::kSval) continue;
                    uint32_t index;
                    for (size_t i = 0; nvinfo::word(r, i, &index); ++i)
                        if (const std::string_view* n = undefinedName(index)) names.emplace(*n);
                }
            }
        }
        std::vector<uint32_t> todo;
        std::set<uint32_t> seen;
        for (uint32_t i = 1; i < syms.size(); ++i)
            if (syms[i].name == k.name && syms[i].type == STT_FUNC && syms[i].section != SHN_UNDEF) todo.push_back(i);
        while (!todo.empty()) {
            const uint32_t caller = todo.back();
            todo.pop_back();
            if (!seen.insert(caller).second) continue;
            auto [first, last] = calls.equal_range(caller);
            for (auto it = first; it != last; ++it) {
                if (const std::string_view* n = undefinedName(it->second)) names.emplace(*n);
                else if (it->second < syms.size()) todo.push_back(it->second);
            }
        }
    }
    return out;
}

// Inserts 'bytes' zero bytes at the end of the stored part: zero-filled
// data, and whatever refers to it, moves up.
uint64_t insertAfterStored(Image& image, uint64_t bytes) {
    const uint64_t at = image.bytes.size();
    for (Global& g : image.globals)
        if (g.imageOffset >= at) g.imageOffset += bytes;
    for (Relocation& r : image.relocations)
        if (r.targetImageOffset >= at) r.targetImageOffset += bytes;
    image.bytes.resize(at + bytes, 0);
    return at;
}

}  // namespace

const Library::Function* Library::find(std::string_view cudaName) const {
    for (const Function& f : functions)
        if (f.cudaName == cudaName) return &f;
    return nullptr;
}

Result<Library> parseLibrary(Bytes cubin) {
    NVL_ASSIGN_OR_RETURN(cubin::Header h, cubin::readHeader(cubin));
    if (h.type != ET_REL) return rejectLibrary("not relocatable", "");
    NVL_ASSIGN_OR_RETURN(auto elf, ElfFile::open(cubin));
    const auto& sections = elf->sections();
    const auto& syms = elf->symbols();
    Library lib;

    // Code first, then data: each at its alignment, block offsets per section.
    std::vector<int64_t> where(sections.size(), -1);
    uint64_t cursor = 0;
    for (int pass = 0; pass < 2; ++pass) {
        for (const ElfSection& s : sections) {
            if (!(pass == 0 ? isText(s) : isData(s))) continue;
            const uint64_t align = std::max<uint64_t>({s.align, 1, pass == 0 ? kTextAlign : 8});
            if ((align & (align - 1)) != 0 || align > kMaxLibraryAlign) return rejectLibrary("alignment of", s.name);
            cursor = alignUp(cursor, align);
            where[s.index] = static_cast<int64_t>(cursor);
            if (!addOk(cursor, s.size, &cursor) || cursor > (1u << 24)) return rejectLibrary("size of", s.name);
        }
    }
    for (const ElfSection& s : sections)
        if ((s.flags & SHF_ALLOC) && where[s.index] < 0) return rejectLibrary("has section", s.name);
    lib.block.assign(alignUp(cursor + kCodeSlack, kDataAlign), 0);
    for (const ElfSection& s : sections) {
        if (where[s.index] < 0 || s.name == ".nv.global") continue;  // .nv.global: zeros
        if (s.data.size() != s.size) return rejectLibrary("truncated", s.name);
        std::copy(s.data.begin(), s.data.end(), lib.block.begin() + where[s.index]);
    }
    auto blockOffset = [&](const ElfSymbol& sym, uint64_t* out) {
        if (sym.section >= sections.size() || where[sym.section] < 0) return false;
        const ElfSection& home = sections[sym.section];
        const uint64_t rel = home.relative(sym.value);
        if (rel > home.size) return false;
        *out = static_cast<uint64_t>(where[sym.section]) + rel;
        return true;
    };

    // Relocations: only against the runtime's own data.
    for (const ElfSection& s : sections) {
        if (s.type != SHT_RELA && s.type != SHT_REL) continue;
        if (s.info >= sections.size() || where[s.info] < 0) continue;  // .debug_frame
        if (s.link != elf->symtabIndex()) return rejectLibrary("symbol table of", s.name);
        const ElfSection& target = sections[s.info];
        NVL_ASSIGN_OR_RETURN(auto entries, elf->relocations(s));
        for (const ElfRelocation& r : entries) {
            // YIELD hints: nvlink's default output keeps those instructions as
            // they are (compared byte for byte on sm_80 code), so do we.
            if (r.type == reloc::kNone || r.type == reloc::kYieldOpcode9_0 || r.type == reloc::kYieldClearPred4_87) continue;
            if (r.type != reloc::k64 && r.type != reloc::kG64 && r.type != reloc::kAbs32Lo32 &&
                r.type != reloc::kAbs32Hi32)
                return rejectLibrary("relocation type", reloc::name(r.type));
            const uint64_t site = target.relative(r.offset);
            if (!inBounds(site, reloc::patchWidth(r.type), target.size)) return rejectLibrary("relocation in", s.name);
            if (r.symbol == 0 || r.symbol >= syms.size()) return rejectLibrary("relocation in", s.name);
            const ElfSymbol& sym = syms[r.symbol];
            uint64_t to;
            if (!blockOffset(sym, &to) || isText(sections[sym.section]))
                return rejectLibrary("relocation against", sym.name);
            const uint64_t at = static_cast<uint64_t>(where[target.index]) + site;
            int64_t addend = r.addend;
            if (!r.explicitAddend && !implicitAddend(r.type, lib.block.data() + at, &addend))
                return rejectLibrary("addend in", s.name);
            lib.relocations.push_back({at, r.type, to, addend});
        }
    }

    // The entry points and the state slot.
    std::map<uint32_t, FunctionInfo> info;
    NVL_TRY(readFunctionInfo(*elf, &info));
    bool haveState = false;
    for (uint32_t i = 1; i < syms.size(); ++i) {
        const ElfSymbol& sym = syms[i];
        if (sym.name == kStateSymbol) {
            if (!blockOffset(sym, &lib.stateSlot) || !isData(sections[sym.section]) || sym.size != 8)
                return rejectLibrary("symbol", sym.name);
            haveState = true;
            continue;
        }
        for (const Export& e : kExports) {
            if (sym.name != e.ownName) continue;
            Library::Function f;
            f.cudaName = e.cudaName;
            f.uses = e.uses;
            if (sym.type != STT_FUNC || !blockOffset(sym, &f.offset) || !isText(sections[sym.section]))
                return rejectLibrary("symbol", sym.name);
            auto it = info.find(i);
            if (it == info.end() || it->second.registers == 0) return rejectLibrary("no register count for", sym.name);
            f.registers = it->second.registers;
            // No calls between the runtime's functions: the frame is the stack.
            f.stackBytes = std::max(it->second.frame, it->second.minStack);
            lib.functions.push_back(std::move(f));
        }
    }
    if (!haveState) return rejectLibrary("no symbol", kStateSymbol);
    for (const Export& e : kExports)
        if (!lib.find(e.cudaName)) return rejectLibrary("no symbol", e.ownName);
    return lib;
}

Result<const Library*> libraryFor(uint32_t sm) {
    struct Slot {
        std::once_flag once;
        Result<Library> library{CUDA_ERROR_NOT_SUPPORTED};
    };
    // sm_8x, sm_9x; never destroyed: modules may load while the process exits.
    static auto* slots = new Slot[2];
    const uint32_t family = sm / 10;
    if (family != 8 && family != 9) return CUDA_ERROR_NOT_SUPPORTED;
    Slot& slot = slots[family - 8];
    std::call_once(slot.once, [&] {
        const Bytes cubin = embeddedCubin(sm);
        if (!cubin.empty()) slot.library = parseLibrary(cubin);
    });
    if (!slot.library) return slot.library.status();
    return &*slot.library;
}

Status link(const ElfFile& elf, Image& image) {
    auto lib = libraryFor(image.smVersion);
    if (!lib) {
        if (trace::driver())
            trace::print("loader: the cubin calls %s, and nvlite has no device runtime for sm_%u",
                         image.externs.front().symbol.c_str(), image.smVersion);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    return linkWith(**lib, elf, image);
}

Status linkWith(const Library& lib, const ElfFile& elf, Image& image) {
    for (const ExternRelocation& x : image.externs) {
        if (!lib.find(x.symbol)) {
            if (trace::driver()) trace::print("loader: relocation against unresolved symbol '%s'", x.symbol.c_str());
            return CUDA_ERROR_INVALID_IMAGE;
        }
    }
    // The library goes after the stored bytes; zero-filled data keeps its alignment.
    const uint64_t at =
        insertAfterStored(image, alignUp(lib.block.size(), std::max<uint64_t>(image.alignment, kDataAlign)));
    std::copy(lib.block.begin(), lib.block.end(), image.bytes.begin() + at);
    for (const Library::Fixup& f : lib.relocations)
        image.relocations.push_back({at + f.offset, f.type, at + f.target, f.addend});
    std::set<std::string> called;
    for (const ExternRelocation& x : image.externs) {
        image.relocations.push_back({x.imageOffset, x.type, at + lib.find(x.symbol)->offset, x.addend});
        called.insert(x.symbol);
    }
    image.devrtStateOffset = at + lib.stateSlot;

    // Kernels that call the runtime cover it. When the cubin does not say
    // which kernels call what, every kernel is taken to call everything.
    auto byKernel = externsByKernel(elf, image);
    const bool known = std::any_of(byKernel.begin(), byKernel.end(), [](const auto& e) { return !e.second.empty(); });
    for (Kernel& k : image.kernels) {
        const std::set<std::string>& names = known ? byKernel[k.name] : called;
        uint32_t stack = 0;
        for (const std::string& n : names) {
            const Library::Function* f = lib.find(n);
            if (!f) continue;  // another extern: its relocation was refused above
            k.registers = std::max(k.registers, f->registers);
            stack = std::max(stack, f->stackBytes);
            k.devrtUses |= f->uses;
        }
        // 0 means a recursive call graph: the context's stack limit covers it.
        if (k.localBytesPerThread) k.localBytesPerThread += stack;
    }
    if (trace::driver())
        trace::print("loader: device runtime linked at image offset 0x%llx (%zu bytes) for %zu relocations",
                     static_cast<unsigned long long>(at), lib.block.size(), image.externs.size());
    image.externs.clear();
    return kOk;
}

}  // namespace nvl::loader::devrt
