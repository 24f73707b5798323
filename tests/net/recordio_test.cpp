// RecordIO: encoding, round trips split at every byte, limits and malformed lengths.
#include "net/recordio.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace harvest::http {
namespace {

std::vector<std::string> sampleRecords() {
  return {"{\"type\":\"SUBSCRIBED\"}", "",   "x", std::string("bin\0ary\n12\n", 11),
          std::string(300, 'r'),       "9\n"};
}

std::string encodeAll(const std::vector<std::string>& records) {
  std::string stream;
  for (const std::string& record : records) stream += encodeRecord(record);
  return stream;
}

TEST(HttpRecordIOTest, Encode) {
  EXPECT_EQ(encodeRecord("hello"), "5\nhello");
  EXPECT_EQ(encodeRecord(""), "0\n");
  EXPECT_EQ(encodeRecord(std::string(1234, 'a')), "1234\n" + std::string(1234, 'a'));
}

TEST(HttpRecordIOTest, RoundTripWhole) {
  RecordDecoder decoder;
  std::vector<std::string> records;
  ASSERT_TRUE(decoder.feed(encodeAll(sampleRecords()), &records).ok());
  EXPECT_EQ(records, sampleRecords());
  EXPECT_FALSE(decoder.midRecord());
}

TEST(HttpRecordIOTest, RoundTripSplitAtEveryBoundary) {
  std::string stream = encodeAll(sampleRecords());
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    RecordDecoder decoder;
    std::vector<std::string> records;
    ASSERT_TRUE(decoder.feed(stream.substr(0, cut), &records).ok());
    ASSERT_TRUE(decoder.feed(stream.substr(cut), &records).ok());
    EXPECT_EQ(records, sampleRecords()) << "split at " << cut;
  }
  RecordDecoder bytewise;
  std::vector<std::string> records;
  for (char c : stream) ASSERT_TRUE(bytewise.feed(std::string_view(&c, 1), &records).ok());
  EXPECT_EQ(records, sampleRecords());
}

TEST(HttpRecordIOTest, MidRecordTellsAStreamWasCutShort) {
  RecordDecoder decoder;
  std::vector<std::string> records;
  ASSERT_TRUE(decoder.feed("1", &records).ok());
  EXPECT_TRUE(decoder.midRecord());
  ASSERT_TRUE(decoder.feed("0\nabc", &records).ok());
  EXPECT_TRUE(decoder.midRecord());
  EXPECT_TRUE(records.empty());
  ASSERT_TRUE(decoder.feed("defghij", &records).ok());
  EXPECT_FALSE(decoder.midRecord());
  EXPECT_EQ(records, std::vector<std::string>{"abcdefghij"});
}

TEST(HttpRecordIOTest, MalformedLengths) {
  for (std::string bad : {"x\n", "\n", "5x\n", "-1\n", " 5\n", "5 \n", "0x10\n", "5\r\nhello"}) {
    RecordDecoder decoder;
    std::vector<std::string> records;
    Status status = decoder.feed(bad, &records);
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_NE(status.message().find("malformed RecordIO length"), std::string::npos)
        << status.message();
  }
  RecordDecoder decoder;
  std::vector<std::string> records;
  Status status = decoder.feed("2\nok3\nabcX", &records);
  EXPECT_EQ(records, (std::vector<std::string>{"ok", "abc"}));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "malformed RecordIO length at byte 9: unexpected 'X'");
  // Final: the stream cannot be resynchronised.
  EXPECT_FALSE(decoder.feed("1\na", &records).ok());
  EXPECT_EQ(records.size(), 2u);

  RecordDecoder empty;
  EXPECT_EQ(empty.feed("\n", &records).message(),
            "malformed RecordIO length at byte 0: empty length");
}

TEST(HttpRecordIOTest, RecordSizeLimit) {
  RecordDecoder decoder(10);
  std::vector<std::string> records;
  ASSERT_TRUE(decoder.feed("10\n0123456789", &records).ok());
  Status status = decoder.feed("11\n", &records);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("longer than the limit of 10"), std::string::npos)
      << status.message();
  // Huge lengths are refused before they overflow.
  RecordDecoder huge;
  EXPECT_FALSE(huge.feed("99999999999999999999999999999\n", &records).ok());
}

}  // namespace
}  // namespace harvest::http
