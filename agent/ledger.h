// AgentLedger: one agent's resource ledger and eviction.
//
// The master launches tasks on what it believes is free; with idle reserved resources lent
// out as non-throttleable revocable, its belief is stale whenever a rescind or an eviction is
// in flight (seed "Oversubscription for Reservation", Eviction). The agent therefore keeps
// its own books and decides evictions itself; the master's RunTaskMessage.revocations are
// hints, logged when they disagree and otherwise ignored.
//
// Books, per resource kind (scalars as amounts, ranges and sets as values, see Footprint):
//   total        the agent's regular resources, reserved included;
//   occupied     regular executors;
//   occupiedRev  running non-throttleable revocable executors: they run on idle reserved
//                resources, so they use part of `total`;
//   evicting     non-throttleable revocable executors told to terminate, not yet gone;
//   waiting      launches accepted but not started (they wait for evictions to finish).
// Throttleable revocable executors use usage slack (what tasks leave unused), not `total`;
// they are booked apart and controlled by the QoS controller.
//
// Invariants after every event (checkInvariants() verifies them from scratch):
//   R1  total >= occupied + occupiedRev + evicting, per kind; their port ranges (and set
//       items) are pairwise disjoint and inside total.
//   R2  total >= occupied + occupiedRev + waiting, per kind, likewise disjoint: everything
//       waiting fits once the evictions in flight complete, so a waiting launch never needs
//       a further eviction and never waits forever for room (only for executors to exit).
//   R3  regular executors and regular waiting launches fit in total key by key (a task on
//       cpus(role1) needs role1's reservation, not any cpus), booked as the agent holds
//       them (Resources::agentForm): dynamic reservations and volumes are the master's, so
//       they count as the static resources under them, and a shared volume not at all.
//
// Launches (executors are the unit: an executor holds its tasks' resources, all of one
// class, and its start time breaks eviction ties):
//   * Regular: rejected only if it does not fit key by key in total minus occupied minus
//     earlier waiting regular launches, i.e. not even after every eviction in flight and
//     every possible one. Otherwise the shortage is recomputed from the books
//       need = occupied + waiting regular + launch + occupiedRev - total   (per kind, > 0)
//     which counts what is already evicting as freed (seed cases 1 and 2) and earlier waiting
//     launches as taken; executors holding ports the launch names must go; EvictionPolicy
//     picks the rest. Waiting revocable launches that no longer fit after that are displaced
//     (TASK_LOST, REASON_DISPLACED_BY_REGULAR), first come first kept: regular launches take
//     precedence, and a launch that has not started is cheaper to drop than one running.
//   * Non-throttleable revocable: never evicts. Rejected only if R2 would fail, i.e. it does
//     not fit even once every eviction in flight completes (seed case 3); otherwise it starts
//     now or waits.
//   * Throttleable revocable: scalar kinds the agent has, started at once; usage slack is an
//     estimate and pressure is corrected by the QoS controller, not at launch.
//   * A launch waits at most `waitTimeout` (checked by tick()); then it is dropped with
//     TASK_LOST (REASON_EVICTION_WAIT_TIMEOUT). Evictions it triggered stay in flight (the
//     executors are already being killed) and their resources return as usual.
//   * Waiting launches are tried first come first and each starts as soon as R1 allows it; a
//     later one may start before an earlier one that still waits (R2 keeps room for both).
//   * A launch that fits now starts at once, even if others wait.
//
// Errors are values: malformed input (empty ids, no resources, mixed classes, unknown
// executors or tasks) returns an error Status and changes nothing. Single-threaded, no I/O;
// the clock is injected.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/eviction_policy.h"
#include "agent/footprint.h"
#include "agent/slot_index.h"
#include "common/status.h"
#include "resources/resources.h"

namespace harvest::agent {

struct ExecutorRef {
  std::string framework;
  std::string executor;
  friend auto operator<=>(const ExecutorRef&, const ExecutorRef&) = default;
};

struct TaskSpec {
  std::string id;
  Resources resources;
};

// RunTaskMessage.Revocation: what the master thinks should be evicted. Advisory.
struct RevocationHint {
  std::string framework;  // May be empty.
  std::string role;
  Resources resources;
};

struct LaunchRequest {
  std::string framework;
  std::string executor;
  std::string role;
  std::vector<TaskSpec> tasks;  // All of one revocability class.
  std::vector<RevocationHint> hints;
};

using LaunchId = uint64_t;  // Assigned by the ledger, from 1.

enum class LostReason : uint8_t {
  kInsufficientResources,  // Cannot fit even after every eviction in flight and possible.
  kWaitTimeout,            // Waited longer than waitTimeout.
  kDisplacedByRegular,     // Waiting revocable launch; a regular launch took its room.
  kExecutorEvicted,        // Its executor is being evicted.
};
const char* toString(LostReason reason);

enum class LaunchState : uint8_t { kRunning, kWaiting, kRejected };

struct StartedLaunch {
  LaunchId id;
  ExecutorRef executor;
  std::vector<std::string> tasks;
};

struct LostLaunch {
  LaunchId id;
  ExecutorRef executor;
  std::vector<std::string> tasks;
  LostReason reason;
  std::string message;
};

// An executor to kill now. The ledger has already moved its resources to `evicting`
// (throttleable: to throttleableEvicting); they are freed by executorTerminated().
struct Eviction {
  ExecutorRef executor;
  std::string role;
  Revocability revocability;
  Resources resources;
  std::vector<std::string> tasks;
  LaunchId cause;  // The regular launch that needed the room; 0 when evict() was called.
};

// Resources an ended executor or task gave back: what the master returns to the allocator.
struct Freed {
  ExecutorRef executor;
  std::string role;
  Revocability revocability;
  Resources resources;
  bool wasEvicting;    // The executor was being evicted.
  bool executorEnded;  // False when a single task ended and the executor lives on.
};

struct Effects {
  std::vector<Eviction> evictions;
  std::vector<StartedLaunch> started;
  std::vector<LostLaunch> lost;
  std::vector<Freed> freed;
};

struct LaunchOutcome {
  LaunchId id = 0;
  LaunchState state = LaunchState::kRejected;
  LostReason reason = LostReason::kInsufficientResources;  // When rejected.
  std::string message;                                     // When rejected.
  Effects effects;  // Evictions this launch started; other launches started or displaced.
};

struct LedgerOptions {
  std::function<Time()> clock;  // Required: start and enqueue times.
  Duration waitTimeout = Duration::seconds(30);
};

struct Executor {
  ExecutorRef ref;
  std::string role;
  Revocability revocability = Revocability::kRegular;
  bool evicting = false;
  Time startedAt;
  Resources resources;  // As launched (revocable ones keyed as lent).
  Footprint footprint;
  std::vector<TaskSpec> tasks;
};

struct WaitingLaunch {
  LaunchId id;
  ExecutorRef executor;
  std::string role;
  Revocability revocability;
  std::vector<TaskSpec> tasks;
  Resources resources;
  Footprint footprint;
  Time enqueuedAt;
};

class AgentLedger {
 public:
  // `total` must hold no revocable resources.
  static Result<AgentLedger> create(const Resources& total, LedgerOptions options);

  Result<LaunchOutcome> launch(LaunchRequest request);
  // The executor exited (evicted or not): frees everything it held.
  Result<Effects> executorTerminated(std::string_view framework, std::string_view executor);
  // A task ended or was killed: frees its resources if running, drops it if waiting.
  Result<Effects> removeTask(std::string_view framework, std::string_view task);
  // Start evicting a revocable executor for an outside reason (QoS controller, operator).
  // Idempotent for one already evicting; regular executors are refused.
  Result<Effects> evict(std::string_view framework, std::string_view executor);
  // Drops waiting launches older than waitTimeout.
  Effects tick(Time now);

  const Resources& total() const { return total_; }
  const Footprint& totalFootprint() const { return totalFootprint_; }
  const Footprint& occupied() const { return occupied_; }
  const Footprint& occupiedRev() const { return occupiedRev_; }
  const Footprint& evicting() const { return evicting_; }
  const Footprint& waiting() const { return waiting_; }
  const Footprint& waitingRegular() const { return waitingRegular_; }
  const Quantities& throttleable() const { return throttleable_; }
  const Quantities& throttleableEvicting() const { return throttleableEvicting_; }
  const LedgerOptions& options() const { return options_; }

  // nullptr when unknown.
  const Executor* findExecutor(std::string_view framework, std::string_view executor) const;
  void forEachExecutor(const std::function<void(const Executor&)>& visit) const;
  size_t executorCount() const { return executorIndex_.size(); }
  // First come first.
  const std::vector<WaitingLaunch>& waitingLaunches() const { return queue_; }

  // Recomputes every book from the executors and waiting launches and checks R1-R3; a broken
  // book is a bug in the ledger, reported as INTERNAL.
  Status checkInvariants() const;

 private:
  struct Slot {
    Executor executor;
    size_t candidate = kNoCandidate;
    bool live = false;
  };
  // Where a task is: its ids are kept here once, and the task index points at these.
  struct TaskRecord {
    std::string framework;
    std::string id;
    uint32_t slot = 0;     // The executor's slot, when running.
    LaunchId waiting = 0;  // Non-zero: the task is in this waiting launch.
  };
  // What checkInvariants() recomputes from scratch, to compare with the books kept by events.
  struct RecomputedBooks;
  static constexpr size_t kNoCandidate = static_cast<size_t>(-1);
  static constexpr uint32_t kNoSlot = static_cast<uint32_t>(-1);

  AgentLedger(const Resources& total, LedgerOptions options);

  // Also returns the executor's slot, or kNoSlot if it does not run yet.
  Status validate(const LaunchRequest& request, Revocability* revocability, Resources* resources,
                  uint32_t* slot) const;
  bool fitsAfterEvictions(const Footprint& footprint, std::string* why) const;
  bool fitsNow(const Footprint& footprint) const;
  // Starts the evictions a regular launch needs.
  void evictFor(LaunchId id, const Footprint& footprint, const LaunchRequest& request,
                Effects& effects);
  void displaceRevocable(const Footprint& regular, Effects& effects);
  void startEviction(uint32_t slot, LaunchId cause, Effects& effects);
  void drain(Effects& effects);
  // Books the launch into its executor (`slot`, or a new one for kNoSlot); `launch.tasks` are
  // moved from. `queued`: the launch waited, so its tasks are indexed already.
  void start(LaunchId id, LaunchRequest& launch, uint32_t slot, bool queued,
             Revocability revocability, Resources resources, const Footprint& footprint,
             Effects& effects);
  void dropWaiting(size_t position, LostReason reason, std::string message, Effects& effects);
  Footprint* bookOf(const Slot& slot);
  Quantities* throttleBookOf(const Slot& slot);
  void removeCandidate(uint32_t slot);
  uint32_t findSlot(std::string_view framework, std::string_view executor) const;
  uint32_t findTask(std::string_view framework, std::string_view task) const;
  void addTask(const std::string& framework, const std::string& task, uint32_t slot,
               LaunchId waiting);
  void forgetTask(uint32_t record);
  // The parts of checkInvariants(), in its order: each returns the first violation it finds.
  Status sumExecutors(RecomputedBooks& books) const;
  Status sumWaitingLaunches(RecomputedBooks& books) const;
  Status compareBooks(const RecomputedBooks& books) const;

  LedgerOptions options_;
  Resources total_;
  Footprint totalFootprint_;
  Resources regularFree_;  // total - occupied - waiting regular, key by key (R3).
  Footprint occupied_, occupiedRev_, evicting_, waiting_, waitingRegular_;
  Quantities throttleable_, throttleableEvicting_;

  std::vector<Slot> slots_;
  std::vector<uint32_t> freeSlots_;
  SlotIndex executorIndex_;  // (framework, executor) -> slot.
  std::vector<TaskRecord> taskRecords_;
  std::vector<uint32_t> freeTaskRecords_;
  SlotIndex taskIndex_;               // (framework, task) -> task record.
  std::vector<WaitingLaunch> queue_;  // First come first.
  size_t waitingRevocable_ = 0;       // Waiting non-throttleable launches, to skip scans.
  LaunchId nextLaunch_ = 1;

  EvictionCandidates candidates_;
  EvictionPolicy policy_;
  std::vector<size_t> mandatory_;  // Scratch.
};

}  // namespace harvest::agent
