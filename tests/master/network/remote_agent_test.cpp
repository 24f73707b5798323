// RemoteAgent's memory of which tasks' executors hold resources: what the master asks before it
// treats a terminal status as freeing the task's resources (master_updates.cpp).
#include "master/network/remote_agent.h"

#include <gtest/gtest.h>

namespace harvest::master {
namespace {

AgentRegistration registrationWith(std::vector<HeldTask> tasks) {
  AgentRegistration registration;
  registration.id = "a1";
  registration.tasks = std::move(tasks);
  return registration;
}

HeldTask heldTask(const std::string& framework, const std::string& task, bool ended) {
  HeldTask held;
  held.framework = framework;
  held.task = task;
  held.ended = ended;
  return held;
}

TEST(RemoteAgentTest, RegistrationTellsWhichExecutorsHold) {
  RemoteAgent agent(
      registrationWith({heldTask("f1", "running", false), heldTask("f1", "ended", true)}), "r1",
      "principal");
  EXPECT_TRUE(agent.holdsExecutor("f1", "running"));
  EXPECT_FALSE(agent.holdsExecutor("f1", "ended"));
  EXPECT_FALSE(agent.holdsExecutor("f2", "running"));  // The same task id of another framework.
  EXPECT_EQ(agent.executorsHeld(), 1u);
}

TEST(RemoteAgentTest, LaunchesAndStatusUpdatesKeepOnlyWhatHolds) {
  RemoteAgent agent(registrationWith({}), "r1", "principal");
  RunTask run;
  run.framework = "f1";
  run.task.task = "t1";
  agent.runTask(run);  // Not attached yet: the event waits, the executor is counted at once.
  EXPECT_TRUE(agent.holdsExecutor("f1", "t1"));
  agent.noteHolds("f1", "t2", true);  // A status for a task the master did not launch here.
  EXPECT_EQ(agent.executorsHeld(), 2u);
  agent.noteHolds("f1", "t1", true);  // Said again: still one entry.
  EXPECT_EQ(agent.executorsHeld(), 2u);

  // A status that leaves nothing held, then FREED: each forgets its task, so a long-lived
  // agent's memory is what runs on it, not every task it ever ran.
  agent.noteHolds("f1", "t1", false);
  EXPECT_FALSE(agent.holdsExecutor("f1", "t1"));
  agent.noteHolds("f1", "t2", false);
  agent.noteHolds("f1", "never-seen", false);
  EXPECT_EQ(agent.executorsHeld(), 0u);
  for (int i = 0; i < 1000; ++i) {
    const std::string task = "t" + std::to_string(i);
    agent.noteHolds("f1", task, true);
    agent.noteHolds("f1", task, false);
  }
  EXPECT_EQ(agent.executorsHeld(), 0u);
}

}  // namespace
}  // namespace harvest::master
