// The command line of every Harvest program, in one place: flags are gflags definitions (so
// each has a type, a default and a description), and this parser reads them the way Mesos
// does:
//
//   --name=value, --flag / --noflag for booleans   --flagfile=PATH (one --name=value a line)
//   HARVEST_<NAME> in the environment              for any flag the command line leaves unset
//   --help (each flag, its description, default)   --version
//   LIBPROCESS_SSL_<NAME> for the --ssl_* flags        Mesos's names for its TLS settings
//
// glog's --v, --vmodule, --log_dir, --logtostderr, --alsologtostderr, --minloglevel and
// --stderrthreshold are accepted too. Every error is one line, "<program>: <reason>", and
// exit code 2, so scripts can tell a bad command line from a failed run (1).
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "net/tls_context.h"

namespace harvest::apps {

class Flags {
 public:
  // `sourceFile` is the __FILE__ of the program's DEFINE_* lines: --help and HARVEST_<NAME>
  // cover the flags defined there (and glog's), not every flag linked into the binary.
  // `repeatable` flags may be given many times (--module_parameter=a=1 --module_parameter=b=2);
  // their values collect in values() instead of the last one winning.
  Flags(std::string program, std::string sourceFile, std::string synopsis,
        std::set<std::string> repeatable = {});

  // Reads argv, then HARVEST_<NAME> for the flags argv did not set. Returns an exit code
  // when the program should stop now: 0 after --help or --version (printed on stdout), 2
  // after an error (printed on stderr).
  std::optional<int> parse(int argc, char** argv);

  // Lets words that are not flags through as the program's arguments (a command line tool's
  // "harvest quota get"), in order; without this call they are errors.
  void acceptArguments() { acceptsArguments_ = true; }
  const std::vector<std::string>& arguments() const { return arguments_; }

  // Set on the command line or in a --flagfile (not from the environment).
  bool isSet(const std::string& name) const { return explicitly_.count(name) > 0; }

  // Set anywhere: the command line, a --flagfile or the environment.
  bool isGiven(const std::string& name) const {
    return isSet(name) || fromEnvironment_.count(name) > 0;
  }

  // Starts glog: to stderr unless --log_dir or --logtostderr says otherwise, and with `quiet`
  // warnings and errors only unless --minloglevel says otherwise.
  void initLogging(const char* argv0, bool quiet) const;

  // Every value of a repeatable flag, in order (the environment's counts as one).
  const std::vector<std::string>& values(const std::string& name) const;

  // Mode checks: the first of `names` set on the command line is an error, "--name does not
  // apply to <mode>". Returns 2 after printing it, 0 when none is set. Environment values do
  // not count, so one environment can serve both modes.
  int rejectInMode(std::initializer_list<const char*> names, const std::string& mode) const;

  // Prints "<program>: bad value '<value>' for --<flag>: <why>" and returns 2.
  int bad(const std::string& flag, const std::string& value, const std::string& why) const;
  // Prints "<program>: <message>" and returns 2.
  int fail(const std::string& message) const;

  // A duration flag (Mesos syntax, see common/duration.h): its value, or nullopt after
  // printing the error for --<flag>.
  std::optional<Duration> duration(const std::string& flag, const std::string& value) const;

  // The --ssl_* flags, which every program reads (docs/TLS.md), as TLS options.
  static http::TlsOptions tlsOptions();
  // A client program's connections dial with the context the --ssl_* flags describe (plaintext
  // when they do not enable TLS): 0, or 2 after printing why the context cannot be made.
  int setupClientTls() const;

 private:
  std::optional<int> parseArgument(const std::string& arg, int depth);
  std::optional<int> parseFlagfile(const std::string& path, int depth);
  bool accepts(const std::string& name) const;
  void printHelp() const;

  std::string program_, sourceFile_, synopsis_;
  std::set<std::string> repeatable_;
  std::map<std::string, std::vector<std::string>> values_;
  std::set<std::string> explicitly_, fromEnvironment_;
  bool acceptsArguments_ = false;
  std::vector<std::string> arguments_;
};

// "file:///etc/x.json" -> "/etc/x.json": Mesos accepts file:// for manifest, credential and
// ACL flags; other values pass through.
std::string stripFileUrl(const std::string& value);

}  // namespace harvest::apps
