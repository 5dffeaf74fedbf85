// Units behind cudart's private tables: MD2 and HMAC-MD2 (the integrity
// check's hash, lib/api/integrity_check.h) and context-local storage
// (lib/core/context_storage.h). tests/api/test_private_tables.c calls the
// tables themselves.
#include <cstring>
#include <string>
#include <vector>

#include "api/integrity_check.h"
#include "core/context_storage.h"
#include "support/test_support.h"

using namespace nvl;
namespace integrity = nvl::api::integrity;

namespace {

std::string hex(const uint8_t* p, size_t n) {
    std::string s;
    char b[3];
    for (size_t i = 0; i < n; ++i) {
        std::snprintf(b, sizeof b, "%02x", p[i]);
        s += b;
    }
    return s;
}

std::string md2(const std::string& text, size_t chunk) {
    integrity::Md2 h;
    for (size_t i = 0; i < text.size(); i += chunk) h.update(text.data() + i, std::min(chunk, text.size() - i));
    uint8_t d[16];
    h.finish(d);
    return hex(d, sizeof d);
}

// RFC 1319's test suite, fed whole and in odd pieces.
void test_md2_rfc1319(void**) {
    const struct {
        const char* text;
        const char* digest;
    } suite[] = {
        {"", "8350e5a3e24c153df2275c9f80692773"},
        {"a", "32ec01ec4a6dac72c0ab96fb34c0b5d1"},
        {"abc", "da853b0d3f88d99b30283a69e6ded6bb"},
        {"message digest", "ab4f496bfb2a530b219ff33031fe06b0"},
        {"abcdefghijklmnopqrstuvwxyz", "4e8ddff3650292ab5a4108c3aa47940b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "da33def2a42df13975352846c30338cd"},
        {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "d5976f79d83d3a0dc9806c3c66f3efd8"},
    };
    for (const auto& v : suite) {
        for (size_t chunk : {size_t{1000}, size_t{1}, size_t{7}, size_t{16}}) {
            const std::string got = md2(v.text, chunk);
            if (got != v.digest) fail_msg("MD2(\"%s\") in pieces of %zu = %s, expected %s", v.text, chunk, got.c_str(), v.digest);
        }
    }
}

// HMAC (RFC 2104) with a one-block key: MD2((K^opad) || MD2((K^ipad) || m)),
// whatever the message is split into.
void test_hmac_md2_construction(void**) {
    uint8_t key[16], msg[77];
    ts_fill_random(key, sizeof key, 1331);
    ts_fill_random(msg, sizeof msg, 1332);
    uint8_t pad[16], inner[16], expected[16];
    integrity::Md2 in;
    for (int i = 0; i < 16; ++i) pad[i] = key[i] ^ 0x36;
    in.update(pad, 16);
    in.update(msg, sizeof msg);
    in.finish(inner);
    integrity::Md2 out;
    for (int i = 0; i < 16; ++i) pad[i] = key[i] ^ 0x5c;
    out.update(pad, 16);
    out.update(inner, 16);
    out.finish(expected);

    uint8_t mac[16];
    const integrity::Bytes whole[] = {{msg, sizeof msg}};
    integrity::hmacMd2(key, whole, 1, mac);
    assert_memory_equal(mac, expected, 16);
    const integrity::Bytes parts[] = {{msg, 5}, {msg + 5, 0}, {msg + 5, 40}, {msg + 45, 32}};
    integrity::hmacMd2(key, parts, 4, mac);
    assert_memory_equal(mac, expected, 16);
    key[3] ^= 1;
    integrity::hmacMd2(key, whole, 1, mac);
    assert_memory_not_equal(mac, expected, 16);
}

// The integrity check's answer for one set of inputs: the inputs of ZLUDA's
// dark_api tests (cudart 12.8 asking a 12.8 driver, one GPU), the answer
// computed by the driver's algorithm as ZLUDA describes it pass by pass.
void test_integrity_answer(void**) {
    integrity::Inputs in{};
    in.version = 12082;
    in.unixSeconds = 0x682b9cee;
    in.driverVersion = 0x2f30;
    in.process = 0x002fa423;
    in.thread = 0xf79c1000;
    in.cudartTable = reinterpret_cast<const void*>(uintptr_t{0x00007ffff6958240});
    in.integrityTable = reinterpret_cast<const void*>(uintptr_t{0x00007ffff6958220});
    in.function = reinterpret_cast<const void*>(uintptr_t{0x00007ffff2aaf4a0});
    integrity::DeviceFacts gpu{};
    const uint32_t uuid[4] = {0x8a2bfe9a, 0x382d25ac, 0xc5ae37ea, 0x5f32716d};
    std::memcpy(gpu.uuid, uuid, sizeof gpu.uuid);
    gpu.pciDomain = 0;
    gpu.pciBus = 2;
    gpu.pciDevice = 0;
    uint64_t out[2];
    integrity::answer(in, &gpu, 1, out);
    assert_string_equal(hex(reinterpret_cast<const uint8_t*>(out), 16).c_str(), "4448a171b026cef76c8c3e39051b02dd");

    // Every input counts: a second GPU, another bus, another thread.
    uint64_t other[2];
    integrity::DeviceFacts two[2] = {gpu, gpu};
    integrity::answer(in, two, 2, other);
    assert_memory_not_equal(out, other, sizeof out);
    integrity::DeviceFacts moved = gpu;
    moved.pciBus = 3;
    integrity::answer(in, &moved, 1, other);
    assert_memory_not_equal(out, other, sizeof out);
    in.thread ^= 0x100;
    integrity::answer(in, &gpu, 1, other);
    assert_memory_not_equal(out, other, sizeof out);

    // Versions ending in 0 and 1: fixed answers, whatever else.
    in.version = 13000;
    integrity::answer(in, &gpu, 1, out);
    assert_true(out[0] == 0x3341181C03CB675Cull && out[1] == 0x8ED383AA1F4CD1E8ull);
    in.version = 12091;
    integrity::answer(in, nullptr, 0, out);
    assert_true(out[0] == 0x1841181C03CB675Cull && out[1] == 0x8ED383AA1F4CD1E8ull);
}

// ---- context-local storage

struct Call {
    CUcontext ctx;
    void* key;
    void* value;
};
std::vector<Call> calls;
core::ContextStorage* reentered = nullptr;

void recordCall(CUcontext ctx, void* key, void* value) {
    calls.push_back({ctx, key, value});
    // A destructor may use the storage again (the driver's lock is not held).
    if (reentered) reentered->put(key, value, nullptr);
}

void test_storage(void**) {
    core::ContextStorage s;
    int k1, k2, k3, v1, v2, v3;
    assert_int_equal(s.get(&k1).status().code(), CUDA_ERROR_INVALID_HANDLE);
    s.put(&k1, &v1, recordCall);
    s.put(&k2, &v2, nullptr);
    s.put(&k3, &v3, recordCall);
    assert_ptr_equal(*s.get(&k2), &v2);
    s.put(&k1, &v3, recordCall);  // replaced, keeps its place
    assert_ptr_equal(*s.get(&k1), &v3);
    assert_true(s.erase(&k2).ok());
    assert_int_equal(s.erase(&k2).code(), CUDA_ERROR_INVALID_HANDLE);

    calls.clear();
    auto* ctx = reinterpret_cast<CUcontext>(&calls);
    reentered = &s;
    s.destroyAll(ctx);
    reentered = nullptr;
    assert_int_equal(calls.size(), 2);  // in the order put, only those with a destructor
    assert_ptr_equal(calls[0].ctx, ctx);
    assert_ptr_equal(calls[0].key, &k1);
    assert_ptr_equal(calls[0].value, &v3);
    assert_ptr_equal(calls[1].key, &k3);
    assert_ptr_equal(calls[1].value, &v3);
    // What the destructors put back stays; it has no destructor.
    assert_ptr_equal(*s.get(&k1), &v3);
    calls.clear();
    s.destroyAll(ctx);
    assert_int_equal(calls.size(), 0);
    assert_int_equal(s.get(&k1).status().code(), CUDA_ERROR_INVALID_HANDLE);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_md2_rfc1319),
        cmocka_unit_test(test_hmac_md2_construction),
        cmocka_unit_test(test_integrity_answer),
        cmocka_unit_test(test_storage),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
