// ACCEPT, as Mesos's master validates and applies it, in five phases:
//
//   1. takeOffers: every named offer outstanding, the framework's, on one agent, named once;
//      taken out of the book (a bad one fails the whole call: the good ones go back).
//   2. planLaunches: each task well formed, unique, and within what is left of the offers;
//      a bad task is answered (TASK_ERROR or TASK_LOST) and the rest go on.
//   3. returnUnused: what no task uses goes back to the allocator with the call's filters.
//   4. answerPlacements: host affinity hears which regular offers were used.
//   5. launch: the tasks enter the book and go to the agent, with revocation hints.
#include <glog/logging.h>

#include <algorithm>
#include <map>
#include <set>

#include "master/master.h"

namespace harvest::master {

Status Master::accept(const std::string& frameworkId, const std::vector<std::string>& offerIds,
                      const std::vector<TaskLaunch>& launches, const v1::Filters& filters) {
  FrameworkEntry* entry = framework(frameworkId);
  if (!entry) return Status::notFound("unknown framework '" + frameworkId + "'");
  AcceptedOffers accepted;
  if (std::string problem = takeOffers(entry->slot, offerIds, accepted); !problem.empty()) {
    lose(frameworkId, launches, accepted.agent, TaskState::kLost, "REASON_INVALID_OFFERS", problem);
    return Status();
  }
  ++stats_.offersAccepted;
  ++entry->counters.offersAccepted;
  const std::vector<PlannedLaunch> planned = planLaunches(*entry, accepted, launches);
  returnUnused(frameworkId, accepted, planned, filters);
  answerPlacements(accepted, planned);
  launch(*entry, accepted, planned);
  return Status();
}

std::string Master::takeOffers(FrameworkSlot framework, const std::vector<std::string>& offerIds,
                               AcceptedOffers& out) {
  std::string problem;
  for (const std::string& id : offerIds) {
    const OfferBook::Outstanding* outstanding = offers_.findOutstanding(id);
    if (outstanding == nullptr) {
      if (std::ranges::any_of(out.offers, [&](const Offer& taken) { return taken.id == id; })) {
        problem = "offer " + id + " is named twice";
      } else if (offers_.wasRescinded(id)) {
        problem = "offer " + id + " was rescinded or expired";
        ++stats_.lostToRescindRace;
      } else {
        problem = "offer " + id + " is unknown";
      }
      break;
    }
    if (outstanding->framework != framework) {
      problem = "offer " + id + " belongs to another framework";
      break;
    }
    if (!out.offers.empty() && outstanding->agent != out.agentSlot) {
      problem = "offers span several agents";
      break;
    }
    out.agent = outstanding->offer.agent;
    out.agentSlot = outstanding->agent;
    out.offered += outstanding->offer.resources;
    out.offers.push_back(*offers_.take(id, /*rescinded=*/false));
  }
  if (offerIds.empty()) problem = "no offers named";
  if (problem.empty()) return problem;
  // Offers that were valid are used up by the failed accept: give them back.
  for (const Offer& offer : out.offers) {
    (void)allocator_->recoverResources(offer.framework, offer.agent, offer.role, offer.resources,
                                       std::nullopt);
    offerAnswered(offer, 0);
  }
  return problem;
}

std::vector<Master::PlannedLaunch> Master::planLaunches(const FrameworkEntry& framework,
                                                        const AcceptedOffers& accepted,
                                                        const std::vector<TaskLaunch>& launches) {
  const std::string& frameworkId = framework.id;
  Resources wanted;
  std::vector<PlannedLaunch> planned;
  std::set<std::string> seen;
  for (const TaskLaunch& launch : launches) {
    std::string malformed;
    if (launch.task.empty()) {
      malformed = "task id is empty";
    } else if (launch.resources.empty()) {
      malformed = "task has no resources";
    } else if (!seen.insert(launch.task).second || tasks_.contains(framework.slot, launch.task)) {
      malformed = "duplicate task id";
    } else if (!launch.resources.regular().empty() && !launch.resources.revocable().empty()) {
      malformed = "task mixes regular and revocable resources";
    }
    if (!malformed.empty()) {
      lose(frameworkId, {launch}, accepted.agent, TaskState::kError, "REASON_TASK_INVALID",
           malformed);
      continue;
    }
    if (!accepted.offered.contains(wanted + launch.resources)) {
      lose(frameworkId, {launch}, accepted.agent, TaskState::kLost, "REASON_INVALID_OFFERS",
           "task resources " + launch.resources.toString() + " are not in the offers");
      continue;
    }
    // The role of the offer that holds the task's class of resources.
    std::string role = accepted.offers.front().role;
    for (const Offer& offer : accepted.offers) {
      if (offer.resources.contains(launch.resources)) role = offer.role;
    }
    wanted += launch.resources;
    planned.push_back({launch, std::move(role)});
  }
  return planned;
}

void Master::returnUnused(const std::string& frameworkId, const AcceptedOffers& accepted,
                          const std::vector<PlannedLaunch>& planned, const v1::Filters& filters) {
  // What each role's tasks use, taken out of that role's offers in turn: once in all, not once
  // from every offer (which would keep back from the allocator what no task uses).
  std::map<std::string, Resources> needed;
  for (const PlannedLaunch& task : planned) needed[task.role] += task.launch.resources;
  for (const Offer& offer : accepted.offers) {
    Resources unused = offer.resources;
    if (auto need = needed.find(offer.role); need != needed.end()) {
      const Resources taken = need->second - (need->second - unused);
      unused -= taken;
      need->second -= taken;
    }
    if (!unused.empty()) {
      (void)allocator_->recoverResources(frameworkId, offer.agent, offer.role, unused, filters);
    }
  }
}

void Master::answerPlacements(const AcceptedOffers& accepted,
                              const std::vector<PlannedLaunch>& planned) {
  // The first regular offer of a role answers for that role's regular tasks.
  std::set<std::string> answeredRoles;
  for (const Offer& offer : accepted.offers) {
    uint32_t launched = 0;
    if (answeredRoles.insert(offer.role).second) {
      for (const PlannedLaunch& task : planned) {
        launched += task.role == offer.role && task.launch.resources.revocable().empty() ? 1 : 0;
      }
    }
    offerAnswered(offer, launched);
  }
}

void Master::launch(const FrameworkEntry& framework, const AcceptedOffers& accepted,
                    const std::vector<PlannedLaunch>& planned) {
  const std::string& frameworkId = framework.id;
  // Found again: the scheduler callbacks of the phases before may have had the agent removed.
  const std::optional<AgentSlot> slot = agents_.slotOf(accepted.agent);
  const bool killingCapable = framework.has(v1::FrameworkInfo::Capability::TASK_KILLING_STATE);
  const bool partitionAware = framework.has(v1::FrameworkInfo::Capability::PARTITION_AWARE);
  for (const PlannedLaunch& task : planned) {
    tasks_.put(TaskEntry{frameworkId, task.launch.task, accepted.agent, task.role,
                         task.launch.resources, TaskState::kStaging, loop_->now()},
               framework.slot, slot);
    ++stats_.tasksLaunched;
    if (observer_) observer_->taskAdded(frameworkId, task.launch.task);
    if (!slot) continue;
    RunTask message{frameworkId, task.role, task.launch, {}, killingCapable, partitionAware};
    // Hints: what the master believes runs revocably on the agent (the agent recomputes).
    if (task.launch.resources.revocable().empty()) {
      for (const TaskKey& key : tasks_.lentOn(*slot)) {
        const TaskEntry& lent = *tasks_.find(key.frameworkSlot, key.task);
        message.revocations.push_back({key.framework, lent.role, lent.resources});
      }
    }
    agents_.at(*slot).runTask(message);
  }
}

}  // namespace harvest::master
