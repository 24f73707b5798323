// Status and Result<T>: errors returned as values.
//
// Bad input from a framework, an agent or a file must never crash the process; every API that
// can refuse returns one of these, with a code callers branch on and a message for people
// that names what was wrong. Never branch on the message.
#pragma once

#include <glog/logging.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace harvest {

enum class StatusCode : uint8_t {
  kOk,
  kInvalidArgument,     // The input is wrong whatever the state: fix the request.
  kFailedPrecondition,  // The input is fine but the state refuses it now (wrong state, or an id
                        // the callee must have been told of first, as the allocator's are).
  kNotFound,            // A file, or a thing a caller names by name or id, does not exist.
  kPermissionDenied,    // The caller may not do this.
  kCorruption,          // Stored bytes do not decode: a damaged or foreign file.
  kIOError,             // The operating system refused a read or write.
  kUnauthenticated,     // The caller did not say who it is, or its credentials are wrong.
  kUnavailable,         // A peer cannot be reached or went away: trying later may work.
  kDeadlineExceeded,    // A wait ran out of time before the answer came.
  kInternal,            // A bug: a state the code holds can never be reached.
};
const char* toString(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK.
  // Malformed input: bad syntax, a value out of range, fields that contradict each other.
  static Status invalidArgument(std::string message) {
    return Status(StatusCode::kInvalidArgument, std::move(message));
  }
  static Status failedPrecondition(std::string message) {
    return Status(StatusCode::kFailedPrecondition, std::move(message));
  }
  static Status notFound(std::string message) {
    return Status(StatusCode::kNotFound, std::move(message));
  }
  static Status permissionDenied(std::string message) {
    return Status(StatusCode::kPermissionDenied, std::move(message));
  }
  static Status corruption(std::string message) {
    return Status(StatusCode::kCorruption, std::move(message));
  }
  static Status ioError(std::string message) {
    return Status(StatusCode::kIOError, std::move(message));
  }
  static Status unauthenticated(std::string message) {
    return Status(StatusCode::kUnauthenticated, std::move(message));
  }
  static Status unavailable(std::string message) {
    return Status(StatusCode::kUnavailable, std::move(message));
  }
  static Status deadlineExceeded(std::string message) {
    return Status(StatusCode::kDeadlineExceeded, std::move(message));
  }
  static Status internal(std::string message) {
    return Status(StatusCode::kInternal, std::move(message));
  }

  // The same refusal with `context` (where it happened) put before its message: a caller that
  // passes a refusal on keeps the code that says what went wrong.
  Status prefixed(const std::string& context) const {
    CHECK(!ok()) << "only a refusal has a message to prefix";
    return Status(code_, context + message_);
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // Empty for OK.
  const std::string& message() const { return message_; }

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design, like expected.
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    CHECK(!status_.ok()) << "a Result built from a Status must carry an error";
  }
  static Result invalidArgument(std::string message) {
    return Result(Status::invalidArgument(std::move(message)));
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  StatusCode code() const { return status_.code(); }
  const std::string& message() const { return status_.message(); }
  const T& value() const& {
    CHECK(ok()) << "value() of a failed Result: " << status_.message();
    return *value_;
  }
  T&& value() && {
    CHECK(ok()) << "value() of a failed Result: " << status_.message();
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace harvest
