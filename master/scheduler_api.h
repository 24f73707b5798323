// The framework-facing side of the master, mirroring the Mesos v1 scheduler API.
//
// Calls (SUBSCRIBE, ACCEPT, DECLINE, REVIVE, SUPPRESS, KILL, ACKNOWLEDGE, RECONCILE, TEARDOWN)
// are Master methods; events (SUBSCRIBED, OFFERS, RESCIND, UPDATE, INVERSE_OFFERS, FAILURE,
// ERROR) arrive through a Scheduler. The HTTP front (network_master.h) maps both onto the v1
// protobufs without changing their meaning.
#pragma once

#include <string>
#include <vector>

#include "allocator/allocator.h"
#include "resources/resources.h"

namespace harvest::master {

enum class TaskState : uint8_t { kStaging, kRunning, kFinished, kFailed, kKilled, kLost, kError };
const char* toString(TaskState state);  // "TASK_RUNNING", ...
inline bool isTerminal(TaskState state) {
  return state == TaskState::kFinished || state == TaskState::kFailed ||
         state == TaskState::kKilled || state == TaskState::kLost || state == TaskState::kError;
}

struct TaskStatus {
  std::string task;
  std::string framework;
  std::string agent;
  TaskState state = TaskState::kStaging;
  std::string reason;  // Mesos-style reason name, e.g. "REASON_INVALID_OFFERS".
  std::string message;
  TimeNanos time = 0;
};

struct Offer {
  std::string id;
  std::string framework;
  std::string role;
  std::string agent;
  std::string hostname;
  Resources resources;  // All of one class: regular, or one revocable class.
  Revocability revocability = Revocability::kRegular;
};

struct InverseOffer {
  std::string id;
  std::string framework;
  std::string agent;
  v1::Unavailability unavailability;
};

// One task of a LAUNCH operation. `duration` is the simulated workload: the agent runs the
// task that long and then reports TASK_FINISHED (0: until killed).
struct TaskLaunch {
  std::string task;
  Resources resources;
  TimeNanos duration = 0;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual void subscribed(const std::string& framework) { (void)framework; }
  virtual void offers(const std::vector<Offer>& offers) { (void)offers; }
  virtual void rescind(const std::string& offer) { (void)offer; }
  virtual void update(const TaskStatus& status) { (void)status; }
  virtual void inverseOffers(const std::vector<InverseOffer>& offers) { (void)offers; }
  virtual void failure(const std::string& agent) { (void)agent; }
  virtual void error(const std::string& message) { (void)message; }
};

}  // namespace harvest::master
