// A task's sandbox in the web UI, as an operator reaches it: from the agent's page, through the
// task's "sandbox" link, to the files its real process wrote. The page reads them from the agent
// itself (another origin, as Mesos's UI does: JSONP against the agent's /state and files API), so
// this runs a real harvest agent (tasks as processes, its HTTP endpoint on loopback) under a live
// master, and a framework that launches a command on it. Driven over the DevTools protocol; with
// HARVEST_WEBUI_SCREENSHOTS=DIR it also takes the README's webui-sandbox.png.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "agent/http/agent_server.h"
#include "agent/process/agent_process.h"
#include "devtools_session.h"
#include "headless_browser.h"
#include "testing/cluster.h"

namespace harvest::webui_test {
namespace {

using namespace testkit;  // NOLINT: the fakes are these tests' vocabulary.

constexpr Duration kWait = Duration::seconds(10);

// JavaScript: the text of the element marked data-testid="id".
std::string textOf(const std::string& id) {
  return "document.querySelector('[data-testid=\"" + id + "\"]')?.textContent";
}

class WebUiSandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::optional<std::string> found = findChromium();
    if (!found) GTEST_SKIP() << "chromium is not installed (bash scripts/install-deps.sh does)";
    chromium_ = *found;
    std::filesystem::remove_all(workDir_);

    agent::AgentProcessOptions options;
    options.masterPort = master_.port();
    options.agentId = "a1";
    options.total = R("cpus:2;mem:512");
    options.tasks = agent::TaskRunner::kProcesses;
    options.workDir = workDir_;
    options.isolation.isolation = agent::Isolation::kPosix;
    options.initialBackoff = Duration::milliseconds(20);
    options.maxBackoff = Duration::milliseconds(100);
    Result<std::unique_ptr<agent::AgentProcess>> created = agent::AgentProcess::create(options);
    ASSERT_TRUE(created.ok()) << created.message();
    agent_ = std::move(created).value();
    agent::AgentServerOptions http;
    http.port = 0;
    Result<std::unique_ptr<agent::AgentServer>> served =
        agent::AgentServer::start(http, agent_.get());
    ASSERT_TRUE(served.ok()) << served.message();
    server_ = std::move(served).value();
    agent_->advertiseHttpPort(server_->port());
    // The agent and its endpoint on one thread of their own, as harvest-agent runs them.
    running_ = std::thread([this] {
      agent_->runUntil(
          [this] {
            server_->poll(Duration::zero());
            return false;
          },
          Duration::seconds(120));
    });

    ASSERT_EQ(framework_.subscribe(frameworkInfo("web")), 200);
    std::vector<v1::Offer> offers = framework_.offers();
    ASSERT_EQ(offers.size(), 1u);
    v1::TaskInfo task = taskInfo("t1", "a1", "cpus:1;mem:128");
    task.mutable_command()->set_value(
        "echo hello from the sandbox; echo a word on stderr >&2; exec sleep 60");
    ASSERT_EQ(framework_.call(acceptCall(offers[0], {launch({task})}, 1000)).status, 202);
    // STARTING, then RUNNING: the command has begun, and its first line is written at once.
    for (int update = 0; update < 2 && running_state_ != v1::TASK_RUNNING; ++update) {
      running_state_ = framework_.update().state();
    }
    ASSERT_EQ(running_state_, v1::TASK_RUNNING);
  }

  void TearDown() override {
    if (agent_ != nullptr) agent_->stop();
    if (running_.joinable()) running_.join();
    server_.reset();
    agent_.reset();  // Kills the task's process group.
    master_.stop();
    std::filesystem::remove_all(workDir_);
  }

  std::unique_ptr<DevToolsSession> browse(const std::string& hash) {
    std::string error;
    std::unique_ptr<DevToolsSession> session = DevToolsSession::open(
        chromium_, "http://127.0.0.1:" + std::to_string(master_.port()) + "/#" + hash, &error);
    EXPECT_NE(session, nullptr) << error;
    return session;
  }

  std::string chromium_;
  const std::filesystem::path workDir_ = std::filesystem::temp_directory_path() /
                                         ("harvest-webui-sandbox-" + std::to_string(::getpid()));
  MasterThread master_;
  FrameworkClient framework_{master_.port()};
  std::unique_ptr<agent::AgentProcess> agent_;
  std::unique_ptr<agent::AgentServer> server_;
  std::thread running_;
  v1::TaskState running_state_ = v1::TASK_STAGING;
};

TEST_F(WebUiSandboxTest, TheTaskLinkLeadsToItsFilesAndTheirContent) {
  std::unique_ptr<DevToolsSession> page = browse("/agents/a1");
  ASSERT_NE(page, nullptr);
  const std::string link =
      "document.querySelector('[data-key=\"t1\"] [data-testid=\"sandbox-link\"]')";
  ASSERT_TRUE(page->waitUntil(link + " !== null", kWait)) << "the agent page shows no sandbox link";
  EXPECT_EQ(page->evaluate(link + ".getAttribute('href')"),
            "#/agents/a1/sandbox/" + framework_.id() + "/t1");

  // The link, as a person clicks it: the sandbox's files, read from the agent.
  ASSERT_TRUE(page->evaluate(link + ".click(), true"));
  const std::string listed =
      "[...document.querySelectorAll('[data-testid=\"sandbox-files\"] tbody tr')]"
      ".map((row) => row.dataset.key).join(',')";
  ASSERT_TRUE(page->waitUntil(listed + " === 'stderr,stdout'", kWait))
      << "the sandbox lists " << page->evaluate(listed).value_or("?") << "; error "
      << page->evaluate(textOf("sandbox-error")).value_or("none");

  // stdout's link shows what the command printed there, and offers it for download from the
  // agent itself.
  ASSERT_TRUE(page->evaluate(
      "document.querySelector('[data-testid=\"sandbox-files\"] tr[data-key=\"stdout\"] a').click(),"
      " true"));
  ASSERT_TRUE(page->waitUntil(textOf("sandbox-file") + " === 'hello from the sandbox\\n'", kWait))
      << "stdout shows " << page->evaluate(textOf("sandbox-file")).value_or("nothing");
  EXPECT_EQ(page->evaluate("location.hash"),
            "#/agents/a1/sandbox/" + framework_.id() + "/t1/stdout");
  const std::optional<std::string> download =
      page->evaluate("document.querySelector('[data-testid=\"sandbox-download\"]').href");
  ASSERT_TRUE(download.has_value());
  const std::string agentUrl = "http://127.0.0.1:" + std::to_string(server_->port());
  EXPECT_TRUE(download->starts_with(agentUrl + "/files/download?path=%2F")) << *download;
  EXPECT_NE(download->find("%2Fslaves%2Fa1%2Fframeworks%2F" + framework_.id() +
                           "%2Fexecutors%2Ft1%2Fruns%2F"),
            std::string::npos)
      << *download;
  EXPECT_TRUE(download->ends_with("%2Fstdout")) << *download;

  if (const char* dir = std::getenv("HARVEST_WEBUI_SCREENSHOTS")) {
    const PageRun run = loadPage(chromium_,
                                 "http://127.0.0.1:" + std::to_string(master_.port()) +
                                     "/#/agents/a1/sandbox/" + framework_.id() + "/t1",
                                 2500, std::string(dir) + "/webui-sandbox.png", 1200, 420);
    EXPECT_TRUE(run.finished);
  }

  // An executor the agent does not know is said on the page.
  ASSERT_TRUE(
      page->evaluate("location.hash = '#/agents/a1/sandbox/" + framework_.id() + "/t9', true"));
  ASSERT_TRUE(page->waitUntil(textOf("sandbox-error") + " !== undefined", kWait));
  EXPECT_EQ(page->evaluate(textOf("sandbox-error")),
            "agent a1 has no sandbox of t9 of " + framework_.id());
  EXPECT_EQ(page->errors(), "");
}

}  // namespace
}  // namespace harvest::webui_test
