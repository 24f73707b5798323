// RecordIO, the framing of Mesos's streaming HTTP APIs: each record is its length in decimal
// ASCII, a newline, then exactly that many bytes. The framing is independent of HTTP chunking:
// a record may span chunks and a chunk may hold several records, so the decoder accepts the
// byte stream in arbitrary pieces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace harvest::http {

inline constexpr size_t kDefaultMaxRecordBytes = 16 * 1024 * 1024;

// "<record.size()>\n<record>".
std::string encodeRecord(std::string_view record);

// Reassembles records from a byte stream. Owns at most one partial record (bounded by the
// maximum record size). Errors are final: after a malformed length the stream cannot be
// resynchronised, so every later call reports the same error.
class RecordDecoder {
 public:
  explicit RecordDecoder(size_t maxRecordBytes = kDefaultMaxRecordBytes);

  // Consumes all of `bytes`, appending every record completed by them to `records`.
  Status feed(std::string_view bytes, std::vector<std::string>* records);
  // A record (or its length) has started but not finished; at the end of a stream this
  // means it was cut short.
  bool midRecord() const { return lengthDigits_ > 0 || readingData_; }

 private:
  size_t maxRecordBytes_;
  uint64_t length_ = 0;       // The length being read, or the current record's length.
  size_t lengthDigits_ = 0;   // Digits of length_ seen so far.
  bool readingData_ = false;  // The length's newline has been seen.
  std::string record_;
  uint64_t offset_ = 0;  // Bytes consumed from the stream, for error messages.
  Status error_;
};

}  // namespace harvest::http
