#include "testing/framework_client.h"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "testing/operator_client.h"

namespace harvest::testkit {

v1::FrameworkInfo frameworkInfo(const std::string& role, const std::string& name) {
  v1::FrameworkInfo info;
  info.set_user("test");
  info.set_name(name);
  info.add_roles(role);
  return info;
}

v1::TaskInfo taskInfo(const std::string& id, const std::string& agent, std::string_view resources,
                      std::optional<double> seconds) {
  v1::TaskInfo task;
  task.set_name(id);
  task.mutable_task_id()->set_value(id);
  task.mutable_agent_id()->set_value(agent);
  *task.mutable_resources() = toProto(R(resources));
  if (seconds) {
    v1::Label& label = *task.mutable_labels()->add_labels();
    label.set_key(std::string(wire::kDurationLabel));
    label.set_value(std::to_string(*seconds));
  }
  return task;
}

v1::Offer::Operation launch(const std::vector<v1::TaskInfo>& tasks) {
  v1::Offer::Operation operation;
  operation.set_type(v1::Offer::Operation::LAUNCH);
  for (const v1::TaskInfo& task : tasks) *operation.mutable_launch()->add_task_infos() = task;
  return operation;
}

Call acceptCall(const v1::Offer& offer, const std::vector<v1::Offer::Operation>& operations,
                double refuseSeconds) {
  Call call;
  call.set_type(Call::ACCEPT);
  *call.mutable_accept()->add_offer_ids() = offer.id();
  for (const v1::Offer::Operation& operation : operations) {
    *call.mutable_accept()->add_operations() = operation;
  }
  call.mutable_accept()->mutable_filters()->set_refuse_seconds(refuseSeconds);
  return call;
}

Call declineCall(const v1::Offer& offer, double refuseSeconds) {
  Call call;
  call.set_type(Call::DECLINE);
  *call.mutable_decline()->add_offer_ids() = offer.id();
  call.mutable_decline()->mutable_filters()->set_refuse_seconds(refuseSeconds);
  return call;
}

Call rolesCall(Call::Type type, const std::vector<std::string>& roles) {
  Call call;
  call.set_type(type);
  for (const std::string& role : roles) {
    if (type == Call::SUPPRESS) call.mutable_suppress()->add_roles(role);
    if (type == Call::REVIVE) call.mutable_revive()->add_roles(role);
  }
  if (type == Call::REVIVE && roles.empty()) call.mutable_revive();
  return call;
}

const v1::Resource* findResource(const v1::Offer& offer, const std::string& name) {
  for (const v1::Resource& resource : offer.resources()) {
    if (resource.name() == name) return &resource;
  }
  return nullptr;
}

int FrameworkClient::subscribe(const v1::FrameworkInfo& info, const http::ClientOptions& options,
                               bool readFirstEvent) {
  Call::Subscribe subscribeCall;
  *subscribeCall.mutable_framework_info() = info;
  return subscribe(subscribeCall, options, readFirstEvent);
}

int FrameworkClient::subscribe(const Call::Subscribe& subscribeCall,
                               const http::ClientOptions& options, bool readFirstEvent) {
  const v1::FrameworkInfo& info = subscribeCall.framework_info();
  Call call;
  call.set_type(Call::SUBSCRIBE);
  *call.mutable_subscribe() = subscribeCall;
  if (info.has_id()) *call.mutable_framework_id() = info.id();
  for (int hop = 0;; ++hop) {
    Result<http::Connection> connection =
        http::Connection::connect(host_, port_, kTimeout, options);
    if (!connection.ok()) {
      ADD_FAILURE() << connection.message();
      return 0;
    }
    Result<http::StreamReader> opened =
        http::StreamReader::open(std::move(connection).value(), "POST", "/api/v1/scheduler",
                                 headers(), encode(call), kTimeout);
    if (!opened.ok()) {
      ADD_FAILURE() << opened.message();
      return 0;
    }
    head_ = opened->head();
    const std::optional<MasterEndpoint> leader = redirectTarget(head_);
    if (!leader || hop == kMaxRedirects) {
      stream_.emplace(std::move(opened).value());
      break;
    }
    host_ = leader->host;
    port_ = leader->port;
  }
  if (head_.status != 200) return head_.status;
  if (const std::string* streamId = head_.header("mesos-stream-id")) streamId_ = *streamId;
  if (!readFirstEvent) return 200;
  std::optional<Event> first = next(kTimeout);
  if (!first) {
    ADD_FAILURE() << "no first event on the subscription stream";
    return 0;
  }
  firstEvent_ = *first;
  if (first->type() == Event::SUBSCRIBED) id_ = first->subscribed().framework_id().value();
  return 200;
}

std::optional<Event> FrameworkClient::next(Duration timeout) {
  const Clock::time_point deadline = Clock::now() + timeout.chrono();
  while (pending_.empty()) {
    if (!readSome(deadline)) return std::nullopt;
  }
  Event event = std::move(pending_.front());
  pending_.pop_front();
  return event;
}

std::optional<Event> FrameworkClient::waitFor(Event::Type type, Duration timeout) {
  const Clock::time_point deadline = Clock::now() + timeout.chrono();
  size_t scanned = 0;
  while (true) {
    for (; scanned < pending_.size(); ++scanned) {
      if (pending_[scanned].type() == type) {
        Event event = std::move(pending_[scanned]);
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(scanned));
        return event;
      }
    }
    if (!readSome(deadline)) return std::nullopt;
  }
}

std::vector<v1::Offer> FrameworkClient::offers(Duration timeout) {
  std::optional<Event> event = waitFor(Event::OFFERS, timeout);
  if (!event) return {};
  return {event->offers().offers().begin(), event->offers().offers().end()};
}

v1::Offer FrameworkClient::offer() {
  std::vector<v1::Offer> got = offers();
  EXPECT_EQ(got.size(), 1u);
  return got.empty() ? v1::Offer() : got.front();
}

v1::TaskStatus FrameworkClient::update() {
  std::optional<Event> event = waitFor(Event::UPDATE, kTimeout);
  EXPECT_TRUE(event.has_value()) << "no UPDATE";
  return event ? event->update().status() : v1::TaskStatus();
}

void FrameworkClient::drain(Duration duration) {
  const Clock::time_point deadline = Clock::now() + duration.chrono();
  while (readSome(deadline)) {
  }
}

bool FrameworkClient::streamEnds(Duration timeout) {
  const Clock::time_point deadline = Clock::now() + timeout.chrono();
  while (!ended_ && readSome(deadline)) {
  }
  return ended_;
}

http::ClientResponse FrameworkClient::call(Call call, std::optional<std::string> streamId) {
  if (!call.has_framework_id()) call.mutable_framework_id()->set_value(id_);
  http::Headers extra;
  const std::string stream = streamId.value_or(streamId_);
  if (!stream.empty()) extra.emplace_back("Mesos-Stream-Id", stream);
  return post(extra, encode(call));
}

http::ClientResponse FrameworkClient::post(const http::Headers& extra, std::string_view body) {
  http::Headers all = headers();
  all.insert(all.end(), extra.begin(), extra.end());
  return postRaw(all, body);
}

http::ClientResponse FrameworkClient::postRaw(const http::Headers& headers, std::string_view body) {
  if (!calls_) {
    Result<http::Connection> connection = http::Connection::connect(host_, port_, kTimeout);
    if (!connection.ok()) {
      ADD_FAILURE() << connection.message();
      return {};
    }
    calls_.emplace(std::move(connection).value());
  }
  Result<http::ClientResponse> response =
      calls_->request("POST", "/api/v1/scheduler", headers, body, kTimeout);
  if (!response.ok()) {
    ADD_FAILURE() << response.message();
    return {};
  }
  return std::move(response).value();
}

std::string FrameworkClient::encode(const Call& call) const {
  return format_ == Format::kJson ? toJson(call) : call.SerializeAsString();
}

http::Headers FrameworkClient::headers() const {
  http::Headers out = auth_;
  out.emplace_back("Content-Type", mediaType(format_));
  out.emplace_back("Accept", mediaType(format_));
  return out;
}

bool FrameworkClient::readSome(Clock::time_point deadline) {
  if (!stream_ || ended_) return false;
  const Duration left = remaining(deadline);
  if (left == Duration::zero()) return false;
  Result<std::optional<std::string>> chunk = stream_->nextChunk(left);
  if (!chunk.ok()) {
    ended_ = true;
    return false;
  }
  if (!chunk->has_value()) return false;
  std::vector<std::string> records;
  const Status fed = decoder_.feed(**chunk, &records);
  EXPECT_TRUE(fed.ok()) << fed.message();
  for (const std::string& record : records) {
    Event event;
    if (format_ == Format::kJson) {
      google::protobuf::util::JsonParseOptions options;
      options.ignore_unknown_fields = true;
      const auto status = google::protobuf::util::JsonStringToMessage(record, &event, options);
      EXPECT_TRUE(status.ok()) << status.message() << " in " << record;
    } else {
      EXPECT_TRUE(event.ParseFromString(record)) << "an event that does not parse";
    }
    if (event.type() == Event::HEARTBEAT) {
      ++heartbeats_;
    } else {
      pending_.push_back(std::move(event));
    }
  }
  return true;
}

ResourceProtos reservedCpus(const std::string& role, const std::string& principal) {
  ResourceProtos out = toProto(R("cpus:2"));
  v1::Resource::ReservationInfo& reservation = *out.Mutable(0)->add_reservations();
  reservation.set_type(v1::Resource::ReservationInfo::DYNAMIC);
  reservation.set_role(role);
  reservation.set_principal(principal);
  return out;
}

Resources nextOffered(FrameworkClient& framework, std::vector<v1::Offer>* offers) {
  *offers = framework.offers();
  Resources all;
  for (const v1::Offer& offer : *offers) all += resourcesOf(offer.resources());
  return all;
}

}  // namespace harvest::testkit
