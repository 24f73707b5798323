// Master recovery: what the master persists (protos/master_state.proto) and how a restarted
// master rebuilds its state from it and from what frameworks and agents report.
//
// Order: the persisted frameworks are added first (inactive, until they re-subscribe), so
// every allocation an agent reports finds its framework; then agents re-register with what
// they hold (adoptAgent adds it exactly once). No offers are made until recovery ends: every
// expected agent is back, or the timeout has passed with at least the minimum fraction back.
#include <glog/logging.h>

#include <chrono>
#include <filesystem>

#include "common/atomic_file.h"
#include "master/master.h"
#include "protos/master_state.pb.h"
#include "resources/proto/convert.h"

namespace harvest::master {
namespace {

using AgentConversions = std::map<std::string, std::vector<ResourceConversion>>;

Result<std::map<std::string, Quota>> persistedQuotas(const v1::MasterState& state,
                                                     const std::string& path) {
  std::map<std::string, Quota> quotas;
  for (const auto& q : state.quotas()) {
    Result<Resources> guarantee = fromProto(q.guarantee());
    Result<Resources> limit = fromProto(q.limit());
    if (!guarantee.ok() || !limit.ok()) {
      return Status::corruption(path + ": quota of role '" + q.role() + "' is malformed");
    }
    Quota quota{guarantee->quantities(), std::nullopt};
    if (q.has_limit()) {
      ResourceLimits limits(limit->quantities());
      for (const std::string& name : q.zero_limit_kinds()) {
        KindId kind;
        if (!kinds::intern(name, &kind)) {
          return Status::corruption(path + ": quota of role '" + q.role() + "': too many kinds");
        }
        limits.set(kind, Scalar());
      }
      quota.limit = limits;
    }
    quotas[q.role()] = quota;
  }
  return quotas;
}

Result<AgentConversions> persistedConversions(const v1::MasterState& state,
                                              const std::string& path) {
  AgentConversions conversions;
  for (const auto& agent : state.agent_conversions()) {
    for (const auto& c : agent.conversions()) {
      Result<Resources> consumed = fromProto(c.consumed());
      Result<Resources> converted = fromProto(c.converted());
      if (!consumed.ok() || !converted.ok()) {
        return Status::corruption(path + ": an operation on agent '" + agent.agent_id() +
                                  "' is malformed");
      }
      conversions[agent.agent_id()].push_back({*consumed, *converted});
    }
  }
  return conversions;
}

}  // namespace

const char* toString(RecoveryState state) {
  switch (state) {
    case RecoveryState::kNew:
      return "NEW";
    case RecoveryState::kRegistered:
      return "REGISTERED";
    case RecoveryState::kRecovering:
      return "RECOVERING";
    case RecoveryState::kRunning:
      return "RUNNING";
    case RecoveryState::kFailed:
      return "FAILED";
  }
  return "UNKNOWN";
}

std::string Master::statePath() const {
  if (options_.stateStore) return options_.stateStore->describe();
  return options_.workDir.empty() ? "" : options_.workDir + "/master-state.pb";
}

Status Master::recoverFromDisk() {
  const std::string path = statePath();
  if (path.empty()) {
    recovery_.state = RecoveryState::kRunning;
    recovery_.reason = "nothing persisted (no work directory)";
    return Status();
  }
  std::error_code error;
  if (!options_.stateStore) std::filesystem::create_directories(options_.workDir, error);
  if (error) return Status::ioError("cannot create work directory '" + options_.workDir + "'");
  Result<std::string> bytes =
      options_.stateStore ? options_.stateStore->load() : readWholeFile(path);
  if (!bytes.ok()) {
    if (bytes.code() != StatusCode::kNotFound) return bytes.status();
    recovery_.state = RecoveryState::kRunning;
    recovery_.reason = "first start (no " + path + ")";
    saveState();
    return Status();
  }
  v1::MasterState state;
  if (!state.ParseFromString(*bytes) || !state.IsInitialized()) {
    return Status::corruption(path + " is corrupt; move it away to start afresh (losing state)");
  }
  if (state.format_version() != 1) {
    return Status::corruption(path + " has format version " +
                              std::to_string(state.format_version()) +
                              "; this master reads version 1");
  }
  recovery_.state = RecoveryState::kRecovering;
  std::map<std::string, double> weights;
  for (const auto& w : state.weights()) weights[w.role()] = w.weight();
  if (!weights.empty()) {
    if (Status s = allocator_->updateWeights(weights); !s.ok()) return s;
    weights_ = weights;
  }
  Result<std::map<std::string, Quota>> quotas = persistedQuotas(state, path);
  if (!quotas.ok()) return quotas.status();
  quotas_ = *quotas;
  Result<AgentConversions> conversions = persistedConversions(state, path);
  if (!conversions.ok()) return conversions.status();
  agents_.restore(
      std::move(conversions).value(),
      std::set<std::string>(state.gone_agent_ids().begin(), state.gone_agent_ids().end()));
  for (const auto& window : state.maintenance_windows()) {
    schedule_.push_back(MaintenanceWindow{
        std::vector<std::string>(window.machines().begin(), window.machines().end()),
        window.unavailability()});
  }
  downMachines_ = std::set<std::string>(state.down_machines().begin(), state.down_machines().end());
  frameworks_.restore(std::set<std::string>(state.removed_framework_ids().begin(),
                                            state.removed_framework_ids().end()),
                      std::deque<v1::FrameworkInfo>(state.completed_frameworks().begin(),
                                                    state.completed_frameworks().end()));
  expectedAgents_ = std::set<std::string>(state.agent_ids().begin(), state.agent_ids().end());
  for (const std::string& gone : agents_.gone()) expectedAgents_.erase(gone);
  recovery_.expectedAgents = expectedAgents_.size();
  if (Status s = allocator_->recover(static_cast<int>(expectedAgents_.size()), *quotas); !s.ok()) {
    return s;
  }
  // Frameworks first: known but disconnected until they subscribe again with their id.
  for (const v1::FrameworkInfo& info : state.frameworks()) {
    const std::string& id = info.id().value();
    if (id.empty() || frameworks_.contains(id) || frameworks_.isRemoved(id)) continue;
    if (Status s = allocator_->addFramework(id, info, {}, /*active=*/false, {}); !s.ok()) {
      LOG(ERROR) << "recovery: framework " << id << " not restored: " << s.message();
      continue;
    }
    frameworks_.add(FrameworkEntry{id, info, {}, nullptr, {}, 0});
  }
  LOG(INFO) << "Recovering from " << path << ": " << frameworks_.size() << " frameworks, "
            << expectedAgents_.size() << " agents expected";
  if (expectedAgents_.empty()) {
    finishRecovery("no agents to wait for");
  } else {
    later(options_.recoveryTimeout, [this] { checkRecovery(); });
  }
  return Status();
}

void Master::checkRecovery() {
  if (recovery_.state != RecoveryState::kRecovering) return;
  const double back = recovery_.expectedAgents == 0
                          ? 1.0
                          : static_cast<double>(recovery_.recoveredAgents) /
                                static_cast<double>(recovery_.expectedAgents);
  if (back >= options_.recoveryMinFraction) {
    finishRecovery("timeout with " + std::to_string(recovery_.recoveredAgents) + " of " +
                   std::to_string(recovery_.expectedAgents) + " agents back");
    return;
  }
  LOG(WARNING) << "recovery: " << recovery_.recoveredAgents << " of " << recovery_.expectedAgents
               << " agents back, waiting for " << options_.recoveryMinFraction * 100 << "%";
  later(Duration::seconds(1), [this] { checkRecovery(); });
}

void Master::finishRecovery(const std::string& how) {
  recovery_.state = RecoveryState::kRunning;
  recovery_.reason = how;
  recovery_.lostAgents = expectedAgents_;
  expectedAgents_.clear();
  recovery_.recoveryMillis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - createdAt_)
          .count();
  allocator_->resume();
  auto reconciles = std::move(pendingReconciles_);
  pendingReconciles_.clear();
  for (const auto& [framework, tasks] : reconciles) (void)reconcileTasks(framework, tasks);
  LOG(INFO) << "Recovery done (" << how << ") in " << recovery_.recoveryMillis << " ms; "
            << recovery_.lostAgents.size() << " agents lost";
  saveState();
}

void Master::saveStateSoon() {
  if (statePath().empty() || saveScheduled_) return;
  saveScheduled_ = true;
  later(Duration::milliseconds(100), [this] {
    saveScheduled_ = false;
    saveState();
  });
}

void Master::saveState() {
  const std::string path = statePath();
  if (path.empty()) return;
  v1::MasterState state;
  state.set_save_time_nanos(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  // Agents not back yet (or lost) stay expected: a crash during recovery must not forget them.
  std::set<std::string> agents = expectedAgents_;
  agents.insert(recovery_.lostAgents.begin(), recovery_.lostAgents.end());
  for (const std::string& id : agents_.ids()) agents.insert(id);
  for (const std::string& id : agents) state.add_agent_ids(id);
  for (const std::string& id : agents_.gone()) state.add_gone_agent_ids(id);
  frameworks_.forEach([&](const FrameworkEntry& entry) {
    if (!frameworks_.isRemoved(entry.id)) *state.add_frameworks() = entry.info;
  });
  for (const std::string& id : frameworks_.removed()) state.add_removed_framework_ids(id);
  for (const MaintenanceWindow& window : schedule_) {
    auto* saved = state.add_maintenance_windows();
    for (const std::string& machine : window.machines) saved->add_machines(machine);
    *saved->mutable_unavailability() = window.unavailability;
  }
  for (const std::string& machine : downMachines_) state.add_down_machines(machine);
  for (const v1::FrameworkInfo& info : frameworks_.completed())
    *state.add_completed_frameworks() = info;
  for (const auto& [role, weight] : weights_) {
    auto* w = state.add_weights();
    w->set_role(role);
    w->set_weight(weight);
  }
  for (const auto& [role, quota] : quotas_) {
    auto* q = state.add_quotas();
    q->set_role(role);
    Resources guarantee;
    for (const auto& [kind, amount] : quota.guarantee) {
      guarantee.addScalar(ResourceKey{.kind = kind}, amount);
    }
    *q->mutable_guarantee() = toProto(guarantee);
    if (quota.limit) {
      Resources limit;
      for (const auto& [kind, amount] : *quota.limit) {
        if (amount == Scalar()) {
          q->add_zero_limit_kinds(kinds::name(kind));
          continue;
        }
        limit.addScalar(ResourceKey{.kind = kind}, amount);
      }
      *q->mutable_limit() = toProto(limit);
      q->set_has_limit(true);
    }
  }
  for (const auto& [agent, conversions] : agents_.conversions()) {
    auto* entry = state.add_agent_conversions();
    entry->set_agent_id(agent);
    for (const ResourceConversion& c : conversions) {
      auto* conversion = entry->add_conversions();
      *conversion->mutable_consumed() = toProto(c.consumed);
      *conversion->mutable_converted() = toProto(c.converted);
    }
  }
  const std::string bytes = state.SerializeAsString();
  if (Status s =
          options_.stateStore ? options_.stateStore->save(bytes) : writeFileAtomically(path, bytes);
      !s.ok()) {
    LOG(ERROR) << "cannot persist master state to " << path << ": " << s.message();
  }
}

}  // namespace harvest::master
