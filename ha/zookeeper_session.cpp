#include "ha/zookeeper_session.h"

#include <zookeeper/zookeeper.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace harvest::ha {

const char* toString(SessionState state) {
  switch (state) {
    case SessionState::kConnected:
      return "connected";
    case SessionState::kDisconnected:
      return "disconnected";
    case SessionState::kExpired:
      return "expired";
  }
  return "?";
}

namespace {

// ZooKeeper's default limit on a node's data (jute.maxbuffer).
constexpr int kMaxNodeBytes = 1 << 20;

Status zooStatus(int rc, const std::string& operation, const std::string& path) {
  const std::string message = operation + " " + path + ": " + zerror(rc);
  switch (rc) {
    case ZOK:
      return {};
    case ZNONODE:
      return Status::notFound(message);
    case ZNODEEXISTS:
    case ZBADVERSION:
    case ZNOTEMPTY:
    case ZNOCHILDRENFOREPHEMERALS:
      return Status::failedPrecondition(message);
    case ZNOAUTH:
      return Status::permissionDenied(message);
    case ZBADARGUMENTS:
      return Status::invalidArgument(message);
    default:
      return Status::ioError(message);
  }
}

// With credentials, Mesos's ACL: anyone reads, the authenticated creator (any session with the
// same digest credentials) may do everything.
ACL everyoneReadCreatorAllEntries[] = {{ZOO_PERM_READ, ZOO_ANYONE_ID_UNSAFE},
                                       {ZOO_PERM_ALL, ZOO_AUTH_IDS}};
ACL_vector everyoneReadCreatorAll = {2, everyoneReadCreatorAllEntries};

// The client's own complaints (refused connections, timeouts) go to our log, not to stderr.
void clientLog(const char* message) {
  LOG(WARNING) << "ZooKeeper client: " << message;
}

std::optional<WatchEvent> watchEvent(int type) {
  if (type == ZOO_CREATED_EVENT) return WatchEvent::kCreated;
  if (type == ZOO_DELETED_EVENT) return WatchEvent::kDeleted;
  if (type == ZOO_CHANGED_EVENT) return WatchEvent::kChanged;
  if (type == ZOO_CHILD_EVENT) return WatchEvent::kChildrenChanged;
  return std::nullopt;
}

}  // namespace

struct ZooKeeperSession::Impl : std::enable_shared_from_this<Impl> {
  struct WatchRecord {
    Impl* impl;
    uint64_t id;
    Watch watch;
  };

  zhandle_t* handle = nullptr;
  mutable std::mutex mutex;
  std::condition_variable stateChanged;
  std::condition_variable eventQueued;
  SessionState state = SessionState::kDisconnected;
  bool connectedOnce = false;
  std::vector<StateListener> listeners;
  std::deque<std::function<void()>> events;
  bool stopping = false;
  std::thread eventThread;
  std::map<uint64_t, std::unique_ptr<WatchRecord>> watches;
  uint64_t nextWatch = 1;
  ACL_vector* acl = &ZOO_OPEN_ACL_UNSAFE;
  std::optional<int> authResult;  // Set by the completion of zoo_add_auth().

  void post(std::function<void()> event) {
    std::lock_guard lock(mutex);
    if (stopping) return;
    events.push_back(std::move(event));
    eventQueued.notify_one();
  }

  void runEvents() {
    while (true) {
      std::function<void()> event;
      {
        std::unique_lock lock(mutex);
        eventQueued.wait(lock, [&] { return stopping || !events.empty(); });
        if (stopping) return;
        event = std::move(events.front());
        events.pop_front();
      }
      event();
    }
  }

  static void sessionWatcher(zhandle_t*, int type, int zooState, const char*, void* context) {
    if (type != ZOO_SESSION_EVENT) return;
    auto* impl = static_cast<Impl*>(context);
    SessionState next = SessionState::kDisconnected;
    if (zooState == ZOO_CONNECTED_STATE) next = SessionState::kConnected;
    if (zooState == ZOO_EXPIRED_SESSION_STATE || zooState == ZOO_AUTH_FAILED_STATE) {
      next = SessionState::kExpired;
    }
    {
      std::lock_guard lock(impl->mutex);
      if (impl->state == next) return;
      impl->state = next;
      if (next == SessionState::kConnected) impl->connectedOnce = true;
      impl->stateChanged.notify_all();
    }
    impl->post([impl, next] {
      std::vector<StateListener> listeners;
      {
        std::lock_guard lock(impl->mutex);
        listeners = impl->listeners;
      }
      for (const auto& listener : listeners) listener(next);
    });
  }

  static void pathWatcher(zhandle_t*, int type, int, const char* path, void* context) {
    const auto event = watchEvent(type);
    if (!event) return;  // Session changes reach the session watcher too.
    auto* record = static_cast<WatchRecord*>(context);
    Impl* impl = record->impl;
    Watch watch;
    {
      std::lock_guard lock(impl->mutex);
      auto found = impl->watches.find(record->id);
      if (found == impl->watches.end()) return;
      watch = std::move(found->second->watch);
      impl->watches.erase(found);
    }
    impl->post([watch = std::move(watch), event = *event, path = std::string(path)] {
      watch(event, path);
    });
  }

  static void authCompleted(int rc, const void* context) {
    auto* impl = static_cast<Impl*>(const_cast<void*>(context));
    std::lock_guard lock(impl->mutex);
    impl->authResult = rc;
    impl->stateChanged.notify_all();
  }

  // Sends the digest credentials and waits for the ensemble's answer; the client sends them
  // again by itself whenever it reconnects.
  Status authenticate(const std::string& credentials, Duration timeout) {
    const int rc = zoo_add_auth(handle, "digest", credentials.data(),
                                static_cast<int>(credentials.size()), &authCompleted, this);
    if (rc != ZOK) return zooStatus(rc, "authenticate", "(digest)");
    std::unique_lock lock(mutex);
    if (!stateChanged.wait_for(lock, timeout.chrono(), [&] { return authResult.has_value(); })) {
      return Status::ioError("ZooKeeper did not answer the credentials within " +
                             std::to_string(timeout.millis()) + " ms");
    }
    if (*authResult != ZOK) {
      return Status::permissionDenied(std::string("ZooKeeper refused the credentials: ") +
                                      zerror(*authResult));
    }
    acl = &everyoneReadCreatorAll;
    return {};
  }

  // The context the C client hands back to pathWatcher; owned here until it fires or the
  // session closes.
  void* watchContext(Watch watch) {
    if (!watch) return nullptr;
    std::lock_guard lock(mutex);
    const uint64_t id = nextWatch++;
    auto record = std::make_unique<WatchRecord>(WatchRecord{this, id, std::move(watch)});
    void* context = record.get();
    watches.emplace(id, std::move(record));
    return context;
  }
  watcher_fn watcherFor(void* context) const { return context ? &pathWatcher : nullptr; }

  void close() {
    if (handle) {
      // Returns once the client's threads are gone: no watcher runs after this.
      zookeeper_close(handle);
      handle = nullptr;
    }
    {
      std::lock_guard lock(mutex);
      stopping = true;
      eventQueued.notify_all();
    }
    if (!eventThread.joinable()) return;
    // A callback on the event thread may drop the session it was called for (a contender
    // whose session expired); the thread ends after that callback returns.
    if (eventThread.get_id() == std::this_thread::get_id()) {
      eventThread.detach();
    } else {
      eventThread.join();
    }
  }
};

ZooKeeperSession::ZooKeeperSession(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

ZooKeeperSession::~ZooKeeperSession() {
  impl_->close();
}

Result<std::unique_ptr<ZooKeeperSession>> ZooKeeperSession::connect(const Options& options) {
  static std::once_flag quietClient;
  // Errors only: the client's info lines repeat what our own messages say.
  std::call_once(quietClient, [] { zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR); });

  auto impl = std::make_shared<Impl>();
  // The thread keeps Impl alive on its own, for the case where it is detached (close()).
  impl->eventThread = std::thread([keep = impl] { keep->runEvents(); });
  impl->handle = zookeeper_init2(options.connectString.c_str(), &Impl::sessionWatcher,
                                 static_cast<int>(options.sessionTimeout.millis()), nullptr,
                                 impl.get(), 0, &clientLog);
  if (!impl->handle) {
    impl->close();
    return Status::invalidArgument("the ZooKeeper client refused servers '" +
                                   options.connectString + "' (is every host resolvable?)");
  }
  bool connected = false;
  {
    std::unique_lock lock(impl->mutex);
    connected = impl->stateChanged.wait_for(lock, options.connectTimeout.chrono(), [&] {
      return impl->state != SessionState::kDisconnected;
    }) && impl->state == SessionState::kConnected;
  }
  if (!connected) {
    impl->close();
    return Status::ioError("no ZooKeeper server at " + options.connectString +
                           " accepted a session within " +
                           std::to_string(options.connectTimeout.millis()) + " ms");
  }
  if (options.digestCredentials) {
    if (Status status = impl->authenticate(*options.digestCredentials, options.connectTimeout);
        !status.ok()) {
      impl->close();
      return status;
    }
  }
  return std::unique_ptr<ZooKeeperSession>(new ZooKeeperSession(std::move(impl)));
}

void ZooKeeperSession::addStateListener(StateListener listener) {
  std::lock_guard lock(impl_->mutex);
  impl_->listeners.push_back(std::move(listener));
}

void ZooKeeperSession::post(std::function<void()> task) {
  impl_->post(std::move(task));
}

SessionState ZooKeeperSession::state() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->state;
}

int64_t ZooKeeperSession::sessionId() const {
  return zoo_client_id(impl_->handle)->client_id;
}

Duration ZooKeeperSession::negotiatedTimeout() const {
  return Duration::milliseconds(zoo_recv_timeout(impl_->handle));
}

Result<std::string> ZooKeeperSession::create(const std::string& path, const std::string& data,
                                             NodeKind kind) {
  int flags = ZOO_PERSISTENT;
  if (kind == NodeKind::kEphemeral) flags = ZOO_EPHEMERAL;
  if (kind == NodeKind::kEphemeralSequential) flags = ZOO_EPHEMERAL_SEQUENTIAL;
  std::string created(path.size() + 32, '\0');
  const int rc = zoo_create(impl_->handle, path.c_str(), data.data(), static_cast<int>(data.size()),
                            impl_->acl, flags, created.data(), static_cast<int>(created.size()));
  if (rc != ZOK) return zooStatus(rc, "create", path);
  created.resize(created.find('\0'));
  return created;
}

Status ZooKeeperSession::createParents(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    auto created = create(prefix, "", NodeKind::kPersistent);
    if (!created.ok() && created.code() != StatusCode::kFailedPrecondition) {
      return created.status();
    }
    if (slash == std::string::npos) return {};
  }
}

Result<NodeData> ZooKeeperSession::get(const std::string& path, Watch watch) {
  void* context = impl_->watchContext(std::move(watch));
  NodeData node;
  node.data.resize(kMaxNodeBytes);
  int length = kMaxNodeBytes;
  Stat stat{};
  const int rc = zoo_wget(impl_->handle, path.c_str(), impl_->watcherFor(context), context,
                          node.data.data(), &length, &stat);
  if (rc != ZOK) return zooStatus(rc, "get", path);
  node.data.resize(length < 0 ? 0 : length);
  node.version = stat.version;
  return node;
}

Result<int32_t> ZooKeeperSession::set(const std::string& path, const std::string& data,
                                      int32_t expectedVersion) {
  Stat stat{};
  const int rc = zoo_set2(impl_->handle, path.c_str(), data.data(), static_cast<int>(data.size()),
                          expectedVersion, &stat);
  if (rc != ZOK) return zooStatus(rc, "set", path);
  return stat.version;
}

Status ZooKeeperSession::setFenced(const std::string& path, const std::string& data,
                                   const std::string& fence) {
  zoo_op_t ops[2];
  zoo_op_result_t results[2];
  Stat stat{};
  zoo_check_op_init(&ops[0], fence.c_str(), -1);
  zoo_set_op_init(&ops[1], path.c_str(), data.data(), static_cast<int>(data.size()), -1, &stat);
  const int rc = zoo_multi(impl_->handle, 2, ops, results);
  if (rc == ZOK) return {};
  if (results[0].err == ZNONODE) {
    return Status::failedPrecondition("write to " + path + " refused: fence " + fence +
                                      " is gone (no longer leading)");
  }
  return zooStatus(rc, "fenced set", path);
}

Status ZooKeeperSession::remove(const std::string& path, int32_t expectedVersion) {
  return zooStatus(zoo_delete(impl_->handle, path.c_str(), expectedVersion), "delete", path);
}

Result<std::vector<std::string>> ZooKeeperSession::children(const std::string& path, Watch watch) {
  void* context = impl_->watchContext(std::move(watch));
  String_vector names{};
  const int rc =
      zoo_wget_children(impl_->handle, path.c_str(), impl_->watcherFor(context), context, &names);
  if (rc != ZOK) return zooStatus(rc, "children of", path);
  std::vector<std::string> result(names.data, names.data + names.count);
  deallocate_String_vector(&names);
  return result;
}

Result<bool> ZooKeeperSession::exists(const std::string& path, Watch watch) {
  void* context = impl_->watchContext(std::move(watch));
  Stat stat{};
  const int rc =
      zoo_wexists(impl_->handle, path.c_str(), impl_->watcherFor(context), context, &stat);
  if (rc == ZNONODE) return false;
  if (rc != ZOK) return zooStatus(rc, "exists", path);
  return true;
}

}  // namespace harvest::ha
