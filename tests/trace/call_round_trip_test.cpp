// Every allocator call the trace records, made once with arguments that fill every field its
// record has: the record written is exactly the one expected (the file format), and replaying
// it into another recorder writes the same record again (the replay decodes every argument).
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "resources/parse.h"
#include "trace/recording_allocator.h"
#include "trace/replayer.h"
#include "trace/trace_reader.h"

namespace harvest::trace {
namespace {

// Accepts every call; refuses quota updates, so a recorded refusal is among the records.
class AcceptingAllocator final : public Allocator {
 public:
  Status initialize(AllocatorOptions, AllocatorCallbacks) override { return {}; }
  Status recover(int, const std::map<std::string, Quota>&) override { return {}; }
  Status addFramework(const std::string&, const v1::FrameworkInfo&,
                      const std::map<std::string, ResourcesByRole>&, bool,
                      const FrameworkOptions&) override {
    return {};
  }
  Status removeFramework(const std::string&) override { return {}; }
  Status activateFramework(const std::string&) override { return {}; }
  Status deactivateFramework(const std::string&) override { return {}; }
  Status updateFramework(const std::string&, const v1::FrameworkInfo&,
                         const FrameworkOptions&) override {
    return {};
  }
  Status addAgent(const std::string&, const v1::AgentInfo&,
                  const std::optional<v1::Unavailability>&, const Resources&,
                  const std::map<std::string, ResourcesByRole>&) override {
    return {};
  }
  Status removeAgent(const std::string&) override { return {}; }
  Status updateAgent(const std::string&, const v1::AgentInfo&, const std::optional<Resources>&,
                     const std::optional<Resources>&) override {
    return {};
  }
  Status activateAgent(const std::string&) override { return {}; }
  Status deactivateAgent(const std::string&) override { return {}; }
  Status updateUnavailability(const std::string&,
                              const std::optional<v1::Unavailability>&) override {
    return {};
  }
  Status updateInverseOffer(const std::string&, const std::string&, std::optional<bool>,
                            const std::optional<v1::Filters>&) override {
    return {};
  }
  Status updateAllocation(const std::string&, const std::string&, const std::string&,
                          const Resources&, const std::vector<ResourceConversion>&) override {
    return {};
  }
  Status updateAvailable(const std::string&, const std::vector<ResourceConversion>&) override {
    return {};
  }
  Status recoverResources(const std::string&, const std::string&, const std::string&,
                          const Resources&, const std::optional<v1::Filters>&) override {
    return {};
  }
  Status suppressOffers(const std::string&, const std::set<std::string>&) override { return {}; }
  Status reviveOffers(const std::string&, const std::set<std::string>&) override { return {}; }
  Status updateQuota(const std::string& role, const Quota&) override {
    return Status::notFound("no quota for " + role);
  }
  Status updateWeights(const std::map<std::string, double>&) override { return {}; }
  void pause() override {}
  void resume() override {}
  void allocate() override {}
  void allocate(const std::set<std::string>&) override {}
  std::map<std::string, double> metrics() const override { return {}; }
  Result<DecisionExplanation> explainDecisions(const std::string&,
                                               const std::optional<std::string>&) override {
    return DecisionExplanation{};
  }
};

std::string tempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("harvest-calls-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

std::unique_ptr<RecordingAllocator> recorder(const std::string& path) {
  Result<std::unique_ptr<TraceWriter>> writer = TraceWriter::open(path);
  EXPECT_TRUE(writer.ok()) << writer.message();
  return std::make_unique<RecordingAllocator>(std::make_unique<AcceptingAllocator>(),
                                              std::move(writer).value(),
                                              RecordedModule{"m", "", {}});
}

std::vector<v1::trace::TraceRecord> readRecords(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  Result<std::unique_ptr<TraceReader>> reader = TraceReader::fromBytes(bytes.str(), path);
  EXPECT_TRUE(reader.ok()) << reader.message();
  std::vector<v1::trace::TraceRecord> records;
  if (!reader.ok()) return records;
  v1::trace::TraceRecord record;
  while (true) {
    Result<bool> read = (*reader)->next(&record);
    EXPECT_TRUE(read.ok()) << read.message();
    if (!read.ok() || !*read) break;
    records.push_back(record);
  }
  return records;
}

Resources resources(const std::string& text) {
  return parseResources(text).value();
}

// One of each call, every optional argument set, at one second apart.
void makeEveryCall(Allocator& allocator, Time& now) {
  AllocatorOptions options;
  options.clock = [&now] { return now; };
  options.seed = 9;
  ASSERT_TRUE(allocator.initialize(options, {}).ok());
  const auto tick = [&now] { now += Duration::seconds(1); };
  Quota quota{
      Quantities{{kinds::kCpus, Scalar::fromUnits(2)}},
      ResourceLimits{{kinds::kCpus, Scalar::fromUnits(0)}, {kinds::kMem, Scalar::fromUnits(512)}}};
  tick(), (void)allocator.recover(2, {{"web", quota}, {"batch", Quota{}}});
  v1::FrameworkInfo framework;
  framework.add_roles("web");
  const std::map<std::string, ResourcesByRole> used{{"a1", {{"web", resources("cpus:1")}}}};
  tick(), (void)allocator.addFramework("f1", framework, used, true,
                                       std::set<std::string>{"web", "batch"});
  tick(), (void)allocator.removeFramework("f2");
  tick(), (void)allocator.activateFramework("f3");
  tick(), (void)allocator.deactivateFramework("f4");
  tick(), (void)allocator.updateFramework("f1", framework, std::set<std::string>{"web"});
  v1::AgentInfo agent;
  agent.set_hostname("h1");
  v1::Unavailability unavailability;
  unavailability.mutable_start()->set_nanoseconds(5);
  tick(), (void)allocator.addAgent("a1", agent, unavailability, resources("cpus:4;mem:64"),
                                   {{"f1", {{"web", resources("cpus:1")}}}});
  tick(), (void)allocator.removeAgent("a2");
  tick(), (void)allocator.updateAgent("a1", agent, resources("cpus:8"), resources("cpus:2"));
  tick(), (void)allocator.activateAgent("a3");
  tick(), (void)allocator.deactivateAgent("a4");
  tick(), (void)allocator.updateUnavailability("a1", unavailability);
  v1::Filters filters;
  filters.set_refuse_seconds(3);
  tick(), (void)allocator.updateInverseOffer("a1", "f1", false, filters);
  const std::vector<ResourceConversion> conversions{{resources("cpus:1"), resources("cpus:2")}};
  tick(), (void)allocator.updateAllocation("f1", "a1", "web", resources("mem:8"), conversions);
  tick(), (void)allocator.updateAvailable("a1", conversions);
  tick(), (void)allocator.recoverResources("f1", "a1", "web", resources("cpus:1"), filters);
  tick(), (void)allocator.suppressOffers("f1", {"web"});
  tick(), (void)allocator.reviveOffers("f1", {"batch", "web"});
  tick(), (void)allocator.updateQuota("web", quota);
  tick(), (void)allocator.updateWeights({{"web", 2.5}});
  tick(), allocator.pause();
  tick(), allocator.resume();
  tick(),
      (void)allocator.placementEvent("a1", "web", PlacementEvent::kTaskFailed, Time::fromNanos(7));
  tick(), allocator.allocate();
  tick(), allocator.allocate({"a1", "a2"});
  tick(), (void)allocator.explainDecisions("f1", std::string("a1"));
  tick(), (void)allocator.explainDecisions("f1", std::nullopt);
}

// Each record in protobuf text form: the bytes the file must hold are these, serialized.
const std::vector<std::string> kExpectedRecords = {
    R"(time: 0 initialize { })",
    R"(time: 1000000000 recover { expected_agents: 2 quotas { role: "batch" } quotas { role: "web" guarantee { kind: "cpus" milli: 2000 } limit { bounds { kind: "cpus" milli: 0 } bounds { kind: "mem" milli: 512000 } } } })",
    R"(time: 2000000000 add_framework { framework: "f1" info { roles: "web" } used_by_agent { holder: "a1" by_role { role: "web" resources { name: "cpus" type: SCALAR scalar { value: 1 } } } } active: true suppressed_roles: "batch" suppressed_roles: "web" })",
    R"(time: 3000000000 remove_framework: "f2")",
    R"(time: 4000000000 activate_framework: "f3")",
    R"(time: 5000000000 deactivate_framework: "f4")",
    R"(time: 6000000000 update_framework { framework: "f1" info { roles: "web" } suppressed_roles: "web" })",
    R"(time: 7000000000 add_agent { agent: "a1" info { hostname: "h1" } unavailability { start { nanoseconds: 5 } } total { name: "cpus" type: SCALAR scalar { value: 4 } } total { name: "mem" type: SCALAR scalar { value: 64 } } used_by_framework { holder: "f1" by_role { role: "web" resources { name: "cpus" type: SCALAR scalar { value: 1 } } } } })",
    R"(time: 8000000000 remove_agent: "a2")",
    R"(time: 9000000000 update_agent { agent: "a1" info { hostname: "h1" } total { resources { name: "cpus" type: SCALAR scalar { value: 8 } } } oversubscribed { resources { name: "cpus" type: SCALAR scalar { value: 2 } } } })",
    R"(time: 10000000000 activate_agent: "a3")",
    R"(time: 11000000000 deactivate_agent: "a4")",
    R"(time: 12000000000 update_unavailability { agent: "a1" unavailability { start { nanoseconds: 5 } } })",
    R"(time: 13000000000 update_inverse_offer { agent: "a1" framework: "f1" accepted: false filters { refuse_seconds: 3 } })",
    R"(time: 14000000000 update_allocation { framework: "f1" agent: "a1" role: "web" offered { name: "mem" type: SCALAR scalar { value: 8 } } conversions { consumed { name: "cpus" type: SCALAR scalar { value: 1 } } converted { name: "cpus" type: SCALAR scalar { value: 2 } } } })",
    R"(time: 15000000000 update_available { agent: "a1" conversions { consumed { name: "cpus" type: SCALAR scalar { value: 1 } } converted { name: "cpus" type: SCALAR scalar { value: 2 } } } })",
    R"(time: 16000000000 recover_resources { framework: "f1" agent: "a1" role: "web" resources { name: "cpus" type: SCALAR scalar { value: 1 } } filters { refuse_seconds: 3 } })",
    R"(time: 17000000000 suppress_offers { framework: "f1" roles: "web" })",
    R"(time: 18000000000 revive_offers { framework: "f1" roles: "batch" roles: "web" })",
    R"(time: 19000000000 error: "no quota for web" update_quota { role: "web" guarantee { kind: "cpus" milli: 2000 } limit { bounds { kind: "cpus" milli: 0 } bounds { kind: "mem" milli: 512000 } } })",
    R"(time: 20000000000 update_weights { weights { role: "web" weight: 2.5 } })",
    R"(time: 21000000000 pause { })",
    R"(time: 22000000000 resume { })",
    R"(time: 23000000000 placement_event { agent: "a1" role: "web" event: 4 started_at: 7 })",
    R"(time: 24000000000 allocate { })",
    R"(time: 25000000000 allocate { some_agents: true agents: "a1" agents: "a2" })",
    R"(time: 26000000000 explain_decisions { framework: "f1" agent: "a1" })",
    R"(time: 27000000000 explain_decisions { framework: "f1" })",
};

TEST(CallRoundTripTest, EveryCallIsRecordedAsTheFormatSaysAndReplaysToTheSameRecord) {
  const std::string recordedPath = tempPath("recorded");
  const std::string replayedPath = tempPath("replayed");
  Time now;
  {
    std::unique_ptr<RecordingAllocator> recording = recorder(recordedPath);
    makeEveryCall(*recording, now);
  }
  const std::vector<v1::trace::TraceRecord> recorded = readRecords(recordedPath);
  ASSERT_EQ(recorded.size(), kExpectedRecords.size());
  google::protobuf::TextFormat::Parser parser;
  parser.AllowPartialMessage(true);  // The infos leave out fields Mesos requires.
  for (size_t i = 0; i < recorded.size(); ++i) {
    v1::trace::TraceRecord expected;
    ASSERT_TRUE(parser.ParseFromString(kExpectedRecords[i], &expected)) << kExpectedRecords[i];
    EXPECT_EQ(recorded[i].SerializePartialAsString(), expected.SerializePartialAsString())
        << "recorded " << recorded[i].ShortDebugString() << "\nexpected " << kExpectedRecords[i];
  }

  {
    std::unique_ptr<RecordingAllocator> replayedInto = recorder(replayedPath);
    Replayer replayer(ReplayTarget{replayedInto.get(), AllocatorOptions(), {}});
    for (const auto& record : recorded) {
      Result<ReplayedCall> replayed = replayer.replay(record);
      ASSERT_TRUE(replayed.ok()) << describeCall(record) << ": " << replayed.message();
      EXPECT_EQ(replayed->status.ok() ? "" : replayed->status.message(), record.error())
          << describeCall(record);
    }
  }
  const std::vector<v1::trace::TraceRecord> replayed = readRecords(replayedPath);
  ASSERT_EQ(replayed.size(), recorded.size());
  for (size_t i = 0; i < recorded.size(); ++i) {
    EXPECT_EQ(replayed[i].SerializePartialAsString(), recorded[i].SerializePartialAsString())
        << "replayed " << replayed[i].ShortDebugString() << "\nrecorded "
        << recorded[i].ShortDebugString();
  }
  std::filesystem::remove(recordedPath);
  std::filesystem::remove(replayedPath);
}

}  // namespace
}  // namespace harvest::trace
