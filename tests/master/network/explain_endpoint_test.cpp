// GET /allocator/explain: the allocator's decision log over HTTP, turned on by the first
// query (answered once the next cycle has recorded), behind the same authentication as the other
// operator endpoints, with a strict query.
#include <google/protobuf/struct.pb.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "testing/cluster.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.

constexpr const char* kExplain = "/allocator/explain?framework=";

// Asks until the answer for the framework's agents says `reason` (the allocator decides on
// its own timer), or the time is up; the last answer either way.
Struct explainUntil(uint16_t port, const std::string& target, const std::string& reason,
                    const http::Headers& auth = {}) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  Struct answer;
  while (std::chrono::steady_clock::now() < deadline) {
    const http::ClientResponse response = request(port, "GET", target, auth);
    EXPECT_EQ(response.status, 200) << response.body;
    answer = parseJson(response.body);
    const std::vector<Struct> agents = entries(answer, "agents");
    if (!agents.empty() && field(agents[0], "reason") == reason) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return answer;
}

TEST(ExplainEndpointTest, FirstQueryStartsRecordingAndADeclineIsExplainedAsFiltered) {
  Cluster cluster;
  const v1::Offer offer = cluster.framework.offer();
  const std::string target = kExplain + cluster.framework.id();

  // The first query turns recording on and is answered by the next cycle's record (cycles run
  // every 50 ms here), not with an empty "not recording yet".
  const auto asked = std::chrono::steady_clock::now();
  const http::ClientResponse first = request(cluster.master.port(), "GET", target);
  EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(2));
  ASSERT_EQ(first.status, 200) << first.body;
  const Struct recorded = parseJson(first.body);
  EXPECT_TRUE(flag(recorded, "recording"));
  EXPECT_EQ(field(recorded, "framework_id"), cluster.framework.id());
  const std::vector<Struct> holding = entries(recorded, "agents");
  ASSERT_EQ(holding.size(), 1u) << first.body;
  EXPECT_EQ(field(holding[0], "agent_id"), "a1");
  // Its one agent is all in the offer the framework holds.
  EXPECT_EQ(field(holding[0], "reason"), "fully_allocated") << first.body;

  ASSERT_EQ(cluster.framework.call(declineCall(offer, 3600)).status, 202);
  const Struct on = explainUntil(cluster.master.port(), target, "filtered");
  EXPECT_TRUE(flag(on, "recording"));
  const std::vector<Struct> agents = entries(on, "agents");
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(field(agents[0], "agent_id"), "a1");
  EXPECT_EQ(field(agents[0], "reason"), "filtered");
  // Refused for an hour a moment ago.
  EXPECT_GT(number(agents[0], "remaining_seconds"), 3500);
  EXPECT_LE(number(agents[0], "remaining_seconds"), 3600);
  EXPECT_EQ(number(object(on, "reasons"), "filtered"), 1);

  // One agent asked for by id, the framework id escaped as a form would.
  std::string escaped = "%" + std::string(1, "0123456789ABCDEF"[cluster.framework.id()[0] / 16]) +
                        std::string(1, "0123456789ABCDEF"[cluster.framework.id()[0] % 16]) +
                        cluster.framework.id().substr(1);
  const http::ClientResponse one =
      request(cluster.master.port(), "GET", kExplain + escaped + "&agent=a1");
  ASSERT_EQ(one.status, 200) << one.body;
  ASSERT_EQ(entries(parseJson(one.body), "agents").size(), 1u);
  EXPECT_EQ(field(entries(parseJson(one.body), "agents")[0], "reason"), "filtered");
}

TEST(ExplainEndpointTest, BadQueriesAreRefused) {
  Cluster cluster;
  const uint16_t port = cluster.master.port();
  const std::string id = cluster.framework.id();
  EXPECT_EQ(request(port, "GET", "/allocator/explain").status, 400);
  EXPECT_EQ(request(port, "GET", "/allocator/explain?agent=a1").status, 400);
  EXPECT_EQ(request(port, "GET", kExplain + id + "&framework=" + id).status, 400);
  EXPECT_EQ(request(port, "GET", kExplain + id + "&role=web").status, 400);
  EXPECT_EQ(request(port, "GET", kExplain + id + "%zz").status, 400);
  EXPECT_EQ(request(port, "GET", kExplain + id + "%4").status, 400);
  EXPECT_EQ(request(port, "GET", std::string(kExplain) + "nobody").status, 404);
  EXPECT_EQ(request(port, "GET", kExplain + id + "&agent=nowhere").status, 404);
  EXPECT_EQ(request(port, "POST", kExplain + id).status, 405);
}

TEST(ExplainEndpointTest, AttackerWithoutCredentialsReadsNoExplanation) {
  TempFile credentials("credentials", "ops secret-o\nagents secret-a\nweb secret-w\n");
  NetworkOptions network;
  network.credentialsPath = credentials.path();
  MasterThread master(network);
  FakeAgent agent(master.port(), "a1", "cpus:8;mem:16384", basicAuth("agents", "secret-a"));
  ASSERT_EQ(agent.registerAgent(), 200);
  FrameworkClient framework(master.port(), Format::kJson, basicAuth("web", "secret-w"));
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  const std::string target = kExplain + framework.id();

  const http::ClientResponse anonymous = request(master.port(), "GET", target);
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(anonymous.body.find(framework.id()), std::string::npos);
  EXPECT_EQ(request(master.port(), "GET", target, basicAuth("ops", "secret-w")).status, 401);
  // Refused before the query is read: an unknown framework is not told apart from a known one.
  EXPECT_EQ(request(master.port(), "GET", std::string(kExplain) + "nobody").status, 401);
  EXPECT_EQ(request(master.port(), "GET", target, basicAuth("ops", "secret-o")).status, 200);
  EXPECT_EQ(metrics(master.port(), basicAuth("ops", "secret-o")).at("master/http/refused_401"), 3);
  master.stop();
}

}  // namespace
}  // namespace harvest::master
