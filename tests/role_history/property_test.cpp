// Random event sequences against a plain reference model: after every step the history's
// lists, counters and queries must match what the model computes from scratch.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "role_history/codec.h"
#include "role_history/role_history.h"

namespace harvest {
namespace {

constexpr RoleIdx kRoles = 3;
constexpr int kAgentNames = 8;
constexpr uint32_t kThreshold = 3;
constexpr Duration kShortLived = Duration::seconds(60);

struct ModelEntry {
  uint32_t requested = 0, starting = 0, active = 0, releasing = 0, failures = 0;
  Time lastUsed;
  bool hasHistory = false;
  uint32_t allocations() const { return starting + active + releasing; }
  bool idle() const { return requested == 0 && allocations() == 0; }
  bool eligible() const { return hasHistory && idle() && failures <= kThreshold; }
  bool persistable() const { return hasHistory || allocations() > 0; }
};

// Ends one allocation from the stages in order; false if there is none.
bool endOne(std::initializer_list<uint32_t*> stages) {
  for (uint32_t* s : stages) {
    if (*s > 0) {
      --*s;
      return true;
    }
  }
  return false;
}

class Model {
 public:
  // Keyed by (role, agent name): agents keep their history across indices.
  std::map<std::pair<RoleIdx, std::string>, ModelEntry> entries;
  std::set<std::string> connected;

  ModelEntry* get(RoleIdx role, const std::string& agent) {
    auto it = entries.find({role, agent});
    return it == entries.end() ? nullptr : &it->second;
  }
  ModelEntry& make(RoleIdx role, const std::string& agent) { return entries[{role, agent}]; }
  void gc() {
    std::erase_if(entries, [&](const auto& kv) {
      // Disconnected agents keep only what is persistable (and lose live state).
      const ModelEntry& e = kv.second;
      if (!connected.count(kv.first.second)) return !e.hasHistory;
      return !e.persistable() && e.idle() && e.failures == 0;
    });
  }
};

class PropertyTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    HistoryRoleConfig defaults;
    defaults.failureThreshold = kThreshold;
    defaults.shortLived = kShortLived;
    RoleHistoryOptions options;
    options.defaults = defaults;
    history = std::make_unique<RoleHistory>(options);
    for (RoleIdx r{}; r < kRoles; ++r) ASSERT_TRUE(history->addRole(r, roleName(r)).ok());
    for (int a = 0; a < kAgentNames; ++a) connect(agentName(a));
  }

  static std::string roleName(RoleIdx r) { return "role" + std::to_string(r); }
  static std::string agentName(int a) { return "agent" + std::to_string(a); }

  void connect(const std::string& name) {
    const AgentIdx index = nextIndex++;
    ASSERT_TRUE(history->addAgent(index, name).ok());
    indexOf[name] = index;
    model.connected.insert(name);
  }

  void disconnect(const std::string& name, Time now) {
    ASSERT_TRUE(history->removeAgent(indexOf.at(name), now).ok());
    for (auto& [key, e] : model.entries) {
      if (key.second != name) continue;
      if (e.persistable()) {
        if (e.allocations() > 0) e.lastUsed = now;
        e.hasHistory = true;
      }
      e.requested = e.starting = e.active = e.releasing = e.failures = 0;
    }
    model.connected.erase(name);
    indexOf.erase(name);
    model.gc();
  }

  void check() {
    for (RoleIdx r{}; r < kRoles; ++r) {
      // The list: exactly the eligible connected agents, newest first.
      std::vector<std::pair<Time, std::string>> expected;
      uint64_t inHistory = 0;
      for (const auto& [key, e] : model.entries) {
        if (key.first != r) continue;
        if (e.persistable()) ++inHistory;
        if (model.connected.count(key.second) && e.eligible()) {
          expected.push_back({e.lastUsed, key.second});
        }
      }
      std::vector<std::pair<Time, std::string>> actual;
      for (AgentIdx a : history->preferredAgents(r)) {
        actual.push_back({history->entry(r, a)->lastUsed, history->agentId(a)});
      }
      ASSERT_TRUE(std::is_sorted(actual.begin(), actual.end(),
                                 [](const auto& x, const auto& y) { return x.first > y.first; }));
      std::sort(actual.begin(), actual.end());
      std::sort(expected.begin(), expected.end());
      ASSERT_EQ(actual, expected) << "role " << r;
      ASSERT_EQ(history->agentsInHistory(r), inHistory) << "role " << r;
      if (expected.empty()) {
        ASSERT_EQ(history->preferredAgent(r), std::nullopt);
      }
      for (const std::string& name : model.connected) {
        const ModelEntry* e = model.get(r, name);
        const AgentIdx a = indexOf.at(name);
        ASSERT_EQ(history->isPreferred(r, a), e && e->eligible());
        ASSERT_EQ(history->isActiveOrOffered(r, a), e && !e->idle());
        const HistoryEntry* h = history->entry(r, a);
        if (e && (e->persistable() || !e->idle() || e->failures > 0)) {
          ASSERT_NE(h, nullptr);
          ASSERT_EQ(h->requested, e->requested);
          ASSERT_EQ(h->allocations(), e->allocations());
          ASSERT_EQ(h->failures, e->failures);
          if (e->hasHistory) {
            ASSERT_EQ(h->lastUsed, e->lastUsed);
          }
        } else {
          ASSERT_EQ(h, nullptr) << roleName(r) << " on " << name;
        }
      }
    }
  }

  // The saved file, reloaded into a fresh history, holds the model's persistable records,
  // thawed.
  void checkRoundTrip(Time now) {
    const std::string bytes = encodeHistory(history->snapshot(now));
    RoleHistory reloaded;
    for (RoleIdx r{}; r < kRoles; ++r) ASSERT_TRUE(reloaded.addRole(r, roleName(r)).ok());
    const HistoryLoadReport report =
        reloaded.loadBytes(bytes, now, [](std::string_view name) -> std::optional<RoleIdx> {
          return static_cast<RoleIdx>(name.back() - '0');
        });
    ASSERT_FALSE(report.bootstrapped) << report.reason;
    std::multiset<std::tuple<std::string, RoleIdx, Time>> expected, actual;
    for (const auto& [key, e] : model.entries) {
      if (!e.persistable()) continue;
      expected.insert({key.second, key.first, e.allocations() > 0 ? now : e.lastUsed});
    }
    const HistorySnapshot again = reloaded.snapshot(now);
    for (const auto& rec : again.records) {
      EXPECT_EQ(rec.active, 0u);
      actual.insert({again.agents[rec.agent], rec.role, rec.lastUsed});
    }
    ASSERT_EQ(actual, expected);
  }

  std::unique_ptr<RoleHistory> history;
  Model model;
  std::map<std::string, AgentIdx> indexOf;
  AgentIdx nextIndex{};
};

TEST_P(PropertyTest, MatchesReferenceModel) {
  std::mt19937 rng(GetParam());
  Time now = Time::fromNanos(1'000);
  for (int step = 0; step < 6'000; ++step) {
    now += Duration::nanoseconds(static_cast<int64_t>(1 + rng() % 30'000'000'000));
    const RoleIdx role = rng() % kRoles;
    const std::string name = agentName(static_cast<int>(rng() % kAgentNames));
    const bool connected = model.connected.count(name) > 0;
    const int op = static_cast<int>(rng() % 13);
    if (!connected) {
      if (op < 3) connect(name);
      continue;
    }
    const AgentIdx agent = indexOf.at(name);
    ModelEntry* e = model.get(role, name);
    switch (op) {
      case 0: {
        ASSERT_TRUE(history->onOffered(role, agent).ok());
        model.make(role, name).requested++;
        break;
      }
      case 1: {
        const bool accept = rng() % 2;
        const bool ok = history->onOfferAnswered(role, agent, accept, now).ok();
        ASSERT_EQ(ok, e && e->requested > 0);
        if (ok) {
          e->requested--;
          if (accept) e->starting++;
        }
        break;
      }
      case 2:
        ASSERT_TRUE(history->onStarted(role, agent, now).ok());
        model.make(role, name).starting++;
        break;
      case 3: {
        const bool ok = history->onRunning(role, agent).ok();
        ASSERT_EQ(ok, e && e->starting > 0);
        if (ok) e->starting--, e->active++;
        break;
      }
      case 4: {
        const bool ok = history->onReleasing(role, agent).ok();
        ASSERT_EQ(ok, e && e->active + e->starting > 0);
        if (ok) endOne({&e->active, &e->starting}), e->releasing++;
        break;
      }
      case 5:
      case 6: {
        const bool ok = op == 5 ? history->onReleased(role, agent, now).ok()
                                : history->onPreempted(role, agent, now).ok();
        ASSERT_EQ(ok, e && e->allocations() > 0);
        if (ok) {
          if (op == 5) {
            endOne({&e->releasing, &e->active, &e->starting});
          } else {
            endOne({&e->active, &e->starting, &e->releasing});
          }
          e->lastUsed = now;
          e->hasHistory = true;
        }
        break;
      }
      case 7:
      case 8: {
        const Duration ran = op == 7 ? kShortLived : kShortLived + Duration::nanoseconds(1);
        const bool ok = history->onFailed(role, agent, now, now - ran).ok();
        ASSERT_EQ(ok, e && e->allocations() > 0);
        if (ok) {
          endOne({&e->active, &e->starting, &e->releasing});
          if (op == 7) {
            e->failures++;
          } else {
            e->lastUsed = now;
            e->hasHistory = true;
          }
        }
        break;
      }
      case 9:
        if (rng() % 8 == 0) {
          history->resetFailures(now);
          for (auto& [key, m] : model.entries) m.failures = 0;
        }
        break;
      case 10:
        if (rng() % 4 == 0) disconnect(name, now);
        break;
      case 11: {
        // A restart report for this agent: set, not add.
        const uint32_t count = rng() % 3;
        const LiveAllocation live[] = {{role, agent, count}};
        ASSERT_TRUE(history->rebuild(live).ok());
        ModelEntry& m = model.make(role, name);
        m.active = count;
        if (count > 0) m.hasHistory = true;
        break;
      }
      case 12:
        if (rng() % 50 == 0) checkRoundTrip(now);
        break;
    }
    model.gc();
    check();
    if (HasFatalFailure()) {
      ADD_FAILURE() << "step " << step << " op " << op;
      return;
    }
  }
  checkRoundTrip(now);
}

INSTANTIATE_TEST_SUITE_P(Seeds, PropertyTest, ::testing::Values(1u, 2u, 3u, 4u));

}  // namespace
}  // namespace harvest
