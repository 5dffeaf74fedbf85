// What an API call holds while it runs, so that a destroy racing it on
// another thread never frees what it is using (issue 9).
//
// Two kinds of holds, both released when the call returns:
//  - references to handle objects it looked up (CallScope::keep): the object
//    stays valid however soon its handle is destroyed;
//  - passes through the Gate of a context or module whose resources it uses
//    (CallScope::use): cuCtxDestroy / cuModuleUnload close the gate (new
//    passes are refused: CUDA_ERROR_CONTEXT_IS_DESTROYED or
//    CUDA_ERROR_INVALID_HANDLE), wait for the passes already given, and only
//    then free channels, memory and code.
//
// entry() (lib/api/entry.h) opens one CallScope per API call; scopes nest.
// Outside any call (unit tests of the core) keep() holds nothing and use()
// only checks that the gate is open.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace nvl::core {

// A context's or module's resources: open while they may be used.
class Gate {
public:
    bool isOpen() const { return open_.load(std::memory_order_seq_cst); }
    // A pass: false (nothing held) when the gate is closed.
    bool enter();
    void leave();

protected:
    void open() { open_.store(true, std::memory_order_seq_cst); }
    // Refuses new passes and waits until the passes of other threads are
    // gone (the calling thread's own stay counted: it is the one closing).
    // False when it was closed already.
    bool close();

private:
    std::atomic<bool> open_{false};
    std::atomic<int64_t> passes_{0};
    std::atomic<int> closing_{0};
};

class CallScope {
public:
    CallScope() noexcept;
    ~CallScope();
    CallScope(const CallScope&) = delete;
    CallScope& operator=(const CallScope&) = delete;

    // Holds 'ref' until the thread's outermost scope ends (the API call returns).
    static void keep(std::shared_ptr<const void> ref);
    // A pass through 'gate' until the thread's outermost scope ends; false
    // when it is closed. The caller keeps the gate's object alive meanwhile
    // (a reference it holds, or one kept).
    static bool use(Gate& gate);
    // Passes through 'gate' the calling thread holds.
    static int64_t passesHeld(const Gate& gate);
};

}  // namespace nvl::core
