// The command line's commands, as `mesos` names its own: lists for people (agents, frameworks,
// tasks, roles, quota, weights, maintenance, explain, state) and the operator's changes (quota
// and weights set, reserve/unreserve, maintenance schedule/start/stop). With --json every
// command prints what the master answered, in Mesos's JSON, for scripts.
//
// Exit codes: 0 done; 1 the master could not be reached or refused (the reason on stderr);
// 2 the command line is wrong (what is wrong, and the usage, on stderr).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/master_client.h"

namespace harvest::cli {

struct Invocation {
  std::vector<std::string> args;  // After the command's name (and its subcommand).
  MasterClient& master;
  bool json = false;
  std::ostream& out;
  std::ostream& err;
};

// Runs `words` (a command, perhaps a subcommand, and its arguments).
int runCommand(const std::vector<std::string>& words, MasterClient& master, bool json,
               std::ostream& out, std::ostream& err);
// One line per command: its words, arguments and what it does.
std::string commandList();

// The handlers (read_commands.cpp, update_commands.cpp).
int listAgents(Invocation& in);
int listFrameworks(Invocation& in);
int listTasks(Invocation& in);
int listRoles(Invocation& in);
int showState(Invocation& in);
int getQuota(Invocation& in);
int getWeights(Invocation& in);
int showMaintenance(Invocation& in);
int explainFramework(Invocation& in);
int setQuota(Invocation& in);
int setWeights(Invocation& in);
int reserve(Invocation& in);
int unreserve(Invocation& in);
int scheduleMaintenance(Invocation& in);
int startMaintenance(Invocation& in);
int stopMaintenance(Invocation& in);

// What the handlers share.
int usageError(Invocation& in, const std::string& what);
int failed(Invocation& in, const Status& status);
// Prints `message` as Mesos's JSON (field names as in the .proto).
void printJson(Invocation& in, const google::protobuf::Message& message);
// A resource list as Mesos's text ("cpus:2;mem:1024;cpus(web):1"); "-" when empty.
std::string resourcesText(const google::protobuf::RepeatedPtrField<v1::Resource>& resources);

}  // namespace harvest::cli
