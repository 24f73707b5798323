#include "master/network/remote_agent.h"

#include <glog/logging.h>

#include "net/recordio.h"

namespace harvest::master {

RemoteAgent::RemoteAgent(AgentRegistration registration, std::string registrationId,
                         std::string principal)
    : registration_(std::move(registration)),
      registrationId_(std::move(registrationId)),
      principal_(std::move(principal)) {
  for (const HeldTask& task : registration_.tasks) {
    if (!task.ended) executors_.emplace(task.framework, task.task);
  }
}

void RemoteAgent::noteHolds(const std::string& framework, const std::string& task, bool holds) {
  const ExecutorOrder::View key(framework, task);
  const auto it = executors_.lower_bound(key);
  const bool known = it != executors_.end() && !ExecutorOrder()(key, *it);
  if (holds && !known) {
    executors_.emplace_hint(it, framework, task);
  } else if (!holds && known) {
    executors_.erase(it);
  }
}

void RemoteAgent::attach(std::shared_ptr<http::Stream> stream) {
  stream_ = std::move(stream);
  attached_ = true;
  for (const v1::AgentEvent& event : unsent_) send(event);
  unsent_.clear();
}

void RemoteAgent::send(const v1::AgentEvent& event) {
  if (!attached_) {
    unsent_.push_back(event);
    return;
  }
  if (stream_ && stream_->send(http::encodeRecord(event.SerializeAsString()))) return;
  // The agent is gone or too slow; it re-registers with what it really holds, and the
  // master settles the difference then (reregisterAgent).
  LOG(WARNING) << "agent " << registration_.id << " is not connected; "
               << v1::AgentEvent::Type_Name(event.type()) << " dropped";
}

void RemoteAgent::runTask(const RunTask& message) {
  noteHolds(message.framework, message.task.task, true);
  send(agent::runTaskEvent(message, registration_.id));
}

void RemoteAgent::killTask(const std::string& framework, const std::string& task,
                           std::optional<Duration> gracePeriod) {
  send(agent::killTaskEvent(framework, task, gracePeriod));
}

void RemoteAgent::shutdown() {
  if (stream_) stream_->close();
}

void RemoteAgent::heartbeat() {
  v1::AgentEvent event;
  event.set_type(v1::AgentEvent::HEARTBEAT);
  if (stream_ && stream_->open()) stream_->send(http::encodeRecord(event.SerializeAsString()));
}

bool RemoteAgent::holdsExecutor(const std::string& framework, const std::string& task) const {
  return executors_.find(ExecutorOrder::View(framework, task)) != executors_.end();
}

SequenceCheck RemoteAgent::checkSequence(uint64_t sequence) const {
  if (sequence == 0) return SequenceCheck::kOutOfRange;  // 0 is REGISTER's.
  if (sequence <= appliedThrough_) return SequenceCheck::kRetry;
  // appliedThrough_ <= UINT64_MAX - kMaxSequenceGap always: it only grows by in-range steps
  // from 0, and would need 2^54 calls to get near the top.
  return sequence - appliedThrough_ <= kMaxSequenceGap ? SequenceCheck::kNew
                                                       : SequenceCheck::kOutOfRange;
}

}  // namespace harvest::master
