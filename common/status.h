// Status and Result<T>: errors returned as values.
//
// Bad input from a framework, an agent or a file must never crash the process; every API that
// can refuse returns one of these, with a message that names what was wrong.
#pragma once

#include <glog/logging.h>

#include <optional>
#include <string>
#include <utility>

namespace harvest {

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK.
  static Status error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !message_.has_value(); }
  // Empty for OK.
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design, like expected.
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    CHECK(!status_.ok()) << "a Result built from a Status must carry an error";
  }
  static Result error(std::string message) { return Result(Status::error(std::move(message))); }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
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
