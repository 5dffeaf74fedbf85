// The host side of device printf (lib/core/printf_fifo.cpp), on records
// written by hand the way the device runtime writes them (layout in
// lib/core/devrt_abi.h): formatting against the C library's own printf,
// assert messages, truncated and hostile records, and the ring walk
// (wrapping, incomplete and stale records, corrupt headers, many laps).
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/devrt_abi.h"
#include "core/printf_fifo.h"
#include "devrt_records.h"

// cmocka last: it declares its functions without extern "C".
#include <setjmp.h>
#include <stdarg.h>
extern "C" {
#include <cmocka.h>
}

using namespace nvl;
namespace fifo = nvl::core::fifo;

namespace {

// ------------------------------------------------------------------ records

using devrttest::Items;
using devrttest::text;

std::string format(uint32_t kind, const Items& items, bool* ok = nullptr) {
    fifo::StringOutput out;
    const bool r = fifo::formatRecord(kind, items.bytes, out);
    if (ok) *ok = r;
    return out.text();
}

template <class T>
std::string cFormat(const char* spec, T value) {
    char buf[1024];
    int n = snprintf(buf, sizeof buf, spec, value);
    assert_true(n >= 0 && static_cast<size_t>(n) < sizeof buf);
    return std::string(buf, static_cast<size_t>(n));
}

// ------------------------------------------------------------------ formatting

void test_plain_text_and_percent(void**) {
    Items it;
    it.string("no conversions, 100%% sure\n");
    bool ok;
    assert_string_equal(format(devrt::kRecordPrintf, it, &ok).c_str(), "no conversions, 100% sure\n");
    assert_true(ok);
}

// One conversion of every kind, with random flags, widths, precisions and
// length modifiers, against snprintf with the same specification and a value
// of the type C would pass (fixed seed).
void test_conversions_match_c_printf(void**) {
    std::mt19937_64 rng(0x5eed1234);
    const char convs[] = "diuoxXcfFeEgGaAsp";
    for (int iter = 0; iter < 4000; ++iter) {
        const char conv = convs[rng() % (sizeof convs - 1)];
        const bool isInt = strchr("diuoxX", conv) != nullptr, isDouble = strchr("fFeEgGaA", conv) != nullptr;
        std::string spec = "%";
        const char* flagSet = isInt || isDouble ? "-+ #0" : "-";
        for (int f = rng() % 3; f > 0; --f) {
            const char flag = flagSet[rng() % strlen(flagSet)];
            if (flag == '#' && (conv == 'd' || conv == 'i' || conv == 'u')) continue;  // undefined in C
            spec += flag;
        }
        const bool starWidth = rng() % 5 == 0;
        int width = static_cast<int>(rng() % 40) - (starWidth ? 20 : 0);
        if (starWidth) spec += '*';
        else if (rng() % 2) spec += std::to_string(width = std::abs(width));
        const bool withPrecision = conv != 'c' && conv != 'p' && rng() % 2;
        const bool starPrecision = withPrecision && rng() % 4 == 0;
        int precision = static_cast<int>(rng() % 30) - (starPrecision ? 5 : 0);
        if (withPrecision) spec += starPrecision ? ".*" : "." + std::to_string(precision = std::abs(precision));
        int lengthBits = 32;
        if (isInt) {
            const char* lengths[] = {"", "hh", "h", "l", "ll", "z", "j"};
            const int pick = static_cast<int>(rng() % 7);
            spec += lengths[pick];
            lengthBits = pick == 1 ? 8 : pick == 2 ? 16 : pick >= 3 ? 64 : 32;
        }
        spec += conv;
        const std::string text = "<" + std::to_string(iter) + ">" + spec + "|";

        Items it;
        it.string(text);
        if (starWidth) it.number(static_cast<int32_t>(width));
        if (starPrecision) it.number(static_cast<int32_t>(precision));
        std::string expected;
        const uint64_t raw = rng();
        char buf[1024];
        int n = 0;
        // The value as the device stores it, and as C receives it.
        auto call = [&](auto v) {
            if (starWidth && starPrecision) n = snprintf(buf, sizeof buf, text.c_str(), width, precision, v);
            else if (starWidth) n = snprintf(buf, sizeof buf, text.c_str(), width, v);
            else if (starPrecision) n = snprintf(buf, sizeof buf, text.c_str(), precision, v);
            else n = snprintf(buf, sizeof buf, text.c_str(), v);
        };
        if (conv == 'd' || conv == 'i') {
            if (lengthBits == 64) {
                it.number(raw);
                call(static_cast<long long>(raw));
            } else {
                it.number(static_cast<int32_t>(raw));  // sign-extended, as read from 4 bytes
                call(static_cast<int>(static_cast<int32_t>(raw)));
            }
        } else if (isInt) {
            if (lengthBits == 64) {
                it.number(raw);
                call(static_cast<unsigned long long>(raw));
            } else {
                it.number(static_cast<uint64_t>(static_cast<uint32_t>(raw)));
                call(static_cast<unsigned>(raw));
            }
        } else if (conv == 'c') {
            const uint32_t c = 0x20 + static_cast<uint32_t>(raw % 95);
            it.number(static_cast<uint64_t>(c));
            call(static_cast<int>(c));
        } else if (isDouble) {
            double d;
            switch (raw % 4) {
            case 0: d = static_cast<double>(static_cast<int64_t>(raw)) / 1e6; break;
            case 1: d = static_cast<double>(raw % 1000) / 7.0; break;
            case 2: d = -1.0 / static_cast<double>((raw % 100) + 1); break;
            default: d = static_cast<double>(raw) * 1e200; break;
            }
            it.number(d);
            call(d);
        } else if (conv == 's') {
            std::string s;
            for (size_t i = 0, len = raw % 23; i < len; ++i) s += static_cast<char>('a' + (raw >> i) % 26);
            it.string(s);
            call(s.c_str());
        } else {  // p
            it.number(raw);
            call(reinterpret_cast<void*>(static_cast<uintptr_t>(raw)));
        }
        assert_true(n >= 0 && static_cast<size_t>(n) < sizeof buf);
        expected.assign(buf, static_cast<size_t>(n));
        bool ok;
        const std::string got = format(devrt::kRecordPrintf, it, &ok);
        if (got != expected) fail_msg("format '%s': got '%s', C printf gives '%s'", text.c_str(), got.c_str(), expected.c_str());
        assert_true(ok);
    }
}

// The conversions the issue names, in one format, as a kernel would print them.
void test_mixed_format(void**) {
    Items it;
    it.string("%d %i %u %x %X %o %c %s %f %e %g %p %ld %lld %llu %% %5.2f|%-6d|%06x|%.3s|%+d\n");
    it.number(int32_t{-42});
    it.number(int32_t{7});
    it.number(uint64_t{4000000000u});
    it.number(uint64_t{0xbeef});
    it.number(uint64_t{0xcafe});
    it.number(uint64_t{8});
    it.number(uint64_t{'Z'});
    it.string("str");
    it.number(1.5);
    it.number(12345.678);
    it.number(0.0001);
    it.number(uint64_t{0x7f0000001234});
    it.number(static_cast<uint64_t>(-5));
    it.number(uint64_t{1} << 40);
    it.number(~uint64_t{0});
    it.number(3.14159);
    it.number(int32_t{12});
    it.number(uint64_t{0xab});
    it.string("abcdef");
    it.number(int32_t{9});
    const std::string expected =
        cFormat("%d", -42) + " 7 4000000000 beef CAFE 10 Z str 1.500000 1.234568e+04 0.0001 " +
        cFormat("%p", reinterpret_cast<void*>(0x7f0000001234)) + " -5 1099511627776 18446744073709551615 %  3.14|12    |0000ab|abc|+9\n";
    bool ok;
    assert_string_equal(format(devrt::kRecordPrintf, it, &ok).c_str(), expected.c_str());
    assert_true(ok);
}

void test_length_modifiers_narrow_values(void**) {
    Items it;
    it.string("%hhd %hd %hhu %hu %hhx %lx");
    it.number(int32_t{0x1ff});       // char: -1
    it.number(int32_t{0x18000});     // short: -32768
    it.number(uint64_t{0x1ff});      // 255
    it.number(uint64_t{0x12345});    // 9029
    it.number(uint64_t{0xabc});      // bc
    it.number(uint64_t{0x123456789});
    assert_string_equal(format(devrt::kRecordPrintf, it).c_str(), "-1 -32768 255 9029 bc 123456789");
}

void test_null_string_and_pointer(void**) {
    Items it;
    it.string("[%s] [%p] [%n] [%10s]");
    it.string("(null)");  // what the device writes for a NULL %s
    it.number(uint64_t{0});
    it.number(uint64_t{0xdead});  // %n: consumed, prints nothing
    it.string("x");
    const std::string expected = "[(null)] [" + cFormat("%p", static_cast<void*>(nullptr)) + "] [] [         x]";
    assert_string_equal(format(devrt::kRecordPrintf, it).c_str(), expected.c_str());
}

// Not conversions, unfinished ones, huge widths: printed as C does or capped,
// never trusted.
void test_bad_formats(void**) {
    {
        Items it;
        it.string("a %y b %5k c %");
        assert_string_equal(format(devrt::kRecordPrintf, it).c_str(), "a %y b %5k c %");
    }
    {
        Items it;
        it.string("tail %-08.3l");
        assert_string_equal(format(devrt::kRecordPrintf, it).c_str(), "tail %-08.3l");
    }
    {
        Items it;  // a '*' width consumed, then no conversion
        it.string("%*y!");
        it.number(int32_t{5});
        assert_string_equal(format(devrt::kRecordPrintf, it).c_str(), "%*y!");
    }
    {
        Items it;  // widths and precisions beyond kMaxWidth are cut to it
        it.string("%99999999999999999999d|%.99999999999s|%*d");
        it.number(int32_t{1});
        it.string("abc");
        it.number(int32_t{0x7fffffff});
        it.number(int32_t{2});
        const std::string got = format(devrt::kRecordPrintf, it);
        assert_int_equal(got.size(), fifo::kMaxWidth + 1 + 3 + 1 + fifo::kMaxWidth);
        assert_true(got.find("1|abc|") == fifo::kMaxWidth - 1);
    }
    {
        Items it;  // a NUL in the format ends it, as in C
        it.string(std::string_view("before\0after %d", 15));
        it.number(int32_t{3});
        assert_string_equal(format(devrt::kRecordPrintf, it).c_str(), "before");
    }
    {
        Items it;  // negative '*' precision: as if none
        it.string("%.*f");
        it.number(int32_t{-3});
        it.number(2.5);
        assert_string_equal(format(devrt::kRecordPrintf, it).c_str(), "2.500000");
    }
}

void test_assert_message(void**) {
    Items it;
    for (uint64_t v : {38ull, 1ull, 2ull, 3ull, 28ull, 0ull, 5ull}) it.number(static_cast<uint64_t>(v));
    it.string("simpleAssert.cu");
    it.string("void testKernel(int)");
    it.string("gtid < N");
    bool ok;
    assert_string_equal(format(devrt::kRecordAssert, it, &ok).c_str(),
                        "simpleAssert.cu:38: void testKernel(int): block: [1,2,3], thread: [28,0,5] Assertion "
                        "`gtid < N` failed.\n");
    assert_true(ok);
}

void test_unknown_kind_is_refused(void**) {
    Items it;
    it.string("text");
    bool ok = true;
    assert_string_equal(format(7, it, &ok).c_str(), "");
    assert_false(ok);
}

// A record cut anywhere formats a prefix of the full text and says so.
void test_truncated_records(void**) {
    Items it;
    it.string("v=%d s=%s f=%.2f %c%c\n");
    it.number(int32_t{-7});
    it.string("a string of 27 characters..");
    it.number(2.25);
    it.number(uint64_t{'o'});
    it.number(uint64_t{'k'});
    bool ok;
    const std::string full = format(devrt::kRecordPrintf, it, &ok);
    assert_true(ok);
    assert_string_equal(full.c_str(), "v=-7 s=a string of 27 characters.. f=2.25 ok\n");
    for (size_t cut = 0; cut < it.bytes.size(); ++cut) {
        fifo::StringOutput out;
        const bool r = fifo::formatRecord(devrt::kRecordPrintf, std::span(it.bytes.data(), cut), out);
        if (r) assert_string_equal(out.text().c_str(), full.c_str());  // only padding was cut
        else if (full.compare(0, out.text().size(), out.text()) != 0)
            fail_msg("cut at %zu: '%s' is not a prefix of the full text", cut, out.text().c_str());
    }
    // Every item present but the string's length beyond the record.
    Items bad;
    bad.string("%s");
    bad.number(uint64_t{1} << 62);
    fifo::StringOutput sink;
    assert_false(fifo::formatRecord(devrt::kRecordPrintf, bad.bytes, sink));
}

// Random bytes as records: no crash, bounded text (fixed seed).
void test_random_records(void**) {
    std::mt19937_64 rng(77);
    for (int iter = 0; iter < 3000; ++iter) {
        std::vector<uint8_t> payload(rng() % 300);
        for (auto& b : payload) b = static_cast<uint8_t>(rng());
        if (iter % 2 && payload.size() >= 8) {
            // A plausible string length first, the rest random: reaches the format walk.
            const uint64_t n = rng() % (payload.size() - 7);
            memcpy(payload.data(), &n, 8);
            for (size_t i = 8; i < 8 + n; ++i)
                if (rng() % 3 == 0) payload[i] = '%';
        }
        fifo::StringOutput out;
        (void)fifo::formatRecord(static_cast<uint32_t>(1 + rng() % 2), payload, out);
        assert_true(out.text().size() <= payload.size() * (fifo::kMaxWidth + 1100));
    }
}

// ------------------------------------------------------------------ the ring

// A ring as the device fills it: records at increasing positions.
struct Ring {
    std::vector<uint8_t> memory;
    uint64_t head = 0;
    explicit Ring(size_t bytes) : memory(bytes, 0) {}
    fifo::Ring view() { return {memory.data(), memory.size()}; }
    // Writes a record (header + items); 'publish' false leaves word 0 unset.
    uint64_t put(uint32_t kind, const Items& items, bool publish = true) {
        const uint64_t bytes = devrt::kRecordHeaderBytes + items.bytes.size();
        std::vector<uint8_t> rec(bytes, 0);
        const uint64_t w0 = head + 1, w1 = bytes | (static_cast<uint64_t>(kind) << 32);
        memcpy(rec.data() + 8, &w1, 8);
        memcpy(rec.data() + 16, items.bytes.data(), items.bytes.size());
        if (publish) memcpy(rec.data(), &w0, 8);
        const uint64_t at = head;
        for (uint64_t i = 0; i < bytes; ++i) memory[(head + i) % memory.size()] = rec[i];
        head += bytes;
        return at;
    }
    void publish(uint64_t at) {
        const uint64_t w0 = at + 1;
        memcpy(memory.data() + at % memory.size(), &w0, 8);
    }
    bool allZero() const { return std::all_of(memory.begin(), memory.end(), [](uint8_t b) { return b == 0; }); }
};

void test_drain_in_order_and_wrapping(void**) {
    Ring ring(256);
    uint64_t tail = 0;
    ring.head = tail = 200;  // the next records wrap past the end
    ring.put(devrt::kRecordPrintf, text("first line\n"));
    ring.put(devrt::kRecordPrintf, text("second, a longer line that wraps\n"));
    Items a;
    for (uint64_t v : {7ull, 0ull, 0ull, 0ull, 1ull, 0ull, 0ull}) a.number(static_cast<uint64_t>(v));
    a.string("k.cu");
    a.string("void k()");
    a.string("x");
    ring.put(devrt::kRecordAssert, a);
    fifo::StringOutput out;
    const fifo::DrainResult r = fifo::drain(ring.view(), &tail, out);
    assert_int_equal(r.records, 3);
    assert_true(r.asserted);
    assert_false(r.stuck);
    assert_false(r.malformed);
    assert_int_equal(tail, ring.head);
    assert_string_equal(out.text().c_str(),
                        "first line\nsecond, a longer line that wraps\n"
                        "k.cu:7: void k(): block: [0,0,0], thread: [1,0,0] Assertion `x` failed.\n");
    assert_true(ring.allZero());  // consumed space is zeroed for the next lap
}

void test_drain_stops_at_incomplete_record(void**) {
    Ring ring(512);
    uint64_t tail = 0;
    ring.put(devrt::kRecordPrintf, text("one\n"));
    const uint64_t second = ring.put(devrt::kRecordPrintf, text("two\n"), false);
    ring.put(devrt::kRecordPrintf, text("three\n"));
    fifo::StringOutput out;
    fifo::DrainResult r = fifo::drain(ring.view(), &tail, out);
    assert_int_equal(r.records, 1);
    assert_int_equal(tail, second);
    assert_string_equal(out.text().c_str(), "one\n");
    ring.publish(second);
    r = fifo::drain(ring.view(), &tail, out);
    assert_int_equal(r.records, 2);
    assert_int_equal(tail, ring.head);
    assert_string_equal(out.text().c_str(), "one\ntwo\nthree\n");
}

void test_drain_ignores_stale_and_refuses_corrupt_headers(void**) {
    Ring ring(256);
    uint64_t tail = 256;  // second lap
    // A header of the first lap at the same offset: not this lap's record.
    const uint64_t stale = 1;
    memcpy(ring.memory.data(), &stale, 8);
    fifo::StringOutput out;
    assert_int_equal(fifo::drain(ring.view(), &tail, out).records, 0);
    assert_int_equal(tail, 256);
    // This lap's word 0 with impossible sizes: stuck, nothing consumed.
    for (uint64_t bytes : {0ull, 8ull, 20ull, 264ull, 0xffffffffull}) {
        const uint64_t w0 = tail + 1, w1 = bytes | (uint64_t{devrt::kRecordPrintf} << 32);
        memcpy(ring.memory.data(), &w0, 8);
        memcpy(ring.memory.data() + 8, &w1, 8);
        const fifo::DrainResult r = fifo::drain(ring.view(), &tail, out);
        assert_true(r.stuck);
        assert_int_equal(r.records, 0);
        assert_int_equal(tail, 256);
    }
    assert_string_equal(out.text().c_str(), "");
    // A ring that is no power of two is not read at all.
    std::vector<uint8_t> odd(200, 0xff);
    uint64_t t = 0;
    assert_int_equal(fifo::drain({odd.data(), odd.size()}, &t, out).records, 0);
}

// A well-formed header around a malformed payload: consumed, reported, the
// walk goes on.
void test_drain_skips_malformed_payload(void**) {
    Ring ring(256);
    uint64_t tail = 0;
    Items bad;
    bad.string("%d %d");
    bad.number(int32_t{1});  // the second %d has no item
    ring.put(devrt::kRecordPrintf, bad);
    ring.put(9, text("unknown kind"));
    ring.put(devrt::kRecordPrintf, text("after\n"));
    fifo::StringOutput out;
    const fifo::DrainResult r = fifo::drain(ring.view(), &tail, out);
    assert_int_equal(r.records, 3);
    assert_true(r.malformed);
    assert_false(r.stuck);
    assert_string_equal(out.text().c_str(), "1 after\n");
}

// Many laps of a small ring with records of odd sizes (fixed seed): every
// record comes out once, in order, and the ring is clean after each drain.
void test_drain_many_laps(void**) {
    std::mt19937_64 rng(2024);
    Ring ring(512);
    uint64_t tail = 0, records = 0;
    std::string expected;
    fifo::StringOutput out;
    for (int round = 0; round < 400; ++round) {
        for (int n = 1 + static_cast<int>(rng() % 4); n > 0; --n) {
            std::string line = "r" + std::to_string(round) + ":";
            for (size_t i = 0, len = rng() % 61; i < len; ++i) line += static_cast<char>('A' + rng() % 26);
            const int32_t v = static_cast<int32_t>(rng());
            const std::string zs(rng() % 13, 'z');
            Items it;
            it.string(line + "%d|%s\n");
            it.number(v);
            it.string(zs);
            if (ring.head - tail + devrt::kRecordHeaderBytes + it.bytes.size() > ring.memory.size()) break;  // full
            ring.put(devrt::kRecordPrintf, it);
            expected += line + std::to_string(v) + "|" + zs + "\n";
            ++records;
        }
        const fifo::DrainResult r = fifo::drain(ring.view(), &tail, out);
        assert_false(r.malformed || r.stuck);
        assert_int_equal(tail, ring.head);
        assert_true(ring.allZero());
    }
    assert_true(records >= 400);
    assert_true(out.text() == expected);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_text_and_percent),
        cmocka_unit_test(test_conversions_match_c_printf),
        cmocka_unit_test(test_mixed_format),
        cmocka_unit_test(test_length_modifiers_narrow_values),
        cmocka_unit_test(test_null_string_and_pointer),
        cmocka_unit_test(test_bad_formats),
        cmocka_unit_test(test_assert_message),
        cmocka_unit_test(test_unknown_kind_is_refused),
        cmocka_unit_test(test_truncated_records),
        cmocka_unit_test(test_random_records),
        cmocka_unit_test(test_drain_in_order_and_wrapping),
        cmocka_unit_test(test_drain_stops_at_incomplete_record),
        cmocka_unit_test(test_drain_ignores_stale_and_refuses_corrupt_headers),
        cmocka_unit_test(test_drain_skips_malformed_payload),
        cmocka_unit_test(test_drain_many_laps),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
