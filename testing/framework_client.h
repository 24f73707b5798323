// A Mesos v1 scheduler over HTTP for tests, and builders of the calls it sends.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "net/recordio.h"
#include "protos/scheduler.pb.h"
#include "testing/common.h"
#include "testing/leader_redirect.h"
#include "wire/scheduler_codec.h"

namespace harvest::testkit {

using v1::scheduler::Call;
using v1::scheduler::Event;
using wire::Format;

v1::FrameworkInfo frameworkInfo(const std::string& role, const std::string& name = "fw");

v1::TaskInfo taskInfo(const std::string& id, const std::string& agent, std::string_view resources,
                      std::optional<double> seconds = std::nullopt);

v1::Offer::Operation launch(const std::vector<v1::TaskInfo>& tasks);

Call acceptCall(const v1::Offer& offer, const std::vector<v1::Offer::Operation>& operations,
                double refuseSeconds);

Call declineCall(const v1::Offer& offer, double refuseSeconds);

Call rolesCall(Call::Type type, const std::vector<std::string>& roles);

const v1::Resource* findResource(const v1::Offer& offer, const std::string& name);

// cpus:2 dynamically reserved for `role` by `principal`, as RESERVE names it.
ResourceProtos reservedCpus(const std::string& role, const std::string& principal);

// SUBSCRIBE and the event stream, in JSON or protobuf; calls go over a keep-alive connection
// of their own with the stream's Mesos-Stream-Id. HEARTBEATs are counted and dropped. Given a
// standby master, SUBSCRIBE follows its 307 to the leader, and calls go there too.
class FrameworkClient {
 public:
  explicit FrameworkClient(uint16_t port, Format format = Format::kJson, http::Headers auth = {})
      : port_(port), format_(format), auth_(std::move(auth)) {}

  // The SUBSCRIBE response's status (0 if the exchange failed). On 200 the first event is read
  // into firstEvent() unless `readFirstEvent` is false (a subscriber that never reads).
  int subscribe(const v1::FrameworkInfo& info, const http::ClientOptions& options = {},
                bool readFirstEvent = true);
  // The same with the rest of what SUBSCRIBE may carry (suppressed roles, offer constraints).
  int subscribe(const Call::Subscribe& subscribe, const http::ClientOptions& options = {},
                bool readFirstEvent = true);

  const http::ClientResponse& head() const { return head_; }
  const Event& firstEvent() const { return firstEvent_; }
  const std::string& id() const { return id_; }
  void setId(std::string id) { id_ = std::move(id); }
  const std::string& streamId() const { return streamId_; }
  // Where the subscription landed: the given master, or the leader a standby named.
  uint16_t port() const { return port_; }
  uint64_t heartbeats() const { return heartbeats_; }

  // The next event (not a HEARTBEAT), or nullopt after `timeout` or at the stream's end.
  std::optional<Event> next(Duration timeout);

  // The first event of `type`; events of other types stay queued for next().
  std::optional<Event> waitFor(Event::Type type, Duration timeout);

  // The offers of the next OFFERS event (empty if none came).
  std::vector<v1::Offer> offers(Duration timeout = kTimeout);

  // The next offer, which must come.
  v1::Offer offer();

  // The next UPDATE's status, which must come.
  v1::TaskStatus update();

  // Reads what arrives for `duration` and keeps it for next() and waitFor(): stops the stream from
  // backing up while the test does something else.
  void drain(Duration duration);

  // True when the stream ends (the server's last chunk, or its close) within `timeout`. Events
  // read meanwhile stay queued.
  bool streamEnds(Duration timeout);

  // A call of this framework with its stream id; `streamId` overrides it (nullopt: the
  // framework's own, "" : no header at all).
  http::ClientResponse call(Call call, std::optional<std::string> streamId = std::nullopt);

  // POST /api/v1/scheduler with the framework's Content-Type, Accept and credentials plus
  // `extra`, on the calls connection.
  http::ClientResponse post(const http::Headers& extra, std::string_view body);

  // POST /api/v1/scheduler with exactly these headers.
  http::ClientResponse postRaw(const http::Headers& headers, std::string_view body);

  std::string encode(const Call& call) const;

 private:
  http::Headers headers() const;

  bool readSome(Clock::time_point deadline);

  std::string host_ = kHost;
  uint16_t port_;
  Format format_;
  http::Headers auth_;
  std::optional<http::StreamReader> stream_;
  std::optional<http::Connection> calls_;
  http::ClientResponse head_;
  http::RecordDecoder decoder_;
  std::deque<Event> pending_;
  Event firstEvent_;
  std::string id_;
  std::string streamId_;
  uint64_t heartbeats_ = 0;
  bool ended_ = false;
};

// Every resource of the offers of the next OFFERS event.
Resources nextOffered(FrameworkClient& framework, std::vector<v1::Offer>* offers);

}  // namespace harvest::testkit
