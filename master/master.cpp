#include "master/master.h"

#include <glog/logging.h>
#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <chrono>
#include <iterator>

#include "agent/runtime/fault_domain.h"
#include "common/invariant.h"
#include "trace/recording_allocator.h"

namespace harvest::master {
namespace {

// What an allocator's offer or rescind callback hands over: its batch's entries, moved out.
OfferedResources takeEntries(OfferedResources& batch) {
  return OfferedResources(std::make_move_iterator(batch.begin()),
                          std::make_move_iterator(batch.end()));
}

}  // namespace

void MasterStats::add(const MasterStats& o) {
  offersMade += o.offersMade;
  revocableOffersMade += o.revocableOffersMade;
  offersAccepted += o.offersAccepted;
  offersDeclined += o.offersDeclined;
  offersRescinded += o.offersRescinded;
  offersExpired += o.offersExpired;
  tasksLaunched += o.tasksLaunched;
  tasksRunning += o.tasksRunning;
  tasksFinished += o.tasksFinished;
  tasksLost += o.tasksLost;
  tasksGone += o.tasksGone;
  tasksEvicted += o.tasksEvicted;
  tasksKilled += o.tasksKilled;
  tasksError += o.tasksError;
  tasksFailed += o.tasksFailed;
  lostToRescindRace += o.lostToRescindRace;
  masterRestarts += o.masterRestarts;
  allocationCycles += o.allocationCycles;
  triggeredCycles += o.triggeredCycles;
  cycleMillis.insert(cycleMillis.end(), o.cycleMillis.begin(), o.cycleMillis.end());
}

Master::Master(EventLoop* loop, MasterOptions options)
    : loop_(loop),
      options_(std::move(options)),
      frameworks_(options_.runId, options_.maxCompletedFrameworks),
      offers_(options_.runId) {}
Master::~Master() {
  *alive_ = false;
}

void Master::later(Duration delay, std::function<void()> action) {
  loop_->after(delay, [alive = alive_, action = std::move(action)] {
    if (*alive) action();
  });
}

Result<std::unique_ptr<Master>> Master::create(const MasterOptions& options, EventLoop* loop) {
  Result<LoadedAllocator> loaded =
      loadAllocator(options.modules, options.allocator, "", options.moduleParameters);
  if (!loaded.ok()) return loaded.status();
  std::unique_ptr<Master> master(new Master(loop, options));
  master->allocator_ = std::move(loaded).value();
  if (options.decorateAllocator) master->allocator_.wrap(options.decorateAllocator);
  if (!options.allocatorTrace.empty()) {
    Result<std::unique_ptr<trace::TraceWriter>> writer =
        trace::TraceWriter::open(options.allocatorTrace);
    if (!writer.ok()) return writer.status();
    const LoadedAllocator& module = master->allocator_;
    master->allocator_.wrap([&](std::unique_ptr<Allocator> allocator) {
      return std::make_unique<trace::RecordingAllocator>(
          std::move(allocator), std::move(writer).value(),
          trace::RecordedModule{module.moduleName(), module.libraryPath(), module.parameters()});
    });
  }
  AllocatorOptions allocatorOptions = master->allocator_.options();
  allocatorOptions.clock = [loop] { return loop->now(); };
  if (options.seed != 0) allocatorOptions.seed = options.seed;
  allocatorOptions.region = options.domain ? agent::regionOf(*options.domain) : "";
  Master* self = master.get();
  AllocatorCallbacks callbacks;
  // The entries move out of the allocator's batch; the batch stays its own (allocator.h).
  callbacks.offer = [self](const std::string& framework, OfferedResources& offers) {
    self->pendingOffers_.emplace_back(framework, takeEntries(offers));
  };
  callbacks.rescind = [self](const std::string& framework, OfferedResources& rescinded) {
    self->pendingRescinds_.emplace_back(framework, takeEntries(rescinded));
  };
  callbacks.inverseOffer = [self](const std::string& framework,
                                  const std::map<std::string, InverseOfferRequest>& byAgent) {
    self->pendingInverse_.emplace_back(framework, byAgent);
  };
  if (Status s = master->allocator_->initialize(allocatorOptions, callbacks); !s.ok()) return s;
  master->recovery_.state = RecoveryState::kRegistered;
  if (Status s = master->recoverFromDisk(); !s.ok()) {
    master->recovery_.state = RecoveryState::kFailed;
    master->recovery_.reason = s.message();
    return s.prefixed("recovery failed: ");
  }
  // Batch allocation: one cycle per interval over every agent.
  self->later(options.allocationInterval, [self] { self->runAllocation(); });
  return master;
}

std::string Master::allocatorDescription() const {
  return allocator_.moduleName() + (allocator_.libraryPath().empty()
                                        ? " (built in)"
                                        : " (from " + allocator_.libraryPath() + ")");
}

void Master::cycle(std::function<void()> allocate, std::function<void()> apply) {
  auto timed = [this, allocate = std::move(allocate)] {
    const auto started = std::chrono::steady_clock::now();
    allocate();
    lastCycleMillis_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
  };
  auto recorded = [this, apply = std::move(apply)] {
    stats_.cycleMillis.push_back(lastCycleMillis_);
    apply();
  };
  if (!options_.runCycle) {
    timed();
    recorded();
    return;
  }
  options_.runCycle(std::move(timed), std::move(recorded));
}

void Master::runAllocation() {
  cycle([this] { allocator_->allocate(); },
        [this] {
          ++stats_.allocationCycles;
          dispatch();
          later(options_.allocationInterval, [this] { runAllocation(); });
        });
}

void Master::agentChanged(const std::string& agent) {
  if (options_.eventBatchDelay <= Duration::zero()) return;
  changedAgents_.insert(agent);
  if (triggerScheduled_) return;
  triggerScheduled_ = true;
  later(options_.eventBatchDelay, [this] { runTriggeredAllocation(); });
}

void Master::runTriggeredAllocation() {
  triggerScheduled_ = false;
  std::set<std::string> agents;
  agents.swap(changedAgents_);
  for (auto it = agents.begin(); it != agents.end();) {
    it = agents_.contains(*it) ? std::next(it) : agents.erase(it);
  }
  if (agents.empty()) return;
  cycle([this, agents = std::move(agents)] { allocator_->allocate(agents); },
        [this] {
          ++stats_.triggeredCycles;
          dispatch();
        });
}

void Master::dispatch() {
  // Rescinds first: they concern offers made before this cycle's.
  auto rescinds = std::move(pendingRescinds_);
  pendingRescinds_.clear();
  for (const auto& [framework, entries] : rescinds) {
    for (const OfferedResource& entry : entries) {
      const std::optional<AgentSlot> agent = agents_.slotOf(entry.agent);
      if (!agent) continue;  // Removed since: its offers went with it.
      // Rescind this framework's outstanding revocable offers of that role, agent and class;
      // what launched tasks hold is settled by the agent's eviction.
      for (const std::string& id : offers_.idsOnAgent(*agent)) {
        const Offer& offer = *offers_.find(id);
        if (offer.framework == framework && offer.role == entry.role &&
            offer.revocability != Revocability::kRegular &&
            !entry.resources.ofClass(offer.revocability).empty()) {
          rescindOffer(id, /*expired=*/false);
        }
      }
    }
  }
  auto offers = std::move(pendingOffers_);
  pendingOffers_.clear();
  for (auto& [frameworkId, entries] : offers) {
    FrameworkEntry* entry = framework(frameworkId);
    if (!HARVEST_INVARIANT(entry != nullptr, "the allocator offers to known frameworks only")) {
      continue;
    }
    std::vector<Offer> batch;
    // Offer's move may throw, so growing the vector would copy every offer already in it.
    batch.reserve(entries.size());
    // One timer for the batch's timeouts, not one per offer: they all end together, and the
    // batch's timer is queued where its first offer's was, so it fires in the same order.
    std::vector<uint64_t> expiring;
    for (OfferedResource& offered : entries) {
      const std::optional<AgentSlot> agent = agents_.slotOf(offered.agent);
      if (!HARVEST_INVARIANT(agent.has_value(), "the allocator offers known agents only")) {
        continue;
      }
      Offer offer;
      offer.framework = frameworkId;
      // The cycle's entries are this call's own: their strings move into the offer.
      offer.role = std::move(offered.role);
      offer.agent = std::move(offered.agent);
      offer.hostname = agents_.at(*agent).info().hostname();
      // An offer holds one class, so the first entry's key tells it.
      offer.revocability =
          !offered.resources.anyKey([](const ResourceKey& key) { return key.revocable(); })
              ? Revocability::kRegular
          : offered.resources.scalars().empty()
              ? offered.resources.ranges().front().key.revocability
              : offered.resources.scalars().front().key.revocability;
      offer.resources = std::move(offered.resources);
      ++stats_.offersMade;
      ++entry->counters.offersSent;
      if (offer.revocability != Revocability::kRegular) ++stats_.revocableOffersMade;
      const OfferBook::Outstanding& outstanding =
          offers_.add(std::move(offer), *agent, entry->slot);
      const Offer& kept = outstanding.offer;
      if (options_.offerTimeout > Duration::zero()) {
        if (expiring.empty()) expiring.reserve(entries.size());
        expiring.push_back(outstanding.serial);
      }
      VLOG(1) << "offer " << kept.id << " to framework " << kept.framework << " (role " << kept.role
              << ") on agent " << kept.agent << ": " << kept.resources;
      batch.push_back(kept);
    }
    if (!expiring.empty()) {
      later(options_.offerTimeout, [this, expiring = std::move(expiring)] {
        for (uint64_t serial : expiring) {
          if (std::optional<std::string> id = offers_.outstandingId(serial)) {
            rescindOffer(*id, /*expired=*/true);
          }
        }
      });
    }
    if (entry->scheduler && !batch.empty()) entry->scheduler->offers(batch);
  }
  auto inverse = std::move(pendingInverse_);
  pendingInverse_.clear();
  for (const auto& [frameworkId, byAgent] : inverse) {
    FrameworkEntry* entry = framework(frameworkId);
    if (!entry || !entry->scheduler) continue;
    std::vector<InverseOffer> batch;
    for (const auto& [agent, request] : byAgent) {
      batch.push_back(offers_.addInverse(frameworkId, agent, request.unavailability));
    }
    entry->scheduler->inverseOffers(batch);
  }
}

void Master::rescindOffer(const std::string& offerId, bool expired) {
  const std::optional<Offer> taken = offers_.take(offerId, /*rescinded=*/true);
  if (!taken) return;
  const Offer& offer = *taken;
  if (expired) {
    ++stats_.offersExpired;
  } else {
    ++stats_.offersRescinded;
  }
  if (FrameworkEntry* entry = framework(offer.framework)) ++entry->counters.offersRescinded;
  LOG(INFO) << "offer " << offerId << " to framework " << offer.framework << " on agent "
            << offer.agent << (expired ? " expired" : " rescinded");
  Status recovered = allocator_->recoverResources(offer.framework, offer.agent, offer.role,
                                                  offer.resources, std::nullopt);
  LOG_IF(ERROR, !recovered.ok()) << "recovering rescinded offer " << offerId << ": "
                                 << recovered.message();
  offerAnswered(offer, 0);
  if (FrameworkEntry* entry = framework(offer.framework); entry && entry->scheduler) {
    entry->scheduler->rescind(offerId);
  }
}

void Master::placement(const std::string& agent, const std::string& role, PlacementEvent event,
                       Time startedAt) {
  Status s = allocator_->placementEvent(agent, role, event, startedAt);
  VLOG_IF(1, !s.ok()) << "placement event " << toString(event) << " of " << role << " on " << agent
                      << ": " << s.message();
}

void Master::offerAnswered(const Offer& offer, uint32_t tasksLaunched) {
  if (offer.revocability != Revocability::kRegular) return;  // History follows regular use.
  if (tasksLaunched == 0) placement(offer.agent, offer.role, PlacementEvent::kOfferDeclined);
  for (uint32_t i = 0; i < tasksLaunched; ++i) {
    placement(offer.agent, offer.role, PlacementEvent::kOfferAccepted);
  }
}

FrameworkEntry* Master::framework(const std::string& id) {
  return frameworks_.find(id);
}

TaskEntry* Master::findTask(const std::string& framework, const std::string& task) {
  const std::optional<FrameworkSlot> slot = frameworks_.slotOf(framework);
  return slot ? tasks_.find(*slot, task) : nullptr;
}

const TaskEntry* Master::findTask(const std::string& framework, const std::string& task) const {
  const std::optional<FrameworkSlot> slot = frameworks_.slotOf(framework);
  return slot ? tasks_.find(*slot, task) : nullptr;
}

Status checkEstimate(const std::string& agent, const Resources& total, const Resources& estimate) {
  if (!total.quantities().contains(estimate.quantities())) {
    return Status::invalidArgument("agent '" + agent + "': estimate " + estimate.toString() +
                                   " exceeds the agent's total " + total.toString());
  }
  return Status();
}

Status Master::updateOversubscription(const std::string& id, const Resources& estimate) {
  const AgentLink* agent = agents_.find(id);
  if (agent == nullptr) return Status::failedPrecondition("unknown agent '" + id + "'");
  if (Status s = checkEstimate(id, agent->total(), estimate); !s.ok()) return s;
  // The full info: updateAgent replaces the agent's capabilities with what it is given.
  return allocator_->updateAgent(id, agent->info(), std::nullopt, estimate);
}

void Master::voidOffersOn(AgentSlot agent) {
  // The allocator drops the agent's allocations itself (removeAgent), so nothing is
  // recovered here: the frameworks are only told the offers are gone.
  for (const std::string& offerId : offers_.idsOnAgent(agent)) {
    const Offer offer = *offers_.take(offerId, /*rescinded=*/true);
    if (FrameworkEntry* entry = framework(offer.framework); entry && entry->scheduler) {
      entry->scheduler->rescind(offerId);
    }
  }
}

Status Master::removeAgent(const std::string& id) {
  const std::optional<AgentSlot> slot = agents_.slotOf(id);
  if (!slot) return Status::notFound("unknown agent '" + id + "'");
  agents_.at(*slot).shutdown();
  // Offers on it are void; its tasks are lost.
  voidOffersOn(*slot);
  for (const TaskKey& key : tasks_.onAgent(*slot)) {
    // Updates sent for earlier tasks may have settled this one (an acknowledgement inside).
    TaskEntry* task = tasks_.find(key.frameworkSlot, key.task);
    if (task == nullptr || isTerminal(task->state)) continue;
    tasks_.setState(*task, TaskState::kLost);
    ++stats_.tasksLost;
    if (FrameworkEntry& entry = frameworks_.at(key.frameworkSlot); entry.scheduler) {
      entry.scheduler->update({key.task, key.framework, id, TaskState::kLost,
                               "REASON_AGENT_REMOVED", "agent removed", loop_->now()});
    }
    if (observer_) {
      observer_->taskUpdated({key.task, key.framework, id, TaskState::kLost, "REASON_AGENT_REMOVED",
                              "agent removed", loop_->now()});
    }
  }
  frameworks_.forEach([&](FrameworkEntry& entry) {
    if (entry.scheduler) entry.scheduler->failure(id);
  });
  dropAgent(id);
  LOG(INFO) << "agent " << id << " removed; its unfinished tasks are lost";
  if (observer_) observer_->agentRemoved(id);
  // The allocator drops the agent's allocations from the shares at once.
  return allocator_->removeAgent(id);
}

std::vector<std::unique_ptr<AgentLink>> Master::releaseAgents() {
  std::vector<std::unique_ptr<AgentLink>> out = agents_.releaseAll();
  for (const std::unique_ptr<AgentLink>& agent : out) agent->setReports(nullptr);
  return out;
}

const AgentLink* Master::agent(const std::string& id) const {
  return agents_.find(id);
}

Result<std::string> Master::subscribe(const v1::FrameworkInfo& info, Scheduler* scheduler,
                                      const v1::scheduler::OfferConstraints& constraints) {
  std::string id = info.has_id() ? info.id().value() : "";
  if (frameworks_.isRemoved(id)) {
    // As Mesos: a removed framework's id is dead; the scheduler must start as a new one.
    return Status::failedPrecondition("framework " + id + " has been removed");
  }
  if (FrameworkEntry* known = id.empty() ? nullptr : frameworks_.find(id)) {
    // Failover: the framework keeps its id, tasks and offers; a new scheduler takes over with
    // the FrameworkInfo it brings, as Mesos applies it (what UPDATE_FRAMEWORK may change).
    if (!google::protobuf::util::MessageDifferencer::Equals(info, known->info) ||
        !google::protobuf::util::MessageDifferencer::Equals(constraints, known->offerConstraints)) {
      if (Status s = updateFramework(id, info, constraints); !s.ok()) return s;
    }
    known->scheduler = scheduler;
    if (Status s = allocator_->activateFramework(id); !s.ok()) return s;
    // As Mesos: what the old scheduler suppressed or filtered does not bind the new one. Its
    // SUBSCRIBE's suppressed_roles (applied by the caller) say what stays suppressed, and Mesos
    // drops a framework's filters when it deactivates it.
    if (Status s = allocator_->reviveOffers(id, {}); !s.ok()) return s;
    LOG(INFO) << "framework " << id << " (" << info.name() << ") resubscribed: failed over to "
              << "a new scheduler";
    if (scheduler) {
      scheduler->subscribed(id);
      for (const TaskStatus& held : frameworks_.takeHeld(*known)) scheduler->update(held);
    }
    if (observer_) observer_->frameworkUpdated(id);
    return id;
  }
  if (id.empty()) id = frameworks_.mintId();
  v1::FrameworkInfo withId = info;
  withId.mutable_id()->set_value(id);
  if (Status s = checkOfferConstraints(withId, constraints); !s.ok()) return s;
  FrameworkOptions options;
  options.offerConstraints = constraints;
  if (Status s = allocator_->addFramework(id, withId, {}, true, options); !s.ok()) return s;
  frameworks_.add(FrameworkEntry{id, withId, constraints, scheduler, {}, 0});
  saveState();  // At once: agents' reports after a crash must find this framework.
  LOG(INFO) << "framework " << id << " (" << info.name() << ") subscribed";
  if (scheduler) scheduler->subscribed(id);
  if (observer_) observer_->frameworkAdded(id);
  return id;
}

void Master::lose(const std::string& frameworkId, const std::vector<TaskLaunch>& launches,
                  const std::string& agent, TaskState state, const std::string& reason,
                  const std::string& message) {
  FrameworkEntry* entry = framework(frameworkId);
  for (const TaskLaunch& launch : launches) {
    if (state == TaskState::kError) {
      ++stats_.tasksError;
    } else {
      ++stats_.tasksLost;
    }
    if (entry && entry->scheduler) {
      entry->scheduler->update(
          {launch.task, frameworkId, agent, state, reason, message, loop_->now()});
    }
  }
}

Status Master::decline(const std::string& frameworkId, const std::vector<std::string>& offerIds,
                       const v1::Filters& filters) {
  FrameworkEntry* entry = framework(frameworkId);
  if (!entry) return Status::notFound("unknown framework '" + frameworkId + "'");
  for (const std::string& id : offerIds) {
    const OfferBook::Outstanding* outstanding = offers_.findOutstanding(id);
    if (outstanding == nullptr || outstanding->framework != entry->slot) continue;  // Gone.
    // Used where it is, then erased: neither call below reaches the offer book.
    const Offer& offer = outstanding->offer;
    ++stats_.offersDeclined;
    ++entry->counters.offersDeclined;
    offerAnswered(offer, 0);
    Status recovered = allocator_->recoverResources(frameworkId, offer.agent, offer.role,
                                                    offer.resources, filters);
    offers_.eraseAnswered(*outstanding);
    if (!recovered.ok()) return recovered;
  }
  return Status();
}

Status Master::revive(const std::string& frameworkId, const std::set<std::string>& roles) {
  return allocator_->reviveOffers(frameworkId, roles);
}

Status Master::suppress(const std::string& frameworkId, const std::set<std::string>& roles) {
  return allocator_->suppressOffers(frameworkId, roles);
}

Status Master::kill(const std::string& frameworkId, const std::string& task,
                    std::optional<Duration> gracePeriod, bool answerUnknown) {
  FrameworkEntry* entry = framework(frameworkId);
  const TaskEntry* known = entry == nullptr ? nullptr : tasks_.find(entry->slot, task);
  if (known == nullptr) {
    // Mesos answers a kill it cannot act on with an update, so the framework stops waiting
    // for one: TASK_UNKNOWN to a partition-aware framework, TASK_LOST to others.
    if (answerUnknown && entry && entry->scheduler) {
      const bool partitionAware = entry->has(v1::FrameworkInfo::Capability::PARTITION_AWARE);
      entry->scheduler->update(
          {task, frameworkId, "", partitionAware ? TaskState::kUnknown : TaskState::kLost,
           "REASON_RECONCILIATION", "the master does not know this task", loop_->now()});
    }
    return Status::notFound("unknown task '" + task + "'");
  }
  if (isTerminal(known->state)) return Status();
  if (known->agentSlot) agents_.at(*known->agentSlot).killTask(frameworkId, task, gracePeriod);
  return Status();
}

Status Master::teardown(const std::string& frameworkId) {
  const FrameworkEntry* entry = framework(frameworkId);
  if (!entry) return Status::notFound("unknown framework '" + frameworkId + "'");
  const FrameworkSlot slot = entry->slot;
  // Its outstanding offers go back to the allocator (deactivation alone keeps them held).
  const std::vector<std::string> own = offers_.idsOfFramework(slot);
  for (const std::string& id : own) {
    const Offer offer = *offers_.take(id, /*rescinded=*/false);
    Status s = allocator_->recoverResources(offer.framework, offer.agent, offer.role,
                                            offer.resources, std::nullopt);
    LOG_IF(WARNING, !s.ok()) << "recovering offer " << id << " at teardown: " << s.message();
    offerAnswered(offer, 0);
  }
  offers_.dropInverseOffersOf(frameworkId);
  for (const TaskKey& key : tasks_.ofFramework(slot)) {
    const TaskEntry* task = tasks_.find(slot, key.task);
    if (task == nullptr || isTerminal(task->state)) continue;
    if (task->agentSlot) agents_.at(*task->agentSlot).killTask(frameworkId, key.task, std::nullopt);
  }
  frameworks_.markRemoved(frameworkId);
  LOG(INFO) << "framework " << frameworkId << " torn down; " << own.size() << " offers recovered";
  saveState();  // At once: the id must stay refused across a crash right after this.
  if (observer_) observer_->frameworkRemoved(frameworkId);
  // Resources come back as its executors exit; the framework stays known until then.
  return allocator_->deactivateFramework(frameworkId);
}

void Master::forEachRunningTask(
    const std::function<void(const std::string&, const Resources&)>& visit) const {
  tasks_.forEachInAnyOrder([&](const TaskEntry& task) {
    if (task.state == TaskState::kRunning) visit(task.framework, task.resources);
  });
}

void Master::tickAgents() {
  agents_.forEach([](AgentLink& agent) { agent.tick(); });
}

Status Master::updateWeights(const std::map<std::string, double>& weights) {
  if (Status s = allocator_->updateWeights(weights); !s.ok()) return s;
  for (const auto& [role, weight] : weights) weights_[role] = weight;
  saveState();
  return Status();
}

Status Master::updateQuota(const std::string& role, const Quota& quota) {
  if (Status s = allocator_->updateQuota(role, quota); !s.ok()) return s;
  quotas_[role] = quota;
  saveState();
  return Status();
}

}  // namespace harvest::master
