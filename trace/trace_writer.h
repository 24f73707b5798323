// Appends a trace to a file: the magic, the header, then one record per call, each
// length-delimited (protos/trace.proto describes the layout).
//
// Appending only encodes into a buffer; the bytes reach the file when the buffer grows past
// kFlushBytes, from a background thread at least every kFlushInterval, and at close. The master
// must never stop for its trace, so a failed write is logged once and recording stops: every
// later append is dropped, and the trace ends with the last record written whole.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "common/time.h"
#include "protos/trace.pb.h"

namespace harvest::trace {

class TraceWriter {
 public:
  static constexpr Duration kFlushInterval = Duration::seconds(1);
  static constexpr size_t kFlushBytes = 1 << 20;

  // Creates (or truncates) `path`: failing to open it is an error, since whoever asked for a
  // trace should learn at start that there will be none.
  static Result<std::unique_ptr<TraceWriter>> open(const std::string& path);
  // Flushes what is buffered and closes the file.
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void writeHeader(const v1::trace::TraceHeader& header);
  void append(const v1::trace::TraceRecord& record);
  // True once a write failed: nothing more will be written.
  bool failed() const;
  const std::string& path() const { return path_; }

 private:
  TraceWriter(std::string path, int fd);
  void appendMessage(const google::protobuf::MessageLite& message);
  // Writes the buffer out; called with mutex_ held.
  void flushLocked();
  void flushPeriodically();

  const std::string path_;
  int fd_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::string buffer_;
  std::string encoded_;  // Reused for each message, to spare an allocation per call.
  bool failed_ = false;
  bool closing_ = false;
  std::thread flusher_;
};

}  // namespace harvest::trace
