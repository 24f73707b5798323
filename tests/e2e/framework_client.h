// One framework over the v1 scheduler API (protobuf), as the kill-and-restart test runs it:
// reconnects with its id whenever the stream ends, reconciles its unfinished tasks after each
// subscription, launches one task per offer that fits while launching is on (declines
// otherwise), and remembers every task it launched with its resources and last state.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "net/http_client.h"
#include "protos/scheduler.pb.h"
#include "resources/resources.h"

namespace harvest::e2e {

class FrameworkClient {
 public:
  // `taskSeconds` is how long its tasks run on regular resources, `revocableSeconds` on lent
  // ones; 0: until killed or evicted.
  FrameworkClient(uint16_t port, std::string role, bool revocable, const std::string& taskResources,
                  double taskSeconds, double revocableSeconds);
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

 private:
  void loop();
  bool post(http::Connection& connection, const v1::scheduler::Call& call);
  bool session();
  void handle(const v1::scheduler::Event& event, http::Connection& calls);
  void answerOffer(const v1::Offer& offer, v1::scheduler::Call& call);

  struct Launched {
    Resources resources;
    v1::TaskState state = v1::TASK_STAGING;
  };

  const uint16_t port_;
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
  uint64_t next_ = 1;
};

}  // namespace harvest::e2e
