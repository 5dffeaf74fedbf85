// load() / loadFile(): recognise the input and route it to the cubin parser,
// the fatbin selector or the PTX JIT.
#include <elf.h>


#include <cstring>
#include <new>
#include <string_view>

#include "common/trace.h"
#include "loader/cubin.h"
#include "loader/fatbin.h"
#include "loader/image.h"
#include "loader/input_check.h"
#include "loader/jit.h"

namespace nvl::loader {

namespace {

enum class Format { Elf, Fatbin, Wrapper, Text };

// The wrapper: {u32 magic, u32 version, const void* data}, then more we do not need.

// Reads the magic byte by byte so that a short PTX string is not read past
// its NUL when the size is unknown.
Format detect(const uint8_t* p, size_t size) {
    // 'magic' as its first four bytes in memory (little-endian).
    auto has = [&](uint32_t magic) {
        for (size_t i = 0; i < 4; ++i)
            if (i >= size || p[i] != ((magic >> (8 * i)) & 0xff)) return false;
        return true;
    };
    auto hasElf = [&] {
        for (size_t i = 0; i < SELFMAG; ++i)
            if (i >= size || p[i] != static_cast<uint8_t>(ELFMAG[i])) return false;
        return true;
    };
    if (hasElf()) return Format::Elf;
    if (has(fatbin::kMagic)) return Format::Fatbin;
    if (has(fatbin::kWrapperMagic)) return Format::Wrapper;
    return Format::Text;
}

// SASS for sm_XY runs on X.Z for Z >= Y (the same major).
bool runsOn(uint32_t binarySm, uint32_t gpuSm) { return binarySm / 10 == gpuSm / 10 && binarySm <= gpuSm; }

Result<Image> fromCubin(Bytes elf, uint32_t sm, JitOptions& jit) {
    NVL_ASSIGN_OR_RETURN(cubin::Header h, cubin::readHeader(elf));
    if (h.type == ET_REL) {
        // nvJitLink trusts what it reads: nothing reaches it unchecked.
        NVL_TRY(cubin::validate(elf));
        if (trace::driver()) trace::print("loader: relocatable cubin, linking it with nvJitLink");
        NVL_ASSIGN_OR_RETURN(auto linked, linkRelocatable(elf, sm, jit));
        return cubin::parse(linked);
    }
    if (!runsOn(h.sm, sm)) {
        if (trace::driver()) trace::print("loader: cubin is for sm_%u, the GPU is sm_%u", h.sm, sm);
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    return cubin::parse(elf);
}

Result<Image> fromPtx(std::string_view ptx, uint32_t sm, JitOptions& jit) {
    if (!looksLikeText(ptx)) return CUDA_ERROR_INVALID_IMAGE;
    NVL_ASSIGN_OR_RETURN(auto cubinBytes, compilePtx(ptx, sm, jit));
    NVL_ASSIGN_OR_RETURN(Image image, cubin::parse(cubinBytes));
    if (!runsOn(image.smVersion, sm)) return CUDA_ERROR_NO_BINARY_FOR_GPU;  // CU_JIT_TARGET for another GPU
    return image;
}

Result<Image> fromFatbin(Bytes container, uint32_t sm, JitOptions& jit) {
    NVL_ASSIGN_OR_RETURN(auto entries, fatbin::parse(container));
    NVL_ASSIGN_OR_RETURN(const fatbin::Entry* e, fatbin::select(entries, sm, jit.preferBinary));
    NVL_ASSIGN_OR_RETURN(auto payload, fatbin::contents(*e));
    Result<Image> image = e->kind == fatbin::Kind::Elf
                              ? fromCubin(payload, sm, jit)
                              : fromPtx(std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size()),
                                        sm, jit);
    return image;
}

// The container a __fatBinC_Wrapper_t points to (an ELF there is accepted too).
Result<Image> fromWrapper(const uint8_t* p, uint32_t sm, JitOptions& jit) {
    uint32_t version = readLe<uint32_t>(p + 4);
    const uint8_t* inner = reinterpret_cast<const uint8_t*>(readLe<uintptr_t>(p + 8));
    if ((version != 1 && version != 2) || !inner) return CUDA_ERROR_INVALID_IMAGE;
    Format f = detect(inner, kUnknownSize);
    if (f == Format::Fatbin) {
        NVL_ASSIGN_OR_RETURN(size_t n, fatbin::measure(inner));
        return fromFatbin(Bytes(inner, n), sm, jit);
    }
    if (f == Format::Elf) {
        NVL_ASSIGN_OR_RETURN(size_t n, cubin::measure(inner));
        return fromCubin(Bytes(inner, n), sm, jit);
    }
    return CUDA_ERROR_INVALID_IMAGE;
}

Result<Image> dispatch(const uint8_t* p, size_t size, uint32_t sm, JitOptions& jit) {
    Format f = detect(p, size);
    // The wrapper holds a pointer: it is something a program has in memory
    // (cuModuleLoadFatBinary), never the contents of a file.
    if (f == Format::Wrapper) return size == kUnknownSize ? fromWrapper(p, sm, jit) : CUDA_ERROR_INVALID_IMAGE;
    if (size == kUnknownSize) {
        switch (f) {
        case Format::Elf: { NVL_ASSIGN_OR_RETURN(size, cubin::measure(p)); break; }
        case Format::Fatbin: { NVL_ASSIGN_OR_RETURN(size, fatbin::measure(p)); break; }
        default: size = std::strlen(reinterpret_cast<const char*>(p)); break;
        }
    }
    Bytes bytes(p, size);
    switch (f) {
    case Format::Elf: return fromCubin(bytes, sm, jit);
    case Format::Fatbin: return fromFatbin(bytes, sm, jit);
    default: {
        std::string_view text(reinterpret_cast<const char*>(p), size);
        text = text.substr(0, text.find('\0'));
        // Text without PTX's .version directive is no image at all (libcuda:
        // CUDA_ERROR_INVALID_IMAGE); real PTX that fails to compile is INVALID_PTX.
        if (!looksLikeText(text) || text.find(".version") == std::string_view::npos) return CUDA_ERROR_INVALID_IMAGE;
        return fromPtx(text, sm, jit);
    }
    }
}

}  // namespace

Result<Image> load(const void* data, size_t size, uint32_t smMajor, uint32_t smMinor, JitOptions& jit) {
    try {
        publish(jit, "", "", 0);  // nothing compiled unless the JIT runs
        if (!data || size == 0) return CUDA_ERROR_INVALID_VALUE;
        return dispatch(static_cast<const uint8_t*>(data), size, smMajor * 10 + smMinor, jit);
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
}

Result<Image> loadFile(const char* path, uint32_t smMajor, uint32_t smMinor, JitOptions& jit) {
    try {
        if (!path) return CUDA_ERROR_INVALID_VALUE;
        NVL_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, readInputFile(path));
        // PTX that ended at a NUL: the text before it.
        if (detect(bytes.data(), bytes.size()) == Format::Text) {
            if (const void* nul = std::memchr(bytes.data(), 0, bytes.size()))
                bytes.resize(static_cast<const uint8_t*>(nul) - bytes.data());
        }
        if (bytes.empty()) return CUDA_ERROR_INVALID_IMAGE;
        return load(bytes.data(), bytes.size(), smMajor, smMinor, jit);
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
}

}  // namespace nvl::loader
