#include "apps/flags.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <utility>
#include <vector>

#include "common/duration.h"
#include "common/results.h"
#include "net/http_client.h"

// TLS, for every program that serves or dials: Mesos's LIBPROCESS_SSL_* settings, with their
// meaning and defaults (docs/TLS.md).
DEFINE_bool(ssl_enabled, false,
            "serve (master) and dial (agent, tools) with TLS; LIBPROCESS_SSL_ENABLED too");
DEFINE_bool(ssl_support_downgrade, false,
            "with --ssl_enabled, the master also serves plaintext clients on its port");
DEFINE_string(ssl_cert_file, "",
              "PATH: PEM certificate (chain); the master's, or the one a client presents");
DEFINE_string(ssl_key_file, "", "PATH: PEM private key of --ssl_cert_file");
DEFINE_bool(ssl_verify_cert, false,
            "verify the peer's certificate: clients check the master's (chain and host name), "
            "the master checks a client's when one is presented");
DEFINE_bool(ssl_require_cert, false,
            "the master refuses clients without a valid certificate (implies --ssl_verify_cert)");
DEFINE_int32(ssl_verify_depth, 4, "N: the longest certificate chain accepted");
DEFINE_string(ssl_ca_dir, "", "DIR: trusted CA certificates (OpenSSL hashed directory)");
DEFINE_string(ssl_ca_file, "",
              "PATH: trusted CA certificates (PEM); with --ssl_ca_dir empty too: the system's");
DEFINE_string(ssl_ciphers, "",
              "LIST: OpenSSL cipher list for TLS 1.2, ':'-separated; empty: OpenSSL's default");
DEFINE_bool(ssl_enable_tls_v1_2, true, "offer and accept TLS 1.2");
DEFINE_bool(ssl_enable_tls_v1_3, false, "offer and accept TLS 1.3");

namespace harvest::apps {
namespace {

// Where the --ssl_* flags are defined: every program accepts them.
constexpr const char* kSharedFlagsFile = __FILE__;

// glog's flags an operator needs; the rest of the registry (gflags' own --fromenv, --helpxml
// ...) stays out so there is one way to do each thing.
const std::set<std::string> kGlogFlags = {
    "v", "vmodule", "log_dir", "logtostderr", "alsologtostderr", "minloglevel", "stderrthreshold"};

// A --flagfile may name another; this bounds a file that names itself.
constexpr int kMaxFlagfileDepth = 8;

std::string envName(const std::string& flag) {
  std::string name = "HARVEST_" + flag;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return name;
}

}  // namespace

Flags::Flags(std::string program, std::string sourceFile, std::string synopsis,
             std::set<std::string> repeatable)
    : program_(std::move(program)),
      sourceFile_(std::move(sourceFile)),
      synopsis_(std::move(synopsis)),
      repeatable_(std::move(repeatable)) {}

const std::vector<std::string>& Flags::values(const std::string& name) const {
  static const std::vector<std::string> kNone;
  auto it = values_.find(name);
  return it == values_.end() ? kNone : it->second;
}

bool Flags::accepts(const std::string& name) const {
  gflags::CommandLineFlagInfo info;
  if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info)) return false;
  return info.filename == sourceFile_ || info.filename == kSharedFlagsFile ||
         kGlogFlags.count(name) > 0;
}

std::optional<int> Flags::parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::optional<int> exit = parseArgument(argv[i], 0)) return exit;
  }
  std::vector<gflags::CommandLineFlagInfo> all;
  gflags::GetAllFlags(&all);
  for (const gflags::CommandLineFlagInfo& info : all) {
    if (!accepts(info.name) || isSet(info.name)) continue;
    std::string env = envName(info.name);
    const char* value = std::getenv(env.c_str());
    if (value == nullptr && info.name.compare(0, 4, "ssl_") == 0) {
      // Mesos's name for the same setting, so one environment configures both.
      env = "LIBPROCESS_" + env.substr(std::string("HARVEST_").size());
      value = std::getenv(env.c_str());
    }
    if (value == nullptr) continue;
    if (repeatable_.count(info.name) > 0) values_[info.name].push_back(value);
    fromEnvironment_.insert(info.name);
    if (gflags::SetCommandLineOption(info.name.c_str(), value).empty()) {
      return fail("bad value '" + std::string(value) + "' for " + env + ": expected " + info.type);
    }
  }
  return std::nullopt;
}

std::optional<int> Flags::parseArgument(const std::string& arg, int depth) {
  if (arg == "--help" || arg == "-h") {
    printHelp();
    return 0;
  }
  if (arg == "--version") {
    std::printf("%s %s\n", program_.c_str(), harvestVersion());
    return 0;
  }
  if (acceptsArguments_ && depth == 0 && !arg.starts_with("-")) {
    arguments_.push_back(arg);
    return std::nullopt;
  }
  if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
    return fail("unknown argument '" + arg + "' (see --help)");
  }
  const size_t eq = arg.find('=');
  std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  std::string value;
  gflags::CommandLineFlagInfo info;
  if (name == "flagfile") {
    if (eq == std::string::npos) return fail("--flagfile needs a value (--flagfile=PATH)");
    return parseFlagfile(stripFileUrl(arg.substr(eq + 1)), depth + 1);
  }
  if (eq == std::string::npos) {
    // Booleans alone: --flag sets it, --noflag clears it.
    value = "true";
    if (!accepts(name) && name.compare(0, 2, "no") == 0 && accepts(name.substr(2))) {
      name = name.substr(2);
      value = "false";
    }
    if (accepts(name) && gflags::GetCommandLineFlagInfo(name.c_str(), &info) &&
        info.type != "bool") {
      return fail("--" + name + " needs a value (--" + name + "=VALUE)");
    }
  } else {
    value = arg.substr(eq + 1);
  }
  if (!accepts(name)) return fail("unknown argument '" + arg + "' (see --help)");
  gflags::GetCommandLineFlagInfo(name.c_str(), &info);
  if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty()) {
    return bad(name, value, "expected " + info.type);
  }
  if (repeatable_.count(name) > 0) values_[name].push_back(value);
  explicitly_.insert(name);
  return std::nullopt;
}

std::optional<int> Flags::parseFlagfile(const std::string& path, int depth) {
  if (depth > kMaxFlagfileDepth) return bad("flagfile", path, "--flagfile nested too deep");
  std::ifstream in(path);
  if (!in) return bad("flagfile", path, "cannot read the file");
  std::string line;
  while (std::getline(in, line)) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    const size_t end = line.find_last_not_of(" \t\r");
    if (std::optional<int> exit = parseArgument(line.substr(start, end - start + 1), depth)) {
      return exit;
    }
  }
  return std::nullopt;
}

void Flags::initLogging(const char* argv0, bool quiet) const {
  if (!isGiven("logtostderr")) FLAGS_logtostderr = FLAGS_log_dir.empty();
  if (quiet && !isGiven("minloglevel")) FLAGS_minloglevel = 1;
  google::InitGoogleLogging(argv0);
}

int Flags::rejectInMode(std::initializer_list<const char*> names, const std::string& mode) const {
  for (const char* name : names) {
    if (isSet(name)) return fail("--" + std::string(name) + " does not apply to " + mode);
  }
  return 0;
}

int Flags::bad(const std::string& flag, const std::string& value, const std::string& why) const {
  return fail("bad value '" + value + "' for --" + flag + ": " + why);
}

int Flags::fail(const std::string& message) const {
  std::fprintf(stderr, "%s: %s\n", program_.c_str(), message.c_str());
  return 2;
}

std::optional<Duration> Flags::duration(const std::string& flag, const std::string& value) const {
  Result<Duration> parsed = parseDuration(value);
  if (parsed.ok()) return *parsed;
  bad(flag, value, parsed.message());
  return std::nullopt;
}

void Flags::printHelp() const {
  std::printf("%s\n\n", synopsis_.c_str());
  std::vector<gflags::CommandLineFlagInfo> all;
  gflags::GetAllFlags(&all);  // Sorted by file, then name.
  // The program's own flags first, then the TLS flags every program shares.
  std::stable_partition(all.begin(), all.end(), [this](const gflags::CommandLineFlagInfo& info) {
    return info.filename == sourceFile_;
  });
  for (const gflags::CommandLineFlagInfo& info : all) {
    if (info.filename != sourceFile_ && info.filename != kSharedFlagsFile) continue;
    // A description may start with "METAVAR: " to name its value in the listing.
    std::string meta = info.type == "bool" ? "" : "=VALUE", description = info.description;
    const size_t colon = description.find(": ");
    if (colon != std::string::npos && colon > 0 &&
        std::all_of(description.begin(), description.begin() + static_cast<long>(colon),
                    [](char c) {
                      return std::isupper(static_cast<unsigned char>(c)) || c == '=' || c == ':' ||
                             c == '_';
                    })) {
      meta = "=" + description.substr(0, colon);
      description = description.substr(colon + 2);
    }
    std::string left = "  --" + info.name + meta;
    if (left.size() < 34) left.resize(34, ' ');
    std::printf("%s %s", left.c_str(), description.c_str());
    std::string byDefault = info.default_value;
    // gflags prints doubles with every digit (0.80000000000000004).
    if (info.type == "double") {
      char shortest[32];
      std::snprintf(shortest, sizeof(shortest), "%g", std::strtod(byDefault.c_str(), nullptr));
      byDefault = shortest;
    }
    if (!byDefault.empty()) std::printf(" (default: %s)", byDefault.c_str());
    std::printf("\n");
  }
  std::printf(
      "\nAny flag can also come from the environment as HARVEST_<NAME> (e.g. "
      "HARVEST_LOG_DIR=/var/log/harvest); the command line wins. The --ssl_* flags also read "
      "Mesos's LIBPROCESS_SSL_<NAME> (e.g. LIBPROCESS_SSL_ENABLED=true), after "
      "HARVEST_SSL_<NAME>.\nDurations take Mesos units: "
      "100ms, 30secs, 5mins, 1hrs, 2days (a plain number is seconds).\nLogging (glog): --v=N "
      "(1: per-offer detail), --log_dir=DIR, --logtostderr; --flagfile=PATH reads one flag a "
      "line.\n");
}

int Flags::setupClientTls() const {
  const http::TlsOptions tls = tlsOptions();
  if (!tls.enabled) return 0;
  auto context = http::TlsContext::create(tls, http::TlsContext::Role::kClient);
  if (!context.ok()) return fail(context.message());
  http::setDefaultClientTls(*context);
  return 0;
}

http::TlsOptions Flags::tlsOptions() {
  http::TlsOptions tls;
  tls.enabled = FLAGS_ssl_enabled;
  tls.supportDowngrade = FLAGS_ssl_support_downgrade;
  tls.certFile = stripFileUrl(FLAGS_ssl_cert_file);
  tls.keyFile = stripFileUrl(FLAGS_ssl_key_file);
  tls.verifyCert = FLAGS_ssl_verify_cert;
  tls.requireCert = FLAGS_ssl_require_cert;
  tls.verifyDepth = FLAGS_ssl_verify_depth;
  tls.caDir = FLAGS_ssl_ca_dir;
  tls.caFile = stripFileUrl(FLAGS_ssl_ca_file);
  tls.ciphers = FLAGS_ssl_ciphers;
  tls.enableTlsV12 = FLAGS_ssl_enable_tls_v1_2;
  tls.enableTlsV13 = FLAGS_ssl_enable_tls_v1_3;
  return tls;
}

std::string stripFileUrl(const std::string& value) {
  constexpr const char kPrefix[] = "file://";
  return value.compare(0, sizeof(kPrefix) - 1, kPrefix) == 0 ? value.substr(sizeof(kPrefix) - 1)
                                                             : value;
}

}  // namespace harvest::apps
