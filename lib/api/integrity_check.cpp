// cudart's integrity check: HMAC-MD2 of the driver's facts (integrity_check.h),
// and the table it is served in.
#include "api/integrity_check.h"

#include <pthread.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "api/entry.h"
#include "api/entry_impls.h"
#include "api/private_tables.h"
#include "core/runtime.h"

namespace nvl::api::integrity {
namespace {

// RFC 1319's permutation of 0..255 made from the digits of pi.
constexpr uint8_t kPiSubst[256] = {
    41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,  //
    98,  167, 5,   243, 192, 199, 115, 140, 152, 147, 43,  217, 188, 76,  130, 202,  //
    30,  155, 87,  60,  253, 212, 224, 22,  103, 66,  111, 24,  138, 23,  229, 18,   //
    190, 78,  196, 214, 218, 158, 222, 73,  160, 251, 245, 142, 187, 47,  238, 122,  //
    169, 104, 121, 145, 21,  178, 7,   63,  148, 194, 16,  137, 11,  34,  95,  33,   //
    128, 127, 93,  154, 90,  144, 50,  39,  53,  62,  204, 231, 191, 247, 151, 3,    //
    255, 25,  48,  179, 72,  165, 181, 209, 215, 94,  146, 42,  172, 86,  170, 198,  //
    79,  184, 56,  210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4,   241,  //
    69,  157, 112, 89,  100, 113, 135, 32,  134, 91,  207, 101, 230, 45,  168, 2,    //
    27,  96,  37,  173, 174, 176, 185, 246, 28,  70,  97,  105, 52,  64,  126, 15,   //
    85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249, 206, 186, 197, 234, 38,   //
    44,  83,  13,  110, 133, 40,  132, 9,   211, 223, 205, 244, 65,  129, 77,  82,   //
    106, 220, 55,  200, 108, 193, 171, 250, 36,  225, 123, 8,   12,  189, 177, 74,   //
    120, 136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254, 59,  0,   29,  57,   //
    242, 239, 183, 14,  102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,   //
    49,  68,  80,  180, 143, 237, 31,  26,  219, 153, 141, 51,  159, 17,  131, 20,   //
};

// The key of the driver's HMAC.
constexpr uint8_t kKey[16] = {0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
                              0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f};

// What the driver answers to versions ending in 0 and 1 (older cudarts).
constexpr uint64_t kAnswerVersion0[2] = {0x3341181C03CB675Cull, 0x8ED383AA1F4CD1E8ull};
constexpr uint64_t kAnswerVersion1[2] = {0x1841181C03CB675Cull, 0x8ED383AA1F4CD1E8ull};

// The first part of the hashed message, in this layout (48 bytes, no padding).
struct HashedFacts {
    uint32_t driverVersion;
    uint32_t version;
    uint32_t process;
    uint32_t thread;
    const void* cudartTable;
    const void* integrityTable;
    const void* function;
    uint64_t unixSeconds;
};
static_assert(sizeof(HashedFacts) == 48);

static_assert(sizeof(DeviceFacts) == 28);

}  // namespace

void Md2::compress() {
    for (int j = 0; j < 16; ++j) {
        state_[16 + j] = block_[j];
        state_[32 + j] = static_cast<uint8_t>(block_[j] ^ state_[j]);
    }
    uint8_t t = 0;
    for (int round = 0; round < 18; ++round) {
        for (uint8_t& x : state_) t = x ^= kPiSubst[t];
        t = static_cast<uint8_t>(t + round);
    }
    for (int j = 0; j < 16; ++j) last_ = checksum_[j] ^= kPiSubst[block_[j] ^ last_];
}

void Md2::update(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < size; ++i) {
        block_[used_++] = p[i];
        if (used_ == 16) {
            compress();
            used_ = 0;
        }
    }
}

void Md2::finish(uint8_t digest[16]) {
    uint8_t pad[16];
    const uint8_t n = static_cast<uint8_t>(16 - used_);
    std::memset(pad, n, n);
    update(pad, n);
    uint8_t sum[16];
    std::memcpy(sum, checksum_, sizeof sum);
    update(sum, sizeof sum);
    std::memcpy(digest, state_, 16);
}

void hmacMd2(const uint8_t key[16], const Bytes* parts, size_t count, uint8_t mac[16]) {
    uint8_t pad[16], inner[16];
    Md2 in;
    for (int i = 0; i < 16; ++i) pad[i] = key[i] ^ 0x36;
    in.update(pad, sizeof pad);
    for (size_t i = 0; i < count; ++i) in.update(parts[i].data, parts[i].size);
    in.finish(inner);
    Md2 out;
    for (int i = 0; i < 16; ++i) pad[i] = key[i] ^ 0x5c;
    out.update(pad, sizeof pad);
    out.update(inner, sizeof inner);
    out.finish(mac);
}

void answer(const Inputs& in, const DeviceFacts* devices, size_t count, uint64_t out[2]) {
    if (in.version % 10 == 0 || in.version % 10 == 1) {
        const uint64_t* fixed = in.version % 10 == 0 ? kAnswerVersion0 : kAnswerVersion1;
        out[0] = fixed[0];
        out[1] = fixed[1];
        return;
    }
    HashedFacts facts{};
    facts.driverVersion = in.driverVersion;
    facts.version = in.version;
    facts.process = in.process;
    facts.thread = in.thread;
    facts.cudartTable = in.cudartTable;
    facts.integrityTable = in.integrityTable;
    facts.function = in.function;
    facts.unixSeconds = in.unixSeconds;

    // The message: the facts, then each device as the driver lays it out
    // (DeviceFacts has that layout).
    std::vector<Bytes> parts{{&facts, sizeof facts}};
    for (size_t d = 0; d < count; ++d) parts.push_back({&devices[d], sizeof devices[d]});
    uint8_t mac[16];
    hmacMd2(kKey, parts.data(), parts.size(), mac);
    std::memcpy(out, mac, sizeof mac);
}

}  // namespace nvl::api::integrity

// ---- The table: INTEGRITY_CHECK (d4082055-bde6-704b-8d34-ba123c66e1f2), 3 slots.

namespace nvl::api::tables {
namespace {

constexpr char kName[] = "INTEGRITY_CHECK";

Status facts(int ordinal, integrity::DeviceFacts& f) {
    CUuuid uuid;
    NVL_TRY(deviceGetUuid(&uuid, ordinal));
    std::memcpy(f.uuid, uuid.bytes, sizeof f.uuid);
    NVL_TRY(deviceGetAttribute(&f.pciDomain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, ordinal));
    NVL_TRY(deviceGetAttribute(&f.pciBus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, ordinal));
    NVL_TRY(deviceGetAttribute(&f.pciDevice, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, ordinal));
    return kOk;
}

// [1] check(version, seconds since 1970, two 64-bit words out).
CUresult check(unsigned version, unsigned long long unixSeconds, uint64_t* result) noexcept {
    return call(
        "INTEGRITY_CHECK[1] check",
        [&]() -> Status {
            NVL_TRY(core::Runtime::get().checkInit());
            if (!result) return CUDA_ERROR_INVALID_VALUE;
            int driverVersion = 0;
            NVL_TRY(driverGetVersion(&driverVersion));
            const int count = core::Runtime::get().deviceCount();
            std::vector<integrity::DeviceFacts> devices(static_cast<size_t>(count));
            for (int d = 0; d < count; ++d) NVL_TRY(facts(d, devices[static_cast<size_t>(d)]));
            integrity::Inputs in{};
            in.version = version;
            in.unixSeconds = unixSeconds;
            in.driverVersion = static_cast<uint32_t>(driverVersion);
            in.process = static_cast<uint32_t>(getpid());
            in.thread = static_cast<uint32_t>(pthread_self());
            in.cudartTable = cudartInterface();
            in.integrityTable = integrityCheck();
            in.function = integrityCheck()[1];
            integrity::answer(in, devices.data(), devices.size(), result);
            return kOk;
        },
        version, unixSeconds, result);
}

}  // namespace

const void* const* integrityCheck() {
    static const void* const table[] = {
        sizeSlot<3>(),
        reinterpret_cast<const void*>(&check),
        reinterpret_cast<const void*>(&unknown<kName, 2>),
    };
    static_assert(sizeof table == 3 * sizeof(void*));
    return table;
}

}  // namespace nvl::api::tables
