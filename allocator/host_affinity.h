// HostAffinity: how the allocator uses the role history (allocator/role_history.h).
//
// It owns the RoleHistory, the history file and a writer thread, and turns the allocator's
// view (offers it makes, placement events the master reports, cycles) into history events,
// hold decisions and metrics. Everything but the file write runs on the allocator's thread.
//
// The rules it applies in a cycle (see allocation_cycle.cpp):
//   * hold: an agent a role freed is offered to that role first and to nobody else for the
//     role's hold time, then to everyone (an escalation, counted once per freeing). Only
//     while the role wants offers (an active framework not suppressing it) and is within
//     its fair share; a role at its quota limit gets no hold either.
//   * strict roles: hold without end; and while such a role has agents of its history
//     available (used before, nothing of it there now), it is offered only agents of its
//     history. Like Slider's strict placement, what runs again goes back where it ran, and
//     only growth beyond the history goes anywhere (a new role may start anywhere).
//   * anti-affinity roles: never offered an agent where they already have something
//     offered, starting, running or releasing.
//   * failures: an agent with more short-lived failures than the threshold is not
//     preferred for the role until the next reset.
//
// Persistence: a snapshot is taken on the allocator thread when the history changed and the
// save interval passed (plain copies), then encoded and written by atomic replace on the
// writer thread; a failed write marks the history dirty again.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "allocator/allocator.h"
#include "role_history/role_history.h"
#include "role_history/store.h"

namespace harvest {

class HostAffinity {
 public:
  explicit HostAffinity(const HostAffinityOptions& options);
  // Writes what is still unsaved, then stops the writer.
  ~HostAffinity();
  HostAffinity(const HostAffinity&) = delete;
  HostAffinity& operator=(const HostAffinity&) = delete;

  // Reads the history file, if there is one (bootstrap when missing or unusable).
  HistoryLoadReport load(Time now, const RoleLookup& lookup);

  void addRole(RoleIdx role, const std::string& name);
  void addAgent(AgentIdx agent, const std::string& id);
  void removeAgent(AgentIdx agent, Time now);

  // The allocator made a regular offer; `preferred` when the hold put it there.
  void offered(RoleIdx role, AgentIdx agent, bool preferred);
  Status event(RoleIdx role, AgentIdx agent, PlacementEvent event, Time now, Time startedAt);

  // Once per cycle: the failure-reset schedule and handing a snapshot to the writer.
  void beginCycle(Time now);

  std::optional<AgentClaim> claim(AgentIdx agent, Time now) const {
    return history_.claim(agent, now);
  }
  // Counts the escalation of the agent's claim once per freeing.
  void escalated(AgentIdx agent, const AgentClaim& claim);
  // True when the role has a strict or anti-affinity rule (the cheap test for the hot loop).
  bool constrained(RoleIdx role) const { return role < constrained_.size() && constrained_[role]; }
  // For a constrained role: false when strict placement or anti-affinity forbids the agent.
  bool mayOffer(RoleIdx role, AgentIdx agent);

  const RoleHistory& history() const { return history_; }
  RoleHistory& history() { return history_; }
  const HistoryLoadReport& lastLoad() const { return lastLoad_; }
  uint64_t saves() const { return saves_.load(); }
  uint64_t saveFailures() const { return saveFailures_.load(); }
  uint64_t eventsRefused() const { return eventsRefused_; }

 private:
  static uint64_t key(RoleIdx role, AgentIdx agent) {
    return (static_cast<uint64_t>(role) << 32) | agent;
  }
  void writerLoop();
  void enqueue(HistorySnapshot snapshot);

  HostAffinityOptions options_;
  RoleHistory history_;
  std::optional<HistoryStore> store_;
  std::vector<uint8_t> constrained_;                        // By RoleIdx.
  std::unordered_map<uint64_t, uint32_t> preferredOffers_;  // Outstanding, by (role, agent).
  std::unordered_map<uint64_t, uint32_t> recovered_;        // Tasks found after a restart.
  static constexpr Time kNoEscalation = Time::fromNanos(-1);
  std::vector<Time> escalatedFreedAt_;  // By AgentIdx; kNoEscalation: none.
  HistoryLoadReport lastLoad_;
  uint64_t eventsRefused_ = 0;
  Time lastNow_;

  // Writer thread: at most one snapshot waits; a newer one replaces it.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<HistorySnapshot> pending_;
  bool stopping_ = false;
  std::atomic<bool> writeFailed_{false};
  std::atomic<uint64_t> saves_{0};
  std::atomic<uint64_t> saveFailures_{0};
  std::thread writer_;
};

}  // namespace harvest
