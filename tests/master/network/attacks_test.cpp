// The attacks of issue 14, each over HTTP in the shape it was made against a live master with
// credentials and ACLs: every one is refused with its status, and /state does not change.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "protos/master_api.pb.h"
#include "testing/cluster.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.

constexpr const char* kCredentials =
    "web secret-w\nbatch secret-b\nagent-a secret-a\nagent-b secret-ab\n";
constexpr const char* kAcls = R"({"permissive": false,
    "register_frameworks": [{"principal": "web", "roles": ["web"]},
                            {"principal": "batch", "roles": ["batch"]}],
    "register_agents": [{"principal": "agent-a", "agent_ids": ["a1"]},
                        {"principal": "agent-b", "agent_ids": ["a2"]}]})";

// A master with credentials and ACLs; agent a1 (principal agent-a, part of it reserved to
// web) runs task t1 of framework web, which declined the rest of a1 for 100 s: nothing
// changes in /state unless someone changes it.
struct Secured {
  Secured()
      : credentials("credentials", kCredentials),
        acls("acls", kAcls),
        master(options()),
        a1(master.port(), "a1", "cpus:4;mem:4096;cpus(web):2;mem(web):1024", auth("agent-a")),
        web(master.port(), Format::kJson, auth("web")) {
    EXPECT_EQ(a1.registerAgent(), 200);
    EXPECT_EQ(web.subscribe(frameworkInfo("web")), 200);
    const v1::Offer offer = web.offer();
    EXPECT_EQ(
        web.call(acceptCall(offer, {launch({taskInfo("t1", "a1", "cpus:1;mem:128")})}, 100)).status,
        202);
    std::optional<RunTask> run = a1.expectRunTask();
    EXPECT_TRUE(run.has_value());
    if (run) t1 = *run;
    EXPECT_EQ(a1.status(t1, TaskState::kRunning), 202);
    EXPECT_EQ(web.update().state(), v1::TASK_RUNNING);
  }
  ~Secured() { master.stop(); }

  NetworkOptions options() const {
    NetworkOptions network;
    network.credentialsPath = credentials.path();
    network.aclsPath = acls.path();
    return network;
  }
  static http::Headers auth(const std::string& principal) {
    const std::map<std::string, std::string> secrets = {{"web", "secret-w"},
                                                        {"batch", "secret-b"},
                                                        {"agent-a", "secret-a"},
                                                        {"agent-b", "secret-ab"}};
    return basicAuth(principal, secrets.at(principal));
  }
  // /state after a few allocation cycles: whatever an accepted attack would change (offers
  // of freed resources, tasks) has shown by then.
  std::string settledState() {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const http::ClientResponse answer = request(master.port(), "GET", "/state", auth("web"));
    EXPECT_EQ(answer.status, 200);
    return answer.body;
  }
  double metric(const std::string& name) { return metrics(master.port(), auth("web")).at(name); }

  TempFile credentials;
  TempFile acls;
  MasterThread master;
  FakeAgent a1;
  FrameworkClient web;
  RunTask t1;
};

Call updateFramework(const std::string& id, v1::FrameworkInfo info) {
  Call update;
  update.set_type(Call::UPDATE_FRAMEWORK);
  info.mutable_id()->set_value(id);
  *update.mutable_update_framework()->mutable_framework_info() = info;
  return update;
}

TaskStatus statusOf(const RunTask& task, const std::string& agent, TaskState state) {
  return TaskStatus{task.task.task, task.framework, agent, state, "", "", Time()};
}

TEST(AttackTest, TheDeprecatedRoleFieldIsAuthorizedOnUpdateAndSubscribe) {
  Secured s;
  FrameworkClient batch(s.master.port(), Format::kJson, Secured::auth("batch"));
  ASSERT_EQ(batch.subscribe(frameworkInfo("batch")), 200);
  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(batch, &offers), R("cpus:3;mem:3968"));  // Held, unanswered.
  const std::string before = s.settledState();

  // The allocator reads `role` when `roles` is empty: web's reservation was offered to batch.
  v1::FrameworkInfo singular = frameworkInfo("batch");
  singular.clear_roles();
  singular.set_role("web");
  http::ClientResponse answer = batch.call(updateFramework(batch.id(), singular));
  EXPECT_EQ(answer.status, 403);
  EXPECT_EQ(answer.body, "principal 'batch' may not use role 'web'");
  v1::FrameworkInfo both = frameworkInfo("batch");
  both.set_role("web");
  EXPECT_EQ(batch.call(updateFramework(batch.id(), both)).status, 403);
  FrameworkClient second(s.master.port(), Format::kJson, Secured::auth("batch"));
  EXPECT_EQ(second.subscribe(singular), 403);
  // No role at all is the default role "*", which batch may not use either.
  v1::FrameworkInfo none = frameworkInfo("batch");
  none.clear_roles();
  EXPECT_EQ(second.subscribe(none), 403);

  EXPECT_EQ(s.settledState(), before);
  EXPECT_EQ(s.metric("master/http/refused_403"), 4);
}

TEST(AttackTest, AFrameworksPrincipalCannotChangeOrBeWiped) {
  Secured s;
  const std::string before = s.settledState();
  const std::string id = s.web.id();
  for (const std::string& principal : {std::string("batch"), std::string()}) {
    v1::FrameworkInfo info = frameworkInfo("web");
    info.set_principal(principal);
    const http::ClientResponse answer = s.web.call(updateFramework(id, info));
    EXPECT_EQ(answer.status, 403);
    EXPECT_EQ(answer.body, "the principal of framework '" + id + "' cannot change ('web' to '" +
                               principal + "')");
  }
  EXPECT_EQ(s.settledState(), before);
  // An update naming no principal keeps its own: still allowed, and still web's.
  ASSERT_EQ(s.web.call(updateFramework(id, frameworkInfo("web", "renamed"))).status, 200);
  std::optional<Struct> listed = frameworkInState(s.master.port(), id, Secured::auth("web"));
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(field(*listed, "principal"), "web");
  EXPECT_EQ(field(*listed, "name"), "renamed");
}

TEST(AttackTest, OnlyAllowedPrincipalsRegisterAnAgentId) {
  Secured s;
  const std::string before = s.settledState();
  // A framework's principal, and another agent's, claim a1 with 1000 cpus.
  for (const char* principal : {"web", "agent-b"}) {
    FakeAgent impostor(s.master.port(), "a1", "cpus:1000;mem:1000000", Secured::auth(principal));
    EXPECT_EQ(impostor.registerAgent(), 403) << principal;
  }
  EXPECT_EQ(s.settledState(), before);
  EXPECT_EQ(s.metric("master/agents/registrations_refused"), 2);
  // a1 still runs t1 as far as the master knows: a KILL reaches it.
  Call kill;
  kill.set_type(Call::KILL);
  kill.mutable_kill()->mutable_task_id()->set_value("t1");
  ASSERT_EQ(s.web.call(kill).status, 202);
  std::optional<v1::AgentEvent::Kill> killed = s.a1.expectKillTask();
  ASSERT_TRUE(killed.has_value());
  EXPECT_EQ(killed->task_id().value(), "t1");
}

TEST(AttackTest, AnAgentCannotFreeOrFinishAnotherAgentsTask) {
  Secured s;
  FakeAgent a2(s.master.port(), "a2", "cpus:4;mem:4096", Secured::auth("agent-b"));
  ASSERT_EQ(a2.registerAgent(), 200);
  std::vector<v1::Offer> offers;
  EXPECT_EQ(nextOffered(s.web, &offers), R("cpus:4;mem:4096"));  // Held, unanswered.
  const std::string before = s.settledState();

  // FREED would re-offer t1's resources while it runs; FINISHED would end it at the master.
  int answer = a2.freed(s.t1);
  EXPECT_EQ(answer, 403);
  EXPECT_EQ(a2.status(s.t1, TaskState::kFinished), 403);
  // Naming a1 from a2's registration and principal.
  v1::AgentCall asA1 =
      agent::statusCall("a1", a2.nextSequence(), statusOf(s.t1, "a1", TaskState::kFinished), false);
  EXPECT_EQ(a2.post(asA1), 403);

  EXPECT_EQ(s.settledState(), before);
  EXPECT_FALSE(s.web.next(Duration::milliseconds(100)).has_value());  // No update, no offer.
  EXPECT_EQ(s.metric("master/agents/calls_refused"), 3);
  // a1's own report of the end is accepted, once.
  EXPECT_EQ(s.a1.status(s.t1, TaskState::kFinished), 202);
  EXPECT_EQ(s.web.update().state(), v1::TASK_FINISHED);
  EXPECT_EQ(s.a1.freed(s.t1), 202);
  EXPECT_EQ(s.a1.freed(s.t1), 403);  // Freed already: no second recovery.
}

TEST(AttackTest, ASequenceOf2To64Minus1DoesNotSwallowLaterCalls) {
  Secured s;
  const std::string before = s.settledState();
  v1::AgentCall poison = agent::statusCall("a1", std::numeric_limits<uint64_t>::max(),
                                           statusOf(s.t1, "a1", TaskState::kFinished), false);
  EXPECT_EQ(s.a1.post(poison), 400);
  v1::AgentCall stale = agent::statusCall("a1", s.a1.nextSequence(),
                                          statusOf(s.t1, "a1", TaskState::kFinished), false);
  stale.set_registration_id("an-earlier-registration");
  EXPECT_EQ(s.a1.post(stale), 409);
  EXPECT_EQ(s.settledState(), before);

  // The real next call is applied, not taken for a retry of the poisoned one.
  EXPECT_EQ(s.a1.status(s.t1, TaskState::kFinished), 202);
  EXPECT_EQ(s.web.update().state(), v1::TASK_FINISHED);
  std::vector<Struct> tasks = testkit::tasks(state(s.master.port(), Secured::auth("web")));
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(field(tasks[0], "state"), "TASK_FINISHED");
}

TEST(AttackTest, ARefusedRegistrationLeavesNoPhantomTasks) {
  Secured s;
  const std::string before = s.settledState();
  // Beyond its total: the allocator would refuse it after the tasks were written.
  FakeAgent a2(s.master.port(), "a2", "cpus:4;mem:4096", Secured::auth("agent-b"));
  AgentRegistration greedy = a2.registration();
  greedy.tasks.push_back(
      {s.t1.framework, "web", "ghost", R("cpus:8;mem:128"), TaskState::kRunning});
  EXPECT_EQ(a2.registerAgent(greedy), 400);
  // Naming t1, which runs on a1: taking it over would send KILL and RECONCILE astray.
  FakeAgent thief(s.master.port(), "a2", "cpus:4;mem:4096", Secured::auth("agent-b"));
  AgentRegistration stealing = thief.registration();
  stealing.tasks.push_back({s.t1.framework, "web", "t1", R("cpus:1;mem:128"), TaskState::kRunning});
  EXPECT_EQ(thief.registerAgent(stealing), 409);
  // a1 itself again, with a report beyond its total: its registration stays as it was.
  FakeAgent again(s.master.port(), "a1", "cpus:4;mem:4096", Secured::auth("agent-a"));
  AgentRegistration over = again.registration();
  over.tasks.push_back({s.t1.framework, "web", "t1", R("cpus:9;mem:128"), TaskState::kRunning});
  EXPECT_EQ(again.registerAgent(over), 400);
  EXPECT_EQ(s.settledState(), before);
  EXPECT_EQ(s.metric("master/agents/registrations_refused"), 3);

  Call reconcile;
  reconcile.set_type(Call::RECONCILE);
  reconcile.mutable_reconcile()->add_tasks()->mutable_task_id()->set_value("t1");
  ASSERT_EQ(s.web.call(reconcile).status, 202);
  const v1::TaskStatus reconciled = s.web.update();
  EXPECT_EQ(reconciled.agent_id().value(), "a1");
  EXPECT_EQ(reconciled.state(), v1::TASK_RUNNING);
  Call kill;
  kill.set_type(Call::KILL);
  kill.mutable_kill()->mutable_task_id()->set_value("t1");
  ASSERT_EQ(s.web.call(kill).status, 202);
  std::optional<v1::AgentEvent::Kill> killed = s.a1.expectKillTask();
  ASSERT_TRUE(killed.has_value());
  EXPECT_EQ(killed->task_id().value(), "t1");
}

TEST(AttackTest, AnEstimateBeyondTheAgentsTotalIsRefused) {
  Secured s;
  const std::string before = s.settledState();
  v1::AgentCall estimate;
  estimate.set_type(v1::AgentCall::ESTIMATE);
  estimate.mutable_agent_id()->set_value("a1");
  estimate.set_sequence(s.a1.nextSequence());
  *estimate.mutable_estimate() = toProto(R("cpus:1000000000000"));
  EXPECT_EQ(s.a1.post(estimate), 400);
  FakeAgent a2(s.master.port(), "a2", "cpus:4;mem:4096", Secured::auth("agent-b"));
  AgentRegistration boasting = a2.registration();
  boasting.estimate = R("cpus:5");
  EXPECT_EQ(a2.registerAgent(boasting), 400);
  EXPECT_EQ(s.settledState(), before);
  // Within the total (reservations count: a1 has 6 cpus) it is taken.
  estimate.set_sequence(estimate.sequence() + 1);
  *estimate.mutable_estimate() = toProto(R("cpus:6"));
  EXPECT_EQ(s.a1.post(estimate), 202);
}

TEST(AttackTest, DuplicateKeysInAJsonCallAreRefused) {
  Secured s;
  const std::string before = s.settledState();
  const std::string body = R"({"framework_id": {"value": ")" + s.web.id() +
                           R"("}, "type": "REVIVE", "type": "TEARDOWN"})";
  const http::ClientResponse answer = s.web.post({{"Mesos-Stream-Id", s.web.streamId()}}, body);
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(answer.body, "malformed JSON at offset " + std::to_string(body.rfind("\"type\"")) +
                             ": duplicate member 'type'");
  EXPECT_FALSE(s.web.streamEnds(Duration::milliseconds(200)));
  EXPECT_EQ(s.settledState(), before);
}

// ---- Slow request heads ---------------------------------------------------------------------

// A TCP connection to the master from `source` (any 127.0.0.0/8 address is loopback).
int connectFrom(const char* source, uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  inet_pton(AF_INET, source, &local.sin_addr);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local), 0);
  sockaddr_in remote{};
  remote.sin_family = AF_INET;
  remote.sin_port = htons(port);
  inet_pton(AF_INET, kHost, &remote.sin_addr);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof remote), 0);
  return fd;
}

// What the server sends until it closes or `ms` pass.
std::string readAll(int fd, int ms) {
  std::string out;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(ms);
  while (true) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(remaining(deadline).millis())) <= 0) return out;
    char buffer[4096];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return out;
    out.append(buffer, static_cast<size_t>(n));
  }
}

// The lent offers of the next events, until `count` of them or the timeout.
std::vector<v1::Offer> revocableOffers(FrameworkClient& framework, size_t count) {
  std::vector<v1::Offer> lent;
  const Clock::time_point deadline = Clock::now() + kTimeout.chrono();
  while (lent.size() < count && Clock::now() < deadline) {
    for (const v1::Offer& offer : framework.offers(remaining(deadline))) {
      if (offer.resources_size() > 0 && offer.resources(0).has_revocable()) lent.push_back(offer);
    }
  }
  return lent;
}

// Found after issue 14: a tenant holding lent resources renames its framework, then declines
// them. The update rebuilt the framework's revocable bookkeeping from zero, so the decline
// gave back more than the allocator knew it held: a CHECK failure, and the master was gone.
TEST(AttackTest, UpdatingAFrameworkThatHoldsLentResourcesCannotCrashTheMaster) {
  v1::FrameworkInfo info = frameworkInfo("web");
  info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
  Cluster cluster("cpus:4;mem:4096;cpus(other):2;mem(other):1024", info);
  const Resources lent = R("cpus(other):2;mem(other):1024").lentAs(Revocability::kNonThrottleable);
  std::vector<v1::Offer> offers = revocableOffers(cluster.framework, 1);
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(resourcesOf(offers[0].resources()), lent);

  v1::FrameworkInfo renamed = info;
  renamed.set_name("renamed");
  ASSERT_EQ(cluster.framework.call(updateFramework(cluster.framework.id(), renamed)).status, 200);
  ASSERT_EQ(cluster.framework.call(declineCall(offers[0], 0)).status, 202);

  // The master lives on: the reservation is lent again, and it answers.
  offers = revocableOffers(cluster.framework, 1);
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(resourcesOf(offers[0].resources()), lent);
  EXPECT_EQ(request(cluster.master.port(), "GET", "/health").status, 200);
}

TEST(AttackTest, SlowRequestHeadsCannotCrowdOutAuthenticatedCallers) {
  TempFile credentials("credentials", kCredentials);
  NetworkOptions network;
  network.credentialsPath = credentials.path();
  network.maxConnections = 16;
  network.maxConnectionsPerPeer = 8;
  network.requestHeadTimeout = Duration::seconds(1);
  MasterThread master(network);
  const http::Headers web = Secured::auth("web");

  // 12 from one address (4 over its limit) and 8 from another: every slot is taken, each by
  // half a request line.
  std::vector<int> slow;
  for (int i = 0; i < 20; ++i) {
    slow.push_back(connectFrom(i < 12 ? "127.0.0.2" : "127.0.0.3", master.port()));
    ASSERT_EQ(::send(slow.back(), "GET /sta", 8, MSG_NOSIGNAL), 8);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // An authenticated caller is served: it takes the place of the oldest slow connection, and
  // keeps it for its next request.
  const Clock::time_point start = Clock::now();
  Result<http::Connection> connected = http::Connection::connect(kHost, master.port(), kTimeout);
  ASSERT_TRUE(connected.ok()) << connected.message();
  http::Connection caller = std::move(connected).value();
  for (int i = 0; i < 2; ++i) {
    Result<http::ClientResponse> served =
        caller.request("GET", "/metrics/snapshot", web, "", kTimeout);
    ASSERT_TRUE(served.ok()) << served.message();
    ASSERT_EQ(served->status, 200);
    const Struct during = parseJson(served->body);
    EXPECT_EQ(during.fields().at("master/http/connections_rejected_per_peer").number_value(), 4);
    EXPECT_EQ(during.fields().at("master/http/connections_evicted").number_value(), 1);
    EXPECT_EQ(during.fields().at("master/http/connections").number_value(), 16);
  }

  // Dripping a byte does not extend the head's deadline: 408 one second after connecting.
  for (int fd : slow) (void)::send(fd, "t", 1, MSG_NOSIGNAL);
  int timedOut = 0, refused = 0, evicted = 0;
  for (size_t i = 0; i < slow.size(); ++i) {
    const std::string answer = readAll(slow[i], 3000);
    if (answer.starts_with("HTTP/1.1 408")) ++timedOut;
    if (answer.starts_with("HTTP/1.1 503")) ++refused;
    if (answer.empty()) ++evicted;
    ::close(slow[i]);
  }
  EXPECT_LT(millisSince(start), 3000);
  EXPECT_EQ(timedOut, 15);
  EXPECT_EQ(refused, 4);
  EXPECT_EQ(evicted, 1);
  EXPECT_EQ(metrics(master.port(), web).at("master/http/request_head_timeouts"), 15);

  // An unauthenticated request is answered, and its connection closed: it holds no slot.
  const http::ClientResponse anonymous = request(master.port(), "GET", "/state");
  EXPECT_EQ(anonymous.status, 401);
  ASSERT_NE(anonymous.header("connection"), nullptr);
  EXPECT_EQ(*anonymous.header("connection"), "close");
  const http::ClientResponse health = request(master.port(), "GET", "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok");
  ASSERT_NE(health.header("connection"), nullptr);
  EXPECT_EQ(*health.header("connection"), "close");
}

// Binary protobuf carries any bytes in a string field. An agent id or a maintenance hostname
// that is not UTF-8, once stored, would reappear in /master/state and make it unreadable JSON
// for every operator and tool: both are refused at the door, and the state still parses.
TEST(AttackTest, TextThatIsNotUtf8CannotMakeTheStateUnreadable) {
  MasterThread master;
  FakeAgent broken(master.port(), "agent\xff\xfe", "cpus:1;mem:128");
  EXPECT_EQ(broken.registerAgent(), 400);

  v1::master::Call schedule;
  schedule.set_type(v1::master::Call::UPDATE_MAINTENANCE_SCHEDULE);
  v1::master::Window* window =
      schedule.mutable_update_maintenance_schedule()->mutable_schedule()->add_windows();
  window->add_machine_ids()->set_hostname("host\xc0\xaf");  // An overlong '/'.
  window->mutable_unavailability()->mutable_start()->set_nanoseconds(1700000000000000000);
  const http::ClientResponse answer =
      request(master.port(), "POST", "/api/v1", {{"Content-Type", kProtobufType}},
              schedule.SerializeAsString());
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(answer.body,
            "Failed to parse body into Call: string field "
            "'update_maintenance_schedule.schedule.windows.machine_ids.hostname' is not UTF-8");

  const Struct current = state(master.port());  // Fails the test if it is not JSON.
  EXPECT_TRUE(entries(current, "slaves").empty());
  const http::ClientResponse maintenance =
      request(master.port(), "POST", "/api/v1", {{"Content-Type", kJsonType}},
              R"({"type":"GET_MAINTENANCE_SCHEDULE"})");
  EXPECT_EQ(maintenance.body,
            R"({"type":"GET_MAINTENANCE_SCHEDULE","get_maintenance_schedule":{"schedule":{}}})");
}

}  // namespace
}  // namespace harvest::master
