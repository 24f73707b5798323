// The network master over TLS: schedulers, agents and operators on the one TLS port, with the
// clients the agent and the tools use (which follow the process-wide client TLS context, as
// harvest-agent sets it from its flags).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "net/tls_context.h"
#include "test_pki.h"
#include "testing/fake_agent.h"
#include "testing/framework_client.h"
#include "testing/master_thread.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.
using v1::scheduler::Event;

// Every client made while it lives dials with `context`.
class ProcessClientTls {
 public:
  explicit ProcessClientTls(std::shared_ptr<const http::TlsContext> context) {
    http::setDefaultClientTls(std::move(context));
  }
  ~ProcessClientTls() { http::setDefaultClientTls(nullptr); }
};

class MasterTlsTest : public ::testing::Test {
 protected:
  MasterTlsTest()
      : ca_(pki_.makeCa("ca")),
        masterCert_(pki_.issue(ca_, "master")),
        clientCert_(pki_.issue(ca_, "agent")) {}

  NetworkOptions network(bool requireCert, bool downgrade) const {
    NetworkOptions options;
    options.tls.enabled = true;
    options.tls.certFile = masterCert_.certFile;
    options.tls.keyFile = masterCert_.keyFile;
    options.tls.caFile = ca_.certFile;
    options.tls.requireCert = requireCert;
    options.tls.supportDowngrade = downgrade;
    return options;
  }

  // Verifies the master's certificate and presents one signed by the same CA.
  std::shared_ptr<const http::TlsContext> clientContext() const {
    http::TlsOptions tls;
    tls.enabled = true;
    tls.verifyCert = true;
    tls.caFile = ca_.certFile;
    tls.certFile = clientCert_.certFile;
    tls.keyFile = clientCert_.keyFile;
    Result<std::shared_ptr<const http::TlsContext>> built =
        http::TlsContext::create(tls, http::TlsContext::Role::kClient);
    CHECK(built.ok()) << built.message();
    return std::move(built).value();
  }

  TestPki pki_;
  PemFiles ca_, masterCert_, clientCert_;
};

TEST_F(MasterTlsTest, FrameworkAndAgentRunATaskOverMutualTls) {
  MasterThread master(network(/*requireCert=*/true, /*downgrade=*/false));
  ProcessClientTls tls(clientContext());
  FakeAgent agent(master.port(), "a1", "cpus:4;mem:2048");
  ASSERT_EQ(agent.registerAgent(), 200);
  EXPECT_EQ(agent.registered().heartbeat_interval_seconds(), 5);
  FrameworkClient framework(master.port(), Format::kProtobuf);
  ASSERT_EQ(framework.subscribe(frameworkInfo("batch")), 200);
  ASSERT_EQ(framework.firstEvent().type(), Event::SUBSCRIBED);
  EXPECT_TRUE(framework.firstEvent().subscribed().framework_id().value().starts_with("framework-"));
  const v1::Offer offer = framework.offer();
  EXPECT_EQ(resourcesOf(offer.resources()), R("cpus:4;mem:2048"));
  ASSERT_EQ(
      framework.call(acceptCall(offer, {launch({taskInfo("p1", "a1", "cpus:0.5;mem:100", 3)})}, 10))
          .status,
      202);
  std::optional<RunTask> task = agent.expectRunTask();
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->task.task, "p1");
  ASSERT_EQ(agent.status(*task, TaskState::kRunning), 202);
  const v1::TaskStatus running = framework.update();
  EXPECT_EQ(running.task_id().value(), "p1");
  EXPECT_EQ(running.state(), v1::TASK_RUNNING);
}

// An operator polling the master dials a new connection each time; from the second on, its
// client context offers the session it kept, and the master's metrics say so.
TEST_F(MasterTlsTest, MetricsCountHandshakesAndTheResumedOnes) {
  MasterThread master(network(/*requireCert=*/true, /*downgrade=*/false));
  ProcessClientTls tls(clientContext());
  for (double polled : {1.0, 2.0, 3.0}) {
    const std::map<std::string, double> snapshot = metrics(master.port());
    EXPECT_EQ(snapshot.at("master/http/tls_handshakes"), polled);
    EXPECT_EQ(snapshot.at("master/http/tls_resumptions"), polled - 1);
  }
}

TEST_F(MasterTlsTest, PlaintextSchedulerIsRefusedUnlessDowngradeIsOn) {
  http::ClientOptions plaintext;
  plaintext.tls = nullptr;
  {
    MasterThread master(network(/*requireCert=*/false, /*downgrade=*/false));
    Result<http::Connection> connection = http::Connection::connect(
        "127.0.0.1", master.port(), Duration::milliseconds(2000), plaintext);
    ASSERT_TRUE(connection.ok()) << connection.message();  // TCP: the refusal comes after.
    http::Connection open = std::move(connection).value();
    Result<http::ClientResponse> response = open.request(
        "POST", "/api/v1/scheduler", {{"Content-Type", "application/json"}},
        R"({"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n"}}})",
        Duration::milliseconds(2000));
    ASSERT_FALSE(response.ok()) << response->status;
  }
  MasterThread master(network(/*requireCert=*/false, /*downgrade=*/true));
  FrameworkClient framework(master.port(), Format::kJson);
  ASSERT_EQ(framework.subscribe(frameworkInfo("web"), plaintext), 200);
  EXPECT_EQ(framework.firstEvent().type(), Event::SUBSCRIBED);
  http::ClientOptions secure;
  secure.tls = clientContext();
  FrameworkClient tlsFramework(master.port(), Format::kJson);
  ASSERT_EQ(tlsFramework.subscribe(frameworkInfo("web", "tls-fw"), secure), 200);
  EXPECT_EQ(tlsFramework.firstEvent().type(), Event::SUBSCRIBED);
}

TEST_F(MasterTlsTest, AgentWithoutCertificateCannotConnectWhenOneIsRequired) {
  MasterThread master(network(/*requireCert=*/true, /*downgrade=*/false));
  http::TlsOptions anonymous;
  anonymous.enabled = true;
  anonymous.verifyCert = true;
  anonymous.caFile = ca_.certFile;
  Result<std::shared_ptr<const http::TlsContext>> context =
      http::TlsContext::create(anonymous, http::TlsContext::Role::kClient);
  ASSERT_TRUE(context.ok()) << context.message();
  http::ClientOptions options;
  options.tls = *context;
  // The agent's first step, before it could send a registration claiming 64 cpus.
  Result<http::Connection> connection =
      http::Connection::connect("127.0.0.1", master.port(), Duration::milliseconds(2000), options);
  ASSERT_FALSE(connection.ok());
  EXPECT_NE(connection.message().find("alert handshake failure"), std::string::npos)
      << connection.message();
}

// The real harvest-agent, configured only through Mesos's environment names, registers with a
// master that requires client certificates.
TEST_F(MasterTlsTest, HarvestAgentRegistersOverMutualTlsFromMesosEnvironment) {
  MasterThread master(network(/*requireCert=*/true, /*downgrade=*/false));
  const std::string port = std::to_string(master.port());
  const pid_t agent = ::fork();
  if (agent == 0) {
    ::setenv("LIBPROCESS_SSL_ENABLED", "true", 1);
    ::setenv("LIBPROCESS_SSL_VERIFY_CERT", "true", 1);
    ::setenv("LIBPROCESS_SSL_CA_FILE", ca_.certFile.c_str(), 1);
    ::setenv("LIBPROCESS_SSL_CERT_FILE", clientCert_.certFile.c_str(), 1);
    ::setenv("LIBPROCESS_SSL_KEY_FILE", clientCert_.keyFile.c_str(), 1);
    std::vector<std::string> args = {HARVEST_AGENT_BIN,   "--master=127.0.0.1:" + port,
                                     "--id=tls-agent",    "--resources=cpus:2;mem:1024",
                                     "--duration=20secs", "--minloglevel=2"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ASSERT_GT(agent, 0);
  ProcessClientTls tls(clientContext());  // The test reads /master/state over TLS too.
  std::vector<Struct> agents;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (agents.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    agents = entries(state(master.port()), "slaves");
  }
  ::kill(agent, SIGTERM);
  int status = 0;
  ::waitpid(agent, &status, 0);
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(field(agents[0], "id"), "tls-agent");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(MasterTlsTest, UnreadableCertificateFailsStartWithTheReason) {
  NetworkOptions options = network(false, false);
  options.port = 0;
  options.tls.certFile = pki_.path("missing.crt");
  Result<std::unique_ptr<NetworkMaster>> started = NetworkMaster::start(options, fastOptions());
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.message().find("cannot load the certificate file '" + options.tls.certFile),
            std::string::npos)
      << started.message();
}

}  // namespace
}  // namespace harvest::master
