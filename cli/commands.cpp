#include "cli/commands.h"

#include <google/protobuf/util/json_util.h>

#include <string_view>

#include "resources/proto/convert.h"

namespace harvest::cli {
namespace {

struct Command {
  std::string_view words;     // "quota set": what selects it.
  std::string_view synopsis;  // Its arguments.
  std::string_view does;
  int (*run)(Invocation&);
};

constexpr Command kCommands[] = {
    {"agents", "", "the agents: resources total, used and offered", listAgents},
    {"frameworks", "", "the frameworks: roles, state, tasks, offers held", listFrameworks},
    {"tasks", "", "the tasks: state, agent, resources, revocable or not", listTasks},
    {"roles", "", "the roles: weight, frameworks, resources allocated", listRoles},
    {"state", "", "counts of agents, frameworks and tasks (--json: the whole state)", showState},
    {"quota get", "", "each role's quota guarantees and limits", getQuota},
    {"quota set", "ROLE [guarantees=RESOURCES] [limits=RESOURCES]",
     "sets a role's quota (Mesos's UPDATE_QUOTA; none given: removes it)", setQuota},
    {"weights get", "", "the roles' weights", getWeights},
    {"weights set", "ROLE=WEIGHT...", "sets roles' weights", setWeights},
    {"reserve", "AGENT RESOURCES", "reserves resources on an agent: cpus(ROLE):2;mem(ROLE):512",
     reserve},
    {"unreserve", "AGENT RESOURCES", "gives reserved resources back", unreserve},
    {"maintenance schedule", "[FILE]",
     "prints the maintenance schedule; with FILE (Mesos's schedule JSON) replaces it",
     showMaintenance},
    {"maintenance start", "HOSTNAME...", "takes machines down for maintenance", startMaintenance},
    {"maintenance stop", "HOSTNAME...", "brings machines back up", stopMaintenance},
    {"explain", "FRAMEWORK [AGENT]", "why a framework gets no offers, per agent", explainFramework},
};

}  // namespace

std::string commandList() {
  std::string text;
  for (const Command& command : kCommands) {
    std::string head = "  " + std::string(command.words);
    if (!command.synopsis.empty()) head += " " + std::string(command.synopsis);
    text += head + "\n      " + std::string(command.does) + "\n";
  }
  return text;
}

int runCommand(const std::vector<std::string>& words, MasterClient& master, bool json,
               std::ostream& out, std::ostream& err) {
  for (const Command& command : kCommands) {
    const size_t space = command.words.find(' ');
    const std::string_view first = command.words.substr(0, space);
    if (words.empty() || words[0] != first) continue;
    size_t used = 1;
    if (space != std::string_view::npos) {
      if (words.size() < 2 || words[1] != command.words.substr(space + 1)) continue;
      used = 2;
    }
    Invocation in{{words.begin() + static_cast<long>(used), words.end()}, master, json, out, err};
    return command.run(in);
  }
  err << "harvest: "
      << (words.empty()
              ? "no command given"
              : "unknown command '" + words[0] + (words.size() > 1 ? " " + words[1] : "") + "'")
      << "\ncommands:\n"
      << commandList();
  return 2;
}

int usageError(Invocation& in, const std::string& what) {
  in.err << "harvest: " << what << "\ncommands:\n" << commandList();
  return 2;
}

int failed(Invocation& in, const Status& status) {
  in.err << "harvest: " << status.message() << "\n";
  return 1;
}

void printJson(Invocation& in, const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string text;
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  in.out << text << "\n";
}

std::string resourcesText(const google::protobuf::RepeatedPtrField<v1::Resource>& resources) {
  Result<Resources> parsed = fromProto(resources);
  if (!parsed.ok()) return "?";
  return parsed->empty() ? "-" : parsed->toString();
}

}  // namespace harvest::cli
