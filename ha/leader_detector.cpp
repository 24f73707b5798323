#include "ha/leader_detector.h"

#include <glog/logging.h>

#include <mutex>

#include "ha/contender_nodes.h"

namespace harvest::ha {

struct LeaderDetector::State {
  ZooKeeperSession& session;
  std::string path;
  Listener listener;
  mutable std::recursive_mutex mutex;
  bool stopped = false;
  bool reported = false;
  std::optional<std::string> leader;

  State(ZooKeeperSession& session, std::string path, Listener listener)
      : session(session), path(std::move(path)), listener(std::move(listener)) {}

  void report(std::optional<std::string> next) {
    if (reported && next == leader) return;
    reported = true;
    leader = std::move(next);
    if (listener) listener(leader);
  }

  static ZooKeeperSession::Watch again(const std::shared_ptr<State>& self) {
    std::weak_ptr<State> weak = self;
    return [weak](WatchEvent, const std::string&) {
      if (auto state = weak.lock()) detect(state);
    };
  }

  static void detect(const std::shared_ptr<State>& self) {
    std::lock_guard lock(self->mutex);
    if (self->stopped) return;
    while (true) {
      auto children = self->session.children(self->path, again(self));
      if (children.code() == StatusCode::kNotFound) {
        // No master has contended yet: wait for the folder.
        auto exists = self->session.exists(self->path, again(self));
        if (exists.ok() && *exists) continue;
        if (exists.ok()) self->report(std::nullopt);
        return;
      }
      if (!children.ok()) {
        LOG(WARNING) << "Cannot list masters under " << self->path << ": " << children.message();
        return;  // The reconnection detects again.
      }
      const auto ordered = contendersInOrder(*children);
      if (ordered.empty()) {
        self->report(std::nullopt);
        return;
      }
      auto data = self->session.get(self->path + "/" + ordered.front(), again(self));
      if (data.code() == StatusCode::kNotFound) continue;  // Left between the two reads.
      if (!data.ok()) {
        LOG(WARNING) << "Cannot read the leader's node: " << data.message();
        return;
      }
      self->report(std::move(data).value().data);
      return;
    }
  }
};

std::unique_ptr<LeaderDetector> LeaderDetector::start(ZooKeeperSession& session,
                                                      const std::string& path, Listener listener) {
  auto state = std::make_shared<State>(session, path, std::move(listener));
  std::weak_ptr<State> weak = state;
  session.addStateListener([weak](SessionState sessionState) {
    if (sessionState != SessionState::kConnected) return;
    if (auto self = weak.lock()) State::detect(self);
  });
  session.post([weak] {
    if (auto self = weak.lock()) State::detect(self);
  });
  return std::unique_ptr<LeaderDetector>(new LeaderDetector(std::move(state)));
}

LeaderDetector::~LeaderDetector() {
  std::lock_guard lock(state_->mutex);
  state_->stopped = true;
}

std::optional<std::string> LeaderDetector::leader() const {
  std::lock_guard lock(state_->mutex);
  return state_->leader;
}

}  // namespace harvest::ha
