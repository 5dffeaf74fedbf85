// Tracing of the entry points (entry.h).
#include "api/entry.h"

#include <cstdarg>
#include <cstdio>

namespace nvl::api::detail {

void ArgText::next() {
    if (n_ > 0 && n_ + 2 < sizeof buf_) {
        buf_[n_++] = ',';
        buf_[n_++] = ' ';
        buf_[n_] = 0;
    }
}

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
}  // namespace

void ArgText::add(const char* s) {
    next();
    if (s)
        append(buf_, sizeof buf_, n_, "\"%.80s\"", s);
    else
        append(buf_, sizeof buf_, n_, "NULL");
}

void ArgText::add(const void* p) {
    next();
    if (p)
        append(buf_, sizeof buf_, n_, "%p", p);
    else
        append(buf_, sizeof buf_, n_, "NULL");
}

void ArgText::add(long long v) {
    next();
    append(buf_, sizeof buf_, n_, "%lld", v);
}

void ArgText::add(unsigned long long v, bool hex) {
    next();
    append(buf_, sizeof buf_, n_, hex ? "0x%llx" : "%llu", v);
}

void ArgText::add(double v) {
    next();
    append(buf_, sizeof buf_, n_, "%g", v);
}

void ArgText::opaque() {
    next();
    append(buf_, sizeof buf_, n_, "{...}");
}

void traceCall(const char* name, const char* args, CUresult r, uint64_t ns) {
    trace::print("%s(%s) = %s (%.1f us)", name, args, errorName(r), static_cast<double>(ns) / 1000.0);
}

}  // namespace nvl::api::detail
