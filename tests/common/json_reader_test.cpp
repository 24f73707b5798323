// JsonReader: the exact values it reads, and the exact error (words and offset) for each kind
// of malformed input, since both the scheduler API and the credentials file show them.
#include "common/json_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace harvest {
namespace {

struct Failure {
  std::string error;
  size_t offset;
};

// Skips one value and checks that nothing follows it; the error if either fails.
Failure skipFailure(std::string_view text, int maxDepth = 100) {
  JsonReader json(text, maxDepth);
  if (json.skipValue(0)) {
    json.skipSpace();
    if (!json.atEnd()) json.fail("trailing text");
  }
  EXPECT_TRUE(json.failed()) << text;
  return {json.error(), json.errorOffset()};
}

void expectFailure(std::string_view text, const std::string& error, size_t offset) {
  const Failure failure = skipFailure(text);
  EXPECT_EQ(failure.error, error) << text;
  EXPECT_EQ(failure.offset, offset) << text;
}

std::string decodedString(std::string_view text) {
  JsonReader json(text, 100);
  std::string decoded;
  EXPECT_TRUE(json.string(&decoded)) << text << ": " << json.error();
  EXPECT_TRUE(json.atEnd()) << text;
  return decoded;
}

TEST(JsonReaderTest, StringsDecodeEscapesAndUtf8) {
  EXPECT_EQ(decodedString(R"("plain")"), "plain");
  EXPECT_EQ(decodedString(R"("")"), "");
  EXPECT_EQ(decodedString(R"("q\"b\\s\/\b\f\n\r\t")"), "q\"b\\s/\b\f\n\r\t");
  EXPECT_EQ(decodedString(R"("\u00e9\u20AC")"), "\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(decodedString(R"("\ud83d\ude00")"), "\xf0\x9f\x98\x80");
  EXPECT_EQ(decodedString("\"\xc3\xa9x\""), "\xc3\xa9x");
}

TEST(JsonReaderTest, NumbersAreTheirExactText) {
  for (std::string_view number : {"0", "-0", "12", "-1.5", "2e10", "3.25E-2", "1e+3"}) {
    const std::string text = std::string(number) + ",";  // The reader views it: keep it alive.
    JsonReader json(text, 100);
    std::string_view token;
    ASSERT_TRUE(json.number(&token)) << number << ": " << json.error();
    EXPECT_EQ(token, number);
    EXPECT_EQ(json.peek(), ',');
  }
  EXPECT_TRUE(JsonReader::isNumber("-12.5e3"));
  EXPECT_FALSE(JsonReader::isNumber("01"));
  EXPECT_FALSE(JsonReader::isNumber("1."));
  EXPECT_FALSE(JsonReader::isNumber("+1"));
  EXPECT_FALSE(JsonReader::isNumber(""));
}

TEST(JsonReaderTest, ContainersStepThroughMembersAndElements) {
  JsonReader json(R"({ "a" : [1, "x"], "b": {} })", 100);
  using Next = JsonReader::Next;
  ASSERT_EQ(json.openObject(1), Next::kItem);
  std::string name;
  ASSERT_TRUE(json.memberName(&name));
  EXPECT_EQ(name, "a");
  ASSERT_EQ(json.openArray(2), Next::kItem);
  std::string_view number;
  ASSERT_TRUE(json.number(&number));
  EXPECT_EQ(number, "1");
  ASSERT_EQ(json.afterElement(), Next::kItem);
  std::string text;
  ASSERT_TRUE(json.string(&text));
  EXPECT_EQ(text, "x");
  ASSERT_EQ(json.afterElement(), Next::kEnd);
  ASSERT_EQ(json.afterMember(), Next::kItem);
  name.clear();
  ASSERT_TRUE(json.memberName(&name));
  EXPECT_EQ(name, "b");
  EXPECT_EQ(json.openObject(2), Next::kEnd);
  EXPECT_EQ(json.afterMember(), Next::kEnd);
  EXPECT_TRUE(json.atEnd());
  EXPECT_FALSE(json.failed());
}

TEST(JsonReaderTest, SkipsEveryKindOfValue) {
  JsonReader json(R"({"a": [true, false, null, -1.5e3, "s\n"], "b": {"c": {}}})", 100);
  EXPECT_TRUE(json.skipValue(0)) << json.error();
  EXPECT_TRUE(json.atEnd());
}

TEST(JsonReaderTest, MalformedStringsSayWhatAndWhere) {
  expectFailure(R"("abc)", "unterminated string", 4);
  expectFailure(R"("abc\)", "unterminated string", 5);
  expectFailure(R"("a\qb")", "invalid escape in a string", 3);
  expectFailure(R"("\u12")", "truncated \\u escape", 3);
  expectFailure(R"("\u12g4")", "invalid \\u escape", 5);
  expectFailure(R"("\ud800")", "unpaired UTF-16 surrogate", 7);
  expectFailure(R"("\ud800\u0041")", "unpaired UTF-16 surrogate", 13);
  expectFailure(R"("\udc00")", "unpaired UTF-16 surrogate", 7);
  expectFailure("\"tab\there\"", "control character in a string", 4);
  expectFailure("\"\xff\"", "invalid UTF-8 in a string", 1);
  expectFailure("\"\xc0\xaf\"", "invalid UTF-8 in a string", 1);      // Overlong '/'.
  expectFailure("\"\xed\xa0\x80\"", "invalid UTF-8 in a string", 1);  // Encoded surrogate.
}

TEST(JsonReaderTest, MalformedValuesSayWhatAndWhere) {
  expectFailure("-", "invalid number", 1);
  expectFailure("1.", "invalid number: no digit after '.'", 2);
  expectFailure("1e", "invalid number: no exponent digits", 2);
  expectFailure("tru", "invalid literal", 0);
  expectFailure("nul", "invalid literal", 0);
  expectFailure("'x'", "unexpected character '''", 0);
  expectFailure("", "unexpected end; expected a value", 0);
  expectFailure("[1, 2,]", "unexpected character ']'", 6);
  expectFailure("[1 2]", "expected ',' or ']'", 3);
  expectFailure(R"({"a": 1 "b": 2})", "expected ',' or '}'", 8);
  expectFailure(R"({a: 1})", "expected a member name in double quotes", 1);
  expectFailure(R"({"a" 1})", "expected ':' after member name", 5);
  expectFailure(R"({"a": })", "unexpected character '}'", 6);
  expectFailure(R"({"a": 1, "b": {"a": 2, "a": 3}})", "duplicate member 'a'", 23);
}

TEST(JsonReaderTest, TrailingGarbageIsLeftForTheCaller) {
  JsonReader json("{} x", 100);
  EXPECT_TRUE(json.skipValue(0));
  json.skipSpace();
  EXPECT_EQ(json.offset(), 3u);
  EXPECT_EQ(json.peek(), 'x');
  EXPECT_EQ(skipFailure("01").offset, 1u);  // A number ends at a leading zero.
}

TEST(JsonReaderTest, NestingPastTheLimitIsRefused) {
  JsonReader three("[[[1]]]", 3);
  EXPECT_TRUE(three.skipValue(0)) << three.error();
  const Failure deep = skipFailure("[[[[1]]]]", 3);
  EXPECT_EQ(deep.error, "nested deeper than 3");
  EXPECT_EQ(deep.offset, 3u);
  const Failure hostile = skipFailure(std::string(100000, '['), 100);
  EXPECT_EQ(hostile.error, "nested deeper than 100");
  EXPECT_EQ(hostile.offset, 100u);
}

TEST(JsonReaderTest, TheFirstErrorIsKept) {
  JsonReader json("x", 100);
  EXPECT_FALSE(json.failAt(0, "first"));
  EXPECT_FALSE(json.fail("second"));
  EXPECT_EQ(json.error(), "first");
  EXPECT_EQ(json.errorOffset(), 0u);
}

TEST(JsonReaderTest, QuotedForErrorShortensAndHidesUnprintables) {
  EXPECT_EQ(quotedForError("a\nb\xff"), "'a?b?'");
  EXPECT_EQ(quotedForError(std::string(81, 'x')), "'" + std::string(80, 'x') + "...'");
}

}  // namespace
}  // namespace harvest
