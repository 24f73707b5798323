// AgentLedger::checkInvariants(): the from-scratch verification of the books, kept apart from
// the event handling in ledger.cpp because it is a second, independent computation of them.
#include <string>

#include "agent/ledger.h"

namespace harvest::agent {

struct AgentLedger::RecomputedBooks {
  Footprint occupied, occupiedRev, evicting, waiting, waitingRegular;
  Quantities throttleable, throttleableEvicting;
  Resources regular;  // Key by key: running and waiting regular.
};

Status AgentLedger::checkInvariants() const {
  RecomputedBooks books;
  if (Status s = sumExecutors(books); !s.ok()) return s;
  if (Status s = sumWaitingLaunches(books); !s.ok()) return s;
  return compareBooks(books);
}

// Sums the live executors into `books` and checks each against its tasks, the eviction
// candidates and R1.
Status AgentLedger::sumExecutors(RecomputedBooks& books) const {
  Resources shapedAll;
  auto addDisjoint = [&shapedAll](const Resources& shaped, const ExecutorRef& ref) {
    if (shaped.empty()) return Status();
    if (overlaps(shapedAll, shaped)) {
      return Status::internal("R1: executor " + ref.framework + "/" + ref.executor +
                              " shares values " + shaped.toString());
    }
    shapedAll += shaped;
    return Status();
  };
  size_t candidates = 0;
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    const Slot& entry = slots_[slot];
    if (!entry.live) continue;
    const Executor& executor = entry.executor;
    auto who = [&executor] {
      return "executor " + executor.ref.framework + "/" + executor.ref.executor;
    };
    Resources sum;
    for (const TaskSpec& task : executor.tasks) sum += task.resources;
    if (sum != executor.resources)
      return Status::internal(who() + " resources differ from its tasks'");
    if (Footprint::of(sum) != executor.footprint)
      return Status::internal(who() + " footprint is stale");
    switch (executor.revocability) {
      case Revocability::kRegular:
        books.occupied += executor.footprint;
        books.regular += executor.resources.agentForm();
        break;
      case Revocability::kNonThrottleable:
        (executor.evicting ? books.evicting : books.occupiedRev) += executor.footprint;
        if (executor.evicting != (entry.candidate == kNoCandidate)) {
          return Status::internal(who() + " candidate entry disagrees with its state");
        }
        if (!executor.evicting) {
          ++candidates;
          if (entry.candidate >= candidates_.size() || candidates_.id(entry.candidate) != slot) {
            return Status::internal(who() + " candidate entry is stale");
          }
        }
        break;
      case Revocability::kThrottleable:
        (executor.evicting ? books.throttleableEvicting : books.throttleable) +=
            executor.footprint.scalars;
        continue;  // Usage slack: outside R1.
    }
    if (Status s = addDisjoint(executor.footprint.shaped, executor.ref); !s.ok()) return s;
  }
  if (candidates != candidates_.size()) return Status::internal("eviction candidates are stale");
  for (const auto& [kind, amount] :
       books.occupied.scalars + books.occupiedRev.scalars + books.evicting.scalars) {
    if (amount > totalFootprint_.scalars.get(kind)) {
      return Status::internal("R1: " + kinds::name(kind) +
                              " occupied + occupiedRev + evicting = " + amount.toString() +
                              " > total " + totalFootprint_.scalars.get(kind).toString());
    }
  }
  if (!totalFootprint_.shaped.contains(shapedAll)) {
    return Status::internal("R1: values outside total: " +
                            (shapedAll - totalFootprint_.shaped).toString());
  }
  return Status();
}

// Adds the waiting launches to `books` and checks R2 and R3, which need the running executors
// summed first.
Status AgentLedger::sumWaitingLaunches(RecomputedBooks& books) const {
  // R2: the waiting launches are disjoint from each other and from what runs or will keep
  // running; they may overlap what is evicting (that is what they wait for).
  Resources shapedAfter = books.occupied.shaped + books.occupiedRev.shaped;
  for (const WaitingLaunch& launch : queue_) {
    if (Footprint::of(launch.resources) != launch.footprint) {
      return Status::internal("waiting launch " + std::to_string(launch.id) +
                              " footprint is stale");
    }
    books.waiting += launch.footprint;
    if (launch.revocability == Revocability::kRegular) {
      books.waitingRegular += launch.footprint;
      books.regular += launch.resources.agentForm();
    }
    if (overlaps(shapedAfter, launch.footprint.shaped)) {
      return Status::internal("R2: waiting launch " + std::to_string(launch.id) + " shares values");
    }
    shapedAfter += launch.footprint.shaped;
  }
  for (const auto& [kind, amount] :
       books.occupied.scalars + books.occupiedRev.scalars + books.waiting.scalars) {
    if (amount > totalFootprint_.scalars.get(kind)) {
      return Status::internal("R2: " + kinds::name(kind) +
                              " occupied + occupiedRev + waiting = " + amount.toString() +
                              " > total " + totalFootprint_.scalars.get(kind).toString());
    }
  }
  if (!totalFootprint_.shaped.contains(shapedAfter)) {
    return Status::internal("R2: waiting values outside total");
  }
  if (!total_.contains(books.regular)) {
    return Status::internal("R3: regular executors and launches do not fit key by key: " +
                            books.regular.toString());
  }
  if (total_ - books.regular != regularFree_) return Status::internal("R3: regular room is stale");
  return Status();
}

Status AgentLedger::compareBooks(const RecomputedBooks& books) const {
  auto differs = [](const char* name, const Footprint& book, const Footprint& sum) {
    return Status::internal(std::string("book ") + name + " holds " + book.scalars.toString() +
                            " " + book.shaped.toString() + ", its executors sum to " +
                            sum.scalars.toString() + " " + sum.shaped.toString());
  };
  if (books.occupied != occupied_) return differs("occupied", occupied_, books.occupied);
  if (books.occupiedRev != occupiedRev_) {
    return differs("occupiedRev", occupiedRev_, books.occupiedRev);
  }
  if (books.evicting != evicting_) return differs("evicting", evicting_, books.evicting);
  if (books.waiting != waiting_) return differs("waiting", waiting_, books.waiting);
  if (books.waitingRegular != waitingRegular_) {
    return differs("waitingRegular", waitingRegular_, books.waitingRegular);
  }
  if (books.throttleable != throttleable_ || books.throttleableEvicting != throttleableEvicting_) {
    return Status::internal("throttleable books differ from their executors");
  }
  return Status();
}

}  // namespace harvest::agent
