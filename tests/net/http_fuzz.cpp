// http_fuzz: mutation fuzzing of the HTTP request parser, the response parser, the RecordIO
// decoder and the credentials/Basic-auth parsers, without libFuzzer (gcc has none).
//
// A seeded PRNG mutates a corpus of valid messages; every mutant goes through each parser fed
// whole, byte by byte and in random pieces. Beyond "does not crash" (run it under ASan+UBSan)
// it checks invariants: the result never depends on how the input was split, bodies and
// records never exceed their limits, errors carry a status from the documented set.
//
// Usage: http_fuzz [iterations] [seed]; or HARVEST_FUZZ_ITERATIONS / HARVEST_FUZZ_SEED.
// Built with -DHARVEST_LIBFUZZER it is instead a libFuzzer target (see fuzz/CMakeLists.txt).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/base64.h"
#include "net/basic_auth.h"
#include "net/recordio.h"
#include "net/request_parser.h"
#include "net/response_parser.h"

namespace harvest::http {
namespace {

using Rng = std::mt19937_64;

// What the mutants reached, printed at the end: a fuzzer whose inputs all die at the first
// byte would pass every invariant and test nothing.
struct Reached {
  uint64_t requests = 0, requestErrors = 0, responses = 0, chunks = 0, responseErrors = 0,
           records = 0, recordErrors = 0, credentialFiles = 0;
} reached;

std::string escape(std::string_view bytes) {
  std::string out;
  for (char c : bytes) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (byte >= 0x20 && byte < 0x7f) {
      out.push_back(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", byte);
      out += hex;
    }
  }
  return out;
}

[[noreturn]] void fail(const std::string& what, std::string_view input) {
  std::fprintf(stderr, "http_fuzz: invariant broken: %s\ninput (%zu bytes): \"%s\"\n", what.c_str(),
               input.size(), escape(input).c_str());
  std::exit(1);
}

// Ways to cut an input into pieces: whole, byte by byte (small inputs), and random cuts.
std::vector<std::vector<size_t>> feedings(std::string_view input, uint64_t seed) {
  std::vector<std::vector<size_t>> result;
  result.push_back({input.size()});
  // Byte by byte is the harshest feeding but also the slowest; random pieces cover the rest.
  if (seed % 4 == 0 && input.size() <= 4096) {
    std::vector<size_t> bytes(input.size(), 1);
    result.push_back(bytes);
  }
  Rng rng(seed);
  std::vector<size_t> random;
  size_t left = input.size();
  while (left > 0) {
    size_t piece = std::min<size_t>(left, 1 + rng() % 17);
    random.push_back(piece);
    left -= piece;
  }
  result.push_back(random);
  return result;
}

template <typename Visit>
void forEachPiece(std::string_view input, const std::vector<size_t>& sizes, Visit visit) {
  size_t pos = 0;
  for (size_t size : sizes) {
    visit(input.substr(pos, size));
    pos += size;
  }
}

// ---- The request parser.

std::string requestSummary(std::string_view input, const std::vector<size_t>& sizes,
                           const ParseLimits& limits) {
  RequestParser parser(limits);
  std::string summary;
  bool failed = false;
  forEachPiece(input, sizes, [&](std::string_view piece) {
    if (failed) return;
    parser.feed(piece);
    while (true) {
      Request request;
      RequestParser::Event event = parser.next(&request);
      if (event == RequestParser::Event::kNeedMore) break;
      if (event == RequestParser::Event::kError) {
        int status = parser.error().status;
        if (status != 400 && status != 413 && status != 414 && status != 431 && status != 501 &&
            status != 505) {
          fail("request error status " + std::to_string(status), input);
        }
        summary += "error " + std::to_string(status) + " " + parser.error().message;
        ++reached.requestErrors;
        failed = true;
        return;
      }
      if (request.body.size() > limits.maxBodyBytes) fail("request body over the limit", input);
      if (request.method.empty() || request.target.empty()) fail("empty method/target", input);
      if (request.versionMinor != 0 && request.versionMinor != 1) fail("version", input);
      if (request.path +
              (request.target.find('?') != std::string::npos ? "?" + request.query : "") !=
          request.target) {
        fail("path and query do not make up the target", input);
      }
      ++reached.requests;
      summary += "[" + request.method + " " + request.target + " 1." +
                 std::to_string(request.versionMinor) + (request.keepAlive ? " ka" : "") +
                 (request.chunked ? " chunked" : "");
      for (const auto& [name, value] : request.headers) {
        if (name.empty() || name != toLower(name)) fail("header name not lowercased", input);
        if (!detail::isFieldValue(value)) fail("control character in a header value", input);
        summary += " " + name + "=" + value;
      }
      summary += " body=" + request.body + "]";
    }
  });
  if (parser.bufferedBytes() > input.size()) fail("parser holds more than it was fed", input);
  return summary;
}

// ---- The response parser, whole-body and streaming.

std::string responseSummary(std::string_view input, const std::vector<size_t>& sizes,
                            const ResponseParserOptions& options, bool eof, bool noBody) {
  ResponseParser parser(options);
  if (noBody) parser.expectNoBody();
  std::string summary;
  bool failed = false;
  bool chunkedHead = false;
  std::string untilClose;  // Streamed pieces of a body without framing depend on the feeding.
  auto drain = [&] {
    while (!failed) {
      ResponseParser::Event event = parser.next();
      switch (event) {
        case ResponseParser::Event::kNeedMore:
          return;
        case ResponseParser::Event::kError:
          summary += "error " + parser.error().message;
          ++reached.responseErrors;
          failed = true;
          return;
        case ResponseParser::Event::kHead: {
          const ResponseHead& head = parser.head();
          if (head.status < 200 || head.status > 999) fail("final status out of range", input);
          chunkedHead = head.chunked;
          summary += "[" + std::to_string(head.status) + (head.keepAlive ? " ka" : "");
          for (const auto& [name, value] : head.headers) summary += " " + name + "=" + value;
          break;
        }
        case ResponseParser::Event::kChunk: {
          std::string chunk = parser.takeChunk();
          ++reached.chunks;
          if (!options.streamChunks) fail("chunk outside streaming mode", input);
          if (chunk.size() > options.maxBodyBytes) fail("chunk over the limit", input);
          if (chunkedHead) {
            if (chunk.empty()) fail("empty chunk handed out", input);
            summary += " chunk=" + chunk;
          } else {
            untilClose += chunk;
          }
          break;
        }
        case ResponseParser::Event::kComplete: {
          std::string body = parser.takeBody();
          ++reached.responses;
          if (body.size() > options.maxBodyBytes) fail("response body over the limit", input);
          summary += " body=" + body + " rest=" + untilClose + "]";
          untilClose.clear();
          break;
        }
      }
    }
  };
  forEachPiece(input, sizes, [&](std::string_view piece) {
    parser.feed(piece);
    drain();
  });
  if (eof) {
    parser.feedEof();
    drain();
  }
  return summary + " pending=" + untilClose;
}

// ---- RecordIO.

std::string recordSummary(std::string_view input, const std::vector<size_t>& sizes,
                          size_t maxRecord) {
  RecordDecoder decoder(maxRecord);
  std::vector<std::string> records;
  std::string error;
  forEachPiece(input, sizes, [&](std::string_view piece) {
    if (!error.empty()) return;
    Status status = decoder.feed(piece, &records);
    if (!status.ok()) error = status.message();
  });
  std::string summary;
  reached.records += records.size();
  if (!error.empty()) ++reached.recordErrors;
  for (const std::string& record : records) {
    if (record.size() > maxRecord) fail("record over the limit", input);
    summary += std::to_string(record.size()) + ":" + record + ",";
  }
  return summary + (error.empty() ? (decoder.midRecord() ? " partial" : "") : " error " + error);
}

// ---- Everything on one input.

void checkOne(std::string_view input, uint64_t seed) {
  std::vector<std::vector<size_t>> ways = feedings(input, seed);
  // Small limits a third of the time, so that they are hit often, but not so often that
  // everything ends in 413/431.
  bool smallLimits = seed % 3 == 1;
  ParseLimits limits;
  if (smallLimits) limits = {160, 48};
  ResponseParserOptions whole{limits.maxHeaderBytes, limits.maxBodyBytes, false};
  ResponseParserOptions streaming{limits.maxHeaderBytes, limits.maxBodyBytes, true};
  bool eof = seed % 5 != 0;
  bool noBody = seed % 7 == 0;
  size_t maxRecord = smallLimits ? 16 : kDefaultMaxRecordBytes;

  std::string request = requestSummary(input, ways[0], limits);
  std::string response = responseSummary(input, ways[0], whole, eof, noBody);
  std::string streamed = responseSummary(input, ways[0], streaming, eof, noBody);
  std::string records = recordSummary(input, ways[0], maxRecord);
  for (size_t i = 1; i < ways.size(); ++i) {
    if (requestSummary(input, ways[i], limits) != request) {
      fail("request parse depends on the split (feeding " + std::to_string(i) + ")", input);
    }
    if (responseSummary(input, ways[i], whole, eof, noBody) != response) {
      fail("response parse depends on the split (feeding " + std::to_string(i) + ")", input);
    }
    if (responseSummary(input, ways[i], streaming, eof, noBody) != streamed) {
      fail("streamed response depends on the split (feeding " + std::to_string(i) + ")", input);
    }
    if (recordSummary(input, ways[i], maxRecord) != records) {
      fail("RecordIO decoding depends on the split (feeding " + std::to_string(i) + ")", input);
    }
  }

  // Base64 and credentials: no crash, and decoding is the inverse of encoding.
  Result<std::string> decoded = base64Decode(input);
  if (decoded.ok()) {
    Result<std::string> again = base64Decode(base64Encode(*decoded));
    if (!again.ok() || *again != *decoded) fail("base64 round trip", input);
  }
  Result<Credential> credential = parseBasicAuthorization(input);
  if (credential.ok() && credential->principal.find(':') != std::string::npos) {
    fail("principal with ':'", input);
  }
  Result<CredentialStore> store = CredentialStore::parse(input);
  if (store.ok() && store->size() > input.size()) fail("more credentials than bytes", input);
  if (store.ok() && !store->empty()) ++reached.credentialFiles;
}

#ifndef HARVEST_LIBFUZZER

const std::vector<std::string>& corpus() {
  static const std::vector<std::string> entries = {
      "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
      "GET /master/state?jsonp=x HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n\r\n",
      "POST /api/v1/scheduler HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
      "Content-Length: 22\r\n\r\n{\"type\":\"SUBSCRIBE\"}\r\n",
      "POST /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n"
      "3\r\nabc\r\n0\r\nTrailer: t\r\n\r\n",
      "GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nokGET /c "
      "HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
      "POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\nConnection: close\r\n"
      "\r\nbody",
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n15\r\n12\nrecordio-payload!\r\n"
      "3\r\nabc\r\n0\r\n\r\n",
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\nHTTP/1.0 200 OK\r\n\r\nrest",
      "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 5\r\n\r\nbusy\n",
      "20\n{\"type\":\"HEARTBEAT\"}0\n5\nhello3\n\n\n\n",
      "{\"credentials\":[{\"principal\":\"p\",\"secret\":\"s\\u00e9\"},"
      "{\"principal\":\"q\",\"secret\":\"t\"}]}",
      "alice secret\nbob s2\n",
      "Basic dXNlcjpzZWNyZXQ=",
  };
  return entries;
}

const std::vector<std::string>& dictionary() {
  static const std::vector<std::string> tokens = {"\r\n",
                                                  "\n",
                                                  "\r",
                                                  " ",
                                                  "\t",
                                                  ":",
                                                  ";",
                                                  ",",
                                                  "0\r\n\r\n",
                                                  "\r\n\r\n",
                                                  "Transfer-Encoding: chunked\r\n",
                                                  "Content-Length: ",
                                                  "Content-Length: 0\r\n",
                                                  "Connection: close\r\n",
                                                  "Expect: 100-continue\r\n",
                                                  "HTTP/1.1",
                                                  "HTTP/1.0",
                                                  "HTTP/2.0",
                                                  "ffffffffffffffff",
                                                  "99999999999999999999",
                                                  "-1",
                                                  std::string(1, '\0'),
                                                  "\xff",
                                                  "chunked",
                                                  "gzip",
                                                  "HTTP/1.1 200 OK\r\n",
                                                  "GET / HTTP/1.1\r\n\r\n",
                                                  "\"",
                                                  "\\u",
                                                  "[",
                                                  "{",
                                                  "}",
                                                  "=",
                                                  "100"};
  return tokens;
}

std::string mutate(std::string input, Rng& rng) {
  auto pick = [&](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
  int rounds = 1 + static_cast<int>(rng() % 3);
  for (int round = 0; round < rounds; ++round) {
    size_t pos = pick(input.size() + 1);
    switch (rng() % 9) {
      case 0:
        if (!input.empty()) input[pick(input.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:
        if (!input.empty()) input[pick(input.size())] = static_cast<char>(rng());
        break;
      case 2:
        input.insert(pos, 1, static_cast<char>(rng()));
        break;
      case 3:
        if (pos < input.size()) input.erase(pos, 1 + pick(16));
        break;
      case 4:
        if (pos < input.size()) {
          std::string range = input.substr(pos, 1 + pick(32));
          input.insert(pick(input.size() + 1), range);
        }
        break;
      case 5: {
        const std::string& token = dictionary()[pick(dictionary().size())];
        input.insert(pos, token);
        break;
      }
      case 6:
        input.resize(pos);
        break;
      case 7: {
        const std::string& other = corpus()[pick(corpus().size())];
        size_t from = pick(other.size());
        input.insert(pos, other.substr(from, 1 + pick(other.size() - from)));
        break;
      }
      case 8: {
        // Rewrite a number: lengths and chunk sizes are where parsers go wrong.
        size_t digit = input.find_first_of("0123456789abcdef", pos);
        if (digit == std::string::npos) break;
        size_t end = input.find_first_not_of("0123456789abcdef", digit);
        if (end == std::string::npos) end = input.size();
        std::string number = std::to_string(rng() % (rng() % 2 ? 100 : 100000000));
        input.replace(digit, end - digit, number);
        break;
      }
    }
  }
  // Keep mutants small enough for byte-at-a-time feeding to stay quick.
  if (input.size() > 8192) input.resize(8192);
  return input;
}

uint64_t numberFrom(const char* argument, const char* environment, uint64_t fallback) {
  const char* text = argument != nullptr ? argument : std::getenv(environment);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (end == nullptr || *end != '\0') {
    std::fprintf(stderr, "http_fuzz: not a number: %s\n", text);
    std::exit(2);
  }
  return value;
}

int run(int argc, char** argv) {
  uint64_t iterations = numberFrom(argc > 1 ? argv[1] : nullptr, "HARVEST_FUZZ_ITERATIONS", 20000);
  uint64_t seed = numberFrom(argc > 2 ? argv[2] : nullptr, "HARVEST_FUZZ_SEED", 1);
  Rng rng(seed);
  // The corpus itself first: valid inputs must satisfy every invariant too.
  for (size_t i = 0; i < corpus().size(); ++i) checkOne(corpus()[i], i);
  for (uint64_t i = 0; i < iterations; ++i) {
    std::string input = corpus()[rng() % corpus().size()];
    // Sometimes mutate a mutant, to get further from the valid inputs.
    int generations = rng() % 4 == 0 ? 3 : 1;
    for (int g = 0; g < generations; ++g) input = mutate(std::move(input), rng);
    checkOne(input, rng());
  }
  std::printf("http_fuzz: %llu iterations (seed %llu), all invariants held\n",
              static_cast<unsigned long long>(iterations), static_cast<unsigned long long>(seed));
  auto count = [](uint64_t n) { return static_cast<unsigned long long>(n); };
  std::printf(
      "reached (summed over all feedings): %llu requests, %llu request errors, %llu responses, "
      "%llu streamed chunks, %llu response errors, %llu records, %llu RecordIO errors, "
      "%llu credential stores\n",
      count(reached.requests), count(reached.requestErrors), count(reached.responses),
      count(reached.chunks), count(reached.responseErrors), count(reached.records),
      count(reached.recordErrors), count(reached.credentialFiles));
  return 0;
}

#endif  // HARVEST_LIBFUZZER

}  // namespace
}  // namespace harvest::http

#ifdef HARVEST_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // The random feeding and the option choices derive from the input, so runs reproduce.
  uint64_t seed = 1469598103934665603ull;
  for (char c : input) seed = (seed ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  harvest::http::checkOne(input, seed);
  return 0;
}
#else
int main(int argc, char** argv) {
  return harvest::http::run(argc, argv);
}
#endif
