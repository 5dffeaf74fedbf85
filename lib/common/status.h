// Errors as values.
//
// Every layer returns a Status (or a Result<T>) instead of throwing. The code
// is the CUresult libcuda would return; when the error came from the kernel
// driver, the RM/UVM status travels with it so traces can name it.
#pragma once

#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "common/assert.h"
#include "nvlite/cuda.h"

namespace nvl {

class [[nodiscard]] Status {
public:
    constexpr Status() = default;
    constexpr Status(CUresult code) : code_(code) {}  // NOLINT: implicit on purpose
    constexpr Status(CUresult code, uint32_t driverStatus, const char* where)
        : code_(code), driverStatus_(driverStatus), where_(where) {}

    constexpr bool ok() const { return code_ == CUDA_SUCCESS; }
    constexpr explicit operator bool() const { return ok(); }
    constexpr CUresult code() const { return code_; }
    // NV_STATUS from RM or UVM, 0 when the error did not come from the driver.
    // For a channel torn down by RM (hw::channelErrorStatus): the RC error
    // (Xid) from its error notifier, and where() is its ROBUST_CHANNEL_* name.
    constexpr uint32_t driverStatus() const { return driverStatus_; }
    // Static string naming the failing driver call, or nullptr.
    constexpr const char* where() const { return where_; }

private:
    CUresult code_ = CUDA_SUCCESS;
    uint32_t driverStatus_ = 0;
    const char* where_ = nullptr;
};

inline constexpr Status kOk{};

// A value or the error that prevented it. T need not be default-constructible.
// Reading the value of an error is a bug: checked builds stop there
// (NVL_ASSERT); code reads it only after ok() or through NVL_ASSIGN_OR_RETURN.
// (The value lives in a union rather than a std::optional: the same layout,
// a fraction of the debug information.)
template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : hasValue_(true) { ::new (static_cast<void*>(&value_)) T(std::move(value)); }  // NOLINT: implicit on purpose
    Result(Status status) : status_(status) {  // NOLINT: implicit on purpose
        // An error without its code would read as a value that is not there.
        NVL_ASSERT(!status_.ok());
        if (status_.ok()) status_ = Status(CUDA_ERROR_UNKNOWN);
    }
    Result(CUresult code) : Result(Status(code)) {}  // NOLINT: implicit on purpose
    Result(const Result& o) : hasValue_(o.hasValue_), status_(o.status_) {
        if (hasValue_) ::new (static_cast<void*>(&value_)) T(o.value_);
    }
    Result(Result&& o) noexcept(std::is_nothrow_move_constructible_v<T>) : hasValue_(o.hasValue_), status_(o.status_) {
        if (hasValue_) ::new (static_cast<void*>(&value_)) T(std::move(o.value_));
    }
    Result& operator=(Result o) {
        reset();
        status_ = o.status_;
        if (o.hasValue_) {
            ::new (static_cast<void*>(&value_)) T(std::move(o.value_));
            hasValue_ = true;
        }
        return *this;
    }
    ~Result() { reset(); }

    // Whether it holds a value (then status() is kOk).
    bool ok() const { return hasValue_; }
    explicit operator bool() const { return ok(); }
    const Status& status() const { return status_; }
    T& value() {
        NVL_ASSERT(ok());
        return value_;
    }
    const T& value() const {
        NVL_ASSERT(ok());
        return value_;
    }
    T& operator*() { return value(); }
    T* operator->() { return &value(); }

private:
    void reset() {
        if (hasValue_) value_.~T();
        hasValue_ = false;
    }

    union {
        T value_;
    };
    bool hasValue_ = false;
    Status status_{};
};

}  // namespace nvl

// Return early with the status of a failed call.
#define NVL_TRY(expr)                                  \
    do {                                               \
        ::nvl::Status nvl_try_status_ = (expr);        \
        if (!nvl_try_status_.ok()) return nvl_try_status_; \
    } while (0)

// Assign the value of a Result or return its status.
#define NVL_CONCAT_INNER(a, b) a##b
#define NVL_CONCAT(a, b) NVL_CONCAT_INNER(a, b)
#define NVL_ASSIGN_OR_RETURN(lhs, expr)                                  \
    auto NVL_CONCAT(nvl_result_, __LINE__) = (expr);                      \
    if (!NVL_CONCAT(nvl_result_, __LINE__).ok())                          \
        return NVL_CONCAT(nvl_result_, __LINE__).status();                \
    lhs = std::move(NVL_CONCAT(nvl_result_, __LINE__).value())
