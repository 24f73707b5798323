// What every fuzz target shares: quiet logs, a failed invariant as a crash libFuzzer keeps, and
// the comparison of a message with its round trip.
#pragma once

#include <glog/logging.h>
#include <google/protobuf/message.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace harvest::fuzz {

// Code under test logs what it refuses; at thousands of inputs a second that is all the
// fuzzer would do. Fatal messages (a CHECK failing) still print.
inline void quietLogs() {
  FLAGS_minloglevel = google::GLOG_FATAL;
}

// An invariant does not hold: abort, so libFuzzer records the input as a crash with a stack.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

// Field by field, as a round trip through another encoding must keep a message: a NaN
// (failover_timeout, say) equals a NaN, and map entries match by key whatever their order.
inline bool sameMessage(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  return differencer.Compare(a, b);
}

inline std::string_view asText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// True when `text` would be read as inline JSON rather than as a file path by the loaders
// that accept either (modules manifests, scenarios): the fuzzer must never make them open
// files.
inline bool looksInline(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

}  // namespace harvest::fuzz
