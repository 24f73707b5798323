// HttpScheduler: one subscribed framework's event stream. The Master calls it like any
// Scheduler; it turns each callback into a v1 scheduler Event, encoded in the format the
// framework asked for and framed as one RecordIO record per HTTP chunk.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/time.h"
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
using wire::taskDuration;

// The agent port a Mesos agent listens on by default. Harvest agents call the master and
// listen nowhere, so an offer's `url` names this port, as Mesos clients expect one.
inline constexpr int kAgentPort = 5051;

// What every subscription of one master shares: what SUBSCRIBED announces, how to turn the
// master's clock into Unix time, and where each agent is.
struct SchedulerContext {
  v1::MasterInfo masterInfo;
  Duration heartbeat = Duration::seconds(15);
  // Unix time (seconds) of the master clock's zero: event timestamps are Unix time, as Mesos's.
  double unixEpochOffset = 0;
  // The IP an agent registered from, or "" when the master does not know one.
  std::function<std::string(const std::string& agent)> agentIp;
  // What the agent registered with (offers carry its attributes and fault domain); null when
  // the agent is gone.
  std::function<const v1::AgentInfo*(const std::string& agent)> agentInfo;
};

class HttpScheduler final : public Scheduler {
 public:
  // `context` outlives the scheduler (the NetworkMaster owns both).
  HttpScheduler(std::shared_ptr<http::Stream> stream, Format format, std::string streamId,
                const SchedulerContext* context);

  void subscribed(const std::string& framework) override;
  void offers(const std::vector<Offer>& offers) override;
  void rescind(const std::string& offer) override;
  void update(const TaskStatus& status) override;
  void updateToAcknowledge(const TaskStatus& status, const std::string& uuid) override;
  void inverseOffers(const std::vector<InverseOffer>& offers) override;
  void failure(const std::string& agent) override;
  void error(const std::string& message) override;
  void heartbeat();
  // Takes the capabilities that change what events look like (RESERVATION_REFINEMENT).
  void setCapabilities(const v1::FrameworkInfo& info);

  const std::string& streamId() const { return streamId_; }
  const std::string& framework() const { return framework_; }
  bool open() const { return stream_->open(); }
  void close() { stream_->close(); }

 private:
  void send(const v1::scheduler::Event& event);

  std::shared_ptr<http::Stream> stream_;
  Format format_;
  std::string streamId_;
  const SchedulerContext* context_;
  std::string framework_;
  // Without RESERVATION_REFINEMENT, reserved resources go out in the pre-1.4 form.
  bool refinement_ = false;
};

// The v1 TaskStatus of a master TaskStatus (reason by name when Mesos has it); its timestamp
// is Unix time: the master clock's reading plus `unixEpochOffset`.
v1::TaskStatus toProtoStatus(const TaskStatus& status, double unixEpochOffset);

}  // namespace harvest::master
