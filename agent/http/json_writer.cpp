#include "agent/http/json_writer.h"

#include <cmath>
#include <cstdio>

#include "common/utf8.h"

namespace harvest::agent {

void JsonWriter::separate() {
  if (afterKey_) {
    afterKey_ = false;
    return;
  }
  if (!empty_.empty()) {
    if (!empty_.back()) out_ += ',';
    empty_.back() = false;
  }
}

JsonWriter& JsonWriter::beginObject() {
  separate();
  out_ += '{';
  empty_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::endObject() {
  out_ += '}';
  empty_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::beginArray() {
  separate();
  out_ += '[';
  empty_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::endArray() {
  out_ += ']';
  empty_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  string(name);
  out_ += ':';
  afterKey_ = true;
  return *this;
}

void JsonWriter::escapeAscii(char c) {
  switch (c) {
    case '"':
      out_ += "\\\"";
      return;
    case '\\':
      out_ += "\\\\";
      return;
    case '\n':
      out_ += "\\n";
      return;
    case '\r':
      out_ += "\\r";
      return;
    case '\t':
      out_ += "\\t";
      return;
    default:
      break;
  }
  const auto byte = static_cast<unsigned char>(c);
  if (byte < 0x20 || byte >= 0x7f) {
    char escaped[8];
    std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(byte));
    out_ += escaped;
  } else {
    out_ += c;
  }
}

JsonWriter& JsonWriter::string(std::string_view text) {
  separate();
  out_ += '"';
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) >= 0x80) {
      if (const size_t length = utf8Length(text.substr(i)); length > 0) {
        out_.append(text.substr(i, length));
        i += length;
        continue;
      }
    }
    escapeAscii(text[i]);
    ++i;
  }
  out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::bytes(std::string_view data) {
  separate();
  out_ += '"';
  for (char c : data) escapeAscii(c);
  out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::number(double value) {
  separate();
  if (!std::isfinite(value)) value = 0;
  char digits[32];
  std::snprintf(digits, sizeof(digits), "%.15g", value);
  out_ += digits;
  return *this;
}

JsonWriter& JsonWriter::integer(int64_t value) {
  separate();
  out_ += std::to_string(value);
  return *this;
}

}  // namespace harvest::agent
