#include "loader/input_check.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "loader/cubin.h"
#include "loader/elf_file.h"
#include "loader/fatbin.h"

namespace nvl::loader {

namespace {

constexpr size_t kMaxFileBytes = size_t{1} << 30;     // as large as a cubin may be
constexpr size_t kMaxStreamBytes = size_t{64} << 20;  // devices, pipes, /proc files
constexpr size_t kChunkBytes = 65536;
// A library's or object's nesting: archives hold objects, objects hold
// fatbins, fatbins hold cubins and PTX. Deeper is not an input.
constexpr uint64_t kMaxContainers = 1u << 16;

constexpr char kArMagic[] = "!<arch>\n";
constexpr size_t kArMagicBytes = sizeof kArMagic - 1;
constexpr size_t kArHeaderBytes = 60;  // name[16] date[12] uid[6] gid[6] mode[8] size[10] "`\n"

bool startsWith(Bytes b, const void* magic, size_t n) { return b.size() >= n && std::memcmp(b.data(), magic, n) == 0; }
bool isElf(Bytes b) { return startsWith(b, ELFMAG, SELFMAG); }
bool isFatbin(Bytes b) {
    uint32_t m;
    return readAt(b, 0, &m) && m == fatbin::kMagic;
}

Status checkPtx(Bytes b) {
    if (b.empty()) return CUDA_ERROR_INVALID_PTX;
    const auto* p = reinterpret_cast<const char*>(b.data());
    const std::string_view text(p, strnlen(p, b.size()));
    if (!looksLikeText(text)) return CUDA_ERROR_INVALID_PTX;
    return kOk;
}

// One container: its entries, each decompressed (within bounds) and checked.
Status checkFatbinContainer(Bytes c) {
    NVL_ASSIGN_OR_RETURN(auto entries, fatbin::parse(c));
    for (const fatbin::Entry& e : entries) {
        NVL_ASSIGN_OR_RETURN(auto payload, fatbin::contents(e));
        if (e.kind == fatbin::Kind::Elf) NVL_TRY(cubin::validate(payload));
        else if (!checkPtx(payload).ok()) return CUDA_ERROR_INVALID_IMAGE;
    }
    return kOk;
}

// Containers one after another (an object's .nv_fatbin holds several with -rdc).
Status checkFatbins(Bytes b) {
    uint64_t off = 0, count = 0;
    while (off < b.size()) {
        if (++count > kMaxContainers) return CUDA_ERROR_INVALID_IMAGE;
        Bytes rest = b.subspan(off);
        uint32_t magic;
        uint16_t headerBytes;
        uint64_t bodyBytes, total;
        if (!readAt(rest, 0, &magic) || !readAt(rest, 6, &headerBytes) || !readAt(rest, 8, &bodyBytes))
            return CUDA_ERROR_INVALID_IMAGE;
        if (magic != fatbin::kMagic) {
            // Padding between containers is zeros.
            if (std::any_of(rest.begin(), rest.end(), [](uint8_t x) { return x != 0; })) return CUDA_ERROR_INVALID_IMAGE;
            return kOk;
        }
        if (!addOk(headerBytes, bodyBytes, &total) || total > rest.size()) return CUDA_ERROR_INVALID_IMAGE;
        NVL_TRY(checkFatbinContainer(rest.first(total)));
        off += alignUp(total, 8);
    }
    return kOk;
}

// A host object (nvcc -c): any machine; its .nv_fatbin sections must pass.
Status checkHostObject(Bytes b) {
    if (!isElf(b)) return CUDA_ERROR_INVALID_IMAGE;
    NVL_ASSIGN_OR_RETURN(auto elf, ElfFile::open(b));
    for (const ElfSection& s : elf->sections())
        if (s.name == ".nv_fatbin" || s.name == "__nv_relfatbin") NVL_TRY(checkFatbins(s.data));
    return kOk;
}

// An ar archive (nvcc -lib): the member headers fit, the ELF members pass.
Status checkLibrary(Bytes b) {
    if (!startsWith(b, kArMagic, kArMagicBytes)) return CUDA_ERROR_INVALID_IMAGE;
    uint64_t off = kArMagicBytes, count = 0;
    while (off < b.size()) {
        if (++count > kMaxContainers || !inBounds(off, kArHeaderBytes, b.size())) return CUDA_ERROR_INVALID_IMAGE;
        const uint8_t* h = b.data() + off;
        if (h[58] != '`' || h[59] != '\n') return CUDA_ERROR_INVALID_IMAGE;
        uint64_t size = 0;
        for (size_t i = 48; i < 58 && h[i] != ' '; ++i) {
            if (h[i] < '0' || h[i] > '9') return CUDA_ERROR_INVALID_IMAGE;
            size = size * 10 + (h[i] - '0');
        }
        off += kArHeaderBytes;
        if (!inBounds(off, size, b.size())) return CUDA_ERROR_INVALID_IMAGE;
        Bytes member = b.subspan(off, size);
        if (isElf(member)) NVL_TRY(checkHostObject(member));
        off += size + (size & 1);
    }
    return kOk;
}

bool binaryMagic(Bytes b) { return isElf(b) || isFatbin(b) || startsWith(b, kArMagic, kArMagicBytes); }

class InputFile {
public:
    explicit InputFile(const char* path) : fd_(::open(path, O_RDONLY | O_CLOEXEC)) {}
    ~InputFile() {
        if (fd_ >= 0) ::close(fd_);
    }
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;

    Result<std::vector<uint8_t>> readAll() {
        if (fd_ < 0) return CUDA_ERROR_FILE_NOT_FOUND;
        struct stat st;
        if (::fstat(fd_, &st) != 0 || S_ISDIR(st.st_mode)) return CUDA_ERROR_FILE_NOT_FOUND;
        const bool sized = S_ISREG(st.st_mode) && st.st_size > 0;
        if (sized && static_cast<uint64_t>(st.st_size) > kMaxFileBytes) return CUDA_ERROR_INVALID_IMAGE;
        const size_t limit = sized ? static_cast<size_t>(st.st_size) : kMaxStreamBytes;
        std::vector<uint8_t> bytes;
        if (sized) bytes.reserve(limit);
        size_t checked = 0;  // stream bytes already seen to be text
        while (bytes.size() < limit) {
            const size_t at = bytes.size();
            bytes.resize(at + std::min(kChunkBytes, limit - at));
            ssize_t n;
            do {
                n = ::read(fd_, bytes.data() + at, bytes.size() - at);
            } while (n < 0 && errno == EINTR);
            if (n < 0) return CUDA_ERROR_FILE_NOT_FOUND;
            bytes.resize(at + static_cast<size_t>(n));
            if (n == 0) return bytes;
            if (sized || bytes.size() < 8 || binaryMagic(Bytes(bytes.data(), bytes.size()))) continue;
            // A stream of text: PTX, which ends at its NUL (what follows is
            // not read) and has no other control characters.
            const uint8_t* fresh = bytes.data() + checked;
            const size_t freshBytes = bytes.size() - checked;
            checked = bytes.size();
            const auto* nul = static_cast<const uint8_t*>(std::memchr(fresh, 0, freshBytes));
            const size_t textBytes = nul ? static_cast<size_t>(nul - fresh) : freshBytes;
            if (textBytes && !looksLikeText(std::string_view(reinterpret_cast<const char*>(fresh), textBytes)))
                return CUDA_ERROR_INVALID_IMAGE;
            if (nul) return bytes;
        }
        if (sized) return bytes;
        return CUDA_ERROR_INVALID_IMAGE;  // a stream longer than any image we take
    }

private:
    int fd_;
};

}  // namespace

bool looksLikeText(std::string_view s) {
    if (s.empty()) return false;
    for (unsigned char c : s)
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') return false;
    return true;
}

Status checkLinkInput(int type, Bytes data) {
    switch (type) {
    case CU_JIT_INPUT_CUBIN: return cubin::validate(data);
    case CU_JIT_INPUT_PTX: return checkPtx(data);
    case CU_JIT_INPUT_FATBINARY: return isFatbin(data) ? checkFatbins(data) : CUDA_ERROR_INVALID_IMAGE;
    case CU_JIT_INPUT_OBJECT: return checkHostObject(data);
    case CU_JIT_INPUT_LIBRARY: return checkLibrary(data);
    case CU_JIT_INPUT_NVVM: return data.empty() ? CUDA_ERROR_INVALID_IMAGE : kOk;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

Result<std::vector<uint8_t>> readInputFile(const char* path) {
    if (!path) return CUDA_ERROR_INVALID_VALUE;
    InputFile f(path);
    return f.readAll();
}

}  // namespace nvl::loader
