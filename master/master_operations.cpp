// Master operations a network front needs beyond the simulated harness: schedulers that
// disconnect, framework updates, offer operations
// (RESERVE/UNRESERVE/CREATE/DESTROY), inverse offer answers, and read-only views for the
// operator endpoints.
#include <glog/logging.h>

#include <algorithm>
#include <set>

#include "allocator/offer_constraints.h"
#include "master/master.h"

namespace harvest::master {

Status checkOfferConstraints(const v1::FrameworkInfo& info,
                             const v1::scheduler::OfferConstraints& constraints) {
  if (constraints.role_constraints().empty()) return Status();
  Result<std::map<std::string, RoleConstraints>> compiled = compileOfferConstraints(constraints);
  if (!compiled.ok()) return compiled.status();
  std::set<std::string> roles(info.roles().begin(), info.roles().end());
  if (info.roles().empty()) roles.insert(info.role());
  for (const auto& [role, unused] : *compiled) {
    if (!roles.contains(role)) {
      return Status::invalidArgument("Offer constraints specified for a role '" + role +
                                     "' to which the framework is not subscribed");
    }
  }
  return Status();
}

Status Master::updateFramework(const std::string& frameworkId, const v1::FrameworkInfo& info,
                               const v1::scheduler::OfferConstraints& constraints) {
  FrameworkEntry* entry = framework(frameworkId);
  if (!entry) return Status::notFound("unknown framework '" + frameworkId + "'");
  // As in Mesos: the principal is who may act for the framework; changing it (or wiping it)
  // would hand the framework over or lock its owner out.
  if (info.principal() != entry->info.principal()) {
    return Status::permissionDenied("the principal of framework '" + frameworkId +
                                    "' cannot change ('" + entry->info.principal() + "' to '" +
                                    info.principal() + "')");
  }
  v1::FrameworkInfo withId = info;
  withId.mutable_id()->set_value(frameworkId);
  if (Status s = checkOfferConstraints(withId, constraints); !s.ok()) return s;
  FrameworkOptions options;
  options.offerConstraints = constraints;
  if (Status s = allocator_->updateFramework(frameworkId, withId, options); !s.ok()) return s;
  entry->info = withId;
  entry->offerConstraints = constraints;
  if (observer_) observer_->frameworkUpdated(frameworkId);
  return Status();
}

void Master::disconnect(const std::string& frameworkId, const Scheduler* scheduler) {
  FrameworkEntry* entry = framework(frameworkId);
  if (!entry || entry->scheduler != scheduler || scheduler == nullptr) return;
  entry->scheduler = nullptr;
  LOG(INFO) << "framework " << frameworkId << " disconnected; its offers are rescinded";
  for (const std::string& id : offers_.idsOfFramework(entry->slot)) {
    rescindOffer(id, /*expired=*/false);
  }
  Status s = allocator_->deactivateFramework(frameworkId);
  LOG_IF(WARNING, !s.ok()) << "deactivating " << frameworkId << ": " << s.message();
  if (observer_) observer_->frameworkUpdated(frameworkId);
  // As Mesos: unless it subscribes again within FrameworkInfo.failover_timeout (default 0),
  // the framework is removed. A year bounds the wait (and the clock arithmetic); a value that
  // is not a non-negative number counts as 0.
  constexpr Duration kMaxFailover = Duration::days(365);
  const double seconds = entry->info.failover_timeout();
  const Duration delay =
      seconds >= 0 ? std::min(Duration::secondsDouble(seconds), kMaxFailover) : Duration::zero();
  const uint64_t disconnection = ++entry->disconnections;
  later(delay, [this, frameworkId, disconnection] {
    FrameworkEntry* gone = framework(frameworkId);
    // Back in time (or gone since, or disconnected again: that disconnection's timer decides).
    if (!gone || gone->scheduler != nullptr || gone->disconnections != disconnection ||
        frameworks_.isRemoved(frameworkId)) {
      return;
    }
    LOG(INFO) << "framework " << frameworkId << " did not fail over within "
              << gone->info.failover_timeout() << " s: removing it";
    Status removed = teardown(frameworkId);
    LOG_IF(WARNING, !removed.ok()) << "removing " << frameworkId << ": " << removed.message();
  });
}

Status Master::applyOperations(const std::string& frameworkId,
                               const std::vector<std::string>& offerIds,
                               const std::vector<ResourceConversion>& conversions) {
  if (!framework(frameworkId)) return Status::notFound("unknown framework '" + frameworkId + "'");
  if (conversions.empty()) return Status();
  // The operations apply to the first offer holding what they consume (one agent, one role).
  for (const std::string& id : offerIds) {
    Offer* outstanding = offers_.findMutable(id);
    if (outstanding == nullptr || outstanding->framework != frameworkId) continue;
    Offer& offer = *outstanding;
    Resources converted = offer.resources;
    bool fits = true;
    for (const ResourceConversion& c : conversions) {
      if (!converted.contains(c.consumed)) {
        fits = false;
        break;
      }
      converted -= c.consumed;
      converted += c.converted;
    }
    if (!fits) continue;
    const std::optional<AgentSlot> slot = agents_.slotOf(offer.agent);
    if (slot) {
      if (Status s = checkPersistenceIds(agents_.at(*slot), conversions); !s.ok()) return s;
      if (Status s = checkSharedVolumesUnused(*slot, conversions); !s.ok()) return s;
    }
    if (Status s = allocator_->updateAllocation(frameworkId, offer.agent, offer.role,
                                                offer.resources, conversions);
        !s.ok()) {
      return s;
    }
    offer.resources = std::move(converted);
    agents_.recordConversions(offer.agent, conversions);
    saveState();  // At once: a reservation must survive a crash right after it.
    // Last: rescinding may move the offers in the book, `offer` among them.
    if (slot) rescindOffersHoldingDestroyed(*slot, conversions, offerIds);
    return Status();
  }
  return Status::invalidArgument("the operations' resources are not in the named offers");
}

Status Master::answerInverseOffers(const std::string& frameworkId,
                                   const std::vector<std::string>& ids, bool accepted,
                                   const v1::Filters& filters) {
  if (!framework(frameworkId)) return Status::notFound("unknown framework '" + frameworkId + "'");
  for (const std::string& id : ids) {
    const std::optional<InverseOffer> offer = offers_.takeInverse(id, frameworkId);
    if (!offer) continue;
    if (Status s = allocator_->updateInverseOffer(offer->agent, frameworkId, accepted, filters);
        !s.ok()) {
      return s;
    }
  }
  return Status();
}

void Master::forEachFramework(const std::function<void(const FrameworkView&)>& visit) const {
  frameworks_.forEach([&](const FrameworkEntry& entry) {
    visit(FrameworkView{entry.id, entry.info, entry.scheduler != nullptr, entry.counters,
                        entry.offerConstraints});
  });
}

void Master::forEachTask(const std::function<void(const TaskView&)>& visit) const {
  tasks_.forEach([&](const TaskEntry& task) {
    visit(TaskView{task.framework, task.task, task.agent, task.role, task.resources, task.state});
  });
}

void Master::forEachAgent(const std::function<void(const AgentLink&)>& visit) const {
  agents_.forEach(visit);
}

const v1::FrameworkInfo* Master::frameworkInfo(const std::string& id) const {
  const FrameworkEntry* entry = frameworks_.find(id);
  return entry == nullptr ? nullptr : &entry->info;
}

}  // namespace harvest::master
