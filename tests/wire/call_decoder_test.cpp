// CallDecoder: a reused Call must decode every call exactly as a fresh one would, with nothing
// left over from the call before it, and give the same refusals.
#include "wire/call_decoder.h"

#include <string>

#include "codec_test_support.h"

namespace harvest::wire {
namespace {

const std::string kFramework =
    R"("framework_id": {"value": "3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-0001"})";

std::string acceptWithOffers(int offers) {
  std::string ids;
  for (int i = 0; i < offers; ++i) {
    ids += (i == 0 ? "" : ",") + std::string(R"({"value": "3c5f5e05-1b2c-4f6e-9f5a-O)") +
           std::to_string(i) + "\"}";
  }
  return "{" + kFramework + R"(, "type": "ACCEPT", "accept": {"offer_ids": [)" + ids +
         R"(], "operations": [{"type": "LAUNCH", "launch": {"task_infos": [{"name": "web",
         "task_id": {"value": "web-1"}, "agent_id": {"value": "agent-with-a-long-identifier-S7"},
         "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.5}}]}]}}],
         "filters": {"refuse_seconds": 5.0}}})";
}

const std::string kDecline = "{" + kFramework + R"(, "type": "DECLINE",
    "decline": {"offer_ids": [{"value": "O-1"}, {"value": "O-2"}]}})";

const std::string kRevive = "{" + kFramework + R"(, "type": "REVIVE"})";

void expectDecodesAsFresh(CallDecoder& decoder, std::string_view contentType,
                          const std::string& body) {
  const HttpResult<Call> fresh = decodeCall(contentType, body);
  ASSERT_TRUE(fresh.ok()) << fresh.message();
  const HttpResult<Format> reused = decoder.decode(contentType, body);
  ASSERT_TRUE(reused.ok()) << reused.message();
  EXPECT_EQ(*reused, contentType == kJson ? Format::kJson : Format::kProtobuf);
  EXPECT_TRUE(MessageDifferencer::Equals(*fresh, decoder.call()))
      << "reused:\n"
      << decoder.call().DebugString() << "fresh:\n"
      << fresh->DebugString();
}

TEST(CallDecoderTest, EachCallDecodesAsIntoAFreshMessage) {
  CallDecoder decoder;
  const std::string accept = acceptWithOffers(3);
  // Larger calls before smaller ones: whatever the first left in the message must not show.
  expectDecodesAsFresh(decoder, kJson, accept);
  expectDecodesAsFresh(decoder, kJson, kDecline);
  expectDecodesAsFresh(decoder, kJson, kRevive);
  expectDecodesAsFresh(decoder, kJson, acceptWithOffers(1));
  expectDecodesAsFresh(decoder, kProtobuf, decodeCall(kJson, accept)->SerializeAsString());
  expectDecodesAsFresh(decoder, kProtobuf, decodeCall(kJson, kRevive)->SerializeAsString());
}

TEST(CallDecoderTest, RefusesAsDecodeCallDoes) {
  CallDecoder decoder;
  expectDecodesAsFresh(decoder, kJson, kDecline);
  const std::string noFramework = R"({"type": "DECLINE", "decline": {"offer_ids": []}})";
  for (const auto& [contentType, body] :
       {std::pair<std::string_view, std::string>{kJson, noFramework},
        {kJson, "{" + kFramework + R"(, "type": "ACKNOWLEDGE", "acknowledge": {
            "agent_id": {"value": "a"}, "task_id": {"value": "t"}, "uuid": "AAAA"}})"},
        {kJson, "{"},
        {"text/plain", kDecline},
        {kProtobuf, "\xff\xff"}}) {
    const HttpResult<Call> fresh = decodeCall(contentType, body);
    const HttpResult<Format> reused = decoder.decode(contentType, body);
    ASSERT_FALSE(fresh.ok());
    ASSERT_FALSE(reused.ok()) << body;
    EXPECT_EQ(reused.httpStatus(), fresh.httpStatus()) << body;
    EXPECT_EQ(reused.message(), fresh.message());
  }
  EXPECT_EQ(decoder.decode(kJson, noFramework).message(), "DECLINE call without 'framework_id'");
  // A refusal leaves nothing behind for the next call either.
  expectDecodesAsFresh(decoder, kJson, kRevive);
}

// What a large call grew is dropped at the next call instead of being kept for reuse.
TEST(CallDecoderTest, ALargeCallsMemoryIsNotKept) {
  const std::string large = acceptWithOffers(2000);
  ASSERT_GT(large.size(), CallDecoder::kMaxReusedBodyBytes);
  CallDecoder decoder;
  ASSERT_TRUE(decoder.decode(kJson, large).ok());
  EXPECT_EQ(decoder.call().accept().offer_ids_size(), 2000);
  ASSERT_TRUE(decoder.decode(kJson, kRevive).ok());
  EXPECT_EQ(decoder.call().SpaceUsedLong(), decodeCall(kJson, kRevive)->SpaceUsedLong());
}

}  // namespace
}  // namespace harvest::wire
