// What the agent/exec tests share: a scratch root for sandboxes, the real clock as a Time, and
// the record of every process group a test starts.
//
// The record's end (a gtest Environment's TearDown, after the last test of the binary) first
// checks that every recorded group is empty, failing the binary if not, then kills exactly those
// groups and removes the scratch root. The tests themselves never kill by hand what the code
// under test should have stopped, so a leak fails rather than being swept away.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "agent/exec/command_process.h"
#include "agent/exec/sandbox.h"
#include "common/time.h"

namespace harvest::agent::testing {

// /tmp/harvest-test-<pid>, created on first use.
const std::filesystem::path& scratchRoot();

// "harvest-test-<pid>": the cgroups root of every test in the binary. The end of the run fails
// if any cgroup is left under it (what a test's code creates it must remove), then kills what is
// in them and removes them all.
const std::string& testCgroupsRoot();

// Whether this process may create cgroup v1 cgroups (root, the hierarchies mounted): the tests
// of cgroups isolation skip without, and the rest of the suite runs the same.
bool cgroupsUsable();

// Whether this process may create cgroups in the unified (v2) hierarchy, whatever controllers
// it hands down: the v2 tests skip without.
bool unifiedCgroupsUsable();

// The monotonic clock as a Time.
Time monotonicNow();

// A new, empty sandbox under the scratch root, its ids named after `name`.
Sandbox makeSandbox(const std::string& name);

// CommandProcess::launch, with the process group recorded; fails the test if refused.
std::unique_ptr<CommandProcess> launchTracked(const v1::CommandInfo& command,
                                              const Sandbox& sandbox);

// Records a process group started by the code under test (an agent's task), to be checked and
// stopped at the end like those launchTracked starts.
void recordProcessGroup(pid_t processGroup);

// A shell-form command.
v1::CommandInfo shellCommand(const std::string& script);

// The cpu time (user + system) of the process group's processes, from /proc.
double groupCpuSeconds(pid_t processGroup);

// Polls with the real clock until the outcome is known or `limit` has passed.
std::optional<CommandOutcome> waitForOutcome(CommandProcess& process,
                                             Duration limit = Duration::seconds(5));

// The file's content once it contains `count` occurrences of `needle`, or whatever it holds
// after `limit`.
std::string waitForContent(const std::filesystem::path& path, const std::string& needle,
                           int count = 1, Duration limit = Duration::seconds(5));

std::string readFile(const std::filesystem::path& path);

// True while `pid` exists, is not a zombie and is in `processGroup` (so a reused pid is not
// mistaken for it). Reaps the group's zombies but its leader: the test binary is a child
// subreaper, so a task's orphans are its children.
bool isLive(pid_t pid, pid_t processGroup);

// Waits up to `limit` for `pid` to stop being live.
bool waitUntilGone(pid_t pid, pid_t processGroup, Duration limit = Duration::seconds(3));

}  // namespace harvest::agent::testing
