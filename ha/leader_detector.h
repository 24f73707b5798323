// LeaderDetector: who leads under a path, for standbys (to redirect) and agents (to follow).
// It watches the contenders' folder and the leader's node, and reports each change of leader
// with the data the leader published (its MasterInfo JSON), or nullopt while none leads.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "ha/zookeeper_session.h"

namespace harvest::ha {

class LeaderDetector {
 public:
  // Called on the session's event thread, one at a time, only when the leader changes.
  using Listener = std::function<void(const std::optional<std::string>& leaderData)>;

  // The first answer comes through `listener` after start() returns.
  static std::unique_ptr<LeaderDetector> start(ZooKeeperSession& session, const std::string& path,
                                               Listener listener);
  ~LeaderDetector();  // No callback runs after this returns.

  std::optional<std::string> leader() const;

  struct State;

 private:
  explicit LeaderDetector(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace harvest::ha
