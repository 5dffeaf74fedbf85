// The host side of nvlite's device runtime for one context: the printf
// FIFO, the device heap behind malloc/free, the two limits that size them
// (CU_LIMIT_PRINTF_FIFO_SIZE, CU_LIMIT_MALLOC_HEAP_SIZE), and what a failed
// device assert means (layouts in core/devrt_abi.h).
//
// Nothing is allocated until the first module that calls the runtime is
// placed (the heap: until the first whose kernels call malloc or free); from
// then on every such module points at this context's State.
// As in libcuda, the limits can change until a kernel that uses the FIFO
// (printf, assert) or the heap (malloc, free) has been launched; later
// changes are CUDA_ERROR_INVALID_VALUE.
//
// flush() prints the complete FIFO records to stdout; the context calls it
// at synchronising points (context, stream and event synchronisation,
// blocking copies, module loads, teardown), as libcuda prints at those.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "common/status.h"
#include "core/devrt_abi.h"
#include "core/printf_fifo.h"
#include "hw/gpu_memory.h"

namespace nvl::core {

class Context;

class DeviceRuntime {
public:
    // libcuda's defaults.
    // libcuda 580's defaults, and the smallest values its cuCtxSetLimit
    // raises smaller ones to (seen on the H200; the API layer applies them).
    static constexpr size_t kDefaultFifoBytes = 8650752;
    static constexpr size_t kDefaultHeapBytes = 8u << 20;
    static constexpr size_t kMinFifoBytes = 512u << 10;
    static constexpr size_t kMinHeapBytes = 4u << 20;

    explicit DeviceRuntime(Context& ctx) : ctx_(ctx) {}
    ~DeviceRuntime();
    DeviceRuntime(const DeviceRuntime&) = delete;
    DeviceRuntime& operator=(const DeviceRuntime&) = delete;

    size_t fifoLimit() const { return fifoLimit_.load(std::memory_order_acquire); }
    size_t heapLimit() const { return heapLimit_.load(std::memory_order_acquire); }
    // cuCtxSetLimit: CUDA_ERROR_INVALID_VALUE once a kernel using it was
    // launched (or for a heap beyond what the runtime can address);
    // CUDA_ERROR_OUT_OF_MEMORY when the new buffer cannot be had.
    Status setFifoLimit(size_t bytes);
    Status setHeapLimit(size_t bytes);

    // The device address of the State a module being placed points at.
    // Makes the State and the FIFO the first time, the heap the first time
    // 'uses' (loader::DevrtUse bits of the module's kernels) has kDevrtHeap.
    Result<uint64_t> stateAddress(uint8_t uses);
    // A kernel that uses 'uses' (loader::DevrtUse bits) is being launched.
    void noteLaunch(uint8_t uses) {
        if ((launched_.load(std::memory_order_acquire) & uses) != uses) noteFirstLaunch(uses);
    }
    // Prints the FIFO's complete records (to stdout, or the output set below).
    void flush();
    // Whether a device assert failed since the buffers were made (flushes first).
    bool asserted();
    // Frees the buffers (context teardown, the GPU idle); limits go back to
    // their defaults.
    void release();

    // What the buffers are (tests, traces): null pointers before stateAddress(),
    // heap 0 before a module calling malloc/free (or with a limit of 0).
    struct Buffers {
        devrt::HostBlock* host = nullptr;
        uint8_t* ring = nullptr;
        uint64_t ringBytes = 0;
        uint64_t state = 0;      // device address of the State
        devrt::State* stateCpu = nullptr;  // its CPU view
        uint64_t heap = 0, heapBytes = 0;
    };
    Buffers buffers();
    // Where flush() writes (nullptr: stdout). Tests.
    void setOutput(fifo::Output* out);

private:
    void noteFirstLaunch(uint8_t uses);
    Status allocate();
    Result<std::unique_ptr<hw::GpuMemory>> makeRing(size_t limit, uint64_t* ringBytes);
    Status makeHeap(size_t limit);
    // Device-visible State updates, each of the fields it names only: a
    // kernel using the other part may be running.
    void writeRing();
    void writeHeap();
    void drainLocked();

    Context& ctx_;
    std::mutex mutex_;
    std::atomic<size_t> fifoLimit_{kDefaultFifoBytes};
    std::atomic<size_t> heapLimit_{kDefaultHeapBytes};
    std::atomic<uint8_t> launched_{0};
    std::atomic<bool> ready_{false};
    uint64_t stateVa_ = 0;
    devrt::State* stateCpu_ = nullptr;
    std::unique_ptr<hw::GpuMemory> host_;  // HostBlock, then the ring
    uint64_t ringBytes_ = 0;
    bool heapMade_ = false;
    uint64_t heapVa_ = 0;
    uint64_t heapBytes_ = 0;
    bool stuckReported_ = false;
    fifo::Output* output_ = nullptr;
};

}  // namespace nvl::core
