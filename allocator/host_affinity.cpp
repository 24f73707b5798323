#include "allocator/host_affinity.h"

#include <glog/logging.h>

#include <cmath>

#include "role_history/codec.h"

namespace harvest {
namespace {

RoleHistoryOptions historyOptions(const HostAffinityOptions& options) {
  RoleHistoryOptions out;
  out.defaults.hold = options.hold;
  out.defaults.failureThreshold = options.failureThreshold;
  out.defaults.shortLived = options.shortLived;
  out.saveInterval = options.saveInterval;
  out.purgeAge = options.purgeAge;
  out.failureResetInterval = options.failureReset;
  return out;
}

}  // namespace

const char* toString(PlacementEvent event) {
  switch (event) {
    case PlacementEvent::kOfferAccepted:
      return "offer_accepted";
    case PlacementEvent::kOfferDeclined:
      return "offer_declined";
    case PlacementEvent::kTaskRunning:
      return "task_running";
    case PlacementEvent::kTaskFinished:
      return "task_finished";
    case PlacementEvent::kTaskFailed:
      return "task_failed";
    case PlacementEvent::kTaskPreempted:
      return "task_preempted";
    case PlacementEvent::kTaskRecovered:
      return "task_recovered";
  }
  return "unknown";
}

HostAffinity::HostAffinity(const HostAffinityOptions& options)
    : options_(options), history_(historyOptions(options)) {
  if (!options_.path.empty()) {
    store_.emplace(options_.path);
    writer_ = std::thread([this] { writerLoop(); });
  }
}

HostAffinity::~HostAffinity() {
  if (!writer_.joinable()) return;
  if (history_.dirty()) enqueue(history_.snapshot(lastNow_));
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

HistoryLoadReport HostAffinity::load(Time now, const RoleLookup& lookup) {
  if (!store_) {
    lastLoad_ = HistoryLoadReport{};
    lastLoad_.bootstrapped = true;
    lastLoad_.reason = "no history file configured";
    return lastLoad_;
  }
  lastLoad_ = store_->load(history_, now, lookup);
  if (lastLoad_.bootstrapped) {
    LOG(INFO) << "Host affinity: starting with an empty role history: " << lastLoad_.reason;
  } else {
    LOG(INFO) << "Host affinity: loaded " << lastLoad_.recordsLoaded << " records from "
              << lastLoad_.source << " (" << lastLoad_.recordsPurged << " purged, "
              << lastLoad_.recordsDroppedRoles << " of removed roles dropped)";
  }
  return lastLoad_;
}

void HostAffinity::addRole(RoleIdx role, const std::string& name) {
  if (Status added = history_.addRole(role, name); !added.ok()) {
    LOG(ERROR) << "Host affinity: role '" << name << "': " << added.message();
    return;
  }
  const bool strict = options_.strictRoles.count(name) > 0;
  const bool anti = options_.antiAffinityRoles.count(name) > 0;
  if (strict || anti) {
    HistoryRoleConfig config = history_.policy().defaults();
    config.strict = strict;
    config.antiAffinity = anti;
    history_.setRoleConfig(role, config);
  }
  if (constrained_.size() <= role) constrained_.resize(role + 1, 0);
  constrained_[role] = strict || anti;
}

void HostAffinity::addAgent(AgentIdx agent, const std::string& id) {
  if (Status added = history_.addAgent(agent, id); !added.ok()) {
    LOG(ERROR) << "Host affinity: agent '" << id << "': " << added.message();
  }
  if (escalatedFreedAt_.size() <= agent) escalatedFreedAt_.resize(agent + 1, kNoEscalation);
  escalatedFreedAt_[agent] = kNoEscalation;
}

void HostAffinity::removeAgent(AgentIdx agent, Time now) {
  if (Status removed = history_.removeAgent(agent, now); !removed.ok()) {
    LOG(ERROR) << "Host affinity: removing agent #" << agent << ": " << removed.message();
  }
  std::erase_if(preferredOffers_,
                [agent](const auto& entry) { return static_cast<AgentIdx>(entry.first) == agent; });
  std::erase_if(recovered_,
                [agent](const auto& entry) { return static_cast<AgentIdx>(entry.first) == agent; });
}

void HostAffinity::offered(RoleIdx role, AgentIdx agent, bool preferred) {
  if (Status s = history_.onOffered(role, agent); !s.ok()) {
    ++eventsRefused_;
    return;
  }
  if (preferred) {
    history_.recordPreferredOffer(role);
    ++preferredOffers_[key(role, agent)];
  }
}

Status HostAffinity::event(RoleIdx role, AgentIdx agent, PlacementEvent event, Time now,
                           Time startedAt) {
  lastNow_ = now;
  const HistoryEntry* entry = history_.entry(role, agent);
  const bool requested = entry != nullptr && entry->requested > 0;
  // An answered offer that the hold made counts as a preference hit when accepted.
  auto answerPreferred = [&](bool accepted) {
    auto it = preferredOffers_.find(key(role, agent));
    if (it == preferredOffers_.end()) return;
    if (accepted) history_.recordPreferenceHit(role);
    if (--it->second == 0) preferredOffers_.erase(it);
  };
  Status status;
  switch (event) {
    case PlacementEvent::kOfferAccepted:
      // The first task of an offer answers it; more tasks from the same offer are launches.
      if (requested) {
        answerPreferred(true);
        status = history_.onOfferAnswered(role, agent, true, now);
      } else {
        status = history_.onStarted(role, agent, now);
      }
      break;
    case PlacementEvent::kOfferDeclined:
      if (!requested) return Status();  // Already answered by a launch: nothing to undo.
      answerPreferred(false);
      status = history_.onOfferAnswered(role, agent, false, now);
      break;
    case PlacementEvent::kTaskRunning:
      status = history_.onRunning(role, agent);
      break;
    case PlacementEvent::kTaskFinished:
      status = history_.onReleased(role, agent, now);
      break;
    case PlacementEvent::kTaskFailed:
      status = history_.onFailed(role, agent, now, startedAt);
      break;
    case PlacementEvent::kTaskPreempted:
      status = history_.onPreempted(role, agent, now);
      break;
    case PlacementEvent::kTaskRecovered: {
      // rebuild() sets the count, so keep the running sum per (role, agent).
      const uint32_t count = ++recovered_[key(role, agent)];
      const LiveAllocation live{role, agent, count};
      status = history_.rebuild(std::span<const LiveAllocation>(&live, 1));
      break;
    }
  }
  if (!status.ok()) ++eventsRefused_;
  return status;
}

void HostAffinity::beginCycle(Time now) {
  lastNow_ = now;
  history_.tick(now);
  if (!store_) return;
  if (writeFailed_.exchange(false)) history_.saveFailed();
  if (std::optional<HistorySnapshot> snapshot = history_.maybeSave(now)) {
    enqueue(std::move(*snapshot));
  }
}

void HostAffinity::escalated(AgentIdx agent, const AgentClaim& claim) {
  if (agent >= escalatedFreedAt_.size() || escalatedFreedAt_[agent] == claim.freedAt) return;
  escalatedFreedAt_[agent] = claim.freedAt;
  history_.recordEscalation(claim.role);
}

bool HostAffinity::mayOffer(RoleIdx role, AgentIdx agent) {
  const HistoryRoleConfig& config = history_.policy().config(role);
  if (config.antiAffinity && history_.isActiveOrOffered(role, agent)) return false;
  if (config.strict && history_.preferredAgent(role).has_value()) {
    const HistoryEntry* entry = history_.entry(role, agent);
    if (entry == nullptr || !entry->hasHistory) return false;
  }
  return true;
}

void HostAffinity::enqueue(HistorySnapshot snapshot) {
  {
    std::lock_guard lock(mutex_);
    pending_ = std::move(snapshot);
  }
  wake_.notify_one();
}

void HostAffinity::writerLoop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || pending_.has_value(); });
    if (!pending_) return;  // Stopping with nothing left to write.
    HistorySnapshot snapshot = std::move(*pending_);
    pending_.reset();
    lock.unlock();
    const std::string bytes = encodeHistory(snapshot);
    if (Status saved = store_->save(bytes); saved.ok()) {
      saves_++;
    } else {
      LOG(WARNING) << "Host affinity: saving the role history failed: " << saved.message();
      saveFailures_++;
      writeFailed_ = true;
    }
    lock.lock();
  }
}

}  // namespace harvest
