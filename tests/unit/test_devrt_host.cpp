// The device runtime's own code (devrt/devrt.cu), compiled for the host and
// run on CPU threads against the library's host side: no GPU can run it in
// CI, and these are the parts that must agree with each other.
//   - vprintf: argument buffers laid out as the compiler lays them out for
//     the device (promoted arguments at their natural alignment), records
//     read back by core/printf_fifo.cpp: the text equals the C library's
//     printf of the same values (random formats, fixed seed); printf's return
//     value; NULL format and NULL %s; a full FIFO drops records and sets the
//     flag, then works again; records wrapping the ring; several threads
//     printing while another drains;
//   - __assertfail: the record, the flag, then the trap;
//   - malloc/free: alignment, sizes, reuse, NULL for 0 and for too much,
//     foreign and repeated frees ignored, a heap of 0 bytes, and many threads
//     allocating, filling, checking and freeing at once (the lock-free lists);
//   - device-side launches (cudaGetParameterBufferV2 / cudaLaunchDeviceV2's
//     driver half): the slot a buffer is, numbers in launch order, buffers
//     refused (launched twice, not a slot's), the queue full (the overflow
//     slot, its launch refused), a geometry the device does not take, no
//     queue; many threads launching, the host's order;
//     cudaGetLastError's per-thread table, device-side stream names.
// What only the GPU can show (the SASS, the calling convention, the memory
// model of video and host memory) is in tests/hw/test_hw_devrt.c.
// Before the shim: the standard headers it includes use __noinline__ themselves.
#include "core/device_launch.h"
#include "devrt_host_shim.h"
// The device runtime itself.
#include "../../devrt/devrt.cu"

#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/printf_fifo.h"

// cmocka last: it declares its functions without extern "C".
#include <setjmp.h>
#include <stdarg.h>
extern "C" {
#include <cmocka.h>
}

namespace hosttest {

namespace fifo = nvl::core::fifo;

// One context's State, FIFO and heap in host memory, as the device sees them.
struct Runtime {
    nvl::devrt::State state{};
    std::vector<uint64_t> hostMemory;  // HostBlock, then the ring
    std::vector<uint64_t> heapMemory;
    nvl::devrt::HostBlock* host = nullptr;
    uint8_t* ring = nullptr;

    Runtime(uint64_t ringBytes, uint64_t heapBytes) {
        hostMemory.assign((nvl::devrt::kHostBlockBytes + ringBytes) / 8, 0);
        heapMemory.assign(heapBytes / 8 + 1, 0);
        host = reinterpret_cast<nvl::devrt::HostBlock*>(hostMemory.data());
        ring = reinterpret_cast<uint8_t*>(hostMemory.data()) + nvl::devrt::kHostBlockBytes;
        state.ringAddress = reinterpret_cast<uint64_t>(ring);
        state.ringBytes = ringBytes;
        state.hostBlock = reinterpret_cast<uint64_t>(host);
        state.heapAddress = heapBytes ? reinterpret_cast<uint64_t>(heapMemory.data()) : 0;
        state.heapBytes = heapBytes;
        nvl_devrt_state = &state;
    }
    ~Runtime() { nvl_devrt_state = nullptr; }
    // What the host prints at a synchronising call.
    std::string drain(fifo::DrainResult* result = nullptr) {
        fifo::StringOutput out;
        uint64_t tail = __atomic_load_n(&host->tail, __ATOMIC_ACQUIRE);
        const fifo::DrainResult r = fifo::drain({ring, state.ringBytes}, &tail, out);
        __atomic_store_n(&host->tail, tail, __ATOMIC_RELEASE);
        if (result) *result = r;
        return out.text();
    }
};

// An argument buffer as the compiler builds it for vprintf.
class ArgBuffer {
public:
    void i32(int32_t v) { put(&v, 4); }
    void u32(uint32_t v) { put(&v, 4); }
    void i64(int64_t v) { put(&v, 8); }
    void u64(uint64_t v) { put(&v, 8); }
    void f64(double v) { put(&v, 8); }
    void ptr(const void* p) { put(&p, 8); }
    const char* data() const { return reinterpret_cast<const char*>(words_.data()); }

private:
    void put(const void* v, size_t n) {
        bytes_ = (bytes_ + n - 1) / n * n;
        words_.resize((bytes_ + n + 7) / 8, 0);
        memcpy(reinterpret_cast<uint8_t*>(words_.data()) + bytes_, v, n);
        bytes_ += n;
    }
    std::vector<uint64_t> words_{0};
    size_t bytes_ = 0;
};

int devicePrintf(const char* fmt, const ArgBuffer& args) { return nvl_devrt_vprintf(fmt, args.data()); }

// ------------------------------------------------------------------ printf

// Random conversions (fixed seed), each printed by the runtime and by the C
// library: the same text.
void test_printf_matches_c(void**) {
    Runtime rt(1 << 16, 0);
    std::mt19937_64 rng(0xd0e5);
    const char convs[] = "diuoxXcfeEgGaAsp";
    std::vector<std::string> strings;
    for (int iter = 0; iter < 3000; ++iter) {
        const char conv = convs[rng() % (sizeof convs - 1)];
        const bool isInt = strchr("diuoxX", conv), isDouble = strchr("feEgGaA", conv);
        std::string spec = "%";
        if (isInt || isDouble) {
            const char* flags = conv == 'd' || conv == 'i' || conv == 'u' ? "-+ 0" : "-+ #0";
            for (int f = static_cast<int>(rng() % 3); f > 0; --f) spec += flags[rng() % strlen(flags)];
        } else if (rng() % 2) {
            spec += '-';
        }
        const bool star = rng() % 4 == 0;
        int width = static_cast<int>(rng() % 30) - (star ? 10 : 0);
        if (star) spec += '*';
        else if (rng() % 2) spec += std::to_string(width = std::abs(width));
        const bool withPrecision = conv != 'c' && conv != 'p' && rng() % 2;
        int precision = static_cast<int>(rng() % 20);
        if (withPrecision) spec += "." + std::to_string(precision);
        bool wide = false;
        if (isInt) {
            switch (rng() % 4) {
            case 0: spec += "l"; wide = true; break;
            case 1: spec += "ll"; wide = true; break;
            case 2: spec += "h"; break;
            default: break;
            }
        }
        spec += conv;
        const std::string fmt = "(" + spec + ")" + (rng() % 2 ? "\n" : "");

        ArgBuffer args;
        if (star) args.i32(width);
        char expected[512];
        int n = 0;
        const uint64_t raw = rng();
        auto c = [&](auto v) {
            n = star ? snprintf(expected, sizeof expected, fmt.c_str(), width, v) : snprintf(expected, sizeof expected, fmt.c_str(), v);
        };
        if (isInt && wide) {
            args.u64(raw);
            if (conv == 'd' || conv == 'i') c(static_cast<long long>(raw));
            else c(static_cast<unsigned long long>(raw));
        } else if (isInt) {
            args.u32(static_cast<uint32_t>(raw));
            if (conv == 'd' || conv == 'i') c(static_cast<int>(static_cast<int32_t>(raw)));
            else c(static_cast<unsigned>(raw));
        } else if (conv == 'c') {
            args.i32(0x21 + static_cast<int>(raw % 90));
            c(0x21 + static_cast<int>(raw % 90));
        } else if (isDouble) {
            const double d = (static_cast<double>(static_cast<int64_t>(raw)) / 1e12) * (raw % 3 ? 1.0 : 1e-9);
            args.f64(d);
            c(d);
        } else if (conv == 's') {
            strings.emplace_back(raw % 40, static_cast<char>('a' + raw % 26));
            args.ptr(strings.back().c_str());
            c(strings.back().c_str());
        } else {
            args.ptr(reinterpret_cast<const void*>(raw));
            c(reinterpret_cast<const void*>(raw));
        }
        assert_true(n >= 0 && n < static_cast<int>(sizeof expected));
        const int consumed = devicePrintf(fmt.c_str(), args);
        assert_int_equal(consumed, star ? 2 : 1);
        const std::string got = rt.drain();
        if (got != expected) fail_msg("format '%s': the runtime printed '%s', C prints '%s'", fmt.c_str(), got.c_str(), expected);
    }
}

// Many arguments of every size in one call: the buffer's alignment holes.
void test_printf_mixed_alignment(void**) {
    Runtime rt(4096, 0);
    ArgBuffer a;
    const char* str = "text";
    a.i32(-1);
    a.f64(2.5);
    a.i32('x');
    a.i64(-1234567890123LL);
    a.i32(7);
    a.ptr(str);
    a.u32(0xffffffffu);
    a.u64(42);
    a.i32(3);  // '*' precision
    a.f64(3.14159);
    const char* fmt = "%d %.1f %c %lld %d %s %u %zu %.*f|%%\n";
    assert_int_equal(devicePrintf(fmt, a), 10);
    char expected[256];
    snprintf(expected, sizeof expected, fmt, -1, 2.5, 'x', -1234567890123LL, 7, str, 0xffffffffu, size_t{42}, 3, 3.14159);
    assert_string_equal(rt.drain().c_str(), expected);
}

void test_printf_edge_cases(void**) {
    Runtime rt(4096, 0);
    ArgBuffer none;
    assert_int_equal(nvl_devrt_vprintf(nullptr, none.data()), -1);
    assert_string_equal(rt.drain().c_str(), "");
    assert_int_equal(devicePrintf("plain %% text, no arguments\n", none), 0);
    ArgBuffer nul;
    nul.ptr(nullptr);
    nul.i32(5);
    assert_int_equal(devicePrintf("[%s] [%y] [%5k] [%d] [%", nul), 2);
    assert_string_equal(rt.drain().c_str(), "plain % text, no arguments\n[(null)] [%y] [%5k] [5] [%");
    // A string in (host-)local memory is copied into the record.
    char local[32];
    for (int i = 0; i < 31; ++i) local[i] = static_cast<char>('A' + i % 26);
    local[31] = 0;
    ArgBuffer s;
    s.ptr(local);
    devicePrintf("<%s>", s);
    memset(local, '#', 31);  // changed after the call: the record has its own copy
    assert_string_equal(rt.drain().c_str(), "<ABCDEFGHIJKLMNOPQRSTUVWXYZABCDE>");
    // %ld against a buffer of 4-byte arguments that is only 4-byte aligned
    // (a mismatched format): read in halves, no misaligned access.
    uint32_t words[5] = {0, 0x11111111u, 0x22222222u, 0x33333333u, 0};
    assert_int_equal(nvl_devrt_vprintf("%lx %x", reinterpret_cast<const char*>(&words[1])), 2);
    assert_string_equal(rt.drain().c_str(), "2222222211111111 33333333");
    // Strings longer than kMaxStringBytes are cut to it.
    std::string big(nvl::devrt::kMaxStringBytes + 100, 'z');
    Runtime large(1 << 20, 0);
    ArgBuffer b;
    b.ptr(big.c_str());
    devicePrintf("%s", b);
    assert_int_equal(large.drain().size(), nvl::devrt::kMaxStringBytes);
}

// Records that do not fit are dropped (nothing unread is overwritten), the
// flag says so, and once the host read the FIFO it takes records again.
void test_printf_full_fifo(void**) {
    Runtime rt(256, 0);
    ArgBuffer a;
    a.i32(1);
    int kept = 0;
    for (int i = 0; i < 20; ++i) kept += devicePrintf("a line that takes 48 bytes %d\n", a) == 1;
    assert_true(kept >= 1 && kept < 20);
    assert_int_equal(rt.host->overflowed, 1);
    assert_int_equal(devicePrintf("dropped\n", a), -2);
    const std::string text = rt.drain();
    assert_int_equal(std::count(text.begin(), text.end(), '\n'), kept);
    for (int round = 0; round < 50; ++round) {  // many laps, records wrapping the end
        ArgBuffer r;
        r.i32(round);
        assert_int_equal(devicePrintf("round %d, padding to an odd size...\n", r), 1);
        char want[64];
        snprintf(want, sizeof want, "round %d, padding to an odd size...\n", round);
        assert_string_equal(rt.drain().c_str(), want);
    }
    // A ring smaller than a header takes nothing.
    Runtime tiny(8, 0);
    assert_int_equal(devicePrintf("x", a), -2);
}

// Several threads printing while one drains: every record once, whole.
void test_printf_threads(void**) {
    Runtime rt(2048, 0);
    constexpr int kThreads = 4, kEach = 2000;
    std::atomic<int> running{kThreads};
    std::string text;
    std::thread host([&] {
        while (running.load() > 0) text += rt.drain();
        text += rt.drain();
    });
    std::vector<std::thread> device;
    for (int t = 0; t < kThreads; ++t) {
        device.emplace_back([&, t] {
            for (int i = 0; i < kEach; ++i) {
                ArgBuffer a;
                a.i32(t);
                a.i32(i);
                while (devicePrintf("thread %d line %05d\n", a) != 2) std::this_thread::yield();  // full: retry
            }
            running.fetch_sub(1);
        });
    }
    for (auto& d : device) d.join();
    host.join();
    std::map<int, int> next;
    size_t lines = 0;
    for (size_t at = 0; at < text.size();) {
        const size_t nl = text.find('\n', at);
        assert_true(nl != std::string::npos);
        int t = -1, i = -1;
        if (sscanf(text.c_str() + at, "thread %d line %d", &t, &i) != 2) fail_msg("garbled: %s", text.substr(at, nl - at).c_str());
        if (i != next[t]) fail_msg("thread %d: line %d after %d", t, i, next[t] - 1);  // each thread's lines in order
        next[t] = i + 1;
        ++lines;
        at = nl + 1;
    }
    assert_int_equal(lines, kThreads * kEach);
}

// ------------------------------------------------------------------ assert

void test_assertfail(void**) {
    Runtime rt(4096, 0);
    blockIdx = {3, 1, 0};
    threadIdx = {17, 2, 1};
    bool trapped = false;
    try {
        nvl_devrt_assertfail("i < n", "kernel.cu", 42, "void k(int *, int)", 1);
    } catch (const devrthost::Trap&) {
        trapped = true;
    }
    assert_true(trapped);
    assert_int_equal(rt.host->asserted, 1);
    fifo::DrainResult r;
    assert_string_equal(rt.drain(&r).c_str(),
                        "kernel.cu:42: void k(int *, int): block: [3,1,0], thread: [17,2,1] Assertion `i < n` failed.\n");
    assert_true(r.asserted);
    // NULL strings are printed empty, and it still traps.
    trapped = false;
    try {
        nvl_devrt_assertfail(nullptr, nullptr, 0, nullptr, 1);
    } catch (const devrthost::Trap&) {
        trapped = true;
    }
    assert_true(trapped);
    assert_string_equal(rt.drain().c_str(), ":0: : block: [3,1,0], thread: [17,2,1] Assertion `` failed.\n");
    blockIdx = threadIdx = {};
}

// ------------------------------------------------------------------ heap

void test_malloc_free(void**) {
    Runtime rt(256, 1 << 20);
    const uint8_t* heap = reinterpret_cast<const uint8_t*>(rt.state.heapAddress);
    assert_null(nvl_devrt_malloc(0));
    assert_null(nvl_devrt_malloc((1 << 20) + 1));
    std::vector<std::pair<uint8_t*, size_t>> blocks;
    for (size_t n : {1, 15, 16, 17, 100, 1000, 4096, 12345}) {
        auto* p = static_cast<uint8_t*>(nvl_devrt_malloc(n));
        assert_non_null(p);
        assert_int_equal(reinterpret_cast<uintptr_t>(p) % 16, 0);
        assert_true(p >= heap && p + n <= heap + (1 << 20));
        memset(p, static_cast<int>(n & 0xff), n);
        blocks.emplace_back(p, n);
    }
    for (const auto& [p, n] : blocks)
        for (size_t i = 0; i < n; ++i)
            if (p[i] != static_cast<uint8_t>(n & 0xff)) fail_msg("block of %zu bytes overwritten at %zu", n, i);
    // A freed block comes back for the next request of its size class.
    uint8_t* again = nullptr;
    nvl_devrt_free(blocks[4].first);
    again = static_cast<uint8_t*>(nvl_devrt_malloc(90));
    assert_ptr_equal(again, blocks[4].first);
    // Frees of what malloc did not return are ignored; so is a second free.
    const uint64_t top = rt.state.heapTop;
    nvl_devrt_free(nullptr);
    nvl_devrt_free(blocks[0].first + 16);
    int outside = 0;
    nvl_devrt_free(&outside);
    nvl_devrt_free(again);
    nvl_devrt_free(again);
    auto* one = nvl_devrt_malloc(90);
    auto* two = nvl_devrt_malloc(90);
    assert_ptr_equal(one, again);
    assert_true(two != one);
    assert_true(rt.state.heapTop > top);  // the second came from fresh space
    // The heap runs out, and what is freed is used again.
    std::vector<void*> big;
    while (void* p = nvl_devrt_malloc(100000)) big.push_back(p);
    assert_true(!big.empty() && big.size() <= (1 << 20) / 131072);
    for (void* p : big) nvl_devrt_free(p);
    for (size_t i = 0; i < big.size(); ++i) assert_non_null(nvl_devrt_malloc(100000));
    // No heap at all: malloc has nothing.
    Runtime none(256, 0);
    assert_null(nvl_devrt_malloc(16));
}

void test_malloc_threads(void**) {
    Runtime rt(256, 16 << 20);
    constexpr int kThreads = 8, kOps = 20000;
    std::atomic<int> bad{0}, nulls{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            std::mt19937 rng(t * 7919 + 1);
            std::vector<std::pair<uint32_t*, uint32_t>> mine;
            for (int op = 0; op < kOps; ++op) {
                if (mine.size() < 40 && (mine.empty() || rng() % 3)) {
                    const uint32_t words = 1 + rng() % 300;
                    auto* p = static_cast<uint32_t*>(nvl_devrt_malloc(words * 4));
                    if (!p) {
                        nulls.fetch_add(1);
                        continue;
                    }
                    for (uint32_t i = 0; i < words; ++i) p[i] = static_cast<uint32_t>(t) << 24 ^ i ^ words;
                    mine.emplace_back(p, words);
                } else {
                    const size_t k = rng() % mine.size();
                    auto [p, words] = mine[k];
                    for (uint32_t i = 0; i < words; ++i)
                        if (p[i] != (static_cast<uint32_t>(t) << 24 ^ i ^ words)) {
                            bad.fetch_add(1);
                            break;
                        }
                    nvl_devrt_free(p);
                    mine[k] = mine.back();
                    mine.pop_back();
                }
            }
            for (auto [p, words] : mine) nvl_devrt_free(p);
        });
    }
    for (auto& th : threads) th.join();
    assert_int_equal(bad.load(), 0);
    assert_int_equal(nulls.load(), 0);  // 8 threads x 40 blocks of at most 2 KiB: far below 16 MiB
}

// ---------------------------------------------------------------- device-side launches

// A launch queue of 'n' slots in host memory, as a grid sees it.
struct Queue {
    nvl::devrt::LaunchQueue header{};
    std::vector<uint64_t> slotWords;
    explicit Queue(uint64_t n) : slotWords((n + 1) * nvl::devrt::kLaunchSlotBytes / 8, 0) {  // and the overflow slot
        header.slots = n;
        header.slotsAddress = reinterpret_cast<uint64_t>(slotWords.data());
    }
    nvl::devrt::LaunchSlot* slot(uint64_t i) {
        return reinterpret_cast<nvl::devrt::LaunchSlot*>(reinterpret_cast<uint8_t*>(slotWords.data()) +
                                                        i * nvl::devrt::kLaunchSlotBytes);
    }
    uint8_t* params(uint64_t i) { return reinterpret_cast<uint8_t*>(slot(i)) + nvl::devrt::kLaunchHeaderBytes; }
};

// The grid the calling thread plays: its queue.
struct GridScope {
    explicit GridScope(Queue* q) { hostLaunchQueue = q ? &q->header : nullptr; }
    ~GridScope() { hostLaunchQueue = nullptr; }
};

void test_launch_slots(void**) {
    using namespace nvl::devrt;
    Queue q(11);
    GridScope grid(&q);
    void* const f = reinterpret_cast<void*>(0x7f0012345670ull);
    void* b0 = nvl_devrt_parameter_buffer(f, LaunchDim{3, 2, 1}, LaunchDim{64, 2, 1}, 777);
    assert_ptr_equal(b0, q.params(0));
    assert_int_equal(q.slot(0)->function, reinterpret_cast<uint64_t>(f));
    assert_int_equal(q.slot(0)->grid[0], 3);
    assert_int_equal(q.slot(0)->grid[1], 2);
    assert_int_equal(q.slot(0)->block[0], 64);
    assert_int_equal(q.slot(0)->block[1], 2);
    assert_int_equal(q.slot(0)->sharedBytes, 777);
    assert_int_equal(q.slot(0)->number, 0);  // taken, not launched
    void* b1 = nvl_devrt_parameter_buffer(f, LaunchDim{1, 1, 1}, LaunchDim{1, 1, 1}, 0);
    assert_ptr_equal(b1, q.params(1));
    // Numbered in launch order, not in the order the slots were taken.
    assert_int_equal(nvl_devrt_launch(b1, reinterpret_cast<void*>(0x4)), kCnpSuccess);
    assert_int_equal(nvl_devrt_launch(b0, nullptr), kCnpSuccess);
    assert_int_equal(q.slot(1)->number, 1);
    assert_int_equal(q.slot(1)->stream, 0x4);
    assert_int_equal(q.slot(0)->number, 2);
    assert_int_equal(q.header.launched, 2);
    // Launched twice, not a buffer of a slot, a slot not taken: refused.
    assert_int_equal(nvl_devrt_launch(b0, nullptr), kCnpInvalidValue);
    assert_int_equal(nvl_devrt_launch(static_cast<uint8_t*>(b0) + 8, nullptr), kCnpInvalidValue);
    assert_int_equal(nvl_devrt_launch(q.params(2), nullptr), kCnpInvalidValue);
    assert_int_equal(nvl_devrt_launch(nullptr, nullptr), kCnpInvalidValue);
    // A geometry the device does not take.
    for (LaunchDim bad : {LaunchDim{0, 1, 1}, LaunchDim{1, 65536, 1}, LaunchDim{1, 1, 0}}) {
        void* b = nvl_devrt_parameter_buffer(f, bad, LaunchDim{1, 1, 1}, 0);
        assert_int_equal(nvl_devrt_launch(b, nullptr), kCnpInvalidConfiguration);
    }
    for (LaunchDim bad : {LaunchDim{2048, 1, 1}, LaunchDim{1, 1, 65}, LaunchDim{32, 32, 2}}) {
        void* b = nvl_devrt_parameter_buffer(f, LaunchDim{1, 1, 1}, bad, 0);
        assert_int_equal(nvl_devrt_launch(b, nullptr), kCnpInvalidConfiguration);
    }
    // No function: no buffer.
    assert_null(nvl_devrt_parameter_buffer(nullptr, LaunchDim{1, 1, 1}, LaunchDim{1, 1, 1}, 0));
    // The queue full: NULL (the pending launch count), the slots handed out still launch.
    for (uint64_t i = 8; i < 11; ++i)
        assert_ptr_equal(nvl_devrt_parameter_buffer(f, LaunchDim{1, 1, 1}, LaunchDim{1, 1, 1}, 0), q.params(i));
    // Past the limit: the overflow slot's buffer (shared), whose launch is refused.
    void* over = nvl_devrt_parameter_buffer(f, LaunchDim{1, 1, 1}, LaunchDim{1, 1, 1}, 0);
    assert_ptr_equal(over, q.params(11));
    assert_ptr_equal(nvl_devrt_parameter_buffer(f, LaunchDim{1, 1, 1}, LaunchDim{1, 1, 1}, 0), over);
    assert_int_equal(nvl_devrt_launch(over, nullptr), kCnpPendingCountExceeded);
    assert_int_equal(q.slot(11)->number, 0);
    assert_int_equal(nvl_devrt_launch(q.params(10), nullptr), kCnpSuccess);
    assert_int_equal(q.slot(10)->number, 3);
    assert_int_equal(nvl_devrt_launch(q.params(12), nullptr), kCnpInvalidValue);  // past the slots
}

void test_launch_without_queue(void**) {
    using namespace nvl::devrt;
    Queue q(4);
    void* const f = reinterpret_cast<void*>(0x1000);
    {
        GridScope grid(nullptr);  // a grid that runs without a queue
        assert_null(nvl_devrt_parameter_buffer(f, LaunchDim{1, 1, 1}, LaunchDim{1, 1, 1}, 0));
        assert_int_equal(nvl_devrt_launch(q.params(0), nullptr), kCnpInvalidValue);
        assert_int_equal(nvl_devrt_get_last_error(), 0);
        assert_int_equal(nvl_devrt_set_last_error(1), 1);
        uint64_t stream = 0;
        assert_int_equal(nvl_devrt_stream_create(&stream, 0), kCnpInvalidValue);
    }
}

// cudaGetLastError's table (per thread) and device-side streams (names).
void test_last_error_and_streams(void**) {
    using namespace nvl::devrt;
    Queue q(2);
    GridScope grid(&q);
    threadIdx = {0, 0, 0};
    blockIdx = {3, 0, 0};
    assert_int_equal(nvl_devrt_get_last_error(), 0);
    assert_int_equal(nvl_devrt_set_last_error(69), 69);  // what cudaLaunchDeviceV2 then returns
    assert_int_equal(nvl_devrt_get_last_error(), 69);
    assert_int_equal(nvl_devrt_get_last_error(), 69);  // peeking does not clear it
    threadIdx.x = 5;  // another thread: its own
    assert_int_equal(nvl_devrt_get_last_error(), 0);
    assert_int_equal(nvl_devrt_set_last_error(65), 65);
    threadIdx.x = 0;
    assert_int_equal(nvl_devrt_get_last_error(), 69);
    assert_int_equal(nvl_devrt_set_last_error(0), 0);  // what cudaGetLastError does after reading
    assert_int_equal(nvl_devrt_get_last_error(), 0);
    threadIdx.x = 5;
    assert_int_equal(nvl_devrt_get_last_error(), 65);
    hostGridId = 2;  // the same thread of another grid
    assert_int_equal(nvl_devrt_get_last_error(), 0);
    hostGridId = 1;
    // More failing threads than the table holds: never a wrong error, at
    // worst none.
    for (unsigned t = 0; t < 3 * kLastErrorEntries; ++t) {
        threadIdx.x = 100 + t;
        nvl_devrt_set_last_error(static_cast<int>(1 + t % 50));
    }
    int kept = 0;
    for (unsigned t = 0; t < 3 * kLastErrorEntries; ++t) {
        threadIdx.x = 100 + t;
        const int e = nvl_devrt_get_last_error();
        if (e != 0) {
            assert_int_equal(e, static_cast<int>(1 + t % 50));
            ++kept;
        }
    }
    assert_true(kept >= static_cast<int>(kLastErrorEntries / 2));
    threadIdx.x = 0;

    uint64_t s1 = 0, s2 = 0;
    assert_int_equal(nvl_devrt_stream_create(&s1, 1), kCnpSuccess);
    assert_int_equal(nvl_devrt_stream_create(&s2, 0), kCnpSuccess);
    assert_true(s1 != s2 && (s1 & kDeviceStreamTag) && (s2 & kDeviceStreamTag));
    assert_int_equal(nvl_devrt_stream_destroy(s1), kCnpSuccess);
    assert_int_equal(nvl_devrt_stream_destroy(0), kCnpInvalidValue);
    assert_int_equal(nvl_devrt_stream_create(nullptr, 0), kCnpInvalidValue);
    blockIdx = {0, 0, 0};
}

// Many threads launching at once: every launch a distinct number, and the
// host's order (core/device_launch.h launchOrder) keeps each thread's
// launches in the order it made them.
void test_launch_threads(void**) {
    using namespace nvl::devrt;
    constexpr int kThreads = 8, kEach = 120;
    Queue q(kThreads * kEach);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&q, t] {
            GridScope grid(&q);
            for (int i = 0; i < kEach; ++i) {
                auto* b = static_cast<uint32_t*>(nvl_devrt_parameter_buffer(reinterpret_cast<void*>(0x1000 + t),
                                                                            LaunchDim{1, 1, 1}, LaunchDim{1, 1, 1}, 0));
                if (!b) return;
                b[0] = static_cast<uint32_t>(t);
                b[1] = static_cast<uint32_t>(i);
                if (nvl_devrt_launch(b, nullptr) != kCnpSuccess) return;
            }
        });
    }
    for (auto& th : threads) th.join();
    assert_int_equal(q.header.taken, kThreads * kEach);
    assert_int_equal(q.header.launched, kThreads * kEach);
    const std::vector<uint64_t> order =
        nvl::core::launchOrder(0, q.header.taken, [&](uint64_t i) { return q.slot(i)->number; });
    assert_int_equal(order.size(), kThreads * kEach);
    std::vector<int> next(kThreads, 0);
    uint32_t last = 0;
    for (uint64_t i : order) {
        assert_true(q.slot(i)->number > last);
        last = q.slot(i)->number;
        const auto* b = reinterpret_cast<const uint32_t*>(q.params(i));
        assert_true(b[0] < kThreads);
        assert_int_equal(b[1], next[b[0]]++);
    }
    // A slot taken and never launched is left out.
    q.slot(7)->number = 0;
    assert_int_equal(nvl::core::launchOrder(0, q.header.taken, [&](uint64_t i) { return q.slot(i)->number; }).size(),
                     kThreads * kEach - 1);
}

}  // namespace hosttest

int main() {
    using namespace hosttest;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_printf_matches_c),
        cmocka_unit_test(test_printf_mixed_alignment),
        cmocka_unit_test(test_printf_edge_cases),
        cmocka_unit_test(test_printf_full_fifo),
        cmocka_unit_test(test_printf_threads),
        cmocka_unit_test(test_assertfail),
        cmocka_unit_test(test_malloc_free),
        cmocka_unit_test(test_malloc_threads),
        cmocka_unit_test(test_launch_slots),
        cmocka_unit_test(test_launch_without_queue),
        cmocka_unit_test(test_launch_threads),
        cmocka_unit_test(test_last_error_and_streams),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
