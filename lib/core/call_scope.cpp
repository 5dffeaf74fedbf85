#include "core/call_scope.h"

#include <vector>

#include "core/thread_state.h"

namespace nvl::core {

namespace {

struct Holds {
    int depth = 0;
    std::vector<std::shared_ptr<const void>> refs;
    std::vector<Gate*> passes;
};

// What the thread's calls hold: it outlives the thread's thread_local
// destructors and, on the main thread, exit()'s (cudart's atexit teardown
// makes API calls; core/thread_state.h).
Holds& threadHolds() { return ThreadState<Holds>::get(); }

}  // namespace

bool Gate::enter() {
    // Dekker's pattern with close(): either the closer sees this pass or
    // this pass sees the gate closed (both sequentially consistent).
    passes_.fetch_add(1, std::memory_order_seq_cst);
    if (open_.load(std::memory_order_seq_cst)) return true;
    leave();
    return false;
}

void Gate::leave() {
    passes_.fetch_sub(1, std::memory_order_seq_cst);
    // Only a closer waits; the common case costs no system call.
    if (closing_.load(std::memory_order_seq_cst)) passes_.notify_all();
}

bool Gate::close() {
    if (!open_.exchange(false, std::memory_order_seq_cst)) return false;
    closing_.fetch_add(1, std::memory_order_seq_cst);
    const int64_t own = CallScope::passesHeld(*this);
    for (int64_t n = passes_.load(std::memory_order_seq_cst); n > own; n = passes_.load(std::memory_order_seq_cst))
        passes_.wait(n, std::memory_order_seq_cst);
    closing_.fetch_sub(1, std::memory_order_seq_cst);
    return true;
}

CallScope::CallScope() noexcept { ++threadHolds().depth; }

CallScope::~CallScope() {
    Holds& h = threadHolds();
    if (--h.depth > 0) return;
    // The outermost call of the thread ends: everything goes, passes first.
    while (!h.passes.empty()) {
        Gate* g = h.passes.back();
        h.passes.pop_back();
        g->leave();
    }
    h.refs.clear();
}

void CallScope::keep(std::shared_ptr<const void> ref) {
    Holds& h = threadHolds();
    if (h.depth > 0 && ref) h.refs.push_back(std::move(ref));
}

bool CallScope::use(Gate& gate) {
    Holds& h = threadHolds();
    if (h.depth == 0) return gate.isOpen();
    // A gate the call already passed (a launch: the context, for its stream
    // and again for its function's module) is not entered twice: the pass
    // held keeps the object; the answer is the one enter() would give.
    for (const Gate* g : h.passes)
        if (g == &gate) return gate.isOpen();
    if (!gate.enter()) return false;
    h.passes.push_back(&gate);
    return true;
}

int64_t CallScope::passesHeld(const Gate& gate) {
    int64_t n = 0;
    for (const Gate* g : threadHolds().passes)
        if (g == &gate) ++n;
    return n;
}

}  // namespace nvl::core
