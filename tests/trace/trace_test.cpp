// Record and replay: a master records a synthetic cluster's allocator calls, and the replay
// reproduces every callback; damaged traces are refused with an error naming the damage; a
// diff of two parameter sets tells their offers apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "allocator/module_api.h"
#include "master/master.h"
#include "resources/parse.h"
#include "tools/tracegen/workload.h"
#include "trace/check.h"
#include "trace/diff.h"
#include "trace/recording_allocator.h"
#include "trace/trace_format.h"
#include "trace/trace_reader.h"

namespace harvest::trace {
namespace {

std::string tempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("harvest-trace-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The built-in allocator, created the way the trace's master created it, with `overrides`.
struct Fresh {
  std::unique_ptr<Allocator> allocator;
  AllocatorOptions options;
  std::map<std::string, double> weights;
  ReplayTarget target() const { return ReplayTarget{allocator.get(), options, weights}; }
};
Fresh fresh(const v1::trace::TraceHeader& header,
            const std::map<std::string, std::string>& overrides = {}) {
  std::map<std::string, std::string> parameters;
  for (const auto& p : header.parameters()) parameters[p.key()] = p.value();
  for (const auto& [key, value] : overrides) parameters[key] = value;
  Fresh out;
  std::string error;
  out.allocator.reset(builtinAllocatorModule()->create(parameters, &out.options, &error));
  EXPECT_NE(out.allocator, nullptr) << error;
  out.options.seed = header.seed();
  return out;
}

// Two minutes of 20 agents and 6 frameworks, recorded once for every test here.
class TraceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new std::string(tempPath("workload"));
    tracegen::WorkloadOptions options;
    options.trace = *path_;
    options.agents = 20;
    options.frameworks = 6;
    options.roles = 3;
    options.duration = Duration::seconds(120);
    options.seed = 3;
    Result<tracegen::WorkloadStats> stats = tracegen::runWorkload(options);
    ASSERT_TRUE(stats.ok()) << stats.message();
    stats_ = new tracegen::WorkloadStats(*stats);
  }
  static void TearDownTestSuite() {
    std::filesystem::remove(*path_);
    delete path_;
    delete stats_;
  }
  static std::unique_ptr<TraceReader> open(const std::string& bytes) {
    Result<std::unique_ptr<TraceReader>> reader = TraceReader::fromBytes(bytes, "test trace");
    EXPECT_TRUE(reader.ok()) << reader.message();
    return reader.ok() ? std::move(reader).value() : nullptr;
  }
  static std::string* path_;
  static tracegen::WorkloadStats* stats_;
};
std::string* TraceTest::path_ = nullptr;
tracegen::WorkloadStats* TraceTest::stats_ = nullptr;

// Every record of the trace, read back.
std::vector<v1::trace::TraceRecord> recordsOf(TraceReader& reader) {
  std::vector<v1::trace::TraceRecord> records;
  v1::trace::TraceRecord record;
  while (true) {
    Result<bool> read = reader.next(&record);
    EXPECT_TRUE(read.ok()) << read.message();
    if (!read.ok() || !*read) break;
    records.push_back(record);
  }
  return records;
}

std::string encode(const v1::trace::TraceHeader& header,
                   const std::vector<v1::trace::TraceRecord>& records) {
  std::string bytes(kTraceMagic);
  std::string message = header.SerializePartialAsString();
  appendVarint(message.size(), &bytes);
  bytes += message;
  for (const auto& record : records) {
    message = record.SerializePartialAsString();
    appendVarint(message.size(), &bytes);
    bytes += message;
  }
  return bytes;
}

TEST_F(TraceTest, RecordsEveryCallTheMasterMadeWithItsCallbacks) {
  Result<std::unique_ptr<TraceReader>> reader = TraceReader::open(*path_);
  ASSERT_TRUE(reader.ok()) << reader.message();
  const v1::trace::TraceHeader& header = (*reader)->header();
  EXPECT_EQ(header.format_version(), kTraceFormatVersion);
  EXPECT_EQ(header.module(), "harvest_hierarchical");
  EXPECT_EQ(header.library(), "");
  EXPECT_EQ(header.seed(), 3u);
  const std::vector<v1::trace::TraceRecord> records = recordsOf(**reader);
  ASSERT_FALSE(records.empty());
  EXPECT_TRUE(records.front().has_initialize());
  uint64_t allocates = 0, addAgents = 0, addFrameworks = 0, offers = 0;
  for (const auto& record : records) {
    allocates += record.has_allocate();
    addAgents += record.has_add_agent();
    addFrameworks += record.has_add_framework();
    for (const auto& callback : record.callbacks()) {
      if (callback.kind() == v1::trace::Callback::OFFER) offers += callback.offered_size();
    }
  }
  // One periodic cycle a second for two minutes, no event-triggered ones.
  EXPECT_EQ(allocates, 120u);
  EXPECT_EQ(addAgents, 20u);
  EXPECT_EQ(addFrameworks, 6u);
  // Every offer the frameworks saw came from a recorded callback.
  EXPECT_EQ(offers, stats_->offers);
}

TEST_F(TraceTest, CheckReproducesTheRecordedOffersExactly) {
  const std::string bytes = readAll(*path_);
  std::unique_ptr<TraceReader> counting = open(bytes);
  ASSERT_NE(counting, nullptr);
  const std::vector<v1::trace::TraceRecord> records = recordsOf(*counting);
  uint64_t callbacks = 0;
  for (const auto& record : records) callbacks += record.callbacks_size();
  ASSERT_GT(callbacks, 0u);

  std::unique_ptr<TraceReader> reader = open(bytes);
  ASSERT_NE(reader, nullptr);
  Fresh target = fresh(reader->header());
  Result<CheckResult> result = checkTrace(*reader, target.target());
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_FALSE(result->divergence) << *result->divergence;
  EXPECT_EQ(result->records, records.size());
  EXPECT_EQ(result->callbacks, callbacks);
  EXPECT_EQ(result->allocateMillis.size(), 120u);
  EXPECT_EQ(result->lastTime, Time() + Duration::seconds(120));
}

TEST_F(TraceTest, CheckReportsTheFirstCallbackThatDiffers) {
  std::unique_ptr<TraceReader> reader = open(readAll(*path_));
  ASSERT_NE(reader, nullptr);
  const v1::trace::TraceHeader header = reader->header();
  std::vector<v1::trace::TraceRecord> records = recordsOf(*reader);
  size_t tampered = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].callbacks_size() > 0) {
      records[i].mutable_callbacks(0)->mutable_offered(0)->set_agent("agent-elsewhere");
      tampered = i + 1;
      break;
    }
  }
  ASSERT_GT(tampered, 0u);
  std::unique_ptr<TraceReader> damaged = open(encode(header, records));
  Fresh target = fresh(header);
  Result<CheckResult> result = checkTrace(*damaged, target.target());
  ASSERT_TRUE(result.ok()) << result.message();
  ASSERT_TRUE(result->divergence);
  EXPECT_EQ(result->records, tampered);
  const std::string prefix = "record " + std::to_string(tampered) + " (";
  EXPECT_EQ(result->divergence->rfind(prefix, 0), 0u) << *result->divergence;
  EXPECT_NE(result->divergence->find("callback 1 differs:\n  recorded: OFFER to "),
            std::string::npos)
      << *result->divergence;
  EXPECT_NE(result->divergence->find("on agent-elsewhere:"), std::string::npos)
      << *result->divergence;
}

// An operator's explain query turns decision recording on and makes every agent due once; it
// must change no offer. The recorded run had no query: replayed with one inserted after the
// first framework subscribed (as the master records it), every later offer is the same.
TEST_F(TraceTest, AnExplainQueryChangesNoOffer) {
  std::unique_ptr<TraceReader> reader = open(readAll(*path_));
  ASSERT_NE(reader, nullptr);
  const v1::trace::TraceHeader header = reader->header();
  std::vector<v1::trace::TraceRecord> records = recordsOf(*reader);
  auto firstFramework = std::find_if(records.begin(), records.end(),
                                     [](const auto& r) { return r.has_add_framework(); });
  ASSERT_NE(firstFramework, records.end());
  v1::trace::TraceRecord query;
  query.set_time(firstFramework->time());
  query.mutable_explain_decisions()->set_framework(firstFramework->add_framework().framework());
  records.insert(firstFramework + 1, query);
  std::unique_ptr<TraceReader> withQuery = open(encode(header, records));
  Fresh target = fresh(header);
  Result<CheckResult> result = checkTrace(*withQuery, target.target());
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_FALSE(result->divergence) << *result->divergence;
  EXPECT_EQ(result->records, records.size());
}

TEST_F(TraceTest, CheckReportsACallThatNoLongerFails) {
  std::unique_ptr<TraceReader> reader = open(readAll(*path_));
  ASSERT_NE(reader, nullptr);
  const v1::trace::TraceHeader header = reader->header();
  std::vector<v1::trace::TraceRecord> records = recordsOf(*reader);
  ASSERT_GE(records.size(), 2u);
  records[1].set_error("recorded refusal");
  Fresh target = fresh(header);
  std::unique_ptr<TraceReader> damaged = open(encode(header, records));
  Result<CheckResult> result = checkTrace(*damaged, target.target());
  ASSERT_TRUE(result.ok()) << result.message();
  ASSERT_TRUE(result->divergence);
  EXPECT_EQ(result->records, 2u);
  EXPECT_NE(result->divergence->find(
                "the recorded call failed: recorded refusal; the replayed call succeeded"),
            std::string::npos)
      << *result->divergence;
}

TEST_F(TraceTest, TruncatedTraceIsAnErrorNamingTheRecord) {
  const std::string bytes = readAll(*path_);
  std::unique_ptr<TraceReader> whole = open(bytes);
  ASSERT_NE(whole, nullptr);
  const uint64_t records = recordsOf(*whole).size();
  std::unique_ptr<TraceReader> reader = open(bytes.substr(0, bytes.size() - 3));
  ASSERT_NE(reader, nullptr);
  Fresh target = fresh(reader->header());
  Result<CheckResult> result = checkTrace(*reader, target.target());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.code(), StatusCode::kCorruption);
  EXPECT_NE(result.message().find("test trace is damaged at byte "), std::string::npos)
      << result.message();
  EXPECT_NE(result.message().find(": the trace is cut short: record " + std::to_string(records)),
            std::string::npos)
      << result.message();
}

TEST(TraceReaderTest, RefusesWhatIsNotATraceOfThisVersion) {
  Result<std::unique_ptr<TraceReader>> empty = TraceReader::fromBytes("", "t");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.message(),
            "t is not an allocator trace (it does not start with the trace magic)");

  Result<std::unique_ptr<TraceReader>> noHeader =
      TraceReader::fromBytes(std::string(kTraceMagic), "t");
  ASSERT_FALSE(noHeader.ok());
  EXPECT_EQ(noHeader.message(), "t is damaged at byte 8: the trace ends before its header");

  v1::trace::TraceHeader header;
  header.set_format_version(kTraceFormatVersion + 1);
  Result<std::unique_ptr<TraceReader>> future = TraceReader::fromBytes(encode(header, {}), "t");
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.message(), "t has trace format version 2; this build reads 1");

  std::string huge(kTraceMagic);
  appendVarint(kMaxMessageBytes + 1, &huge);
  Result<std::unique_ptr<TraceReader>> tooLong = TraceReader::fromBytes(huge, "t");
  ASSERT_FALSE(tooLong.ok());
  EXPECT_EQ(tooLong.message(),
            "t is damaged at byte 12: the header claims 67108865 bytes, more "
            "than any record");

  header.set_format_version(kTraceFormatVersion);
  std::string garbage = encode(header, {});
  garbage += std::string("\x03\xff\xff\xff", 4);
  Result<std::unique_ptr<TraceReader>> reader = TraceReader::fromBytes(garbage, "t");
  ASSERT_TRUE(reader.ok()) << reader.message();
  v1::trace::TraceRecord record;
  Result<bool> next = (*reader)->next(&record);
  ASSERT_FALSE(next.ok());
  EXPECT_NE(next.message().find("record 1 does not decode"), std::string::npos) << next.message();
}

TEST_F(TraceTest, DiffOfTheSameParametersFindsNoDifference) {
  std::unique_ptr<TraceReader> reader = open(readAll(*path_));
  ASSERT_NE(reader, nullptr);
  Fresh a = fresh(reader->header());
  Fresh b = fresh(reader->header());
  Result<DiffResult> result = diffTrace(*reader, a.target(), b.target(), 3);
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_EQ(result->differingCalls, 0u);
  EXPECT_TRUE(result->differences.empty());
  EXPECT_EQ(result->first.offers, result->second.offers);
  EXPECT_EQ(result->first.allocateMillis.size(), 120u);
  EXPECT_EQ(result->second.allocateMillis.size(), 120u);
}

TEST_F(TraceTest, DiffOfAnotherSorterReportsDifferentOffers) {
  std::unique_ptr<TraceReader> reader = open(readAll(*path_));
  ASSERT_NE(reader, nullptr);
  Fresh drf = fresh(reader->header());
  Fresh random = fresh(reader->header(), {{"sorter", "random"}});
  Result<DiffResult> result = diffTrace(*reader, drf.target(), random.target(), 2);
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_GT(result->differingCalls, 0u);
  ASSERT_EQ(result->differences.size(), 2u);
  EXPECT_EQ(result->differences[0].rfind("record ", 0), 0u);
  EXPECT_NE(result->differences[0].find("\n  first:"), std::string::npos);
  EXPECT_NE(result->differences[0].find("\n  second:"), std::string::npos);
  EXPECT_NE(result->first.offers, result->second.offers);
}

TEST_F(TraceTest, DiffOfAnotherWeightReportsDifferentOffers) {
  std::unique_ptr<TraceReader> reader = open(readAll(*path_));
  ASSERT_NE(reader, nullptr);
  Fresh recorded = fresh(reader->header());
  Fresh heavier = fresh(reader->header());
  heavier.weights = {{"role-0", 10}};
  Result<DiffResult> result = diffTrace(*reader, recorded.target(), heavier.target(), 1);
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_GT(result->differingCalls, 0u);
  ASSERT_EQ(result->differences.size(), 1u);
  EXPECT_NE(result->differences[0].find("allocate at "), std::string::npos)
      << result->differences[0];
  EXPECT_NE(result->first.offers, result->second.offers);
}

// The master's calls go through whatever becomes of the trace file.
TEST(RecordingAllocatorTest, AWriteFailureStopsRecordingNotTheAllocator) {
  Result<std::unique_ptr<TraceWriter>> writer = TraceWriter::open("/dev/full");
  ASSERT_TRUE(writer.ok()) << writer.message();
  TraceWriter* file = writer->get();
  AllocatorOptions options;
  std::string error;
  std::unique_ptr<Allocator> inner(builtinAllocatorModule()->create({}, &options, &error));
  ASSERT_NE(inner, nullptr) << error;
  RecordingAllocator recording(std::move(inner), std::move(writer).value(), {"m", "", {}});
  options.clock = [] { return Time(); };
  int offers = 0;
  AllocatorCallbacks callbacks;
  callbacks.offer = [&](const std::string&, OfferedResources&) { ++offers; };
  ASSERT_TRUE(recording.initialize(options, callbacks).ok());
  v1::FrameworkInfo info;
  info.add_roles("web");
  ASSERT_TRUE(recording.addFramework("f", info, {}, true, {}).ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (int i = 0; !file->failed() && std::chrono::steady_clock::now() < deadline; ++i) {
    ASSERT_TRUE(recording
                    .addAgent("a" + std::to_string(i), v1::AgentInfo(), std::nullopt,
                              parseResources("cpus:1;mem:64").value(), {})
                    .ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(file->failed());
  recording.allocate();
  EXPECT_EQ(offers, 1);  // One callback with every agent: the allocator carried on.
}

TEST(RecordingAllocatorTest, TheTraceReachesTheFileWithinASecond) {
  const std::string path = tempPath("flush");
  Result<std::unique_ptr<TraceWriter>> writer = TraceWriter::open(path);
  ASSERT_TRUE(writer.ok()) << writer.message();
  AllocatorOptions options;
  std::string error;
  std::unique_ptr<Allocator> inner(builtinAllocatorModule()->create({}, &options, &error));
  ASSERT_NE(inner, nullptr) << error;
  RecordingAllocator recording(std::move(inner), std::move(writer).value(), {"m", "", {}});
  options.clock = [] { return Time() + Duration::seconds(7); };
  ASSERT_TRUE(recording.initialize(options, {}).ok());
  recording.allocate();
  std::this_thread::sleep_for((TraceWriter::kFlushInterval + Duration::milliseconds(500)).chrono());
  // Still open: what is in the file was flushed by time, not by closing.
  Result<std::unique_ptr<TraceReader>> reader = TraceReader::fromBytes(readAll(path), path);
  ASSERT_TRUE(reader.ok()) << reader.message();
  const std::vector<v1::trace::TraceRecord> records = recordsOf(**reader);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0].has_initialize());
  EXPECT_TRUE(records[1].has_allocate());
  EXPECT_EQ(records[1].time(), Duration::seconds(7).nanos());
  std::filesystem::remove(path);
}

TEST(RecordingAllocatorTest, AMasterWhoseTraceCannotBeCreatedDoesNotStart) {
  EventLoop loop;
  master::MasterOptions options;
  options.allocatorTrace = "/nonexistent-dir/trace";
  Result<std::unique_ptr<master::Master>> created = master::Master::create(options, &loop);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.message(),
            "cannot create allocator trace '/nonexistent-dir/trace': No such file or directory");
}

}  // namespace
}  // namespace harvest::trace
