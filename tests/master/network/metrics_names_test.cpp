// The metrics under Mesos's names (master/*, allocator/mesos/*) and Harvest's own
// (allocator/harvest/*), their values after known events, and their Prometheus exposition.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "master/network/prometheus.h"
#include "testing/cluster.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.

const std::vector<std::string> kTimerSuffixes{"/count", "/min", "/max",  "/p50",  "/p90",
                                              "/p95",   "/p99", "/p999", "/p9999"};

TEST(PrometheusTest, NamesAreSanitized) {
  EXPECT_EQ(prometheusName("master/cpus_total"), "master_cpus_total");
  EXPECT_EQ(prometheusName("allocator/harvest/roles/a-b.c/shares/dominant"),
            "allocator_harvest_roles_a_b_c_shares_dominant");
  EXPECT_EQ(prometheusName("9lives:x"), "_9lives:x");
}

TEST(PrometheusTest, CountersGaugesAndTimers) {
  std::map<std::string, double> metrics{{"master/offers_sent", 3},
                                        {"master/cpus_used", 1.5},
                                        {"roles/a-b/x", 1},
                                        {"roles/a_b/x", 2},
                                        {"t/count", 4},
                                        {"t/min", 1},
                                        {"t/max", 9},
                                        {"t/p50", 2},
                                        {"t/p90", 3},
                                        {"t/p95", 4},
                                        {"t/p99", 5},
                                        {"t/p999", 6},
                                        {"t/p9999", 7}};
  EXPECT_EQ(prometheusText(metrics, {"master/offers_sent"}),
            "# HELP t t\n# TYPE t gauge\n"
            "t{quantile=\"0.5\"} 2\nt{quantile=\"0.9\"} 3\nt{quantile=\"0.95\"} 4\n"
            "t{quantile=\"0.99\"} 5\nt{quantile=\"0.999\"} 6\nt{quantile=\"0.9999\"} 7\n"
            "# HELP master_cpus_used master/cpus_used\n# TYPE master_cpus_used gauge\n"
            "master_cpus_used 1.5\n"
            "# HELP master_offers_sent master/offers_sent\n# TYPE master_offers_sent counter\n"
            "master_offers_sent 3\n"
            // "roles/a_b/x" becomes the same name: the first key keeps it.
            "# HELP roles_a_b_x roles/a-b/x\n# TYPE roles_a_b_x gauge\nroles_a_b_x 1\n"
            "# HELP t_count t/count\n# TYPE t_count gauge\nt_count 4\n"
            "# HELP t_max t/max\n# TYPE t_max gauge\nt_max 9\n"
            "# HELP t_min t/min\n# TYPE t_min gauge\nt_min 1\n");
}

class MetricsNamesTest : public ::testing::Test {
 protected:
  // One task of cpus:1;mem:128 running on a1 (cpus:8;mem:16384); the rest filtered for 10 s.
  void launchOne() {
    const v1::Offer offer = cluster.framework.offer();
    ASSERT_EQ(cluster.framework
                  .call(acceptCall(offer, {launch({taskInfo("t1", "a1", "cpus:1;mem:128")})}, 10))
                  .status,
              202);
    task = cluster.agent.expectRunTask();
    ASSERT_TRUE(task.has_value());
    ASSERT_EQ(cluster.agent.status(*task, TaskState::kRunning), 202);
    ASSERT_EQ(cluster.framework.update().state(), v1::TASK_RUNNING);
  }

  Cluster cluster;
  std::optional<RunTask> task;
};

TEST_F(MetricsNamesTest, MesosNamesHaveTheirValuesAfterALaunch) {
  ASSERT_NO_FATAL_FAILURE(launchOne());
  const std::map<std::string, double> m = metrics(cluster.master.port());
  const std::map<std::string, double> expected{
      {"master/elected", 1},
      {"master/slaves_connected", 1},
      {"master/slaves_disconnected", 0},
      {"master/slaves_active", 1},
      {"master/slaves_inactive", 0},
      {"master/frameworks_connected", 1},
      {"master/frameworks_disconnected", 0},
      {"master/frameworks_active", 1},
      {"master/frameworks_inactive", 0},
      {"master/outstanding_offers", 0},
      {"master/tasks_staging", 0},
      {"master/tasks_running", 1},
      {"master/tasks_finished", 0},
      {"master/tasks_failed", 0},
      {"master/cpus_total", 8},
      {"master/cpus_used", 1},
      {"master/cpus_percent", 0.125},
      {"master/mem_total", 16384},
      {"master/mem_used", 128},
      {"master/mem_percent", 128.0 / 16384},
      {"master/disk_total", 0},
      {"master/disk_used", 0},
      {"master/disk_percent", 0},
      {"master/gpus_total", 0},
      {"master/gpus_used", 0},
      {"master/gpus_percent", 0},
      {"master/cpus_revocable_total", 0},
      {"master/cpus_revocable_used", 0},
      {"master/cpus_revocable_percent", 0},
      {"master/mem_revocable_total", 0},
      {"master/mem_revocable_used", 0},
      {"allocator/mesos/resources/cpus/total", 8},
      {"allocator/mesos/resources/cpus/offered_or_allocated", 1},
      {"allocator/mesos/resources/mem/total", 16384},
      {"allocator/mesos/resources/mem/offered_or_allocated", 128},
      {"allocator/mesos/offer_filters/roles/web/active", 1},
  };
  for (const auto& [key, value] : expected) {
    ASSERT_TRUE(m.contains(key)) << key;
    EXPECT_EQ(m.at(key), value) << key;
  }
  // Harvest's names stay; the Mesos copies agree with them.
  EXPECT_EQ(m.at("allocator/mesos/allocation_runs"), m.at("allocator/harvest/allocation_runs"));
  EXPECT_GE(m.at("allocator/mesos/allocation_runs"), 1);
  EXPECT_EQ(m.at("allocator/mesos/roles/web/shares/dominant"),
            m.at("allocator/harvest/roles/web/shares/dominant"));
  EXPECT_EQ(m.at("allocator/mesos/roles/web/shares/dominant"), 0.125);
  for (const std::string& suffix : kTimerSuffixes) {
    ASSERT_TRUE(m.contains("allocator/mesos/allocation_run_ms" + suffix)) << suffix;
    EXPECT_EQ(m.at("allocator/mesos/allocation_run_ms" + suffix),
              m.at("allocator/harvest/allocation_run_ms" + suffix));
  }
  EXPECT_GE(m.at("allocator/mesos/allocation_run_ms/count"), 1);
  EXPECT_LE(m.at("allocator/mesos/allocation_run_ms/min"),
            m.at("allocator/mesos/allocation_run_ms/p50"));
  EXPECT_LE(m.at("allocator/mesos/allocation_run_ms/p9999"),
            m.at("allocator/mesos/allocation_run_ms/max"));
  EXPECT_GT(m.at("master/uptime_secs"), 0);
  // Gone: a constant that counted nothing, and the names Mesos calls otherwise.
  EXPECT_FALSE(m.contains("allocator/harvest/event_queue_dispatches"));
  EXPECT_FALSE(m.contains("master/agents_connected"));
}

TEST_F(MetricsNamesTest, FinishingTheTaskMovesItFromRunningToFinished) {
  ASSERT_NO_FATAL_FAILURE(launchOne());
  // The agent reports t1 finished (and frees it): the gauges drop, the counter rises.
  cluster.agent.finish(*task, TaskState::kFinished);
  ASSERT_EQ(cluster.framework.update().state(), v1::TASK_FINISHED);
  const std::map<std::string, double> m = metrics(cluster.master.port());
  EXPECT_EQ(m.at("master/tasks_running"), 0);
  EXPECT_EQ(m.at("master/tasks_finished"), 1);
  EXPECT_EQ(m.at("master/cpus_used"), 0);
  EXPECT_EQ(m.at("master/cpus_percent"), 0);
}

TEST_F(MetricsNamesTest, AFailedTaskCountsAsFailed) {
  ASSERT_NO_FATAL_FAILURE(launchOne());
  cluster.agent.finish(*task, TaskState::kFailed);
  ASSERT_EQ(cluster.framework.update().state(), v1::TASK_FAILED);
  const std::map<std::string, double> m = metrics(cluster.master.port());
  EXPECT_EQ(m.at("master/tasks_failed"), 1);
  EXPECT_EQ(m.at("master/tasks_finished"), 0);
  EXPECT_EQ(m.at("master/tasks_running"), 0);
}

// Every line of /metrics is a HELP, a TYPE, or a sample of the family just typed; the values
// are the snapshot's.
TEST_F(MetricsNamesTest, PrometheusExpositionParsesLineByLine) {
  ASSERT_NO_FATAL_FAILURE(launchOne());
  const http::ClientResponse response = request(cluster.master.port(), "GET", "/metrics");
  ASSERT_EQ(response.status, 200);
  ASSERT_NE(response.header("content-type"), nullptr);
  EXPECT_EQ(*response.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  static const std::regex kHelp(R"re(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+))re");
  static const std::regex kType(R"re(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge))re");
  static const std::regex kSample(
      R"re(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{quantile="0\.[0-9]+"\})? ([-+0-9.eE]+|NaN|[+-]Inf))re");
  std::istringstream lines(response.body);
  std::string line, helped, typed;
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;
  size_t families = 0;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (std::regex_match(line, match, kHelp)) {
      helped = match[1];
      typed.clear();
    } else if (std::regex_match(line, match, kType)) {
      ASSERT_EQ(match[1], helped) << line;
      typed = match[1];
      types[typed] = match[2];
      ++families;
    } else {
      ASSERT_TRUE(std::regex_match(line, match, kSample)) << line;
      ASSERT_EQ(match[1], typed) << line;
      samples[match[1].str() + match[2].str()] = std::stod(match[3]);
    }
  }
  const std::map<std::string, double> m = metrics(cluster.master.port());
  // Nine keys per timer become one family of six quantiles and three gauges.
  size_t timers = 0;
  for (const auto& [key, value] : m) timers += key.ends_with("/p9999") ? 1 : 0;
  EXPECT_EQ(timers, 2u);  // allocator/harvest/ and allocator/mesos/allocation_run_ms.
  EXPECT_EQ(families, m.size() - 5 * timers);
  EXPECT_EQ(samples.at("master_cpus_used"), 1);
  EXPECT_EQ(samples.at("master_tasks_running"), 1);
  EXPECT_EQ(samples.at("allocator_harvest_roles_web_shares_dominant"), 0.125);
  EXPECT_EQ(types.at("master_cpus_used"), "gauge");
  EXPECT_EQ(types.at("master_offers_sent"), "counter");
  EXPECT_EQ(types.at("allocator_mesos_allocation_runs"), "counter");
  EXPECT_EQ(types.at("allocator_mesos_allocation_run_ms"), "gauge");
  // Allocation keeps running between the two requests: the timer's shape, not its values.
  double previous = 0;
  for (const char* q : {"0.5", "0.9", "0.95", "0.99", "0.999", "0.9999"}) {
    const double value =
        samples.at("allocator_mesos_allocation_run_ms{quantile=\"" + std::string(q) + "\"}");
    EXPECT_GE(value, previous) << q;
    previous = value;
  }
  EXPECT_GE(samples.at("allocator_mesos_allocation_run_ms_count"), 1);
}

}  // namespace
}  // namespace harvest::master
