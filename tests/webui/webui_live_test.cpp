// The web UI as an operator keeps it open: one browser stays on a page while the cluster
// changes under it, and each change (an agent joining, a task launched, an agent removed) must
// show within 2 s of the master knowing it (the page's SUBSCRIBE stream makes it read again); and
// the agents page of a 10,000-agent cluster is timed from navigation to its first rows. Driven over
// the DevTools protocol.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "devtools_session.h"
#include "headless_browser.h"
#include "sim/simulated_agent.h"
#include "testing/cluster.h"
#include "testing/operator_client.h"

namespace harvest::webui_test {
namespace {

using namespace testkit;  // NOLINT: the fakes are these tests' vocabulary.

constexpr Duration kVisibleWithin = Duration::seconds(2);

// A Debug or sanitizer master is many times slower: there the big page is only checked to draw,
// with fewer agents, and not timed.
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
constexpr bool kTimed = true;
constexpr int kManyAgents = 10'000;
#else
constexpr bool kTimed = false;
constexpr int kManyAgents = 2'000;
#endif

// JavaScript: the text of the element marked data-testid="id".
std::string textOf(const std::string& id) {
  return "document.querySelector('[data-testid=\"" + id + "\"]')?.textContent";
}

std::string url(uint16_t port, const std::string& hash) {
  return "http://127.0.0.1:" + std::to_string(port) + "/#" + hash;
}

class WebUiLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::optional<std::string> found = findChromium();
    if (!found) GTEST_SKIP() << "chromium is not installed (bash scripts/install-deps.sh does)";
    chromium_ = *found;
  }
  std::unique_ptr<DevToolsSession> browse(uint16_t port, const std::string& hash) {
    std::string error;
    std::unique_ptr<DevToolsSession> session =
        DevToolsSession::open(chromium_, url(port, hash), &error);
    EXPECT_NE(session, nullptr) << error;
    return session;
  }
  std::string chromium_;
};

TEST_F(WebUiLiveTest, AgentJoiningTaskLaunchedAndAgentRemovedShowWithinTwoSeconds) {
  MasterThread master;
  FakeAgent a1(master.port(), "a1", "cpus:4;mem:4096");
  ASSERT_EQ(a1.registerAgent(), 200);
  FrameworkClient framework(master.port());
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  // a1 refused for 1000 s: the next offer is the new agent's.
  std::vector<v1::Offer> first = framework.offers();
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(framework.call(declineCall(first[0], 1000)).status, 202);

  std::unique_ptr<DevToolsSession> page = browse(master.port(), "/");
  ASSERT_NE(page, nullptr);
  ASSERT_TRUE(page->waitUntil(textOf("agents-count") + " === '1'", Duration::seconds(10)))
      << "the overview never showed a1";
  ASSERT_EQ(page->evaluate(textOf("tasks-running")), "0");
  // The changes below reach the page through the operator API's SUBSCRIBE stream, which the
  // page opens after its first read.
  ASSERT_TRUE(page->waitUntil("document.body.dataset.stream === 'open'", Duration::seconds(10)))
      << "the page never opened the SUBSCRIBE stream";

  FakeAgent a2(master.port(), "a2", "cpus:2;mem:2048");
  ASSERT_EQ(a2.registerAgent(), 200);
  const std::optional<Duration> joined =
      page->waitUntil(textOf("agents-count") + " === '2'", kVisibleWithin);
  ASSERT_TRUE(joined) << "a2 did not show; the page says "
                      << *page->evaluate(textOf("agents-count"));
  const std::string events = "document.querySelector('[data-testid=\"events\"]').textContent";
  EXPECT_TRUE(page->waitUntil(events + ".includes('agent a2 added')", kVisibleWithin))
      << *page->evaluate(events);
  // It came as an event the page read from the protobuf stream: AGENT_ADDED, type 4.
  EXPECT_TRUE(page->waitUntil("document.body.dataset.lastEvent === '4'", kVisibleWithin))
      << "the last event the page read is " << *page->evaluate("document.body.dataset.lastEvent");

  std::vector<v1::Offer> offers = framework.offers();
  ASSERT_EQ(offers.size(), 1u);
  ASSERT_EQ(offers[0].agent_id().value(), "a2");
  ASSERT_EQ(
      framework
          .call(acceptCall(offers[0], {launch({taskInfo("t1", "a2", "cpus:1;mem:128")})}, 1000))
          .status,
      202);
  std::optional<RunTask> task = a2.expectRunTask();
  ASSERT_TRUE(task.has_value());
  ASSERT_EQ(a2.status(*task, TaskState::kRunning), 202);
  const std::optional<Duration> launched =
      page->waitUntil(textOf("tasks-running") + " === '1'", kVisibleWithin);
  ASSERT_TRUE(launched) << "t1 did not show; the page says "
                        << *page->evaluate(textOf("tasks-running"));

  const http::ClientResponse gone = request(
      master.port(), "POST", "/api/v1", {{"Content-Type", kJsonType}, {"Accept", kJsonType}},
      R"({"type":"MARK_AGENT_GONE","mark_agent_gone":{"agent_id":{"value":"a2"}}})");
  ASSERT_EQ(gone.status, 200) << gone.body;
  const std::optional<Duration> removed =
      page->waitUntil(textOf("agents-count") + " === '1'", kVisibleWithin);
  ASSERT_TRUE(removed) << "a2 is still shown";
  EXPECT_TRUE(page->waitUntil(events + ".includes('agent a2 removed')", kVisibleWithin))
      << *page->evaluate(events);
  EXPECT_EQ(page->evaluate(textOf("tasks-running")), "0");
  EXPECT_EQ(page->errors(), "");
  std::cout << "[ shown in  ] agent joined " << joined->millis() << " ms, task launched "
            << launched->millis() << " ms, agent removed " << removed->millis() << " ms\n";
}

TEST_F(WebUiLiveTest, AgentsPageOfTenThousandAgentsIsTimedFromNavigationToItsRows) {
  NetworkOptions network;
  network.port = 0;
  MasterOptions options = fastOptions();
  options.allocationInterval = Duration::seconds(1);
  Result<std::unique_ptr<NetworkMaster>> started = NetworkMaster::start(network, options);
  ASSERT_TRUE(started.ok()) << started.message();
  std::unique_ptr<NetworkMaster> master = std::move(started).value();
  const Resources total = R("cpus:16;mem:65536;disk:100000");
  for (int i = 0; i < kManyAgents; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "agent-%05d", i);
    ASSERT_TRUE(sim::addSimulatedAgent(master->master(), id, total).ok());
  }
  std::atomic<bool> stop{false};
  std::thread serving([&] { master->run(stop); });
  // A failed assertion returns early: the master's thread is stopped and joined all the same.
  struct StopServing {
    std::atomic<bool>& stop;
    std::thread& serving;
    ~StopServing() {
      stop = true;
      serving.join();
    }
  } stopServing{stop, serving};

  // The browser is already running, as a person's is: the time is the page's, not the
  // browser's start.
  std::unique_ptr<DevToolsSession> page = browse(master->port(), "/");
  ASSERT_NE(page, nullptr);
  const std::string count = std::to_string(kManyAgents);
  ASSERT_TRUE(
      page->waitUntil(textOf("agents-count") + " === '" + count + "'", Duration::seconds(20)));
  // The overview has opened its stream, so its whole first load is over; the blank page ends
  // its one-a-second reads, and the last one in flight (0.3 s at 10k agents) is let end, so the
  // time below is the agents page's own, not the tail of the page before it competing for the
  // two cores.
  ASSERT_TRUE(
      page->waitUntil("document.body.dataset.lastEvent !== undefined", Duration::seconds(20)));
  ASSERT_TRUE(page->navigate("about:blank"));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_TRUE(page->navigate(url(master->port(), "/agents")));
  // performance.now() counts from the navigation's start, when the browser asked for the page.
  const std::string drawnAt = "(" + textOf("agents-count") + " === '" + count + " of " + count +
                              "' && " +
                              "document.querySelector('tr[data-key=\"agent-00000\"]') !== null)" +
                              " ? Math.round(performance.now()) : -1";
  std::optional<std::string> at;
  for (int attempt = 0; attempt < 1000; ++attempt) {  // 20 s at most.
    at = page->evaluate(drawnAt);
    if (at && *at != "-1") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(at.has_value() && *at != "-1")
      << "the agents page never showed " << count << " agents";
  std::cout << "[ drawn at   ] " << *at << " ms after navigation\n";
  // The issue's target: measured 0.35-0.5 s on a 2-core box (docs/NUMBERS.md). ctest runs this
  // binary's tests alone (RUN_SERIAL): with the whole suite beside it the page took up to 2.7 s.
  if (kTimed) {
    EXPECT_LE(std::stoi(*at), 1000);
  }

  // Only the rows in view are drawn (the scroller's height over 24 px, and 10 more).
  const std::string rows = "document.querySelectorAll('[data-testid=\"agents\"] tr[data-key]')";
  const std::optional<std::string> drawn = page->evaluate(rows + ".length");
  ASSERT_TRUE(drawn.has_value());
  EXPECT_GT(std::stoi(*drawn), 10);
  EXPECT_LE(std::stoi(*drawn), 60);
  const std::string firstRow = rows + "[0].dataset.key";
  // Filtering keeps what matches in any column; a second click on a header sorts down.
  ASSERT_TRUE(
      page->evaluate("(() => { const f = document.querySelector('[data-testid=\"agents-filter\"]');"
                     " f.value = 'agent-0199'; f.dispatchEvent(new Event('input')); })()"));
  EXPECT_EQ(page->evaluate(textOf("agents-count")), "10 of " + count);
  EXPECT_EQ(page->evaluate(firstRow), "agent-01990");
  ASSERT_TRUE(page->evaluate("document.querySelector('[data-testid=\"agents\"] th').click()"));
  EXPECT_EQ(page->evaluate(firstRow), "agent-01999");
  ASSERT_TRUE(
      page->evaluate("(() => { const f = document.querySelector('[data-testid=\"agents-filter\"]');"
                     " f.value = ''; f.dispatchEvent(new Event('input')); })()"));
  EXPECT_EQ(page->evaluate(textOf("agents-count")), count + " of " + count);
  char last[16];
  std::snprintf(last, sizeof last, "agent-%05d", kManyAgents - 1);
  EXPECT_EQ(page->evaluate(firstRow), std::string(last));
  EXPECT_EQ(page->errors(), "");
}

}  // namespace
}  // namespace harvest::webui_test
