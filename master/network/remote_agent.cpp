#include "master/network/remote_agent.h"

#include <glog/logging.h>

#include "net/recordio.h"

namespace harvest::master {

RemoteAgent::RemoteAgent(AgentRegistration registration, std::shared_ptr<http::Stream> stream)
    : registration_(std::move(registration)), stream_(std::move(stream)) {
  for (const HeldTask& task : registration_.tasks) holds_[{task.framework, task.task}] = true;
}

void RemoteAgent::send(const v1::AgentEvent& event) {
  if (stream_ && stream_->send(http::encodeRecord(event.SerializeAsString()))) return;
  // The agent is gone or too slow; it re-registers with what it really holds, and the
  // master settles the difference then (reregisterAgent).
  LOG(WARNING) << "agent " << registration_.id << " is not connected; "
               << v1::AgentEvent::Type_Name(event.type()) << " dropped";
}

void RemoteAgent::runTask(const RunTask& message) {
  holds_[{message.framework, message.task.task}] = true;
  send(agent::runTaskEvent(message, registration_.id));
}

void RemoteAgent::killTask(const std::string& framework, const std::string& task) {
  send(agent::killTaskEvent(framework, task));
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
  auto it = holds_.find({framework, task});
  return it != holds_.end() && it->second;
}

bool RemoteAgent::firstTime(uint64_t sequence) {
  if (sequence != 0 && sequence <= appliedThrough_) return false;
  if (sequence > appliedThrough_) appliedThrough_ = sequence;
  return true;
}

}  // namespace harvest::master
