// nvlite's device runtime: what a kernel's calls to vprintf (printf),
// __assertfail (assert), malloc and free (also new/delete) reach. libcuda
// resolves these externals against its own device code at load time; nvlite
// compiles this file at build time (nvcc -rdc: relocatable SASS for each
// architecture it drives), embeds the cubins in libnvlite.so and links the
// functions into each module that calls them (lib/loader/devrt_link.cpp).
//
// Rules for this file (the loader checks what it can):
//   - the four entry points are ABI functions under our own names (the
//     loader maps the CUDA names onto them); everything else is inlined;
//   - no constant banks, no shared memory: the code runs inside the user's
//     kernel with the user's banks bound;
//   - the context's State comes from one 8-byte slot the loader fills per
//     module (nvl_devrt_state);
//   - the record and heap layouts are in lib/core/devrt_abi.h.
#include <stdint.h>

#include "../lib/common/envregs.h"
#include "../lib/core/devrt_abi.h"

using namespace nvl::devrt;

// Loops stay loops: the runtime is copied into every module that calls it.
#if defined(__CUDACC__)
#define NVL_ROLLED _Pragma("unroll 1")
#else
#define NVL_ROLLED
#endif

extern "C" __device__ State* nvl_devrt_state;
__device__ State* nvl_devrt_state;

namespace {

// ------------------------------------------------------------ memory order

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ uint64_t loadSys(const uint64_t* p) {
    uint64_t v;
    asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void storeSys(uint64_t* p, uint64_t v) {
    asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void storeSys32(uint32_t* p, uint32_t v) {
    asm volatile("st.relaxed.sys.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ uint64_t loadVolatile(const uint64_t* p) { return *static_cast<const volatile uint64_t*>(p); }

__device__ __forceinline__ void storeVolatile(uint64_t* p, uint64_t v) { *static_cast<volatile uint64_t*>(p) = v; }

// The lanes of the warp running this call together, this lane, a barrier among them.
__device__ __forceinline__ unsigned activeLanes() { return __activemask(); }
__device__ __forceinline__ unsigned laneId() {
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}
// On sm_80 ptxas turns bar.warp.sync (and __syncwarp) with a mask known only
// at run time into a call to a helper (__cuda_sm70_warpsync), which the
// runtime may not have (no calls): there the lanes meet where the branch
// around each record rejoins, as they do without it on sm_90.
__device__ __forceinline__ void warpSync(unsigned lanes) {
#if __CUDA_ARCH__ >= 900
    asm volatile("bar.warp.sync %0;" ::"r"(lanes) : "memory");
#else
    (void)lanes;
#endif
}
#else
// The host build of this file (tests/unit/test_devrt_host.cpp runs the
// same code on CPU threads against the host side).
inline uint64_t loadSys(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline void storeSys(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
inline void storeSys32(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
inline uint64_t loadVolatile(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline void storeVolatile(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
// Each CPU thread is a warp of one lane.
inline unsigned activeLanes() { return 1; }
inline unsigned laneId() { return 0; }
inline void warpSync(unsigned) {}
#endif

__device__ __forceinline__ uint64_t pad8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// ------------------------------------------------------------ strings

__device__ __forceinline__ uint32_t boundedLength(const char* s) {
    uint32_t n = 0;
    NVL_ROLLED
    while (n < kMaxStringBytes && s[n] != '\0') ++n;
    return n;
}

// ------------------------------------------------------------ record sinks

// Pass 1 of a record: how many bytes it needs.
struct Measure {
    uint64_t bytes = kRecordHeaderBytes;
    __device__ __forceinline__ void number(uint64_t) { bytes += 8; }
    __device__ __forceinline__ void string(const char*, uint32_t n) { bytes += 8 + pad8(n); }
};

// Pass 2: the items, word by word into the reserved space of the ring
// (never more than was reserved, even if the strings changed meanwhile;
// zeros fill what is left).
struct Write {
    uint8_t* ring;
    uint64_t ringBytes;
    uint64_t offset;  // ring offset of the next word
    uint64_t words;   // words left in the reservation

    __device__ __forceinline__ void word(uint64_t w) {
        if (words == 0) return;
        *reinterpret_cast<uint64_t*>(ring + offset) = w;
        offset += 8;
        if (offset >= ringBytes) offset = 0;
        --words;
    }
    __device__ __forceinline__ void number(uint64_t v) { word(v); }
    __device__ __forceinline__ void string(const char* s, uint32_t n) {
        word(n);
        uint64_t acc = 0;
        NVL_ROLLED
        for (uint32_t i = 0; i < n; ++i) {
            acc |= static_cast<uint64_t>(static_cast<uint8_t>(s[i])) << (8 * (i & 7));
            if ((i & 7) == 7) {
                word(acc);
                acc = 0;
            }
        }
        if (n & 7) word(acc);
    }
    __device__ __forceinline__ void finish() {
        NVL_ROLLED
        while (words) word(0);
    }
};

// ------------------------------------------------------------ printf's arguments

// The argument buffer vprintf gets: the promoted arguments, each at its
// natural alignment (int and char as 4 bytes, long/long long/pointers/doubles 8).
struct Args {
    const uint8_t* base;
    uint64_t offset = 0;
    __device__ __forceinline__ uint32_t u32() {
        offset = (offset + 3) & ~uint64_t{3};
        uint32_t v = *reinterpret_cast<const uint32_t*>(base + offset);
        offset += 4;
        return v;
    }
    __device__ __forceinline__ uint64_t u64() {
        offset = (offset + 7) & ~uint64_t{7};
        const uint8_t* p = base + offset;
        offset += 8;
        // A buffer of 4-byte arguments is only 4-byte aligned: a format that
        // reads 8 bytes from it must not fault.
        if ((reinterpret_cast<uint64_t>(p) & 7) == 0) return *reinterpret_cast<const uint64_t*>(p);
        const uint32_t* w = reinterpret_cast<const uint32_t*>(p);
        return w[0] | static_cast<uint64_t>(w[1]) << 32;
    }
};

__device__ __forceinline__ bool isFlag(char c) { return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0'; }
__device__ __forceinline__ bool isDigit(char c) { return c >= '0' && c <= '9'; }
__device__ __forceinline__ bool isDoubleConversion(char c) {
    return c == 'f' || c == 'F' || c == 'e' || c == 'E' || c == 'g' || c == 'G' || c == 'a' || c == 'A';
}

// Walks the format as the host will (core/printf_fifo.cpp mirrors this
// grammar): %% and conversions [flags][width|*][.precision|*][length]conv.
// Returns how many arguments it consumed.
template <class Sink>
__device__ __forceinline__ int walkFormat(const char* fmt, uint32_t n, const uint8_t* argBuffer, Sink& sink) {
    sink.string(fmt, n);
    Args args{argBuffer};
    int consumed = 0;
    uint32_t i = 0;
    NVL_ROLLED
    while (i < n) {
        if (fmt[i++] != '%') continue;
        if (i < n && fmt[i] == '%') {
            ++i;
            continue;
        }
        while (i < n && isFlag(fmt[i])) ++i;
        if (i < n && fmt[i] == '*') {
            ++i;
            sink.number(static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(args.u32()))));
            ++consumed;
        } else {
            while (i < n && isDigit(fmt[i])) ++i;
        }
        if (i < n && fmt[i] == '.') {
            ++i;
            if (i < n && fmt[i] == '*') {
                ++i;
                sink.number(static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(args.u32()))));
                ++consumed;
            } else {
                while (i < n && isDigit(fmt[i])) ++i;
            }
        }
        bool wide = false;  // 64-bit integer argument
        NVL_ROLLED
        while (i < n) {
            const char c = fmt[i];
            if (c == 'l' || c == 'z' || c == 'j' || c == 't' || c == 'q') wide = true;
            else if (c != 'h' && c != 'L') break;
            ++i;
        }
        if (i >= n) break;
        // Conversions as an if-chain: a switch would become a jump table in
        // a constant bank, which this code may not have.
        const char conv = fmt[i++];
        if (conv == 'd' || conv == 'i') {
            sink.number(wide ? args.u64() : static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(args.u32()))));
        } else if (conv == 'u' || conv == 'o' || conv == 'x' || conv == 'X') {
            sink.number(wide ? args.u64() : args.u32());
        } else if (conv == 'c') {
            sink.number(args.u32());
        } else if (isDoubleConversion(conv) || conv == 'p' || conv == 'n') {
            sink.number(args.u64());
        } else if (conv == 's') {
            const char* s = reinterpret_cast<const char*>(args.u64());
            if (s) sink.string(s, boundedLength(s));
            else sink.string("(null)", 6);
        } else {
            continue;  // not a conversion: printed as it stands, nothing consumed
        }
        ++consumed;
    }
    return consumed;
}

// ------------------------------------------------------------ the FIFO

// Reserves 'bytes' of the ring; false when they do not fit (the record is
// dropped, as nothing older may be overwritten before the host read it).
__device__ __forceinline__ bool reserve(State* st, HostBlock* host, uint64_t bytes, uint64_t* position) {
    const uint64_t capacity = st->ringBytes;
    if (bytes > capacity) return false;
    uint64_t head = loadVolatile(&st->head);
    NVL_ROLLED
    for (;;) {
        const uint64_t tail = loadSys(&host->tail);
        if (head - tail + bytes > capacity) return false;
        const unsigned long long seen = atomicCAS(reinterpret_cast<unsigned long long*>(&st->head), head, head + bytes);
        if (seen == head) break;
        head = seen;
    }
    *position = head;
    return true;
}

// Writes a record of 'kind' whose items 'emit' produces (called twice: to
// measure, then to write). Returns false when the record was dropped.
template <class Emit>
__device__ __forceinline__ bool record(uint32_t kind, Emit emit) {
    State* st = nvl_devrt_state;
    if (!st || st->ringBytes < kRecordHeaderBytes) return false;
    HostBlock* host = reinterpret_cast<HostBlock*>(st->hostBlock);
    Measure m;
    emit(m);
    uint64_t position;
    if (m.bytes > 0xffffffffull || !reserve(st, host, m.bytes, &position)) {
        storeSys32(&host->overflowed, 1);
        return false;
    }
    uint8_t* ring = reinterpret_cast<uint8_t*>(st->ringAddress);
    const uint64_t ringBytes = st->ringBytes;
    const uint64_t first = position & (ringBytes - 1);  // a power of two
    Write w{ring, ringBytes, first, m.bytes / 8};
    w.word(0);  // word 0 comes last
    w.word(m.bytes | (static_cast<uint64_t>(kind) << 32));
    emit(w);
    w.finish();
    __threadfence_system();
    storeSys(reinterpret_cast<uint64_t*>(ring + first), position + 1);
    return true;
}

// ------------------------------------------------------------ the heap

__device__ __forceinline__ uint32_t classFor(uint64_t bytes) {
    const uint64_t need = bytes + kHeapHeaderBytes;
    uint32_t k = kHeapMinShift;
    NVL_ROLLED
    while (k < kHeapMinShift + kHeapClasses && (uint64_t{1} << k) < need) ++k;
    return k;
}

constexpr uint64_t kOffsetMask = (uint64_t{1} << kHeapOffsetBits) - 1;

__device__ __forceinline__ uint8_t* popFree(State* st, uint32_t index) {
    uint64_t* list = &st->freeLists[index];
    uint8_t* heap = reinterpret_cast<uint8_t*>(st->heapAddress);
    uint64_t head = loadVolatile(list);
    NVL_ROLLED
    for (;;) {
        const uint64_t slot = head & kOffsetMask;
        if (slot == 0) return nullptr;
        uint8_t* block = heap + (slot - 1) * 16;
        // The link may be stale if another thread took the block meanwhile:
        // then the count in the head changed and the exchange fails.
        const uint64_t next = loadVolatile(reinterpret_cast<const uint64_t*>(block + 8)) & kOffsetMask;
        const uint64_t desired = next | ((head >> kHeapOffsetBits) + 1) << kHeapOffsetBits;
        const unsigned long long seen = atomicCAS(reinterpret_cast<unsigned long long*>(list), head, desired);
        if (seen == head) return block;
        head = seen;
    }
}

__device__ __forceinline__ void pushFree(State* st, uint32_t index, uint8_t* block) {
    uint64_t* list = &st->freeLists[index];
    const uint64_t slot = static_cast<uint64_t>(block - reinterpret_cast<uint8_t*>(st->heapAddress)) / 16 + 1;
    uint64_t head = loadVolatile(list);
    NVL_ROLLED
    for (;;) {
        storeVolatile(reinterpret_cast<uint64_t*>(block + 8), head & kOffsetMask);
        __threadfence();
        const uint64_t desired = slot | ((head >> kHeapOffsetBits) + 1) << kHeapOffsetBits;
        const unsigned long long seen = atomicCAS(reinterpret_cast<unsigned long long*>(list), head, desired);
        if (seen == head) return;
        head = seen;
    }
}

__device__ __forceinline__ uint8_t* bump(State* st, uint64_t bytes) {
    uint64_t top = loadVolatile(&st->heapTop);
    NVL_ROLLED
    for (;;) {
        if (top > st->heapBytes || bytes > st->heapBytes - top) return nullptr;
        const unsigned long long seen =
            atomicCAS(reinterpret_cast<unsigned long long*>(&st->heapTop), top, top + bytes);
        if (seen == top) return reinterpret_cast<uint8_t*>(st->heapAddress) + top;
        top = seen;
    }
}

}  // namespace

// ------------------------------------------------------------ entry points

extern "C" __device__ __noinline__ int nvl_devrt_vprintf(const char* format, const char* args) {
    if (!format) return -1;
    const uint32_t n = boundedLength(format);
    int consumed = 0;
    const bool kept = record(kRecordPrintf, [&](auto& sink) {
        consumed = walkFormat(format, n, reinterpret_cast<const uint8_t*>(args), sink);
    });
    return kept ? consumed : -2;
}

extern "C" __device__ __noinline__ void nvl_devrt_assertfail(const char* expression, const char* file, unsigned line,
                                                            const char* function, size_t) {
    if (!expression) expression = "";
    if (!file) file = "";
    if (!function) function = "";
    const uint32_t ne = boundedLength(expression), nf = boundedLength(file), nfn = boundedLength(function);
    // Every lane of the warp that failed together gets its message before the
    // trap stops the warp, as with libcuda (one line per thread, lowest lane
    // first): the lanes write their records in turn, then trap together.
    // Without this the first lane to win the ring traps the others before
    // they have written anything.
    const unsigned lanes = activeLanes(), me = 1u << laneId();
    NVL_ROLLED
    for (unsigned left = lanes; left != 0; left &= left - 1) {
        if ((left & (~left + 1)) == me) {
            record(kRecordAssert, [&](auto& sink) {
                sink.number(line);
                sink.number(blockIdx.x);
                sink.number(blockIdx.y);
                sink.number(blockIdx.z);
                sink.number(threadIdx.x);
                sink.number(threadIdx.y);
                sink.number(threadIdx.z);
                sink.string(file, nf);
                sink.string(function, nfn);
                sink.string(expression, ne);
            });
        }
        warpSync(lanes);
    }
    State* st = nvl_devrt_state;
    if (st) {
        storeSys32(&reinterpret_cast<HostBlock*>(st->hostBlock)->asserted, 1);
        __threadfence_system();
    }
    __trap();
}

extern "C" __device__ __noinline__ void* nvl_devrt_malloc(size_t bytes) {
    State* st = nvl_devrt_state;
    if (!st || bytes == 0 || bytes > st->heapBytes) return nullptr;
    const uint32_t k = classFor(bytes);
    if (k >= kHeapMinShift + kHeapClasses) return nullptr;
    uint8_t* block = popFree(st, k - kHeapMinShift);
    if (!block) block = bump(st, uint64_t{1} << k);
    if (!block) return nullptr;
    uint32_t* header = reinterpret_cast<uint32_t*>(block);
    header[0] = kHeapBlockMagic;
    header[1] = k;
    return block + kHeapHeaderBytes;
}

extern "C" __device__ __noinline__ void nvl_devrt_free(void* p) {
    State* st = nvl_devrt_state;
    if (!st || !p) return;
    uint8_t* block = static_cast<uint8_t*>(p) - kHeapHeaderBytes;
    const uint64_t heap = st->heapAddress;
    const uint64_t at = reinterpret_cast<uint64_t>(block);
    // Pointers malloc did not return are ignored.
    if (at < heap || at - heap >= st->heapBytes || (at - heap) % 16 != 0) return;
    uint32_t* header = reinterpret_cast<uint32_t*>(block);
    const uint32_t k = header[1];
    if (header[0] != kHeapBlockMagic || k < kHeapMinShift || k >= kHeapMinShift + kHeapClasses) return;
    header[0] = 0;  // a second free of the same block is ignored
    pushFree(st, k - kHeapMinShift, block);
}

// ------------------------------------------------------------ device-side launches

// libcudadevrt's cudaGetParameterBufferV2 / cudaLaunchDeviceV2 (what
// `kernel<<<...>>>` in device code becomes) pass their arguments on
// unchanged to the driver's cnpGetParameterBufferV2 / cnpLaunchDeviceV2
// (__cuda_syscall_cnpv2... in CDP2 code). The queue and the slots are laid
// out in lib/core/devrt_abi.h; the host starts the launches once the grid
// is done (core/device_launch.cpp).
namespace {

// dim3 as an argument: three 32-bit words, passed by value.
struct LaunchDim {
    unsigned x, y, z;
};

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ unsigned envReg3() {
    unsigned v;
    asm("mov.u32 %0, %%envreg3;" : "=r"(v));
    return v;
}
__device__ __forceinline__ unsigned envReg4() {
    unsigned v;
    asm("mov.u32 %0, %%envreg4;" : "=r"(v));
    return v;
}
__device__ __forceinline__ LaunchQueue* launchQueue() {
    static_assert(nvl::envreg::kLaunchQueueHigh == 3 && nvl::envreg::kLaunchQueueLow == 4, "envreg3/4 above");
    return reinterpret_cast<LaunchQueue*>(static_cast<uint64_t>(envReg3()) << 32 | envReg4());
}
__device__ __forceinline__ uint64_t atomicAddRelaxed(uint64_t* p, uint64_t v) {
    uint64_t old;
    asm volatile("atom.add.relaxed.gpu.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
}
#else
// The host build: what the test set for the calling thread.
inline thread_local LaunchQueue* hostLaunchQueue = nullptr;
inline LaunchQueue* launchQueue() { return hostLaunchQueue; }
inline uint64_t atomicAddRelaxed(uint64_t* p, uint64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
#endif

__device__ __forceinline__ LaunchSlot* slotAt(const LaunchQueue* q, uint64_t index) {
    return reinterpret_cast<LaunchSlot*>(q->slotsAddress + index * kLaunchSlotBytes);
}

}  // namespace

// ---- cudaGetLastError / cudaPeekAtLastError: per thread, in the queue's table.
namespace {

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ uint64_t gridId() {
    uint64_t v;
    asm("mov.u64 %0, %%gridid;" : "=l"(v));
    return v;
}
#else
inline thread_local uint64_t hostGridId = 1;
inline uint64_t gridId() { return hostGridId; }
#endif

// This thread's key (never 0: a free entry).
__device__ __forceinline__ uint64_t errorKey() {
    uint64_t k = gridId() * 0x9e3779b97f4a7c15ull;
    k ^= (static_cast<uint64_t>(blockIdx.z) << 42) ^ (static_cast<uint64_t>(blockIdx.y) << 26) ^ blockIdx.x;
    k = (k ^ (k >> 29)) * 0xbf58476d1ce4e5b9ull;
    k ^= (static_cast<uint64_t>(threadIdx.z) << 20) ^ (static_cast<uint64_t>(threadIdx.y) << 10) ^ threadIdx.x;
    k = (k ^ (k >> 32)) * 0x94d049bb133111ebull;
    return k ? k : 1;
}

// The i-th entry a key's probe visits.
__device__ __forceinline__ LastError* probe(LaunchQueue* q, uint64_t key, uint32_t i) {
    return &q->lastErrors[(static_cast<uint32_t>(key) + i) % kLastErrorEntries];
}

// The entry holding the key's error, or nullptr.
__device__ __forceinline__ LastError* entryOf(LaunchQueue* q, uint64_t key) {
    NVL_ROLLED
    for (uint32_t i = 0; i < kLastErrorProbes; ++i)
        if (loadVolatile(&probe(q, key, i)->key) == key) return probe(q, key, i);
    return nullptr;
}

}  // namespace

// libcudadevrt records a failed call's error (a cudaError_t) here, and 0 once
// cudaGetLastError read it. Its cudaLaunchDeviceV2 returns what this returns
// (seen in its SASS): the error.
extern "C" __device__ __noinline__ int nvl_devrt_set_last_error(int error) {
    LaunchQueue* q = launchQueue();
    if (!q) return error;
    const uint64_t key = errorKey();
    if (LastError* e = entryOf(q, key)) {
        if (error == 0) storeVolatile(&e->key, 0);  // read: the entry is free again
        else storeVolatile(&e->error, static_cast<uint64_t>(error));
        return error;
    }
    if (error == 0) return error;
    LastError* e = nullptr;
    NVL_ROLLED
    for (uint32_t i = 0; i < kLastErrorProbes && !e; ++i)
        if (atomicCAS(reinterpret_cast<unsigned long long*>(&probe(q, key, i)->key), 0, key) == 0) e = probe(q, key, i);
    if (!e) {
        // Every entry of the probe taken: the first one's thread loses its error.
        e = probe(q, key, 0);
        storeVolatile(&e->key, key);
    }
    storeVolatile(&e->error, static_cast<uint64_t>(error));
    return error;
}

extern "C" __device__ __noinline__ int nvl_devrt_get_last_error() {
    LaunchQueue* q = launchQueue();
    const LastError* e = q ? entryOf(q, errorKey()) : nullptr;
    return e ? static_cast<int>(loadVolatile(&e->error)) : 0;
}

extern "C" __device__ __noinline__ void* nvl_devrt_parameter_buffer(void* function, LaunchDim grid, LaunchDim block,
                                                                   unsigned sharedBytes) {
    LaunchQueue* q = launchQueue();
    if (!q || !function) return nullptr;
    const uint64_t index = atomicAddRelaxed(&q->taken, 1);
    // More pending launches than the limit: the overflow slot's buffer, which
    // cudaLaunchDeviceV2 refuses.
    if (index >= q->slots) return reinterpret_cast<uint8_t*>(slotAt(q, q->slots)) + kLaunchHeaderBytes;
    LaunchSlot* slot = slotAt(q, index);
    slot->function = reinterpret_cast<uint64_t>(function);
    slot->stream = 0;
    slot->grid[0] = grid.x;
    slot->grid[1] = grid.y;
    slot->grid[2] = grid.z;
    slot->block[0] = block.x;
    slot->block[1] = block.y;
    slot->block[2] = block.z;
    slot->sharedBytes = sharedBytes;
    slot->number = 0;
    return reinterpret_cast<uint8_t*>(slot) + kLaunchHeaderBytes;
}

extern "C" __device__ __noinline__ int nvl_devrt_launch(void* buffer, void* stream) {
    LaunchQueue* q = launchQueue();
    if (!q) return kCnpInvalidValue;
    // Only a buffer nvl_devrt_parameter_buffer handed out in this queue.
    const uint64_t at = reinterpret_cast<uint64_t>(buffer) - kLaunchHeaderBytes;
    if (at == reinterpret_cast<uint64_t>(slotAt(q, q->slots))) return kCnpPendingCountExceeded;
    // The slots span less than 4 GiB (DeviceLaunches::kMaxPendingLaunches):
    // 32-bit arithmetic (no 64-bit division, whose constants sm_80 code
    // would keep in a constant bank).
    const uint64_t taken = loadVolatile(&q->taken) < q->slots ? loadVolatile(&q->taken) : q->slots;
    if (at < q->slotsAddress || at - q->slotsAddress >= taken * kLaunchSlotBytes) return kCnpInvalidValue;
    const uint32_t offset = static_cast<uint32_t>(at - q->slotsAddress);
    if (offset % kLaunchSlotBytes != 0) return kCnpInvalidValue;
    LaunchSlot* slot = reinterpret_cast<LaunchSlot*>(at);
    if (slot->number != 0) return kCnpInvalidValue;  // launched before
    // The geometry the device takes (what the kernel allows is the host's to check).
    const uint32_t b0 = slot->block[0], b1 = slot->block[1], b2 = slot->block[2];
    if (slot->grid[0] == 0 || slot->grid[1] == 0 || slot->grid[2] == 0 || slot->grid[0] > 0x7fffffffu ||
        slot->grid[1] > 65535 || slot->grid[2] > 65535 || b0 == 0 || b1 == 0 || b2 == 0 || b0 > 1024 ||
        b1 > 1024 || b2 > 64 || b0 * b1 * b2 > 1024)
        return kCnpInvalidConfiguration;
    slot->stream = reinterpret_cast<uint64_t>(stream);
    const uint64_t number = atomicAddRelaxed(&q->launched, 1) + 1;
    // The parameters the caller wrote and the header, before the number.
    __threadfence_system();
    storeSys32(&slot->number, static_cast<uint32_t>(number));
    return kCnpSuccess;
}

// ---- Device-side streams: every launch runs in one order (the host's), so
// a stream is a name only.
extern "C" __device__ __noinline__ int nvl_devrt_stream_create(uint64_t* stream, unsigned) {
    LaunchQueue* q = launchQueue();
    if (!q || !stream) return kCnpInvalidValue;
    *stream = kDeviceStreamTag | (atomicAddRelaxed(&q->streams, 1) + 1);
    return kCnpSuccess;
}

extern "C" __device__ __noinline__ int nvl_devrt_stream_destroy(uint64_t stream) {
    return (stream & kDeviceStreamTag) ? kCnpSuccess : kCnpInvalidValue;
}

// ------------------------------------------------------------ cooperative groups

// libcudadevrt's cudaCGGetIntrinsicHandle and cudaCGSynchronize (what numba's
// grid groups call: it links libcudadevrt) end in two calls the driver
// resolves, __cuda_syscall_CGS_get_intrinsic_handle and
// __cuda_syscall_CGS_sync. A grid's handle is its cooperative workspace (the
// address in %envreg1:%envreg2 (common/envregs.h); 0 outside cooperative
// launches); the barrier is the one the cooperative_groups header's
// grid.sync() uses on the same workspace, so both may be mixed in a kernel.
#if defined(__CUDA_ARCH__)
namespace {

constexpr int kCgScopeGrid = 1;           // cudaCGScopeGrid
constexpr int kCgInvalidValue = 1;        // cudaErrorInvalidValue
constexpr uint32_t kBarrierFlip = 0x80000000u;

__device__ __forceinline__ uint64_t gridWorkspace() {
    uint32_t high, low;
    static_assert(nvl::envreg::kGridWorkspaceHigh == 1 && nvl::envreg::kGridWorkspaceLow == 2, "envreg1/2 below");
    asm("mov.u32 %0, %%envreg1;" : "=r"(high));
    asm("mov.u32 %0, %%envreg2;" : "=r"(low));
    return static_cast<uint64_t>(high) << 32 | low;
}

}  // namespace

extern "C" __device__ __noinline__ unsigned long long nvl_devrt_cg_handle(int scope) {
    return scope == kCgScopeGrid ? gridWorkspace() : 0;
}

extern "C" __device__ __noinline__ int nvl_devrt_cg_sync(unsigned long long handle, unsigned int) {
    if (handle == 0 || handle != gridWorkspace()) return kCgInvalidValue;
    // The workspace: u32 wsSize, then the barrier word. Every block's first
    // thread adds 1, block 0's adds what makes the top bit flip once all
    // blocks have arrived; each waits for the flip.
    uint32_t* barrier = reinterpret_cast<uint32_t*>(handle) + 1;
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        const uint32_t blocks = gridDim.x * gridDim.y * gridDim.z;
        const bool first = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
        const uint32_t add = first ? kBarrierFlip - (blocks - 1) : 1;
        uint32_t before, now;
        asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(before) : "l"(barrier), "r"(add) : "memory");
        NVL_ROLLED
        do {
            asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(barrier) : "memory");
        } while (((before ^ now) & kBarrierFlip) == 0);
    }
    __syncthreads();
    return 0;
}
#endif
