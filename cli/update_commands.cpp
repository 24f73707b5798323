// The commands that change the cluster: each one operator API call, checked here first so that
// a mistake in the command line is said before anything is sent.
#include <google/protobuf/util/json_util.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "resources/kinds.h"
#include "resources/parse.h"
#include "resources/proto/convert.h"

namespace harvest::cli {
namespace {

using v1::master::Call;

// 0 when the master took it; it answers these calls with no body.
int send(Invocation& in, const Call& call, const std::string& done) {
  Result<v1::master::Response> answer = in.master.call(call);
  if (!answer.ok()) return failed(in, answer.status());
  if (in.json) {
    printJson(in, *answer);
  } else {
    in.out << done << "\n";
  }
  return 0;
}

// "guarantees=cpus:2;mem:1024" into `amounts` (unreserved scalars, as Mesos's QuotaConfig).
Status readQuantities(const std::string& text,
                      google::protobuf::Map<std::string, v1::Value::Scalar>& amounts) {
  Result<Resources> parsed = parseResources(text);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->reserved().empty()) {
    return Status::invalidArgument("'" + text + "': quota is amounts, without reservations");
  }
  for (const auto& [kind, amount] : parsed->quantities()) {
    amounts[kinds::name(kind)].set_value(amount.toDouble());
  }
  return Status();
}

int reservation(Invocation& in, bool reserve) {
  const char* what = reserve ? "reserve" : "unreserve";
  if (in.args.size() != 2) return usageError(in, std::string(what) + " AGENT RESOURCES");
  Result<Resources> resources = parseResources(in.args[1]);
  if (!resources.ok()) return usageError(in, "bad RESOURCES: " + resources.message());
  if (resources->empty() || !resources->unreserved().empty()) {
    return usageError(in, "bad RESOURCES '" + in.args[1] +
                              "': name each resource's role, as cpus(ROLE):2;mem(ROLE):512");
  }
  Call call;
  call.set_type(reserve ? Call::RESERVE_RESOURCES : Call::UNRESERVE_RESOURCES);
  // The text says cpus(ROLE):2; what the operator reserves is a dynamic reservation made by
  // the principal the call authenticates as (Mesos checks the two match).
  ResourceProtos protos = toProto(*resources);
  for (v1::Resource& resource : protos) {
    for (auto& reservation : *resource.mutable_reservations()) {
      reservation.set_type(v1::Resource::ReservationInfo::DYNAMIC);
      if (reservation.principal().empty() && in.master.credential()) {
        reservation.set_principal(in.master.credential()->principal);
      }
    }
  }
  if (reserve) {
    call.mutable_reserve_resources()->mutable_agent_id()->set_value(in.args[0]);
    *call.mutable_reserve_resources()->mutable_resources() = protos;
  } else {
    call.mutable_unreserve_resources()->mutable_agent_id()->set_value(in.args[0]);
    *call.mutable_unreserve_resources()->mutable_resources() = protos;
  }
  return send(in, call,
              std::string(reserve ? "reserved " : "unreserved ") + resources->toString() + " on " +
                  in.args[0]);
}

int maintenance(Invocation& in, bool start) {
  if (in.args.empty()) return usageError(in, "name the machines: HOSTNAME...");
  Call call;
  call.set_type(start ? Call::START_MAINTENANCE : Call::STOP_MAINTENANCE);
  auto* machines = start ? call.mutable_start_maintenance()->mutable_machines()
                         : call.mutable_stop_maintenance()->mutable_machines();
  std::string names;
  for (const std::string& hostname : in.args) {
    machines->Add()->set_hostname(hostname);
    names += " " + hostname;
  }
  return send(in, call, std::string(start ? "down for maintenance:" : "back up:") + names);
}

}  // namespace

int setQuota(Invocation& in) {
  if (in.args.empty() || in.args.size() > 3) {
    return usageError(in, "quota set ROLE [guarantees=RESOURCES] [limits=RESOURCES]");
  }
  Call call;
  call.set_type(Call::UPDATE_QUOTA);
  v1::master::QuotaConfig* config = call.mutable_update_quota()->add_quota_configs();
  config->set_role(in.args[0]);
  for (size_t i = 1; i < in.args.size(); ++i) {
    const std::string& arg = in.args[i];
    const size_t eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    if (eq == std::string::npos || (key != "guarantees" && key != "limits")) {
      return usageError(in, "'" + arg + "': expected guarantees=RESOURCES or limits=RESOURCES");
    }
    Status read =
        readQuantities(arg.substr(eq + 1), key == "guarantees" ? *config->mutable_guarantees()
                                                               : *config->mutable_limits());
    if (!read.ok()) return usageError(in, "bad " + key + ": " + read.message());
  }
  return send(in, call, "quota of " + in.args[0] + " set");
}

int setWeights(Invocation& in) {
  if (in.args.empty()) return usageError(in, "weights set ROLE=WEIGHT...");
  Call call;
  call.set_type(Call::UPDATE_WEIGHTS);
  for (const std::string& arg : in.args) {
    const size_t eq = arg.find('=');
    char* end = nullptr;
    const double weight = eq == std::string::npos ? 0 : std::strtod(arg.c_str() + eq + 1, &end);
    if (eq == 0 || eq == std::string::npos || end == arg.c_str() + eq + 1 || *end != '\0' ||
        !(weight > 0)) {
      return usageError(in, "'" + arg + "': expected ROLE=WEIGHT with a positive WEIGHT");
    }
    v1::master::WeightInfo* info = call.mutable_update_weights()->add_weight_infos();
    info->set_role(arg.substr(0, eq));
    info->set_weight(weight);
  }
  return send(in, call, "weights set");
}

int reserve(Invocation& in) {
  return reservation(in, true);
}
int unreserve(Invocation& in) {
  return reservation(in, false);
}
int startMaintenance(Invocation& in) {
  return maintenance(in, true);
}
int stopMaintenance(Invocation& in) {
  return maintenance(in, false);
}

int scheduleMaintenance(Invocation& in) {
  std::ifstream file(in.args[0]);
  if (!file) return usageError(in, "cannot read the schedule file '" + in.args[0] + "'");
  std::stringstream text;
  text << file.rdbuf();
  Call call;
  call.set_type(Call::UPDATE_MAINTENANCE_SCHEDULE);
  auto parsed = google::protobuf::util::JsonStringToMessage(
      text.str(), call.mutable_update_maintenance_schedule()->mutable_schedule());
  if (!parsed.ok()) {
    return usageError(in, "'" + in.args[0] + "' is not a maintenance schedule in JSON: " +
                              std::string(parsed.message()));
  }
  return send(in, call, "maintenance schedule updated");
}

}  // namespace harvest::cli
