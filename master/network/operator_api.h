// OperatorApi: the Mesos v1 operator HTTP API on POST /api/v1 (protos/master_api.proto), in
// JSON or protobuf as Content-Type says, answered in the encoding Accept asks for.
//
// Calls that read (GET_*) answer 200 with a Response; calls that change something answer 202
// (200 for UPDATE_QUOTA, TEARDOWN and MARK_AGENT_GONE, as Mesos does) with no body. A call is
// checked whole before anything changes: a malformed or impossible call is 400 and changes
// nothing. With ACLs (protos/security.proto) each change needs its permission, else 403:
// UPDATE_WEIGHTS and UPDATE_QUOTA for every role named, RESERVE_RESOURCES for the role
// (reserve_resources), UNRESERVE_RESOURCES for the role and the reservation's principal
// (unreserve_resources), TEARDOWN for the framework's principal (teardown_frameworks), the
// maintenance calls and MARK_AGENT_GONE for the agents named (manage_agents).
//
// SUBSCRIBE opens a RecordIO stream of Events: SUBSCRIBED with the whole state, then
// TASK_ADDED, TASK_UPDATED, AGENT_ADDED, AGENT_REMOVED, FRAMEWORK_ADDED, FRAMEWORK_UPDATED and
// FRAMEWORK_REMOVED as the master changes, and HEARTBEATs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "master/master.h"
#include "master/master_observer.h"
#include "net/http_server.h"
#include "protos/master_api.pb.h"
#include "wire/scheduler_codec.h"

namespace harvest::master {

class NetworkMaster;

class OperatorApi final : public MasterObserver {
 public:
  explicit OperatorApi(NetworkMaster* network) : network_(network) {}

  void handle(const http::Request& request, http::Responder& responder,
              const std::string& principal);
  // A HEARTBEAT to every subscriber; closed streams are dropped.
  void heartbeat();
  size_t subscribers() const { return subscribers_.size(); }

  // MasterObserver: each change becomes an event on every subscriber's stream.
  void taskAdded(const std::string& framework, const std::string& task) override;
  void taskUpdated(const agent::TaskStatus& status) override;
  void agentAdded(const std::string& agent) override;
  void agentRemoved(const std::string& agent) override;
  void frameworkAdded(const std::string& framework) override;
  void frameworkUpdated(const std::string& framework) override;
  void frameworkRemoved(const std::string& framework) override;

 private:
  struct Subscriber {
    std::shared_ptr<http::Stream> stream;
    wire::Format format;
  };

  http::Response answer(const v1::master::Call& call, wire::Format format,
                        const std::string& principal);
  // The answer to a reading call (GET_*), or nothing for a call that changes something.
  std::optional<v1::master::Response> answerRead(v1::master::Call::Type type) const;
  // The changes: each checks permission (403) and validity (400) before applying anything.
  http::Response updateWeights(const v1::master::Call::UpdateWeights& call,
                               const std::string& principal);
  http::Response updateQuota(const v1::master::Call::UpdateQuota& call,
                             const std::string& principal);
  http::Response reserve(const std::string& agent,
                         const google::protobuf::RepeatedPtrField<v1::Resource>& resources,
                         bool reserve, const std::string& principal);
  // CREATE_VOLUMES (`create`) and DESTROY_VOLUMES.
  http::Response volumes(const std::string& agent,
                         const google::protobuf::RepeatedPtrField<v1::Resource>& volumes,
                         bool create, const std::string& principal);
  // GROW_VOLUME and SHRINK_VOLUME (`name`), as conversions the caller has made.
  http::Response resize(const std::string& agent, const v1::Resource& volume,
                        const Result<ResourceConversion>& conversion, const std::string& name,
                        const std::string& principal);
  // The conversion applied to what the agent has free: 202, or the refusal named after `name`.
  http::Response convertOnAgent(const std::string& agent, const ResourceConversion& conversion,
                                const std::string& name);
  http::Response teardown(const std::string& framework, const std::string& principal);
  http::Response maintenance(const v1::master::Call& call, const std::string& principal);
  http::Response markAgentGone(const std::string& agent, const std::string& principal);
  void subscribe(wire::Format format, http::Responder& responder);
  void broadcast(const v1::master::Event& event);

  v1::master::Response::GetState state() const;
  // What tasks and offers hold, by agent and by framework (operator_api.cpp).
  struct Holdings;
  Holdings holdings() const;
  v1::master::Response::GetAgents agents() const;
  v1::master::Response::GetAgents::Agent agentView(const std::string& id,
                                                   const Holdings& holdings) const;
  v1::master::Response::GetFrameworks frameworks() const;
  v1::master::Response::GetFrameworks::Framework frameworkView(const Master::FrameworkView& view,
                                                               const Holdings& holdings) const;
  v1::master::Response::GetFrameworks::Framework frameworkView(const std::string& id) const;
  v1::master::Response::GetTasks tasks() const;
  v1::master::Task taskView(const std::string& framework, const std::string& task) const;
  v1::master::Response::GetRoles roles() const;
  v1::master::Response::GetQuota quota() const;
  v1::master::Response::GetFlags flags() const;
  v1::master::Response::GetMaster masterInfo() const;
  v1::master::Response::GetMetrics metrics() const;
  v1::master::Response::GetMaintenanceSchedule schedule() const;

  NetworkMaster* network_;
  std::vector<Subscriber> subscribers_;
};

}  // namespace harvest::master
