// cudart's integrity check (private table d4082055): cudart hands the driver
// a version and the time, the driver answers with a keyed hash of them, of
// itself (process, thread, where its tables are) and of the GPUs; cudart
// computes the same and refuses a driver whose answer differs.
//
// The hash is HMAC (RFC 2104) over MD2 (RFC 1319) with a fixed key; what is
// hashed, in which order, and the fixed answers to old versions are facts
// ZLUDA's dark_api records (github.com/vosen/ZLUDA, dark_api/src/lib.rs).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nvl::api::integrity {

// MD2 (RFC 1319), incremental.
class Md2 {
public:
    void update(const void* data, size_t size);
    // The 16-byte digest; the object is spent afterwards.
    void finish(uint8_t digest[16]);

private:
    void compress();

    uint8_t state_[48] = {};
    uint8_t checksum_[16] = {};
    uint8_t block_[16] = {};
    uint8_t last_ = 0;  // the checksum's running byte (RFC 1319's L)
    size_t used_ = 0;   // bytes of block_ filled
};

// HMAC-MD2 with a 16-byte key (one MD2 block) over 'parts' in order.
struct Bytes {
    const void* data;
    size_t size;
};
void hmacMd2(const uint8_t key[16], const Bytes* parts, size_t count, uint8_t mac[16]);

// What the driver mixes in besides the caller's arguments.
struct Inputs {
    uint32_t version;        // the caller's
    uint64_t unixSeconds;    // the caller's
    uint32_t driverVersion;  // cuDriverGetVersion's answer
    uint32_t process;        // getpid()
    uint32_t thread;         // pthread_self(), low 32 bits
    const void* cudartTable;     // CUDART_INTERFACE as cuGetExportTable gives it
    const void* integrityTable;  // this table
    const void* function;        // the integrity check's own slot value
};
// Per GPU, in ordinal order.
struct DeviceFacts {
    uint8_t uuid[16];
    int32_t pciDomain, pciBus, pciDevice;
};

// The two 64-bit words the integrity check answers.
void answer(const Inputs& in, const DeviceFacts* devices, size_t count, uint64_t out[2]);

}  // namespace nvl::api::integrity
