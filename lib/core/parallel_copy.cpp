#include "core/parallel_copy.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace nvl::core {
namespace {

constexpr size_t kMinParallel = 1u << 20;  // below this one thread is faster
constexpr size_t kMinPiece = 256u << 10;
constexpr unsigned kMaxThreads = 8;

// A fixed set of threads that take pieces of one copy at a time.
class CopyWorkers {
public:
    static CopyWorkers& get() {
        static CopyWorkers* workers = new CopyWorkers();  // lives until exit; threads are detached
        return *workers;
    }

    unsigned threads() const { return static_cast<unsigned>(threads_.size()); }

    // Runs pieces [1, pieces) on the workers and piece 0 on the caller.
    void run(uint8_t* dst, const uint8_t* src, size_t n, unsigned pieces) {
        std::unique_lock job(jobMutex_);  // one parallel copy at a time
        const size_t step = ((n + pieces - 1) / pieces + 63) & ~size_t(63);  // pieces * step >= n
        {
            std::lock_guard lock(mutex_);
            dst_ = dst;
            src_ = src;
            n_ = n;
            step_ = step;
            next_ = 1;
            pieces_ = pieces;
            pending_ = pieces - 1;
            ++generation_;
        }
        wake_.notify_all();
        copyPiece(dst, src, n, step, 0);
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return pending_ == 0; });
    }

private:
    CopyWorkers() {
        unsigned hw = std::thread::hardware_concurrency();
        unsigned count = hw > 1 ? std::min(hw - 1, kMaxThreads - 1) : 0;
        for (unsigned i = 0; i < count; ++i) {
            threads_.emplace_back([this] { loop(); });
            threads_.back().detach();
        }
    }

    static void copyPiece(uint8_t* dst, const uint8_t* src, size_t n, size_t step, unsigned i) {
        const size_t begin = std::min(n, step * i);
        const size_t end = std::min(n, begin + step);
        if (end > begin) std::memcpy(dst + begin, src + begin, end - begin);
    }

    void loop() {
        uint64_t seen = 0;
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return generation_ != seen && next_ < pieces_; });
            seen = generation_;
            while (next_ < pieces_) {
                const unsigned i = next_++;
                uint8_t* dst = dst_;
                const uint8_t* src = src_;
                const size_t n = n_, step = step_;
                lock.unlock();
                copyPiece(dst, src, n, step, i);
                lock.lock();
                if (--pending_ == 0) done_.notify_one();
            }
        }
    }

    std::vector<std::thread> threads_;
    std::mutex jobMutex_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    uint8_t* dst_ = nullptr;
    const uint8_t* src_ = nullptr;
    size_t n_ = 0, step_ = 0;
    unsigned next_ = 0, pieces_ = 0, pending_ = 0;
    uint64_t generation_ = 0;
};

}  // namespace

void parallelMemcpy(void* dst, const void* src, size_t n) {
    if (n < kMinParallel) {
        std::memcpy(dst, src, n);
        return;
    }
    CopyWorkers& w = CopyWorkers::get();
    const unsigned pieces = static_cast<unsigned>(std::min<size_t>(w.threads() + 1, n / kMinPiece));
    if (pieces <= 1) {
        std::memcpy(dst, src, n);
        return;
    }
    w.run(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), n, pieces);
}

}  // namespace nvl::core
