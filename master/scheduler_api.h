// The framework-facing side of the master, mirroring the Mesos v1 scheduler API.
//
// Calls (SUBSCRIBE, ACCEPT, DECLINE, REVIVE, SUPPRESS, KILL, ACKNOWLEDGE, RECONCILE, TEARDOWN)
// are Master methods; events (SUBSCRIBED, OFFERS, RESCIND, UPDATE, INVERSE_OFFERS, FAILURE,
// ERROR) arrive through a Scheduler. The HTTP front (network_master.h) maps both onto the v1
// protobufs without changing their meaning.
#pragma once

#include <string>
#include <vector>

#include "agent/runtime/task.h"
#include "allocator/allocator.h"
#include "resources/resources.h"

namespace harvest::master {

// The task vocabulary is the agent runtime's; the master speaks it unqualified.
using agent::isTerminal;
using agent::TaskLaunch;
using agent::TaskState;
using agent::TaskStatus;
using agent::toString;

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

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual void subscribed(const std::string& framework) { (void)framework; }
  virtual void offers(const std::vector<Offer>& offers) { (void)offers; }
  virtual void rescind(const std::string& offer) { (void)offer; }
  virtual void update(const TaskStatus& status) { (void)status; }
  // An agent's update, which the framework acknowledges by `uuid` (16 bytes); until then the
  // master sends it again. Schedulers that do not acknowledge see it as update().
  virtual void updateToAcknowledge(const TaskStatus& status, const std::string& uuid) {
    (void)uuid;
    update(status);
  }
  virtual void inverseOffers(const std::vector<InverseOffer>& offers) { (void)offers; }
  virtual void failure(const std::string& agent) { (void)agent; }
  virtual void error(const std::string& message) { (void)message; }
};

}  // namespace harvest::master
