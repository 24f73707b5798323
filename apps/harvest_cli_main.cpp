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
DEFINE_string(zk, "",
              "zk://HOST:PORT[,...]/PATH: the master leading there (as --master=zk://..., for "
              "those used to Mesos's flag of that name)");
DEFINE_string(credential, "",
              "PATH: a file (file:// too) holding \"PRINCIPAL SECRET\", for a master that "
              "authenticates operators");
DEFINE_bool(json, false, "print what the master answered, in Mesos's JSON, instead of tables");
DEFINE_string(timeout, "5secs", "DURATION: how long to wait for ZooKeeper and for each answer");

namespace {

// A --master or --zk value as it may be printed: a zk:// URL's password as "***", as the
// ZooKeeper code shows it (error messages end up in terminals and logs).
std::string printable(const std::string& value) {
  if (!value.starts_with("zk://")) return value;
  const size_t at = value.find('@'), colon = value.find(':', 5);
  if (at == std::string::npos || colon == std::string::npos || colon > at) return value;
  return value.substr(0, colon + 1) + "***" + value.substr(at);
}

}  // namespace

int main(int argc, char** argv) {
  harvest::apps::Flags flags(
      "harvest", __FILE__,
      "usage: harvest [--master=HOST:PORT|zk://...|--zk=zk://...] [--credential=PATH] [--json] "
      "COMMAND\n"
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
  const bool byZooKeeper = !FLAGS_zk.empty();
  if (byZooKeeper && !gflags::GetCommandLineFlagInfoOrDie("master").is_default) {
    return flags.bad("zk", printable(FLAGS_zk), "give --master or --zk, not both");
  }
  if (byZooKeeper && !FLAGS_zk.starts_with("zk://")) {
    return flags.bad("zk", printable(FLAGS_zk), "a zk:// URL");
  }
  const std::string& where = byZooKeeper ? FLAGS_zk : FLAGS_master;
  harvest::Result<harvest::HostPort> master = harvest::cli::findMaster(where, *timeout);
  if (!master.ok()) {
    if (master.status().code() == harvest::StatusCode::kInvalidArgument) {
      return flags.bad(byZooKeeper ? "zk" : "master", printable(where), master.message());
    }
    std::cerr << "harvest: " << master.message() << "\n";
    return 1;
  }
  harvest::cli::MasterClient client(*master, credential, *timeout);
  return harvest::cli::runCommand(flags.arguments(), client, FLAGS_json, std::cout, std::cerr);
}
