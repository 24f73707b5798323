// LeaderContender: one master's candidacy. It creates `<path>/json.info_<seq>` (ephemeral,
// sequential) holding what the master publishes, and leads while its node has the lowest
// sequence. Each contender watches only its predecessor, so a leader's exit wakes one
// contender, not all of them.
//
// Leadership ends the moment this process can no longer prove it: on a lost connection (the
// ensemble may expire the session and elect another while we cannot hear it) as well as on
// expiry. Never two leaders offering is worth a standby period after a network blip. If the
// connection comes back with the session alive and the node still lowest, it is elected again;
// after expiry the contender is finished and the owner contends again with a new session.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "ha/zookeeper_session.h"

namespace harvest::ha {

class LeaderContender {
 public:
  // Called on the session's event thread, one at a time.
  struct Callbacks {
    std::function<void()> elected;
    std::function<void(const std::string& why)> demoted;
  };

  // Creates the node (and the persistent folders above it) and starts contending; the first
  // decision is delivered through `callbacks` after start() returns.
  static Result<std::unique_ptr<LeaderContender>> start(ZooKeeperSession& session,
                                                        const std::string& path,
                                                        const std::string& data,
                                                        Callbacks callbacks);
  // Withdraws: no callback runs after this returns, and the node is deleted.
  ~LeaderContender();

  bool leading() const;
  // False once the session expired: the node is gone and this contender will never lead.
  bool finished() const;
  const std::string& node() const;

  struct State;

 private:
  explicit LeaderContender(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace harvest::ha
