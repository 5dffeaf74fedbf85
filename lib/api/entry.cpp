// Running and tracing the entry points (entry.h).
#include "api/entry.h"

#include <cstdarg>
#include <cstdio>

namespace nvl::api::detail {

namespace {

// Appends printf-style text, truncating at the buffer's end.
void append(char* buf, size_t size, size_t& n, const char* fmt, ...) __attribute__((format(printf, 4, 5)));
void append(char* buf, size_t size, size_t& n, const char* fmt, ...) {
    if (n + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    const int k = std::vsnprintf(buf + n, size - n, fmt, ap);
    va_end(ap);
    if (k > 0) n = n + static_cast<size_t>(k) < size ? n + static_cast<size_t>(k) : size - 1;
}

// The argument list of a traced call, as text.
class ArgText {
public:
    void add(const Arg& a) {
        if (n_ > 0 && n_ + 2 < sizeof buf_) {
            buf_[n_++] = ',';
            buf_[n_++] = ' ';
            buf_[n_] = 0;
        }
        switch (a.kind) {
        case Arg::Kind::String:
            if (a.s)
                append(buf_, sizeof buf_, n_, "\"%.80s\"", a.s);
            else
                append(buf_, sizeof buf_, n_, "NULL");
            break;
        case Arg::Kind::Pointer:
            if (a.p)
                append(buf_, sizeof buf_, n_, "%p", a.p);
            else
                append(buf_, sizeof buf_, n_, "NULL");
            break;
        case Arg::Kind::Signed: append(buf_, sizeof buf_, n_, "%lld", a.i); break;
        case Arg::Kind::Unsigned: append(buf_, sizeof buf_, n_, "%llu", a.u); break;
        case Arg::Kind::Hex: append(buf_, sizeof buf_, n_, "0x%llx", a.u); break;
        case Arg::Kind::Double: append(buf_, sizeof buf_, n_, "%g", a.d); break;
        case Arg::Kind::Opaque: append(buf_, sizeof buf_, n_, "{...}"); break;
        }
    }
    const char* text() const { return buf_; }

private:
    char buf_[512] = {};
    size_t n_ = 0;
};

}  // namespace

CUresult run(Invoke invoke, void* body, bool perThread) noexcept {
    core::CallScope scope;
    try {
        if (perThread) {
            PerThreadScope defaultStream;
            return invoke(body);
        }
        return invoke(body);
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    } catch (...) {
        return CUDA_ERROR_UNKNOWN;
    }
}

CUresult runTraced(const char* name, Invoke invoke, void* body, bool perThread, const Arg* args, size_t count) noexcept {
    const uint64_t t0 = monotonicNs();
    const CUresult r = run(invoke, body, perThread);
    const uint64_t t1 = monotonicNs();
    ArgText text;
    for (size_t i = 0; i < count; i++) text.add(args[i]);
    trace::print("%s(%s) = %s (%.1f us)", name, text.text(), errorName(r), static_cast<double>(t1 - t0) / 1000.0);
    return r;
}

}  // namespace nvl::api::detail
