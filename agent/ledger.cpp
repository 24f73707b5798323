#include "agent/ledger.h"

#include <glog/logging.h>

#include <algorithm>
#include <utility>

namespace harvest::agent {
namespace {

// What the tasks other than `gone` hold: a shared volume another of them uses stays, which
// subtracting `gone`'s resources would take away.
Resources resourcesOfOthers(const std::vector<TaskSpec>& tasks,
                            std::vector<TaskSpec>::const_iterator gone) {
  Resources out;
  for (auto it = tasks.begin(); it != tasks.end(); ++it) {
    if (it != gone) out += it->resources;
  }
  return out;
}

const char* className(Revocability revocability) {
  switch (revocability) {
    case Revocability::kRegular:
      return "regular";
    case Revocability::kNonThrottleable:
      return "non-throttleable revocable";
    case Revocability::kThrottleable:
      return "throttleable revocable";
  }
  return "?";
}

// The one class every entry shares, or nullopt if they mix.
std::optional<Revocability> classOf(const Resources& resources) {
  std::optional<Revocability> found;
  bool mixed = false;
  auto visit = [&](const ResourceKey& key) {
    if (!found) found = key.revocability;
    mixed = mixed || *found != key.revocability;
  };
  for (const auto& entry : resources.scalars()) visit(entry.key);
  for (const auto& entry : resources.ranges()) visit(entry.key);
  for (const auto& entry : resources.sets()) visit(entry.key);
  if (mixed) return std::nullopt;
  return found;
}

// Per kind: base + extra <= limit.
bool scalarsFit(const Quantities& extra, const Quantities& limit,
                std::initializer_list<const Quantities*> base, std::string* why) {
  for (const auto& [kind, amount] : extra) {
    Scalar used = amount;
    for (const Quantities* book : base) used += book->get(kind);
    if (used > limit.get(kind)) {
      if (why != nullptr) {
        Scalar taken = used - amount;
        Scalar free = limit.get(kind) > taken ? limit.get(kind) - taken : Scalar();
        *why = kinds::name(kind) + ": needs " + amount.toString() + ", room for " + free.toString();
      }
      return false;
    }
  }
  return true;
}

bool shapedFree(const Resources& shaped, std::initializer_list<const Resources*> taken,
                std::string* why) {
  for (const Resources* book : taken) {
    if (overlaps(shaped, *book)) {
      if (why != nullptr) *why = shaped.toString() + " overlaps values in use";
      return false;
    }
  }
  return true;
}

}  // namespace

const char* toString(LostReason reason) {
  switch (reason) {
    case LostReason::kInsufficientResources:
      return "insufficient resources";
    case LostReason::kWaitTimeout:
      return "eviction wait timeout";
    case LostReason::kDisplacedByRegular:
      return "displaced by a regular launch";
    case LostReason::kExecutorEvicted:
      return "executor evicted";
  }
  return "?";
}

Result<AgentLedger> AgentLedger::create(const Resources& total, LedgerOptions options) {
  if (!options.clock) return Result<AgentLedger>::invalidArgument("agent ledger needs a clock");
  if (options.waitTimeout <= Duration::zero()) {
    return Result<AgentLedger>::invalidArgument("agent ledger wait timeout must be positive");
  }
  if (!total.revocable().empty()) {
    return Result<AgentLedger>::invalidArgument(
        "an agent's total holds regular resources only, got " + total.revocable().toString());
  }
  return AgentLedger(total, std::move(options));
}

AgentLedger::AgentLedger(const Resources& total, LedgerOptions options)
    : options_(std::move(options)),
      total_(total),
      totalFootprint_(Footprint::of(total)),
      regularFree_(total),
      candidates_(totalFootprint_.scalars) {}

Status AgentLedger::validate(const LaunchRequest& request, Revocability* revocability,
                             Resources* resources, uint32_t* slot) const {
  if (request.framework.empty()) return Status::invalidArgument("launch without a framework id");
  if (request.executor.empty()) {
    return Status::invalidArgument("launch for framework " + request.framework +
                                   " without an executor id");
  }
  // Built only on the error paths: the accepting path must not allocate for messages.
  auto what = [&request] {
    return "launch of executor " + request.executor + " of framework " + request.framework;
  };
  if (request.tasks.empty()) return Status::invalidArgument(what() + " has no tasks");
  Resources sum;
  for (size_t i = 0; i < request.tasks.size(); ++i) {
    const TaskSpec& task = request.tasks[i];
    if (task.id.empty()) return Status::invalidArgument(what() + " has a task without an id");
    for (size_t j = 0; j < i; ++j) {
      if (request.tasks[j].id == task.id) {
        return Status::invalidArgument(what() + " names task " + task.id + " twice");
      }
    }
    if (findTask(request.framework, task.id) != SlotIndex::kNone) {
      return Status::failedPrecondition(what() + ": task " + task.id + " already exists");
    }
    if ((!task.resources.ranges().empty() || !task.resources.sets().empty()) &&
        overlaps(Footprint::of(sum).shaped, Footprint::of(task.resources).shaped)) {
      return Status::invalidArgument(what() + ": tasks share port values or set items");
    }
    sum += task.resources;
  }
  if (sum.empty()) return Status::invalidArgument(what() + " holds no resources");
  std::optional<Revocability> found = classOf(sum);
  if (!found) {
    return Status::invalidArgument(what() +
                                   " mixes regular and revocable resources: " + sum.toString());
  }
  if (*found == Revocability::kThrottleable && (!sum.ranges().empty() || !sum.sets().empty())) {
    return Status::invalidArgument(
        what() + ": throttleable revocable resources are usage slack, scalars only");
  }
  *slot = findSlot(request.framework, request.executor);
  if (*slot != kNoSlot && slots_[*slot].executor.revocability != *found) {
    return Status::failedPrecondition(what() + ": the executor runs " +
                                      className(slots_[*slot].executor.revocability) +
                                      " tasks, this launch is " + className(*found));
  }
  for (const WaitingLaunch& waiting : queue_) {
    if (waiting.executor.framework == request.framework &&
        waiting.executor.executor == request.executor && waiting.revocability != *found) {
      return Status::failedPrecondition(what() + ": a waiting launch for the executor is " +
                                        className(waiting.revocability) + ", this one is " +
                                        className(*found));
    }
  }
  *revocability = *found;
  *resources = std::move(sum);
  return Status();
}

Result<LaunchOutcome> AgentLedger::launch(LaunchRequest request) {
  Revocability revocability = Revocability::kRegular;
  Resources resources;
  uint32_t slot = kNoSlot;
  if (Status valid = validate(request, &revocability, &resources, &slot); !valid.ok()) {
    return valid;
  }

  LaunchOutcome outcome;
  outcome.id = nextLaunch_++;
  auto reject = [&](LostReason reason, std::string message) {
    VLOG(1) << "Rejected launch " << outcome.id << " of " << request.framework << "/"
            << request.executor << ": " << message;
    outcome.state = LaunchState::kRejected;
    outcome.reason = reason;
    outcome.message = std::move(message);
    return outcome;
  };

  if (slot != kNoSlot && slots_[slot].executor.evicting) {
    return reject(LostReason::kExecutorEvicted,
                  "executor " + request.executor + " is being evicted");
  }

  Footprint footprint = Footprint::of(resources);
  switch (revocability) {
    case Revocability::kThrottleable:
      for (const auto& [kind, amount] : footprint.scalars) {
        if (totalFootprint_.scalars.get(kind).isZero()) {
          return reject(LostReason::kInsufficientResources,
                        "the agent has no " + kinds::name(kind));
        }
      }
      break;
    case Revocability::kNonThrottleable: {
      std::string why;
      if (!fitsAfterEvictions(footprint, &why)) {
        return reject(LostReason::kInsufficientResources,
                      "does not fit even after every eviction in flight completes (" + why + ")");
      }
      break;
    }
    case Revocability::kRegular: {
      const Resources booked = resources.agentForm();
      if (!regularFree_.contains(booked)) {
        return reject(LostReason::kInsufficientResources,
                      "does not fit even after every eviction: needs " + booked.toString() +
                          ", room for regular tasks " + regularFree_.toString());
      }
      evictFor(outcome.id, footprint, request, outcome.effects);
      // Before booking the launch: a displaced launch may share its ports, and taking those
      // out of a book that already holds them would lose the launch's.
      if (waitingRevocable_ > 0) displaceRevocable(footprint, outcome.effects);
      regularFree_ -= booked;
      break;
    }
  }

  // Throttleable launches and launches that fit now start at once: R2 holds with them (checked
  // or made true by evicting above), so R1 is all that can stop them, and starting before
  // older waiting launches cannot hurt those (R2 guarantees them room). The rest wait.
  if (revocability == Revocability::kThrottleable || fitsNow(footprint)) {
    start(outcome.id, request, slot, false, revocability, std::move(resources), footprint,
          outcome.effects);
    outcome.state = LaunchState::kRunning;
    return outcome;
  }
  waiting_ += footprint;
  if (revocability == Revocability::kRegular) {
    waitingRegular_ += footprint;
  } else {
    ++waitingRevocable_;
  }
  for (const TaskSpec& task : request.tasks) {
    addTask(request.framework, task.id, 0, outcome.id);
  }
  queue_.push_back(WaitingLaunch{
      outcome.id, ExecutorRef{std::move(request.framework), std::move(request.executor)},
      std::move(request.role), revocability, std::move(request.tasks), std::move(resources),
      std::move(footprint), options_.clock()});
  outcome.state = LaunchState::kWaiting;
  return outcome;
}

bool AgentLedger::fitsAfterEvictions(const Footprint& footprint, std::string* why) const {
  if (!scalarsFit(footprint.scalars, totalFootprint_.scalars,
                  {&occupied_.scalars, &occupiedRev_.scalars, &waiting_.scalars}, why)) {
    return false;
  }
  if (footprint.shaped.empty()) return true;
  if (!totalFootprint_.shaped.contains(footprint.shaped)) {
    if (why != nullptr) *why = footprint.shaped.toString() + " not on this agent";
    return false;
  }
  return shapedFree(footprint.shaped, {&occupied_.shaped, &occupiedRev_.shaped, &waiting_.shaped},
                    why);
}

bool AgentLedger::fitsNow(const Footprint& footprint) const {
  // R2 already holds with the launch counted (it waits, or was just admitted), so only R1
  // can stop it from starting now.
  if (!scalarsFit(footprint.scalars, totalFootprint_.scalars,
                  {&occupied_.scalars, &occupiedRev_.scalars, &evicting_.scalars}, nullptr)) {
    return false;
  }
  return footprint.shaped.empty() ||
         shapedFree(footprint.shaped, {&occupied_.shaped, &occupiedRev_.shaped, &evicting_.shaped},
                    nullptr);
}

void AgentLedger::evictFor(LaunchId id, const Footprint& footprint, const LaunchRequest& request,
                           Effects& effects) {
  // What is evicting counts as freed; what waits counts as taken. Only the kinds of the
  // launch can be short: R2 held before it.
  Quantities need;
  for (const auto& [kind, amount] : footprint.scalars) {
    const Scalar taken = occupied_.scalars.get(kind) + waitingRegular_.scalars.get(kind) +
                         occupiedRev_.scalars.get(kind) + amount;
    const Scalar limit = totalFootprint_.scalars.get(kind);
    if (taken > limit) need.set(kind, taken - limit);
  }
  mandatory_.clear();
  if (!footprint.shaped.empty() && overlaps(footprint.shaped, occupiedRev_.shaped)) {
    for (size_t i = 0; i < candidates_.size(); ++i) {
      if (overlaps(footprint.shaped, slots_[candidates_.id(i)].executor.footprint.shaped)) {
        mandatory_.push_back(i);
      }
    }
  }

  Quantities hinted;
  for (const RevocationHint& hint : request.hints) hinted += Footprint::of(hint.resources).scalars;
  if (need.empty() && mandatory_.empty()) {
    VLOG_IF(1, !hinted.empty()) << "Launch " << id << ": master hinted evicting "
                                << hinted.toString() << ", nothing needs to go";
    return;
  }

  const EvictionChoice choice = policy_.choose(candidates_, need, mandatory_);
  LOG_IF(WARNING, !choice.covered)
      << "Launch " << id << ": every revocable executor together does not free " << need.toString();
  std::vector<uint32_t> victims;
  victims.reserve(choice.chosen.size());
  for (size_t index : choice.chosen) victims.push_back(candidates_.id(index));
  Quantities freed;
  for (uint32_t slot : victims) {
    freed += slots_[slot].executor.footprint.scalars;
    startEviction(slot, id, effects);
  }
  VLOG_IF(1, hinted != freed) << "Launch " << id << ": master hinted evicting " << hinted.toString()
                              << ", ledger evicts " << freed.toString() << " for a shortage of "
                              << need.toString();
}

void AgentLedger::displaceRevocable(const Footprint& regular, Effects& effects) {
  // Keep waiting revocable launches first come first while they fit beside everything that
  // will run once evictions complete, the new regular launch included.
  Quantities base =
      occupied_.scalars + occupiedRev_.scalars + waitingRegular_.scalars + regular.scalars;
  Resources shaped =
      occupied_.shaped + occupiedRev_.shaped + waitingRegular_.shaped + regular.shaped;
  for (size_t position = 0; position < queue_.size();) {
    const WaitingLaunch& waiting = queue_[position];
    if (waiting.revocability != Revocability::kNonThrottleable) {
      ++position;
      continue;
    }
    const bool fits =
        scalarsFit(waiting.footprint.scalars, totalFootprint_.scalars, {&base}, nullptr) &&
        (waiting.footprint.shaped.empty() || !overlaps(waiting.footprint.shaped, shaped));
    if (fits) {
      base += waiting.footprint.scalars;
      if (!waiting.footprint.shaped.empty()) shaped += waiting.footprint.shaped;
      ++position;
    } else {
      dropWaiting(position, LostReason::kDisplacedByRegular,
                  "a regular launch needs the room this revocable launch was waiting for", effects);
    }
  }
}

void AgentLedger::startEviction(uint32_t slot, LaunchId cause, Effects& effects) {
  Slot& entry = slots_[slot];
  Executor& executor = entry.executor;
  if (executor.revocability == Revocability::kNonThrottleable) {
    occupiedRev_ -= executor.footprint;
    evicting_ += executor.footprint;
    removeCandidate(slot);
  } else {
    throttleable_ -= executor.footprint.scalars;
    throttleableEvicting_ += executor.footprint.scalars;
  }
  executor.evicting = true;
  VLOG(1) << "Evicting " << executor.ref.framework << "/" << executor.ref.executor << " ("
          << executor.resources << ") for launch " << cause;
  Eviction eviction{executor.ref, executor.role, executor.revocability, executor.resources,
                    {},           cause};
  for (const TaskSpec& task : executor.tasks) eviction.tasks.push_back(task.id);
  effects.evictions.push_back(std::move(eviction));
  // Launches waiting to join the executor can no longer run in it.
  for (size_t position = 0; position < queue_.size();) {
    if (queue_[position].executor == executor.ref) {
      dropWaiting(position, LostReason::kExecutorEvicted,
                  "executor " + executor.ref.executor + " is being evicted", effects);
    } else {
      ++position;
    }
  }
}

void AgentLedger::drain(Effects& effects) {
  for (size_t position = 0; position < queue_.size();) {
    if (fitsNow(queue_[position].footprint)) {
      WaitingLaunch waiting = std::move(queue_[position]);
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(position));
      waiting_ -= waiting.footprint;
      if (waiting.revocability == Revocability::kRegular) {
        waitingRegular_ -= waiting.footprint;
      } else {
        --waitingRevocable_;
      }
      LaunchRequest request{std::move(waiting.executor.framework),
                            std::move(waiting.executor.executor),
                            std::move(waiting.role),
                            std::move(waiting.tasks),
                            {}};
      start(waiting.id, request, findSlot(request.framework, request.executor), true,
            waiting.revocability, std::move(waiting.resources), waiting.footprint, effects);
    } else {
      ++position;
    }
  }
}

void AgentLedger::start(LaunchId id, LaunchRequest& launch, uint32_t slot, bool queued,
                        Revocability revocability, Resources resources, const Footprint& footprint,
                        Effects& effects) {
  if (slot == kNoSlot) {
    if (freeSlots_.empty()) {
      slot = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      slot = freeSlots_.back();
      freeSlots_.pop_back();
    }
    // Assign into the recycled slot: its strings and vectors keep their capacity.
    Slot& fresh = slots_[slot];
    fresh.live = true;
    fresh.candidate = kNoCandidate;
    fresh.executor.ref.framework = launch.framework;
    fresh.executor.ref.executor = launch.executor;
    fresh.executor.role = launch.role;
    fresh.executor.revocability = revocability;
    fresh.executor.evicting = false;
    fresh.executor.startedAt = options_.clock();
    fresh.executor.resources = Resources();
    fresh.executor.footprint = Footprint();
    fresh.executor.tasks.clear();
    executorIndex_.insert(hashIds(launch.framework, launch.executor), slot);
  }
  Slot& entry = slots_[slot];
  Executor& executor = entry.executor;
  if (executor.resources.empty()) {
    executor.resources = std::move(resources);
    executor.footprint = footprint;
  } else {
    executor.resources += resources;
    executor.footprint += footprint;
  }
  switch (revocability) {
    case Revocability::kRegular:
      occupied_ += footprint;
      break;
    case Revocability::kNonThrottleable:
      occupiedRev_ += footprint;
      if (entry.candidate == kNoCandidate) {
        entry.candidate = candidates_.add(slot, executor.startedAt, executor.footprint.scalars);
      } else {
        candidates_.update(entry.candidate, executor.footprint.scalars);
      }
      break;
    case Revocability::kThrottleable:
      throttleable_ += footprint.scalars;
      break;
  }
  StartedLaunch started{id, executor.ref, {}};
  started.tasks.reserve(launch.tasks.size());
  for (TaskSpec& task : launch.tasks) {
    started.tasks.push_back(task.id);
    // A queued launch's tasks are indexed already (as waiting); a direct one's are new.
    const uint32_t record = queued ? findTask(launch.framework, task.id) : SlotIndex::kNone;
    if (record != SlotIndex::kNone) {
      taskRecords_[record].slot = slot;
      taskRecords_[record].waiting = 0;
    } else {
      addTask(launch.framework, task.id, slot, 0);
    }
    executor.tasks.push_back(std::move(task));
  }
  effects.started.push_back(std::move(started));
}

void AgentLedger::dropWaiting(size_t position, LostReason reason, std::string message,
                              Effects& effects) {
  WaitingLaunch waiting = std::move(queue_[position]);
  queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(position));
  waiting_ -= waiting.footprint;
  if (waiting.revocability == Revocability::kRegular) {
    waitingRegular_ -= waiting.footprint;
    regularFree_ += waiting.resources.agentForm();
  } else {
    --waitingRevocable_;
  }
  LostLaunch lost{waiting.id, std::move(waiting.executor), {}, reason, std::move(message)};
  for (const TaskSpec& task : waiting.tasks) {
    forgetTask(findTask(lost.executor.framework, task.id));
    lost.tasks.push_back(task.id);
  }
  VLOG(1) << "Dropped waiting launch " << lost.id << ": " << lost.message;
  effects.lost.push_back(std::move(lost));
}

Footprint* AgentLedger::bookOf(const Slot& slot) {
  switch (slot.executor.revocability) {
    case Revocability::kRegular:
      return &occupied_;
    case Revocability::kNonThrottleable:
      return slot.executor.evicting ? &evicting_ : &occupiedRev_;
    case Revocability::kThrottleable:
      return nullptr;
  }
  return nullptr;
}

Quantities* AgentLedger::throttleBookOf(const Slot& slot) {
  if (slot.executor.revocability != Revocability::kThrottleable) return nullptr;
  return slot.executor.evicting ? &throttleableEvicting_ : &throttleable_;
}

void AgentLedger::removeCandidate(uint32_t slot) {
  Slot& entry = slots_[slot];
  if (entry.candidate == kNoCandidate) return;
  if (std::optional<uint32_t> moved = candidates_.remove(entry.candidate)) {
    slots_[*moved].candidate = entry.candidate;
  }
  entry.candidate = kNoCandidate;
}

uint32_t AgentLedger::findSlot(std::string_view framework, std::string_view executor) const {
  return executorIndex_.find(hashIds(framework, executor), [&](uint32_t slot) {
    const ExecutorRef& ref = slots_[slot].executor.ref;
    return ref.executor == executor && ref.framework == framework;
  });
}

uint32_t AgentLedger::findTask(std::string_view framework, std::string_view task) const {
  return taskIndex_.find(hashIds(framework, task), [&](uint32_t record) {
    return taskRecords_[record].id == task && taskRecords_[record].framework == framework;
  });
}

void AgentLedger::addTask(const std::string& framework, const std::string& task, uint32_t slot,
                          LaunchId waiting) {
  uint32_t record;
  if (freeTaskRecords_.empty()) {
    record = static_cast<uint32_t>(taskRecords_.size());
    taskRecords_.emplace_back();
  } else {
    record = freeTaskRecords_.back();
    freeTaskRecords_.pop_back();
  }
  // Assigning into a recycled record reuses its strings' capacity.
  TaskRecord& entry = taskRecords_[record];
  entry.framework = framework;
  entry.id = task;
  entry.slot = slot;
  entry.waiting = waiting;
  taskIndex_.insert(hashIds(framework, task), record);
}

void AgentLedger::forgetTask(uint32_t record) {
  if (record == SlotIndex::kNone) return;
  const TaskRecord& entry = taskRecords_[record];
  taskIndex_.erase(hashIds(entry.framework, entry.id), record);
  freeTaskRecords_.push_back(record);
}

Result<Effects> AgentLedger::executorTerminated(std::string_view framework,
                                                std::string_view executor) {
  const uint32_t slot = findSlot(framework, executor);
  if (slot == kNoSlot) {
    return Status::notFound("unknown executor " + std::string(executor) + " of framework " +
                            std::string(framework));
  }
  Slot& entry = slots_[slot];
  Executor& gone = entry.executor;
  if (Footprint* book = bookOf(entry)) *book -= gone.footprint;
  if (Quantities* book = throttleBookOf(entry)) *book -= gone.footprint.scalars;
  if (gone.revocability == Revocability::kRegular) regularFree_ += gone.resources.agentForm();
  removeCandidate(slot);
  for (const TaskSpec& task : gone.tasks) forgetTask(findTask(framework, task.id));
  executorIndex_.erase(hashIds(gone.ref.framework, gone.ref.executor), slot);

  Effects effects;
  effects.freed.push_back(Freed{std::move(gone.ref), std::move(gone.role), gone.revocability,
                                std::move(gone.resources), gone.evicting, true});
  entry.live = false;
  gone.tasks.clear();
  freeSlots_.push_back(slot);
  drain(effects);
  return effects;
}

Result<Effects> AgentLedger::removeTask(std::string_view framework, std::string_view task) {
  const uint32_t found = findTask(framework, task);
  if (found == SlotIndex::kNone) {
    return Status::notFound("unknown task " + std::string(task) + " of framework " +
                            std::string(framework));
  }
  const uint32_t runningSlot = taskRecords_[found].slot;
  const LaunchId waitingId = taskRecords_[found].waiting;
  Effects effects;

  if (waitingId != 0) {
    auto waiting = std::find_if(queue_.begin(), queue_.end(),
                                [&](const WaitingLaunch& w) { return w.id == waitingId; });
    CHECK(waiting != queue_.end()) << "task index names a launch no longer waiting";
    auto spec = std::find_if(waiting->tasks.begin(), waiting->tasks.end(),
                             [&](const TaskSpec& t) { return t.id == task; });
    CHECK(spec != waiting->tasks.end()) << "task index names a task not in its launch";
    const Footprint footprint = Footprint::of(spec->resources);
    waiting->resources = resourcesOfOthers(waiting->tasks, spec);
    waiting->footprint -= footprint;
    waiting_ -= footprint;
    if (waiting->revocability == Revocability::kRegular) {
      waitingRegular_ -= footprint;
      regularFree_ += spec->resources.agentForm();
    }
    waiting->tasks.erase(spec);
    forgetTask(found);
    if (waiting->tasks.empty()) {
      if (waiting->revocability != Revocability::kRegular) --waitingRevocable_;
      queue_.erase(waiting);
    }
    // The rest of the launch is smaller now and may fit.
    drain(effects);
    return effects;
  }

  Slot& entry = slots_[runningSlot];
  Executor& executor = entry.executor;
  auto spec = std::find_if(executor.tasks.begin(), executor.tasks.end(),
                           [&](const TaskSpec& t) { return t.id == task; });
  CHECK(spec != executor.tasks.end()) << "task index names a task its executor does not run";
  const Footprint footprint = Footprint::of(spec->resources);
  executor.resources = resourcesOfOthers(executor.tasks, spec);
  executor.footprint -= footprint;
  if (Footprint* book = bookOf(entry)) *book -= footprint;
  if (Quantities* book = throttleBookOf(entry)) *book -= footprint.scalars;
  if (executor.revocability == Revocability::kRegular) {
    regularFree_ += spec->resources.agentForm();
  }
  if (entry.candidate != kNoCandidate) {
    candidates_.update(entry.candidate, executor.footprint.scalars);
  }
  effects.freed.push_back(Freed{executor.ref, executor.role, executor.revocability,
                                std::move(spec->resources), executor.evicting, false});
  executor.tasks.erase(spec);
  forgetTask(found);
  drain(effects);
  return effects;
}

Result<Effects> AgentLedger::evict(std::string_view framework, std::string_view executor) {
  const uint32_t slot = findSlot(framework, executor);
  if (slot == kNoSlot) {
    return Status::notFound("unknown executor " + std::string(executor) + " of framework " +
                            std::string(framework));
  }
  Effects effects;
  const Executor& target = slots_[slot].executor;
  if (target.revocability == Revocability::kRegular) {
    return Status::failedPrecondition("executor " + std::string(executor) +
                                      " runs regular tasks: only revocable executors are evicted");
  }
  if (!target.evicting) startEviction(slot, 0, effects);
  return effects;
}

Effects AgentLedger::tick(Time now) {
  Effects effects;
  for (size_t position = 0; position < queue_.size();) {
    const Duration waited = now - queue_[position].enqueuedAt;
    if (waited >= options_.waitTimeout) {
      dropWaiting(position, LostReason::kWaitTimeout,
                  "waited " + std::to_string(waited.millis()) +
                      " ms for evicted executors to terminate (timeout " +
                      std::to_string(options_.waitTimeout.millis()) + " ms)",
                  effects);
    } else {
      ++position;
    }
  }
  return effects;
}

const Executor* AgentLedger::findExecutor(std::string_view framework,
                                          std::string_view executor) const {
  const uint32_t slot = findSlot(framework, executor);
  return slot == kNoSlot ? nullptr : &slots_[slot].executor;
}

void AgentLedger::forEachExecutor(const std::function<void(const Executor&)>& visit) const {
  for (const Slot& slot : slots_) {
    if (slot.live) visit(slot.executor);
  }
}

}  // namespace harvest::agent
