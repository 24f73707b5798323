// The `harvest` program itself, as an operator runs it: its flags, what it prints on stdout
// and stderr, and its exit code, against a master this test starts. cli_test.cpp covers each
// command through the library; this covers what main() adds around it (parsing --master and
// the other flags, refusing a bad one before any call).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ha/leader_contender.h"
#include "ha/master_info.h"
#include "master/ha/standby_server.h"
#include "test_pki.h"
#include "testing/cluster.h"
#include "tests/ha/zookeeper_server.h"

namespace harvest::cli {
namespace {

using namespace testkit;  // NOLINT: the fakes are these tests' vocabulary.

struct Exited {
  int code = -1;
  std::string out, err;
};

std::string contentsOf(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs HARVEST_CLI_BIN with `args`, its stdout and stderr in temporary files.
Exited runHarvest(const std::vector<std::string>& args) {
  TempFile out("stdout", ""), err("stderr", "");
  const pid_t child = ::fork();
  if (child == 0) {
    const int outFd = ::open(out.path().c_str(), O_WRONLY | O_TRUNC);
    const int errFd = ::open(err.path().c_str(), O_WRONLY | O_TRUNC);
    if (outFd < 0 || errFd < 0 || ::dup2(outFd, 1) < 0 || ::dup2(errFd, 2) < 0) ::_exit(126);
    std::vector<std::string> words = {HARVEST_CLI_BIN};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  Exited exited;
  int status = 0;
  if (child > 0 && ::waitpid(child, &status, 0) == child && WIFEXITED(status)) {
    exited.code = WEXITSTATUS(status);
  }
  exited.out = contentsOf(out.path());
  exited.err = contentsOf(err.path());
  return exited;
}

class CliBinaryTest : public ::testing::Test {
 protected:
  std::string masterFlag() const { return "--master=127.0.0.1:" + std::to_string(port()); }
  uint16_t port() const { return cluster_.master.port(); }

  Cluster cluster_;  // a1 (cpus:8;mem:16384) and framework "web", no task.
};

TEST_F(CliBinaryTest, ReadsTheStateAsATable) {
  const Exited state = runHarvest({masterFlag(), "state"});
  EXPECT_EQ(state.code, 0) << state.err;
  EXPECT_EQ(state.out,
            "WHAT                  COUNT\n"
            "agents                1\n"
            "frameworks            1\n"
            "completed frameworks  0\n"
            "tasks                 0\n"
            "completed tasks       0\n");
  EXPECT_EQ(state.err, "");
}

TEST_F(CliBinaryTest, SetsWeightsAndReadsThemBack) {
  const Exited set = runHarvest({masterFlag(), "weights", "set", "web=2.5", "batch=0.5"});
  EXPECT_EQ(set.code, 0) << set.err;
  EXPECT_EQ(set.out, "weights set\n");
  const Exited read = runHarvest({masterFlag(), "weights", "get"});
  EXPECT_EQ(read.code, 0) << read.err;
  EXPECT_EQ(read.out,
            "ROLE   WEIGHT\n"
            "batch  0.5\n"
            "web    2.5\n");
}

TEST_F(CliBinaryTest, ABadFlagIsRefusedWithExitTwoBeforeAnyCall) {
  const Exited unknown = runHarvest({masterFlag(), "--colour", "state"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_EQ(unknown.out, "");
  EXPECT_EQ(unknown.err, "harvest: unknown argument '--colour' (see --help)\n");
  const Exited timeout = runHarvest({masterFlag(), "--timeout=0secs", "weights", "set", "web=9"});
  EXPECT_EQ(timeout.code, 2);
  EXPECT_EQ(timeout.err, "harvest: bad value '0secs' for --timeout: at least 1ms\n");
  // Refused before the call: the weight is still the default.
  const Exited read = runHarvest({masterFlag(), "weights", "get"});
  EXPECT_EQ(read.code, 0) << read.err;
  EXPECT_EQ(read.out, "ROLE  WEIGHT\n");
}

// --master=zk://...: the program finds the leader where masters publish it (Mesos's
// json.info_ nodes), with and without ZooKeeper credentials, and says when nobody leads.
TEST_F(CliBinaryTest, FindsTheLeaderThroughZooKeeper) {
  auto zooKeeper = ha::testing::ZooKeeperServer::start();
  ASSERT_TRUE(zooKeeper.ok()) << zooKeeper.message();
  const std::string servers = "127.0.0.1:" + std::to_string((*zooKeeper)->port());
  ha::ZooKeeperSession::Options options;
  options.connectString = servers;
  options.digestCredentials = "ops:s3cret";
  auto session = ha::ZooKeeperSession::connect(options);
  ASSERT_TRUE(session.ok()) << session.message();
  auto info = ha::makeMasterInfo("m1", "127.0.0.1", port(), "localhost", "test");
  ASSERT_TRUE(info.ok());
  auto contender = ha::LeaderContender::start(**session, "/harvest", ha::masterInfoJson(*info), {});
  ASSERT_TRUE(contender.ok()) << contender.message();

  for (const std::string& url :
       {"zk://" + servers + "/harvest", "zk://ops:s3cret@" + servers + "/harvest"}) {
    const Exited state = runHarvest({"--master=" + url, "state"});
    EXPECT_EQ(state.code, 0) << url << ": " << state.err;
    EXPECT_EQ(state.out.substr(0, state.out.find('\n', state.out.find("agents"))),
              "WHAT                  COUNT\nagents                1")
        << url;
  }
  // Mesos's flag name does the same.
  const Exited byZk = runHarvest({"--zk=zk://ops:s3cret@" + servers + "/harvest", "state"});
  EXPECT_EQ(byZk.code, 0) << byZk.err;
  EXPECT_EQ(byZk.out.substr(0, byZk.out.find('\n', byZk.out.find("agents"))),
            "WHAT                  COUNT\nagents                1");
  const Exited both = runHarvest({"--master=127.0.0.1:" + std::to_string(port()),
                                  "--zk=zk://ops:s3cret@" + servers + "/harvest", "state"});
  EXPECT_EQ(both.code, 2);
  EXPECT_EQ(both.err, "harvest: bad value 'zk://ops:***@" + servers +
                          "/harvest' for --zk: give --master or --zk, not both\n");
  const Exited notZk = runHarvest({"--zk=" + servers, "state"});
  EXPECT_EQ(notZk.code, 2);
  EXPECT_EQ(notZk.err, "harvest: bad value '" + servers + "' for --zk: a zk:// URL\n");
  const Exited badPath = runHarvest({"--zk=zk://ops:s3cret@" + servers + "/", "state"});
  EXPECT_EQ(badPath.code, 2);
  EXPECT_EQ(badPath.err.find("s3cret"), std::string::npos) << badPath.err;

  const Exited nobody = runHarvest(
      {"--timeout=1secs", "--master=zk://ops:s3cret@" + servers + "/elsewhere", "state"});
  EXPECT_NE(nobody.code, 0);
  EXPECT_EQ(nobody.out, "");
  EXPECT_NE(nobody.err.find("no master leads under zk://ops:***@" + servers + "/elsewhere"),
            std::string::npos)
      << nobody.err;
  EXPECT_EQ(nobody.err.find("s3cret"), std::string::npos) << "the password is never printed";
}

// A standby answers with a redirect to the leader, which the program follows.
TEST_F(CliBinaryTest, FollowsAStandbysRedirectToTheLeader) {
  auto started = master::StandbyServer::start(http::ServerOptions{});
  ASSERT_TRUE(started.ok()) << started.message();
  std::unique_ptr<master::StandbyServer> standby = std::move(started).value();
  auto leader = ha::makeMasterInfo("m1", "127.0.0.1", port(), "127.0.0.1", "test");
  ASSERT_TRUE(leader.ok());
  standby->setLeader(*leader);
  std::atomic<bool> stop{false};
  std::thread serving([&] {
    while (!stop) standby->poll(Duration::milliseconds(20));
  });
  const Exited state =
      runHarvest({"--master=127.0.0.1:" + std::to_string(standby->port()), "state"});
  stop = true;
  serving.join();
  EXPECT_EQ(state.code, 0) << state.err;
  EXPECT_EQ(state.out.substr(0, state.out.find('\n', state.out.find("agents"))),
            "WHAT                  COUNT\nagents                1");
}

// Over TLS with the --ssl_* flags every program takes: the master requires a client certificate
// signed by its CA, so the CLI reaches it only with its own.
TEST(CliTlsTest, ReachesAMasterThatRequiresClientCertificates) {
  TestPki pki;
  const PemFiles ca = pki.makeCa("ca");
  const PemFiles masterCert = pki.issue(ca, "master");
  const PemFiles operatorCert = pki.issue(ca, "operator");
  NetworkOptions network;
  network.tls.enabled = true;
  network.tls.certFile = masterCert.certFile;
  network.tls.keyFile = masterCert.keyFile;
  network.tls.caFile = ca.certFile;
  network.tls.requireCert = true;
  MasterThread master(network);
  const std::string at = "--master=127.0.0.1:" + std::to_string(master.port());
  const std::vector<std::string> tls = {"--ssl_enabled", "--ssl_verify_cert",
                                        "--ssl_ca_file=" + ca.certFile};

  std::vector<std::string> withCert = tls;
  withCert.insert(withCert.end(), {"--ssl_cert_file=" + operatorCert.certFile,
                                   "--ssl_key_file=" + operatorCert.keyFile, at, "weights", "get"});
  const Exited read = runHarvest(withCert);
  EXPECT_EQ(read.code, 0) << read.err;
  EXPECT_EQ(read.out, "ROLE  WEIGHT\n");

  std::vector<std::string> withoutCert = tls;
  withoutCert.insert(withoutCert.end(), {at, "weights", "get"});
  const Exited refused = runHarvest(withoutCert);
  EXPECT_EQ(refused.code, 1);
  EXPECT_EQ(refused.out, "");
  const std::string address = "127.0.0.1:" + std::to_string(master.port());
  EXPECT_TRUE(refused.err.starts_with("harvest: cannot reach the master at " + address +
                                      ": TLS handshake with " + address + " failed"))
      << refused.err;

  const Exited plaintext = runHarvest({at, "weights", "get"});
  EXPECT_EQ(plaintext.code, 1);
  EXPECT_EQ(plaintext.out, "");
  EXPECT_TRUE(plaintext.err.starts_with("harvest: the master at " + address + " did not answer"))
      << plaintext.err;
  master.stop();
}

}  // namespace
}  // namespace harvest::cli
