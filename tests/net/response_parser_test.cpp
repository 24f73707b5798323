// ResponseParser: whole and streamed bodies, split input, interim responses, bodies that end
// with the connection, and malformed responses.
#include "net/response_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace harvest::http {
namespace {

using Event = ResponseParser::Event;

struct Parsed {
  std::vector<int> statuses;
  std::vector<std::string> bodies;  // One per complete response.
  std::vector<std::string> chunks;  // Streaming mode only.
  bool error = false;
  std::string message;
};

Parsed parsePieces(const std::vector<std::string>& pieces, ResponseParserOptions options = {},
                   bool eofAtEnd = false) {
  ResponseParser parser(options);
  Parsed parsed;
  auto drain = [&] {
    while (true) {
      Event event = parser.next();
      if (event == Event::kHead) {
        parsed.statuses.push_back(parser.head().status);
      } else if (event == Event::kChunk) {
        parsed.chunks.push_back(parser.takeChunk());
      } else if (event == Event::kComplete) {
        parsed.bodies.push_back(parser.takeBody());
      } else {
        if (event == Event::kError) {
          parsed.error = true;
          parsed.message = parser.error().message;
        }
        return;
      }
    }
  };
  for (const std::string& piece : pieces) {
    parser.feed(piece);
    drain();
    if (parsed.error) return parsed;
  }
  if (eofAtEnd) {
    parser.feedEof();
    drain();
  }
  return parsed;
}

Parsed parse(const std::string& text, ResponseParserOptions options = {}, bool eof = false) {
  return parsePieces({text}, options, eof);
}

void expectSplitInvariant(const std::string& text, ResponseParserOptions options = {}) {
  Parsed whole = parse(text, options);
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  std::vector<std::vector<std::string>> feeds = {bytes};
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    feeds.push_back({text.substr(0, cut), text.substr(cut)});
  }
  for (const auto& pieces : feeds) {
    Parsed split = parsePieces(pieces, options);
    EXPECT_EQ(split.statuses, whole.statuses);
    EXPECT_EQ(split.bodies, whole.bodies);
    EXPECT_EQ(split.chunks, whole.chunks);
    EXPECT_EQ(split.error, whole.error);
  }
}

TEST(HttpResponseParserTest, ContentLengthResponse) {
  std::string text =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}";
  ResponseParser parser;
  parser.feed(text);
  ASSERT_EQ(parser.next(), Event::kHead);
  EXPECT_EQ(parser.head().status, 200);
  EXPECT_EQ(parser.head().reason, "OK");
  EXPECT_EQ(*parser.head().header("content-type"), "application/json");
  EXPECT_EQ(parser.head().contentLength, 7u);
  EXPECT_TRUE(parser.head().keepAlive);
  ASSERT_EQ(parser.next(), Event::kComplete);
  EXPECT_EQ(parser.takeBody(), "{\"a\":1}");
  EXPECT_EQ(parser.next(), Event::kNeedMore);
  EXPECT_TRUE(parser.idle());
  expectSplitInvariant(text);
}

TEST(HttpResponseParserTest, ChunkedBodyWholeOrChunkByChunk) {
  std::string text =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "4\r\nabcd\r\n3;ext=1\r\nefg\r\n10\r\n0123456789abcdef\r\n0\r\nTrailer: x\r\n\r\n";
  Parsed whole = parse(text);
  ASSERT_FALSE(whole.error) << whole.message;
  EXPECT_EQ(whole.bodies, std::vector<std::string>{"abcdefg0123456789abcdef"});
  EXPECT_TRUE(whole.chunks.empty());
  expectSplitInvariant(text);

  ResponseParserOptions streaming;
  streaming.streamChunks = true;
  Parsed streamed = parse(text, streaming);
  ASSERT_FALSE(streamed.error) << streamed.message;
  EXPECT_EQ(streamed.chunks, (std::vector<std::string>{"abcd", "efg", "0123456789abcdef"}));
  EXPECT_EQ(streamed.bodies, std::vector<std::string>{""});
  expectSplitInvariant(text, streaming);
}

TEST(HttpResponseParserTest, StreamHandsOutEachChunkOnlyWhenComplete) {
  ResponseParserOptions streaming;
  streaming.streamChunks = true;
  ResponseParser parser(streaming);
  parser.feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
  ASSERT_EQ(parser.next(), Event::kHead);
  EXPECT_TRUE(parser.head().chunked);
  std::string record = "12\nrecordio-payload!";
  std::string framed = "14\r\n" + record + "\r\n";
  ASSERT_EQ(record.size(), 0x14u);
  for (size_t i = 0; i + 1 < framed.size(); ++i) {
    parser.feed(framed.substr(i, 1));
    EXPECT_EQ(parser.next(), Event::kNeedMore) << "after byte " << i;
  }
  parser.feed(framed.substr(framed.size() - 1));
  ASSERT_EQ(parser.next(), Event::kChunk);
  EXPECT_EQ(parser.takeChunk(), record);
  // An endless stream: no completion, just waiting for the next chunk.
  EXPECT_EQ(parser.next(), Event::kNeedMore);
  parser.feed("3\r\nabc\r\n");
  ASSERT_EQ(parser.next(), Event::kChunk);
  EXPECT_EQ(parser.takeChunk(), "abc");
}

TEST(HttpResponseParserTest, StreamChunkLimitAppliesPerChunk) {
  ResponseParserOptions streaming;
  streaming.streamChunks = true;
  streaming.maxBodyBytes = 4;
  std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  Parsed ok = parse(head + "4\r\nabcd\r\n4\r\nefgh\r\n4\r\nijkl\r\n", streaming);
  EXPECT_FALSE(ok.error) << ok.message;
  EXPECT_EQ(ok.chunks.size(), 3u);
  Parsed tooBig = parse(head + "5\r\nabcde\r\n", streaming);
  EXPECT_TRUE(tooBig.error);
}

TEST(HttpResponseParserTest, InterimResponsesAreSkipped) {
  Parsed parsed =
      parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok");
  EXPECT_EQ(parsed.statuses, std::vector<int>{201});
  EXPECT_EQ(parsed.bodies, std::vector<std::string>{"ok"});
}

TEST(HttpResponseParserTest, ResponsesWithoutBodies) {
  Parsed parsed = parse(
      "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n"
      "HTTP/1.1 304 Not Modified\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx");
  EXPECT_EQ(parsed.statuses, (std::vector<int>{204, 304, 200}));
  EXPECT_EQ(parsed.bodies, (std::vector<std::string>{"", "", "x"}));

  ResponseParser head;
  head.expectNoBody();
  head.feed("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nHTTP/1.1 404 Not Found\r\n");
  EXPECT_EQ(head.next(), Event::kHead);
  EXPECT_EQ(head.next(), Event::kComplete);
  EXPECT_EQ(head.takeBody(), "");
  EXPECT_EQ(head.next(), Event::kNeedMore);  // The next response's head is incomplete.
}

TEST(HttpResponseParserTest, BodyUntilClose) {
  std::string text = "HTTP/1.0 200 OK\r\n\r\nall of this until EOF";
  Parsed parsed = parse(text, {}, /*eof=*/true);
  EXPECT_EQ(parsed.bodies, std::vector<std::string>{"all of this until EOF"});
  // Asking for another response after that is asking past the end.
  EXPECT_EQ(parsed.message, "connection closed by the server");

  ResponseParser parser;
  parser.feed(text);
  EXPECT_EQ(parser.next(), Event::kHead);
  EXPECT_FALSE(parser.head().keepAlive);
  EXPECT_EQ(parser.next(), Event::kNeedMore);
}

TEST(HttpResponseParserTest, KeepAliveFromVersionAndConnection) {
  ResponseParser parser;
  parser.feed("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(parser.next(), Event::kHead);
  EXPECT_FALSE(parser.head().keepAlive);
  ResponseParser old;
  old.feed("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(old.next(), Event::kHead);
  EXPECT_TRUE(old.head().keepAlive);
}

TEST(HttpResponseParserTest, Errors) {
  EXPECT_TRUE(parse("HTTP/1.1 2000 OK\r\n\r\n").error);
  EXPECT_TRUE(parse("HTTP/2 200 OK\r\n\r\n").error);
  EXPECT_TRUE(parse("HTTP/1.1 20 OK\r\n\r\n").error);
  EXPECT_TRUE(parse("HTTP/1.1 099 Low\r\n\r\n").error);
  EXPECT_TRUE(parse("garbage\r\n").error);
  EXPECT_TRUE(parse("HTTP/1.1 200 OK\r\nbad header\r\n\r\n").error);
  EXPECT_TRUE(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n").error);
  EXPECT_TRUE(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n").error);
  EXPECT_TRUE(parse("HTTP/1.1 101 Switching Protocols\r\n\r\n").error);
  // Cut short by the peer.
  Parsed cut = parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", {}, true);
  EXPECT_TRUE(cut.error);
  EXPECT_NE(cut.message.find("closed"), std::string::npos) << cut.message;
  EXPECT_TRUE(parse("HTTP/1.1 200 OK\r\nContent-", {}, true).error);
  Parsed nothing = parse("", {}, true);
  EXPECT_TRUE(nothing.error);
  EXPECT_EQ(nothing.message, "connection closed by the server");
  ResponseParserOptions small;
  small.maxBodyBytes = 3;
  EXPECT_TRUE(parse("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd", small).error);
  EXPECT_TRUE(parse("HTTP/1.0 200 OK\r\n\r\nabcd", small, true).error);
  small.maxHeaderBytes = 20;
  EXPECT_TRUE(parse("HTTP/1.1 200 OK\r\nX: 123456789\r\n\r\n", small).error);
}

}  // namespace
}  // namespace harvest::http
