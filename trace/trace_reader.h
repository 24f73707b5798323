// Reads a trace back: checks the magic and the format version, then hands out records in call
// order. A trace is input from outside, so every way it can be damaged (not a trace, another
// version, cut short, a length or message that does not decode) is an error naming the record
// and byte offset, never a crash.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>

#include "common/status.h"
#include "protos/trace.pb.h"

namespace harvest::trace {

class TraceReader {
 public:
  static Result<std::unique_ptr<TraceReader>> open(const std::string& path);
  // A trace held in memory (tests, fuzzing); `name` is what errors call it.
  static Result<std::unique_ptr<TraceReader>> fromBytes(std::string bytes, const std::string& name);

  const v1::trace::TraceHeader& header() const { return header_; }
  // Reads the next record into `record`: true when one was read, false at the end of a trace
  // that ends cleanly after a whole record.
  Result<bool> next(v1::trace::TraceRecord* record);
  // Records read so far.
  uint64_t records() const { return records_; }

 private:
  TraceReader(std::unique_ptr<std::istream> in, std::string name);
  Status readHeader();
  // Reads one length-delimited message into `message`; false at a clean end of the input.
  // `index` 0 is the header, then records count from 1 (for messages).
  Result<bool> readMessage(google::protobuf::MessageLite* message, uint64_t index);
  Status damaged(const std::string& why) const;

  std::unique_ptr<std::istream> in_;
  std::string name_;
  std::string buffer_;
  uint64_t offset_ = 0;
  uint64_t records_ = 0;
  v1::trace::TraceHeader header_;
};

}  // namespace harvest::trace
