// The persisted master state (<work_dir>/master-state.pb), as a restarted harvest-master
// reads it: a file a crash, a full disk or another version may have left damaged.
//
// The decoding and validation are private to the master (Master::recoverFromDisk), so this
// drives the smallest public entry that reads the bytes: Master::create() with a work
// directory holding them, in process, with the built-in allocator and a simulated clock.
// When the master accepts the file, one agent it expects comes back (the persisted
// reservations are replayed over its resources) and recovery runs to its end, which
// persists the state again. Beyond "no crash": what one master wrote, the next one reads.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "agent/sim/sim_agent.h"
#include "fuzz/fuzz_support.h"
#include "master/master.h"
#include "protos/master_state.pb.h"
#include "resources/parse.h"

namespace {

namespace fs = std::filesystem;
using harvest::Duration;
using harvest::EventLoop;
using harvest::Time;
using harvest::master::Master;
using harvest::master::MasterOptions;

fs::path workDir;

void removeWorkDir() {
  std::error_code ignored;
  fs::remove_all(workDir, ignored);
}

MasterOptions options() {
  MasterOptions options;
  options.workDir = workDir.string();
  options.recoveryTimeout = Duration::seconds(1);
  options.recoveryMinFraction = 0;
  return options;
}

// The agent that comes back: static and unreserved resources for the persisted
// reservations to be replayed over.
void returnAgent(const std::string& bytes, EventLoop& loop, Master& master) {
  harvest::v1::MasterState state;
  if (!state.ParseFromString(bytes) || state.agent_ids_size() == 0) return;
  static const harvest::Resources total =
      harvest::parseResources(
          "cpus:8;mem:4096;disk:2048;ports:[31000-31099];cpus(web):2;"
          "mem(web):512")
          .value();
  auto agent = harvest::agent::SimAgent::create(state.agent_ids(0), total, &loop, &master,
                                                Duration::seconds(2));
  if (agent.ok()) (void)master.adoptAgent(std::move(agent).value());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harvest::fuzz::quietLogs();
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/harvest-fuzz-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) harvest::fuzz::fail("cannot create a work directory");
  workDir = pattern;
  std::atexit(removeWorkDir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(harvest::fuzz::asText(data, size));
  const fs::path file = workDir / "master-state.pb";
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  {
    EventLoop loop;
    auto master = Master::create(options(), &loop);
    if (!master.ok()) return 0;
    returnAgent(bytes, loop, **master);
    loop.runUntil(Time() + Duration::seconds(3));
  }
  // The first master persisted what it recovered; the next one must read it.
  EventLoop loop;
  auto next = Master::create(options(), &loop);
  if (!next.ok()) {
    harvest::fuzz::fail("a restarted master refuses its own state: " + next.message());
  }
  return 0;
}
