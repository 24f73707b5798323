#include "master/network/http_scheduler.h"

#include <glog/logging.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <string_view>

#include "agent/runtime/agent_wire.h"
#include "resources/proto/convert.h"

namespace harvest::master {
namespace {

// A resource in the form Mesos sends frameworks without RESERVATION_REFINEMENT: the reserving
// role in `role`, and for a dynamic reservation its principal and labels in `reservation`.
// A refined reservation (more than one) has no such form; Harvest never makes one (RESERVE
// pushes one level), so it is left as it is.
void downgradeReservation(v1::Resource& resource) {
  if (resource.reservations_size() != 1) return;
  const v1::Resource::ReservationInfo reservation = resource.reservations(0);
  resource.clear_reservations();
  resource.set_role(reservation.role());
  if (reservation.type() == v1::Resource::ReservationInfo::STATIC) return;
  v1::Resource::ReservationInfo& old = *resource.mutable_reservation();
  if (reservation.has_principal()) old.set_principal(reservation.principal());
  if (reservation.has_labels()) *old.mutable_labels() = reservation.labels();
}

}  // namespace

HttpScheduler::HttpScheduler(std::shared_ptr<http::Stream> stream, Format format,
                             std::string streamId, const SchedulerContext* context)
    : stream_(std::move(stream)),
      format_(format),
      streamId_(std::move(streamId)),
      context_(context) {}

void HttpScheduler::send(const v1::scheduler::Event& event) {
  if (!stream_->open()) return;
  // One buffer per thread for every event: the event is encoded after room for its RecordIO
  // length ("<decimal bytes>\n"), which goes in front once known, so the record is sent as
  // it was written, without a string per event for the encoding and another for the framing.
  constexpr size_t kLengthRoom = std::numeric_limits<size_t>::digits10 + 2;
  // Past this, a rare huge event (thousands of offers) is not worth keeping memory for.
  constexpr size_t kKeptRecordBytes = 1 << 20;
  thread_local std::string record;
  record.assign(kLengthRoom, '\0');
  wire::appendEvent(event, format_, &record);
  const size_t payload = record.size() - kLengthRoom;
  std::array<char, kLengthRoom> digits;
  const size_t length = static_cast<size_t>(
      std::to_chars(digits.begin(), digits.end(), payload).ptr - digits.begin());
  char* start = record.data() + kLengthRoom - length - 1;
  std::copy_n(digits.begin(), length, start);
  start[length] = '\n';
  stream_->send(std::string_view(start, length + 1 + payload));
  if (record.capacity() > kKeptRecordBytes) std::string().swap(record);
}

void HttpScheduler::subscribed(const std::string& framework) {
  framework_ = framework;
  v1::scheduler::Event event;
  event.set_type(v1::scheduler::Event::SUBSCRIBED);
  event.mutable_subscribed()->mutable_framework_id()->set_value(framework);
  event.mutable_subscribed()->set_heartbeat_interval_seconds(context_->heartbeat.secondsDouble());
  *event.mutable_subscribed()->mutable_master_info() = context_->masterInfo;
  send(event);
}

void HttpScheduler::offers(const std::vector<Offer>& offers) {
  v1::scheduler::Event event;
  event.set_type(v1::scheduler::Event::OFFERS);
  for (const Offer& offer : offers) {
    v1::Offer& out = *event.mutable_offers()->add_offers();
    out.mutable_id()->set_value(offer.id);
    out.mutable_framework_id()->set_value(offer.framework);
    out.mutable_agent_id()->set_value(offer.agent);
    out.set_hostname(offer.hostname);
    // Revocable resources carry `revocable` (with throttle_info when throttleable).
    *out.mutable_resources() = toProto(offer.resources, offer.role);
    if (!refinement_) {
      for (v1::Resource& resource : *out.mutable_resources()) downgradeReservation(resource);
    }
    out.mutable_allocation_info()->set_role(offer.role);
    const v1::AgentInfo* agent = context_->agentInfo ? context_->agentInfo(offer.agent) : nullptr;
    if (agent) {
      *out.mutable_attributes() = agent->attributes();
      if (agent->has_domain()) *out.mutable_domain() = agent->domain();
    }
    // Mesos always fills it and some clients read it unconditionally.
    v1::URL& url = *out.mutable_url();
    url.set_scheme("http");
    const std::string ip = context_->agentIp ? context_->agentIp(offer.agent) : "";
    url.mutable_address()->set_ip(ip.empty() ? "127.0.0.1" : ip);
    url.mutable_address()->set_hostname(offer.hostname);
    // The port the agent registered (AgentInfo.port, Mesos's 5051 unless it said otherwise).
    url.mutable_address()->set_port(agent ? agent->port() : kAgentPort);
    url.set_path("/slave(1)");
  }
  send(event);
}

void HttpScheduler::rescind(const std::string& offer) {
  v1::scheduler::Event event;
  event.set_type(v1::scheduler::Event::RESCIND);
  event.mutable_rescind()->mutable_offer_id()->set_value(offer);
  send(event);
}

v1::TaskStatus toProtoStatus(const TaskStatus& status, double unixEpochOffset) {
  v1::TaskStatus out;
  out.mutable_task_id()->set_value(status.task);
  out.set_state(agent::taskStateToProto(status.state));
  if (!status.agent.empty()) out.mutable_agent_id()->set_value(status.agent);
  std::string message = status.message;
  v1::TaskStatus::Reason reason;
  if (!status.reason.empty()) {
    if (v1::TaskStatus::Reason_Parse(status.reason, &reason)) {
      out.set_reason(reason);
    } else {
      message = status.reason + (message.empty() ? "" : ": " + message);
    }
  }
  if (!message.empty()) out.set_message(message);
  out.set_timestamp(unixEpochOffset + static_cast<double>(status.time.nanos()) / 1e9);
  out.set_source(status.reason == "REASON_INVALID_OFFERS" ||
                         status.reason == "REASON_TASK_INVALID" ||
                         status.reason == "REASON_RECONCILIATION"
                     ? v1::TaskStatus::SOURCE_MASTER
                     : v1::TaskStatus::SOURCE_AGENT);
  return out;
}

void HttpScheduler::update(const TaskStatus& status) {
  v1::scheduler::Event event;
  event.set_type(v1::scheduler::Event::UPDATE);
  *event.mutable_update()->mutable_status() = toProtoStatus(status, context_->unixEpochOffset);
  send(event);
}

void HttpScheduler::updateToAcknowledge(const TaskStatus& status, const std::string& uuid) {
  v1::scheduler::Event event;
  event.set_type(v1::scheduler::Event::UPDATE);
  *event.mutable_update()->mutable_status() = toProtoStatus(status, context_->unixEpochOffset);
  event.mutable_update()->mutable_status()->set_uuid(uuid);
  send(event);
}

void HttpScheduler::inverseOffers(const std::vector<InverseOffer>& offers) {
  v1::scheduler::Event event;
  event.set_type(v1::scheduler::Event::INVERSE_OFFERS);
  for (const InverseOffer& offer : offers) {
    v1::InverseOffer& out = *event.mutable_inverse_offers()->add_inverse_offers();
    out.mutable_id()->set_value(offer.id);
    out.mutable_framework_id()->set_value(offer.framework);
    out.mutable_agent_id()->set_value(offer.agent);
    *out.mutable_unavailability() = offer.unavailability;
  }
  send(event);
}

void HttpScheduler::failure(const std::string& agent) {
  v1::scheduler::Event event;
  event.set_type(v1::scheduler::Event::FAILURE);
  event.mutable_failure()->mutable_agent_id()->set_value(agent);
  send(event);
}

void HttpScheduler::error(const std::string& message) {
  v1::scheduler::Event event;
  event.set_type(v1::scheduler::Event::ERROR);
  event.mutable_error()->set_message(message);
  send(event);
}

void HttpScheduler::setCapabilities(const v1::FrameworkInfo& info) {
  refinement_ = std::ranges::any_of(info.capabilities(), [](const auto& capability) {
    return capability.type() == v1::FrameworkInfo::Capability::RESERVATION_REFINEMENT;
  });
}

void HttpScheduler::heartbeat() {
  v1::scheduler::Event event;
  event.set_type(v1::scheduler::Event::HEARTBEAT);
  send(event);
}

}  // namespace harvest::master
