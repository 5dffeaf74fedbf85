// Corrupt images: truncated, with bad offsets, bad relocation types and
// random bit flips. The loader must answer with an error or a valid image,
// never crash or read outside the input (run under SAN=-fsanitize=address
// to check the latter). Uses the prebuilt cubin, so it runs without a toolkit.
#include <elf.h>

#include <random>
#include <string>
#include <vector>

#include "loader/image.h"
#include "test_loader_support.h"

using namespace nvl;
using namespace nvl::loader;
using namespace loadertest;

namespace {

const std::vector<uint8_t>& cubin() { return prebuiltCubin(); }

// Loads and, when that works, checks the image is self-consistent and relocates.
CUresult tryLoad(const std::vector<uint8_t>& bytes) {
    JitOptions jit;
    Result<Image> r = load(bytes.data(), bytes.size(), 9, 0, jit);
    if (!r.ok()) {
        CUresult c = r.status().code();
        // A corrupt image is an image problem, never a crash or a bogus code.
        assert_true(c == CUDA_ERROR_INVALID_IMAGE || c == CUDA_ERROR_NO_BINARY_FOR_GPU ||
                    c == CUDA_ERROR_INVALID_PTX || c == CUDA_ERROR_JIT_COMPILER_NOT_FOUND ||
                    c == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || c == CUDA_ERROR_INVALID_VALUE);
        return c;
    }
    Image& im = *r;
    for (const Kernel& k : im.kernels) {
        assert_true(k.textOffset + k.textSize <= im.bytes.size());
        assert_true(k.constBank0ImageOffset + k.constBank0Bytes <= im.bytes.size());
        for (const ConstantBank& b : k.banks) assert_true(b.imageOffset + b.size <= im.bytes.size());
        for (const KernelParam& p : k.params) assert_true(p.offset + p.size <= k.paramBytes);
    }
    for (const Global& g : im.globals) assert_true(g.imageOffset + g.size <= im.allocationBytes());
    Status s = relocate(im, 0x7f0000000000ull);
    assert_true(s.ok() || s.code() == CUDA_ERROR_INVALID_IMAGE);
    return CUDA_SUCCESS;
}

void test_valid_baseline(void**) {
    assert_int_equal(tryLoad(cubin()), CUDA_SUCCESS);
}

void test_truncated(void**) {
    const auto& c = cubin();
    size_t ok = 0;
    for (size_t len = 0; len < c.size(); len += (len < 4096 ? 1 : 61)) {
        std::vector<uint8_t> t(c.begin(), c.begin() + len);
        if (len == 0) t.push_back(0);  // load() refuses size 0 as INVALID_VALUE
        if (tryLoad(t) == CUDA_SUCCESS) ++ok;
    }
    // The section header table is at the end: every strict prefix is refused.
    assert_int_equal(ok, 0);
}

// Every section header field, one at a time, set to values that point
// outside the file or overflow.
void test_bad_section_headers(void**) {
    const auto& c = cubin();
    Elf64_Ehdr eh;
    memcpy(&eh, c.data(), sizeof eh);
    const uint64_t evil[] = {0, 1, 0x7fffffff, c.size(), c.size() - 1, 0xffffffffffffffffull, 0x8000000000000000ull};
    const size_t fields[] = {offsetof(Elf64_Shdr, sh_name), offsetof(Elf64_Shdr, sh_type),
                             offsetof(Elf64_Shdr, sh_offset), offsetof(Elf64_Shdr, sh_size),
                             offsetof(Elf64_Shdr, sh_addralign), offsetof(Elf64_Shdr, sh_link),
                             offsetof(Elf64_Shdr, sh_info), offsetof(Elf64_Shdr, sh_entsize),
                             offsetof(Elf64_Shdr, sh_addr)};
    for (unsigned i = 0; i < eh.e_shnum; ++i) {
        for (size_t f : fields) {
            for (uint64_t v : evil) {
                std::vector<uint8_t> t = c;
                size_t at = eh.e_shoff + i * sizeof(Elf64_Shdr) + f;
                size_t width = (f == offsetof(Elf64_Shdr, sh_name) || f == offsetof(Elf64_Shdr, sh_type) ||
                                f == offsetof(Elf64_Shdr, sh_link) || f == offsetof(Elf64_Shdr, sh_info))
                                   ? 4
                                   : 8;
                memcpy(t.data() + at, &v, width);
                tryLoad(t);
            }
        }
    }
    // The ELF header itself.
    const size_t headerFields[] = {offsetof(Elf64_Ehdr, e_shoff), offsetof(Elf64_Ehdr, e_phoff)};
    for (size_t f : headerFields)
        for (uint64_t v : evil) {
            std::vector<uint8_t> t = c;
            memcpy(t.data() + f, &v, 8);
            tryLoad(t);
        }
    auto refused = [&](size_t field, uint16_t v) {
        std::vector<uint8_t> t = c;
        memcpy(t.data() + field, &v, 2);
        assert_int_not_equal(tryLoad(t), CUDA_SUCCESS);
    };
    for (uint16_t v : {uint16_t{0}, uint16_t{1}, uint16_t{0xffff}}) {
        refused(offsetof(Elf64_Ehdr, e_shnum), v);
        refused(offsetof(Elf64_Ehdr, e_shentsize), v);
    }
    // Section name strings from a section that is not a string table.
    for (uint16_t v : {uint16_t{0}, uint16_t{0xffff}, static_cast<uint16_t>(eh.e_shnum - 1)})
        refused(offsetof(Elf64_Ehdr, e_shstrndx), v);
}

// A relocation type the loader does not know is refused, not skipped.
void test_bad_relocation_type(void**) {
    const auto& c = cubin();
    Elf64_Ehdr eh;
    memcpy(&eh, c.data(), sizeof eh);
    int patched = 0;
    for (unsigned i = 0; i < eh.e_shnum; ++i) {
        Elf64_Shdr sh;
        memcpy(&sh, c.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_RELA || sh.sh_size == 0 || sh.sh_info == 4 /* .debug_frame: not loaded */) continue;
        Elf64_Shdr target;
        memcpy(&target, c.data() + eh.e_shoff + sh.sh_info * sizeof target, sizeof target);
        if (!(target.sh_flags & SHF_ALLOC)) continue;
        for (uint32_t type : {0x3au /* R_CUDA_ABS47_34 */, 0x06u /* TEX_HEADER_INDEX */, 0x99u, 0xffffffffu}) {
            std::vector<uint8_t> t = c;
            Elf64_Rela r;
            memcpy(&r, t.data() + sh.sh_offset, sizeof r);
            r.r_info = ELF64_R_INFO(ELF64_R_SYM(r.r_info), type);
            memcpy(t.data() + sh.sh_offset, &r, sizeof r);
            assert_int_equal(tryLoad(t), CUDA_ERROR_INVALID_IMAGE);
        }
        // An offset past the section and a symbol index past the table.
        std::vector<uint8_t> t = c;
        Elf64_Rela r;
        memcpy(&r, t.data() + sh.sh_offset, sizeof r);
        r.r_offset = target.sh_size - 4;
        memcpy(t.data() + sh.sh_offset, &r, sizeof r);
        assert_int_equal(tryLoad(t), CUDA_ERROR_INVALID_IMAGE);
        t = c;
        r.r_info = ELF64_R_INFO(100000, ELF64_R_TYPE(r.r_info));
        r.r_offset = 0;
        memcpy(t.data() + sh.sh_offset, &r, sizeof r);
        assert_int_equal(tryLoad(t), CUDA_ERROR_INVALID_IMAGE);
        ++patched;
    }
    assert_true(patched >= 2);  // .rela.nv.constant4 and .rela.nv.global.init
}

// Random bit flips anywhere, then concentrated on the metadata.
void test_random_bit_flips(void**) {
    const auto& c = cubin();
    Elf64_Ehdr eh;
    memcpy(&eh, c.data(), sizeof eh);
    // Metadata ranges: ELF header, section headers, .nv.info*, .symtab, .rela*.
    std::vector<std::pair<size_t, size_t>> hot = {{0, sizeof eh}, {eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr)}};
    for (unsigned i = 0; i < eh.e_shnum; ++i) {
        Elf64_Shdr sh;
        memcpy(&sh, c.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
        if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_RELA || sh.sh_type == 0x70000000 || sh.sh_type == SHT_NOTE)
            if (sh.sh_size) hot.push_back({sh.sh_offset, sh.sh_size});
    }
    // LOADER_FUZZ_ITERATIONS=N runs longer (e.g. under SAN=-fsanitize=address),
    // LOADER_FUZZ_SEED=S with other data; a run that fails names its seed.
    const char* iterationsEnv = getenv("LOADER_FUZZ_ITERATIONS");
    const char* seedEnv = getenv("LOADER_FUZZ_SEED");
    const int iterations = iterationsEnv ? atoi(iterationsEnv) : 4000;
    const uint64_t seed = seedEnv ? strtoull(seedEnv, nullptr, 0) : 12345;
    if (seedEnv) print_message("bit flips: seed %llu\n", static_cast<unsigned long long>(seed));
    std::mt19937_64 rng(seed);
    int loaded = 0, refused = 0;
    for (int iter = 0; iter < iterations; ++iter) {
        std::vector<uint8_t> t = c;
        int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f) {
            size_t at;
            if (iter % 4 == 0) {
                at = rng() % t.size();
            } else {
                const auto& [off, len] = hot[rng() % hot.size()];
                at = off + rng() % len;
            }
            t[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
        }
        if (tryLoad(t) == CUDA_SUCCESS) ++loaded;
        else ++refused;
    }
    print_message("bit flips: %d loaded, %d refused\n", loaded, refused);
    assert_true(refused > 0 && loaded > 0);
}

// Fatbin containers: truncated and flipped headers around a good cubin.
void test_corrupt_fatbins(void**) {
    // An sm_80 entry (not for this GPU) before the sm_90 one.
    std::vector<uint8_t> fat = makeFatbin({{2, 80, 0x11, cubin()}, {2, 90, 0x11, cubin()}});
    assert_int_equal(tryLoad(fat), CUDA_SUCCESS);
    for (size_t len = 1; len < 0x200; ++len) {
        std::vector<uint8_t> t(fat.begin(), fat.begin() + len);
        assert_int_not_equal(tryLoad(t), CUDA_SUCCESS);
    }
    std::mt19937_64 rng(777);
    for (int iter = 0; iter < 1500; ++iter) {
        std::vector<uint8_t> t = fat;
        // Headers: the container's and the two entries'.
        const size_t second = 16 + 0x40 + (cubin().size() + 7) / 8 * 8;
        size_t at = (iter % 2) ? rng() % (16 + 0x40) : second + rng() % 0x40;
        t[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
        tryLoad(t);
    }
    // Compressed entries with garbage payloads or absurd sizes.
    std::vector<uint8_t> junk(64, 0x5a);
    assert_int_equal(tryLoad(makeFatbin({{2, 90, 0x8011, junk, 1000}})), CUDA_ERROR_INVALID_IMAGE);      // zstd
    assert_int_equal(tryLoad(makeFatbin({{2, 90, 0x2011, junk, 1000}})), CUDA_ERROR_INVALID_IMAGE);      // LZ4
    assert_int_equal(tryLoad(makeFatbin({{2, 90, 0x8011, junk, 1ull << 40}})), CUDA_ERROR_INVALID_IMAGE);
    // A __fatBinC_Wrapper_t given with a size too small to hold it.
    uint8_t wrapper[8] = {0xb1, 0x43, 0x62, 0x46, 1, 0, 0, 0};
    JitOptions jit;
    assert_int_equal(load(wrapper, sizeof wrapper, 9, 0, jit).status().code(), CUDA_ERROR_INVALID_IMAGE);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_baseline),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_bad_section_headers),
        cmocka_unit_test(test_bad_relocation_type),
        cmocka_unit_test(test_random_bit_flips),
        cmocka_unit_test(test_corrupt_fatbins),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
