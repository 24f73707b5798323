// The web UI as a person sees it: headless Chromium loads each page from a live master on
// loopback, runs its scripts, and the DOM it ends with must show exactly what /master/state
// says (agents, frameworks, roles, tasks, totals per kind, the allocator's explanation), with
// no console error. With HARVEST_WEBUI_SCREENSHOTS=DIR the pictures in the README are taken
// here too (webui-overview.png, webui-agents.png, webui-agent.png, webui-framework.png).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "headless_browser.h"
#include "testing/cluster.h"
#include "testing/forwarding_allocator.h"
#include "testing/operator_client.h"

namespace harvest::webui_test {
namespace {

using namespace testkit;  // NOLINT: the fakes are these tests' vocabulary.

// The text of each cell of the table row keyed `key` (data-key), tags inside cells dropped.
std::vector<std::string> rowCells(const std::string& dom, const std::string& key) {
  const size_t row = dom.find("data-key=\"" + key + "\"");
  if (row == std::string::npos) return {};
  const std::string tr = dom.substr(row, dom.find("</tr>", row) - row);
  std::vector<std::string> cells;
  static const std::regex cell("<td[^>]*>(.*?)</td>");
  static const std::regex tag("<[^>]*>");
  for (auto it = std::sregex_iterator(tr.begin(), tr.end(), cell); it != std::sregex_iterator();
       ++it) {
    cells.push_back(std::regex_replace((*it)[1].str(), tag, ""));
  }
  return cells;
}

// The text of the element marked data-testid="id" (no nested elements).
std::string testText(const std::string& dom, const std::string& id) {
  const std::regex marked("data-testid=\"" + id + "\"[^>]*>([^<]*)<");
  std::smatch match;
  return std::regex_search(dom, match, marked) ? match[1].str() : "<missing " + id + ">";
}

// Console messages and uncaught errors are logged with these words.
bool loggedErrors(const std::string& log) {
  return log.find("CONSOLE") != std::string::npos || log.find("Uncaught") != std::string::npos;
}

// Two agents (a1 with 2 cpus reserved to analytics) and a framework of role web running t1 on
// a1; both agents' other resources refused to it for 1000 s, so nothing is on offer while the
// pages are read.
class WebUiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::optional<std::string> found = findChromium();
    if (!found) GTEST_SKIP() << "chromium is not installed (bash scripts/install-deps.sh does)";
    chromium_ = *found;
    ASSERT_EQ(a1_.registerAgent(), 200);
    ASSERT_EQ(a2_.registerAgent(), 200);
    ASSERT_EQ(framework_.subscribe(frameworkInfo("web")), 200);
    // One offer per agent, in one OFFERS event or two.
    std::vector<v1::Offer> offers = framework_.offers();
    if (offers.size() == 1) {
      for (const v1::Offer& more : framework_.offers()) offers.push_back(more);
    }
    ASSERT_EQ(offers.size(), 2u);
    for (const v1::Offer& offer : offers) {
      if (offer.agent_id().value() == "a1") {
        ASSERT_EQ(
            framework_
                .call(acceptCall(offer, {launch({taskInfo("t1", "a1", "cpus:1;mem:128")})}, 1000))
                .status,
            202);
      } else {
        ASSERT_EQ(framework_.call(declineCall(offer, 1000)).status, 202);
      }
    }
    t1_ = a1_.expectRunTask();
    ASSERT_TRUE(t1_.has_value());
    ASSERT_EQ(a1_.status(*t1_, TaskState::kRunning), 202);
    framework_.update();
  }
  void TearDown() override { master_.stop(); }

  std::string url(const std::string& hash) const {
    return "http://127.0.0.1:" + std::to_string(master_.port()) + "/#" + hash;
  }
  // The page's DOM after its scripts ran for two polls (at 0 and 1 s).
  std::string page(const std::string& hash) {
    PageRun run = loadPage(chromium_, url(hash), 1500);
    EXPECT_TRUE(run.finished) << hash;
    EXPECT_FALSE(loggedErrors(run.log)) << hash << " logged:\n" << run.log;
    return run.dom;
  }
  void screenshot(const std::string& hash, const std::string& name) {
    const char* dir = std::getenv("HARVEST_WEBUI_SCREENSHOTS");
    if (dir == nullptr) return;
    PageRun run = loadPage(chromium_, url(hash), 2500, std::string(dir) + "/" + name, 1200, 760);
    EXPECT_TRUE(run.finished);
  }

  // Host affinity on, so the agent page has a role history to show.
  static MasterOptions withHostAffinity() {
    MasterOptions options = fastOptions();
    options.moduleParameters["host_affinity"] = "true";
    return options;
  }

  std::string chromium_;
  MasterThread master_{NetworkOptions{}, withHostAffinity()};
  FakeAgent a1_{master_.port(), "a1", "cpus:8;mem:16384;cpus(analytics):2"};
  FakeAgent a2_{master_.port(), "a2", "cpus:4;mem:8192"};
  FrameworkClient framework_{master_.port()};
  std::optional<RunTask> t1_;
};

TEST_F(WebUiTest, OverviewShowsTheCountsAndTotalsOfMasterState) {
  const Struct state = testkit::state(master_.port());
  const std::string dom = page("/");
  EXPECT_EQ(testText(dom, "agents-count"), std::to_string(entries(state, "slaves").size()));
  EXPECT_EQ(testText(dom, "agents-count"), "2");
  EXPECT_EQ(testText(dom, "frameworks-count"), "1");
  EXPECT_EQ(testText(dom, "tasks-running"), "1");
  // kind, total, used, offered, reserved, reserved idle, lent revocable, lent headroom: a1's
  // 2 cpus reserved to analytics are all idle (t1 runs on unreserved cpus).
  double cpus = 0, used = 0;
  for (const Struct& agent : entries(state, "slaves")) {
    cpus += number(object(agent, "resources"), "cpus");
    used += number(object(agent, "used_resources"), "cpus");
  }
  EXPECT_EQ(cpus, 14);
  EXPECT_EQ(used, 1);
  EXPECT_EQ(rowCells(dom, "cpus"),
            (std::vector<std::string>{"cpus", "14", "1", "0", "2", "2", "0", "0"}));
  EXPECT_EQ(rowCells(dom, "mem"),
            (std::vector<std::string>{"mem", "24576", "128", "0", "0", "0", "0", "0"}));
  // The live charts: one line each, with its latest value (nothing rescinded or evicted here).
  size_t lines = 0;
  for (size_t at = dom.find("<polyline"); at != std::string::npos;
       at = dom.find("<polyline", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 4u);
  EXPECT_NE(dom.find(">allocation cycle p50 ms (now "), std::string::npos);
  EXPECT_NE(dom.find(">offers / s (now "), std::string::npos);
  EXPECT_NE(dom.find(">rescinds / s (now 0)<"), std::string::npos);
  EXPECT_NE(dom.find(">evictions / s (now 0)<"), std::string::npos);
  // The leader and its version, as /master/state says them.
  const Struct leader = object(state, "leader_info");
  const std::regex shown("<span id=\"leader\">([^<]*)<");
  std::smatch header;
  ASSERT_TRUE(std::regex_search(dom, header, shown)) << dom;
  EXPECT_EQ(header[1].str(), "leader " + field(object(leader, "address"), "hostname") + ":" +
                                 std::to_string(master_.port()) + " · version " +
                                 field(state, "version"));
  screenshot("/", "webui-overview.png");
}

TEST_F(WebUiTest, AgentsPageAndAnAgentsOwnPage) {
  const std::string dom = page("/agents");
  EXPECT_EQ(testText(dom, "agents-count"), "2 of 2");
  // id, hostname, active, cpus, cpus used, cpus offered, mem, mem used, reserved for.
  EXPECT_EQ(rowCells(dom, "a1"), (std::vector<std::string>{"a1", "a1", "yes", "10", "1", "0",
                                                           "16384", "128", "analytics"}));
  EXPECT_EQ(rowCells(dom, "a2"),
            (std::vector<std::string>{"a2", "a2", "yes", "4", "0", "0", "8192", "0", ""}));
  screenshot("/agents", "webui-agents.png");

  const std::string agent = page("/agents/a1");
  EXPECT_EQ(testText(agent, "agent-resources"),
            "total cpus:10 mem:16384 · used cpus:1 mem:128 · offered -");
  EXPECT_EQ(testText(agent, "agent-lent"), "lent as revocable: in use - · offered -");
  EXPECT_NE(agent.find("t1 of " + framework_.id() + ": TASK_RUNNING, cpus:1 mem:128"),
            std::string::npos);
  EXPECT_NE(agent.find("analytics: cpus:2"), std::string::npos);
  // role, allocations, has history, held first, failures, last used: web runs t1 there and
  // has ended nothing yet, so a1 is not yet where web would go back first.
  EXPECT_EQ(rowCells(agent, "web"), (std::vector<std::string>{"web", "1", "no", "no", "0", "-"}));
  EXPECT_EQ(testText(page("/agents/a2"), "role-history"),
            "none (no role has run here, or host affinity is off)");
}

// A task that ended normally leaves its role's history on the agent: the page shows a1 where
// web would go back first (web suppressed its offers first, so nothing offers a1 to it again).
TEST_F(WebUiTest, AgentPageShowsTheRoleHistoryATaskLeaves) {
  ASSERT_EQ(framework_.call(rolesCall(Call::SUPPRESS, {"web"})).status, 202);
  a1_.finish(*t1_, TaskState::kFinished);
  const std::string agent = page("/agents/a1");
  const std::vector<std::string> web = rowCells(agent, "web");
  ASSERT_EQ(web.size(), 6u) << agent;
  EXPECT_EQ(std::vector<std::string>(web.begin(), web.begin() + 5),
            (std::vector<std::string>{"web", "0", "yes", "yes", "0"}));
  // Ended a moment before the page was read (a browser's start and two polls).
  std::smatch ago;
  ASSERT_TRUE(std::regex_match(web[5], ago, std::regex("([0-9]+) s ago"))) << web[5];
  EXPECT_LT(std::stoi(ago[1].str()), 30);
  screenshot("/agents/a1", "webui-agent.png");
}

TEST_F(WebUiTest, FrameworksPageAndWhyAFrameworkGetsNoOffers) {
  const std::string dom = page("/frameworks");
  // id, name, roles, active, connected, tasks, offers, cpus used, mem used.
  EXPECT_EQ(
      rowCells(dom, framework_.id()),
      (std::vector<std::string>{framework_.id(), "fw", "web", "yes", "yes", "1", "0", "1", "128"}));
  // The framework's page asks /allocator/explain; its first question is answered after the
  // next cycle: both agents refused to it for 1000 s.
  const std::string own = page("/frameworks/" + framework_.id());
  const std::vector<std::string> a1 = rowCells(own, "a1"), a2 = rowCells(own, "a2");
  ASSERT_EQ(a1.size(), 3u) << own;
  ASSERT_EQ(a2.size(), 3u) << own;
  EXPECT_EQ(a1[1], "filtered");
  EXPECT_EQ(a2[1], "filtered");
  EXPECT_EQ(testText(own, "framework-state"),
            "connected (failover timeout 0 s) · suppressed roles: none");
  // Refused for 1000 s a few seconds ago.
  ASSERT_TRUE(a2[2].starts_with("remaining_seconds=")) << a2[2];
  const double remaining = std::stod(a2[2].substr(a2[2].find('=') + 1));
  EXPECT_GT(remaining, 900);
  EXPECT_LE(remaining, 1000);
  screenshot("/frameworks/" + framework_.id(), "webui-framework.png");
}

TEST_F(WebUiTest, RolesAndTasksPages) {
  const http::ClientResponse quota = request(
      master_.port(), "POST", "/api/v1", {{"Content-Type", kJsonType}, {"Accept", kJsonType}},
      R"({"type":"UPDATE_QUOTA","update_quota":{"quota_configs":[{"role":"web",)"
      R"("guarantees":{"cpus":{"value":3}},"limits":{"cpus":{"value":6}}}]}})");
  ASSERT_EQ(quota.status, 200) << quota.body;
  const std::string roles = page("/roles");
  // role, weight, frameworks, allocated, reserved, guarantee, limit, consumed, headroom,
  // dominant share: web's t1 consumes 1 of the 3 cpus guaranteed (and its mem), so 2 cpus
  // are headroom.
  EXPECT_EQ(rowCells(roles, "web"),
            (std::vector<std::string>{"web", "1", "1", "cpus:1 mem:128", "-", "cpus:3", "cpus:6",
                                      "cpus:1 mem:128", "cpus:2", "0.07"}));
  EXPECT_EQ(
      rowCells(roles, "analytics"),
      (std::vector<std::string>{"analytics", "1", "0", "-", "cpus:2", "-", "-", "-", "-", "0"}));
  const std::string tasks = page("/tasks");
  EXPECT_EQ(testText(tasks, "tasks-count"), "1 of 1");
  EXPECT_EQ(rowCells(tasks, framework_.id() + "/t1"),
            (std::vector<std::string>{"t1", framework_.id(), "a1", "TASK_RUNNING", "1", "128", "no",
                                      "sandbox"}));
  EXPECT_NE(tasks.find("href=\"#/agents/a1/sandbox/" + framework_.id() + "/t1\""),
            std::string::npos)
      << tasks;
}

TEST(WebUiServingTest, TheUiIsBehindTheMastersAuthentication) {
  TempFile credentials("credentials", "ops secret-o\n");
  NetworkOptions network;
  network.credentialsPath = credentials.path();
  MasterThread master(network);
  const http::ClientResponse anonymous = request(master.port(), "GET", "/");
  EXPECT_EQ(anonymous.status, 401);
  const std::string* challenge = anonymous.header("www-authenticate");
  ASSERT_NE(challenge, nullptr);
  EXPECT_EQ(*challenge, "Basic realm=\"harvest\"");
  const http::ClientResponse page =
      request(master.port(), "GET", "/", basicAuth("ops", "secret-o"));
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(*page.header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<script src=\"/webui/app.js\"></script>"), std::string::npos);
  EXPECT_EQ(request(master.port(), "GET", "/webui/app.js", basicAuth("ops", "secret-o")).status,
            200);
  EXPECT_EQ(request(master.port(), "GET", "/webui/missing.js", basicAuth("ops", "secret-o")).status,
            404);
}

// In a browser, with the credentials in the address: the page and every read it makes carry
// them (the browser's authentication of the origin), and it shows the cluster.
TEST(WebUiServingTest, APersonWithTheCredentialsSeesTheCluster) {
  std::optional<std::string> chromium = findChromium();
  if (!chromium) GTEST_SKIP() << "chromium is not installed (bash scripts/install-deps.sh does)";
  TempFile credentials("credentials", "ops secret-o\n");
  NetworkOptions network;
  network.credentialsPath = credentials.path();
  MasterThread master(network);
  const std::string at = "127.0.0.1:" + std::to_string(master.port()) + "/#/";
  PageRun run = loadPage(*chromium, "http://ops:secret-o@" + at, 1500);
  ASSERT_TRUE(run.finished);
  EXPECT_EQ(testText(run.dom, "agents-count"), "0");
  EXPECT_EQ(testText(run.dom, "frameworks-count"), "0");
  EXPECT_EQ(run.dom.find("cannot read the master"), std::string::npos) << run.dom;
  EXPECT_FALSE(loggedErrors(run.log)) << run.log;
  // Without them the master answers the page 401: nothing of the cluster is shown.
  PageRun anonymous = loadPage(*chromium, "http://" + at, 1500);
  EXPECT_EQ(anonymous.dom.find("agents-count"), std::string::npos) << anonymous.dom;
  master.stop();
}

// The module without the role-history query (an allocator of another make): the one call it
// lacks answers as Allocator's default does.
class WithoutRoleHistory final : public ForwardingAllocator {
 public:
  using ForwardingAllocator::ForwardingAllocator;
  Result<AgentRoleHistory> roleHistory(const std::string& agent) const override {
    return Allocator::roleHistory(agent);
  }
};

TEST(WebUiModuleTest, AnAgentPageSaysSoWhenTheAllocatorKeepsNoRoleHistory) {
  std::optional<std::string> chromium = findChromium();
  if (!chromium) GTEST_SKIP() << "chromium is not installed (bash scripts/install-deps.sh does)";
  MasterOptions options = fastOptions();
  options.decorateAllocator = [](std::unique_ptr<Allocator> inner) {
    return std::make_unique<WithoutRoleHistory>(std::move(inner));
  };
  MasterThread master(NetworkOptions{}, options);
  FakeAgent a1(master.port(), "a1", "cpus:2;mem:1024");
  ASSERT_EQ(a1.registerAgent(), 200);
  EXPECT_EQ(request(master.port(), "GET", "/allocator/role_history?agent=a1").status, 501);

  PageRun run = loadPage(
      *chromium, "http://127.0.0.1:" + std::to_string(master.port()) + "/#/agents/a1", 1500);
  ASSERT_TRUE(run.finished);
  EXPECT_EQ(testText(run.dom, "role-history"),
            "not kept by this allocator (it has no host affinity)");
  // The rest of the page is read as ever, and the master is not said to be unreadable.
  EXPECT_EQ(testText(run.dom, "agent-resources"), "total cpus:2 mem:1024 · used - · offered -");
  EXPECT_EQ(run.dom.find("cannot read the master"), std::string::npos) << run.dom;
  EXPECT_FALSE(loggedErrors(run.log)) << run.log;
  master.stop();
}

}  // namespace
}  // namespace harvest::webui_test
