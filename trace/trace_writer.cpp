#include "trace/trace_writer.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "trace/trace_format.h"

namespace harvest::trace {

Result<std::unique_ptr<TraceWriter>> TraceWriter::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::ioError("cannot create allocator trace '" + path + "': " + std::strerror(errno));
  }
  return std::unique_ptr<TraceWriter>(new TraceWriter(path, fd));
}

TraceWriter::TraceWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {
  buffer_.append(kTraceMagic);
  flusher_ = std::thread([this] { flushPeriodically(); });
}

TraceWriter::~TraceWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  wake_.notify_one();
  flusher_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  flushLocked();
  if (::close(fd_) != 0 && !failed_) {
    LOG(ERROR) << "Closing allocator trace '" << path_ << "' failed: " << std::strerror(errno);
  }
}

void TraceWriter::writeHeader(const v1::trace::TraceHeader& header) {
  appendMessage(header);
}

void TraceWriter::append(const v1::trace::TraceRecord& record) {
  appendMessage(record);
}

bool TraceWriter::failed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failed_;
}

void TraceWriter::appendMessage(const google::protobuf::MessageLite& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_) return;
  encoded_.clear();
  message.AppendPartialToString(&encoded_);
  appendVarint(encoded_.size(), &buffer_);
  buffer_.append(encoded_);
  if (buffer_.size() >= kFlushBytes) flushLocked();
}

void TraceWriter::flushLocked() {
  size_t written = 0;
  while (!failed_ && written < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + written, buffer_.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed_ = true;
      LOG(ERROR) << "Writing allocator trace '" << path_
                 << "' failed: " << (n < 0 ? std::strerror(errno) : "nothing written")
                 << "; recording stops (the master carries on)";
    } else {
      written += static_cast<size_t>(n);
    }
  }
  buffer_.clear();
}

void TraceWriter::flushPeriodically() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!closing_) {
    wake_.wait_for(lock, kFlushInterval.chrono(), [this] { return closing_; });
    if (!buffer_.empty()) flushLocked();
  }
}

}  // namespace harvest::trace
