// One framework over the v1 scheduler API (protobuf), as the kill-and-restart tests run it:
// reconnects with its id whenever the stream ends, reconciles its unfinished tasks after each
// subscription, launches one task per offer that fits while launching is on (declines
// otherwise), and remembers every task it launched with its resources and last state.
//
// Given several masters it finds the leader as a Mesos HTTP framework does: it asks them in
// turn, and follows a standby's 307 to the master it names.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "protos/scheduler.pb.h"
#include "resources/resources.h"
#include "testing/leader_redirect.h"

namespace harvest::e2e {

class FrameworkClient {
 public:
  // `taskSeconds` is how long its tasks run on regular resources, `revocableSeconds` on lent
  // ones; 0: until killed or evicted.
  FrameworkClient(std::vector<uint16_t> masters, std::string role, bool revocable,
                  const std::string& taskResources, double taskSeconds, double revocableSeconds);
  FrameworkClient(uint16_t master, std::string role, bool revocable,
                  const std::string& taskResources, double taskSeconds, double revocableSeconds)
      : FrameworkClient(std::vector<uint16_t>{master}, std::move(role), revocable, taskResources,
                        taskSeconds, revocableSeconds) {}
  ~FrameworkClient() { stop(); }

  void start();
  void setLaunching(bool launching) { launching_ = launching; }
  void stop();

  std::string id() const;
  // Tasks launched whose last update is not terminal.
  std::set<std::string> unfinished() const;
  size_t launched() const;
  size_t revocableLaunched() const;
  // Revocable tasks whose last update is TASK_RUNNING.
  size_t revocableRunning() const;
  // Updates with REASON_CONTAINER_PREEMPTED: evictions.
  size_t preempted() const;
  // What `task` was launched with; nullopt for a task this framework did not launch.
  std::optional<Resources> resourcesOf(const std::string& task) const;
  // When the first offer arrived on a subscription made after `since` (so from a master alive
  // then); nullopt if none yet.
  std::optional<std::chrono::steady_clock::time_point> firstOfferSince(
      std::chrono::steady_clock::time_point since) const;
  // Tasks whose end this framework learned only from a reconciliation answer (the master no
  // longer knew them, and no update from their agent followed): after it saw them run, their
  // agent's final update was lost; before, the launch itself was (it never reached an agent).
  size_t endsLostAfterRunning() const;
  size_t launchesLost() const;
  // Tasks a reconciliation answer called ended before their agent's own final update came.
  size_t endedEarlyByReconciliation() const;
  // Of those, the ones the answer called TASK_LOST while their agent's update told another end:
  // the master answered without the end the agent still had to deliver.
  size_t reconciledLostThoughEnded() const;
  // Updates that asked for an acknowledgement, and those whose ACKNOWLEDGE the master took.
  size_t updatesToAcknowledge() const;
  // Subscriptions made at the master a standby's 307 named.
  size_t redirectsFollowed() const;
  size_t acknowledged() const;

 private:
  void loop();
  bool post(http::Connection& connection, const v1::scheduler::Call& call);
  bool session();
  struct AtLeader {
    http::StreamReader stream;
    testkit::MasterEndpoint leader;
  };
  // A subscription stream at the leading master, asking masters_[nextMaster_] first and
  // following its redirect; nullopt when that master is down or none leads.
  std::optional<AtLeader> subscribeAtLeader(const v1::scheduler::Call& subscribe);
  void handle(const v1::scheduler::Event& event, http::Connection& calls);
  void answerOffer(const v1::Offer& offer, v1::scheduler::Call& call);

  struct Launched {
    Resources resources;
    v1::TaskState state = v1::TASK_STAGING;
    bool seenRunning = false;
    bool reconciledAsEnded = false;  // The first terminal update was a reconciliation answer.
    bool endedByAgent = false;       // A terminal update from the agent came.
    v1::TaskState reconciledEnd = v1::TASK_STAGING;  // Of that first reconciliation answer.
    v1::TaskState agentEnd = v1::TASK_STAGING;       // Of the agent's first terminal update.
  };
  using Clock = std::chrono::steady_clock;
  struct Subscription {
    Clock::time_point subscribed;
    std::optional<Clock::time_point> firstOffer;
  };

  const std::vector<uint16_t> masters_;
  size_t nextMaster_ = 0;
  const std::string role_;
  const bool revocable_;
  const Resources taskResources_;
  const double taskSeconds_, revocableSeconds_;
  std::thread thread_;
  std::atomic<bool> done_{false}, launching_{true};
  mutable std::mutex mutex_;
  std::string id_;
  std::string streamId_;
  std::map<std::string, Launched> tasks_;
  size_t preempted_ = 0;
  size_t toAcknowledge_ = 0, acknowledged_ = 0, redirectsFollowed_ = 0;
  std::vector<Subscription> subscriptions_;
  uint64_t next_ = 1;
};

}  // namespace harvest::e2e
