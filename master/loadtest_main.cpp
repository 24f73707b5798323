// harvest-loadtest: a bounded load test of the network master.
//
//   harvest-loadtest [--agents=1000] [--frameworks=200] [--rounds=20] [--master=HOST:PORT]
//                    [--allocation_interval=0.1] [--json=PATH]
//
// Without --master it starts a NetworkMaster in-process on an ephemeral loopback port, driven
// by its own thread. Then, from two client threads:
//   - A fake agents (cpus:8;mem:16384) register, each with its own registration stream. The
//     agent thread answers RUN_TASK with STATUS TASK_RUNNING and, after the task's duration,
//     TASK_FINISHED + FREED.
//   - F frameworks subscribe (JSON). The main thread runs R rounds: it reads the frameworks'
//     streams until offers have arrived and the streams have gone quiet, then answers every
//     offer (ACCEPT launching one cpus:1;mem:512 task of 1 s for every other offer, DECLINE
//     with refuse_seconds 0 for the rest) and ACKNOWLEDGEs every update.
//   - After the rounds it waits for every launched task to finish and be acknowledged; offers
//     made meanwhile are left unanswered.
//
// Measured: scheduler calls (every POST to /api/v1/scheduler) per second of wall time; the
// calls' round trips; offer->launch latency, from the framework reading the OFFERS event to
// the agent reading the RUN_TASK of the task launched on it (same process, steady_clock,
// matched by task id); the process's RSS (master and load clients together) when in-process.
// Exits 1 on any problem: an HTTP error, a stream that ends, a launch whose RUN_TASK never
// arrives, a task that does not finish, or master counters that disagree with the clients'.
//
// Every socket is non-blocking and each thread waits in one poll(2) over all of its sockets:
// a blocking reader per stream cannot serve a thousand streams from one thread, and a client
// that waits for each answer before sending the next call measures its own round trips, not
// the master. So calls are pipelined on keep-alive connections (one per framework, a few for
// the agents, an agent's calls always on the same one since their sequence numbers must arrive
// in order), and responses are matched to calls in order. Bytes are parsed with the project's
// ResponseParser and RecordDecoder.
#include <glog/logging.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "master/agent_wire.h"
#include "master/http/http_client.h"
#include "master/http/recordio.h"
#include "master/http/response_parser.h"
#include "master/network_master.h"
#include "master/scheduler_codec.h"
#include "resources/convert.h"
#include "resources/parse.h"

namespace harvest::master {
namespace {

using Clock = std::chrono::steady_clock;
using v1::scheduler::Call;
using v1::scheduler::Event;

constexpr const char* kAgentResources = "cpus:8;mem:16384";
constexpr const char* kTaskResources = "cpus:1;mem:512";
constexpr double kTaskSeconds = 1.0;
constexpr int kRoles = 8;          // Frameworks are spread over this many roles.
constexpr size_t kAgentLines = 8;  // Pipelined connections the agents' calls share.
constexpr int kConnectTimeoutMs = 5000;
// A round gathers events until offers are pending and no event has come for this long: one
// allocation cycle's offers arrive as a burst.
constexpr auto kQuiet = std::chrono::milliseconds(10);
constexpr auto kRoundTimeout = std::chrono::seconds(10);
constexpr auto kSetupTimeout = std::chrono::seconds(60);
constexpr auto kDrainTimeout = std::chrono::seconds(15);
constexpr const char* kProtobuf = "application/x-protobuf";
constexpr const char* kJson = "application/json";

struct Options {
  int agents = 1000;
  int frameworks = 200;
  int rounds = 20;
  double allocationInterval = 0.1;
  std::string master;  // HOST:PORT; empty: in-process.
  std::string json;
};

double secondsOf(Clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}
double millisOf(Clock::duration duration) {
  return std::chrono::duration<double, std::milli>(duration).count();
}

Resources resourcesFrom(std::string_view text) {
  Result<Resources> parsed = parseResources(text);
  CHECK(parsed.ok()) << parsed.message();
  return *parsed;
}

// The percentile `p` (0..1) of sorted values, nearest rank.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

std::string toJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out;
  const auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  CHECK(status.ok()) << status.message();
  return out;
}

// What went wrong, from any thread. The run fails if anything did.
class Problems {
 public:
  void add(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (++count_ <= kShown) std::fprintf(stderr, "harvest-loadtest: %s\n", what.c_str());
    if (first_.empty()) first_ = what;
  }
  uint64_t count() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return count_;
  }
  std::string first() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return first_;
  }

 private:
  static constexpr uint64_t kShown = 10;  // Then only counted: one broken stream may repeat.
  mutable std::mutex mutex_;
  uint64_t count_ = 0;
  std::string first_;
};

// ---- Sockets -------------------------------------------------------------------------------

// A connected non-blocking TCP socket (TCP_NODELAY: calls are small and latency matters).
Result<int> connectTcp(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &addresses); rc != 0) {
    return Result<int>::error("cannot resolve " + host + ": " + ::gai_strerror(rc));
  }
  std::string problem = "no address";
  int connected = -1;
  for (addrinfo* a = addresses; a != nullptr && connected < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      problem = std::strerror(errno);
      continue;
    }
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      problem = std::strerror(errno);
      ::close(fd);
      continue;
    }
    pollfd pfd{fd, POLLOUT, 0};
    int ready;
    do {
      ready = ::poll(&pfd, 1, kConnectTimeoutMs);
    } while (ready < 0 && errno == EINTR);
    int error = 0;
    socklen_t length = sizeof error;
    if (ready > 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    if (ready <= 0 || error != 0) {
      problem = ready <= 0 ? "timed out" : std::strerror(error);
      ::close(fd);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    connected = fd;
  }
  ::freeaddrinfo(addresses);
  if (connected < 0) {
    return Result<int>::error("cannot connect to " + host + ":" + service + ": " + problem);
  }
  return connected;
}

std::string postRequest(const std::string& authority, std::string_view target,
                        const http::Headers& headers, std::string_view body) {
  std::string out = "POST ";
  out.append(target);
  out += " HTTP/1.1\r\nHost: " + authority + "\r\n";
  for (const auto& [name, value] : headers) out += name + ": " + value + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out.append(body);
  return out;
}

// Reads everything the socket holds now into `parser` (and the end of the stream, setting *eof,
// if the peer closed). False with *error set if reading failed.
bool receiveAvailable(int fd, http::ResponseParser& parser, std::string* error, bool* eof) {
  std::array<char, 64 * 1024> buffer;
  while (true) {
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n > 0) {
      parser.feed(std::string_view(buffer.data(), static_cast<size_t>(n)));
      continue;
    }
    if (n == 0) {
      parser.feedEof();  // The parser tells what that means for the response under way.
      *eof = true;
      return true;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    *error = std::string("recv: ") + std::strerror(errno);
    return false;
  }
}

// One streaming response (an agent's registration or a framework's subscription).
class RawStream {
 public:
  // Connects and sends the request; the answer is read by readAvailable().
  static Result<std::unique_ptr<RawStream>> open(const std::string& host, uint16_t port,
                                                 const std::string& target,
                                                 const std::string& contentType,
                                                 const std::string& body) {
    Result<int> fd = connectTcp(host, port);
    if (!fd.ok()) return fd.status();
    std::unique_ptr<RawStream> stream(new RawStream(*fd));
    const std::string request =
        postRequest(host + ":" + std::to_string(port), target,
                    {{"Content-Type", contentType}, {"Accept", contentType}}, body);
    size_t sent = 0;
    const Clock::time_point deadline = Clock::now() + kSetupTimeout;
    while (sent < request.size()) {
      const ssize_t n = ::send(*fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return Result<std::unique_ptr<RawStream>>::error(std::string("send: ") +
                                                         std::strerror(errno));
      }
      if (Clock::now() > deadline) {
        return Result<std::unique_ptr<RawStream>>::error("timed out sending " + target);
      }
      pollfd pfd{*fd, POLLOUT, 0};
      (void)::poll(&pfd, 1, 10);
    }
    return stream;
  }

  RawStream(const RawStream&) = delete;
  RawStream& operator=(const RawStream&) = delete;
  ~RawStream() { ::close(fd_); }

  int fd() const { return fd_; }
  const std::string& error() const { return error_; }
  // Set once the response head has arrived.
  const std::optional<http::ResponseHead>& head() const { return head_; }

  // Everything the socket holds now; complete records are appended to `records`. False once
  // the stream has ended or failed (error() says how): these streams never end on their own.
  bool readAvailable(std::vector<std::string>* records) {
    if (!error_.empty()) return false;
    std::string error;
    bool eof = false;  // The parser turns it into kComplete or kError.
    if (!receiveAvailable(fd_, parser_, &error, &eof)) return fail(error);
    while (true) {
      switch (parser_.next()) {
        case http::ResponseParser::Event::kNeedMore:
          return true;
        case http::ResponseParser::Event::kHead:
          head_ = parser_.head();
          break;
        case http::ResponseParser::Event::kChunk: {
          const Status fed = decoder_.feed(parser_.takeChunk(), records);
          if (!fed.ok()) return fail("bad RecordIO: " + fed.message());
          break;
        }
        case http::ResponseParser::Event::kComplete: {
          const std::string body = parser_.takeBody();
          return fail(head_ && head_->status != 200
                          ? "HTTP " + std::to_string(head_->status) + ": " + body.substr(0, 200)
                          : "the stream ended");
        }
        case http::ResponseParser::Event::kError:
          return fail("broken response: " + parser_.error().message);
      }
    }
  }

 private:
  explicit RawStream(int fd) : fd_(fd) {}
  bool fail(std::string why) {
    error_ = std::move(why);
    return false;
  }

  int fd_;
  http::ResponseParser parser_{
      http::ResponseParserOptions{http::kDefaultMaxHeaderBytes, 16 * 1024 * 1024, true}};
  http::RecordDecoder decoder_;
  std::optional<http::ResponseHead> head_;
  std::string error_;
};

// A keep-alive connection on which calls are pipelined: each POST is written as soon as the
// socket takes it, and the answers, which come in order, are matched to the calls in order.
// Every answer must be a 2xx.
class Pipeline {
 public:
  static Result<std::unique_ptr<Pipeline>> open(const std::string& host, uint16_t port,
                                                Problems* problems) {
    Result<int> fd = connectTcp(host, port);
    if (!fd.ok()) return fd.status();
    return std::unique_ptr<Pipeline>(
        new Pipeline(*fd, host + ":" + std::to_string(port), problems));
  }
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  ~Pipeline() { ::close(fd_); }

  int fd() const { return fd_; }
  bool broken() const { return broken_; }
  // What to wait for: answers, and room to write while requests are queued.
  uint32_t events() const {
    return EPOLLIN | (out_.empty() ? 0u : static_cast<uint32_t>(EPOLLOUT));
  }
  size_t outstanding() const { return waiting_.size(); }
  uint64_t answered() const { return answered_; }
  // Queue to answer, per call.
  const std::vector<double>& roundTripsMs() const { return roundTripsMs_; }

  void post(std::string_view target, const http::Headers& headers, std::string_view body,
            std::string what) {
    if (broken_) {
      problems_->add(what + ": not sent, its connection failed");
      return;
    }
    out_ += postRequest(authority_, target, headers, body);
    waiting_.push_back({std::move(what), Clock::now()});
    write();
  }

  // When the socket is ready: writes what it takes and checks the answers that have arrived.
  void pump() {
    if (broken_) return;
    write();
    std::string error;
    bool eof = false;
    if (!receiveAvailable(fd_, parser_, &error, &eof)) return fail(error);
    while (!broken_) {
      switch (parser_.next()) {
        case http::ResponseParser::Event::kNeedMore:
          // The master never closes these connections in a bounded run; if it did, further
          // calls would be lost.
          if (eof) fail("the master closed the connection");
          return;
        case http::ResponseParser::Event::kComplete:
          answer();
          break;
        case http::ResponseParser::Event::kError:
          return fail("broken response: " + parser_.error().message);
        default:
          break;  // kHead; kChunk does not occur outside streaming mode.
      }
    }
  }

 private:
  struct Waiting {
    std::string what;
    Clock::time_point sent;
  };

  Pipeline(int fd, std::string authority, Problems* problems)
      : fd_(fd), authority_(std::move(authority)), problems_(problems) {}

  void write() {
    size_t written = 0;
    while (written < out_.size()) {
      const ssize_t n = ::send(fd_, out_.data() + written, out_.size() - written, MSG_NOSIGNAL);
      if (n > 0) {
        written += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        break;
      } else {
        return fail(std::string("send: ") + std::strerror(errno));
      }
    }
    out_.erase(0, written);
  }

  void answer() {
    const int status = parser_.head().status;
    const std::string body = parser_.takeBody();
    if (waiting_.empty()) return fail("an answer to no call (HTTP " + std::to_string(status) + ")");
    const Waiting call = std::move(waiting_.front());
    waiting_.pop_front();
    ++answered_;
    roundTripsMs_.push_back(millisOf(Clock::now() - call.sent));
    if (status < 200 || status > 299) {
      problems_->add(call.what + ": HTTP " + std::to_string(status) + " " + body.substr(0, 200));
    }
  }

  void fail(const std::string& why) {
    if (broken_) return;
    broken_ = true;
    problems_->add("call connection: " + why + " (" + std::to_string(waiting_.size()) +
                   " calls unanswered)");
    waiting_.clear();
  }

  int fd_;
  std::string authority_;
  Problems* problems_;
  http::ResponseParser parser_;
  std::string out_;  // Not yet taken by the socket.
  std::deque<Waiting> waiting_;
  std::vector<double> roundTripsMs_;
  uint64_t answered_ = 0;
  bool broken_ = false;
};

uint64_t answered(const std::vector<std::unique_ptr<Pipeline>>& lines) {
  uint64_t n = 0;
  for (const auto& line : lines) n += line->answered();
  return n;
}

size_t outstanding(const std::vector<std::unique_ptr<Pipeline>>& lines) {
  size_t n = 0;
  for (const auto& line : lines) n += line->outstanding();
  return n;
}

// epoll(7) over one thread's sockets: a wakeup costs what is ready, not what is open (a
// poll(2) over a thousand streams per answered call would cost the clients more than the
// master spends on the call).
class Poller {
 public:
  Poller() : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
    CHECK_GE(epoll_, 0) << "epoll_create1: " << std::strerror(errno);
  }
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;
  ~Poller() { ::close(epoll_); }

  // Watches `fd` for `events`, reported with `tag`; called again, changes the events.
  void watch(int fd, uint64_t tag, uint32_t events) {
    auto [it, added] = watched_.try_emplace(fd, events);
    if (!added && it->second == events) return;
    it->second = events;
    epoll_event event{};
    event.events = events;
    event.data.u64 = tag;
    CHECK_EQ(::epoll_ctl(epoll_, added ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event), 0)
        << "epoll_ctl: " << std::strerror(errno);
  }
  void forget(int fd) {
    if (watched_.erase(fd) > 0) (void)::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  }
  bool watching(int fd) const { return watched_.count(fd) > 0; }

  // Waits at most timeoutMs; `ready(tag)` for each socket with events.
  template <typename Ready>
  void wait(int timeoutMs, const Ready& ready) {
    std::array<epoll_event, 256> events;
    const int count =
        ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), timeoutMs);
    for (int i = 0; i < count; ++i) ready(events[static_cast<size_t>(i)].data.u64);
  }

 private:
  int epoll_;
  std::unordered_map<int, uint32_t> watched_;
};

// ---- Shared measurements -------------------------------------------------------------------

// Launches in flight between the framework thread and the agent thread.
struct Launches {
  std::mutex mutex;
  // Task id -> when the framework read the OFFERS event the task was launched on. Entered
  // before the ACCEPT is sent, so the agent can never see the RUN_TASK first.
  std::unordered_map<std::string, Clock::time_point> pending;
  std::vector<double> latencyMs;
  uint64_t unexpected = 0;  // RUN_TASKs for tasks nobody launched.
};

// ---- Agents --------------------------------------------------------------------------------

struct FakeAgent {
  std::string id;
  std::unique_ptr<RawStream> stream;
  uint64_t sequence = 0;
};

// The agent thread: reads every registration stream, runs tasks for their duration, reports.
class AgentSide {
 public:
  AgentSide(std::vector<FakeAgent>* agents, std::vector<std::unique_ptr<Pipeline>>* lines,
            Launches* launches, Problems* problems)
      : agents_(agents), lines_(lines), launches_(launches), problems_(problems) {}

  // Until `stop`, then until every call has been answered (bounded).
  void run(const std::atomic<bool>& stop) {
    Poller poller;
    const size_t agents = agents_->size();
    for (size_t i = 0; i < agents; ++i) poller.watch((*agents_)[i].stream->fd(), i, EPOLLIN);
    std::vector<std::string> records;
    std::optional<Clock::time_point> stopBy;
    while (true) {
      if (!stopBy && stop.load()) stopBy = Clock::now() + std::chrono::seconds(5);
      if (stopBy && (outstanding(*lines_) == 0 || Clock::now() > *stopBy)) break;
      for (size_t j = 0; j < lines_->size(); ++j) {
        const Pipeline& line = *(*lines_)[j];
        if (line.broken()) {
          poller.forget(line.fd());
        } else {
          poller.watch(line.fd(), agents + j, line.events());
        }
      }
      int waitMs = 10;
      if (!due_.empty()) {
        const auto until = due_.top().due - Clock::now();
        waitMs = static_cast<int>(std::clamp<int64_t>(
            std::chrono::duration_cast<std::chrono::milliseconds>(until).count(), 0, 10));
      }
      poller.wait(waitMs, [&](uint64_t tag) {
        if (tag >= agents) return (*lines_)[tag - agents]->pump();
        FakeAgent& agent = (*agents_)[tag];
        if (!poller.watching(agent.stream->fd())) return;
        const Clock::time_point readAt = Clock::now();
        records.clear();
        if (!agent.stream->readAvailable(&records)) {
          problems_->add("agent " + agent.id + ": " + agent.stream->error());
          poller.forget(agent.stream->fd());
        }
        for (const std::string& record : records) event(tag, record, readAt);
      });
      finishDue();
    }
    if (outstanding(*lines_) > 0) {
      problems_->add(std::to_string(outstanding(*lines_)) + " agent calls never answered");
    }
  }

 private:
  struct Due {
    Clock::time_point due;
    std::string key;  // framework/task
    friend bool operator>(const Due& a, const Due& b) { return a.due > b.due; }
  };
  struct Running {
    size_t agent;
    RunTask task;
  };

  void event(size_t index, const std::string& record, Clock::time_point readAt) {
    FakeAgent& agent = (*agents_)[index];
    v1::AgentEvent event;
    if (!event.ParseFromString(record)) {
      problems_->add("agent " + agent.id + ": an event that does not parse");
      return;
    }
    if (event.type() == v1::AgentEvent::RUN_TASK) {
      Result<RunTask> task = runTaskFromEvent(event);
      if (!task.ok()) {
        problems_->add("agent " + agent.id + ": " + task.message());
        return;
      }
      {
        std::lock_guard<std::mutex> lock(launches_->mutex);
        auto it = launches_->pending.find(task->task.task);
        if (it == launches_->pending.end()) {
          ++launches_->unexpected;
        } else {
          launches_->latencyMs.push_back(millisOf(readAt - it->second));
          launches_->pending.erase(it);
        }
      }
      report(index, *task, TaskState::kRunning);
      const std::string key = task->framework + "/" + task->task.task;
      due_.push({readAt + std::chrono::nanoseconds(task->task.duration), key});
      running_.emplace(key, Running{index, std::move(task).value()});
    } else if (event.type() == v1::AgentEvent::KILL_TASK) {
      // Nothing here kills tasks; answer as an agent would anyway.
      end(event.kill_task().framework_id().value() + "/" + event.kill_task().task_id().value(),
          TaskState::kKilled);
    }
  }

  void finishDue() {
    const Clock::time_point now = Clock::now();
    while (!due_.empty() && due_.top().due <= now) {
      const std::string key = due_.top().key;
      due_.pop();
      end(key, TaskState::kFinished);
    }
  }

  // A task's end: its final state, then its executor's resources.
  void end(const std::string& key, TaskState state) {
    auto it = running_.find(key);
    if (it == running_.end()) return;
    const Running task = std::move(it->second);
    running_.erase(it);
    report(task.agent, task.task, state);
    FakeAgent& agent = (*agents_)[task.agent];
    agent::Freed freed{};
    freed.executor = {task.task.framework, task.task.task.task};
    freed.role = task.task.role;
    freed.resources = task.task.task.resources;
    freed.revocability = Revocability::kRegular;
    freed.executorEnded = true;
    call(task.agent, freedCall(agent.id, ++agent.sequence, freed));
  }

  void report(size_t index, const RunTask& task, TaskState state) {
    FakeAgent& agent = (*agents_)[index];
    TaskStatus status;
    status.task = task.task.task;
    status.framework = task.framework;
    status.agent = agent.id;
    status.state = state;
    // The executor holds the task's resources until FREED says otherwise.
    call(index, statusCall(agent.id, ++agent.sequence, status, /*holdsResources=*/true));
  }

  // Always on the agent's own line: the master applies a sequence number only if it is newer
  // than the agent's last, so one agent's calls must not overtake each other.
  void call(size_t index, const v1::AgentCall& call) {
    (*lines_)[index % lines_->size()]->post(
        "/agent/v1/call", {{"Content-Type", kProtobuf}}, call.SerializeAsString(),
        (*agents_)[index].id + " " + v1::AgentCall::Type_Name(call.type()));
  }

  std::vector<FakeAgent>* agents_;
  std::vector<std::unique_ptr<Pipeline>>* lines_;
  Launches* launches_;
  Problems* problems_;
  std::map<std::string, Running> running_;  // framework/task -> the task.
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
};

// ---- Frameworks ----------------------------------------------------------------------------

struct PendingOffer {
  v1::Offer offer;
  Clock::time_point readAt;  // When the OFFERS event was read.
};

struct Framework {
  std::string name;
  std::unique_ptr<RawStream> stream;
  std::unique_ptr<Pipeline> calls;
  std::string id;
  std::string streamId;
  std::vector<PendingOffer> offers;
  std::vector<v1::TaskStatus> updates;  // To acknowledge.
};

struct Counts {
  uint64_t accepts = 0, declines = 0, acknowledges = 0;
  uint64_t offers = 0, offerEvents = 0, rescinds = 0, tooSmall = 0;
  uint64_t launched = 0, running = 0, finished = 0, failed = 0;
};

// The main thread's side: every framework's stream and calls.
class FrameworkSide {
 public:
  FrameworkSide(std::vector<Framework>* frameworks, Launches* launches, Problems* problems)
      : frameworks_(frameworks), launches_(launches), problems_(problems) {
    for (size_t i = 0; i < frameworks_->size(); ++i) {
      poller_.watch((*frameworks_)[i].stream->fd(), i, EPOLLIN);
    }
  }

  // Reads whatever arrives within timeoutMs and moves the calls along; the number of events.
  int read(int timeoutMs) {
    const size_t n = frameworks_->size();
    for (size_t i = 0; i < n; ++i) {
      const Pipeline& calls = *(*frameworks_)[i].calls;
      if (calls.broken()) {
        poller_.forget(calls.fd());
      } else {
        poller_.watch(calls.fd(), n + i, calls.events());
      }
    }
    int events = 0;
    std::vector<std::string> records;
    poller_.wait(timeoutMs, [&](uint64_t tag) {
      if (tag >= n) return (*frameworks_)[tag - n].calls->pump();
      Framework& framework = (*frameworks_)[tag];
      if (!poller_.watching(framework.stream->fd())) return;
      const Clock::time_point readAt = Clock::now();
      records.clear();
      if (!framework.stream->readAvailable(&records)) {
        problems_->add("framework " + framework.name + ": " + framework.stream->error());
        poller_.forget(framework.stream->fd());
      }
      for (const std::string& record : records) {
        ++events;
        event(framework, record, readAt);
      }
    });
    return events;
  }

  size_t pendingOffers() const {
    size_t n = 0;
    for (const Framework& framework : *frameworks_) n += framework.offers.size();
    return n;
  }
  size_t subscribed() const { return subscribed_; }
  size_t outstandingCalls() const {
    size_t n = 0;
    for (const Framework& framework : *frameworks_) n += framework.calls->outstanding();
    return n;
  }
  uint64_t answeredCalls() const {
    uint64_t n = 0;
    for (const Framework& framework : *frameworks_) n += framework.calls->answered();
    return n;
  }
  const Counts& counts() const { return counts_; }

  // Answers every pending offer: ACCEPT launching one task on every other offer, DECLINE
  // (refuse_seconds 0) for the rest.
  void answerOffers() {
    for (Framework& framework : *frameworks_) {
      for (const PendingOffer& pending : framework.offers) {
        if (launchNext_) {
          accept(framework, pending);
        } else {
          decline(framework, pending.offer);
        }
        launchNext_ = !launchNext_;
      }
      framework.offers.clear();
    }
  }

  void acknowledgeUpdates() {
    for (Framework& framework : *frameworks_) {
      for (const v1::TaskStatus& status : framework.updates) acknowledge(framework, status);
      framework.updates.clear();
    }
  }

 private:
  void event(Framework& framework, const std::string& record, Clock::time_point readAt) {
    Event event;
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = true;
    if (!google::protobuf::util::JsonStringToMessage(record, &event, options).ok()) {
      problems_->add("framework " + framework.name + ": an event that is not JSON");
      return;
    }
    switch (event.type()) {
      case Event::SUBSCRIBED: {
        framework.id = event.subscribed().framework_id().value();
        const std::string* streamId = framework.stream->head()
                                          ? framework.stream->head()->header("mesos-stream-id")
                                          : nullptr;
        if (streamId == nullptr) {
          problems_->add("framework " + framework.name + ": no Mesos-Stream-Id");
        } else {
          framework.streamId = *streamId;
        }
        ++subscribed_;
        break;
      }
      case Event::OFFERS:
        ++counts_.offerEvents;
        for (const v1::Offer& offer : event.offers().offers()) {
          ++counts_.offers;
          framework.offers.push_back({offer, readAt});
        }
        break;
      case Event::RESCIND: {
        ++counts_.rescinds;
        std::vector<PendingOffer>& offers = framework.offers;
        offers.erase(std::remove_if(offers.begin(), offers.end(),
                                    [&](const PendingOffer& pending) {
                                      return pending.offer.id().value() ==
                                             event.rescind().offer_id().value();
                                    }),
                     offers.end());
        break;
      }
      case Event::UPDATE: {
        const v1::TaskStatus& status = event.update().status();
        if (status.state() == v1::TASK_RUNNING) {
          ++counts_.running;
        } else if (status.state() == v1::TASK_FINISHED) {
          ++counts_.finished;
        } else {
          ++counts_.failed;
          problems_->add("task " + status.task_id().value() + " of " + framework.name + ": " +
                         v1::TaskState_Name(status.state()) + " " + status.message());
        }
        framework.updates.push_back(status);
        break;
      }
      case Event::ERROR:
        problems_->add("framework " + framework.name + ": ERROR " + event.error().message());
        break;
      default:
        break;  // HEARTBEAT; nothing else is sent to these frameworks.
    }
  }

  void accept(Framework& framework, const PendingOffer& pending) {
    const v1::Offer& offer = pending.offer;
    Result<Resources> offered = fromProto(offer.resources());
    if (!offered.ok() || !offered->contains(task_)) {
      ++counts_.tooSmall;
      decline(framework, offer);
      return;
    }
    const std::string taskId = "t-" + framework.id + "-" + std::to_string(++taskCounter_);
    Call call;
    call.set_type(Call::ACCEPT);
    call.mutable_framework_id()->set_value(framework.id);
    *call.mutable_accept()->add_offer_ids() = offer.id();
    v1::Offer::Operation& operation = *call.mutable_accept()->add_operations();
    operation.set_type(v1::Offer::Operation::LAUNCH);
    v1::TaskInfo& task = *operation.mutable_launch()->add_task_infos();
    task.set_name(taskId);
    task.mutable_task_id()->set_value(taskId);
    *task.mutable_agent_id() = offer.agent_id();
    *task.mutable_resources() = toProto(task_);
    v1::Label& duration = *task.mutable_labels()->add_labels();
    duration.set_key(std::string(kDurationLabel));
    duration.set_value(std::to_string(kTaskSeconds));
    // The rest of the offer may be offered again at the next cycle, as with the declines.
    call.mutable_accept()->mutable_filters()->set_refuse_seconds(0);
    {
      std::lock_guard<std::mutex> lock(launches_->mutex);
      launches_->pending.emplace(taskId, pending.readAt);
    }
    ++counts_.accepts;
    ++counts_.launched;
    send(framework, call, "ACCEPT");
  }

  void decline(Framework& framework, const v1::Offer& offer) {
    Call call;
    call.set_type(Call::DECLINE);
    call.mutable_framework_id()->set_value(framework.id);
    *call.mutable_decline()->add_offer_ids() = offer.id();
    call.mutable_decline()->mutable_filters()->set_refuse_seconds(0);
    ++counts_.declines;
    send(framework, call, "DECLINE");
  }

  void acknowledge(Framework& framework, const v1::TaskStatus& status) {
    Call call;
    call.set_type(Call::ACKNOWLEDGE);
    call.mutable_framework_id()->set_value(framework.id);
    *call.mutable_acknowledge()->mutable_agent_id() = status.agent_id();
    *call.mutable_acknowledge()->mutable_task_id() = status.task_id();
    // Updates here carry no uuid; the call needs one of 16 bytes.
    call.mutable_acknowledge()->set_uuid(std::string(16, '\x2a'));
    ++counts_.acknowledges;
    send(framework, call, "ACKNOWLEDGE");
  }

  void send(Framework& framework, const Call& call, const char* what) {
    framework.calls->post("/api/v1/scheduler",
                          {{"Content-Type", kJson}, {"Mesos-Stream-Id", framework.streamId}},
                          toJson(call), std::string(what) + " of " + framework.name);
  }

  std::vector<Framework>* frameworks_;
  Launches* launches_;
  Problems* problems_;
  Poller poller_;  // Tags: the streams' indexes, then the call connections' (+ n).
  Resources task_ = resourcesFrom(kTaskResources);
  bool launchNext_ = true;
  uint64_t taskCounter_ = 0;
  size_t subscribed_ = 0;
  Counts counts_;
};

// ---- Setup and reporting helpers -----------------------------------------------------------

Result<std::map<std::string, double>> fetchMetrics(const std::string& host, uint16_t port) {
  using Out = Result<std::map<std::string, double>>;
  Result<http::Connection> connection = http::Connection::connect(host, port, kConnectTimeoutMs);
  if (!connection.ok()) return connection.status();
  http::Connection open = std::move(connection).value();
  Result<http::ClientResponse> response = open.request("GET", "/metrics/snapshot", {}, {}, 10'000);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return Out::error("/metrics/snapshot: HTTP " + std::to_string(response->status));
  }
  google::protobuf::Struct parsed;
  if (!google::protobuf::util::JsonStringToMessage(response->body, &parsed).ok()) {
    return Out::error("/metrics/snapshot is not JSON");
  }
  std::map<std::string, double> out;
  for (const auto& [key, value] : parsed.fields()) out[key] = value.number_value();
  return out;
}

// kB from a "Name:   123 kB" line of /proc/self/status; 0 if absent.
uint64_t procStatusKb(const std::string& name) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ":", 0) == 0) {
      return std::strtoull(line.c_str() + name.size() + 1, nullptr, 10);
    }
  }
  return 0;
}

// Room for `needed` descriptors (both ends of every connection when the master runs here).
Status raiseFileLimit(uint64_t needed) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return Status();
  if (limit.rlim_cur >= needed) return Status();
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, needed);
  (void)::setrlimit(RLIMIT_NOFILE, &limit);
  (void)::getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < needed) {
    return Status::error("needs " + std::to_string(needed) + " file descriptors; the limit is " +
                         std::to_string(limit.rlim_cur));
  }
  return Status();
}

int usage(const char* problem) {
  if (problem != nullptr) std::fprintf(stderr, "harvest-loadtest: %s\n", problem);
  std::fprintf(stderr,
               "usage: harvest-loadtest [--agents=N] [--frameworks=N] [--rounds=N] "
               "[--master=HOST:PORT] [--allocation_interval=SECONDS] [--json=PATH]\n");
  return 2;
}

bool parsePositive(const char* text, int* out) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || value < 1 || value > 1'000'000) return false;
  *out = static_cast<int>(value);
  return true;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "harvest-loadtest: %s\n", message.c_str());
  return 1;
}

// Stops a thread (sets its flag, joins it) on every way out of run().
struct Joiner {
  std::atomic<bool>& stop;
  std::thread& thread;
  ~Joiner() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
};

// ---- The run -------------------------------------------------------------------------------

int run(const Options& options) {
  Problems problems;
  const Clock::time_point started = Clock::now();
  const uint64_t connections = static_cast<uint64_t>(options.agents) +
                               2 * static_cast<uint64_t>(options.frameworks) + kAgentLines + 16;

  // The master: in-process on an ephemeral port, or the one named.
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::unique_ptr<NetworkMaster> master;
  if (options.master.empty()) {
    if (Status s = raiseFileLimit(2 * connections + 64); !s.ok()) return fail(s.message());
    NetworkOptions network;
    network.port = 0;
    network.maxConnections = std::max<size_t>(network.maxConnections, connections);
    MasterOptions masterOptions;
    masterOptions.allocationInterval =
        static_cast<TimeNanos>(options.allocationInterval * static_cast<double>(kSecond));
    // Freed resources are offered again soon, not only at the next full cycle.
    masterOptions.eventBatchDelay =
        std::min<TimeNanos>(20 * kMillisecond, masterOptions.allocationInterval);
    Result<std::unique_ptr<NetworkMaster>> startedMaster =
        NetworkMaster::start(network, masterOptions);
    if (!startedMaster.ok()) return fail(startedMaster.message());
    master = std::move(startedMaster).value();
    port = master->port();
  } else {
    const size_t colon = options.master.rfind(':');
    int parsed = 0;
    if (colon == std::string::npos || colon == 0 ||
        !parsePositive(options.master.c_str() + colon + 1, &parsed) || parsed > 65535) {
      return usage("bad value for --master (HOST:PORT)");
    }
    host = options.master.substr(0, colon);
    port = static_cast<uint16_t>(parsed);
    if (Status s = raiseFileLimit(connections + 64); !s.ok()) return fail(s.message());
  }
  std::atomic<bool> stopMaster{false};
  std::thread masterThread;
  if (master) masterThread = std::thread([&] { master->run(stopMaster); });
  Joiner joinMaster{stopMaster, masterThread};
  const uint64_t rssBeforeKb = procStatusKb("VmRSS");

  // Agents: every registration is sent before any answer is read.
  const Clock::time_point agentsStart = Clock::now();
  std::vector<FakeAgent> agents(static_cast<size_t>(options.agents));
  const Resources agentTotal = resourcesFrom(kAgentResources);
  Poller registrations;
  for (size_t i = 0; i < agents.size(); ++i) {
    FakeAgent& agent = agents[i];
    agent.id = "agent-" + std::to_string(i);
    AgentRegistration registration;
    registration.id = agent.id;
    registration.bootId = "loadtest";
    registration.total = agentTotal;
    Result<std::unique_ptr<RawStream>> stream =
        RawStream::open(host, port, "/agent/v1/register", kProtobuf,
                        registerCall(registration).SerializeAsString());
    if (!stream.ok()) return fail("agent " + agent.id + ": " + stream.message());
    agent.stream = std::move(stream).value();
    registrations.watch(agent.stream->fd(), i, EPOLLIN);
  }
  // REGISTERED first; only HEARTBEATs may follow before any framework exists.
  size_t registered = 0;
  std::vector<bool> isRegistered(agents.size(), false);
  std::vector<std::string> records;
  while (registered < agents.size() && problems.count() == 0) {
    if (Clock::now() - agentsStart > kSetupTimeout) {
      return fail(std::to_string(agents.size() - registered) + " agents got no REGISTERED");
    }
    registrations.wait(100, [&](uint64_t i) {
      if (!registrations.watching(agents[i].stream->fd())) return;
      records.clear();
      if (!agents[i].stream->readAvailable(&records)) {
        problems.add(agents[i].id + ": " + agents[i].stream->error());
        registrations.forget(agents[i].stream->fd());
      }
      for (const std::string& record : records) {
        v1::AgentEvent event;
        if (!event.ParseFromString(record)) {
          problems.add(agents[i].id + ": an event that does not parse");
        } else if (event.type() == v1::AgentEvent::REGISTERED && !isRegistered[i]) {
          isRegistered[i] = true;
          ++registered;
          // Done with this one until the agent thread takes over.
          registrations.forget(agents[i].stream->fd());
        } else if (event.type() != v1::AgentEvent::HEARTBEAT) {
          problems.add(agents[i].id + ": " + v1::AgentEvent::Type_Name(event.type()) +
                       " before any framework subscribed");
        }
      }
    });
  }
  if (problems.count() > 0) return 1;
  const Clock::duration agentsTook = Clock::now() - agentsStart;

  // The agents' call connections.
  std::vector<std::unique_ptr<Pipeline>> agentLines;
  for (size_t i = 0; i < std::min<size_t>(kAgentLines, agents.size()); ++i) {
    Result<std::unique_ptr<Pipeline>> line = Pipeline::open(host, port, &problems);
    if (!line.ok()) return fail(line.message());
    agentLines.push_back(std::move(line).value());
  }

  // Frameworks subscribe (JSON), all at once too, each with a call connection of its own.
  // Offers may come right after SUBSCRIBED: the frameworks' reader takes both.
  const Clock::time_point frameworksStart = Clock::now();
  std::vector<Framework> frameworks(static_cast<size_t>(options.frameworks));
  for (size_t i = 0; i < frameworks.size(); ++i) {
    Framework& framework = frameworks[i];
    framework.name = "load-" + std::to_string(i);
    Call call;
    call.set_type(Call::SUBSCRIBE);
    v1::FrameworkInfo& info = *call.mutable_subscribe()->mutable_framework_info();
    info.set_user("loadtest");
    info.set_name(framework.name);
    info.add_roles("role-" + std::to_string(i % kRoles));
    Result<std::unique_ptr<RawStream>> stream =
        RawStream::open(host, port, "/api/v1/scheduler", kJson, toJson(call));
    if (!stream.ok()) return fail("framework " + framework.name + ": " + stream.message());
    framework.stream = std::move(stream).value();
    Result<std::unique_ptr<Pipeline>> line = Pipeline::open(host, port, &problems);
    if (!line.ok()) return fail(line.message());
    framework.calls = std::move(line).value();
  }
  Launches launches;
  FrameworkSide frameworkSide(&frameworks, &launches, &problems);
  while (frameworkSide.subscribed() < frameworks.size() && problems.count() == 0) {
    if (Clock::now() - frameworksStart > kSetupTimeout) {
      return fail(std::to_string(frameworks.size() - frameworkSide.subscribed()) +
                  " frameworks got no SUBSCRIBED");
    }
    frameworkSide.read(100);
  }
  if (problems.count() > 0) return 1;
  const Clock::duration frameworksTook = Clock::now() - frameworksStart;

  Result<std::map<std::string, double>> metricsBefore = fetchMetrics(host, port);
  if (!metricsBefore.ok()) return fail(metricsBefore.message());

  // The agent thread from here on; the main thread plays the frameworks.
  AgentSide agentSide(&agents, &agentLines, &launches, &problems);
  std::atomic<bool> stopAgents{false};
  std::thread agentThread([&] { agentSide.run(stopAgents); });
  Joiner joinAgents{stopAgents, agentThread};

  const Clock::time_point roundsStart = Clock::now();
  int roundsRun = 0;
  for (int round = 0; round < options.rounds && problems.count() == 0; ++round) {
    const Clock::time_point roundStart = Clock::now();
    Clock::time_point lastEvent = roundStart;
    while (true) {
      if (frameworkSide.read(2) > 0) lastEvent = Clock::now();
      const Clock::time_point now = Clock::now();
      if (frameworkSide.pendingOffers() > 0 && now - lastEvent >= kQuiet) break;
      if (now - roundStart > kRoundTimeout) {
        problems.add("round " + std::to_string(round + 1) + ": no offers within " +
                     std::to_string(kRoundTimeout.count()) + " s");
        break;
      }
    }
    frameworkSide.answerOffers();
    frameworkSide.acknowledgeUpdates();
    ++roundsRun;
  }
  const Clock::time_point roundsEnd = Clock::now();
  const uint64_t callsInRounds = frameworkSide.answeredCalls();

  // Drain: every launched task reaches its agent, finishes, and is acknowledged, and every
  // call is answered.
  while (problems.count() == 0 && Clock::now() - roundsEnd < kDrainTimeout) {
    frameworkSide.read(5);
    frameworkSide.acknowledgeUpdates();
    const Counts& counts = frameworkSide.counts();
    if (counts.finished + counts.failed >= counts.launched &&
        frameworkSide.outstandingCalls() == 0) {
      break;
    }
  }
  const Clock::time_point ended = Clock::now();
  stopAgents = true;
  agentThread.join();

  const Counts& counts = frameworkSide.counts();
  if (frameworkSide.outstandingCalls() > 0) {
    problems.add(std::to_string(frameworkSide.outstandingCalls()) +
                 " scheduler calls never answered");
  }
  std::vector<double> latencies;
  {
    std::lock_guard<std::mutex> lock(launches.mutex);
    if (!launches.pending.empty()) {
      problems.add(std::to_string(launches.pending.size()) +
                   " launches never reached their agent (RUN_TASK)");
    }
    if (launches.unexpected > 0) {
      problems.add(std::to_string(launches.unexpected) + " RUN_TASKs nobody launched");
    }
    latencies = launches.latencyMs;
  }
  std::sort(latencies.begin(), latencies.end());
  if (counts.running != counts.launched || counts.finished != counts.launched) {
    problems.add(std::to_string(counts.launched) + " tasks launched, " +
                 std::to_string(counts.running) + " reported running, " +
                 std::to_string(counts.finished) + " finished");
  }

  // The master's counters must agree with what the clients saw.
  std::map<std::string, double> after;
  if (Result<std::map<std::string, double>> fetched = fetchMetrics(host, port); !fetched.ok()) {
    problems.add(fetched.message());
  } else {
    after = *fetched;
    auto delta = [&](const std::string& key) {
      auto before = metricsBefore->find(key);
      return after[key] - (before == metricsBefore->end() ? 0 : before->second);
    };
    const std::vector<std::pair<std::string, uint64_t>> expected = {
        {"master/tasks_launched", counts.launched},
        {"master/tasks_finished", counts.finished},
        {"master/tasks_lost", 0},
        {"master/offers_accepted", counts.launched},
        {"master/offers_declined", counts.declines}};
    for (const auto& [key, value] : expected) {
      if (delta(key) != static_cast<double>(value)) {
        problems.add(key + " went up by " + std::to_string(delta(key)) + ", expected " +
                     std::to_string(value));
      }
    }
  }
  const uint64_t rssKb = master ? procStatusKb("VmRSS") : 0;
  const uint64_t peakKb = master ? procStatusKb("VmHWM") : 0;
  // The master stops before the clients' sockets close, or it would log every agent leaving.
  stopMaster = true;
  if (masterThread.joinable()) masterThread.join();

  // The summary.
  std::vector<double> roundTrips;
  for (const Framework& framework : frameworks) {
    const std::vector<double>& some = framework.calls->roundTripsMs();
    roundTrips.insert(roundTrips.end(), some.begin(), some.end());
  }
  std::sort(roundTrips.begin(), roundTrips.end());
  const uint64_t schedulerCalls = frameworks.size() + frameworkSide.answeredCalls();
  const uint64_t agentCalls = answered(agentLines);
  const double runSeconds = secondsOf(ended - frameworksStart);
  const double roundsSeconds = secondsOf(roundsEnd - roundsStart);
  const double callsPerSecond = static_cast<double>(schedulerCalls) / runSeconds;
  const double callsPerSecondInRounds =
      roundsSeconds > 0 ? static_cast<double>(callsInRounds) / roundsSeconds : 0.0;
  const double p50 = percentile(latencies, 0.50);
  const double p99 = percentile(latencies, 0.99);
  const double maxLatency = latencies.empty() ? 0 : latencies.back();
  const bool ok = problems.count() == 0;
  auto u = [](uint64_t value) { return static_cast<unsigned long long>(value); };
  std::printf(
      "harvest-loadtest: %d agents (%s), %d frameworks in %d roles, %d rounds, master %s "
      "%s:%u\n",
      options.agents, kAgentResources, options.frameworks, std::min(kRoles, options.frameworks),
      roundsRun, master ? "in-process on" : "at", host.c_str(), static_cast<unsigned>(port));
  std::printf(
      "  setup          %d agents registered in %.0f ms, %d frameworks subscribed in "
      "%.0f ms\n",
      options.agents, millisOf(agentsTook), options.frameworks, millisOf(frameworksTook));
  std::printf("  wall time      %.2f s (rounds %.2f s, drain %.2f s)\n", secondsOf(ended - started),
              roundsSeconds, secondsOf(ended - roundsEnd));
  std::printf(
      "  scheduler      %llu calls (%zu SUBSCRIBE, %llu ACCEPT, %llu DECLINE, %llu "
      "ACKNOWLEDGE)\n",
      u(schedulerCalls), frameworks.size(), u(counts.accepts), u(counts.declines),
      u(counts.acknowledges));
  std::printf(
      "  calls/s        %.0f over the %.2f s from SUBSCRIBE to drained; %.0f during the "
      "rounds\n",
      callsPerSecond, runSeconds, callsPerSecondInRounds);
  std::printf("  call latency   p50 %.2f ms, p99 %.2f ms (sent to answered, pipelined)\n",
              percentile(roundTrips, 0.5), percentile(roundTrips, 0.99));
  std::printf("  agent calls    %llu (STATUS, FREED): %.0f calls/s\n", u(agentCalls),
              static_cast<double>(agentCalls) / secondsOf(ended - roundsStart));
  std::printf("  offers         %llu in %llu events; %llu rescinded; %llu too small to launch on\n",
              u(counts.offers), u(counts.offerEvents), u(counts.rescinds), u(counts.tooSmall));
  std::printf("  tasks          %llu launched, %llu running, %llu finished, %llu failed\n",
              u(counts.launched), u(counts.running), u(counts.finished), u(counts.failed));
  std::printf("  offer->launch  %zu samples: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
              latencies.size(), p50, p99, maxLatency);
  if (!after.empty()) {
    std::printf("  allocator      %.0f runs (full + triggered); run p50 %.2f ms, p99 %.2f ms\n",
                after["allocator/harvest/allocation_runs"],
                after["allocator/harvest/allocation_run_ms/p50"],
                after["allocator/harvest/allocation_run_ms/p99"]);
  }
  if (master) {
    std::printf(
        "  memory         RSS %.1f MiB (peak %.1f MiB; %.1f MiB before any client), "
        "master and clients in one process\n",
        static_cast<double>(rssKb) / 1024, static_cast<double>(peakKb) / 1024,
        static_cast<double>(rssBeforeKb) / 1024);
  }
  const std::string result =
      ok ? "OK"
         : "FAILED: " + std::to_string(problems.count()) + " problems; first: " + problems.first();
  std::printf("  result         %s\n", result.c_str());

  if (!options.json.empty()) {
    std::ostringstream json;
    json << "{\"agents\":" << options.agents << ",\"frameworks\":" << options.frameworks
         << ",\"rounds\":" << roundsRun << ",\"in_process\":" << (master ? "true" : "false")
         << ",\"wall_seconds\":" << secondsOf(ended - started)
         << ",\"scheduler_calls\":" << schedulerCalls
         << ",\"scheduler_calls_per_second\":" << callsPerSecond
         << ",\"scheduler_calls_per_second_in_rounds\":" << callsPerSecondInRounds
         << ",\"call_latency_ms\":{\"p50\":" << percentile(roundTrips, 0.5)
         << ",\"p99\":" << percentile(roundTrips, 0.99) << "}"
         << ",\"agent_calls\":" << agentCalls << ",\"accepts\":" << counts.accepts
         << ",\"declines\":" << counts.declines << ",\"acknowledges\":" << counts.acknowledges
         << ",\"offers\":" << counts.offers << ",\"tasks_launched\":" << counts.launched
         << ",\"tasks_finished\":" << counts.finished
         << ",\"offer_to_launch_ms\":{\"samples\":" << latencies.size() << ",\"p50\":" << p50
         << ",\"p99\":" << p99 << ",\"max\":" << maxLatency << "}"
         << ",\"rss_kb\":" << rssKb << ",\"peak_rss_kb\":" << peakKb
         << ",\"problems\":" << problems.count() << ",\"ok\":" << (ok ? "true" : "false") << "}\n";
    std::ofstream out(options.json);
    out << json.str();
    if (!out) return fail("cannot write " + options.json);
  }
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace harvest::master

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = 1;  // The master's per-agent INFO lines would drown the summary.
  google::InitGoogleLogging(argv[0]);
  harvest::master::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&arg](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? arg.c_str() + n : nullptr;
    };
    if (arg == "--help" || arg == "-h") {
      harvest::master::usage(nullptr);
      return 0;
    } else if (const char* v = value("--agents=")) {
      if (!harvest::master::parsePositive(v, &options.agents)) {
        return harvest::master::usage("bad value for --agents");
      }
    } else if (const char* v = value("--frameworks=")) {
      if (!harvest::master::parsePositive(v, &options.frameworks)) {
        return harvest::master::usage("bad value for --frameworks");
      }
    } else if (const char* v = value("--rounds=")) {
      if (!harvest::master::parsePositive(v, &options.rounds)) {
        return harvest::master::usage("bad value for --rounds");
      }
    } else if (const char* v = value("--allocation_interval=")) {
      char* end = nullptr;
      options.allocationInterval = std::strtod(v, &end);
      if (*v == '\0' || *end != '\0' || !(options.allocationInterval >= 0.001) ||
          options.allocationInterval > 60) {
        return harvest::master::usage("bad value for --allocation_interval (0.001..60 seconds)");
      }
    } else if (const char* v = value("--master=")) {
      options.master = v;
    } else if (const char* v = value("--json=")) {
      options.json = v;
    } else {
      return harvest::master::usage(("unknown argument '" + arg + "'").c_str());
    }
  }
  return harvest::master::run(options);
}
