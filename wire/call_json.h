// Strict JSON straight into a protobuf message, in one pass: how the master reads a JSON Call.
#pragma once

#include <google/protobuf/message.h>

#include <string_view>

#include "common/status.h"

namespace harvest::wire {

// Deeper than any Call needs (about ten levels) and low enough that the recursive reader
// cannot exhaust the stack on hostile input.
inline constexpr int kMaxJsonDepth = 100;

// Reads `body` into `message` (which should be empty) by protobuf's JSON mapping, refusing
// what Mesos's parser refuses; see call_json.cpp for the rules. Errors say "malformed JSON at
// offset N: ..." for the syntax and "JSON is not a <Message>: ..." for the schema. On error
// `message` may hold part of the input: callers discard it.
Status readJsonMessage(std::string_view body, google::protobuf::Message* message);

}  // namespace harvest::wire
