// harvest: the operators' command line (cli/), as `mesos` is Mesos's. The flags say which
// master and how to reach it; the words after them are the command.
#include <gflags/gflags.h>

#include <iostream>
#include <optional>
#include <string>

#include "apps/flags.h"
#include "cli/commands.h"
#include "cli/master_client.h"

DEFINE_string(master, "127.0.0.1:5050",
              "HOST:PORT of a master (a standby redirects to the leader), or "
              "zk://HOST:PORT[,...]/PATH: the master leading there");
DEFINE_string(credential, "",
              "PATH: a file (file:// too) holding \"PRINCIPAL SECRET\", for a master that "
              "authenticates operators");
DEFINE_bool(json, false, "print what the master answered, in Mesos's JSON, instead of tables");
DEFINE_string(timeout, "5secs", "DURATION: how long to wait for ZooKeeper and for each answer");

int main(int argc, char** argv) {
  harvest::apps::Flags flags(
      "harvest", __FILE__,
      "usage: harvest [--master=HOST:PORT|zk://...] [--credential=PATH] [--json] COMMAND\n"
      "commands:\n" +
          harvest::cli::commandList());
  flags.acceptArguments();
  if (std::optional<int> exit = flags.parse(argc, argv)) return *exit;
  flags.initLogging(argv[0], /*quiet=*/true);
  std::optional<harvest::Duration> timeout = flags.duration("timeout", FLAGS_timeout);
  if (!timeout) return 2;
  if (timeout->millis() <= 0) return flags.bad("timeout", FLAGS_timeout, "at least 1ms");
  std::optional<harvest::http::Credential> credential;
  if (!FLAGS_credential.empty()) {
    auto loaded = harvest::http::loadCredentialFile(harvest::apps::stripFileUrl(FLAGS_credential));
    if (!loaded.ok()) return flags.bad("credential", FLAGS_credential, loaded.message());
    credential = *loaded;
  }
  if (const int exit = flags.setupClientTls(); exit != 0) return exit;
  harvest::Result<harvest::HostPort> master = harvest::cli::findMaster(FLAGS_master, *timeout);
  if (!master.ok()) {
    if (master.status().code() == harvest::StatusCode::kInvalidArgument) {
      return flags.bad("master", FLAGS_master, master.message());
    }
    std::cerr << "harvest: " << master.message() << "\n";
    return 1;
  }
  harvest::cli::MasterClient client(*master, credential, *timeout);
  return harvest::cli::runCommand(flags.arguments(), client, FLAGS_json, std::cout, std::cerr);
}
