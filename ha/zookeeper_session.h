// ZooKeeperSession: one session with a ZooKeeper ensemble, over the C client
// (libzookeeper-mt), with errors as Status.
//
// The C client calls watchers on its own completion thread, and a synchronous call made from
// that thread waits forever for a completion only that thread can deliver. So every watch and
// every session change is handed to a thread this class owns ("the event thread"), where
// callbacks may call back into the session freely. Callbacks run one at a time, in order.
//
// Session states: connected; disconnected (the client is trying the servers again: the session
// and its ephemeral nodes may still be alive, but nothing this process believes can be checked);
// expired (the ensemble dropped the session and its ephemeral nodes: this object is dead, make a
// new one). Destroying the object closes the session, which deletes its ephemeral nodes at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace harvest::ha {

enum class SessionState { kConnected, kDisconnected, kExpired };
const char* toString(SessionState state);

enum class NodeKind { kPersistent, kEphemeral, kEphemeralSequential };

// What fired a watch. A watch fires once; set it again to keep watching.
enum class WatchEvent { kCreated, kDeleted, kChanged, kChildrenChanged };

struct NodeData {
  std::string data;
  int32_t version = 0;  // Bumped by every set(); the fence for conditional writes.
};

class ZooKeeperSession {
 public:
  using Watch = std::function<void(WatchEvent event, const std::string& path)>;
  using StateListener = std::function<void(SessionState state)>;

  struct Options {
    std::string connectString;  // "host:port,host:port" (ZooKeeperUrl::connectString()).
    // How long the ensemble keeps the session (and its ephemeral nodes) without hearing from
    // us; the server may clamp it to [2, 20] ticks.
    Duration sessionTimeout = Duration::seconds(10);
    // How long connect() waits for the first server to accept the session.
    Duration connectTimeout = Duration::seconds(10);
    // "user:password" (ZooKeeperUrl::credentials): the session authenticates with the digest
    // scheme, and every node it creates is readable by anyone but changeable only by sessions
    // with the same credentials (Mesos's ACL for its nodes). Unset: nodes are open to all.
    std::optional<std::string> digestCredentials;
  };

  // IOError when no server accepts a session within connectTimeout; InvalidArgument when the
  // connect string is refused outright (an unresolvable host); PermissionDenied when the
  // ensemble refuses the credentials.
  static Result<std::unique_ptr<ZooKeeperSession>> connect(const Options& options);
  ~ZooKeeperSession();
  ZooKeeperSession(const ZooKeeperSession&) = delete;
  ZooKeeperSession& operator=(const ZooKeeperSession&) = delete;

  // Called on the event thread for every change of state after connect() returned.
  void addStateListener(StateListener listener);
  // Runs `task` on the event thread, after the callbacks already queued.
  void post(std::function<void()> task);
  SessionState state() const;
  int64_t sessionId() const;
  Duration negotiatedTimeout() const;

  // Returns the path created (with the sequence suffix for sequential nodes). NotFound when
  // the parent is missing; FailedPrecondition when the node exists. Every call that changes a
  // node answers PermissionDenied when the node's ACL does not let this session change it.
  Result<std::string> create(const std::string& path, const std::string& data, NodeKind kind);
  // Creates every missing persistent node on the way to `path`, `path` included.
  Status createParents(const std::string& path);
  // NotFound when the node does not exist. `watch` (optional) fires on its change or deletion.
  Result<NodeData> get(const std::string& path, Watch watch = {});
  // Writes only if the node is at `expectedVersion` (-1: any); returns the new version.
  // FailedPrecondition when the version differs, NotFound when the node is gone.
  Result<int32_t> set(const std::string& path, const std::string& data,
                      int32_t expectedVersion = -1);
  // Writes `path` only while `fence` exists, atomically (one multi-operation): a leader fences
  // its writes with its own ephemeral node, so once its session is gone they fail.
  // FailedPrecondition when the fence is gone, NotFound when `path` is.
  Status setFenced(const std::string& path, const std::string& data, const std::string& fence);
  Status remove(const std::string& path, int32_t expectedVersion = -1);
  // Names (not paths) of the children. `watch` fires when the set of children changes.
  Result<std::vector<std::string>> children(const std::string& path, Watch watch = {});
  // `watch` fires on creation, change or deletion, whether the node exists now or not.
  Result<bool> exists(const std::string& path, Watch watch = {});

 private:
  struct Impl;
  explicit ZooKeeperSession(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace harvest::ha
