#include "testing/common.h"

#include <glog/logging.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "resources/parse.h"

namespace harvest::testkit {

Resources R(std::string_view text) {
  Result<Resources> parsed = parseResources(text);
  CHECK(parsed.ok()) << parsed.message();
  return *parsed;
}

Resources resourcesOf(const ResourceProtos& protos) {
  Result<Resources> resources = fromProto(protos);
  EXPECT_TRUE(resources.ok()) << resources.message();
  return resources.ok() ? *resources : Resources();
}

int64_t millisSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

Duration remaining(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - Clock::now()).count();
  return std::max(Duration::zero(), Duration::nanoseconds(left));
}

TempFile::TempFile(const std::string& name, const std::string& content)
    : path_(::testing::TempDir() + "harvest_test_" + std::to_string(::getpid()) + "_" + name) {
  std::ofstream out(path_);
  out << content;
}

TempFile::~TempFile() {
  std::remove(path_.c_str());
}

}  // namespace harvest::testkit
