// harvest, the operators' command line, against a live master: each command's table exactly,
// --json as the master answered, and the errors an operator meets (no master there, a refused
// credential, a principal the ACLs stop, a mistake in the command line).
#include <google/protobuf/struct.pb.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/master_client.h"
#include "testing/cluster.h"
#include "testing/operator_client.h"

namespace harvest::cli {
namespace {

using namespace testkit;  // NOLINT: the fakes are these tests' vocabulary.

struct Ran {
  int exit = -1;
  std::string out, err;
};

Ran run(uint16_t port, const std::vector<std::string>& words, bool json = false,
        std::optional<http::Credential> credential = std::nullopt) {
  MasterClient client(HostPort{"127.0.0.1", port}, std::move(credential), Duration::seconds(5));
  std::ostringstream out, err;
  Ran ran;
  ran.exit = runCommand(words, client, json, out, err);
  ran.out = out.str();
  ran.err = err.str();
  return ran;
}

// A cluster with one task running: t1 (cpus:1;mem:128) of the framework on a1, the rest of the
// agent filtered away from it for long enough that nothing is offered while the test reads.
class CliTest : public ::testing::Test {
 protected:
  CliTest() {
    const v1::Offer offer = cluster_.framework.offer();
    cluster_.framework.call(acceptCall(
        offer, {launch({taskInfo("t1", offer.agent_id().value(), "cpus:1;mem:128")})}, 1000));
    std::optional<RunTask> task = cluster_.agent.expectRunTask();
    EXPECT_TRUE(task.has_value());
    if (task) {
      EXPECT_EQ(cluster_.agent.status(*task, TaskState::kRunning), 202);
    }
    cluster_.framework.update();
  }
  uint16_t port() const { return cluster_.master.port(); }
  const std::string& framework() const { return cluster_.framework.id(); }

  Cluster cluster_;
};

TEST_F(CliTest, ListsAgentsFrameworksTasksAndRolesAsTables) {
  Ran agents = run(port(), {"agents"});
  EXPECT_EQ(agents.exit, 0) << agents.err;
  EXPECT_EQ(agents.out,
            "ID  HOSTNAME  ACTIVE  TOTAL             USED            OFFERED\n"
            "a1  a1        yes     cpus:8;mem:16384  cpus:1;mem:128  -\n");
  Ran frameworks = run(port(), {"frameworks"});
  EXPECT_EQ(frameworks.exit, 0) << frameworks.err;
  const std::string pad(framework().size() - 2, ' ');
  EXPECT_EQ(frameworks.out, "ID" + pad + "  NAME  ROLES  ACTIVE  CONNECTED  OFFERS  USED\n" +
                                framework() + "  fw    web    yes     yes        0       " +
                                "cpus:1;mem:128\n");
  Ran tasks = run(port(), {"tasks"});
  EXPECT_EQ(tasks.exit, 0) << tasks.err;
  // The framework column is as wide as the framework's id.
  const std::string frameworkHeader = "FRAMEWORK" + std::string(framework().size() - 9, ' ');
  EXPECT_EQ(tasks.out, "ID  " + frameworkHeader +
                           "  AGENT  STATE         REVOCABLE  RESOURCES\n"
                           "t1  " +
                           framework() + "  a1     TASK_RUNNING  no         cpus:1;mem:128\n");
  Ran roles = run(port(), {"roles"});
  EXPECT_EQ(roles.exit, 0) << roles.err;
  EXPECT_EQ(roles.out,
            "ROLE  WEIGHT  FRAMEWORKS  ALLOCATED\n"
            "web   1       1           cpus:1;mem:128\n");
  Ran state = run(port(), {"state"});
  EXPECT_EQ(state.exit, 0) << state.err;
  EXPECT_EQ(state.out,
            "WHAT                  COUNT\n"
            "agents                1\n"
            "frameworks            1\n"
            "completed frameworks  0\n"
            "tasks                 1\n"
            "completed tasks       0\n");
}

TEST_F(CliTest, JsonIsWhatTheMasterAnswered) {
  Ran agents = run(port(), {"agents"}, /*json=*/true);
  ASSERT_EQ(agents.exit, 0) << agents.err;
  google::protobuf::Struct parsed = parseJson(agents.out);
  const auto& list = parsed.fields().at("agents").list_value();
  ASSERT_EQ(list.values_size(), 1);
  EXPECT_EQ(list.values(0)
                .struct_value()
                .fields()
                .at("agent_info")
                .struct_value()
                .fields()
                .at("id")
                .struct_value()
                .fields()
                .at("value")
                .string_value(),
            "a1");
}

// The value at `path` (object keys; a number picks a list's entry) of a JSON text, as text.
std::string at(const std::string& json, const std::vector<std::string>& path) {
  google::protobuf::Value value;
  *value.mutable_struct_value() = parseJson(json);
  for (const std::string& step : path) {
    if (value.has_list_value()) {
      const size_t index = std::stoul(step);
      if (index >= static_cast<size_t>(value.list_value().values_size()))
        return "<no " + step + ">";
      value = google::protobuf::Value(value.list_value().values(static_cast<int>(index)));
    } else {
      auto found = value.struct_value().fields().find(step);
      if (found == value.struct_value().fields().end()) return "<no " + step + ">";
      value = google::protobuf::Value(found->second);
    }
  }
  if (value.has_string_value()) return value.string_value();
  if (value.has_number_value()) return std::to_string(value.number_value());
  return "<not text>";
}

TEST_F(CliTest, EveryReadingCommandAnswersJson) {
  ASSERT_EQ(run(port(), {"weights", "set", "web=2"}).exit, 0);
  ASSERT_EQ(run(port(), {"quota", "set", "web", "guarantees=cpus:1"}).exit, 0);
  const std::map<std::vector<std::string>, std::pair<std::vector<std::string>, std::string>>
      expected = {
          {{"frameworks"}, {{"frameworks", "0", "framework_info", "name"}, "fw"}},
          {{"tasks"}, {{"tasks", "0", "task_id", "value"}, "t1"}},
          {{"roles"}, {{"roles", "0", "name"}, "web"}},
          {{"weights", "get"}, {{"weight_infos", "0", "weight"}, "2.000000"}},
          {{"quota", "get"}, {{"status", "infos", "0", "role"}, "web"}},
          {{"state"}, {{"get_agents", "agents", "0", "agent_info", "hostname"}, "a1"}},
      };
  for (const auto& [command, answer] : expected) {
    const Ran ran = run(port(), command, /*json=*/true);
    ASSERT_EQ(ran.exit, 0) << command[0] << ": " << ran.err;
    EXPECT_EQ(at(ran.out, answer.first), answer.second) << command[0] << ":\n" << ran.out;
  }
}

TEST_F(CliTest, SetsAndReadsQuotaAndWeights) {
  Ran set = run(port(), {"quota", "set", "web", "guarantees=cpus:2", "limits=cpus:4;mem:1024"});
  EXPECT_EQ(set.exit, 0) << set.err;
  EXPECT_EQ(set.out, "quota of web set\n");
  Ran quota = run(port(), {"quota", "get"});
  EXPECT_EQ(quota.exit, 0) << quota.err;
  EXPECT_EQ(quota.out,
            "ROLE  GUARANTEES  LIMITS\n"
            "web   cpus:2      cpus:4;mem:1024\n");
  Ran weights = run(port(), {"weights", "set", "web=2.5", "batch=0.5"});
  EXPECT_EQ(weights.exit, 0) << weights.err;
  Ran read = run(port(), {"weights", "get"});
  EXPECT_EQ(read.exit, 0) << read.err;
  EXPECT_EQ(read.out,
            "ROLE   WEIGHT\n"
            "batch  0.5\n"
            "web    2.5\n");
}

TEST_F(CliTest, ReservesAndUnreserves) {
  // A changed total clears offer filters (Mesos's rule), so the framework would be offered the
  // rest of a1 again mid-test: it suppresses its offers first, and nothing is on offer here.
  ASSERT_EQ(cluster_.framework.call(rolesCall(Call::SUPPRESS, {"web"})).status, 202);
  Ran reserved = run(port(), {"reserve", "a1", "cpus(web):2"});
  EXPECT_EQ(reserved.exit, 0) << reserved.err;
  EXPECT_EQ(reserved.out, "reserved cpus(web):2 on a1\n");
  EXPECT_EQ(run(port(), {"agents"}).out,
            "ID  HOSTNAME  ACTIVE  TOTAL                         USED            OFFERED\n"
            "a1  a1        yes     cpus:6;cpus(web):2;mem:16384  cpus:1;mem:128  -\n");
  Ran unreserved = run(port(), {"unreserve", "a1", "cpus(web):2"});
  EXPECT_EQ(unreserved.exit, 0) << unreserved.err;
  EXPECT_EQ(run(port(), {"agents"}).out,
            "ID  HOSTNAME  ACTIVE  TOTAL             USED            OFFERED\n"
            "a1  a1        yes     cpus:8;mem:16384  cpus:1;mem:128  -\n");
}

TEST_F(CliTest, SchedulesAndStartsMaintenance) {
  TempFile schedule("schedule.json", R"({"windows": [{"machine_ids": [{"hostname": "a1"}],
      "unavailability": {"start": {"nanoseconds": 1000}, "duration": {"nanoseconds": 3600}}}]})");
  Ran set = run(port(), {"maintenance", "schedule", schedule.path()});
  EXPECT_EQ(set.exit, 0) << set.err;
  EXPECT_EQ(run(port(), {"maintenance", "schedule"}).out,
            "MACHINES  START_NS  DURATION_NS\n"
            "a1        1000      3600\n");
  Ran down = run(port(), {"maintenance", "start", "a1"});
  EXPECT_EQ(down.exit, 0) << down.err;
  EXPECT_EQ(down.out, "down for maintenance: a1\n");
  Ran up = run(port(), {"maintenance", "stop", "a1"});
  EXPECT_EQ(up.exit, 0) << up.err;
  EXPECT_EQ(up.out, "back up: a1\n");
}

TEST_F(CliTest, ExplainsWhyAFrameworkGetsNoOffers) {
  // The first question is answered (the master holds it until a cycle has recorded): the
  // rest of a1 is filtered away from the framework for the 1000 s its ACCEPT asked.
  Ran first = run(port(), {"explain", framework()});
  EXPECT_EQ(first.exit, 0) << first.err;
  EXPECT_TRUE(first.out.starts_with("AGENT  REASON    CYCLE  DETAIL\na1     filtered  "))
      << first.out;
  EXPECT_TRUE(first.out.find(" remaining_seconds=99") != std::string::npos) << first.out;
  Ran one = run(port(), {"explain", framework(), "a1"}, /*json=*/true);
  EXPECT_EQ(one.exit, 0) << one.err;
  EXPECT_TRUE(one.out.find("\"reason\":\"filtered\"") != std::string::npos) << one.out;
  Ran unknown = run(port(), {"explain", "nobody"});
  EXPECT_EQ(unknown.exit, 1);
}

TEST_F(CliTest, MistakesAndRefusalsAreSaidWithTheirExitCode) {
  Ran unknown = run(port(), {"agent"});
  EXPECT_EQ(unknown.exit, 2);
  EXPECT_TRUE(unknown.err.starts_with("harvest: unknown command 'agent'\ncommands:\n"));
  Ran badWeight = run(port(), {"weights", "set", "web=-1"});
  EXPECT_EQ(badWeight.exit, 2);
  EXPECT_TRUE(badWeight.err.starts_with(
      "harvest: 'web=-1': expected ROLE=WEIGHT with a positive WEIGHT\n"));
  Ran unreserved = run(port(), {"reserve", "a1", "cpus:2"});
  EXPECT_EQ(unreserved.exit, 2);
  // The master refuses a role name Mesos refuses (a leading '/'); its own words reach the
  // operator.
  Ran badRole = run(port(), {"quota", "set", "/web", "guarantees=cpus:1"});
  EXPECT_EQ(badRole.exit, 1);
  EXPECT_TRUE(badRole.err.starts_with("harvest: the master at 127.0.0.1:" + std::to_string(port()) +
                                      " refused the call: 400"))
      << badRole.err;
}

TEST(CliErrorsTest, NoMasterThereIsSaid) {
  uint16_t closed = 0;
  {
    MasterThread gone;
    closed = gone.port();
  }
  Ran ran = run(closed, {"agents"});
  EXPECT_EQ(ran.exit, 1);
  EXPECT_TRUE(ran.err.starts_with(
      "harvest: cannot reach the master at 127.0.0.1:" + std::to_string(closed) + ": "))
      << ran.err;
}

TEST(CliErrorsTest, CredentialsAndAclsAreSaid) {
  TempFile credentials("credentials", "ops secret-o\ndev secret-d\n");
  TempFile acls("acls", R"({"permissive": false,
      "update_weights": [{"principal": "ops", "roles": ["*"]}]})");
  NetworkOptions network;
  network.credentialsPath = credentials.path();
  network.aclsPath = acls.path();
  MasterThread master(network);
  Ran anonymous = run(master.port(), {"weights", "get"});
  EXPECT_EQ(anonymous.exit, 1);
  EXPECT_TRUE(anonymous.err.find("refused the credential (401") != std::string::npos)
      << anonymous.err;
  Ran dev =
      run(master.port(), {"weights", "set", "web=2"}, false, http::Credential{"dev", "secret-d"});
  EXPECT_EQ(dev.exit, 1);
  EXPECT_TRUE(dev.err.find("does not let this principal do that (403") != std::string::npos)
      << dev.err;
  Ran ops =
      run(master.port(), {"weights", "set", "web=2"}, false, http::Credential{"ops", "secret-o"});
  EXPECT_EQ(ops.exit, 0) << ops.err;
}

}  // namespace
}  // namespace harvest::cli
