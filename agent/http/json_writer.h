// JsonWriter: the agent's endpoints write their answers with it. The agent cannot use the
// master's Mesos JSON helpers (harvest-agent carries no master code), and its answers are
// small, so one streaming writer that places the commas itself is all it needs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace harvest::agent {

class JsonWriter {
 public:
  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  // An object member's name; the next value written is its value.
  JsonWriter& key(std::string_view name);
  // Well-formed UTF-8 is kept; a byte that is not part of any is written as \u00XX, so the
  // answer stays valid JSON whatever a task wrote.
  JsonWriter& string(std::string_view text);
  // One JSON character per byte (bytes over 0x7f as \u0080-\u00ff), so a client counting
  // characters counts the file's bytes: /files/read's offsets stay exact for any content.
  JsonWriter& bytes(std::string_view data);
  // Fifteen significant digits, whole numbers without a fraction; non-finite values as 0.
  JsonWriter& number(double value);
  JsonWriter& integer(int64_t value);

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  // The comma before a value, unless it is a member's value or the first of its container.
  void separate();
  void escapeAscii(char c);

  std::string out_;
  std::vector<bool> empty_;  // Per open container: nothing written in it yet.
  bool afterKey_ = false;
};

}  // namespace harvest::agent
