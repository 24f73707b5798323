// HttpScheduler: one subscribed framework's event stream. The Master calls it like any
// Scheduler; it turns each callback into a v1 scheduler Event, encoded in the format the
// framework asked for and framed as one RecordIO record per HTTP chunk.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "master/scheduler_api.h"
#include "net/http_server.h"
#include "protos/scheduler.pb.h"
#include "wire/scheduler_codec.h"

namespace harvest::master {

// The wire vocabulary the network front speaks.
using wire::decodeCall;
using wire::encodeEvent;
using wire::Format;
using wire::HttpResult;
using wire::HttpStatus;
using wire::mediaType;
using wire::requestFormat;
using wire::responseFormat;
using wire::taskDurationNanos;

class HttpScheduler final : public Scheduler {
 public:
  HttpScheduler(std::shared_ptr<http::Stream> stream, Format format, std::string streamId,
                double heartbeatSeconds);

  void subscribed(const std::string& framework) override;
  void offers(const std::vector<Offer>& offers) override;
  void rescind(const std::string& offer) override;
  void update(const TaskStatus& status) override;
  void inverseOffers(const std::vector<InverseOffer>& offers) override;
  void failure(const std::string& agent) override;
  void error(const std::string& message) override;
  void heartbeat();

  const std::string& streamId() const { return streamId_; }
  const std::string& framework() const { return framework_; }
  bool open() const { return stream_->open(); }
  void close() { stream_->close(); }

 private:
  void send(const v1::scheduler::Event& event);

  std::shared_ptr<http::Stream> stream_;
  Format format_;
  std::string streamId_;
  double heartbeatSeconds_;
  std::string framework_;
};

// The v1 TaskStatus of a master TaskStatus (reason by name when Mesos has it).
v1::TaskStatus toProtoStatus(const TaskStatus& status);

}  // namespace harvest::master
