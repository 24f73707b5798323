// What every network test needs: where the master listens, how long to wait, resources from
// text, and files that live for one test.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/time.h"
#include "resources/proto/convert.h"
#include "resources/resources.h"

namespace harvest::testkit {

using Clock = std::chrono::steady_clock;

inline constexpr const char* kHost = "127.0.0.1";
inline constexpr Duration kTimeout = Duration::seconds(1);
inline constexpr const char* kJsonType = "application/json";
inline constexpr const char* kProtobufType = "application/x-protobuf";

// Parsed resources; the text must be valid.
Resources R(std::string_view text);
// Resources of a Resource list; a test failure (and empty) when they do not convert.
Resources resourcesOf(const ResourceProtos& protos);

int64_t millisSince(Clock::time_point start);
// The time until `deadline`, zero once it has passed.
Duration remaining(Clock::time_point deadline);

// A file that exists for one test.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& content);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace harvest::testkit
