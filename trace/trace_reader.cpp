#include "trace/trace_reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "trace/trace_format.h"

namespace harvest::trace {

namespace {

std::string describe(uint64_t record) {
  return record == 0 ? "the header" : "record " + std::to_string(record);
}

}  // namespace

Result<std::unique_ptr<TraceReader>> TraceReader::open(const std::string& path) {
  auto file = std::make_unique<std::ifstream>();
  file->open(path, std::ios::binary);
  if (!*file) {
    return Status::ioError("cannot read allocator trace '" + path + "': " + std::strerror(errno));
  }
  std::unique_ptr<TraceReader> reader(
      new TraceReader(std::move(file), "allocator trace '" + path + "'"));
  if (Status s = reader->readHeader(); !s.ok()) return s;
  return reader;
}

Result<std::unique_ptr<TraceReader>> TraceReader::fromBytes(std::string bytes,
                                                            const std::string& name) {
  std::unique_ptr<TraceReader> reader(
      new TraceReader(std::make_unique<std::istringstream>(std::move(bytes)), name));
  if (Status s = reader->readHeader(); !s.ok()) return s;
  return reader;
}

TraceReader::TraceReader(std::unique_ptr<std::istream> in, std::string name)
    : in_(std::move(in)), name_(std::move(name)) {}

Status TraceReader::damaged(const std::string& why) const {
  return Status::corruption(name_ + " is damaged at byte " + std::to_string(offset_) + ": " + why);
}

Status TraceReader::readHeader() {
  std::string magic(kTraceMagic.size(), '\0');
  in_->read(magic.data(), static_cast<std::streamsize>(magic.size()));
  if (static_cast<size_t>(in_->gcount()) != magic.size() || magic != kTraceMagic) {
    return Status::corruption(name_ + " is not an allocator trace (it does not start with " +
                              "the trace magic)");
  }
  offset_ = magic.size();
  Result<bool> read = readMessage(&header_, 0);
  if (!read.ok()) return read.status();
  if (!*read) return damaged("the trace ends before its header");
  if (header_.format_version() != kTraceFormatVersion) {
    return Status::corruption(name_ + " has trace format version " +
                              std::to_string(header_.format_version()) + "; this build reads " +
                              std::to_string(kTraceFormatVersion));
  }
  return Status();
}

Result<bool> TraceReader::readMessage(google::protobuf::MessageLite* message, uint64_t index) {
  uint64_t length = 0;
  int shift = 0;
  for (int bytes = 0;; ++bytes) {
    const int c = in_->get();
    if (c == std::char_traits<char>::eof()) {
      if (bytes == 0) return false;
      return damaged("the trace is cut short inside the length of " + describe(index));
    }
    if (shift > 63 || bytes >= 10)
      return damaged("the length of " + describe(index) + " is not a varint");
    length |= static_cast<uint64_t>(c & 0x7f) << shift;
    shift += 7;
    if ((c & 0x80) == 0) {
      offset_ += static_cast<uint64_t>(bytes) + 1;
      break;
    }
  }
  if (length > kMaxMessageBytes) {
    return damaged(describe(index) + " claims " + std::to_string(length) +
                   " bytes, more than any record");
  }
  buffer_.resize(length);
  in_->read(buffer_.data(), static_cast<std::streamsize>(length));
  const auto got = static_cast<uint64_t>(in_->gcount());
  if (got != length) {
    return damaged("the trace is cut short: " + describe(index) + " has " + std::to_string(got) +
                   " of its " + std::to_string(length) + " bytes");
  }
  // Partial: the master's protobufs (a FrameworkInfo, say) reach the allocator without their
  // required fields checked, and are recorded and replayed as they came.
  if (!message->ParsePartialFromString(buffer_)) {
    return damaged(describe(index) + " does not decode");
  }
  offset_ += length;
  return true;
}

Result<bool> TraceReader::next(v1::trace::TraceRecord* record) {
  Result<bool> read = readMessage(record, records_ + 1);
  if (read.ok() && *read) ++records_;
  return read;
}

}  // namespace harvest::trace
