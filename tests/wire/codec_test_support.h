// What the codec tests share: decoding a document example and checking it, and refusals.
#pragma once

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "wire/scheduler_codec.h"

namespace harvest::wire {

using google::protobuf::TextFormat;
using google::protobuf::util::MessageDifferencer;
using v1::scheduler::Call;
using v1::scheduler::Event;

inline constexpr std::string_view kJson = "application/json";
inline constexpr std::string_view kProtobuf = "application/x-protobuf";

template <typename M>
M fromText(const std::string& text) {
  M message;
  EXPECT_TRUE(TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

// Decodes `json`, checks it equals `expectedText` exactly, and that the binary form of the
// result decodes to the same Call.
inline void expectDecodes(std::string_view json, const std::string& expectedText) {
  const Call expected = fromText<Call>(expectedText);
  const HttpResult<Call> decoded = decodeCall(kJson, json);
  ASSERT_TRUE(decoded.ok()) << decoded.message();
  EXPECT_TRUE(MessageDifferencer::Equals(expected, *decoded))
      << "got:\n"
      << decoded->DebugString() << "expected:\n"
      << expected.DebugString();

  const HttpResult<Call> binary = decodeCall(kProtobuf, decoded->SerializeAsString());
  ASSERT_TRUE(binary.ok()) << binary.message();
  EXPECT_TRUE(MessageDifferencer::Equals(expected, *binary)) << binary->DebugString();
}

inline void expectRefused(std::string_view contentType, std::string_view body, HttpStatus status,
                          std::string_view messagePart) {
  const HttpResult<Call> decoded = decodeCall(contentType, body);
  ASSERT_FALSE(decoded.ok()) << "accepted: " << decoded->DebugString();
  EXPECT_EQ(decoded.httpStatus(), status) << decoded.message();
  EXPECT_EQ(decoded.httpCode(), static_cast<int>(status));
  EXPECT_NE(decoded.message().find(messagePart), std::string::npos)
      << "message '" << decoded.message() << "' lacks '" << messagePart << "'";
}

inline void expectJsonRefused(std::string_view body, std::string_view messagePart) {
  expectRefused(kJson, body, HttpStatus::kBadRequest, messagePart);
}

}  // namespace harvest::wire
