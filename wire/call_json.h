// The JSON pre-pass of a scheduler Call: strict RFC 8259 checking and a rewrite that
// protobuf's JSON parser then reads (see call_json.cpp for the rules).
#pragma once

#include <google/protobuf/descriptor.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace harvest::wire {

// Deeper than any Call needs (about ten levels) and low enough that the recursive pre-pass
// cannot exhaust the stack on hostile input.
inline constexpr int kMaxJsonDepth = 100;

// `body` checked against the schema rooted at `root` and rewritten for protobuf's parser, or
// what is wrong with it.
Result<std::string> normalizeCallJson(std::string_view body,
                                      const google::protobuf::Descriptor* root);

}  // namespace harvest::wire
