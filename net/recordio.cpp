#include "net/recordio.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace harvest::http {
namespace {

std::string describeByte(char c) {
  auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x21 && byte < 0x7f) return std::string("'") + c + "'";
  char hex[8];
  std::snprintf(hex, sizeof(hex), "0x%02x", byte);
  return hex;
}

}  // namespace

std::string encodeRecord(std::string_view record) {
  std::string encoded = std::to_string(record.size());
  encoded.reserve(encoded.size() + 1 + record.size());
  encoded.push_back('\n');
  encoded.append(record);
  return encoded;
}

RecordDecoder::RecordDecoder(size_t maxRecordBytes) : maxRecordBytes_(maxRecordBytes) {}

Status RecordDecoder::feed(std::string_view bytes, std::vector<std::string>* records) {
  if (!error_.ok()) return error_;
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (readingData_) {
      size_t n =
          static_cast<size_t>(std::min<uint64_t>(bytes.size() - pos, length_ - record_.size()));
      record_.append(bytes.substr(pos, n));
      pos += n;
    } else {
      char c = bytes[pos];
      if (c >= '0' && c <= '9') {
        auto digit = static_cast<uint64_t>(c - '0');
        // Refuse before the arithmetic can overflow, not after.
        if (length_ > (std::numeric_limits<uint64_t>::max() - digit) / 10 ||
            length_ * 10 + digit > maxRecordBytes_) {
          error_ = Status::invalidArgument(
              "RecordIO record at byte " + std::to_string(offset_ + pos) +
              " is longer than the limit of " + std::to_string(maxRecordBytes_) + " bytes");
          return error_;
        }
        length_ = length_ * 10 + digit;
        ++lengthDigits_;
      } else if (c == '\n' && lengthDigits_ > 0) {
        readingData_ = true;
        record_.clear();
        // Reserve only what is likely to arrive soon; the length is the peer's claim.
        record_.reserve(static_cast<size_t>(std::min<uint64_t>(length_, 64 * 1024)));
      } else {
        error_ = Status::invalidArgument(
            "malformed RecordIO length at byte " + std::to_string(offset_ + pos) + ": " +
            (c == '\n' ? std::string("empty length") : "unexpected " + describeByte(c)));
        return error_;
      }
      ++pos;
    }
    if (readingData_ && record_.size() == length_) {
      records->push_back(std::move(record_));
      record_ = std::string();
      readingData_ = false;
      length_ = 0;
      lengthDigits_ = 0;
    }
  }
  offset_ += bytes.size();
  return Status();
}

}  // namespace harvest::http
