// What the v1 operator API tests share: POST /api/v1 in JSON or protobuf, the calls they build,
// and the answers read back as values to compare exactly.
#pragma once

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protos/master_api.pb.h"
#include "testing/cluster.h"
#include "testing/operator_client.h"

namespace harvest::master::operator_api {

using namespace testkit;  // NOLINT: the fakes are these tests' vocabulary.
using OperatorCall = v1::master::Call;
using v1::master::Response;

inline http::ClientResponse postApi(uint16_t port, const std::string& body, const char* contentType,
                                    const http::Headers& extra = {}) {
  http::Headers headers = {{"Content-Type", contentType}};
  headers.insert(headers.end(), extra.begin(), extra.end());
  return request(port, "POST", "/api/v1", headers, body);
}

inline std::string jsonOf(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(message, &out, options).ok());
  return out;
}

// The call in `format`, answered in the same format; the status in *status.
inline Response call(uint16_t port, const OperatorCall& call, Format format, int* status = nullptr,
                     const http::Headers& auth = {}) {
  const bool json = format == Format::kJson;
  http::ClientResponse answer = postApi(port, json ? jsonOf(call) : call.SerializeAsString(),
                                        json ? kJsonType : kProtobufType, auth);
  if (status) *status = answer.status;
  Response response;
  if (answer.status != 200 || answer.body.empty()) return response;
  const std::string* type = answer.header("content-type");
  EXPECT_TRUE(type != nullptr && *type == (json ? kJsonType : kProtobufType));
  if (json) {
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(answer.body, &response).ok())
        << answer.body;
  } else {
    EXPECT_TRUE(response.ParseFromString(answer.body));
  }
  return response;
}

inline OperatorCall ofType(OperatorCall::Type type) {
  OperatorCall out;
  out.set_type(type);
  return out;
}

inline OperatorCall weightsCall(const std::map<std::string, double>& weights) {
  OperatorCall out = ofType(OperatorCall::UPDATE_WEIGHTS);
  for (const auto& [role, weight] : weights) {
    auto* info = out.mutable_update_weights()->add_weight_infos();
    info->set_role(role);
    info->set_weight(weight);
  }
  return out;
}

struct QuotaSpec {
  std::string role;
  std::map<std::string, double> guarantees, limits;
};

inline OperatorCall quotaCall(const std::vector<QuotaSpec>& specs) {
  OperatorCall out = ofType(OperatorCall::UPDATE_QUOTA);
  for (const QuotaSpec& spec : specs) {
    auto* config = out.mutable_update_quota()->add_quota_configs();
    config->set_role(spec.role);
    for (const auto& [name, value] : spec.guarantees) {
      (*config->mutable_guarantees())[name].set_value(value);
    }
    for (const auto& [name, value] : spec.limits)
      (*config->mutable_limits())[name].set_value(value);
  }
  return out;
}

inline OperatorCall reserveCall(bool reserve, const std::string& agent, const std::string& role,
                                const std::string& principal) {
  OperatorCall out =
      ofType(reserve ? OperatorCall::RESERVE_RESOURCES : OperatorCall::UNRESERVE_RESOURCES);
  if (reserve) {
    out.mutable_reserve_resources()->mutable_agent_id()->set_value(agent);
    *out.mutable_reserve_resources()->mutable_resources() = reservedCpus(role, principal);
  } else {
    out.mutable_unreserve_resources()->mutable_agent_id()->set_value(agent);
    *out.mutable_unreserve_resources()->mutable_resources() = reservedCpus(role, principal);
  }
  return out;
}

// A persistent volume `id` of disk:`mb` reserved statically for `role`, created by `creator`.
inline ResourceProtos volumeOf(const std::string& role, const std::string& id,
                               const std::string& creator, double mb) {
  ResourceProtos out;
  v1::Resource& volume = *out.Add();
  volume.set_name("disk");
  volume.set_type(v1::Value::SCALAR);
  volume.mutable_scalar()->set_value(mb);
  v1::Resource::ReservationInfo& reservation = *volume.add_reservations();
  reservation.set_type(v1::Resource::ReservationInfo::STATIC);
  reservation.set_role(role);
  volume.mutable_disk()->mutable_persistence()->set_id(id);
  if (!creator.empty()) volume.mutable_disk()->mutable_persistence()->set_principal(creator);
  volume.mutable_disk()->mutable_volume()->set_container_path("data");
  volume.mutable_disk()->mutable_volume()->set_mode(v1::Resource::DiskInfo::Volume::RW);
  return out;
}

inline OperatorCall volumesCall(bool create, const std::string& agent,
                                const ResourceProtos& volumes) {
  OperatorCall out = ofType(create ? OperatorCall::CREATE_VOLUMES : OperatorCall::DESTROY_VOLUMES);
  auto fill = [&](auto* body) {
    body->mutable_agent_id()->set_value(agent);
    *body->mutable_volumes() = volumes;
  };
  if (create) {
    fill(out.mutable_create_volumes());
  } else {
    fill(out.mutable_destroy_volumes());
  }
  return out;
}

inline OperatorCall teardownCall(const std::string& framework) {
  OperatorCall out = ofType(OperatorCall::TEARDOWN);
  out.mutable_teardown()->mutable_framework_id()->set_value(framework);
  return out;
}

inline OperatorCall goneCall(const std::string& agent) {
  OperatorCall out = ofType(OperatorCall::MARK_AGENT_GONE);
  out.mutable_mark_agent_gone()->mutable_agent_id()->set_value(agent);
  return out;
}

inline std::map<std::string, double> weightsOf(const Response& response) {
  std::map<std::string, double> out;
  for (const auto& info : response.get_weights().weight_infos()) out[info.role()] = info.weight();
  return out;
}

// role -> (guarantees, limits) as GET_QUOTA's configs say.
inline std::map<std::string, QuotaSpec> quotasOf(const Response& response) {
  std::map<std::string, QuotaSpec> out;
  for (const auto& config : response.get_quota().status().configs()) {
    QuotaSpec& spec = out[config.role()];
    spec.role = config.role();
    for (const auto& [name, scalar] : config.guarantees()) spec.guarantees[name] = scalar.value();
    for (const auto& [name, scalar] : config.limits()) spec.limits[name] = scalar.value();
  }
  return out;
}

inline bool operator==(const QuotaSpec& a, const QuotaSpec& b) {
  return a.role == b.role && a.guarantees == b.guarantees && a.limits == b.limits;
}

// A task launched on the cluster's agent and running.
inline RunTask launchRunning(Cluster& cluster, const std::string& id,
                             const std::string& resources) {
  const v1::Offer offer = cluster.framework.offer();
  EXPECT_EQ(cluster.framework.call(acceptCall(offer, {launch({taskInfo(id, "a1", resources)})}, 10))
                .status,
            202);
  std::optional<RunTask> task = cluster.agent.expectRunTask();
  EXPECT_TRUE(task.has_value());
  EXPECT_EQ(cluster.agent.status(*task, TaskState::kRunning), 202);
  EXPECT_EQ(cluster.framework.update().state(), v1::TASK_RUNNING);
  return *task;
}

}  // namespace harvest::master::operator_api
