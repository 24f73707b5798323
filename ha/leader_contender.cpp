#include "ha/leader_contender.h"

#include <glog/logging.h>

#include <algorithm>
#include <mutex>

#include "ha/contender_nodes.h"

namespace harvest::ha {

struct LeaderContender::State {
  ZooKeeperSession& session;
  std::string path;
  std::string node;  // Full path of our node.
  Callbacks callbacks;
  // Recursive: a callback may destroy its contender on the same thread.
  mutable std::recursive_mutex mutex;
  bool withdrawn = false;
  bool leading = false;
  bool finished = false;

  State(ZooKeeperSession& session, std::string path, Callbacks callbacks)
      : session(session), path(std::move(path)), callbacks(std::move(callbacks)) {}

  void demote(const std::string& why) {
    if (!leading) return;
    leading = false;
    LOG(WARNING) << "No longer leading (" << node << "): " << why;
    if (callbacks.demoted) callbacks.demoted(why);
  }

  // Decides from the current children: lead, or watch the predecessor.
  static void check(const std::shared_ptr<State>& self) {
    std::lock_guard lock(self->mutex);
    if (self->withdrawn || self->finished) return;
    while (true) {
      auto children = self->session.children(self->path);
      if (!children.ok()) {
        // A lost connection; the reconnection calls check() again.
        LOG(WARNING) << "Contender " << self->node
                     << " cannot list contenders: " << children.message();
        return;
      }
      const auto ordered = contendersInOrder(*children);
      const std::string name = self->node.substr(self->path.size() + 1);
      const auto mine = std::find(ordered.begin(), ordered.end(), name);
      if (mine == ordered.end()) {
        self->finished = true;
        self->demote("our contender node " + self->node + " is gone");
        return;
      }
      if (mine == ordered.begin()) {
        if (!self->leading) {
          self->leading = true;
          LOG(INFO) << "Elected leader: " << self->node;
          if (self->callbacks.elected) self->callbacks.elected();
        }
        return;
      }
      const std::string predecessor = self->path + "/" + *(mine - 1);
      std::weak_ptr<State> weak = self;
      auto exists = self->session.exists(predecessor, [weak](WatchEvent event, const std::string&) {
        if (event != WatchEvent::kDeleted) return;
        if (auto state = weak.lock()) check(state);
      });
      if (!exists.ok()) {
        LOG(WARNING) << "Contender " << self->node << " cannot watch " << predecessor << ": "
                     << exists.message();
        return;
      }
      if (*exists) return;  // Watching; its deletion calls check() again.
    }
  }

  static void sessionChanged(const std::shared_ptr<State>& self, SessionState state) {
    std::lock_guard lock(self->mutex);
    if (self->withdrawn || self->finished) return;
    switch (state) {
      case SessionState::kDisconnected:
        self->demote("lost the connection to ZooKeeper; another master may be elected");
        return;
      case SessionState::kExpired:
        self->finished = true;
        self->demote("the ZooKeeper session expired");
        return;
      case SessionState::kConnected:
        check(self);
        return;
    }
  }
};

Result<std::unique_ptr<LeaderContender>> LeaderContender::start(ZooKeeperSession& session,
                                                                const std::string& path,
                                                                const std::string& data,
                                                                Callbacks callbacks) {
  if (auto status = session.createParents(path); !status.ok()) return status;
  auto node = session.create(path + "/" + std::string(kContenderPrefix), data,
                             NodeKind::kEphemeralSequential);
  if (!node.ok()) return node.status();
  auto state = std::make_shared<State>(session, path, std::move(callbacks));
  state->node = std::move(node).value();
  std::weak_ptr<State> weak = state;
  session.addStateListener([weak](SessionState sessionState) {
    if (auto self = weak.lock()) State::sessionChanged(self, sessionState);
  });
  session.post([weak] {
    if (auto self = weak.lock()) State::check(self);
  });
  return std::unique_ptr<LeaderContender>(new LeaderContender(std::move(state)));
}

LeaderContender::~LeaderContender() {
  std::lock_guard lock(state_->mutex);
  state_->withdrawn = true;
  state_->leading = false;
  if (state_->finished || state_->session.state() != SessionState::kConnected) return;
  if (auto status = state_->session.remove(state_->node); !status.ok()) {
    LOG(WARNING) << "Could not withdraw " << state_->node << ": " << status.message();
  }
}

bool LeaderContender::leading() const {
  std::lock_guard lock(state_->mutex);
  return state_->leading;
}

bool LeaderContender::finished() const {
  std::lock_guard lock(state_->mutex);
  return state_->finished;
}

const std::string& LeaderContender::node() const {
  return state_->node;
}

}  // namespace harvest::ha
