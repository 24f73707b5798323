// The books' dense ids: agents' slots reused after removal, and the per-agent
// lists of offers and tasks kept by slot, handed out in id order.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "master/agent_book.h"
#include "master/offer_book.h"
#include "master/task_book.h"
#include "resources/parse.h"

namespace harvest::master {
namespace {

Resources R(std::string_view text) {
  return parseResources(text).value();
}

class FakeAgent final : public AgentLink {
 public:
  explicit FakeAgent(std::string id) : id_(std::move(id)) {}
  const std::string& id() const override { return id_; }
  const v1::AgentInfo& info() const override { return info_; }
  void runTask(const agent::RunTask&) override {}
  void killTask(const std::string&, const std::string&, std::optional<Duration>) override {}
  void shutdown() override {}
  void setReports(agent::AgentReports*) override {}
  bool holdsExecutor(const std::string&, const std::string&) const override { return false; }
  std::vector<agent::HeldTask> heldTasks() const override { return {}; }
  Resources total() const override { return {}; }

 private:
  std::string id_;
  v1::AgentInfo info_;
};

std::vector<std::string> tasksOf(const std::vector<TaskKey>& keys) {
  std::vector<std::string> names;
  for (const TaskKey& key : keys) names.push_back(key.framework + "/" + key.task);
  return names;
}

TaskEntry task(const std::string& framework, const std::string& id, const std::string& agent,
               const Resources& resources) {
  TaskEntry entry;
  entry.framework = framework;
  entry.task = id;
  entry.agent = agent;
  entry.resources = resources;
  return entry;
}

Offer offerOn(const std::string& agent) {
  Offer offer;
  offer.agent = agent;
  return offer;
}

TEST(AgentBookTest, SlotsAreDenseAndTheLastFreedIsTakenFirst) {
  AgentBook book;
  EXPECT_EQ(book.add(std::make_unique<FakeAgent>("a")), AgentSlot(0));
  EXPECT_EQ(book.add(std::make_unique<FakeAgent>("b")), AgentSlot(1));
  EXPECT_EQ(book.add(std::make_unique<FakeAgent>("c")), AgentSlot(2));
  ASSERT_NE(book.remove("b"), nullptr);
  ASSERT_NE(book.remove("a"), nullptr);
  EXPECT_EQ(book.remove("a"), nullptr);
  EXPECT_EQ(book.slotOf("a"), std::nullopt);
  EXPECT_EQ(book.add(std::make_unique<FakeAgent>("d")), AgentSlot(0));
  EXPECT_EQ(book.add(std::make_unique<FakeAgent>("e")), AgentSlot(1));
  EXPECT_EQ(book.add(std::make_unique<FakeAgent>("f")), AgentSlot(3));
  EXPECT_EQ(book.at(0).id(), "d");
  EXPECT_EQ(book.slotOf("c"), AgentSlot(2));
  EXPECT_EQ(book.find("e"), &book.at(1));
  EXPECT_EQ(book.size(), 4u);
  EXPECT_EQ(book.ids(), (std::vector<std::string>{"c", "d", "e", "f"}));
  std::vector<std::string> released;
  for (const auto& agent : book.releaseAll()) released.push_back(agent->id());
  EXPECT_EQ(released, (std::vector<std::string>{"c", "d", "e", "f"}));
  EXPECT_EQ(book.size(), 0u);
  EXPECT_EQ(book.add(std::make_unique<FakeAgent>("g")), AgentSlot(0));
}

TEST(OfferBookTest, OffersAreListedUnderTheirAgentsSlotOldestFirst) {
  OfferBook book("");
  const FrameworkSlot framework = 4;
  EXPECT_EQ(book.add(offerOn("a1"), 1, framework).offer.id, "o-1");
  EXPECT_EQ(book.add(offerOn("a0"), 0, 5).offer.id, "o-2");
  const OfferBook::Outstanding& third = book.add(offerOn("a1"), 1, framework);
  EXPECT_EQ(third.offer.id, "o-3");
  EXPECT_EQ(third.serial, 3u);
  EXPECT_EQ(book.outstandingId(2), "o-2");
  EXPECT_EQ(book.idsOnAgent(1), (std::vector<std::string>{"o-1", "o-3"}));
  EXPECT_EQ(book.idsOnAgent(7), std::vector<std::string>{});
  EXPECT_EQ(book.idsOfFramework(framework), (std::vector<std::string>{"o-1", "o-3"}));
  ASSERT_NE(book.findOutstanding("o-3"), nullptr);
  EXPECT_EQ(book.findOutstanding("o-3")->agent, AgentSlot(1));
  EXPECT_EQ(book.findOutstanding("o-3")->framework, framework);
  EXPECT_TRUE(book.take("o-1", /*rescinded=*/true).has_value());
  EXPECT_EQ(book.outstandingId(1), std::nullopt);
  EXPECT_EQ(book.outstandingId(99), std::nullopt);
  EXPECT_EQ(book.idsOnAgent(1), (std::vector<std::string>{"o-3"}));
  // An answered offer used in place, then erased: gone from its agent, not rescinded.
  const OfferBook::Outstanding* answered = book.findOutstanding("o-3");
  ASSERT_NE(answered, nullptr);
  book.eraseAnswered(*answered);
  EXPECT_EQ(book.findOutstanding("o-3"), nullptr);
  EXPECT_FALSE(book.wasRescinded("o-3"));
  EXPECT_FALSE(book.take("o-3", /*rescinded=*/false).has_value());
  book.releaseAgent(1);
  // The slot's next agent starts with no offers.
  EXPECT_EQ(book.add(offerOn("a9"), 1, framework).offer.id, "o-4");
  EXPECT_EQ(book.idsOnAgent(1), (std::vector<std::string>{"o-4"}));
  EXPECT_EQ(book.idsOnAgent(0), (std::vector<std::string>{"o-2"}));
}

TEST(TaskBookTest, ListsAreInIdOrderWhateverTheSlots) {
  TaskBook book;
  const FrameworkSlot a = 1, b = 0;
  book.put(task("b", "t2", "x", R("cpus:1")), b, AgentSlot(3));
  book.put(task("a", "t9", "x", R("cpus:1")), a, AgentSlot(3));
  book.put(task("a", "t10", "x", R("cpus:1")), a, AgentSlot(3));
  book.put(task("a", "t1", "y", R("cpus:1")), a, AgentSlot(0));
  EXPECT_EQ(tasksOf(book.onAgent(3)), (std::vector<std::string>{"a/t10", "a/t9", "b/t2"}));
  EXPECT_EQ(tasksOf(book.ofFramework(a)), (std::vector<std::string>{"a/t1", "a/t10", "a/t9"}));
  EXPECT_EQ(book.find(a, "t9")->agentSlot, AgentSlot(3));
  EXPECT_EQ(book.find(b, "t9"), nullptr);
  std::vector<std::string> all;
  book.forEach([&](const TaskEntry& entry) { all.push_back(entry.framework + "/" + entry.task); });
  EXPECT_EQ(all, (std::vector<std::string>{"a/t1", "a/t10", "a/t9", "b/t2"}));
}

TEST(TaskBookTest, TheTasksOfAReleasedAgentWaitForItsNextSlot) {
  TaskBook book;
  const FrameworkSlot framework = 0;
  book.put(task("f", "t1", "x", R("cpus:1")), framework, AgentSlot(2));
  book.put(task("f", "t2", "x", R("cpus:1")), framework, AgentSlot(2));
  book.setState(*book.find(framework, "t1"), TaskState::kLost);
  book.setState(*book.find(framework, "t2"), TaskState::kLost);
  book.releaseAgent(2);
  EXPECT_TRUE(book.onAgent(2).empty());
  EXPECT_EQ(book.find(framework, "t1")->agentSlot, std::nullopt);
  // Another agent takes slot 2: the waiting tasks are not its.
  book.attachAgent("y", 2);
  EXPECT_TRUE(book.onAgent(2).empty());
  // Their agent comes back at slot 0.
  book.attachAgent("x", 0);
  EXPECT_EQ(tasksOf(book.onAgent(0)), (std::vector<std::string>{"f/t1", "f/t2"}));
  EXPECT_EQ(book.find(framework, "t2")->agentSlot, AgentSlot(0));
  book.erase(framework, "t1");
  EXPECT_EQ(tasksOf(book.onAgent(0)), (std::vector<std::string>{"f/t2"}));
  EXPECT_EQ(book.size(), 1u);
}

TEST(TaskBookTest, ALentTaskLeavesTheLentListWhenItEndsAndStaysOnItsAgent) {
  TaskBook book;
  const Resources lent = R("cpus:2").lentAs(Revocability::kNonThrottleable);
  book.put(task("f", "lent", "x", lent), 0, AgentSlot(1));
  book.put(task("f", "plain", "x", R("cpus:1")), 0, AgentSlot(1));
  EXPECT_EQ(tasksOf(book.lentOn(1)), (std::vector<std::string>{"f/lent"}));
  book.setState(*book.find(0, "lent"), TaskState::kFinished);
  EXPECT_TRUE(book.lentOn(1).empty());
  EXPECT_EQ(tasksOf(book.onAgent(1)), (std::vector<std::string>{"f/lent", "f/plain"}));
}

TEST(TaskBookTest, ATaskPutWhileItsAgentIsAwayIsListedAndLentWhenTheAgentComes) {
  TaskBook book;
  const Resources lent = R("cpus:2").lentAs(Revocability::kNonThrottleable);
  book.put(task("f", "early", "x", lent), 0, std::nullopt);
  book.put(task("f", "ended", "x", lent), 0, std::nullopt);
  book.setState(*book.find(0, "ended"), TaskState::kFailed);
  book.attachAgent("x", 5);
  EXPECT_EQ(tasksOf(book.onAgent(5)), (std::vector<std::string>{"f/early", "f/ended"}));
  EXPECT_EQ(tasksOf(book.lentOn(5)), (std::vector<std::string>{"f/early"}));
}

}  // namespace
}  // namespace harvest::master
