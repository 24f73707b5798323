// harvest-agent's endpoint (agent/http) on a live AgentProcess registered with the fake master
// of tests/agent/process. The agent runs on the test thread; each request is made from another
// thread while the test thread steps the agent and polls its server, as harvest-agent's loop
// does. Process tasks that do not end by themselves are killed by their process group (the
// pid the agent spawned them with) before the test ends.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "agent/http/agent_server.h"
#include "agent/real/process_agent.h"
#include "agent/runtime/attributes.h"
#include "agent/runtime/fault_domain.h"
#include "fake_master.h"
#include "net/http_client.h"
#include "test_pki.h"
#include "tracked_processes.h"

namespace harvest::agent {
namespace {

using fake::FakeMaster;
using fake::kWait;
using fake::R;
using google::protobuf::ListValue;
using google::protobuf::Struct;

class AgentHttpTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (pid_t group : groups_) ::kill(-group, SIGKILL);
    agent_.reset();
    std::filesystem::remove_all(workDir());
  }

  std::filesystem::path workDir() const {
    return std::filesystem::temp_directory_path() /
           ("harvest-agent-http-test-" + std::to_string(::getpid()));
  }

  void startAgent(TaskRunner tasks, AgentServerOptions server = {}) {
    AgentProcessOptions options = fake::optionsFor(master_.port());
    options.tasks = tasks;
    options.workDir = workDir();
    options.estimate = R("cpus:2");
    options.usageInterval = Duration::milliseconds(50);  // What /monitor/statistics serves.
    startAgent(options, std::move(server));
  }

  void startAgent(const AgentProcessOptions& options, AgentServerOptions server) {
    agent_ = fake::start(options);
    server.port = 0;
    Result<std::unique_ptr<AgentServer>> started = AgentServer::start(server, agent_.get());
    ASSERT_TRUE(started.ok()) << started.message();
    server_ = std::move(started).value();
    ASSERT_TRUE(agent_->runUntil([&] { return agent_->registered(); }, kWait));
  }

  // GET `target` from the agent's endpoint while the agent runs.
  http::ClientResponse get(const std::string& target, http::Headers headers = {},
                           const std::string& method = "GET") {
    const uint16_t port = server_->port();
    http::ClientOptions client;
    client.tls = clientTls_;
    auto answer = std::async(std::launch::async, [=] {
      Result<http::Connection> connection =
          http::Connection::connect("127.0.0.1", port, Duration::seconds(2), client);
      if (!connection.ok()) return http::ClientResponse{};
      http::Connection open = std::move(connection).value();
      Result<http::ClientResponse> response = open.request(method, target, headers);
      return response.ok() ? *response : http::ClientResponse{};
    });
    EXPECT_TRUE(agent_->runUntil(
        [&] {
          server_->poll(Duration::zero());
          return answer.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        },
        Duration::seconds(5)));
    return answer.get();
  }

  // Launches a shell command as task `task` of f1 and waits for `calls` calls at the master.
  void launch(const std::string& task, const std::string& resources, const std::string& command,
              size_t calls) {
    RunTask message{"f1", "batch", {task, R(resources), Duration::zero()}, {}, false};
    message.task.command.emplace();
    message.task.command->set_shell(true);
    message.task.command->set_value(command);
    master_.send(runTaskEvent(message, "a1"));
    ASSERT_TRUE(agent_->runUntil([&] { return master_.applied().size() == calls; }, kWait));
    const auto* processes = dynamic_cast<const ProcessAgent*>(&agent_->agent());
    if (processes == nullptr) return;
    if (std::optional<pid_t> group = processes->processGroupOf("f1", task)) {
      groups_.push_back(*group);
      testing::recordProcessGroup(*group);
    }
  }

  // Kills what the test's tasks left running, by process group, and waits for their ends.
  void killTasks(size_t calls) {
    for (pid_t group : groups_) ::kill(-group, SIGKILL);
    groups_.clear();
    ASSERT_TRUE(agent_->runUntil([&] { return master_.applied().size() == calls; }, kWait));
  }

  std::filesystem::path sandboxOf(const std::string& task) const {
    const std::filesystem::path runs =
        std::filesystem::canonical(workDir()) / "slaves/a1/frameworks/f1/executors" / task / "runs";
    return std::filesystem::directory_iterator(runs)->path();
  }

  FakeMaster master_;
  std::unique_ptr<AgentProcess> agent_;
  std::unique_ptr<AgentServer> server_;
  std::vector<pid_t> groups_;
  std::shared_ptr<const http::TlsContext> clientTls_;  // Null: requests in plaintext.
};

Struct objectOf(const std::string& json) {
  Struct parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok()) << json;
  return parsed;
}

ListValue arrayOf(const std::string& json) {
  ListValue parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok()) << json;
  return parsed;
}

double field(const Struct& object, const std::string& name) {
  auto it = object.fields().find(name);
  EXPECT_NE(it, object.fields().end()) << name;
  return it == object.fields().end() ? -1 : it->second.number_value();
}

TEST_F(AgentHttpTest, HealthAndUnknownPaths) {
  startAgent(TaskRunner::kSimulated);
  http::ClientResponse health = get("/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "");
  EXPECT_EQ(get("/nothing").status, 404);
  http::ClientResponse post = get("/state", {}, "POST");
  EXPECT_EQ(post.status, 405);
  ASSERT_NE(post.header("allow"), nullptr);
  EXPECT_EQ(*post.header("allow"), "GET, HEAD");
}

// ?jsonp=NAME wraps an answer for a page of another origin (Mesos's endpoints do the same); a
// callback that is not a JavaScript name is refused, so a link cannot make the agent serve
// script of its author's choosing.
TEST_F(AgentHttpTest, JsonpWrapsAnswersInANamedCallbackOnly) {
  startAgent(TaskRunner::kSimulated);
  const std::string state = get("/state").body;
  http::ClientResponse wrapped = get("/state?jsonp=harvest.cb_1");
  EXPECT_EQ(wrapped.status, 200);
  EXPECT_EQ(wrapped.body, "harvest.cb_1(" + state + ");");
  ASSERT_NE(wrapped.header("content-type"), nullptr);
  EXPECT_EQ(*wrapped.header("content-type"), "text/javascript");
  http::ClientResponse attack = get("/state?jsonp=alert(document.cookie)%3Bx");
  EXPECT_EQ(attack.status, 400);
  EXPECT_EQ(attack.body, "jsonp must name a JavaScript function ([A-Za-z0-9_$.])\n");
  EXPECT_EQ(get("/state?jsonp=").status, 400);
  // An error is not wrapped: the script's onerror tells the page.
  EXPECT_EQ(get("/files/read?jsonp=cb&offset=0").status, 400);
}

// A running process task, with its executor and resources, as Mesos's agent lists it.
TEST_F(AgentHttpTest, StateListsARunningProcessTask) {
  startAgent(TaskRunner::kProcesses);
  launch("t1", "cpus:1;mem:128", "sleep 30", 2);
  http::ClientResponse state = get("/state");
  EXPECT_EQ(state.status, 200);
  const std::string task =
      R"({"id":"t1","name":"t1","framework_id":"f1","executor_id":"t1","slave_id":"a1",)"
      R"("state":"TASK_RUNNING","role":"batch",)"
      R"("resources":{"cpus":1,"disk":0,"gpus":0,"mem":128}})";
  EXPECT_EQ(state.body,
            R"({"id":"a1","hostname":"a1","resources":{"cpus":4,"disk":0,"gpus":0,"mem":1024},)"
            R"("attributes":{},"frameworks":[{"id":"f1","executors":[{"id":"t1","name":"t1",)"
            R"("source":"t1","framework_id":"f1","directory":")" +
                sandboxOf("t1").string() +
                R"(","role":"batch",)"
                R"("resources":{"cpus":1,"disk":0,"gpus":0,"mem":128},"tasks":[)" +
                task +
                R"(],"queued_tasks":[],"completed_tasks":[]}],"completed_executors":[]}],)"
                R"("completed_frameworks":[]})");
  killTasks(4);  // TASK_FAILED (signal) and FREED.
  EXPECT_EQ(get("/state").body,
            R"({"id":"a1","hostname":"a1","resources":{"cpus":4,"disk":0,"gpus":0,"mem":1024},)"
            R"("attributes":{},"frameworks":[],"completed_frameworks":[]})");
}

// A simulated task is listed the same way; the agent's attributes and domain as it registered.
TEST_F(AgentHttpTest, StateOfASimulatedAgentWithAttributesAndDomain) {
  AgentProcessOptions options = fake::optionsFor(master_.port());
  options.total = R("cpus:2;mem:512;ports:[31000-31009]");
  options.attributes = *parseAttributes("rack:r1;slots:4");
  options.domain =
      *parseFaultDomain(R"({"fault_domain": {"region": {"name": "eu"}, "zone": {"name": "z2"}}})");
  startAgent(options, {});
  master_.send(fake::runTask("f1", "web", "s1", "cpus:0.5;mem:64", Duration::seconds(60)));
  ASSERT_TRUE(agent_->runUntil([&] { return master_.applied().size() == 1; }, kWait));
  EXPECT_EQ(
      get("/state").body,
      R"({"id":"a1","hostname":"a1","resources":{"cpus":2,"disk":0,"gpus":0,"mem":512,)"
      R"("ports":"[31000-31009]"},"attributes":{"rack":"r1","slots":4},)"
      R"("domain":{"fault_domain":{"region":{"name":"eu"},"zone":{"name":"z2"}}},)"
      R"("frameworks":[{"id":"f1","executors":[{"id":"s1","name":"s1","source":"s1",)"
      R"("framework_id":"f1","role":"web","resources":{"cpus":0.5,"disk":0,"gpus":0,"mem":64},)"
      R"("tasks":[{"id":"s1","name":"s1","framework_id":"f1","executor_id":"s1","slave_id":"a1",)"
      R"("state":"TASK_RUNNING","role":"web","resources":{"cpus":0.5,"disk":0,"gpus":0,"mem":64}}],)"
      R"("queued_tasks":[],"completed_tasks":[]}],"completed_executors":[]}],)"
      R"("completed_frameworks":[]})");
  // Nothing of a simulated task can be measured: it is not in the statistics.
  EXPECT_EQ(get("/monitor/statistics").body, "[]");
}

// A busy loop's cpu time grows between two samples; its limits are what it was given.
TEST_F(AgentHttpTest, StatisticsShowCpuTimeGrowing) {
  startAgent(TaskRunner::kProcesses);
  // It holds a 16 MB string while it spins: enough resident memory that the memory cgroup's
  // per-cpu batched counters show it too.
  launch("busy", "cpus:1;mem:128",
         "x=$(head -c 16000000 /dev/zero | tr '\\0' a); echo ready; while :; do :; done", 2);
  // Sampled once the string is whole: before, the cpu that makes it would pass for the loop's.
  const std::filesystem::path stdoutPath = sandboxOf("busy") / "stdout";
  ASSERT_TRUE(agent_->runUntil([&] { return testing::readFile(stdoutPath) == "ready\n"; }, kWait));
  auto sample = [&] {
    http::ClientResponse response = get("/monitor/statistics");
    EXPECT_EQ(response.status, 200);
    ListValue entries = arrayOf(response.body);
    EXPECT_EQ(entries.values_size(), 1) << response.body;
    return entries.values_size() == 1 ? entries.values(0).struct_value() : Struct();
  };
  const auto cpuOf = [](const Struct& entry) {
    if (!entry.fields().contains("statistics")) return 0.0;
    const Struct& statistics = entry.fields().at("statistics").struct_value();
    return statistics.fields().at("cpus_user_time_secs").number_value() +
           statistics.fields().at("cpus_system_time_secs").number_value();
  };
  // The task is listed from its first usage sample on.
  ASSERT_TRUE(agent_->runUntil(
      [&] { return arrayOf(get("/monitor/statistics").body).values_size() == 1; }, kWait));
  const Struct first = sample();
  // A loaded box (the whole suite in parallel) gives the loop a small share of a core: sample
  // until 0.05 s of cpu have gone by, for at most 10 s.
  Struct second = first;
  for (int round = 0; round < 100 && cpuOf(second) - cpuOf(first) <= 0.05; ++round) {
    agent_->runFor(Duration::milliseconds(100));
    second = sample();
  }
  EXPECT_EQ(first.fields().at("executor_id").string_value(), "busy");
  EXPECT_EQ(first.fields().at("framework_id").string_value(), "f1");
  EXPECT_EQ(first.fields().at("source").string_value(), "busy");
  const Struct& before = first.fields().at("statistics").struct_value();
  const Struct& after = second.fields().at("statistics").struct_value();
  EXPECT_EQ(field(after, "cpus_limit"), 1);
  EXPECT_EQ(field(after, "mem_limit_bytes"), 128.0 * 1024 * 1024);
  // Posix: the process group's processes; cgroups: the container's page cache instead.
  const auto* processes = dynamic_cast<const ProcessAgent*>(&agent_->agent());
  if (processes->isolation() == Isolation::kPosix) {
    EXPECT_EQ(field(after, "processes"), 1);
    EXPECT_FALSE(after.fields().contains("mem_cache_bytes"));
  } else {
    EXPECT_TRUE(after.fields().contains("mem_cache_bytes"));
    EXPECT_FALSE(after.fields().contains("processes"));
  }
  EXPECT_GT(field(after, "mem_rss_bytes"), 16e6);
  const double cpuBefore =
      field(before, "cpus_user_time_secs") + field(before, "cpus_system_time_secs");
  const double cpuAfter =
      field(after, "cpus_user_time_secs") + field(after, "cpus_system_time_secs");
  EXPECT_GT(cpuAfter - cpuBefore, 0.05);
  EXPECT_GT(field(after, "timestamp"), field(before, "timestamp"));
  killTasks(4);
  EXPECT_EQ(get("/monitor/statistics").body, "[]");
}

// /files/download gives a sandbox file's bytes as an attachment; a name the task chose cannot
// add header fields; directories and paths outside the sandboxes are refused as by read.
TEST_F(AgentHttpTest, FilesDownloadGivesTheFileAsAnAttachment) {
  startAgent(TaskRunner::kProcesses);
  launch("t1", "cpus:1;mem:32",
         "printf 'hello, sandbox\\n'; printf 'x' > \"$(printf 'a\\r\\nSet-Cookie: y')\"", 4);
  const std::string sandbox = sandboxOf("t1").string();
  http::ClientResponse download = get("/files/download?path=" + sandbox + "/stdout");
  EXPECT_EQ(download.status, 200);
  EXPECT_EQ(download.body, "hello, sandbox\n");
  ASSERT_NE(download.header("content-type"), nullptr);
  EXPECT_EQ(*download.header("content-type"), "application/octet-stream");
  ASSERT_NE(download.header("content-disposition"), nullptr);
  EXPECT_EQ(*download.header("content-disposition"), "attachment; filename=\"stdout\"");
  http::ClientResponse odd = get("/files/download?path=" + sandbox + "/a%0D%0ASet-Cookie%3A%20y");
  EXPECT_EQ(odd.status, 200);
  EXPECT_EQ(odd.body, "x");
  EXPECT_EQ(odd.header("set-cookie"), nullptr);
  EXPECT_EQ(*odd.header("content-disposition"), "attachment; filename=\"a__Set-Cookie__y\"");
  EXPECT_EQ(get("/files/download?path=" + sandbox).status, 400);
  EXPECT_EQ(get("/files/download?path=/etc/passwd").status, 403);
}

// A task's stdout read whole, in part, and by its length; its sandbox listed.
TEST_F(AgentHttpTest, FilesReadAndBrowseASandbox) {
  startAgent(TaskRunner::kProcesses);
  launch("t1", "cpus:1;mem:32", "printf 'hello, sandbox\\n'", 4);
  const std::string sandbox = sandboxOf("t1").string();
  EXPECT_EQ(get("/files/read?path=" + sandbox + "/stdout&offset=0").body,
            R"({"data":"hello, sandbox\n","offset":0})");
  EXPECT_EQ(get("/files/read?path=" + sandbox + "/stdout&offset=7&length=7").body,
            R"({"data":"sandbox","offset":7})");
  EXPECT_EQ(get("/files/read?path=" + sandbox + "/stdout&offset=-1").body,
            R"({"data":"","offset":15})");
  EXPECT_EQ(get("/files/read?path=" + sandbox + "/stdout&offset=99").body,
            R"({"data":"","offset":15})");

  http::ClientResponse browse = get("/files/browse?path=" + sandbox);
  ASSERT_EQ(browse.status, 200);
  ListValue entries = arrayOf(browse.body);
  ASSERT_EQ(entries.values_size(), 2) << browse.body;
  const Struct& stderrEntry = entries.values(0).struct_value();
  const Struct& stdoutEntry = entries.values(1).struct_value();
  EXPECT_EQ(stderrEntry.fields().at("path").string_value(), sandbox + "/stderr");
  EXPECT_EQ(field(stderrEntry, "size"), 0);
  EXPECT_EQ(stdoutEntry.fields().at("path").string_value(), sandbox + "/stdout");
  EXPECT_EQ(field(stdoutEntry, "size"), 15);
  EXPECT_EQ(field(stdoutEntry, "nlink"), 1);
  EXPECT_EQ(stdoutEntry.fields().at("mode").string_value().substr(0, 1), "-");

  EXPECT_EQ(get("/files/read?path=" + sandbox + "/stdout").status, 400);    // No offset.
  EXPECT_EQ(get("/files/read?offset=0").status, 400);                       // No path.
  EXPECT_EQ(get("/files/read?path=" + sandbox + "&offset=0").status, 400);  // A directory.
  EXPECT_EQ(get("/files/read?path=" + sandbox + "/missing&offset=0").status, 404);
}

// `..`, an absolute path outside, a relative path, and a link in a sandbox that leads out.
TEST_F(AgentHttpTest, FilesRefuseWhatLiesOutsideTheSandboxes) {
  startAgent(TaskRunner::kProcesses);
  launch("t1", "cpus:1;mem:32", "ln -s /etc etc", 4);
  const std::string sandbox = sandboxOf("t1").string();
  ASSERT_TRUE(std::filesystem::is_symlink(sandbox + "/etc"));
  const std::vector<std::string> attacks = {
      sandbox + "/../../../../../../../../../../etc/passwd",
      sandbox + "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
      "/etc/passwd",
      "etc/passwd",
      sandbox + "/etc/passwd",
      workDir().string() + "/slaves/a1/frameworks/f1",
  };
  for (const std::string& path : attacks) {
    http::ClientResponse read = get("/files/read?path=" + path + "&offset=0");
    EXPECT_EQ(read.status, 403) << path << ": " << read.body;
    EXPECT_EQ(read.body.find("root:"), std::string::npos);
    EXPECT_EQ(get("/files/browse?path=" + path).status, 403) << path;
  }
  EXPECT_EQ(get("/files/browse?path=" + sandbox + "/etc").status, 403);
  // The link itself is listed (not followed) when its sandbox is browsed.
  const std::string listing = get("/files/browse?path=" + sandbox).body;
  EXPECT_NE(listing.find(R"("mode":"lrwxrwxrwx","mtime")"), std::string::npos) << listing;
}

TEST_F(AgentHttpTest, CredentialsAreRequiredWhenConfigured) {
  AgentServerOptions server;
  server.credentials = *http::CredentialStore::parse("ops s3cret\n");
  startAgent(TaskRunner::kSimulated, server);
  http::ClientResponse anonymous = get("/state");
  EXPECT_EQ(anonymous.status, 401);
  ASSERT_NE(anonymous.header("www-authenticate"), nullptr);
  EXPECT_EQ(*anonymous.header("www-authenticate"), "Basic realm=\"harvest\"");
  const http::Headers wrong = {{"Authorization", http::basicAuthorization({"ops", "guess"})}};
  EXPECT_EQ(get("/metrics/snapshot", wrong).status, 401);
  EXPECT_EQ(get("/files/read?path=/etc/passwd&offset=0").status, 401);
  const http::Headers right = {{"Authorization", http::basicAuthorization({"ops", "s3cret"})}};
  EXPECT_EQ(get("/state", right).status, 200);
  EXPECT_EQ(get("/health").status, 200);  // Open, as Mesos's.
}

// Finished and failed tasks counted, a running one held; totals and uses as the books say.
TEST_F(AgentHttpTest, MetricsCountTasksByTheirEnds) {
  startAgent(TaskRunner::kProcesses);
  launch("ok", "cpus:1;mem:32", "exit 0", 4);
  launch("bad", "cpus:1;mem:32", "exit 3", 8);
  launch("long", "cpus:2;mem:256", "sleep 30", 10);
  const Struct metrics = objectOf(get("/metrics/snapshot").body);
  EXPECT_EQ(field(metrics, "slave/tasks_finished"), 1);
  EXPECT_EQ(field(metrics, "slave/tasks_failed"), 1);
  EXPECT_EQ(field(metrics, "slave/tasks_killed"), 0);
  EXPECT_EQ(field(metrics, "slave/tasks_lost"), 0);
  EXPECT_EQ(field(metrics, "slave/tasks_running"), 1);
  EXPECT_EQ(field(metrics, "slave/tasks_staging"), 0);
  EXPECT_EQ(field(metrics, "slave/executors_running"), 1);
  EXPECT_EQ(field(metrics, "slave/executors_preempted"), 0);
  EXPECT_EQ(field(metrics, "slave/frameworks_active"), 1);
  EXPECT_EQ(field(metrics, "slave/registered"), 1);
  EXPECT_EQ(field(metrics, "slave/cpus_total"), 4);
  EXPECT_EQ(field(metrics, "slave/cpus_used"), 2);
  EXPECT_EQ(field(metrics, "slave/cpus_percent"), 0.5);
  EXPECT_EQ(field(metrics, "slave/mem_total"), 1024);
  EXPECT_EQ(field(metrics, "slave/mem_used"), 256);
  EXPECT_EQ(field(metrics, "slave/cpus_revocable_total"), 2);
  EXPECT_EQ(field(metrics, "slave/cpus_revocable_used"), 0);
  EXPECT_GT(field(metrics, "slave/uptime_secs"), 0);
  killTasks(12);
  const Struct after = objectOf(get("/metrics/snapshot").body);
  EXPECT_EQ(field(after, "slave/tasks_failed"), 2);  // Killed by signal: TASK_FAILED.
  EXPECT_EQ(field(after, "slave/tasks_running"), 0);
  EXPECT_EQ(field(after, "slave/cpus_used"), 0);
}

// With a server context the endpoint speaks TLS, and a plaintext request gets no answer.
TEST_F(AgentHttpTest, ServesTlsWithTheGivenContext) {
  testkit::TestPki pki;
  const testkit::PemFiles ca = pki.makeCa("ca");
  const testkit::PemFiles cert = pki.issue(ca, "agent");
  http::TlsOptions serverTls;
  serverTls.enabled = true;
  serverTls.certFile = cert.certFile;
  serverTls.keyFile = cert.keyFile;
  AgentServerOptions server;
  server.tls = *http::TlsContext::create(serverTls, http::TlsContext::Role::kServer);
  startAgent(TaskRunner::kSimulated, server);
  EXPECT_EQ(get("/health").status, 0);  // Plaintext: the handshake fails, nothing is answered.

  http::TlsOptions clientTls;
  clientTls.enabled = true;
  clientTls.verifyCert = true;
  clientTls.caFile = ca.certFile;
  clientTls_ = *http::TlsContext::create(clientTls, http::TlsContext::Role::kClient);
  EXPECT_EQ(get("/health").status, 200);
  http::ClientResponse state = get("/state");
  EXPECT_EQ(state.status, 200);
  EXPECT_EQ(state.body.substr(0, 24), R"({"id":"a1","hostname":"a)");
}

}  // namespace
}  // namespace harvest::agent
