// The role-history file: codec, thaw, corrupt files, atomic replace and the .prev scheme.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common/atomic_file.h"
#include "protos/role_history.pb.h"
#include "role_history/checksum.h"
#include "role_history/codec.h"
#include "role_history/role_history.h"
#include "role_history/store.h"

namespace harvest {
namespace {

constexpr Duration kHour = Duration::hours(1);
constexpr Duration kDay = Duration::days(1);
constexpr Time kSaveTime = Time() + 10 * kDay;

using Agents = std::vector<AgentIdx>;

RoleLookup lookupOf(std::map<std::string, RoleIdx> roles) {
  return [roles = std::move(roles)](std::string_view name) -> std::optional<RoleIdx> {
    auto it = roles.find(std::string(name));
    if (it == roles.end()) return std::nullopt;
    return it->second;
  };
}

// (agent id, role name, active, last_used) of every record, sorted: a file's content
// independent of index assignment and record order.
using FlatRecord = std::tuple<std::string, std::string, uint32_t, Time>;
std::vector<FlatRecord> flatten(const HistorySnapshot& s) {
  std::map<uint32_t, std::string> roleNames;
  for (const auto& role : s.roles) roleNames[role.id] = role.name;
  std::vector<FlatRecord> out;
  for (const auto& r : s.records) {
    out.emplace_back(s.agents[r.agent], roleNames[r.role], r.active, r.lastUsed);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// web (0): released a0 at day 9 + 1 h and a1 at day 9 + 2 h.
// db (1):  running on a1 at save time.
// batch (2): released a2 at day 9 + 3 h.
// Saved at day 10.
class PersistenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fillSaved(saved);
    char tmpl[] = "/tmp/role_history_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  static void fillSaved(RoleHistory& h) {
    ASSERT_TRUE(h.addRole(0, "web").ok());
    ASSERT_TRUE(h.addRole(1, "db").ok());
    ASSERT_TRUE(h.addRole(2, "batch").ok());
    for (AgentIdx a{}; a < 4; ++a) ASSERT_TRUE(h.addAgent(a, "a" + std::to_string(a)).ok());
    const Time day9 = Time() + 9 * kDay;
    auto run = [&](RoleIdx role, AgentIdx agent, Time end) {
      ASSERT_TRUE(h.onStarted(role, agent, day9).ok());
      ASSERT_TRUE(h.onReleased(role, agent, end).ok());
    };
    run(0, 0, day9 + 1 * kHour);
    run(0, 1, day9 + 2 * kHour);
    run(2, 2, day9 + 3 * kHour);
    ASSERT_TRUE(h.onStarted(1, 1, day9).ok());
    ASSERT_TRUE(h.onRunning(1, 1).ok());
  }

  std::string savedBytes() { return encodeHistory(saved.snapshot(kSaveTime)); }

  // A history of the restarted allocator: same roles, agents registered with other indices.
  static void registerRestarted(RoleHistory& h, bool agents = true) {
    ASSERT_TRUE(h.addRole(0, "web").ok());
    ASSERT_TRUE(h.addRole(1, "db").ok());
    ASSERT_TRUE(h.addRole(2, "batch").ok());
    if (agents) {
      for (AgentIdx a{}; a < 4; ++a) {
        ASSERT_TRUE(h.addAgent(10 + a, "a" + std::to_string(a)).ok());
      }
    }
  }

  RoleHistory saved;
  std::string dir;
};

TEST(HistoryChecksumTest, KnownVectors) {
  EXPECT_EQ(crc32(""), 0u);
  EXPECT_EQ(crc32("a"), 0xE8B7BE43u);
  EXPECT_EQ(crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(crc32("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
}

TEST(HistoryCodecTest, RoundTripIsExact) {
  HistorySnapshot s;
  s.saveTime = Time::fromNanos(123456789);
  s.roles = {{4, "web"}, {0, "db/primary"}};
  s.agents = {"host-1.example.com", "host-2", "host-3"};
  s.records = {{0, 4, 0, Time::fromNanos(100)},
               {0, 0, 2, Time::fromNanos(-5)},
               {2, 4, 1, Time::fromNanos(0)}};
  Result<HistorySnapshot> decoded = decodeHistory(encodeHistory(s));
  ASSERT_TRUE(decoded.ok()) << decoded.message();
  EXPECT_EQ(*decoded, s);
}

TEST(HistoryCodecTest, UngroupedRecordsAreGroupedByAgent) {
  HistorySnapshot s;
  s.roles = {{0, "web"}, {1, "db"}};
  s.agents = {"x", "y"};
  s.records = {
      {1, 0, 0, Time::fromNanos(1)}, {0, 0, 0, Time::fromNanos(2)}, {1, 1, 0, Time::fromNanos(3)}};
  Result<HistorySnapshot> decoded = decodeHistory(encodeHistory(s));
  ASSERT_TRUE(decoded.ok()) << decoded.message();
  EXPECT_EQ(decoded->records,
            (std::vector<HistorySnapshot::Record>{{0, 0, 0, Time::fromNanos(2)},
                                                  {1, 0, 0, Time::fromNanos(1)},
                                                  {1, 1, 0, Time::fromNanos(3)}}));
}

TEST_F(PersistenceTest, SnapshotHoldsEveryRecordExactly) {
  const HistorySnapshot s = saved.snapshot(kSaveTime);
  EXPECT_EQ(s.saveTime, kSaveTime);
  EXPECT_EQ(s.roles, (std::vector<HistorySnapshot::Role>{{0, "web"}, {1, "db"}, {2, "batch"}}));
  const Time day9 = Time() + 9 * kDay;
  EXPECT_EQ(flatten(s), (std::vector<FlatRecord>{{"a0", "web", 0, day9 + 1 * kHour},
                                                 {"a1", "db", 1, Time::fromNanos(0)},
                                                 {"a1", "web", 0, day9 + 2 * kHour},
                                                 {"a2", "batch", 0, day9 + 3 * kHour}}));
  // a3 has no history: not in the file.
  EXPECT_EQ(s.agents.size(), 3u);
}

TEST_F(PersistenceTest, RoundTripThroughAFreshHistory) {
  RoleHistory restarted;
  registerRestarted(restarted);
  const HistoryLoadReport report = restarted.loadBytes(
      savedBytes(), kSaveTime + kHour, lookupOf({{"web", 0}, {"db", 1}, {"batch", 2}}));
  ASSERT_FALSE(report.bootstrapped) << report.reason;
  EXPECT_EQ(report.recordsLoaded, 4u);
  EXPECT_EQ(report.recordsPurged, 0u);
  EXPECT_EQ(report.recordsDroppedRoles, 0u);
  EXPECT_EQ(report.saveTime, kSaveTime);

  const Time day9 = Time() + 9 * kDay;
  EXPECT_EQ(restarted.preferredAgents(0), (Agents{11, 10}));
  // db was running at save time: thawed with last_used = save time, and nothing active
  // until rebuild() says so.
  EXPECT_EQ(restarted.preferredAgents(1), Agents{11});
  EXPECT_EQ(restarted.entry(1, 11)->lastUsed, kSaveTime);
  EXPECT_EQ(restarted.entry(1, 11)->active, 0u);
  EXPECT_EQ(restarted.preferredAgents(2), Agents{12});
  EXPECT_EQ(restarted.agentsInHistory(0), 2u);

  // Saved again, the same records (db's now carries the save time and no allocation).
  EXPECT_EQ(flatten(restarted.snapshot(kSaveTime + 2 * kHour)),
            (std::vector<FlatRecord>{{"a0", "web", 0, day9 + 1 * kHour},
                                     {"a1", "db", 0, kSaveTime},
                                     {"a1", "web", 0, day9 + 2 * kHour},
                                     {"a2", "batch", 0, day9 + 3 * kHour}}));
}

TEST_F(PersistenceTest, RebuildAfterReloadMarksLiveAllocations) {
  RoleHistory restarted;
  registerRestarted(restarted);
  ASSERT_FALSE(
      restarted.loadBytes(savedBytes(), kSaveTime, lookupOf({{"web", 0}, {"db", 1}, {"batch", 2}}))
          .bootstrapped);
  const LiveAllocation live[] = {{1, 11, 1}, {0, 13, 2}};
  ASSERT_TRUE(restarted.rebuild(live).ok());
  EXPECT_EQ(restarted.preferredAgents(1), Agents{});
  EXPECT_EQ(restarted.entry(1, 11)->active, 1u);
  EXPECT_EQ(restarted.entry(0, 13)->active, 2u);
  EXPECT_EQ(restarted.preferredAgents(0), (Agents{11, 10}));
  EXPECT_EQ(restarted.agentsInHistory(0), 3u);
}

TEST_F(PersistenceTest, ReloadWithFewerRolesDropsAndCountsTheMissingOnes) {
  RoleHistory restarted;
  registerRestarted(restarted);
  const HistoryLoadReport report =
      restarted.loadBytes(savedBytes(), kSaveTime, lookupOf({{"web", 0}, {"db", 1}}));
  ASSERT_FALSE(report.bootstrapped);
  EXPECT_EQ(report.recordsLoaded, 3u);
  EXPECT_EQ(report.recordsDroppedRoles, 1u);
  EXPECT_EQ(report.droppedRoles, std::vector<std::string>{"batch"});
  EXPECT_EQ(restarted.preferredAgents(2), Agents{});
  EXPECT_EQ(restarted.preferredAgents(0), (Agents{11, 10}));
  EXPECT_TRUE(restarted.dirty());  // The file still has them: worth rewriting.
}

TEST_F(PersistenceTest, ReloadWithMoreAndReorderedRolesMatchesByName) {
  RoleHistory restarted;
  for (AgentIdx a{}; a < 4; ++a) {
    ASSERT_TRUE(restarted.addAgent(a, "a" + std::to_string(a)).ok());
  }
  // Not registered beforehand: the lookup alone introduces them.
  const HistoryLoadReport report =
      restarted.loadBytes(savedBytes(), kSaveTime,
                          lookupOf({{"batch", 0}, {"ml", 1}, {"db", 2}, {"ops", 3}, {"web", 5}}));
  ASSERT_FALSE(report.bootstrapped);
  EXPECT_EQ(report.recordsLoaded, 4u);
  EXPECT_EQ(report.recordsDroppedRoles, 0u);
  EXPECT_EQ(restarted.roleName(5), "web");
  EXPECT_EQ(restarted.preferredAgents(5), (Agents{1, 0}));
  EXPECT_EQ(restarted.preferredAgents(2), Agents{1});
  EXPECT_EQ(restarted.preferredAgents(0), Agents{2});
  EXPECT_EQ(restarted.preferredAgents(1), Agents{});
  EXPECT_EQ(restarted.agentsInHistory(5), 2u);
  EXPECT_EQ(restarted.agentsInHistory(1), 0u);
}

TEST_F(PersistenceTest, RolesConflictingWithRegistrationsAreDropped) {
  RoleHistory restarted;
  ASSERT_TRUE(restarted.addRole(0, "web").ok());
  // The lookup says db is index 0 too, which the history knows as web: db is dropped.
  const HistoryLoadReport report =
      restarted.loadBytes(savedBytes(), kSaveTime, lookupOf({{"web", 0}, {"db", 0}}));
  EXPECT_EQ(report.droppedRoles, (std::vector<std::string>{"batch", "db"}));
  EXPECT_EQ(report.recordsLoaded, 2u);
  EXPECT_EQ(report.recordsDroppedRoles, 2u);
}

TEST_F(PersistenceTest, EntriesOlderThanThePurgeAgeAreDropped) {
  HistorySnapshot s;
  s.saveTime = Time() + 20 * kDay;
  s.roles = {{0, "web"}};
  s.agents = {"old", "edge", "fresh", "wasActive"};
  const Time now = Time() + 30 * kDay;
  s.records = {
      {0, 0, 0, now - 7 * kDay - Duration::nanoseconds(1)},  // Older than 7 days: purged.
      {1, 0, 0, now - 7 * kDay},                             // Exactly 7 days: kept.
      {2, 0, 0, now - kHour},
      {3, 0, 1, Time::fromNanos(0)}};  // Active at save time: last_used = save time, 10 days ago.
  RoleHistory h;
  const HistoryLoadReport report = h.load(s, now, lookupOf({{"web", 0}}));
  EXPECT_EQ(report.recordsLoaded, 2u);
  EXPECT_EQ(report.recordsPurged, 2u);
  EXPECT_EQ(h.dormantRecords(), 2u);
  ASSERT_TRUE(h.addAgent(0, "edge").ok());
  ASSERT_TRUE(h.addAgent(1, "fresh").ok());
  ASSERT_TRUE(h.addAgent(2, "old").ok());
  ASSERT_TRUE(h.addAgent(3, "wasActive").ok());
  EXPECT_EQ(h.preferredAgents(0), (Agents{1, 0}));
}

TEST_F(PersistenceTest, LoadedAgentsStayDormantUntilTheyRegister) {
  RoleHistory restarted;
  registerRestarted(restarted, /*agents=*/false);
  ASSERT_FALSE(
      restarted.loadBytes(savedBytes(), kSaveTime, lookupOf({{"web", 0}, {"db", 1}, {"batch", 2}}))
          .bootstrapped);
  EXPECT_EQ(restarted.dormantRecords(), 4u);
  EXPECT_EQ(restarted.preferredAgent(0), std::nullopt);
  EXPECT_EQ(restarted.agentsInHistory(0), 2u);
  // Saved before the agents return: nothing is lost.
  EXPECT_EQ(flatten(restarted.snapshot(kSaveTime)).size(), 4u);

  ASSERT_TRUE(restarted.addAgent(7, "a0").ok());
  EXPECT_EQ(restarted.preferredAgents(0), Agents{7});
  ASSERT_TRUE(restarted.addAgent(3, "a1").ok());
  EXPECT_EQ(restarted.preferredAgents(0), (Agents{3, 7}));
  EXPECT_EQ(restarted.dormantRecords(), 1u);
  EXPECT_EQ(restarted.agentsInHistory(0), 2u);
}

// ---- Corrupt files -------------------------------------------------------------------------

class CorruptFileTest : public PersistenceTest {
 protected:
  // Loads into a history that already has content, which must survive.
  HistoryLoadReport loadInto(std::string_view bytes) {
    RoleHistory& h = target;
    return h.loadBytes(bytes, kSaveTime, lookupOf({{"web", 0}, {"db", 1}, {"batch", 2}}));
  }
  void expectUntouched() {
    EXPECT_EQ(target.preferredAgents(0), (Agents{1, 0}));
    EXPECT_EQ(target.entry(1, 1)->active, 1u);
  }
  void SetUp() override {
    PersistenceTest::SetUp();
    fillSaved(target);
  }

  static v1::RoleHistoryFile parse(const std::string& bytes) {
    v1::RoleHistoryFile file;
    EXPECT_TRUE(file.ParseFromString(bytes));
    return file;
  }
  static void fixChecksum(v1::RoleHistoryFile& file) {
    file.mutable_footer()->set_body_crc32(crc32(file.body()));
  }

  RoleHistory target;
};

TEST_F(CorruptFileTest, EmptyFile) {
  const HistoryLoadReport report = loadInto("");
  EXPECT_TRUE(report.bootstrapped);
  EXPECT_EQ(report.reason, "empty file");
  expectUntouched();
}

TEST_F(CorruptFileTest, DamagedBytesAreCorruption) {
  const std::string bytes = savedBytes();
  EXPECT_EQ(decodeHistory("").code(), StatusCode::kCorruption);
  EXPECT_EQ(decodeHistory(bytes.substr(0, bytes.size() / 2)).code(), StatusCode::kCorruption);
  v1::RoleHistoryFile file = parse(bytes);
  file.mutable_footer()->set_body_crc32(file.footer().body_crc32() ^ 1);
  EXPECT_EQ(decodeHistory(file.SerializeAsString()).code(), StatusCode::kCorruption);
  EXPECT_TRUE(decodeHistory(bytes).ok());
}

TEST_F(CorruptFileTest, TruncatedAtEveryOffset) {
  const std::string bytes = savedBytes();
  ASSERT_GT(bytes.size(), 40u);
  for (size_t size = 1; size < bytes.size(); ++size) {
    const HistoryLoadReport report = loadInto(std::string_view(bytes).substr(0, size));
    ASSERT_TRUE(report.bootstrapped) << "cut at " << size;
    const bool expected = report.reason.starts_with("unparsable") ||
                          report.reason.starts_with("incomplete file (truncated?)");
    EXPECT_TRUE(expected) << "cut at " << size << ": " << report.reason;
  }
  // Cut just before the footer (at a field boundary): parses, but the footer is missing.
  v1::RoleHistoryFile file = parse(bytes);
  file.clear_footer();
  const std::string headerAndBody = file.SerializePartialAsString();
  ASSERT_EQ(bytes.compare(0, headerAndBody.size(), headerAndBody), 0);
  EXPECT_EQ(loadInto(headerAndBody).reason, "incomplete file (truncated?): missing footer");
  expectUntouched();
}

TEST_F(CorruptFileTest, FlippedByteInTheRecords) {
  std::string bytes = savedBytes();
  const std::string body = parse(bytes).body();
  const size_t at = bytes.find(body);
  ASSERT_NE(at, std::string::npos);
  bytes[at + body.size() / 2] ^= 0x20;
  const HistoryLoadReport report = loadInto(bytes);
  EXPECT_TRUE(report.bootstrapped);
  EXPECT_TRUE(report.reason.starts_with("checksum mismatch: footer says 0x")) << report.reason;
  expectUntouched();
}

TEST_F(CorruptFileTest, WrongChecksum) {
  v1::RoleHistoryFile file = parse(savedBytes());
  const uint32_t good = file.footer().body_crc32();
  file.mutable_footer()->set_body_crc32(good ^ 1);
  char expected[96];
  std::snprintf(expected, sizeof(expected),
                "checksum mismatch: footer says 0x%08x, body has 0x%08x", good ^ 1, good);
  EXPECT_EQ(loadInto(file.SerializeAsString()).reason, expected);
  expectUntouched();
}

TEST_F(CorruptFileTest, FutureVersion) {
  v1::RoleHistoryFile file = parse(savedBytes());
  file.mutable_header()->set_format_version(2);
  EXPECT_EQ(loadInto(file.SerializeAsString()).reason,
            "format version 2 is newer than the supported version 1");
  // A future layout without the fields this version requires: still reported as future.
  file.clear_footer();
  file.clear_body();
  EXPECT_EQ(loadInto(file.SerializePartialAsString()).reason,
            "format version 2 is newer than the supported version 1");
  file = parse(savedBytes());
  file.mutable_header()->set_format_version(0);
  EXPECT_EQ(loadInto(file.SerializeAsString()).reason, "format version 0 is not supported");
  expectUntouched();
}

TEST_F(CorruptFileTest, Garbage) {
  EXPECT_EQ(loadInto("this is not a role history file").reason,
            "unparsable (truncated or not a role history file)");
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    std::string junk(1 + rng() % 300, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    const HistoryLoadReport report = loadInto(junk);
    EXPECT_TRUE(report.bootstrapped);
    EXPECT_FALSE(report.reason.empty());
  }
  expectUntouched();
}

TEST_F(CorruptFileTest, AnotherProtobuf) {
  v1::RoleHistoryFile file = parse(savedBytes());
  file.mutable_header()->set_magic(0x12345678);
  EXPECT_EQ(loadInto(file.SerializeAsString()).reason,
            "not a role history file (magic 0x12345678)");
  expectUntouched();
}

TEST_F(CorruptFileTest, RecordCountMismatch) {
  v1::RoleHistoryFile file = parse(savedBytes());
  file.mutable_footer()->set_record_count(5);
  EXPECT_EQ(loadInto(file.SerializeAsString()).reason,
            "record count mismatch: footer says 5, body has 4");
  expectUntouched();
}

TEST_F(CorruptFileTest, InconsistentBodyWithAValidChecksum) {
  const std::string bytes = savedBytes();
  auto withBody = [&](auto edit) {
    v1::RoleHistoryFile file = parse(bytes);
    v1::RoleHistoryBody body;
    EXPECT_TRUE(body.ParseFromString(file.body()));
    edit(body);
    file.set_body(body.SerializeAsString());
    fixChecksum(file);
    return loadInto(file.SerializeAsString()).reason;
  };
  EXPECT_EQ(withBody([](v1::RoleHistoryBody& b) {
              b.mutable_agents(0)->mutable_records(0)->set_role(9);
            }),
            "agent 'a0' has a record for unknown role id 9");
  EXPECT_EQ(withBody([](v1::RoleHistoryBody& b) { b.mutable_roles(1)->set_id(0); }),
            "role id 0 appears twice");
  EXPECT_EQ(withBody([](v1::RoleHistoryBody& b) { b.mutable_roles(1)->set_name("web"); }),
            "role name 'web' appears twice");
  EXPECT_EQ(withBody([](v1::RoleHistoryBody& b) { b.mutable_agents(1)->set_agent("a0"); }),
            "agent 'a0' appears twice");
  EXPECT_EQ(withBody([](v1::RoleHistoryBody& b) {
              b.mutable_agents(0)->add_records()->CopyFrom(b.agents(0).records(0));
              b.mutable_agents(1)->mutable_records()->RemoveLast();
            }),
            "agent 'a0' has two records for one role");
  {
    v1::RoleHistoryFile file = parse(bytes);
    file.set_body("\xff\xff\xff");
    fixChecksum(file);
    EXPECT_EQ(loadInto(file.SerializeAsString()).reason, "body unparsable");
  }
  expectUntouched();
}

// ---- Atomic replace --------------------------------------------------------------------------

TEST_F(PersistenceTest, AtomicWriteReplacesTheFile) {
  const std::string path = dir + "/history.pb";
  ASSERT_TRUE(writeFileAtomically(path, "first").ok());
  ASSERT_TRUE(writeFileAtomically(path, "second").ok());
  Result<std::string> read = readWholeFile(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "second");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_EQ(readWholeFile(dir + "/nothing").code(), StatusCode::kNotFound);
}

TEST_F(PersistenceTest, FailedWriteLeavesThePreviousFileIntact) {
  const std::string path = dir + "/history.pb";
  const std::string first = savedBytes();
  ASSERT_TRUE(writeFileAtomically(path, first).ok());
  const std::string second(4096, 'x');

  // A write that stops part way, as on a full disk: the file size limit makes write() fail
  // with EFBIG after 1000 bytes (SIGXFSZ ignored so the process survives it).
  {
    struct rlimit saved;
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
    const sighandler_t previous = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = saved;
    small.rlim_cur = 1000;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    const Status failed = writeFileAtomically(path, second);
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &saved), 0);
    std::signal(SIGXFSZ, previous);
    EXPECT_EQ(failed.code(), StatusCode::kIOError);
    EXPECT_NE(failed.message().find("File too large"), std::string::npos) << failed.message();
  }
  EXPECT_EQ(*readWholeFile(path), first);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  // A temp file complete and synced whose rename fails (the target is a non-empty directory):
  // the directory is left as it was and the temp file is gone.
  const std::string occupied = dir + "/occupied";
  std::filesystem::create_directories(occupied + "/inside");
  const Status renameFailed = writeFileAtomically(occupied, second);
  EXPECT_EQ(renameFailed.code(), StatusCode::kIOError);
  EXPECT_NE(renameFailed.message().find("cannot rename onto"), std::string::npos)
      << renameFailed.message();
  EXPECT_TRUE(std::filesystem::is_directory(occupied + "/inside"));
  EXPECT_FALSE(std::filesystem::exists(occupied + ".tmp"));

  RoleHistory restarted;
  registerRestarted(restarted);
  EXPECT_FALSE(HistoryStore(path)
                   .load(restarted, kSaveTime, lookupOf({{"web", 0}, {"db", 1}, {"batch", 2}}))
                   .bootstrapped);
}

TEST_F(PersistenceTest, WriteIntoAnUnusableDirectoryFails) {
  // Running as root defeats permission bits, so use paths no one can create.
  const std::string notADir = dir + "/plain-file";
  ASSERT_TRUE(writeFileAtomically(notADir, "x").ok());
  const Status underFile = writeFileAtomically(notADir + "/history.pb", "data");
  EXPECT_FALSE(underFile.ok());
  EXPECT_NE(underFile.message().find("Not a directory"), std::string::npos) << underFile.message();
  EXPECT_FALSE(writeFileAtomically(dir + "/no/such/dir/history.pb", "data").ok());
  EXPECT_EQ(*readWholeFile(notADir), "x");
}

// ---- The .prev scheme ------------------------------------------------------------------------

TEST_F(PersistenceTest, LoadedPrimaryBecomesThePreviousGoodFile) {
  const HistoryStore store(dir + "/history.pb");
  EXPECT_EQ(store.prevPath(), dir + "/history.pb.prev");
  const std::string bytes = savedBytes();
  ASSERT_TRUE(store.save(bytes).ok());
  EXPECT_FALSE(std::filesystem::exists(store.prevPath()));  // Not proven yet.

  RoleHistory restarted;
  registerRestarted(restarted);
  const HistoryLoadReport report =
      store.load(restarted, kSaveTime, lookupOf({{"web", 0}, {"db", 1}, {"batch", 2}}));
  ASSERT_FALSE(report.bootstrapped);
  EXPECT_EQ(report.source, store.path());
  EXPECT_EQ(report.primaryReason, "");
  EXPECT_EQ(*readWholeFile(store.prevPath()), bytes);
}

TEST_F(PersistenceTest, CorruptPrimaryFallsBackToThePreviousGoodFile) {
  const HistoryStore store(dir + "/history.pb");
  ASSERT_TRUE(store.save(savedBytes()).ok());
  {
    RoleHistory first;
    registerRestarted(first);
    ASSERT_FALSE(store.load(first, kSaveTime, lookupOf({{"web", 0}})).bootstrapped);
  }
  // A newer save, then damage to it.
  ASSERT_TRUE(saved.onReleased(1, 1, kSaveTime + kHour).ok());
  ASSERT_TRUE(store.save(encodeHistory(saved.snapshot(kSaveTime + kHour))).ok());
  std::string damaged = *readWholeFile(store.path());
  damaged.resize(damaged.size() - 3);
  ASSERT_TRUE(writeFileAtomically(store.path(), damaged).ok());

  RoleHistory restarted;
  registerRestarted(restarted);
  const HistoryLoadReport report =
      store.load(restarted, kSaveTime + 2 * kHour, lookupOf({{"web", 0}, {"db", 1}, {"batch", 2}}));
  ASSERT_FALSE(report.bootstrapped);
  EXPECT_EQ(report.source, store.prevPath());
  EXPECT_TRUE(report.primaryReason.starts_with("unparsable")) << report.primaryReason;
  // The older content: db was still running then.
  EXPECT_EQ(restarted.entry(1, 11)->lastUsed, kSaveTime);
}

TEST_F(PersistenceTest, NoUsableFileBootstraps) {
  const HistoryStore store(dir + "/history.pb");
  RoleHistory h;
  const RoleLookup lookup = lookupOf({{"web", 0}});
  HistoryLoadReport report = store.load(h, Time(), lookup);
  EXPECT_TRUE(report.bootstrapped);
  EXPECT_EQ(report.reason, "no file '" + dir + "/history.pb'");

  ASSERT_TRUE(writeFileAtomically(store.path(), "").ok());
  report = store.load(h, Time(), lookup);
  EXPECT_TRUE(report.bootstrapped);
  EXPECT_EQ(report.reason, "empty file");

  ASSERT_TRUE(writeFileAtomically(store.prevPath(), "junk").ok());
  report = store.load(h, Time(), lookup);
  EXPECT_TRUE(report.bootstrapped);
  EXPECT_EQ(report.reason, "empty file");
  EXPECT_EQ(h.preferredAgent(0), std::nullopt);
  EXPECT_EQ(h.dormantRecords(), 0u);
}

}  // namespace
}  // namespace harvest
